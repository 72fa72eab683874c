"""The certificates rgwbench makes are server leaves, short-lived; keys go to the mon as input."""
import datetime
import subprocess
from typing import Any, Dict, List, Optional, Tuple

from fixtures import MemoryStore

from rgwbench.certs.pem import self_signed_certificate
from rgwbench.certs.store import TLS_DAYS, Certificates
from rgwbench.cluster.access import ClusterAccess


def x509_text(pem: str) -> str:
    return subprocess.run(['openssl', 'x509', '-noout', '-text', '-dates'], input=pem,
                          check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout


def not_after(text: str) -> datetime.datetime:
    line = [x for x in text.splitlines() if x.startswith('notAfter=')][0]
    return datetime.datetime.strptime(line.split('=', 1)[1].replace(' GMT', ''),
                                      '%b %d %H:%M:%S %Y')


def test_the_tls_certificate_is_a_week_long_leaf_not_a_ca() -> None:
    made = Certificates(MemoryStore()).for_names(['127.0.0.1', 'host-a'])
    text = x509_text(made.bundle.certificate)
    assert 'CA:FALSE' in text and 'CA:TRUE' not in text
    assert 'TLS Web Server Authentication' in text and 'Certificate Sign' not in text
    assert 'IP Address:127.0.0.1' in text and 'DNS:host-a' in text
    left = not_after(text) - datetime.datetime.utcnow()
    assert datetime.timedelta(days=TLS_DAYS - 1) < left <= datetime.timedelta(days=TLS_DAYS)


def test_every_self_signed_certificate_is_a_leaf() -> None:
    cert, key = self_signed_certificate('rgwbench-agent-endpoint')
    assert 'CA:FALSE' in x509_text(cert) and 'PRIVATE KEY' in key


class Mgr:
    def __init__(self) -> None:
        self.sent: List[Tuple[Dict[str, Any], Optional[str]]] = []

    def mon_command(self, cmd: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]:
        self.sent.append((cmd, inbuf))
        return 0, '', ''


def test_a_config_key_value_goes_to_the_mon_as_input_never_as_an_argument() -> None:
    mgr = Mgr()
    access = ClusterAccess(mgr, lambda x: x, lambda spec: spec,  # type: ignore[arg-type]
                           log=lambda line: None)
    _, key = self_signed_certificate('rgwbench-tls')
    access.put_config_key('rgw/cert/rgw.default', key)
    ((cmd, inbuf),) = mgr.sent
    assert cmd == {'prefix': 'config-key set', 'key': 'rgw/cert/rgw.default'}
    assert inbuf == key and key not in repr(cmd)


def test_the_tls_certificate_is_not_changed_while_changes_are_in_place() -> None:
    import pytest
    from rgwbench.certs.store import TLS_KEYS, CertificateKeys
    from rgwbench.errors import Busy
    from rgwbench.settings.journal import Journal
    cert, key = self_signed_certificate('operator', ['127.0.0.1'])
    store = MemoryStore()
    journal = Journal.open(store, 'run1')

    def in_place() -> Optional[str]:
        found = Journal.unfinished(store)
        return None if found is None else found.journal_id
    with pytest.raises(Busy, match='run or settings run1 have changes in place'):
        Certificates(store, changes_in_place=in_place).set(cert + key)
    with pytest.raises(Busy):
        Certificates(store, changes_in_place=in_place).remove()
    # the panel's is not the TLS under test
    panel = CertificateKeys('panel/certificate', 'panel/generated/x', 'rgwbench-panel',
                            'ceph rgwbench panel certificate')
    assert Certificates(store, panel).set(cert + key)['source'] == 'operator'
    journal.close()
    assert Certificates(store, TLS_KEYS, changes_in_place=in_place).set(
        cert + key)['source'] == 'operator'
