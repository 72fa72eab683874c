"""Certificates kept in the module's store: one an operator sets, or one rgwbench makes.

Two users: the TLS settings under test (`ceph rgwbench certificate ...`,
keys under ``tls/``) and the web panel (`ceph rgwbench panel certificate
...`, keys under ``panel/``). Each has the operator's PEM (certificate,
chain, key) or else a self-signed one, made once and kept, naming the hosts
and addresses asked for. The private key is never shown. A plan (a dry run)
stores nothing: the certificate it makes is held in memory (pending.py) and
stored by the apply that puts it in place.
"""
import json
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ..errors import Busy, InvalidInput, NotFound, RGWBenchError
from ..cluster.kvstore import SecretStore, get_secret, set_secret
from .pem import (LEAF_DAYS, CertificateError, PemBundle, check_bundle, describe_certificate,
                  self_signed_certificate, split_pem)
from ..cluster.pending import pending

# The certificate of the TLS settings under test is short-lived: a week, made anew
# when fewer than two days are left, so that no run outlives it and a copy a client
# kept is soon worth nothing.
TLS_DAYS, TLS_RENEW_DAYS = 7, 2


OPERATOR, GENERATED, NEW = 'operator', 'generated', 'new'


class TLSCertificate(NamedTuple):
    bundle: PemBundle
    source: str                       # OPERATOR, GENERATED (kept) or NEW (made by a plan)


class CertificateKeys(NamedTuple):
    """Where one user's certificates are kept, and how its commands are named."""
    operator: str                     # the operator's PEM: certificate, chain, key
    generated: str                    # JSON: the self-signed PEM and the names it has
    common_name: str                  # of the self-signed certificate
    command: str                      # the CLI prefix that sets and removes it
    days: int = LEAF_DAYS             # how long a self-signed one is valid
    renew_days: int = 30              # one closer to its end is made anew


TLS_KEYS = CertificateKeys('tls/certificate', 'tls/generated', 'rgwbench-tls',
                           'ceph rgwbench certificate', days=TLS_DAYS,
                           renew_days=TLS_RENEW_DAYS)


class Certificates:
    """A certificate to serve, in the module's store; the key is never shown."""

    def __init__(self, store: SecretStore, keys: CertificateKeys = TLS_KEYS, *,
                 changes_in_place: Callable[[], Optional[str]] = lambda: None) -> None:
        self.store = store
        self.keys = keys
        # The id of the run or settings whose changes are in place (None: none).
        self.changes_in_place = changes_in_place

    # -- the operator's ---------------------------------------------------------------
    def _refuse_while_in_use(self) -> None:
        """The TLS settings' certificate does not change while changes are in place: a
        run's variants, its checks and its put-back would see another one."""
        if self.keys.operator != TLS_KEYS.operator:
            return
        in_place = self.changes_in_place()
        if in_place is not None:
            raise Busy('run or settings %s have changes in place; change the certificate '
                       'once they are put back' % in_place)

    def set(self, text: str) -> Dict[str, Any]:
        """Check and store a PEM (certificate, optional chain, key); nothing is stored if bad."""
        self._refuse_while_in_use()
        if not text or not text.strip():
            raise InvalidInput('give the certificate with -i <pem> (certificate, private key '
                               'and optional CA chain in one PEM file)')
        try:
            bundle = split_pem(text)
            check_bundle(bundle)
        except CertificateError as e:
            raise InvalidInput('certificate: %s' % e)
        set_secret(self.store, self.keys.operator, bundle.server_pem)
        return dict(describe_certificate(bundle.certificate), source=OPERATOR)

    def remove(self) -> bool:
        self._refuse_while_in_use()
        had = get_secret(self.store, self.keys.operator) is not None
        set_secret(self.store, self.keys.operator, None)
        return had

    def operator(self) -> Optional[PemBundle]:
        """The operator's certificate, checked again (the store can be written around us)."""
        stored = get_secret(self.store, self.keys.operator)
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
        stored = get_secret(self.store, self.keys.generated)
        if not stored:
            return None
        try:
            data = json.loads(stored)
            return split_pem(data['pem']), list(data['names'])
        except (ValueError, KeyError, TypeError, CertificateError):
            return None

    def _fitting(self, names: List[str]) -> Optional[TLSCertificate]:
        """The operator's certificate, else the kept self-signed one if it names `names`."""
        bundle = self.operator()
        if bundle is not None:
            return TLSCertificate(bundle, OPERATOR)
        found = self._generated()
        if found is not None:
            bundle, has = found
            days_left = describe_certificate(bundle.certificate).get('days_left')
            if set(names) <= set(has) and (days_left is None or days_left > self.keys.renew_days):
                return TLSCertificate(bundle, GENERATED)
        return None

    def _make(self, names: List[str]) -> Tuple[PemBundle, List[str]]:
        wanted = sorted(set(names))
        try:
            cert, key = self_signed_certificate(self.keys.common_name, wanted,
                                                days=self.keys.days)
        except (CertificateError, OSError) as e:
            raise RGWBenchError('cannot make a self-signed certificate (%s); give one with '
                                '`%s set -i <pem>`' % (e, self.keys.command))
        return split_pem(cert + key), wanted

    def _keep(self, bundle: PemBundle, names: List[str]) -> None:
        set_secret(self.store, self.keys.generated, json.dumps({'pem': bundle.server_pem,
                                                                'names': names}))

    def for_names(self, names: List[str]) -> TLSCertificate:
        """The operator's certificate, else a self-signed one naming at least `names`, kept."""
        found = self._fitting(names)
        if found is not None:
            return found
        bundle, wanted = self._make(names)
        self._keep(bundle, wanted)
        return TLSCertificate(bundle, GENERATED)

    def planned(self, names: List[str]) -> TLSCertificate:
        """As for_names, for a plan: a certificate it makes is held in memory, not stored."""
        found = self._fitting(names)
        if found is not None:
            return found
        held = pending(self.store).get(self.keys.generated)
        if held is None or not set(names) <= set(held[1]):
            held = self._make(names)
            pending(self.store)[self.keys.generated] = held
        return TLSCertificate(held[0], NEW)

    def keep_planned(self) -> None:
        """Store the certificate a plan made, now that an apply put it in place."""
        held = pending(self.store).pop(self.keys.generated, None)
        if held is not None:
            self._keep(*held)

    def current(self) -> Optional[TLSCertificate]:
        """What is served now, without making anything."""
        bundle = self.operator()
        if bundle is not None:
            return TLSCertificate(bundle, OPERATOR)
        found = self._generated()
        return TLSCertificate(found[0], GENERATED) if found else None

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
