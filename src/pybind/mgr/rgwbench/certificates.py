"""Certificates kept in the module's store: one an operator sets, or one rgwbench makes.

Two users: the TLS settings under test (`ceph rgwbench certificate ...`,
keys under ``tls/``) and the web panel (`ceph rgwbench panel certificate
...`, keys under ``panel/``). Each has the operator's PEM (certificate,
chain, key) or else a self-signed one, made once and kept, naming the hosts
and addresses asked for. The private key is never shown.
"""
import json
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .agents.certificate import (CertificateError, PemBundle, check_bundle,
                                 describe_certificate, self_signed_certificate, split_pem)
from .errors import InvalidInput, NotFound, RGWBenchError
from .kvstore import Store

RENEW_DAYS = 30                       # a generated certificate closer to its end is made anew


class TLSCertificate(NamedTuple):
    bundle: PemBundle
    source: str                       # 'operator' or 'generated'


class CertificateKeys(NamedTuple):
    """Where one user's certificates are kept, and how its commands are named."""
    operator: str                     # the operator's PEM: certificate, chain, key
    generated: str                    # JSON: the self-signed PEM and the names it has
    common_name: str                  # of the self-signed certificate
    command: str                      # the CLI prefix that sets and removes it


TLS_KEYS = CertificateKeys('tls/certificate', 'tls/generated', 'rgwbench-tls',
                           'ceph rgwbench certificate')


class Certificates:
    """A certificate to serve, in the module's store; the key is never shown."""

    def __init__(self, store: Store, keys: CertificateKeys = TLS_KEYS) -> None:
        self.store = store
        self.keys = keys

    # -- the operator's ---------------------------------------------------------------
    def set(self, text: str) -> Dict[str, Any]:
        """Check and store a PEM (certificate, optional chain, key); nothing is stored if bad."""
        if not text or not text.strip():
            raise InvalidInput('give the certificate with -i <pem> (certificate, private key '
                               'and optional CA chain in one PEM file)')
        try:
            bundle = split_pem(text)
            check_bundle(bundle)
        except CertificateError as e:
            raise InvalidInput('certificate: %s' % e)
        self.store.set_store(self.keys.operator, bundle.server_pem)
        return dict(describe_certificate(bundle.certificate), source='operator')

    def remove(self) -> bool:
        had = self.store.get_store(self.keys.operator) is not None
        self.store.set_store(self.keys.operator, None)
        return had

    def operator(self) -> Optional[PemBundle]:
        """The operator's certificate, checked again (the store can be written around us)."""
        stored = self.store.get_store(self.keys.operator)
        if not stored:
            return None
        try:
            bundle = split_pem(stored)
            check_bundle(bundle)
        except CertificateError as e:
            raise InvalidInput('the certificate set with `%s set` cannot be used: %s; set a '
                               'good one or `%s rm`' % (self.keys.command, e, self.keys.command))
        return bundle

    # -- the generated one ------------------------------------------------------------
    def _generated(self) -> Optional[Tuple[PemBundle, List[str]]]:
        stored = self.store.get_store(self.keys.generated)
        if not stored:
            return None
        try:
            data = json.loads(stored)
            return split_pem(data['pem']), list(data['names'])
        except (ValueError, KeyError, TypeError, CertificateError):
            return None

    def for_names(self, names: List[str]) -> TLSCertificate:
        """The operator's certificate, else a self-signed one naming at least `names`."""
        bundle = self.operator()
        if bundle is not None:
            return TLSCertificate(bundle, 'operator')
        found = self._generated()
        if found is not None:
            bundle, has = found
            days_left = describe_certificate(bundle.certificate).get('days_left')
            if set(names) <= set(has) and (days_left is None or days_left > RENEW_DAYS):
                return TLSCertificate(bundle, 'generated')
        wanted = sorted(set(names))
        try:
            cert, key = self_signed_certificate(self.keys.common_name, wanted)
        except (CertificateError, OSError) as e:
            raise RGWBenchError('cannot make a self-signed certificate (%s); give one with '
                                '`%s set -i <pem>`' % (e, self.keys.command))
        bundle = split_pem(cert + key)
        self.store.set_store(self.keys.generated, json.dumps({'pem': bundle.server_pem,
                                                              'names': wanted}))
        return TLSCertificate(bundle, 'generated')

    def current(self) -> Optional[TLSCertificate]:
        """What is served now, without making anything."""
        bundle = self.operator()
        if bundle is not None:
            return TLSCertificate(bundle, 'operator')
        found = self._generated()
        return TLSCertificate(found[0], 'generated') if found else None

    def show(self) -> Dict[str, Any]:
        current = self.current()
        if current is None:
            raise NotFound('no certificate: set one with `%s set -i <pem>`, or rgwbench makes '
                           'a self-signed one when it needs one' % self.keys.command)
        bundle = current.bundle
        return dict(describe_certificate(bundle.certificate), source=current.source,
                    chain=[describe_certificate(c)['subject'] for c in bundle.chain],
                    certificate=bundle.full_chain, ca_bundle=bundle.ca_bundle)


def certificate_to_text(info: Dict[str, Any]) -> str:
    lines = ['source:      %s' % ('set by the operator' if info['source'] == 'operator'
                                  else 'self-signed, made by rgwbench'),
             'subject:     %s' % info['subject'],
             'issuer:      %s' % info['issuer'],
             'names:       %s' % (', '.join(info['sans']) or '(none)'),
             'not after:   %s (%s)' % (info['not_after'], 'expired' if info['expired']
                                       else '%s days left' % info['days_left']),
             'sha256:      %s' % info['fingerprint_sha256']]
    lines += ['chain:       %s' % subject for subject in info.get('chain', [])]
    return '\n'.join(lines)
