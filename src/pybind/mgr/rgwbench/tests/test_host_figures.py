"""The figures the studies explain with: means per daemon, each sampled host's CPU,
interfaces and OSDs, and the finding of a saturated host."""
import json
import os
import time
from typing import Any, Dict, List, cast

import pytest

from rgwbench.checks.finding import Level
from rgwbench.loadgen.host_stats import HostSampler, cpu_times, link_speed_mbit, net_bytes
from rgwbench.loadgen.progress import Reporter
from rgwbench.loadgen.result import finalize
from rgwbench.loadgen.schedule import Schedule
from rgwbench.loadgen.workload import Job
from rgwbench.panel.pages import hosts_section
from rgwbench.results.host_findings import host_findings
from rgwbench.results.host_report import hosts_text
from rgwbench.results.model import Figures, Run, WorkloadResult
from rgwbench.results.report import result_to_text
from rgwbench.results.seeds import seeds_to_json, seeds_to_text
from rgwbench.serial import dump, load
from rgwbench.tests.proc_fakes import FSID, OTHER_FSID, fake_proc

STAT = """cpu  {user} 10 {system} {idle} {iowait} 0 0 0 77 0
cpu0 1 2 3 4 5 0 0 0 0 0
cpu1 1 2 3 4 5 0 0 0 0 0
intr 12345 0 0
ctxt 999
"""

NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop \
fifo colls carrier compressed
    lo: {lo_rx} 10 0 0 0 0 0 0 {lo_tx} 10 0 0 0 0 0 0
  eth0: {rx} 200 0 0 0 0 0 0 {tx} 300 0 0 0 0 0 0
veth1a2b: 7 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0
"""


def test_the_cpu_line_of_proc_stat() -> None:
    found = cpu_times(STAT.format(user=100, system=50, idle=800, iowait=40))
    # busy: user, nice, system, irq, softirq, steal; guest (77) is already in user
    assert found is not None
    assert (found.busy, found.total, found.cpus) == (160, 1000, 2)
    assert cpu_times('intr 1 2\n') is None
    assert cpu_times('cpu  x y z\n') is None


def test_proc_net_dev_gives_bytes_each_way_per_interface() -> None:
    found = net_bytes(NET_DEV.format(lo_rx=5, lo_tx=6, rx=1000, tx=2000))
    assert found == {'lo': (5, 6), 'eth0': (1000, 2000), 'veth1a2b': (7, 9)}
    assert net_bytes('') == {}


def test_link_speed_is_unknown_where_the_kernel_does_not_say(tmp_path: Any) -> None:
    for name, text in (('eth0', '10000\n'), ('veth0', '-1\n'), ('ifb0', 'junk')):
        os.makedirs(str(tmp_path / name))
        (tmp_path / name / 'speed').write_text(text)
    assert link_speed_mbit('eth0', str(tmp_path)) == 10000
    assert link_speed_mbit('veth0', str(tmp_path)) is None
    assert link_speed_mbit('ifb0', str(tmp_path)) is None
    assert link_speed_mbit('lo', str(tmp_path)) is None   # no file at all


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _host(root: str, busy: int, idle: int, rx: int, tx: int, lo: int) -> None:
    os.makedirs(os.path.join(root, 'net'), exist_ok=True)
    with open(os.path.join(root, 'stat'), 'w') as f:
        f.write(STAT.format(user=busy - 60, system=50, idle=idle, iowait=0))
    with open(os.path.join(root, 'net', 'dev'), 'w') as f:
        f.write(NET_DEV.format(lo_rx=lo, lo_tx=lo, rx=rx, tx=tx))


def _osds(root: str, ticks: int) -> None:
    """This cluster's OSDs (same configuration file as its RGW; in a cephadm unit of its
    fsid) and another cluster's with the same ids, each `ticks` busier than the last time."""
    unit = '0::/system.slice/system-ceph.slice/ceph-%s@osd.%d.service\n'
    fake_proc(root, 10, 'radosgw', 0, 0, 1024,
              ['radosgw', '-f', '-c', '/tmp/c/ceph.conf', '-n', 'client.rgw.foo.vm.abc'])
    fake_proc(root, 40, 'ceph-osd', 100 + ticks, 0, 300 * 1024,
              ['ceph-osd', '-f', '-c', '/tmp/c/ceph.conf', '-i', '0'])
    fake_proc(root, 41, 'ceph-osd', 500 + 9 * ticks, 0, 900 * 1024,
              ['ceph-osd', '-f', '-c', '/tmp/other/ceph.conf', '-i', '0'])
    fake_proc(root, 42, 'ceph-osd', 50 + ticks // 2, 0, 100 * 1024,
              ['/usr/bin/ceph-osd', '-n', 'osd.3'], cgroup=unit % (FSID, 3))
    fake_proc(root, 43, 'ceph-osd', 50 + 9 * ticks, 0, 100 * 1024,
              ['/usr/bin/ceph-osd', '-n', 'osd.3'], cgroup=unit % (OTHER_FSID, 3))


def test_a_host_sampled_over_a_window(tmp_path: Any) -> None:
    root, net = str(tmp_path / 'proc'), str(tmp_path / 'net')
    os.makedirs(os.path.join(net, 'eth0'))
    with open(os.path.join(net, 'eth0', 'speed'), 'w') as f:
        f.write('1000\n')
    clock = Clock()
    sampler = HostSampler({'rgw.foo.vm.abc': 'vm'}, FSID, root=root, net_root=net,
                          clock_ticks=100, clock=clock)
    _host(root, busy=1000, idle=1000, rx=1000, tx=2000, lo=0)
    _osds(root, 0)
    sampler.start()
    clock.now = 1.0
    _host(root, busy=1100, idle=1100, rx=1000 + (4 << 20), tx=2000, lo=100)   # 50 %
    _osds(root, 100)
    sampler.sample()
    clock.now = 2.0
    _host(root, busy=1290, idle=1110, rx=1000 + (10 << 20), tx=2000 + (1 << 20),
          lo=5000)   # 95 %
    _osds(root, 200)
    found = sampler.stop()
    assert found['cpus'] == 2
    assert found['cpu_pct_mean'] == 72.5 and found['cpu_pct_peak'] == 95.0
    (eth0, veth) = found['nics']
    assert eth0 == {'name': 'eth0', 'rx_bytes': 10 << 20, 'tx_bytes': 1 << 20,
                    'rx_bytes_s': 5 * (1 << 20), 'tx_bytes_s': (1 << 20) / 2,
                    'speed_mbit': 1000}
    # an interface whose counters did not move, and whose speed is unknown
    assert veth['name'] == 'veth1a2b' and veth['rx_bytes'] == 0 and veth['speed_mbit'] is None
    assert found['loopback']['rx_bytes'] == 5000 and found['loopback']['name'] == 'lo'
    # osd.0 (pid 40, by its configuration file) and osd.3 (pid 42, by its unit):
    # (200 + 100) ticks at 100 a second over 2 s; the other cluster's OSDs not at all
    assert found['osd'] == {'daemons': 2, 'cpu_cores': 1.5, 'rss_mib': 400.0}


def test_without_this_cluster_s_daemons_no_osd_is_counted(tmp_path: Any) -> None:
    root = str(tmp_path / 'proc')
    _host(root, busy=1000, idle=1000, rx=0, tx=0, lo=0)
    _osds(root, 0)
    sampler = HostSampler({}, '', root=root, net_root=str(tmp_path), clock_ticks=100,
                          clock=Clock())
    assert sampler.osd_pids() == []


def _server(host: str, cpu: float, osd_cpu: float, osds: int) -> Dict[str, Any]:
    return {host: {
        'radosgw': {'daemons': 2, 'cpu_cores': cpu, 'rss_mib': 300.0, 'rss_mib_max': 320.0},
        'host': {'window_s': 10.0, 'cpus': 8, 'cpu_pct_mean': 40.0, 'cpu_pct_peak': 55.5,
                 'nics': [{'name': 'eth0', 'rx_bytes': 100, 'tx_bytes': 50,
                           'rx_bytes_s': 10.0, 'tx_bytes_s': 5.0, 'speed_mbit': None}],
                 'loopback': {'name': 'lo', 'rx_bytes': 7, 'tx_bytes': 7, 'rx_bytes_s': 0.7,
                              'tx_bytes_s': 0.7, 'speed_mbit': None},
                 'osd': {'daemons': osds, 'cpu_cores': osd_cpu, 'rss_mib': 100.0 * osds}}}}


def _finalized() -> Dict[str, Any]:
    server = dict(_server('b', 1.5, 0.75, 3), **_server('a', 0.5, 0.25, 1))
    return finalize({'op': 'put', 'by_op': {}, 'per_second': [], 'elapsed_s': 10.0,
                     'server': server})


def test_finalize_adds_means_per_daemon_and_each_host() -> None:
    result = _finalized()
    assert result['rgw']['daemons'] == 4 and result['rgw']['cpu_cores'] == 2.0
    assert result['rgw']['cpu_cores_mean'] == 0.5 and result['rgw']['rss_mib_mean'] == 150.0
    assert [h['host'] for h in result['host_figures']] == ['a', 'b']
    assert 'window_s' not in result['host_figures'][0]
    assert result['osd'] == {'daemons': 4, 'cpu_cores': 1.0, 'rss_mib': 400.0,
                             'cpu_cores_mean': 0.25, 'rss_mib_mean': 100.0}
    assert finalize(json.loads(json.dumps(result))) == result


def test_the_stored_form_keeps_its_json_and_repeats_combine_per_host() -> None:
    doc = {k: v for k, v in _finalized().items()
           if k in ('rgw', 'osd', 'host_figures', 'ops_per_s')}
    figures = load(Figures, doc)
    assert figures.host_figures is not None and figures.host_figures[1].osd is not None
    assert figures.host_figures[1].osd.per_daemon_mean('cpu_cores') == 0.25
    assert dump(figures) == doc
    other = json.loads(json.dumps(doc))
    other['host_figures'][0]['cpu_pct_peak'] = 95.5
    other['host_figures'][0]['nics'][0]['rx_bytes_s'] = 30.0
    del other['host_figures'][1]   # host b was not sampled in this repeat

    def mean(values: List[Any]) -> Any:
        found = [v for v in values if v is not None]
        return (sum(found) / len(found), max(found) - min(found)) if found else (None, None)
    merged, spread = Figures.combine([figures, load(Figures, other)], mean)
    assert merged.host_figures is not None and spread.host_figures is not None
    a, b = merged.host_figures
    assert (a.host, a.cpu_pct_peak, b.host, b.cpu_pct_peak) == ('a', 75.5, 'b', 55.5)
    assert a.nics is not None and a.nics[0].rx_bytes_s == 20.0
    assert a.loopback is not None and a.loopback.name == 'lo'
    assert spread.host_figures[0].cpu_pct_peak == 40.0


def test_combined_repeats_keep_their_nulls_and_unknown_keys() -> None:
    repeat = {'ops': 100, 'bytes': None, 'ops_per_s': 10.0,
              'latency_ms': {'mean': 1.0, 'p50': None, 'p99.5': 4.0},
              'rgw': {'daemons': 2, 'cpu_cores': 1.0, 'per_daemon': [
                  {'daemon': 'rgw.a', 'host': 'a', 'cpu_cores': 0.5, 'rss_mib': None}]},
              'host_figures': [{'host': 'a', 'cpus': 4, 'cpu_pct_peak': None, 'nics': [
                  {'name': 'eth0', 'rx_bytes': 10.0, 'speed_mbit': None}]}]}

    def mean(values: List[Any]) -> Any:
        found = [v for v in values if v is not None]
        return (sum(found) / len(found), 0.0) if found else (None, None)
    merged, spread = Figures.combine([load(Figures, repeat), load(Figures, repeat)], mean)
    written = dump(merged)
    # what was null in the repeats is null in the merged figures, as a record read with it
    assert written['bytes'] is None and written['latency_ms']['p50'] is None
    assert written['rgw']['per_daemon'] == [{'daemon': 'rgw.a', 'host': 'a', 'cpu_cores': 0.5,
                                             'rss_mib': None, 'rss_mib_max': None}]
    assert written['host_figures'][0]['cpu_pct_peak'] is None
    assert written['host_figures'][0]['nics'][0]['speed_mbit'] is None
    # a figure this version does not know is merged as it came
    assert written['latency_ms']['p99.5'] == 4.0 and dump(spread)['latency_ms']['p99.5'] == 0.0
    assert load(Figures, json.loads(json.dumps(written))) == merged


def _run(hosts: List[Dict[str, Any]]) -> Run:
    workload = {'name': 'put-4KiB', 'op': 'put', 'ops': 100, 'ops_per_s': 10.0,
                'rgw': {'daemons': 2, 'cpu_cores': 1.24, 'rss_mib': 626.0},
                'osd': {'daemons': 3, 'cpu_cores': 0.9, 'rss_mib': 900.0},
                'host_figures': hosts}
    return load(Run, {'run_id': 'r1', 'profile': 'p', 'state': 'complete', 'baseline': 'a',
                      'variants': [{'name': 'a', 'settings': {}, 'workloads': [workload]}]})


HOST: Dict[str, Any] = {
    'host': 'vm', 'cpus': 2, 'cpu_pct_mean': 61.25, 'cpu_pct_peak': 97.0,
    'nics': [{'name': 'eth0', 'rx_bytes_s': 3 * (1 << 20), 'tx_bytes_s': 1 << 20,
              'speed_mbit': 10000},
             {'name': 'veth0', 'rx_bytes_s': 0.0, 'tx_bytes_s': 0.0, 'speed_mbit': None}],
    'osd': {'daemons': 3, 'cpu_cores': 0.9}}


def test_the_tables_show_the_daemons_and_the_hosts() -> None:
    run = _run([HOST])
    text = result_to_text(run)
    lines = text.split('\n')
    start = lines.index('daemons:')
    assert lines[start + 1].split() == ['WORKLOAD', 'VARIANT', 'DAEMONS', 'COUNT', 'CPU',
                                        'cores', 'CPU/DAEMON', 'RSS', 'MiB', 'MiB/DAEMON']
    assert lines[start + 2].split() == ['put-4KiB', 'a', 'RGW', '2', '1.240', '0.620',
                                        '626.0', '313.0']
    assert lines[start + 3].split() == ['put-4KiB', 'a', 'OSD', '3', '0.900', '0.300',
                                        '900.0', '300.0']
    start = lines.index('hosts:')
    assert lines[start + 2].split() == ['put-4KiB', 'a', 'vm', '2', '61.2', '97.0', 'eth0',
                                        '3.00', '1.00', '10000', '0.90']
    assert lines[start + 3].split() == ['veth0', '0.00', '0.00', 'unknown']
    assert max(len(line) for line in lines) <= 100
    assert 'hosts:' in seeds_to_text(run)
    assert seeds_to_json(run)['hosts'][0] == {
        'workload': 'put-4KiB', 'variant': 'a', 'host': 'vm', 'cpus': '2',
        'cpu_pct_mean': '61.2', 'cpu_pct_peak': '97.0', 'nic': 'eth0', 'rx_mib_s': '3.00',
        'tx_mib_s': '1.00', 'link_mbit': '10000', 'osd_cpu_cores': '0.90'}
    section = hosts_section(run)
    assert '<table id="hosts-figures">' in section and '<td>unknown</td>' not in section
    assert '<td class="num">unknown</td>' in section and '<td>eth0</td>' in section
    assert '<td class="num">313.0</td>' in section


def test_a_saturated_cpu_or_link_is_a_finding() -> None:
    entry = _run([HOST]).variants[0].workloads[0]
    (found,) = host_findings(entry)
    assert found.id == 'host-saturated' and found.level is Level.skews and found.marks
    assert 'the run measured the host, not the setting' in found.summary
    assert found.evidence == ('host vm: CPU peak 97.0% of its 2 cores (mean 61.2%)',)
    # a link at 96 % of 1 Gb/s in one repeat (the mean over repeats would hide it)
    busy = dict(HOST, cpu_pct_peak=89.9,
                nics=[{'name': 'eth0', 'tx_bytes_s': 120e6, 'rx_bytes_s': 1e6,
                       'speed_mbit': 1000}])
    quiet = dict(HOST, cpu_pct_peak=50.0, nics=[])
    repeated = load(WorkloadResult, {'name': 'w', 'host_figures': [quiet],
                                     'repeats': [{'host_figures': [quiet]},
                                                 {'host_figures': [busy]}]})
    (found,) = host_findings(repeated)
    assert found.evidence == (
        'host vm: eth0 rx 1.0 MiB/s tx 114.4 MiB/s of 1000 Mb/s (96%)',)
    # a link whose speed nobody knows is never judged; a CPU below 90 % is no finding
    unknown = dict(busy, nics=[dict(busy['nics'][0], speed_mbit=None)])
    assert host_findings(load(WorkloadResult, {'host_figures': [unknown]})) == []


@pytest.mark.parametrize('name', ['once', 'repeats'])
def test_runs_stored_before_load_and_render_with_means_worked_out(name: str) -> None:
    here = os.path.dirname(__file__)
    with open(os.path.join(here, 'stored_runs.json')) as f:
        stored = json.load(f)
    if name not in stored:
        pytest.fail('stored_runs.json has no %r run' % name)
    run = load(Run, stored[name])
    assert dump(run) == stored[name]
    entry = run.variants[0].workloads[0]
    assert entry.figures.host_figures is None and entry.figures.osd is None
    rgw = entry.figures.rgw
    assert rgw is not None and rgw.cpu_cores_mean is None and rgw.daemons
    assert rgw.cpu_cores is not None
    assert rgw.per_daemon_mean('cpu_cores') == pytest.approx(rgw.cpu_cores / rgw.daemons)
    text = result_to_text(run)
    assert 'daemons:' in text and 'hosts:' not in text
    assert hosts_section(run).count('<table') == 1
    assert hosts_text(run)[1] == 'daemons:'
    assert host_findings(entry) == []


class Recorder:
    """A sampler that says what it was asked, and gives `figures` when stopped."""

    def __init__(self, calls: List[str], name: str, figures: Dict[str, Any]) -> None:
        self.calls, self.name, self.figures = calls, name, figures

    def start(self) -> None:
        self.calls.append(self.name + ' start')

    def sample(self) -> None:
        self.calls.append(self.name + ' sample')

    def stop(self) -> Dict[str, Any]:
        self.calls.append(self.name + ' stop')
        return dict(self.figures)


def test_the_host_is_sampled_with_the_daemons_and_kept_beside_them() -> None:
    calls: List[str] = []
    daemons = Recorder(calls, 'daemons', {'radosgw': {'daemons': 1}})
    host = Recorder(calls, 'host', {'cpus': 2})
    # measuring from now on, for an hour: every tick samples
    schedule = Schedule(time.time() - 1, 0.5, 3600)
    reporter = Reporter(Job(), schedule, None, cast(Any, daemons),
                        host_sampler=cast(Any, host))
    reporter.tick((0, 0, 0, 0))
    reporter.tick((0, 0, 0, 0))
    reporter.finish()
    assert calls == ['daemons start', 'host start', 'daemons sample', 'host sample',
                     'daemons stop', 'host stop']
    assert reporter.server == {'radosgw': {'daemons': 1}, 'host': {'cpus': 2}}
