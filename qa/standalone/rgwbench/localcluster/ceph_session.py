"""`ceph` commands over one connection, for tests that send thousands of them.

The `ceph` tool starts Python, connects, authenticates and fetches every
command's description for each command; the tests' polling made that a good
part of the machine's CPU. This script does what the tool does for one
command (validate the words against the descriptions, send them where the
descriptions say), for many, over one librados connection. It runs on the
release's own Python, in its root, as the `ceph` tool does.

Reads one JSON request a line: {"args": [...], "inbuf": text or null,
"timeout": seconds}; writes one JSON answer a line: {"ret": int, "out":
text, "outs": text}, as the `ceph` tool would have returned, printed and
said on stderr.
"""
import errno
import json
import sys
from typing import Any, Dict

import rados
from ceph_argparse import json_command, parse_json_funcsigs, validate_command
from ceph_client import split_format


def descriptions(cluster: Any) -> Dict[str, Any]:
    ret, outbuf, outs = json_command(cluster, prefix='get_command_descriptions', timeout=60)
    if ret:
        raise RuntimeError('get_command_descriptions: %s' % outs)
    return dict(parse_json_funcsigs(outbuf.decode('utf-8'), 'cli'))


def answer(cluster: Any, sigdict: Dict[str, Any], request: Dict[str, Any]) -> Dict[str, Any]:
    words, fmt = split_format([str(a) for a in request['args']])
    try:
        valid = validate_command(sigdict, words)
    except Exception:
        valid = None
    if not valid:
        return {'ret': -errno.EINVAL, 'out': '', 'outs': 'invalid command'}
    if fmt:
        valid['format'] = fmt
    inbuf = (request.get('inbuf') or '').encode('utf-8')
    ret, outbuf, outs = json_command(cluster, target=('mon', ''), argdict=valid, inbuf=inbuf,
                                     timeout=int(request.get('timeout') or 0))
    return {'ret': ret, 'out': outbuf.decode('utf-8', 'replace'), 'outs': outs}


def main(conf: str) -> int:
    # No admin socket: it would hold the client's socket path, and each `ceph`
    # run beside it would say on stderr that it cannot bind it.
    cluster = rados.Rados(conffile=conf, conf={'admin_socket': ''})
    cluster.connect(timeout=60)
    sigdict = descriptions(cluster)
    for line in sys.stdin:
        request = json.loads(line)
        found = answer(cluster, sigdict, request)
        if found['outs'] == 'invalid command':
            # Module commands come and go with the mgr: ask for them again once.
            sigdict = descriptions(cluster)
            found = answer(cluster, sigdict, request)
        sys.stdout.write(json.dumps(found) + '\n')
        sys.stdout.flush()
    cluster.shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
