"""`data-pool`: one run compares replication with erasure coding, each variant's objects
in a pool of its own behind a placement target, and the cluster is left as it was."""
import json
import re
from typing import Any, Dict, Iterator, List, Set

import pytest
from conftest import RELEASES, Cluster, own_cluster
from helpers import rgwbench_buckets, s3_client, snapshot, wait_clean, wait_run

NAME = 'data-pool-test'
POOLS = {'replica-2': 'rgwbench.replica2.data', 'ec-2-1': 'rgwbench.ec2-1-osd.data'}
PROFILE: Dict[str, Any] = {
    'name': NAME, 'baseline': 'replica-2',
    'variants': [{'name': 'replica-2', 'settings': {'data-pool': 'replica:2'}},
                 {'name': 'ec-2-1', 'settings': {'data-pool': 'ec:2+1:osd'}}],
    'workloads': [{'name': 'put-64KiB', 'op': 'put', 'size': '64KiB', 'duration': 12,
                   'warmup': 1, 'concurrency': 4}]}


@pytest.fixture(scope='module', params=RELEASES)
def three_osds(request: Any) -> Iterator[Cluster]:
    """Three OSDs on one host: an EC 2+1 pool with failure domain osd fits, one with
    failure domain host does not."""
    with own_cluster(request.param, 'three-osds-%s' % request.param, '--osds', '3',
                     '--objectstore', 'memstore') as c:
        yield c


def placement_state(c: Cluster) -> Dict[str, Any]:
    """What the setting creates and puts back, besides the config database."""
    zonegroup = json.loads(c.tool('radosgw-admin', '--', 'zonegroup', 'get').stdout)
    zone = json.loads(c.tool('radosgw-admin', '--', 'zone', 'get').stdout)
    return {'pools': sorted(c.ceph_json('osd', 'pool', 'ls')),
            'ec_profiles': sorted(c.ceph_json('osd', 'erasure-code-profile', 'ls')),
            'crush_rules': sorted(c.ceph_json('osd', 'crush', 'rule', 'ls')),
            'zonegroup_targets': sorted(t['name'] for t in zonegroup['placement_targets']),
            'zone_placement': zone['placement_pools'],
            'allow_pool_delete': c.ceph('config', 'get', 'mon',
                                        'mon_allow_pool_delete').stdout.strip()}


def test_replication_and_erasure_coding_compared_in_one_run(three_osds: Cluster) -> None:
    c = three_osds
    c.wait_rgw_registered()
    refused = c.ceph('rgwbench', 'settings', 'plan', 'data-pool=ec:2+1', check=False)
    assert refused.returncode == 22
    assert 'ec:2+1:host needs 3 hosts with an OSD up, the cluster has 1' in refused.stderr
    proc = c.ceph_input(json.dumps(PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    # RGW makes a placement's pools when a bucket first needs them: the variants' buckets
    # use the default placement's index pool, which a cluster that has served S3 has
    s3 = s3_client(c)
    s3.create_bucket(Bucket='dp-before')
    s3.delete_bucket(Bucket='dp-before')
    wait_clean(c)   # the new pool's PGs: a run is refused until they are active+clean
    before, placed = snapshot(c), placement_state(c)
    assert 'default.rgw.buckets.index' in placed['pools']
    assert not set(POOLS.values()) & set(placed['pools'])
    seen: Dict[str, Set[str]] = {pool: set() for pool in POOLS.values()}

    def look() -> None:
        pools: List[str] = c.ceph_json('osd', 'pool', 'ls')
        for pool in set(pools) & set(seen):
            listed = c.tool('rados', '--', '-p', pool, 'ls', check=False, timeout=60)
            seen[pool] |= set(listed.stdout.split())

    run_id = c.ceph('rgwbench', 'run', '--profile', NAME,
                    '--yes-i-really-mean-it').stdout.strip()
    record = wait_run(c, run_id, timeout=900, meanwhile=look, every_s=1)
    assert record['state'] == 'complete', record.get('error')
    for variant in record['variants']:
        (measured,) = variant['workloads']
        assert measured['ops'] > 0 and measured['errors'] == 0, measured
        kinds = [(ch['kind'], ch['state']) for ch in variant['changes']]
        assert ('pool', 'undone') in kinds and ('placement', 'undone') in kinds, kinds
        assert ('config', 'undone') in kinds, kinds   # mon_allow_pool_delete, for the undo
    # each variant's PUTs (keys .../<run>-<variant index>/..., in RADOS after the bucket's
    # marker) went to its own pool, and only its own
    for index, variant in enumerate(PROFILE['variants']):
        tags = {found.group(1) for found in (re.search(r'/(%s-\d+)/' % run_id, name)
                                             for name in seen[POOLS[variant['name']]])
                if found}
        assert tags == {'%s-%d' % (run_id, index)}, (variant['name'], tags)
    c.wait_rgw_registered()
    assert placement_state(c) == placed
    assert snapshot(c)['config'] == before['config'] and rgwbench_buckets(c) == []
    c.ceph('rgwbench', 'profile', 'rm', NAME)
