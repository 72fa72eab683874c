"""`ceph rgwbench credentials` and `ceph rgwbench load` in the real mgr: agents
started locally and through the orchestrator, results merged, nothing left behind."""
import errno
import json
import os
import signal
import time
from typing import Any, Dict, List, Tuple

import pytest

import secrets_shown
from conftest import Cluster, active_mgr_pid, one_line, rados_objects, set_credentials
from helpers import agent_folders, buckets, osd_utilization, wait_load


def test_credentials_are_stored_and_never_shown(cluster: Cluster) -> None:
    s3 = cluster.s3()
    assert set_credentials(cluster, {'access_key': s3['access_key'],
                                     'secret_key': s3['secret_key']}).returncode == 0
    try:
        shown = cluster.ceph_json('rgwbench', 'credentials', 'show')
        assert shown == {'configured': True, 'access_key': s3['access_key'],
                         'ca_bundle': False}
        everything = cluster.ceph('rgwbench', 'credentials', 'show').stdout + \
            cluster.ceph('rgwbench', 'status', '-f', 'json').stdout
        assert s3['secret_key'] not in everything
    finally:
        cluster.ceph('rgwbench', 'credentials', 'rm')
    assert cluster.ceph_json('rgwbench', 'credentials', 'show') == {'configured': False}


@pytest.mark.parametrize('doc, message', [
    ({'access_key': 'A'}, 'secret_key is missing'),
    ({'access_key': 'A', 'secret_key': 'S', 'colour': 'red'}, 'unknown field colour'),
    ({'access_key': 'A', 'secret_key': 'S', 'ca_bundle': 'nope'}, 'not a PEM certificate'),
])
def test_bad_credentials_are_refused(cluster: Cluster, doc: Dict[str, Any],
                                     message: str) -> None:
    proc = set_credentials(cluster, doc)
    assert proc.returncode == errno.EINVAL
    assert message in one_line(proc.stderr)
    assert cluster.ceph_json('rgwbench', 'credentials', 'show') == {'configured': False}


def test_load_without_credentials_says_how(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'load', check=False)
    assert proc.returncode == errno.ENOENT
    assert 'rgwbench credentials set' in one_line(proc.stderr)


@pytest.mark.parametrize('args, message', [
    (['--op', 'frobnicate'], "--op: 'frobnicate' is not an operation"),
    (['--size', '0'], 'at least 1 byte'),
    (['--duration', '0'], '--duration: must be a positive number of seconds'),
    (['--concurrency', '1000000'], '--concurrency: must be a whole number from 1 to 4096'),
    (['--size', '150GiB'], "--size: '150GiB' is above the 5GiB an object may have here"),
    (['--placement', 'no-such-host'], 'unknown host no-such-host'),
    (['--endpoint', 'ftp://x'], "--endpoint: 'ftp://x' is not an http(s)://HOST:PORT URL"),
])
def test_bad_load_input_changes_nothing(cluster: Cluster, credentials: Dict[str, Any],
                                        args: List[str], message: str) -> None:
    services = cluster.ceph('orch', 'ls', '--export').stdout
    before = buckets(cluster)
    proc = cluster.ceph('rgwbench', 'load', *args, check=False)
    assert proc.returncode == errno.EINVAL
    assert message in one_line(proc.stderr)
    assert cluster.ceph('orch', 'ls', '--export').stdout == services
    assert buckets(cluster) == before
    assert cluster.ceph_json('rgwbench', 'status')['active_load'] is None


def test_load_with_a_local_agent(cluster: Cluster, credentials: Dict[str, Any]) -> None:
    before = buckets(cluster)
    folders = agent_folders(cluster)
    # Long enough that the second command lands while the first load goes, even when
    # each `ceph` call takes seconds on a busy machine.
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                           '--concurrency', '4', '--rate', '25', '--duration', '30',
                           '--warmup', '1', '--placement', 'mgr').stdout.strip()
    busy = cluster.ceph('rgwbench', 'load', check=False)
    assert busy.returncode == errno.EBUSY and load_id in one_line(busy.stderr), (
        busy, cluster.ceph_json('rgwbench', 'load', 'show', load_id))
    record = wait_load(cluster, load_id)
    assert record['state'] == 'complete', record.get('error')
    assert record['endpoint'] == credentials['url']
    (agent,) = record['agents'].values()
    assert agent == {'state': 'done', 'error': None}
    result = record['result']
    assert result['ops'] > 0 and result['errors'] == 0
    assert result['bytes'] == result['ops'] * 4096
    lat = result['latency_ms']
    assert 0 < lat['p50'] <= lat['p90'] <= lat['p99'] <= lat['max']
    # The cluster's own radosgw, found by its name: other clusters on this
    # machine are not counted.
    assert result['rgw']['daemons'] == 1 and result['rgw']['cpu_cores'] > 0
    assert [s['radosgw']['counted_by'] for s in result['server'].values()] == ['daemon']
    (daemon,) = result['rgw']['per_daemon']
    (rgw,) = cluster.ceph_json('orch', 'ps', '--daemon_type', 'rgw')
    assert daemon['daemon'] == 'rgw.' + rgw['daemon_id'] and daemon['cpu_cores'] > 0
    assert record['cleanup']['buckets_deleted'] == 1
    assert buckets(cluster) == before
    assert load_id in [r['load_id'] for r in cluster.ceph_json('rgwbench', 'load', 'ls')]
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert 'complete' in text and 'ops/s' in text and 'p99' in text
    # Nothing of the agent stays on the mgr's host.
    assert agent_folders(cluster) == folders


def test_a_load_frees_the_space_it_wrote_at_once(cluster: Cluster,
                                                 credentials: Dict[str, Any]) -> None:
    """Objects larger than a head (4 MiB) have tails; deleted over S3, those would wait for
    RGW's garbage collection, two hours by default, still filling the OSDs."""
    before = set(rados_objects(cluster))
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '6MiB',
                           '--concurrency', '2', '--duration', '4', '--warmup', '1',
                           '--placement', 'mgr').stdout.strip()
    record = wait_load(cluster, load_id)
    assert record['state'] == 'complete', record.get('error')
    assert record['result']['ops'] > 0 and record['result']['errors'] == 0
    cleanup = record['cleanup']
    assert cleanup['space_freed'] == 'at once' and cleanup['buckets_deleted'] == 1, cleanup
    assert cleanup['objects_deleted'] >= record['result']['ops'], cleanup
    # Not a head or a tail of what it wrote is left in RADOS, none waits for the GC.
    assert set(rados_objects(cluster)) <= before


def test_load_with_agents_placed_by_the_orchestrator(cluster: Cluster,
                                                     credentials: Dict[str, Any]) -> None:
    hosts = [h['hostname'] for h in cluster.ceph_json('orch', 'host', 'ls')]
    services = cluster.ceph('orch', 'ls', '--export').stdout
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'get', '--size', '16KiB',
                           '--concurrency', '4', '--duration', '3', '--warmup', '1',
                           '--placement', ','.join(hosts)).stdout.strip()
    record = wait_load(cluster, load_id)
    assert record['state'] == 'complete', record.get('error')
    assert sorted(record['agents']) == sorted(hosts)
    assert all(a['state'] == 'done' for a in record['agents'].values())
    assert record['result']['ops'] > 0 and record['result']['errors'] == 0
    assert record['result']['bytes'] == record['result']['ops'] * 16384
    # The agents' container service is gone, and so are its buckets.
    assert cluster.ceph('orch', 'ls', '--export').stdout == services
    assert not [b for b in buckets(cluster) if b.startswith('rgwbench-')]


def test_a_mgr_restart_during_a_load_leaves_nothing_behind(
        cluster: Cluster, credentials: Dict[str, Any]) -> None:
    before, folders = buckets(cluster), agent_folders(cluster)
    # Long, and at a rate that keeps it far from filling the cluster (so that the
    # capacity guard lets it start on a fresh cluster too).
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                           '--concurrency', '2', '--duration', '300', '--rate', '50',
                           '--placement', 'mgr').stdout.strip()
    deadline = time.monotonic() + 120
    while not [b for b in buckets(cluster) if b.startswith('rgwbench-%s' % load_id)]:
        assert time.monotonic() < deadline, 'the load never created its bucket'
        time.sleep(1)
    started = [f for f in agent_folders(cluster) if f not in folders]
    assert started, 'no agent folder'
    cluster.ceph('mgr', 'fail', cluster.ceph_json('mgr', 'stat')['active_name'])
    # nobody runs a command: the module cleans up when it starts again
    deadline = time.monotonic() + 240
    while True:
        shown = cluster.try_ceph_json('rgwbench', 'load', 'show', load_id)
        if shown is not None and shown['state'] != 'running':
            record = shown
            break
        assert time.monotonic() < deadline, 'load %s never ended' % load_id
        time.sleep(2)
    assert record['state'] == 'failed' and 'mgr restarted' in record['error'], record
    assert buckets(cluster) == before
    assert agent_folders(cluster) == folders
    assert not [p for p in os.listdir('/proc') if p.isdigit() and working_in(p, started)]


# The shortest dead-man time-out the module takes; how long after it an agent may still
# be there: two of its asks (5 s at most each, a quarter of the time-out here), the 10 s
# its load has to end, and 10 s for a busy machine.
DEADMAN_S = 10
AGENT_GONE_S = DEADMAN_S + 2 * DEADMAN_S / 4 + 10 + 10


def test_a_local_agent_ends_itself_when_its_mgr_dies_and_the_mgr_back_removes_the_rest(
        cluster: Cluster, credentials: Dict[str, Any]) -> None:
    before, folders = buckets(cluster), agent_folders(cluster)
    cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/agent_deadman_timeout', str(DEADMAN_S))
    try:
        # Long, and at a rate that keeps it far from filling the cluster (so that the
        # capacity guard lets it start on a fresh cluster too).
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--duration', '300', '--rate', '50',
                               '--placement', 'mgr').stdout.strip()
        deadline = time.monotonic() + 120
        while not [b for b in buckets(cluster) if b.startswith('rgwbench-%s' % load_id)]:
            assert time.monotonic() < deadline, 'the load never created its bucket'
            time.sleep(1)
        started = [f for f in agent_folders(cluster) if f not in folders]
        assert started, 'no agent folder'
        assert agent_processes(started), 'no agent process'
        os.kill(active_mgr_pid(cluster), signal.SIGKILL)
        killed = time.monotonic()
        while agent_processes(started):
            assert time.monotonic() - killed < AGENT_GONE_S, \
                'the agent still runs %d s after its mgr died' % AGENT_GONE_S
            time.sleep(0.5)
        # What the agent left (its folder, the load's buckets, the record of them) goes
        # when a mgr comes back on this host.
        cluster.start()
        # The mgr back loads its modules first: minutes on a machine as loaded as CI's
        # (CI: a load not ended 240 s after the start).
        deadline = time.monotonic() + 480
        while True:
            proc = cluster.ceph('rgwbench', 'load', 'show', load_id, '-f', 'json',
                                check=False)
            if proc.returncode == 0 and json.loads(proc.stdout)['state'] != 'running':
                record = json.loads(proc.stdout)
                break
            assert time.monotonic() < deadline, 'load %s never ended' % load_id
            time.sleep(2)
        assert record['state'] == 'failed' and record['error'].endswith('were removed'), \
            record
        assert buckets(cluster) == before
        assert agent_folders(cluster) == folders
        assert not [k for k in json.loads(cluster.ceph('config-key', 'ls').stdout)
                    if 'leftovers' in k]
        assert cluster.ceph_json('rgwbench', 'status')['leftovers'] == []
    finally:
        cluster.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/agent_deadman_timeout')


def agent_processes(folders: List[str]) -> List[str]:
    return [p for p in os.listdir('/proc') if p.isdigit() and working_in(p, folders)]


def working_in(pid: str, folders: List[str]) -> bool:
    try:
        return any(f in os.readlink('/proc/%s/cwd' % pid) for f in folders)
    except OSError:
        return False


def test_a_put_load_stops_before_an_osd_gets_nearfull(
        cluster: Cluster, credentials: Dict[str, Any]) -> None:
    # A load the capacity check lets start (it would be refused if its estimate
    # reached nearfull): once it writes, the OSD's nearfull ratio is brought down to
    # 5.5 points above what it uses then, as if others filled the cluster meanwhile.
    # The guard must stop the load 5 points below it (half a point of writes away:
    # reached within the load's time even on a busy machine), and the OSD never
    # gets to nearfull. 64 KiB objects, 50 a second: 3.2 MiB/s, half a point of
    # the 8 GiB OSD in 13 s (4 KiB PUTs in closed loop took 10,000 PUTs to get there).
    ratios = cluster.ceph_json('osd', 'dump')
    cluster.wait_rgw_registered()
    # Measured from its first second: a stop (which reaches the agents within a second)
    # that came in a warm-up once left nothing measured.
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '64KiB',
                           '--concurrency', '4', '--rate', '50', '--warmup', '0',
                           '--duration', '100').stdout.strip()
    try:
        began = time.monotonic()
        while not [b for b in buckets(cluster) if b.startswith('rgwbench-%s' % load_id)]:
            assert time.monotonic() - began < 120, 'the load never created its bucket'
            time.sleep(1)
        nearfull = round(osd_utilization(cluster) + 0.05 + 0.005, 4)
        cluster.ceph('osd', 'set-nearfull-ratio', str(nearfull))
        lowered = time.monotonic()
        seen: List[Tuple[float, float]] = []   # (seconds since lowered, utilization)
        while cluster.ceph_json('rgwbench', 'load', 'show', load_id)['state'] == 'running':
            seen.append((round(time.monotonic() - lowered, 1), osd_utilization(cluster)))
            assert time.monotonic() - lowered < 240, 'load %s still running' % load_id
            time.sleep(1)
        seen.append((round(time.monotonic() - lowered, 1), osd_utilization(cluster)))
        highest = max(u for _, u in seen)
        record = cluster.ceph_json('rgwbench', 'load', 'show', load_id)
        assert record['state'] == 'complete', record
        assert (record.get('stopped') or '').startswith('capacity: osd.0 '), record
        assert record['result']['ops'] > 0
        assert record['result']['elapsed_s'] < 95, 'the load was not stopped early'
        assert highest < nearfull, 'the OSD reached %.3f, nearfull is %.3f: %s; %s' % (
            highest, nearfull, seen, record['stopped'])
        assert 'stopped early: capacity' in cluster.ceph('rgwbench', 'load', 'show',
                                                         load_id).stdout
    finally:
        cluster.ceph('osd', 'set-nearfull-ratio', str(ratios['nearfull_ratio']))


def test_no_secret_shows_while_a_load_runs(cluster: Cluster,
                                           credentials: Dict[str, Any]) -> None:
    """What a read-only `ceph` user, a process list and the mgr's log show: no S3 secret
    and no agent token."""
    hosts = [h['hostname'] for h in cluster.ceph_json('orch', 'host', 'ls')]
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                           '--concurrency', '2', '--rate', '20', '--duration', '20',
                           '--warmup', '1', '--placement', ','.join(hosts)).stdout.strip()
    seen: Dict[str, str] = {}
    specs_with_agents = 0
    deadline = time.monotonic() + 180
    while cluster.ceph_json('rgwbench', 'load', 'show', load_id)['state'] == 'running':
        # Each look is several `ceph` runs, seconds on a busy machine: the load lasts
        # 20 s so that its agents' spec is there for one look at least.
        now = secrets_shown.looks(cluster, [('rgwbench', 'status'),
                                            ('rgwbench', 'load', 'show', load_id),
                                            ('rgwbench', 'credentials', 'show')])
        specs_with_agents += 'rgwbench-agent' in now['orch ls --export']
        secrets_shown.add(seen, now)
        assert time.monotonic() < deadline, 'load %s still running' % load_id
        time.sleep(1)
    record = cluster.ceph_json('rgwbench', 'load', 'show', load_id)
    assert record['state'] == 'complete', record.get('error')
    assert specs_with_agents, 'the agents\' spec was never seen while the load ran'
    seen.update(secrets_shown.mgr_logs(cluster))
    assert len(seen) > 6
    secrets_shown.assert_none_shown(seen, {'the S3 secret key': credentials['secret_key']})
