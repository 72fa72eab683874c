"""Create (or find) a named 256-bit AES key in a KMIP server; run by PyKMIP's venv.

Run with `python -I`: this folder's own kmip.py must not hide PyKMIP's `kmip`.
Prints one JSON line: {"uid": ..., "created": true|false}.

RGW finds a key by a Locate on its Name attribute and takes it only when
exactly one object has that name, so an existing key is reused, never doubled.
"""
import argparse
import json
import os
import sys
import warnings
from typing import Any, List


def _locate(client: Any, enums: Any, name: str) -> List[str]:
    attribute = client.attribute_factory.create_attribute(enums.AttributeType.NAME, name)
    return [str(uid) for uid in client.locate(attributes=[attribute])]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--addr', required=True)
    parser.add_argument('--ca', required=True)
    parser.add_argument('--cert', required=True)
    parser.add_argument('--key', required=True)
    parser.add_argument('--name', required=True)
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    from kmip import enums
    from kmip.pie import client as pie_client

    host, _, port = args.addr.rpartition(':')
    client = pie_client.ProxyKmipClient(
        hostname=host, port=int(port), cert=args.cert, key=args.key, ca=args.ca,
        ssl_version='PROTOCOL_TLSv1_2', config_file=os.devnull)
    try:
        with client:
            found = _locate(client, enums, args.name)
            if len(found) > 1:
                sys.stderr.write('%d keys are named %s; RGW takes a name only when it is '
                                 'unique\n' % (len(found), args.name))
                return 1
            if found:
                print(json.dumps({'uid': found[0], 'created': False}))
                return 0
            uid = client.create(
                enums.CryptographicAlgorithm.AES, 256, name=args.name,
                cryptographic_usage_mask=[enums.CryptographicUsageMask.ENCRYPT,
                                          enums.CryptographicUsageMask.DECRYPT])
            client.activate(uid)
            print(json.dumps({'uid': str(uid), 'created': True}))
    except Exception as e:  # PyKMIP raises many kinds; one line says which
        sys.stderr.write('KMIP %s: %s: %s\n' % (args.addr, type(e).__name__, e))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
