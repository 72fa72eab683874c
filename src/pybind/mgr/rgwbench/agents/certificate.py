"""A self-signed certificate for the agent endpoint.

Made with the openssl command: on Pacific, mgr_util's helper loads the
`cryptography` package, which cannot be loaded in a second sub-interpreter
of the same mgr (PyO3). mgr_util is the fallback where openssl is missing.
"""
import os
import shutil
import subprocess
import tempfile
from typing import Tuple


def self_signed_certificate(common_name: str) -> Tuple[str, str]:
    """(certificate PEM, key PEM), valid for ten years."""
    if shutil.which('openssl') is None:
        from mgr_util import create_self_signed_cert
        return create_self_signed_cert('rgwbench', common_name)
    folder = tempfile.mkdtemp(prefix='rgwbench-cert-')
    try:
        cert, key = os.path.join(folder, 'cert.pem'), os.path.join(folder, 'key.pem')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
                        '-days', '3650', '-subj', '/O=rgwbench/CN=%s' % common_name,
                        '-keyout', key, '-out', cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=60)
        with open(cert) as c, open(key) as k:
            return c.read(), k.read()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
