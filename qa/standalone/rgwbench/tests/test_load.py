"""`ceph rgwbench credentials` and `ceph rgwbench load` in the real mgr: agents
started locally and through the orchestrator, results merged, nothing left behind."""
import errno
import json
import os
import subprocess
import time
from typing import Any, Dict, Iterator, List

import pytest

from conftest import CLUSTER, Cluster, one_line


def set_credentials(cluster: Cluster, doc: Dict[str, Any]) -> 'subprocess.CompletedProcess[str]':
    return subprocess.run([CLUSTER, 'ceph', '--dir', cluster.dir, '--', 'rgwbench',
                           'credentials', 'set', '-i', '-'], input=json.dumps(doc),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)


@pytest.fixture
def credentials(cluster: Cluster) -> Iterator[Dict[str, Any]]:
    s3 = cluster.s3()
    proc = set_credentials(cluster, {'access_key': s3['access_key'],
                                     'secret_key': s3['secret_key']})
    assert proc.returncode == 0, proc.stderr
    yield s3
    cluster.ceph('rgwbench', 'credentials', 'rm')


def buckets(cluster: Cluster) -> List[str]:
    return json.loads(cluster.tool('radosgw-admin', '--', 'bucket', 'list').stdout)


def wait_load(cluster: Cluster, load_id: str, timeout: float = 180) -> Dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        record: Dict[str, Any] = cluster.ceph_json('rgwbench', 'load', 'show', load_id)
        if record['state'] != 'running':
            return record
        assert time.monotonic() < deadline, 'load %s still running' % load_id
        time.sleep(1)


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
    (['--op', 'frobnicate'], "unknown op 'frobnicate'"),
    (['--size', '0'], 'at least 1 byte'),
    (['--duration', '0'], 'duration must be 1 to 3600 seconds'),
    (['--placement', 'no-such-host'], 'unknown host no-such-host'),
    (['--endpoint', 'ftp://x'], 'endpoint must be an http'),
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


def agent_folders(cluster: Cluster) -> List[str]:
    """What a local agent and its engine unpack under the mgr's temporary folder.

    Host paths: the mgr of a chroot release has its /tmp inside the chroot.
    """
    tmp = os.path.join(json.loads(cluster.tool('info').stdout)['root'], 'tmp')
    return sorted(os.path.join(tmp, d) for d in os.listdir(tmp)
                  if d.startswith(('rgwbench-agent-', 'rgwbench-engine-')))


def test_load_with_a_local_agent(cluster: Cluster, credentials: Dict[str, Any]) -> None:
    before = buckets(cluster)
    folders = agent_folders(cluster)
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                           '--concurrency', '4', '--duration', '3', '--warmup', '1').stdout.strip()
    busy = cluster.ceph('rgwbench', 'load', check=False)
    assert busy.returncode == errno.EBUSY and load_id in one_line(busy.stderr)
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
    # The cluster's own radosgw, found by its pid in the service map: other
    # clusters on this machine are not counted.
    assert result['rgw']['daemons'] == 1 and result['rgw']['cpu_cores'] > 0
    assert [s['radosgw']['counted_by'] for s in result['server'].values()] == ['pids']
    assert record['cleanup']['buckets_deleted'] == 1
    assert buckets(cluster) == before
    assert load_id in [r['load_id'] for r in cluster.ceph_json('rgwbench', 'load', 'ls')]
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert 'complete' in text and 'ops/s' in text and 'p99' in text
    # Nothing of the agent stays on the mgr's host.
    assert agent_folders(cluster) == folders


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
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                           '--concurrency', '2', '--duration', '300').stdout.strip()
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
        proc = cluster.ceph('rgwbench', 'load', 'show', load_id, '-f', 'json', check=False)
        if proc.returncode == 0 and json.loads(proc.stdout)['state'] != 'running':
            record = json.loads(proc.stdout)
            break
        assert time.monotonic() < deadline, 'load %s never ended' % load_id
        time.sleep(2)
    assert record['state'] == 'failed' and 'mgr restarted' in record['error'], record
    assert buckets(cluster) == before
    assert agent_folders(cluster) == folders
    assert not [p for p in os.listdir('/proc') if p.isdigit() and working_in(p, started)]


def working_in(pid: str, folders: List[str]) -> bool:
    try:
        return any(f in os.readlink('/proc/%s/cwd' % pid) for f in folders)
    except OSError:
        return False
