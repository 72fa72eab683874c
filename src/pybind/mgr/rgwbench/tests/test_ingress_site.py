"""tls@ingress's defaults: virtual IPs and ports chosen from what the cluster reports."""
import errno
import ipaddress
import socket
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest
from ceph.deployment.service_spec import ServiceSpec
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster, HostSpecLike
from rgwbench.tests.tls_fakes import RGW_SPEC, tls_cluster

from rgwbench.errors import InvalidInput
from rgwbench.serial import dump
from rgwbench.certs.pem import describe_certificate, split_pem
from rgwbench.runs.plan_text import run_plan_to_text
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import PlanView, SettingContext
from rgwbench.cluster.access import Daemon
from rgwbench.settings.ingress_site import (CEPH_PORTS, Site, SiteHost, TCPProbe, choose,
                                            fixed, network_of, read_site, takes_vip_list)
from rgwbench.settings.tls import IngressTls, RGWTls

FSID = '6b1c1f0e-4b0a-4d4e-9a57-0d1c0f6f1a2b'


class FakeProbe:
    """addr:port pairs that are taken (accept, or time out)."""

    def __init__(self, listening: Optional[Set[Tuple[str, int]]] = None) -> None:
        self.listening = listening or set()
        self.asked: List[Tuple[str, int]] = []

    def taken(self, addr: str, port: int) -> bool:
        self.asked.append((addr, port))
        return (addr, port) in self.listening


def loopback_site(**fields: Any) -> Site:
    return Site(hosts=[SiteHost('host1', '127.0.0.1')], cluster_id=FSID, **fields)


def three_hosts(**fields: Any) -> Site:
    hosts = [SiteHost('host%d' % i, '10.9.0.%d' % i) for i in (1, 2, 3)]
    return Site(hosts=hosts, networks=['10.9.0.0/24'], cluster_id=FSID, **fields)


THREE_VIPS = '10.9.0.254/24,10.9.0.253/24,10.9.0.252/24'


# -- the choice ------------------------------------------------------------------------------
def test_a_loopback_host_gets_an_unused_127_address_and_the_default_ports() -> None:
    chosen = choose(loopback_site(), FakeProbe(), ssl=True)
    (vip,) = chosen.vips
    address = ipaddress.ip_interface(vip)
    assert address.ip in ipaddress.ip_network('127.0.0.0/8') and vip.endswith('/8')
    assert not str(address.ip).startswith('127.0.0.')  # not 127.0.0.1 nor its neighbours
    assert (chosen.hosts, chosen.frontend_port, chosen.monitor_port) == (['host1'], 443, 1967)
    assert chosen.spec_fields() == {'virtual_ip': vip, 'frontend_port': 443,
                                    'monitor_port': 1967}
    assert chosen.defaults == ['ingress_virtual_ip', 'ingress_frontend_port',
                               'ingress_monitor_port']
    # the same cluster, the same choice (a plan and the apply after it agree) ...
    assert choose(loopback_site(), FakeProbe(), ssl=True) == chosen
    # ... and another cluster on the same machine picks another address
    other = choose(Site(hosts=[SiteHost('host1', '127.0.0.1')], cluster_id='another-fsid'),
                   FakeProbe(), ssl=True)
    assert other.vips != chosen.vips


def test_plain_http_starts_at_8080() -> None:
    assert choose(loopback_site(), FakeProbe(), ssl=False).frontend_port == 8080


def test_ports_of_daemons_on_the_host_and_ports_that_answer_are_skipped() -> None:
    first = choose(loopback_site(), FakeProbe(), ssl=True)
    vip = first.addresses()[0]
    site = loopback_site(ports_taken={'host1': {443, 444}, 'elsewhere': {445}})
    # something listens on the VIP's 445 (a wildcard listener of another program) and
    # on the host's 1967
    probe = FakeProbe(listening={(vip, 445), ('127.0.0.1', 1967)})
    chosen = choose(site, probe, ssl=True)
    assert (chosen.frontend_port, chosen.monitor_port) == (446, 1968)


def test_a_port_taken_on_one_ingress_host_is_skipped_on_all() -> None:
    site = three_hosts(ports_taken={'host2': {443}, 'host3': {1967, 1968}})
    chosen = choose(site, FakeProbe(), ssl=True, vip_option=THREE_VIPS)
    assert (chosen.frontend_port, chosen.monitor_port) == (444, 1969)


def test_the_ports_of_ceph_daemons_are_never_chosen() -> None:
    site = loopback_site()
    assert 6800 in CEPH_PORTS
    chosen = choose(site, FakeProbe(), ssl=True, frontend_option=6799,
                    monitor_option=0)
    assert chosen.frontend_port == 6799
    taken = loopback_site(ports_taken={'host1': set(range(1967, 1967 + 300))})
    with pytest.raises(InvalidInput, match='no free port found from 1967.*ingress_monitor_port'):
        choose(taken, FakeProbe(), ssl=True)


def test_a_non_loopback_host_without_vips_is_refused_with_the_option_to_set() -> None:
    # The probe would have timed out on the gateway at .254 (it drops TCP from the mgr):
    # no probe is made at all, and no address is guessed on a network rgwbench does not own.
    probe = FakeProbe()
    with pytest.raises(InvalidInput) as refused:
        choose(three_hosts(), probe, ssl=True)
    message = str(refused.value)
    assert '\n' not in message and probe.asked == []
    assert 'no virtual IP given for host1, host2, host3 (10.9.0.1, 10.9.0.2, 10.9.0.3, ' \
        'not loopback)' in message
    assert '`ceph config set mgr mgr/rgwbench/ingress_virtual_ip <address>/24,<address>/24,' \
        '<address>/24` with 3 unused addresses of 10.9.0.0/24' in message
    # A release with one VIP asks for one; a host outside public_network says the /24 is
    # assumed.
    with pytest.raises(InvalidInput, match=r'ingress_virtual_ip <address>/24` with an unused '
                                           r'address of 192.168.7.0/24 \(assumed\)'):
        choose(Site(hosts=[SiteHost('h', '192.168.7.20')], virtual_ips_list=False),
               FakeProbe(), ssl=True)


def test_a_probe_that_times_out_counts_as_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    def times_out(address: Tuple[str, int], timeout: float) -> None:
        raise socket.timeout('timed out')

    def refused(address: Tuple[str, int], timeout: float) -> None:
        raise ConnectionRefusedError(errno.ECONNREFUSED, 'refused')

    monkeypatch.setattr(socket, 'create_connection', times_out)
    assert TCPProbe().taken('10.1.0.254', 443)
    monkeypatch.setattr(socket, 'create_connection', refused)
    assert not TCPProbe().taken('10.1.0.254', 443)


def test_operator_vips_on_a_non_loopback_network_are_taken_as_given() -> None:
    chosen = choose(three_hosts(), FakeProbe(), ssl=True,
                    vip_option='10.9.0.71/24,10.9.0.72/24,10.9.0.73/24')
    assert chosen.vips == ['10.9.0.71/24', '10.9.0.72/24', '10.9.0.73/24']
    assert chosen.hosts == ['host1', 'host2', 'host3']
    assert chosen.spec_fields()['virtual_ips_list'] == chosen.vips
    assert 'virtual_ip' not in chosen.spec_fields()


def test_without_a_configured_network_a_24_around_the_host_is_assumed() -> None:
    net, assumed = network_of('192.168.7.20', [])
    assert str(net) == '192.168.7.0/24' and assumed
    net, assumed = network_of('192.168.7.20', ['10.0.0.0/8', '192.168.0.0/16'])
    assert str(net) == '192.168.0.0/16' and not assumed
    assert str(network_of('127.0.0.1', ['10.0.0.0/8'])[0]) == '127.0.0.0/8'


def test_the_options_override_and_are_not_probed() -> None:
    probe = FakeProbe()
    chosen = choose(three_hosts(), probe, ssl=True, vip_option='10.9.0.77/24',
                    frontend_option=9443, monitor_option=9444)
    assert (chosen.vips, chosen.hosts) == (['10.9.0.77/24'], ['host1'])
    assert (chosen.frontend_port, chosen.monitor_port, chosen.defaults) == (9443, 9444, [])
    assert probe.asked == []
    assert 'chosen from the cluster' not in chosen.describe()
    # one option set, the others chosen
    chosen = choose(three_hosts(), FakeProbe(), ssl=True, frontend_option=8443,
                    vip_option=THREE_VIPS)
    assert chosen.frontend_port == 8443 and chosen.monitor_port == 1967
    assert chosen.defaults == ['ingress_monitor_port']
    # several addresses: one HAProxy per RGW host
    chosen = choose(three_hosts(), FakeProbe(), ssl=True,
                    vip_option='10.9.0.71/24, 10.9.0.72/24, 10.9.0.73/24')
    assert chosen.spec_fields()['virtual_ips_list'] == [
        '10.9.0.71/24', '10.9.0.72/24', '10.9.0.73/24']


@pytest.mark.parametrize('site, option, message', [
    (three_hosts(), 'vip.example', 'not an IP address'),
    (three_hosts(virtual_ips_list=False), '10.9.0.71/24,10.9.0.72/24', 'takes one'),
    (loopback_site(), '127.1.0.1/8,127.1.0.2/8', 'one per host at most'),
])
def test_bad_vip_options_are_refused(site: Site, option: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        choose(site, FakeProbe(), ssl=True, vip_option=option)
    with pytest.raises(InvalidInput, match='both 5'):
        choose(three_hosts(), FakeProbe(), ssl=True, frontend_option=5, monitor_option=5,
               vip_option=THREE_VIPS)


def test_describe_shows_every_vip_its_host_and_the_ports() -> None:
    text = choose(three_hosts(), FakeProbe(), ssl=True,
                  vip_option=THREE_VIPS).describe()
    assert text.startswith('HAProxy at 10.9.0.254/24 on host1, 10.9.0.253/24 on host2, '
                           '10.9.0.252/24 on host3, port 443 (monitor 1967)')
    assert 'chosen from the cluster: frontend_port, monitor_port; set ' \
        'mgr/rgwbench/ingress_frontend_port, ingress_monitor_port to override' in text


# -- the site as the cluster reports it ------------------------------------------------------
class SiteMgr:
    def get_hosts(self) -> List[HostSpecLike]:
        return [HostSpecLike('b', '10.9.0.2'), HostSpecLike('a', 'a.example'),
                HostSpecLike('c', '10.9.0.3')]

    def get(self, what: str) -> Dict[str, Any]:
        assert what == 'mon_map'
        return {'fsid': FSID, 'mons': [{'addr': '10.9.0.9:6789/0'}]}


class SiteCluster(FakeCluster):
    def __init__(self, specs: List[Dict[str, Any]]) -> None:
        super().__init__(specs)
        self.mgr = SiteMgr()

    def daemons(self, service_name: Optional[str] = None,
                daemon_type: Optional[str] = None) -> List[Daemon]:
        found = [Daemon('rgw.default.b.x', 'rgw', 'default.b.x', 'b', True, [8000], None),
                 Daemon('rgw.default.a.y', 'rgw', 'default.a.y', 'a', True, [8000], None),
                 Daemon('mgr.a', 'mgr', 'a', 'a', True, [8443, 9283], '10.9.0.1'),
                 Daemon('node-exporter.c', 'node-exporter', 'c', 'c', True, [9100], None)]
        return [d for d in found if service_name is None or d.name.startswith(service_name)]

    def config_value(self, who: str, option: str) -> Optional[str]:
        return {('global', 'public_network'): '10.9.0.0/25, 192.168.0.0/24'}.get(
            (who, option))


def test_read_site_takes_rgw_hosts_their_addresses_and_whatever_is_in_use() -> None:
    other = {'service_type': 'ingress', 'service_id': 'other', 'placement': {'count': 1},
             'spec': {'backend_service': 'rgw.other', 'virtual_ip': '10.9.0.126/25',
                      'frontend_port': 80, 'monitor_port': 81}}
    site = read_site(SiteCluster([RGW_SPEC, other]), 'rgw.default',
                     resolve=lambda name: {'a.example': '10.9.0.1'}[name])
    assert site.hosts == [SiteHost('a', '10.9.0.1'), SiteHost('b', '10.9.0.2')]
    assert site.ports_taken == {'a': {8000, 8443, 9283}, 'b': {8000}, 'c': {9100}}
    assert site.addresses_in_use >= {'10.9.0.1', '10.9.0.2', '10.9.0.3', '10.9.0.9',
                                     '10.9.0.126'}
    assert site.networks == ['10.9.0.0/25', '192.168.0.0/24'] and site.cluster_id == FSID
    assert site.virtual_ips_list  # this release's IngressSpec has it
    with pytest.raises(InvalidInput, match='<address>/25,<address>/25` with 2 unused '
                                           'addresses of 10.9.0.0/25'):
        choose(site, FakeProbe(), ssl=True)


# -- the plan ------------------------------------------------------------------------------
def ingress_context(store: MemoryStore) -> SettingContext:
    return SettingContext(cluster=tls_cluster([RGW_SPEC]),  # type: ignore[arg-type]
                          rgw_service=lambda: 'rgw.default', option=lambda key: None,
                          secrets=store, release=16)


def test_a_plan_without_ingress_options_shows_the_vip_and_ports_it_chose() -> None:
    store = MemoryStore()
    ctx = ingress_context(store)
    setting = IngressTls(probe=FakeProbe())
    (change,) = setting.plan(ctx, PlanView(ctx.cluster), 'https')
    fields = change.after['spec']
    vip = fields['virtual_ip']
    assert ipaddress.ip_interface(vip).ip in ipaddress.ip_network('127.0.0.0/8')
    assert (fields['frontend_port'], fields['monitor_port']) == (443, 1967)
    assert change.after['placement'] == {'hosts': ['host1']}
    ServiceSpec.from_json(change.after).validate()
    served = split_pem(fields['ssl_cert']).certificate  # Pacific's ssl_cert holds the key too
    assert 'IP:%s' % vip.split('/')[0] in describe_certificate(served)['sans']
    assert ('ceph orch apply ingress.rgw.default: HAProxy at %s on host1, port 443 (monitor '
            '1967) [chosen from the cluster' % vip) in change.summary
    assert store.data == {}  # a plan changes nothing
    # `ceph rgwbench plan` prints it
    applier = SettingsApplier(ctx, [RGWTls(), setting])
    plans = applier.plan({'tls@rgw': 'off', 'tls@ingress': 'https'})
    text = run_plan_to_text({
        'profile': 'tls', 'variants': [{'name': 'tls-ingress', 'baseline': False,
                                        'changes': dump(plans)}],
        'workloads': [], 'repeats': 1, 'estimated_s': 60, 'placement': [],
        'problems': []})
    assert '  - ceph orch apply ingress.rgw.default: HAProxy at %s on host1, port 443 ' \
        '(monitor 1967)' % vip in text


def test_the_options_still_win_in_the_plan() -> None:
    store = MemoryStore()
    ctx = ingress_context(store)._replace(option={
        'ingress_virtual_ip': '127.0.0.1/32', 'ingress_frontend_port': 0,
        'ingress_monitor_port': 0}.get)
    probe = FakeProbe()
    (change,) = IngressTls(probe=probe).plan(ctx, PlanView(ctx.cluster), 'http')
    assert change.after['spec']['virtual_ip'] == '127.0.0.1/32'
    assert change.after['spec']['frontend_port'] == 8080
    assert ('127.0.0.1', 8080) in probe.asked


def test_a_release_whose_ingress_spec_lacks_virtual_ips_list_is_told_apart() -> None:
    class OldRelease(FakeCluster):
        @staticmethod
        def spec_from_json(spec: Dict[str, Any]) -> Any:
            if 'virtual_ips_list' in (spec.get('spec') or {}):
                raise TypeError("__init__() got an unexpected keyword 'virtual_ips_list'")
            return FakeCluster.spec_from_json(spec)

    assert takes_vip_list(tls_cluster([RGW_SPEC]))
    assert not takes_vip_list(OldRelease([RGW_SPEC]))


def test_an_existing_ingress_is_described_where_it_is_and_only_checked() -> None:
    kept = fixed('10.9.0.7/24,10.9.0.8/24', 80, 81, ['x', 'y'])
    assert kept.describe() == 'HAProxy at 10.9.0.7/24 on x, 10.9.0.8/24 on y, port 80 ' \
        '(monitor 81)'
    assert fixed('10.9.0.7/24', 80, 81, []).describe() == 'HAProxy at 10.9.0.7/24, port 80 ' \
        '(monitor 81)'
    with pytest.raises(InvalidInput, match='not an IP address'):
        fixed('ingress.example', 80, 81, [])


def test_a_release_without_virtual_ips_list_gets_one_loopback_vip_on_the_first_host() -> None:
    hosts = [SiteHost('host1', '127.0.0.1'), SiteHost('host2', '127.0.0.2')]
    chosen = choose(Site(hosts=hosts, cluster_id=FSID, virtual_ips_list=False), FakeProbe(),
                    ssl=True)
    assert chosen.hosts == ['host1'] and len(chosen.vips) == 1
    both = choose(Site(hosts=hosts, cluster_id=FSID), FakeProbe(), ssl=True)
    assert both.hosts == ['host1', 'host2'] and len(set(both.vips)) == 2
    # one host outside loopback: nothing is chosen for any
    with pytest.raises(InvalidInput, match='no virtual IP given for host1, host2'):
        choose(Site(hosts=[hosts[0], SiteHost('host2', '10.9.0.2')], cluster_id=FSID),
               FakeProbe(), ssl=True)
