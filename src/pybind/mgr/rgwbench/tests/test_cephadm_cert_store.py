"""cephadm's certificate store: the certificate a replaced TLS spec left there goes."""
from typing import Any, Dict, List, Optional, Tuple

from rgwbench.certs.cephadm_store import forget_left_certificate, left_certificate

OURS = '-----BEGIN CERTIFICATE-----\nOURS\n-----END CERTIFICATE-----\n'
THEIRS = '-----BEGIN CERTIFICATE-----\nTHEIRS\n-----END CERTIFICATE-----\n'
KEY = '-----BEGIN PRIVATE KEY-----\nK\n-----END PRIVATE KEY-----\n'


def rgw(ssl: bool, pem: str = OURS + KEY) -> Dict[str, Any]:
    inner: Dict[str, Any] = {'rgw_frontend_port': 8000}
    if ssl:
        inner.update(ssl=True, rgw_frontend_ssl_certificate=pem)
    return {'service_type': 'rgw', 'service_id': 'default', 'spec': inner}


class Store:
    """cephadm's certificate store, as its orchestrator API answers."""

    def __init__(self, certs: Dict[Tuple[str, str], str]) -> None:
        self.certs = dict(certs)
        self.keys = {(n.replace('_cert', '_key'), s): KEY for n, s in certs}
        self.calls: List[str] = []

    def cert_store_get_cert(self, cert_name: str, service_name: Optional[str] = None,
                            no_exception_when_missing: bool = False) -> Optional[str]:
        return self.certs.get((cert_name, service_name or ''))

    def cert_store_rm_cert(self, cert_name: str, service_name: Optional[str] = None) -> str:
        self.calls.append('rm %s' % cert_name)
        del self.certs[(cert_name, service_name or '')]
        return 'removed'

    def cert_store_rm_key(self, key_name: str, service_name: Optional[str] = None) -> str:
        self.calls.append('rm %s' % key_name)
        del self.keys[(key_name, service_name or '')]
        return 'removed'


def forget(old: Dict[str, Any], new: Dict[str, Any], store: Store) -> List[str]:
    return forget_left_certificate(old, new, 'rgw.default', lambda found: found, store,
                                   lambda msg: None)


def test_the_certificate_of_the_replaced_tls_spec_goes_with_its_key() -> None:
    store = Store({('rgw_frontend_ssl_cert', 'rgw.default'): OURS})
    assert forget(rgw(True), rgw(False), store) == [
        'rgw_frontend_ssl_cert of rgw.default', 'rgw_frontend_ssl_key of rgw.default']
    assert store.certs == {} and store.keys == {}


def test_an_other_certificate_in_the_store_stays() -> None:
    store = Store({('rgw_frontend_ssl_cert', 'rgw.default'): THEIRS})
    assert forget(rgw(True), rgw(False), store) == [] and store.calls == []


def test_nothing_goes_while_the_new_spec_uses_tls_or_the_old_one_did_not() -> None:
    assert left_certificate(rgw(True), rgw(True, THEIRS + KEY)) is None
    assert left_certificate(rgw(False), rgw(False)) is None
    assert left_certificate(None, rgw(False)) is None          # a new service
    assert left_certificate(rgw(True), rgw(False)) == (
        ''.join(OURS.split()), 'rgw_frontend_ssl_cert', 'rgw_frontend_ssl_key')
    ingress = {'service_type': 'ingress', 'service_id': 'rgw.default',
               'spec': {'ssl': True, 'ssl_cert': OURS.splitlines() + KEY.splitlines()}}
    plain = dict(ingress, spec={'backend_service': 'rgw.default'})
    assert left_certificate(ingress, plain) == (
        ''.join(OURS.split()), 'ingress_ssl_cert', 'ingress_ssl_key')


def test_a_release_without_a_store_is_left_alone() -> None:
    assert forget(rgw(True), rgw(False), object()) == []  # type: ignore[arg-type]
