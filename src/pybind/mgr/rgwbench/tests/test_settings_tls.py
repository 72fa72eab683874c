"""tls@rgw and tls@ingress: parsing, certificates and plans against a fake cluster."""
import copy
import os
import socket
import ssl
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
from ceph.deployment.service_spec import ServiceSpec
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster
from rgwbench.tests.local_ports import free_port
from rgwbench.tests.tls_fakes import RGW_SPEC, context, tls_cluster

from rgwbench.errors import InvalidInput, NotFound
from rgwbench.settings.journal import Journal
from rgwbench.certs.pem import CertificateError, describe_certificate, split_pem
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import ClientSide, PlanView
from rgwbench.settings.changes import service_change
from rgwbench.settings.tls import client_targets
from rgwbench.settings.tls import (GENERATED_KEY, OPERATOR_KEY, Certificates, IngressTls, RGWTls,
                                   certificate_to_text, tls_problem)
from rgwbench.settings.targets import INGRESS, RGW, URLS, Target


def make_pem(cn: str, sans: str = 'IP:127.0.0.1', days: int = 30) -> Dict[str, str]:
    folder = tempfile.mkdtemp()
    key, cert = os.path.join(folder, 'k'), os.path.join(folder, 'c')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days',
                    str(days), '-keyout', key, '-out', cert, '-subj', '/CN=%s' % cn,
                    '-addext', 'subjectAltName=%s' % sans],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(cert) as c, open(key) as k:
        found = {'cert': c.read(), 'key': k.read()}
    subprocess.run(['rm', '-rf', folder], check=True)
    return found


@pytest.fixture(scope='module')
def pems() -> Dict[str, Dict[str, str]]:
    return {'good': make_pem('operator.example'), 'other': make_pem('other.example')}


# -- parsing ---------------------------------------------------------------------------------
@pytest.mark.parametrize('raw, value', [('on', True), ('off', False), ('TRUE', True),
                                        ('0', False)])
def test_rgw_tls_parses_on_and_off(raw: str, value: bool) -> None:
    assert RGWTls().parse(raw) is value


@pytest.mark.parametrize('raw, value', [('https', 'https'), ('HTTP', 'http'), ('off', 'off'),
                                        ('on', 'https')])
def test_ingress_tls_parses_its_values(raw: str, value: str) -> None:
    assert IngressTls().parse(raw) == value


@pytest.mark.parametrize('setting', [RGWTls(), IngressTls()])
def test_bad_values_name_the_setting_and_what_it_takes(setting: Any) -> None:
    with pytest.raises(InvalidInput) as e:
        setting.parse('maybe')
    assert setting.name in str(e.value) and setting.values in str(e.value)


# -- the operator's certificate ----------------------------------------------------------
def test_a_good_certificate_is_stored_and_shown_without_its_key(pems: Any) -> None:
    store = MemoryStore()
    good = pems['good']
    info = Certificates(store).set(good['cert'] + good['key'])
    assert info['subject'] == 'commonName=operator.example'
    assert info['sans'] == ['IP:127.0.0.1'] and not info['expired']
    shown = Certificates(store).show()
    assert shown['source'] == 'operator'
    assert 'PRIVATE KEY' not in repr(shown) and 'PRIVATE KEY' not in certificate_to_text(shown)
    assert shown['ca_bundle'].strip() == good['cert'].strip()
    assert 'operator.example' in certificate_to_text(shown)


def test_a_key_of_another_certificate_is_refused_and_nothing_stored(pems: Any) -> None:
    store = MemoryStore()
    with pytest.raises(InvalidInput) as e:
        Certificates(store).set(pems['good']['cert'] + pems['other']['key'])
    assert 'private key does not match the certificate' in str(e.value)
    assert 'operator.example' in str(e.value)
    assert OPERATOR_KEY not in store.data


@pytest.mark.parametrize('text, message', [
    ('hello', 'no certificate'),
    ('CERT', 'no private key'),
    ('CERT KEY KEY', '2 private keys'),
])
def test_incomplete_pems_are_refused(pems: Any, text: str, message: str) -> None:
    pem = text.replace('CERT', pems['good']['cert']).replace('KEY', pems['good']['key'])
    with pytest.raises(InvalidInput) as e:
        Certificates(MemoryStore()).set(pem)
    assert message in str(e.value)


def test_a_certificate_without_its_issuer_is_refused(pems: Any) -> None:
    folder = tempfile.mkdtemp()
    try:
        ca, key = os.path.join(folder, 'ca'), os.path.join(folder, 'ca.key')
        with open(ca, 'w') as f:
            f.write(pems['other']['cert'])
        with open(key, 'w') as f:
            f.write(pems['other']['key'])
        subprocess.run(['openssl', 'req', '-new', '-newkey', 'rsa:2048', '-nodes', '-subj',
                        '/CN=leaf', '-keyout', os.path.join(folder, 'leaf.key'), '-out',
                        os.path.join(folder, 'leaf.csr')], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(['openssl', 'x509', '-req', '-in', os.path.join(folder, 'leaf.csr'),
                        '-CA', ca, '-CAkey', key, '-CAcreateserial', '-days', '2', '-out',
                        os.path.join(folder, 'leaf.crt')], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        leaf = open(os.path.join(folder, 'leaf.crt')).read()
        leaf_key = open(os.path.join(folder, 'leaf.key')).read()
    finally:
        subprocess.run(['rm', '-rf', folder], check=True)
    with pytest.raises(InvalidInput) as e:
        Certificates(MemoryStore()).set(leaf + leaf_key)
    assert 'does not verify' in str(e.value)
    store = MemoryStore()
    info = Certificates(store).set(leaf + pems['other']['cert'] + leaf_key)
    assert info['issuer'] == 'commonName=other.example'
    assert Certificates(store).show()['ca_bundle'].strip() == pems['other']['cert'].strip()


def test_a_bad_certificate_written_around_the_check_is_refused_when_used(pems: Any) -> None:
    store = MemoryStore()
    store.set_store(OPERATOR_KEY, pems['good']['cert'] + pems['other']['key'])
    with pytest.raises(InvalidInput) as e:
        RGWTls().plan(context(tls_cluster([RGW_SPEC]), store),
                      PlanView(tls_cluster([RGW_SPEC])), True)  # type: ignore
    assert 'does not match' in str(e.value) and 'certificate rm' in str(e.value)


def test_split_pem_keeps_the_chain_in_order(pems: Any) -> None:
    good, other = pems['good'], pems['other']
    bundle = split_pem(good['cert'] + other['cert'] + good['key'])
    assert bundle.chain == [other['cert'].strip()]
    assert bundle.ca_bundle.strip() == other['cert'].strip()
    assert bundle.full_chain.count('BEGIN CERTIFICATE') == 2
    with pytest.raises(CertificateError):
        split_pem(good['cert'] + '-----BEGIN FOO-----\nAA==\n-----END FOO-----\n' + good['key'])


# -- the generated certificate ------------------------------------------------------------
def test_a_generated_certificate_is_kept_until_it_lacks_a_name() -> None:
    store = MemoryStore()
    first = Certificates(store).for_names(['127.0.0.1', 'host1'])
    assert first.source == 'generated'
    again = Certificates(store).for_names(['host1'])
    assert again.bundle == first.bundle
    info = Certificates(store).show()
    assert info['source'] == 'generated' and set(info['sans']) == {'IP:127.0.0.1', 'DNS:host1'}
    grown = Certificates(store).for_names(['127.0.0.1', 'host1', '127.0.0.5'])
    assert grown.bundle != first.bundle
    assert 'IP:127.0.0.5' in Certificates(store).show()['sans']


def test_the_operators_certificate_wins(pems: Any) -> None:
    store = MemoryStore()
    Certificates(store).for_names(['host1'])
    Certificates(store).set(pems['good']['cert'] + pems['good']['key'])
    assert Certificates(store).for_names(['host1']).source == 'operator'
    assert Certificates(store).remove() is True
    assert Certificates(store).current().source == 'generated'  # type: ignore[union-attr]
    assert Certificates(store).remove() is False


def test_show_without_any_certificate_is_not_found() -> None:
    with pytest.raises(NotFound):
        Certificates(MemoryStore()).show()


# -- tls@rgw plans ---------------------------------------------------------------------------
def plan(setting: Any, cluster: FakeCluster, value: Any, store: Optional[MemoryStore] = None,
         release: int = 16, **options: Any) -> List[Any]:
    ctx = context(cluster, store, release, **options)
    return setting.plan(ctx, PlanView(cluster), value)  # type: ignore[arg-type]


def test_rgw_tls_on_keeps_the_port_and_names_every_rgw_host() -> None:
    store, cluster = MemoryStore(), tls_cluster([RGW_SPEC])
    (key, change) = plan(RGWTls(), cluster, True, store)
    assert change.kind == 'service' and change.target == 'rgw.default'
    fields = change.after['spec']
    assert fields['ssl'] is True and fields['rgw_frontend_port'] == 8000
    assert 'BEGIN CERTIFICATE' in fields['rgw_frontend_ssl_certificate']
    assert 'PRIVATE KEY' in fields['rgw_frontend_ssl_certificate']
    assert change.after['placement'] == RGW_SPEC['placement']
    served = split_pem(fields['rgw_frontend_ssl_certificate']).certificate
    assert set(describe_certificate(served)['sans']) == {'DNS:host1', 'IP:127.0.0.1'}
    assert store.data == {}  # a plan stores nothing
    # A second plan (the apply after `settings plan`) gives the same spec.
    (_, again) = plan(RGWTls(), cluster, True, store)
    assert again.after == change.after
    ServiceSpec.from_json(change.after).validate()


def test_rgw_tls_on_the_operators_port() -> None:
    (_, change) = plan(RGWTls(), tls_cluster([RGW_SPEC]), True, rgw_ssl_port=8443)
    assert change.after['spec']['rgw_frontend_port'] == 8443


def test_rgw_tls_keeps_the_default_port_of_a_spec_without_one() -> None:
    spec = dict(RGW_SPEC, spec={})
    (_, change) = plan(RGWTls(), tls_cluster([spec]), True)
    assert change.after['spec']['rgw_frontend_port'] == 80


def test_rgw_tls_already_in_place_plans_nothing() -> None:
    store, cluster = MemoryStore(), tls_cluster([RGW_SPEC])
    (_, change) = plan(RGWTls(), cluster, True, store)
    cluster.put_service('rgw.default', change.after)
    assert plan(RGWTls(), cluster, True, store) == []


def test_rgw_tls_off_plans_nothing_when_off_and_takes_ssl_away_when_on() -> None:
    assert plan(RGWTls(), tls_cluster([RGW_SPEC]), False) == []
    store, cluster = MemoryStore(), tls_cluster([RGW_SPEC])
    (_, on) = plan(RGWTls(), cluster, True, store)
    cluster.put_service('rgw.default', on.after)
    (off,) = plan(RGWTls(), cluster, False, store)
    assert off.after['spec'] == {'rgw_frontend_port': 8000, 'ssl': False}


def test_rgw_tls_composes_with_earlier_plans_of_the_same_spec() -> None:
    cluster = tls_cluster([RGW_SPEC])
    view = PlanView(cluster)  # type: ignore[arg-type]
    spec = copy.deepcopy(RGW_SPEC)
    spec['placement']['count_per_host'] = 2
    view.add([service_change('rgw.default', spec, 'two per host')])
    (_, change) = RGWTls().plan(context(cluster), view, True)
    assert change.after['placement']['count_per_host'] == 2


# -- tls@ingress plans -----------------------------------------------------------------------
OPTIONS = {'ingress_virtual_ip': '127.0.0.1/32', 'ingress_frontend_port': 0,
           'ingress_monitor_port': 0}


def test_a_new_https_ingress_in_front_of_the_rgw_service() -> None:
    store = MemoryStore()
    frontend, monitor = free_port(), free_port()
    (change,) = plan(IngressTls(), tls_cluster([RGW_SPEC]), 'https', store,
                     ingress_virtual_ip='127.0.0.1/32', ingress_frontend_port=frontend,
                     ingress_monitor_port=monitor)
    assert change.target == 'ingress.rgw.default'
    fields = change.after['spec']
    assert fields['backend_service'] == 'rgw.default'
    assert (fields['virtual_ip'], fields['frontend_port'], fields['monitor_port']) == \
        ('127.0.0.1/32', frontend, monitor)
    assert fields['ssl'] is True and 'BEGIN CERTIFICATE' in fields['ssl_cert']
    # Pacific's cephadm writes HAProxy's file from ssl_cert alone: the key is in it.
    assert 'PRIVATE KEY' in fields['ssl_key'] and fields['ssl_cert'].rstrip().endswith(
        fields['ssl_key'].rstrip())
    # Only fields Pacific's IngressSpec knows.
    assert set(fields) <= {'backend_service', 'virtual_ip', 'frontend_port', 'monitor_port',
                           'ssl', 'ssl_cert', 'ssl_key'}
    ServiceSpec.from_json(change.after).validate()
    chain = fields['ssl_cert'][:fields['ssl_cert'].index(fields['ssl_key'].strip())]
    assert 'IP:127.0.0.1' in describe_certificate(chain)['sans']
    assert store.data == {}  # a plan stores nothing


def test_an_https_ingress_from_reef_on_keeps_the_key_out_of_ssl_cert() -> None:
    """cephadm writes ssl_key beside the certificate there; its certificate store
    (Tentacle) keeps ssl_cert, which holds no key then."""
    (change,) = plan(IngressTls(), tls_cluster([RGW_SPEC]), 'https', release=20,
                     ingress_virtual_ip='127.0.0.1/32', ingress_frontend_port=free_port(),
                     ingress_monitor_port=free_port())
    fields = change.after['spec']
    assert 'PRIVATE KEY' in fields['ssl_key'] and 'PRIVATE KEY' not in fields['ssl_cert']
    assert 'IP:127.0.0.1' in describe_certificate(fields['ssl_cert'])['sans']


def test_a_plain_ingress_has_no_certificate() -> None:
    (change,) = plan(IngressTls(), tls_cluster([RGW_SPEC]), 'http',
                     ingress_virtual_ip='127.0.0.1/32', ingress_frontend_port=free_port(),
                     ingress_monitor_port=free_port())
    assert change.after['spec']['ssl'] is False
    assert 'ssl_cert' not in change.after['spec'] and 'ssl_key' not in change.after['spec']


def test_an_existing_ingress_is_changed_with_its_own_address() -> None:
    frontend, monitor = free_port(), free_port()
    existing = {'service_type': 'ingress', 'service_id': 'front',
                'placement': {'hosts': ['host1']},
                'spec': {'backend_service': 'rgw.default', 'virtual_ip': '127.0.0.1/32',
                         'frontend_port': frontend, 'monitor_port': monitor}}
    cluster = tls_cluster([RGW_SPEC, existing])
    store = MemoryStore()
    (change,) = plan(IngressTls(), cluster, 'https', store)
    assert change.target == 'ingress.front'
    assert change.after['placement'] == {'hosts': ['host1']}
    assert change.after['spec']['frontend_port'] == frontend
    assert change.after['spec']['ssl'] is True
    assert 'HAProxy at 127.0.0.1/32 on host1, port %d (monitor %d)' % (frontend, monitor) \
        in change.summary and 'chosen from the cluster' not in change.summary
    cluster.put_service('ingress.front', change.after)
    assert plan(IngressTls(), cluster, 'https', store) == []
    (off,) = plan(IngressTls(), cluster, 'off')
    assert off.after is None and off.target == 'ingress.front'


def test_a_variant_loads_every_frontend_of_its_ingress_or_every_rgw() -> None:
    ingress = {'service_type': 'ingress', 'service_id': 'front',
               'placement': {'hosts': ['host1']},
               'spec': {'backend_service': 'rgw.default',
                        'virtual_ips_list': ['10.9.0.2/24', '10.9.0.1/24'],
                        'frontend_port': 9443, 'monitor_port': 9444, 'ssl': True}}
    store = MemoryStore()
    Certificates(store).for_names(['127.0.0.1'])
    ctx = context(tls_cluster([RGW_SPEC, ingress]), store)
    client = IngressTls().client(ctx, 'https', ClientSide())
    frontends = ('https://10.9.0.2:9443', 'https://10.9.0.1:9443')
    assert client.ingress == frontends and client.ca_bundle
    # what each variant loads by default, and what a profile's target makes of it
    assert client_targets(ctx, Target(), client).targets == frontends
    assert client_targets(ctx, Target(kind=RGW), client).targets == ('http://127.0.0.1:8000',)
    assert client_targets(ctx, Target(), ClientSide()).targets == ('http://127.0.0.1:8000',)
    assert client_targets(ctx, Target(kind=INGRESS), ClientSide()).targets == frontends
    urls = Target(kind=URLS, urls=('http://10.0.0.5:80',))
    assert client_targets(ctx, urls, client).targets == urls.urls
    # TLS at RGW: every daemon's HTTPS endpoint
    ctx = context(tls_cluster([RGW_SPEC], frontend='beast ssl_port=8443'), store)
    client = RGWTls().client(ctx, True, ClientSide())
    assert client_targets(ctx, Target(), client).targets == ('https://127.0.0.1:8443',)
    # the cluster as it is serves HTTPS only: that is where the load goes
    assert client_targets(ctx, Target(), ClientSide()).targets == ('https://127.0.0.1:8443',)
    with pytest.raises(InvalidInput, match='target: ingress, but no ingress is in front'):
        client_targets(ctx, Target(kind=INGRESS), ClientSide())


def test_ingress_off_without_an_ingress_plans_nothing() -> None:
    assert plan(IngressTls(), tls_cluster([RGW_SPEC]), 'off') == []


def test_an_ingress_port_in_use_fails_the_plan() -> None:
    with socket.socket() as busy:
        busy.bind(('127.0.0.1', 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(InvalidInput) as e:
            plan(IngressTls(), tls_cluster([RGW_SPEC]), 'http',
                 ingress_virtual_ip='127.0.0.1/32', ingress_frontend_port=port,
                 ingress_monitor_port=free_port())
    assert '127.0.0.1:%d is already in use' % port in str(e.value)
    assert 'ingress_frontend_port' in str(e.value)


def test_ingress_options_are_checked() -> None:
    with pytest.raises(InvalidInput) as e:
        plan(IngressTls(), tls_cluster([RGW_SPEC]), 'http', ingress_virtual_ip='vip.example',
             ingress_frontend_port=1, ingress_monitor_port=2)
    assert 'not an IP address' in str(e.value)
    with pytest.raises(InvalidInput) as e:
        plan(IngressTls(), tls_cluster([RGW_SPEC]), 'http', ingress_virtual_ip='127.0.0.1',
             ingress_frontend_port=5, ingress_monitor_port=5)
    assert 'both 5' in str(e.value)


# -- apply, failure and revert with the applier ---------------------------------------------
def test_a_refused_ingress_puts_the_rgw_spec_back() -> None:
    store, cluster = MemoryStore(), tls_cluster([RGW_SPEC])
    cluster.refuse = 'ingress'
    ctx = context(cluster, store, ingress_virtual_ip='127.0.0.1/32',
                  ingress_frontend_port=free_port(), ingress_monitor_port=free_port())
    applier = SettingsApplier(ctx, [RGWTls(), IngressTls()])
    plans = applier.plan({'tls@rgw': 'on', 'tls@ingress': 'https'})
    journal = Journal.open(store, 'settings-x')
    with pytest.raises(RuntimeError):
        applier.apply(journal, plans)
    applier.revert(journal)
    assert cluster.specs == {'rgw.default': RGW_SPEC} and cluster.keys == {}
    assert [name for name, _ in cluster.applied] == [
        'rgw.default', 'ingress.rgw.default', 'ingress.rgw.default', 'rgw.default']
    assert cluster.applied[-2][1] is None and cluster.applied[-1][1] == RGW_SPEC


@pytest.mark.parametrize('before', [{}, {'rgw/cert/rgw.default': 'the operator\'s PEM'}])
def test_the_certificate_the_orchestrator_keeps_for_rgw_is_put_back(
        before: Dict[str, str], monkeypatch: Any) -> None:
    """cephadm writes rgw/cert/<service> for an RGW spec with ssl and leaves it there."""
    monkeypatch.setattr(RGWTls, 'verify', lambda *args: None)  # no RGW serves here
    store, cluster = MemoryStore(), tls_cluster([RGW_SPEC])
    cluster.keys = dict(before)
    applier = SettingsApplier(context(cluster, store), [RGWTls()])
    plans = applier.plan({'tls@rgw': 'on'})
    assert 'ceph config-key set rgw/cert/rgw.default' in plans[0].changes[0].summary
    assert 'PRIVATE KEY' not in ' '.join(c.summary for c in plans[0].changes)
    journal = Journal.open(store, 'settings-x')
    applier.apply(journal, plans)
    assert 'PRIVATE KEY' in cluster.keys['rgw/cert/rgw.default']
    applier.revert(journal)
    assert cluster.specs == {'rgw.default': RGW_SPEC}
    assert cluster.keys == before


# -- verification against a real TLS endpoint ----------------------------------------------
class S3Like(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'<ListAllMyBucketsResult></ListAllMyBucketsResult>'
        self.send_response(200)
        self.send_header('x-amz-request-id', 'tx1')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def tls_server() -> Iterator[Callable[[str], int]]:
    servers: List[HTTPServer] = []

    def serve(pem: str) -> int:
        server = HTTPServer(('127.0.0.1', 0), S3Like)
        with tempfile.NamedTemporaryFile('w', suffix='.pem') as f:
            f.write(pem)
            f.flush()
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(f.name)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return int(server.server_address[1])
    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def test_verify_wants_the_exact_certificate(tls_server: Any) -> None:
    store = MemoryStore()
    tls = Certificates(store).for_names(['127.0.0.1'])
    port = tls_server(tls.bundle.server_pem)
    assert tls_problem('127.0.0.1', port, tls) is None
    cluster = tls_cluster([RGW_SPEC], frontend='beast ssl_port=%d' % port)
    ctx = context(cluster, store)
    RGWTls().verify(ctx, True)
    client = RGWTls().client(ctx, True, ClientSide())
    assert client.rgw == ('https://127.0.0.1:%d' % port,)
    assert client.ca_bundle == tls.bundle.ca_bundle
    # Another certificate for the same names: the handshake does not verify.
    other = Certificates(MemoryStore()).for_names(['127.0.0.1'])
    problem = tls_problem('127.0.0.1', port, other)
    assert problem is not None and 'does not verify' in problem


def test_verify_fails_on_plain_http_and_a_stale_map() -> None:
    store = MemoryStore()
    Certificates(store).for_names(['127.0.0.1'])
    ctx = context(tls_cluster([RGW_SPEC]), store)
    with pytest.raises(Exception) as e:
        RGWTls().verify(ctx, True)
    assert 'no HTTPS endpoint in the service map for default.host1.a' in str(e.value)
    RGWTls().verify(ctx, False)


def test_generated_key_is_in_the_store_only(pems: Any) -> None:
    store = MemoryStore()
    Certificates(store).for_names(['host1'])
    assert 'PRIVATE KEY' in store.data[GENERATED_KEY]
    assert 'PRIVATE KEY' not in repr(Certificates(store).show())


def test_a_spec_the_release_would_refuse_fails_the_plan() -> None:
    spec = copy.deepcopy(RGW_SPEC)
    spec['spec']['rgw_realm'] = 'only-a-realm'
    cluster = tls_cluster([RGW_SPEC])
    view = PlanView(cluster)  # type: ignore[arg-type]
    view.add([service_change('rgw.default', spec, 'an earlier setting')])
    with pytest.raises(InvalidInput) as e:
        RGWTls().plan(context(cluster), view, True)
    assert 'tls@rgw: the rgw spec would be refused by this release' in str(e.value)
