"""Server figures per daemon on a real cluster of two RGW daemons behind an HAProxy ingress.

A `ceph rgwbench load` through the ingress loads both RGWs; its result must
name each RGW and the HAProxy with their own CPU and memory, and each RGW's
CPU must agree with what this test reads in /proc for that daemon's pid over
the same window (the pid from the test cluster's own pid file, not from the
module). Beside the sums, each kind's mean per daemon; and the host the agent
sampled: its CPU, its interfaces (the load went through loopback, a NIC of
its own), and the CPU of this cluster's OSDs only (other clusters may run on
the machine).
"""
import json
import os
import time
from typing import Any, Dict, Iterator, Tuple

import pytest

from conftest import RELEASES, Cluster, free_ports, own_cluster
from helpers import DURATION_S, WARMUP_S, Watch, ceph_input

VIP = '127.0.0.1'


def pid_of(c: Cluster, daemon: str) -> int:
    with open(os.path.join(c.dir, 'pids', daemon + '.pid')) as f:
        return int(f.read().split()[0])


@pytest.fixture(scope='module', params=RELEASES)
def two_rgws(request: Any) -> Iterator[Tuple[Cluster, int]]:
    """A cluster of two RGW daemons, an ingress in front of them, credentials stored."""
    with own_cluster(request.param, 'rgws2-%s' % request.param, '--rgws', '2', '--objectstore',
                     'memstore') as c:
        s3 = c.s3()
        ceph_input(c, json.dumps({'access_key': s3['access_key'],
                                  'secret_key': s3['secret_key']}),
                   'rgwbench', 'credentials', 'set')
        frontend, monitor = free_ports(VIP, 2)
        ingress = {'service_type': 'ingress', 'service_id': 'rgw.default',
                   'placement': {'count': 1},
                   'spec': {'backend_service': 'rgw.default', 'virtual_ip': '%s/32' % VIP,
                            'frontend_port': frontend, 'monitor_port': monitor}}
        ceph_input(c, json.dumps(ingress), 'orch', 'apply')
        deadline = time.monotonic() + 120
        while not [d for d in c.ceph_json('orch', 'ps', '--daemon_type', 'haproxy')
                   if d.get('status_desc') == 'running']:
            assert time.monotonic() < deadline, 'no haproxy running'
            time.sleep(1)
        yield c, frontend


def test_load_reports_each_daemon_with_its_own_figures(two_rgws: Tuple[Cluster, int]) -> None:
    c, frontend = two_rgws
    rgws = {'rgw.' + d['daemon_id']: pid_of(c, d['daemon_name'])
            for d in c.ceph_json('orch', 'ps', '--daemon_type', 'rgw')}
    (haproxy,) = [d['daemon_name']
                  for d in c.ceph_json('orch', 'ps', '--daemon_type', 'haproxy')]
    assert len(rgws) == 2
    watch = Watch(rgws)
    watch.start()
    try:
        load_id = c.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                         '--concurrency', '8', '--duration', str(DURATION_S),
                         '--warmup', str(WARMUP_S),
                         '--endpoint', 'http://%s:%d' % (VIP, frontend)).stdout.strip()
        deadline = time.monotonic() + 180
        record = c.ceph_json('rgwbench', 'load', 'show', load_id)
        while record['state'] == 'running':
            assert time.monotonic() < deadline, 'load still running'
            time.sleep(1)
            record = c.ceph_json('rgwbench', 'load', 'show', load_id)
    finally:
        watch.done.set()
        watch.join()
    assert record['state'] == 'complete', record['error']
    result = record['result']
    assert result['ops'] > 0 and result['errors'] == 0
    rgw = result['rgw']
    assert [d['daemon'] for d in rgw['per_daemon']] == sorted(rgws)
    assert rgw['daemons'] == 2
    assert rgw['cpu_cores'] == pytest.approx(sum(d['cpu_cores'] for d in rgw['per_daemon']),
                                             abs=1e-3)
    start = result['start_at'] + WARMUP_S
    for daemon in rgw['per_daemon']:
        assert daemon['cpu_cores'] > 0 and daemon['rss_mib'] > 0, daemon
        seen = watch.cores(daemon['daemon'], start, start + DURATION_S)
        assert daemon['cpu_cores'] == pytest.approx(seen, rel=0.2), (daemon, seen)
    (hap,) = result['haproxy']['per_daemon']
    assert hap['daemon'] == haproxy and hap['cpu_cores'] > 0 and hap['rss_mib'] > 0
    # Found by name: the sampler never took the service map's pids.
    (host,) = result['server'].values()
    assert host['radosgw']['counted_by'] == 'daemon'
    assert sorted(host['radosgw']['pids']) == sorted(rgws.values())
    assert_host_figures(c, result)


def assert_host_figures(c: Cluster, result: Dict[str, Any]) -> None:
    """Means per daemon agree with the sums; the host's figures are there and plausible."""
    for kind in ('rgw', 'haproxy', 'osd'):
        summed = result[kind]
        assert summed['daemons'] >= 1, (kind, summed)
        for key in ('cpu_cores', 'rss_mib'):
            assert summed[key + '_mean'] * summed['daemons'] == pytest.approx(
                summed[key], abs=1e-3 * summed['daemons']), (kind, summed)
    (host,) = result['host_figures']
    assert host['cpus'] == os.cpu_count()
    assert 0 < host['cpu_pct_mean'] <= host['cpu_pct_peak'] <= 100, host
    # The load went to 127.0.0.1: each PUT's body crossed loopback at least twice (to the
    # HAProxy, then to an RGW), and loopback is not counted as a NIC.
    assert host['loopback']['rx_bytes'] >= result['bytes'] > 0, host['loopback']
    assert host['loopback']['rx_bytes_s'] > 0 and host['loopback']['tx_bytes_s'] > 0
    assert 'lo' not in [nic['name'] for nic in host['nics']]
    assert all(nic['speed_mbit'] is None or nic['speed_mbit'] > 0 for nic in host['nics'])
    # This cluster's OSDs, every one of them and no other cluster's, were busy.
    osds = c.ceph_json('osd', 'ls')
    assert host['osd']['daemons'] == result['osd']['daemons'] == len(osds), host['osd']
    assert 0 < host['osd']['cpu_cores'] == result['osd']['cpu_cores'], host['osd']
