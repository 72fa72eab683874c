"""The engine's workload fields in the real mgr: an open-loop `load` at a rate, and a `run`
of a profile with a rate, a working set and a ranged GET; what is stored says so."""
import json
from typing import Any, Dict, Iterator

import pytest

from conftest import Cluster
from helpers import buckets, wait_load, wait_run

PROFILE = 'fields-test'


def near(achieved: float, asked: float) -> bool:
    """Within 20 % of the rate asked."""
    return abs(achieved - asked) <= 0.2 * asked


def test_an_open_loop_load_keeps_its_rate(cluster: Cluster,
                                          credentials: Dict[str, Any]) -> None:
    before = buckets(cluster)
    load_id = cluster.ceph('rgwbench', 'load', '--op', 'get', '--size', '4KiB',
                           '--concurrency', '8', '--duration', '5', '--warmup', '1',
                           '--rate', '50', '--objects', '200').stdout.strip()
    record = wait_load(cluster, load_id)
    assert record['state'] == 'complete', record.get('error')
    result = record['result']
    assert result['ops'] > 0 and result['errors'] == 0, result.get('error_samples')
    assert (result['mode'], result['rate']) == ('open', 50.0)
    assert near(result['ops_per_s'], 50.0), result['ops_per_s']
    assert (result['objects'], result['working_set_bytes']) == (200, 200 * 4096)
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert "open loop at 50 ops/s asked: latency counts from each request's intended " \
        "start" in text
    assert 'working set 200 objects' in text
    assert buckets(cluster) == before


@pytest.fixture
def profile(cluster: Cluster) -> Iterator[str]:
    doc = {'name': PROFILE, 'variants': [{'name': 'as-is'}],
           'workloads': [{'op': 'get', 'size': '64KiB', 'concurrency': 4, 'duration': 5,
                          'warmup': 1, 'rate': 40, 'objects': 300, 'range': '0-16KiB'}]}
    proc = cluster.ceph_input(json.dumps(doc), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    yield PROFILE
    cluster.ceph('rgwbench', 'profile', 'rm', PROFILE)


def test_a_run_at_a_rate_over_a_working_set_with_ranged_gets(
        cluster: Cluster, credentials: Dict[str, Any], profile: str) -> None:
    cluster.wait_rgw_registered()
    shown = cluster.ceph_json('rgwbench', 'profile', 'show', profile)
    assert [w['name'] for w in shown['workloads']] == ['get-64KiB@40/s']
    # a curve: one workload per rate, named after it
    plan = cluster.ceph_json('rgwbench', 'plan', '--profile', profile, '--rates', '20,40')
    assert [(w['name'], w['rate']) for w in plan['workloads']] == [
        ('get-64KiB@20/s', 20), ('get-64KiB@40/s', 40)]
    run_id = cluster.ceph('rgwbench', 'run', '--profile', profile,
                          '--yes-i-really-mean-it').stdout.strip()
    record = wait_run(cluster, run_id)
    assert record['state'] == 'complete', record.get('error')
    (variant,) = record['variants']
    (workload,) = variant['workloads']
    assert workload['name'] == 'get-64KiB@40/s'
    assert workload['ops'] > 0 and workload['errors'] == 0, workload.get('error_samples')
    assert (workload['mode'], workload['rate']) == ('open', 40.0)
    assert near(workload['ops_per_s'], 40.0), workload['ops_per_s']
    # each GET read the 16 KiB of its range, not the 64 KiB object
    assert workload['bytes'] == workload['ops'] * 16384
    assert workload['range'] == '0-16KiB'
    assert (workload['objects'], workload['working_set_bytes']) == (300, 300 * 65536)
    text = cluster.ceph('rgwbench', 'results', 'show', run_id).stdout
    assert 'get-64KiB@40/s (open)' in text
    assert 'working set 300 objects' in text
    assert not [b for b in buckets(cluster) if b.startswith('rgwbench-%s' % run_id)]
