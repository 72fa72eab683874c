from typing import Any, Dict, List

import pytest

from rgwbench.cluster.rgw_daemons import Endpoint, parse_frontend, rgw_daemons
from rgwbench.serial import dump

from fixtures import rgw_service_map


def urls(config: str, ip: str = '10.1.2.3') -> List[str]:
    return [e.url for e in parse_frontend(config, ip)]


@pytest.mark.parametrize('config, expected', [
    ('beast port=8000 tcp_nodelay=1', ['http://10.1.2.3:8000']),
    ('beast port=80 ssl_port=443 ssl_certificate=config://rgw/cert/rgw.foo',
     ['http://10.1.2.3:80', 'https://10.1.2.3:443']),
    ('beast ssl_port=8443 ssl_certificate=/etc/cert.pem', ['https://10.1.2.3:8443']),
    ('beast endpoint=192.168.5.5:8080', ['http://192.168.5.5:8080']),
    ('beast endpoint=0.0.0.0:8080 ssl_endpoint=[::]:8443',
     ['http://10.1.2.3:8080', 'https://10.1.2.3:8443']),
    ('beast ssl_endpoint=[fd00::5]', ['https://[fd00::5]:443']),
    ('beast endpoint=127.0.0.1', ['http://127.0.0.1:80']),
    ('beast', ['http://10.1.2.3:80']),
    ('civetweb port=8080+8443s', ['http://10.1.2.3:8080', 'https://10.1.2.3:8443']),
    ('civetweb port=127.0.0.1:7480', ['http://127.0.0.1:7480']),
    ('', []),
])
def test_frontend_endpoints(config: str, expected: List[str]) -> None:
    assert urls(config) == expected


def test_endpoint_fields() -> None:
    assert parse_frontend('beast ssl_port=443', '127.0.0.1') == [
        Endpoint('https', '127.0.0.1', 443)]
    assert dump(Endpoint('https', '::1', 443)) == {
        'scheme': 'https', 'host': '::1', 'port': 443, 'url': 'https://[::1]:443'}


def test_daemons_from_service_map() -> None:
    smap = rgw_service_map(**{'default.vm.b': 'beast ssl_port=443',
                              'default.vm.a': 'beast port=25598 tcp_nodelay=1'})
    found = rgw_daemons(smap)
    assert [d.name for d in found] == ['default.vm.a', 'default.vm.b']
    assert found[0].host == 'vm'
    assert found[0].zone == 'default'
    assert [e.url for e in found[0].endpoints] == ['http://127.0.0.1:25598']
    assert [e.url for e in found[1].endpoints] == ['https://127.0.0.1:443']
    assert dump(found[0])['frontends'] == ['beast port=25598 tcp_nodelay=1']


def test_no_rgw_in_service_map() -> None:
    assert rgw_daemons({'services': {'mgr': {'daemons': {}}}}) == []
    assert rgw_daemons({}) == []


def only_entry(smap: Dict[str, Any]) -> Dict[str, Any]:
    (entry,) = [v for k, v in smap['services']['rgw']['daemons'].items() if k != 'summary']
    return entry


def test_a_restarted_daemon_is_listed_once_as_its_newest_registration() -> None:
    old_entry = only_entry(rgw_service_map(**{'default.vm.a': 'beast ssl_port=8443'}))
    new_entry = only_entry(rgw_service_map(**{'default.vm.a': 'beast port=8000'}))
    new_entry.update(start_epoch=9, gid=5000)
    new_entry['metadata']['pid'] = '222'
    old_entry['metadata']['pid'] = '111'
    for entries in ([('4131', old_entry), ('5000', new_entry)],
                    [('5000', new_entry), ('4131', old_entry)]):
        smap = {'services': {'rgw': {'daemons': dict(entries, summary='')}}}
        (daemon,) = rgw_daemons(smap)
        assert (daemon.key, daemon.pid) == ('5000', 222)
        assert [e.url for e in daemon.endpoints] == ['http://127.0.0.1:8000']


def test_in_the_same_epoch_the_higher_gid_wins() -> None:
    entry = only_entry(rgw_service_map(**{'default.vm.a': 'beast port=8000'}))
    older = dict(entry, metadata=dict(entry['metadata'], pid='1'))
    newer = dict(entry, gid=4140, metadata=dict(entry['metadata'], pid='2'))
    for entries in ([('4131', older), ('4140', newer)], [('4140', newer), ('4131', older)]):
        (daemon,) = rgw_daemons({'services': {'rgw': {'daemons': dict(entries)}}})
        assert daemon.pid == 2
