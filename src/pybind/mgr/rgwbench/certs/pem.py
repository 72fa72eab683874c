"""PEM tools: self-signed certificates rgwbench makes, and PEM bundles operators give
(split, described, checked), used by `certificates.py` (the ones kept in the store), the
TLS settings and the panel.

Made with the openssl command: on Pacific, mgr_util's helper loads the
`cryptography` package, which cannot be loaded in a second sub-interpreter
of the same mgr (PyO3), and it makes no leaf (no basicConstraints). Reading
and checking PEM uses Python's ssl module only, for the same reason.
"""
import datetime
import hashlib
import ipaddress
import re
import shutil
import ssl
import subprocess
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .memory_files import PemFiles

PEM_BLOCK = re.compile(r'-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?\r?\n-----END \1-----',
                       re.DOTALL)


class CertificateError(ValueError):
    """A PEM bundle that cannot serve: what is wrong with it, in one line."""


def san_entries(names: Sequence[str]) -> List[str]:
    """`IP:a.b.c.d` or `DNS:name` for each name, as openssl's subjectAltName takes them."""
    found: List[str] = []
    for item in names:
        item = item.strip().strip('[]')
        if not item:
            continue
        try:
            entry = 'IP:%s' % ipaddress.ip_address(item)
        except ValueError:
            entry = 'DNS:%s' % item
        if entry not in found:
            found.append(entry)
    return found


LEAF_DAYS = 365


def leaf_config(common_name: str, sans: Sequence[str]) -> str:
    """openssl req's whole configuration: a server leaf (CA:FALSE), nothing from the
    system's openssl.cnf (whose v3_ca section makes `req -x509` certificates CAs)."""
    lines = ['[req]', 'distinguished_name = dn', 'x509_extensions = leaf', 'prompt = no',
             '[dn]', 'O = rgwbench', 'CN = %s' % common_name,
             '[leaf]', 'basicConstraints = critical,CA:FALSE',
             'keyUsage = critical,digitalSignature,keyEncipherment',
             'extendedKeyUsage = serverAuth', 'subjectKeyIdentifier = hash']
    if sans:
        lines.append('subjectAltName = %s' % ','.join(san_entries(sans)))
    return '\n'.join(lines) + '\n'


def self_signed_certificate(common_name: str, sans: Sequence[str] = (),
                            days: int = LEAF_DAYS) -> Tuple[str, str]:
    """(certificate PEM, key PEM): a self-signed server leaf, never a CA (`CA:FALSE`: a
    client told to trust it trusts this server, not whatever it would sign), valid for
    `days`, naming `sans` (hosts or addresses)."""
    if shutil.which('openssl') is None:
        raise CertificateError('the openssl command is needed to make a certificate')
    if not re.match(r'^[A-Za-z0-9._-]{1,64}$', common_name):
        raise CertificateError('bad common name %r' % common_name)
    # The configuration on standard input; certificate and key on standard output,
    # never in a file: a mgr killed while openssl ran left its key in a temp folder.
    argv = ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', str(days),
            '-config', '/dev/stdin', '-keyout', '-']
    made = subprocess.run(argv, check=True, input=leaf_config(common_name, sans),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    bundle = split_pem(made.stdout)
    return bundle.certificate, bundle.key


class PemBundle(NamedTuple):
    """A certificate, the chain that comes with it, and its private key."""
    certificate: str        # the server's certificate (PEM)
    chain: List[str]        # certificates after it: intermediates, the CA
    key: str                # its private key (PEM)

    @property
    def full_chain(self) -> str:
        """Certificate then chain, as servers send them."""
        return ''.join(p.strip() + '\n' for p in [self.certificate] + self.chain)

    @property
    def server_pem(self) -> str:
        """Certificate, chain and key in one PEM, as beast and HAProxy read them."""
        return self.full_chain + self.key.strip() + '\n'

    @property
    def ca_bundle(self) -> str:
        """What clients trust: the chain given with it, or the certificate itself."""
        return ''.join(p.strip() + '\n' for p in self.chain) if self.chain \
            else self.certificate.strip() + '\n'


def pem_blocks(text: str) -> Iterator[Tuple[str, str]]:
    for match in PEM_BLOCK.finditer(text):
        yield match.group(1), match.group(0)


def split_pem(text: str) -> PemBundle:
    """The certificate, chain and key of one PEM text; CertificateError if one is missing."""
    certs: List[str] = []
    keys: List[str] = []
    for kind, block in pem_blocks(text):
        if kind == 'CERTIFICATE':
            certs.append(block)
        elif kind.endswith('PRIVATE KEY'):
            if kind == 'ENCRYPTED PRIVATE KEY':
                raise CertificateError('the private key is encrypted; give it without a '
                                       'passphrase')
            keys.append(block)
        else:
            raise CertificateError('unexpected PEM block %r (expected certificates and one '
                                   'private key)' % kind)
    if not certs:
        raise CertificateError('no certificate (no -----BEGIN CERTIFICATE----- block)')
    if not keys:
        raise CertificateError('no private key (no -----BEGIN PRIVATE KEY----- block)')
    if len(keys) > 1:
        raise CertificateError('%d private keys; give exactly one' % len(keys))
    return PemBundle(certs[0], certs[1:], keys[0])


def decode_certificate(pem: str) -> Dict[str, Any]:
    """Subject, issuer, SANs, validity of one PEM certificate (the ssl module's decoder)."""
    decoder = getattr(getattr(ssl, '_ssl', None), '_test_decode_cert', None)
    if decoder is None:
        return {}
    with PemFiles() as pems:
        try:
            decoded: Dict[str, Any] = decoder(pems.path('cert', pem))
        except (ssl.SSLError, OSError, ValueError) as e:
            raise CertificateError('the certificate cannot be read: %s' % e)
    return decoded


def _name(decoded: Any) -> str:
    return ','.join('%s=%s' % pair for rdn in decoded or () for pair in rdn)


def fingerprint(pem: str) -> str:
    """SHA-256 of the certificate's DER form, as hex pairs."""
    try:
        der = ssl.PEM_cert_to_DER_cert(pem.strip() + '\n')
    except ValueError as e:
        raise CertificateError('the certificate cannot be read: %s' % e)
    return der_fingerprint(der)


def der_fingerprint(der: bytes) -> str:
    digest = hashlib.sha256(der).hexdigest().upper()
    return ':'.join(digest[i:i + 2] for i in range(0, len(digest), 2))


def describe_certificate(pem: str) -> Dict[str, Any]:
    """What an operator may see of a certificate (no key is ever read here)."""
    decoded = decode_certificate(pem)
    not_after = decoded.get('notAfter')
    expires = None
    if not_after:
        expires = datetime.datetime.fromtimestamp(ssl.cert_time_to_seconds(not_after),
                                                  datetime.timezone.utc)
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        'subject': _name(decoded.get('subject')),
        'issuer': _name(decoded.get('issuer')),
        'sans': ['%s:%s' % (kind.replace('IP Address', 'IP'), value)
                 for kind, value in decoded.get('subjectAltName', ())],
        'not_after': expires.strftime('%Y-%m-%dT%H:%M:%SZ') if expires else None,
        'expired': bool(expires and expires <= now),
        'days_left': int((expires - now).total_seconds() // 86400) if expires else None,
        'fingerprint_sha256': fingerprint(pem),
    }


def check_bundle(bundle: PemBundle) -> None:
    """CertificateError unless the key is the certificate's and the certificate is valid now."""
    info = describe_certificate(bundle.certificate)
    for extra in bundle.chain:
        describe_certificate(extra)
    with PemFiles() as pems:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(pems.path('chain', bundle.full_chain),
                                    pems.path('key', bundle.key))
        except ssl.SSLError as e:
            if 'KEY_VALUES_MISMATCH' in str(e) or 'key values mismatch' in str(e):
                raise CertificateError('the private key does not match the certificate '
                                       '(subject %s)' % (info['subject'] or '?'))
            raise CertificateError('the certificate and key cannot be loaded: %s' % e)
    if info['expired']:
        raise CertificateError('the certificate (subject %s) expired on %s'
                               % (info['subject'] or '?', info['not_after']))
    problem = chain_problem(bundle)
    if problem:
        raise CertificateError(problem)


def chain_problem(bundle: PemBundle) -> Optional[str]:
    """Why the certificate does not verify against its CA bundle ('' / None when it does)."""
    if shutil.which('openssl') is None:
        return None
    with PemFiles() as pems:
        ca, cert = pems.path('ca', bundle.ca_bundle), pems.path('cert', bundle.certificate)
        proc = subprocess.run(['openssl', 'verify', '-CAfile', ca, cert],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=60, pass_fds=pems.fds())
    if proc.returncode == 0:
        return None
    lines = [line.strip() for line in proc.stdout.splitlines() if 'error' in line.lower()]
    detail = lines[0] if lines else ' '.join(proc.stdout.split())[-200:]
    return ('the certificate does not verify against %s (%s); add the CA certificates '
            'after it' % ('the chain given with it' if bundle.chain else 'itself', detail))
