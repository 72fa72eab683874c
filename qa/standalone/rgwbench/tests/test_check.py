"""`ceph rgwbench check` on a real cluster: clean when fresh, a raised debug level found;
the same checks before a load (refusing one that would fill the cluster) and in its record."""
import errno
import json
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import AbstractSet, Any, Dict, Iterator, List, Set, Tuple

import pytest

from conftest import RELEASES, Cluster, one_line, own_cluster, restart_rgw, set_credentials
from helpers import (agent_folders, buckets, cluster_argv, osd_utilization, snapshot, wait_load,
                     wait_run)


def check(cluster: Cluster, *args: str) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = cluster.ceph_json('rgwbench', 'check', *args)
    return found


def test_a_fresh_cluster_has_nothing_that_skews(cluster: Cluster) -> None:
    found = check(cluster)
    assert [f for f in found if f['level'] != 'info'] == [], json.dumps(found, indent=1)
    # nor will it: a pool without an application raises a health warning once written
    pools = cluster.ceph_json('osd', 'pool', 'ls', 'detail')
    assert [p['pool_name'] for p in pools if not p.get('application_metadata')] == []


def test_debug_rgw_raised_is_found_with_its_fix(cluster: Cluster) -> None:
    cluster.ceph('config', 'set', 'client.rgw', 'debug_rgw', '20')
    try:
        raised = {f['id']: f for f in check(cluster)}
        finding = raised['debug-rgw-raised']
        assert finding['level'] == 'skews'
        assert finding['fix'] == 'ceph config rm client.rgw debug_rgw'
        assert any('section client.rgw: debug_rgw = 20' in e for e in finding['evidence'])
        text = cluster.ceph('rgwbench', 'check').stdout
        assert 'fix:  ceph config rm client.rgw debug_rgw' in text
    finally:
        cluster.ceph('config', 'rm', 'client.rgw', 'debug_rgw')
    assert 'debug-rgw-raised' not in {f['id'] for f in check(cluster)}


def test_check_of_a_builtin_profile(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'check', '--profile', 'quick', '-f', 'json')
    found = {f['id']: f for f in json.loads(proc.stdout)}
    estimate = found['capacity-estimate']
    assert estimate['level'] == 'info'
    assert any('room before the fullest OSD' in e for e in estimate['evidence'])


def test_check_of_a_profile_weighs_its_workloads_against_rgw_and_the_caches(
        cluster: Cluster) -> None:
    # quick: 16 requests per RGW daemon, and GETs of the engine's 1000 objects of 4 KiB
    cluster.ceph('config', 'set', 'client.rgw', 'rgw_max_concurrent_requests', '8')
    try:
        found = check(cluster, '--profile', 'quick')
    finally:
        cluster.ceph('config', 'rm', 'client.rgw', 'rgw_max_concurrent_requests')
    throttled = {f['workload']: f for f in found if f['id'] == 'rgw-queue-throttled'}
    assert set(throttled) == {'put-4KiB', 'get-4KiB'}, json.dumps(found, indent=1)
    get = throttled['get-4KiB']
    assert get['level'] == 'skews'
    assert re.match(r'workload get-4KiB: \d+ requests in flight over \d+ RGW daemons? = '
                    r'16 per daemon$', get['evidence'][0]), get['evidence']
    assert all(re.match(r'\S+ \(beast\): rgw_max_concurrent_requests = 8 \(section '
                        r'client.rgw\)$', e) for e in get['evidence'][1:]), get['evidence']
    assert get['fix'].startswith('ceph config set client.rgw rgw_max_concurrent_requests 16')
    (cached,) = [f for f in found if f['id'] == 'working-set-in-cache']
    assert cached['workload'] == 'get-4KiB' and cached['level'] == 'skews'
    # the running release's own defaults, read as numbers
    total = re.match(r'the caches hold up to ([0-9.]+) (MiB|GiB) in all$', cached['evidence'][1])
    assert total is not None and float(total.group(1)) > 0, cached['evidence']
    assert re.match(r'\d+ OSDs?: (osd_memory_target|bluestore_cache_size\w*) [0-9.]+ '
                    r'(MiB|GiB) each', cached['evidence'][2]), cached['evidence']
    assert 'rgw-queue-throttled' not in {f['id'] for f in check(cluster, '--profile', 'quick')}


def test_check_of_an_unknown_profile_is_enoent(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'check', '--profile', 'nope', check=False)
    assert proc.returncode == errno.ENOENT, proc
    assert "no profile 'nope'" in one_line(proc.stderr)


def test_no_rgw_daemon_is_found_and_a_run_refused_for_it_changes_nothing(
        cluster: Cluster) -> None:
    (service,) = [s['service_name'] for s in cluster.ceph_json('orch', 'ls')
                  if s['service_type'] == 'rgw']
    cluster.ceph('orch', 'stop', service)
    try:
        deadline = time.monotonic() + 180
        while cluster.ceph_json('rgwbench', 'status')['rgw_daemons']:
            assert time.monotonic() < deadline, 'the stopped RGW stayed in the service map'
            time.sleep(2)
        (found,) = [f for f in check(cluster) if f['level'] != 'info']
        assert (found['id'], found['level']) == ('no-rgw-daemon', 'refuse')
        assert found['fix'].startswith('ceph orch apply rgw <name>')
        assert 'no-rgw-daemon' in {f['id'] for f in check(cluster, '--profile', 'quick')}
        before = snapshot(cluster)
        for force in ([], ['--force']):
            proc = cluster.ceph('rgwbench', 'run', '--profile', 'quick',
                                '--yes-i-really-mean-it', *force, check=False)
            assert proc.returncode == errno.EBUSY, proc
            assert one_line(proc.stderr).startswith(
                'Error EBUSY: refusing the run: no-rgw-daemon: no RGW daemon is in the '
                'service map'), proc.stderr
        assert snapshot(cluster) == before
        assert cluster.ceph_json('rgwbench', 'status')['run_in_progress'] is False
    finally:
        cluster.ceph('orch', 'start', service)
        cluster.wait_rgw_registered()
    assert 'no-rgw-daemon' not in {f['id'] for f in check(cluster)}


@pytest.fixture
def stored_credentials(cluster: Cluster) -> Iterator[None]:
    s3 = cluster.s3()
    proc = set_credentials(cluster, {'access_key': s3['access_key'],
                                     'secret_key': s3['secret_key']})
    assert proc.returncode == 0, proc.stderr
    yield
    cluster.ceph('rgwbench', 'credentials', 'rm')


def test_a_load_keeps_the_skew_it_ran_with(cluster: Cluster, stored_credentials: None) -> None:
    cluster.ceph('config', 'set', 'client.rgw', 'debug_rgw', '20')
    try:
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--duration', '5', '--warmup', '1'
                               ).stdout.strip()
        record = wait_load(cluster, load_id)
    finally:
        cluster.ceph('config', 'rm', 'client.rgw', 'debug_rgw')
    assert record['state'] == 'complete', record.get('error')
    found = {f['id']: f for f in record['findings']}
    finding = found['debug-rgw-raised']
    assert finding['level'] == 'skews'
    assert finding['fix'] == 'ceph config rm client.rgw debug_rgw'
    assert any('section client.rgw: debug_rgw = 20' in e for e in finding['evidence'])
    assert found['capacity-estimate']['level'] == 'info'
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert '[skews] debug-rgw-raised' in text, text


# BlueStore caches of 128 MiB each (autotune off): a GET of 64 KiB objects that names no
# --objects reads twice that, 4096 objects, more than the engine's default of 1000.
SMALL_CACHES = {'bluestore_cache_autotune': 'false', 'bluestore_cache_size': str(128 << 20)}
SIZED_OBJECTS = 4096


def get_load(cluster: Cluster, prefill_time: str) -> Dict[str, Any]:
    cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/prefill_time', prefill_time)
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'get', '--size', '64KiB',
                           '--concurrency', '4', '--duration', '2', '--warmup', '0'
                           ).stdout.strip()
    return wait_load(cluster, load_id, timeout=300)


def test_a_get_load_reads_a_working_set_sized_from_the_caches_within_its_prefill_time(
        cluster: Cluster, stored_credentials: None) -> None:
    osds = len(cluster.ceph_json('osd', 'ls'))
    for option, value in SMALL_CACHES.items():
        cluster.ceph('config', 'set', 'osd', option, value)
    try:
        whole = get_load(cluster, '600')
        cut = get_load(cluster, '1')
    finally:
        # The default first: a mgr that keeps a removed option's last value (1 s here)
        # would cut every later sized prefill in this cluster.
        cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/prefill_time', '300')
        cluster.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/prefill_time')
        for option in SMALL_CACHES:
            cluster.ceph('config', 'rm', 'osd', option)
    for record in (whole, cut):
        assert record['state'] == 'complete', record.get('error')
    wanted = SIZED_OBJECTS * osds
    assert whole['result']['objects'] == wanted, whole['result'].get('objects')
    assert whole['result']['working_set_bytes'] == wanted * 65536
    assert not {'working-set-in-cache', 'prefill-time-ran-out'} & {
        f['id'] for f in whole['findings']}, whole['findings']
    # A second's prefill writes fewer: the GETs read those, and the record says so.
    written = cut['result']['objects']
    assert 4 <= written < wanted, written
    (told,) = [f for f in cut['findings'] if f['id'] == 'prefill-time-ran-out']
    assert told['evidence'][0].startswith('%d of %d objects written in 1 s' % (written, wanted))
    assert '[info] prefill-time-ran-out' in cluster.ceph(
        'rgwbench', 'load', 'show', cut['load_id']).stdout


def test_a_load_that_would_fill_the_cluster_is_refused_even_forced(
        cluster: Cluster, stored_credentials: None) -> None:
    before = buckets(cluster)
    loads = cluster.ceph_json('rgwbench', 'load', 'ls')
    for force in ([], ['--force']):
        # 1000 objects of 64 MiB to read: a prefill of 62.5 GiB (an hour of PUTs would be
        # the capacity guard's to stop, not refused)
        proc = cluster.ceph('rgwbench', 'load', '--op', 'get', '--size', '64MiB',
                            '--objects', '1000', '--duration', '10', *force, check=False)
        assert proc.returncode == errno.ENOSPC, proc
        assert 'refusing the load: capacity-exceeded: the prefills of the load need' in \
            one_line(proc.stderr)
    assert cluster.ceph_json('rgwbench', 'status')['active_load'] is None
    assert cluster.ceph_json('rgwbench', 'load', 'ls') == loads
    assert buckets(cluster) == before


# A run shaped as the built-in `sizes` is: PUTs of large objects for a long time, at a
# pace the test knows (20 MiB/s, a quarter of a point of an 8 GiB OSD a second): how fast
# an OSD fills cannot be read from the mgr's figures, which can stay still for seconds
# and then jump by 10 points (Tentacle).
SIZES_LIKE: Dict[str, Any] = {
    'name': 'sizes-like', 'baseline': 'as-is', 'variants': [{'name': 'as-is', 'settings': {}}],
    'workloads': [{'name': 'put-1MiB', 'op': 'put', 'size': '1MiB', 'duration': 300,
                   'warmup': 1, 'concurrency': 4, 'rate': 20}]}
# And one whose GET needs a prefill of 62.5 GiB: past what any local cluster holds.
PAST_CAPACITY: Dict[str, Any] = dict(SIZES_LIKE, name='past-capacity', workloads=[
    {'name': 'get-64MiB', 'op': 'get', 'size': '64MiB', 'objects': 1000, 'duration': 10}])
# The capacity guard's margin below nearfull (capacity.DEFAULT_MARGIN), and the room the
# test leaves above it: 6 points, 24 s of these writes, reached well within the PUTs'
# time even on a loaded machine; the mgr's figures, seconds old, are 2-3 points behind.
MARGIN = 0.05
ROOM = 0.06


def test_a_run_past_capacity_is_refused_and_a_sizes_like_run_stops_at_the_guard(
        cluster: Cluster, stored_credentials: None) -> None:
    ratios = cluster.ceph_json('osd', 'dump')
    for profile in (SIZES_LIKE, PAST_CAPACITY):
        proc = cluster.ceph_input(json.dumps(profile), 'rgwbench', 'profile', 'set')
        assert proc.returncode == 0, proc.stderr
    try:
        before, buckets_before = snapshot(cluster), buckets(cluster)
        results_before = cluster.ceph_json('rgwbench', 'results', 'ls')
        for force in ([], ['--force']):
            proc = cluster.ceph('rgwbench', 'run', '--profile', 'past-capacity', *force,
                                '--yes-i-really-mean-it', check=False)
            assert proc.returncode == errno.ENOSPC, proc
            assert one_line(proc.stderr).startswith(
                'Error ENOSPC: refusing the run: capacity-exceeded: the prefills of'), proc.stderr
        assert snapshot(cluster) == before and buckets(cluster) == buckets_before
        assert cluster.ceph_json('rgwbench', 'results', 'ls') == results_before
        assert cluster.ceph_json('rgwbench', 'status')['active_run'] is None

        # The sizes-like run may start (an hour of PUTs is the guard's to stop). Once it
        # writes, the OSD's nearfull ratio comes down, as if others filled the cluster
        # meanwhile, to the guard's margin and ROOM above what the OSD uses: the guard
        # stops the PUTs before the OSD gets there. (Lowered to the margin only, 1 MiB
        # PUTs as fast as they go, 65 MiB/s, passed it in the seconds the mgr's figures
        # are old.)
        run_id = cluster.ceph('rgwbench', 'run', '--profile', 'sizes-like',
                              '--yes-i-really-mean-it').stdout.strip()
        began = time.monotonic()
        while not [b for b in buckets(cluster) if b.startswith('rgwbench-%s' % run_id)]:
            assert time.monotonic() - began < 240, 'the run never created its bucket'
            time.sleep(1)
        used = osd_utilization(cluster)
        nearfull = round(used + MARGIN + ROOM, 4)
        cluster.ceph('osd', 'set-nearfull-ratio', str(nearfull))
        lowered = time.monotonic()
        seen: List[Tuple[float, float]] = []   # (seconds since lowered, utilization)

        def look() -> None:
            seen.append((round(time.monotonic() - lowered, 1), osd_utilization(cluster)))
        record = wait_run(cluster, run_id, timeout=600, meanwhile=look, every_s=1)
        look()
        assert record['state'] == 'complete', record.get('error')
        put = record['variants'][0]['workloads'][0]
        assert (put.get('stopped') or '').startswith('capacity: osd.'), put.get('stopped')
        assert put['ops'] > 0 and put['error'] is None, put
        assert put['elapsed_s'] < 295, 'the PUTs were not stopped early'
        highest = max(u for _, u in seen)
        assert highest < nearfull, (
            'an OSD reached %.3f, nearfull is %.3f (lowered at %.3f): %s; %s' % (
                highest, nearfull, used, seen, {k: put.get(k) for k in (
                    'stopped', 'ops', 'bytes', 'elapsed_s', 'throughput_mib_s')}))
        shown = cluster.ceph('rgwbench', 'results', 'show', run_id).stdout
        assert '%s: stopped early (capacity: osd.' % put['name'] in shown, shown
        # what the PUTs wrote is removed, as after any workload
        assert buckets(cluster) == buckets_before
    finally:
        cluster.ceph('osd', 'set-nearfull-ratio', str(ratios['nearfull_ratio']))
        for profile in (SIZES_LIKE, PAST_CAPACITY):
            cluster.ceph('rgwbench', 'profile', 'rm', str(profile['name']))


def test_settings_that_restart_osds_are_refused_where_one_osd_holds_every_pg(
        cluster: Cluster, stored_credentials: None) -> None:
    # One OSD (the README's demo): `osd ok-to-stop` never allows a restart, so
    # msgr2-secure (and the profiles with it) would wait for it in vain.
    before, runs = snapshot(cluster), cluster.ceph_json('rgwbench', 'results', 'ls')
    for args in (['settings', 'apply', 'msgr2-secure=on', '--yes-i-really-mean-it',
                  '--force'],
                 ['run', '--profile', 'msgr2', '--yes-i-really-mean-it', '--force']):
        proc = cluster.ceph('rgwbench', *args, check=False)
        assert proc.returncode == errno.EBUSY, (args, proc.stderr)
        line = one_line(proc.stderr)
        assert 'restart every OSD' in line and 'osd.0' in line and 'PGs' in line, line
    plan = cluster.ceph_json('rgwbench', 'plan', '--profile', 'msgr2')
    assert any('restart every OSD' in p for p in plan['problems']), plan['problems']
    assert snapshot(cluster) == before
    assert cluster.ceph_json('rgwbench', 'results', 'ls') == runs
    assert cluster.ceph_json('rgwbench', 'status')['active_run'] is None


def finding_ids(cluster: Cluster) -> List[str]:
    return [f['id'] for f in check(cluster)]


def wait_finding(cluster: Cluster, finding: str, present: bool, timeout: float = 240) -> None:
    """Until `check` shows the finding (or no longer does): a restarted RGW reports its
    frontends to the service map once it is back."""
    deadline = time.monotonic() + timeout
    while (finding in finding_ids(cluster)) != present:
        assert time.monotonic() < deadline, '%s still %s' % (
            finding, 'missing' if present else 'found')
        time.sleep(2)


def test_beast_without_tcp_nodelay_is_found_with_its_fix_and_kept_in_a_load(
        cluster: Cluster, stored_credentials: None) -> None:
    (daemon,) = [d['daemon_id'] for d in cluster.ceph_json('orch', 'ps', '--daemon_type', 'rgw')]
    entity = 'client.rgw.%s' % daemon
    frontend = cluster.ceph('config', 'get', entity, 'rgw_frontends').stdout.strip()
    assert 'tcp_nodelay=1' in frontend.split(), frontend
    plain = ' '.join(w for w in frontend.split() if w != 'tcp_nodelay=1')
    # As an operator would leave it: the frontend without the option, the daemon restarted.
    cluster.ceph('config', 'set', entity, 'rgw_frontends', plain)
    try:
        cluster.ceph('orch', 'daemon', 'restart', 'rgw.%s' % daemon)
        wait_finding(cluster, 'beast-without-tcp-nodelay', True)
        finding = {f['id']: f for f in check(cluster)}['beast-without-tcp-nodelay']
        cluster.wait_rgw_registered()
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--duration', '3', '--warmup', '1'
                               ).stdout.strip()
        record = wait_load(cluster, load_id)
    finally:
        cluster.ceph('config', 'set', entity, 'rgw_frontends', frontend)
        cluster.ceph('orch', 'daemon', 'restart', 'rgw.%s' % daemon)
    assert finding['level'] == 'skews'
    assert any(entity in e and repr(plain) in e for e in finding['evidence']), finding
    assert "ceph config set %s rgw_frontends '%s tcp_nodelay=1'" % (entity, plain) in \
        finding['fix'], finding
    assert record['state'] == 'complete', record.get('error')
    assert 'beast-without-tcp-nodelay' in {f['id'] for f in record['findings']}
    wait_finding(cluster, 'beast-without-tcp-nodelay', False)
    cluster.wait_rgw_registered()


def test_a_nearly_full_osd_is_found_and_no_load_may_write(
        cluster: Cluster, stored_credentials: None) -> None:
    ratio = float(cluster.ceph_json('osd', 'dump')['nearfull_ratio'])
    before = buckets(cluster)
    # Every OSD holds more than a ratio this low: each is as full, to the checks, as an
    # OSD above 85 % is with the default ratio.
    cluster.ceph('osd', 'set-nearfull-ratio', '0.0001')
    try:
        found = {f['id']: f for f in check(cluster)}
        refused = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '1', '--duration', '3', check=False)
    finally:
        cluster.ceph('osd', 'set-nearfull-ratio', repr(ratio))
    finding = found['osd-nearfull']
    assert finding['level'] == 'skews' and finding['fix'].startswith('ceph osd df'), finding
    assert any(re.match(r'osd\.0: [0-9.]+ % used, nearfull_ratio 0\.00', e)
               for e in finding['evidence']), finding
    assert refused.returncode == errno.ENOSPC, refused
    assert 'refusing the load: capacity-exceeded' in one_line(refused.stderr)
    assert buckets(cluster) == before
    assert cluster.ceph_json('rgwbench', 'status')['active_load'] is None
    deadline = time.monotonic() + 120
    while 'OSD_NEARFULL' in cluster.ceph_json('health')['checks']:
        assert time.monotonic() < deadline, 'OSD_NEARFULL stayed'
        time.sleep(2)


class CpuQuota:
    """A cgroup holding its processes to `share` of one core (cgroup v1 or v2)."""

    def __init__(self, name: str, share: float) -> None:
        v1 = '/sys/fs/cgroup/cpu'
        self.path = os.path.join(v1 if os.path.isdir(v1) else '/sys/fs/cgroup', name)
        os.mkdir(self.path)
        period = 100000
        if os.path.isdir(v1):
            self._write('cpu.cfs_period_us', str(period))
            self._write('cpu.cfs_quota_us', str(int(period * share)))
        else:
            self._write('cpu.max', '%d %d' % (int(period * share), period))

    def _write(self, name: str, value: str) -> None:
        with open(os.path.join(self.path, name), 'w') as f:
            f.write(value)

    def add(self, pid: int) -> None:
        try:
            self._write('cgroup.procs', str(pid))
        except OSError:
            pass  # it ended meanwhile

    def remove(self) -> None:
        parent = os.path.dirname(self.path)
        with open(os.path.join(self.path, 'cgroup.procs')) as f:
            for pid in f.read().split():
                try:
                    with open(os.path.join(parent, 'cgroup.procs'), 'w') as out:
                        out.write(pid)
                except OSError:
                    pass
        os.rmdir(self.path)


def pids_working_in(folders: List[str], parents: AbstractSet[int] = frozenset()) -> List[int]:
    """Processes working in one of these folders or below it (by the folders' inodes: a
    mgr in a release's chroot sees them under another path than this test does), and
    the children of `parents` (engine processes forked before their agent was found)."""
    wanted = set()
    for folder in folders:
        try:
            st = os.stat(folder)
        except OSError:
            continue
        wanted.add((st.st_dev, st.st_ino))
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            if ppid in parents:
                found.append(int(entry))
                continue
            here = '/proc/%s/cwd' % entry
            for _ in range(3):  # the folder itself, or a folder below it
                st = os.stat(here)
                if (st.st_dev, st.st_ino) in wanted:
                    found.append(int(entry))
                    break
                here += '/..'
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_an_agent_held_to_a_small_cpu_quota_is_found_client_bound(
        cluster: Cluster, stored_credentials: None) -> None:
    # The agent's processes, moved into the group as soon as they show (the engine
    # processes it forks later are born in it): they wait for the CPU they are denied.
    before = set(agent_folders(cluster))
    # 2 % of a core, and a busy loop in the same group once the agent is in it: the
    # group's quota is spent all the time, so each answer waits for the next period
    # whatever RGW's pace. Without it, CI's busy machine slowed RGW below what an
    # agent at 1 % could send, and rightly no finding (CI18: waiting 3 s of 8).
    quota = CpuQuota('rgwbench-test-starved-%d' % os.getpid(), 0.02)
    moved: Set[int] = set()
    done = threading.Event()
    tmps = list(json.loads(cluster.tool('info').stdout)['mgr_tmp'].values())
    spinners: List[subprocess.Popen] = []

    def move_agents() -> None:
        # In a thread of its own: a `ceph` command on a busy machine takes seconds,
        # and the agent would run unheld all that time (CI10 saw no finding).
        while not done.is_set():
            folders = [os.path.join(tmp, d) for tmp in tmps for d in os.listdir(tmp)
                       if d.startswith(('rgwbench-agent-', 'rgwbench-engine-'))]
            for pid in pids_working_in(sorted(set(folders) - before), set(moved)):
                if pid not in moved:
                    quota.add(pid)
                    moved.add(pid)
            if moved and not spinners:
                spinners.append(subprocess.Popen(['sh', '-c', 'while :; do :; done']))
                quota.add(spinners[0].pid)
            done.wait(0.05)

    mover = threading.Thread(target=move_agents, daemon=True)
    mover.start()
    try:
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '32', '--processes', '1', '--duration', '8',
                               '--warmup', '1', '--placement', 'mgr').stdout.strip()
        deadline = time.monotonic() + 300
        while cluster.ceph_json('rgwbench', 'load', 'show', load_id)['state'] == 'running':
            time.sleep(1)
            assert time.monotonic() < deadline, 'load %s still running' % load_id
        record = wait_load(cluster, load_id)
    finally:
        done.set()
        mover.join(10)
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        quota.remove()
    assert record['state'] == 'complete', record.get('error')
    assert moved, 'no process of the agent was seen'
    found = [f for f in record['findings'] if f['id'] == 'client-bound-agent']
    assert len(found) == 1, ({k: record['result'].get(k) for k in (
        'elapsed_s', 'ops', 'client_cpu_s', 'client_wait_s', 'processes')},
        record['findings'])
    finding = found[0]
    assert finding['level'] == 'skews'
    assert any('waiting for a core' in e for e in finding['evidence']), finding
    assert 'CPU quota' in finding['fix']
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert '[skews] client-bound-agent' in text, text


# Scrubs that sleep: between chunks of one object (osd_scrub_sleep, which the
# mclock scheduler of later releases overrides to 0) and, where that does not
# hold, before each object a deep scrub reads (a developer option every
# release keeps).
# A scrub asked for waits while the host's load average is above the threshold:
# on a machine busy with other tests, it would start only after the load.
SLOW_SCRUB = {'osd_scrub_sleep': '5', 'osd_debug_deep_scrub_sleep': '3',
              'osd_scrub_chunk_min': '1', 'osd_scrub_chunk_max': '1',
              'osd_scrub_load_threshold': '1000'}


SCRUBBED_LOAD_S = 30
# 3 s of sleep each (osd_debug_deep_scrub_sleep; 8 s where osd_scrub_sleep holds too):
# a scrub of more than two minutes, longer than the load's start and window on a busy
# machine (CI, Tentacle: 16 objects had been scrubbed before the window began). A
# longer sleep would hold the OSD's other PGs of the same shard as long.
SCRUBBED_OBJECTS = 48


def scrubbing(cluster: Cluster) -> int:
    states = cluster.ceph_json('pg', 'dump', 'pgs_brief')
    pgs = states['pg_stats'] if isinstance(states, dict) else states
    return sum(1 for pg in pgs if 'scrubbing' in pg['state'])


def scrub_sleeps(cluster: Cluster) -> bool:
    """Whether osd.0 runs with one of the scrub sleeps set (the config reaches it in a moment)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        for option in ('osd_scrub_sleep', 'osd_debug_deep_scrub_sleep'):
            shown = cluster.ceph('config', 'show', 'osd.0', option).stdout.strip()
            if float(shown) >= float(SLOW_SCRUB[option]):
                return True
        time.sleep(1)
    return False


def test_a_scrub_during_a_load_is_kept_with_its_seconds(
        cluster: Cluster, stored_credentials: None) -> None:
    # A deep scrub that sleeps between chunks of one object and before each object it
    # reads: begun before the load (an OSD may take half a minute to start a scrub it
    # was asked for on a busy machine), it goes on through the load's window. It scrubs
    # a pool of its own on the OSDs the load uses: a scrub holds the writes to what it
    # reads, and on one of RGW's own pools it could hold the load's first requests
    # longer than they may take.
    pool = 'rgwbench-scrubbed'
    cluster.ceph('osd', 'pool', 'create', pool, '1')
    cluster.ceph('osd', 'pool', 'application', 'enable', pool, 'rgwbench-test')
    for option, value in SLOW_SCRUB.items():
        cluster.ceph('config', 'set', 'osd', option, value)
    try:
        for i in range(SCRUBBED_OBJECTS):
            subprocess.run(cluster_argv(cluster, 'rados', '-p', pool, 'put', 'obj-%d' % i, '-'),
                           input=os.urandom(4096), check=True, timeout=60)
        assert scrub_sleeps(cluster), 'osd.0 runs with neither scrub sleep set'
        cluster.ceph('osd', 'pool', 'deep-scrub', pool)
        deadline = time.monotonic() + 240
        while not scrubbing(cluster):
            assert time.monotonic() < deadline, 'the deep scrub did not begin'
            time.sleep(1)
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--duration', str(SCRUBBED_LOAD_S),
                               '--warmup', '1').stdout.strip()
        record = wait_load(cluster, load_id)
    finally:
        for option in SLOW_SCRUB:
            cluster.ceph('config', 'rm', 'osd', option)
        cluster.ceph('osd', 'pool', 'rm', pool, pool, '--yes-i-really-really-mean-it')
        deadline = time.monotonic() + 120
        while scrubbing(cluster) and time.monotonic() < deadline:
            time.sleep(1)
    assert record['state'] == 'complete', record.get('error')
    during = [f for f in record['findings'] if f['id'] == 'pgs-scrubbing' and f.get('seconds')]
    assert len(during) == 1, json.dumps(record['findings'], indent=1)
    assert set(during[0]['seconds']) <= set(range(SCRUBBED_LOAD_S))
    assert len(during[0]['seconds']) >= 3, during
    assert any('scrubbing+deep' in e for e in during[0]['evidence'])
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert 'when: seconds ' in text and 'of the measured window' in text, text


# The agent's test knob (loadgen/clock.py): its clock this many ms ahead of the mgr's.
CLOCK_OFFSET_ENV = 'RGWBENCH_AGENT_CLOCK_OFFSET_MS'
CLOCK_OFFSET_MS = 200


@pytest.fixture(scope='module', params=RELEASES)
def skewed_agents(request: Any) -> Iterator[Cluster]:
    """A cluster of its own whose agents' clocks are 200 ms ahead of the mgr's.

    The hosts of a local cluster share the machine's one kernel clock: the
    agents are given a shifted clock through their environment instead, which
    they inherit from the mgr, which inherits the cluster tool's.
    """
    with own_cluster(request.param, 'skewed-%s' % request.param, '--objectstore', 'memstore',
                     env={CLOCK_OFFSET_ENV: str(CLOCK_OFFSET_MS)}) as c:
        s3 = c.s3()
        proc = set_credentials(c, {'access_key': s3['access_key'],
                                   'secret_key': s3['secret_key']})
        assert proc.returncode == 0, proc.stderr
        yield c


def test_an_agent_whose_clock_is_off_is_found_in_the_load_record(
        skewed_agents: Cluster) -> None:
    cluster = skewed_agents
    cluster.wait_rgw_registered()  # a cluster of its own, just started
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                           '--concurrency', '2', '--duration', '3', '--warmup', '1'
                           ).stdout.strip()
    record = wait_load(cluster, load_id)
    assert record['state'] == 'complete', record.get('error')
    (finding,) = [f for f in record['findings'] if f['id'] == 'clock-skew']
    assert finding['level'] == 'skews', finding
    # measured over the agent channel: the offset within the bound its round trip gives
    seen = re.match(r"agent (\S+): \+([0-9.]+) ms from the mgr's clock, \+-([0-9.]+) ms",
                    finding['evidence'][0])
    assert seen is not None, finding['evidence']
    assert abs(float(seen.group(2)) - CLOCK_OFFSET_MS) <= float(seen.group(3)) + 0.1, seen
    (clock,) = record['clocks'].values()
    assert abs(clock['offset_ms'] - CLOCK_OFFSET_MS) <= clock['error_ms'] + 0.01
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert '[skews] clock-skew: the clocks of the agents' in text, text


# RGW's resharding line set low: new buckets get one index shard, resharded past 5
# objects per shard.
RESHARD_EARLY = {'rgw_override_bucket_index_max_shards': '1', 'rgw_max_objs_per_shard': '5'}


def test_a_load_says_its_bucket_may_cross_the_resharding_line(
        cluster: Cluster, stored_credentials: None) -> None:
    for option, value in RESHARD_EARLY.items():
        cluster.ceph('config', 'set', 'client.rgw', option, value)
    try:
        # 20 PUTs a second for 21 s: about 420 objects in the load's one bucket
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--rate', '20', '--duration', '20',
                               '--warmup', '1').stdout.strip()
        record = wait_load(cluster, load_id)
    finally:
        for option in RESHARD_EARLY:
            cluster.ceph('config', 'rm', 'client.rgw', option)
    assert record['state'] == 'complete', record.get('error')
    found = {f['id']: f for f in record['findings']}
    likely = found['bucket-reshard-likely']
    assert likely['evidence'][0].startswith('the load: about 420 objects per bucket'), likely
    assert 'rgw_max_objs_per_shard 5 x 1 index shards' in likely['evidence'][0], likely
    assert likely['fix'] == '--buckets 84'


# RGW's dynamic resharding made quick: a new bucket gets one index shard; RGW's bucket
# stats sync thread (every rgw_user_quota_bucket_sync_interval, 180 s by default) queues
# it past 20 objects per shard, its reshard thread (every rgw_reshard_thread_interval, 600 s
# by default, 10 at least) reshards it. Neither release queues a bucket as it is written.
QUEUE_SOON = {'rgw_override_bucket_index_max_shards': '1', 'rgw_max_objs_per_shard': '20',
              'rgw_user_quota_bucket_sync_interval': '3'}
RESHARD_SOON = dict(QUEUE_SOON, rgw_reshard_thread_interval='10')


@dataclass
class Watched:
    """A load into one bucket, and what the test saw of the bucket itself while it ran."""
    load_id: str
    bucket: str
    record: Dict[str, Any]
    shards: List[int]   # its index shards, as `bucket stats` said them: each count once
    queued: bool        # whether `reshard list` ever listed it


def put_load_watched(cluster: Cluster, options: Dict[str, str], duration_s: int) -> Watched:
    """A load of 20 PUTs a second into one bucket, with RGW restarted under `options`
    (the threads read their interval as they begin to wait: RGW's waits of the defaults
    are cut short), read with radosgw-admin about every second meanwhile. The options are
    removed after (the defaults back at each thread's next pass, seconds later), and the
    bucket's reshard left queued cancelled (its bucket is gone: RGW would drop it)."""
    for option, value in options.items():
        cluster.ceph('config', 'set', 'client.rgw', option, value)
    bucket = ''
    try:
        restart_rgw(cluster)
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--rate', '20', '--duration',
                               str(duration_s), '--warmup', '1').stdout.strip()
        bucket = 'rgwbench-%s-0' % load_id
        shards: List[int] = []
        queued = False
        while cluster.ceph_json('rgwbench', 'load', 'show', load_id)['state'] == 'running':
            stats = cluster.tool('radosgw-admin', '--', 'bucket', 'stats', '--bucket', bucket,
                                 check=False, timeout=60)
            if stats.returncode == 0:
                count = int(json.loads(stats.stdout)['num_shards'])
                if count not in shards:
                    shards.append(count)
            listed = cluster.tool('radosgw-admin', '--', 'reshard', 'list', check=False,
                                  timeout=60)
            if listed.returncode == 0:
                queued = queued or bucket in [e['bucket_name'] for e in json.loads(listed.stdout)]
            time.sleep(1)
        record = wait_load(cluster, load_id)
    finally:
        for option in options:
            cluster.ceph('config', 'rm', 'client.rgw', option)
        if bucket:
            cluster.tool('radosgw-admin', '--', 'reshard', 'cancel', '--bucket', bucket,
                         '--yes-i-really-mean-it', check=False, timeout=60)
    assert record['state'] == 'complete', record.get('error')
    left = json.loads(cluster.tool('radosgw-admin', '--', 'reshard', 'list', timeout=60).stdout)
    assert bucket not in [e['bucket_name'] for e in left], left
    return Watched(load_id, bucket, record, shards, queued)


def test_a_load_says_rgw_resharded_its_bucket_while_it_ran(
        cluster: Cluster, stored_credentials: None) -> None:
    # past the line in the first seconds; queued within 3 s, resharded within 10 s more
    seen = put_load_watched(cluster, RESHARD_SOON, 20)
    # What the test saw itself: the bucket (made with one shard) resharded to more. Under
    # CI's load its first reading may come after RGW's first reshard.
    assert seen.shards and max(seen.shards) > 1, seen.shards
    found = {f['id']: f for f in seen.record['findings']}
    resharded = found['bucket-resharded']
    assert resharded['level'] == 'skews'
    (evidence,) = resharded['evidence']
    told = re.match(r'bucket (\S+): ([0-9 >-]+) index shards, ([0-9]+) objects at the end$',
                    evidence)
    assert told is not None and told.group(1) == seen.bucket, evidence
    shards = [int(n) for n in told.group(2).split(' -> ')]
    # Reshards come 10 s apart at least and both read every second or two, though either
    # may start late or end early under load: they saw one shard count in common.
    assert len(shards) > 1 and shards == sorted(shards), shards
    assert set(shards) & set(seen.shards), (shards, seen.shards)
    assert 0 < int(told.group(3)) <= 21 * 20 + 5, evidence
    # the reshard fell in the measured window (its first second is the warmup's)
    assert resharded['seconds'] and max(resharded['seconds']) < 20, resharded
    text = cluster.ceph('rgwbench', 'load', 'show', seen.load_id).stdout
    assert '[skews] bucket-resharded: RGW resharded a bucket of the workload' in text, text


def test_a_load_says_rgw_queued_its_bucket_for_a_reshard_it_did_not_reach(
        cluster: Cluster, stored_credentials: None) -> None:
    # queued within 3 s of crossing the line (in the first seconds), seen in the queue
    # within 5 s more; RGW's reshard thread, just restarted, comes again in 10 minutes
    seen = put_load_watched(cluster, QUEUE_SOON, 15)
    assert seen.queued and seen.shards == [1], seen
    found = {f['id']: f for f in seen.record['findings']}
    assert 'bucket-resharded' not in found, found
    queued = found['bucket-reshard-queued']
    assert queued['level'] == 'info'
    (evidence,) = queued['evidence']
    assert re.match(r"bucket %s: in RGW's reshard queue, 1 index shards, [0-9]+ objects at "
                    r'the end$' % re.escape(seen.bucket), evidence), evidence
    # first seen in the queue in the measured window
    assert len(queued['seconds']) == 1 and queued['seconds'][0] < 15, queued
