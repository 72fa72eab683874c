"""`data-pool`: parsed strictly, refused where the cluster cannot hold the pool, its EC
profile, CRUSH rule, pool and placement target journaled and removed again (the pool
with `mon_allow_pool_delete` true for its removal only), and the variant's buckets
created under its placement target."""
import errno
import json
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster

from rgwbench.agents.workload_runs import make_job
from rgwbench.cluster.rgw_admin import QUIET, RadosgwZones, zone_placement
from rgwbench.cluster.storage import put_pool, up_osds_by_host
from rgwbench.errors import InvalidInput
from rgwbench.loadgen.prepare import ensure_buckets
from rgwbench.profiles import Profile, Variant, Workload
from rgwbench.profiles.prefills import SHARED, read_later, storage_of
from rgwbench.profiles.types import INTERLEAVED
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import SettingContext
from rgwbench.settings.daemon_settings import RGWRestart
from rgwbench.settings.data_pool import DataPool
from rgwbench.settings.journal import MADE, UNDO_FAILED, UNDONE, Journal
from rgwbench.tests.s3stub import StubS3

EC_NAME, EC_POOL = 'rgwbench-ec2-1-osd', 'rgwbench.ec2-1-osd.data'
EC_CHANGES = [('ec-profile', EC_NAME), ('crush-rule', EC_NAME), ('pool', EC_POOL),
              ('placement', EC_NAME), ('restart', 'rgw.default')]
ALLOW = ('mon', 'mon_allow_pool_delete')


def applier(cluster: FakeCluster) -> SettingsApplier:
    ctx = SettingContext(cluster=cluster, rgw_service=lambda: 'rgw.default',  # type: ignore
                         option=lambda name: None, secrets=MemoryStore(), release=20)
    return SettingsApplier(ctx, [DataPool(), RGWRestart()])


def three_osds(hosts: int = 3) -> FakeCluster:
    cluster = FakeCluster()
    cluster.up_osds = {'host-%d' % i: 3 // hosts for i in range(hosts)}
    return cluster


@pytest.mark.parametrize('raw, value', [
    ('replica:1', 'replica:1'), ('replica:10', 'replica:10'), (' Replica:3 ', 'replica:3'),
    ('ec:2+1', 'ec:2+1:host'), ('ec:2+1:osd', 'ec:2+1:osd'), ('ec:4+2:host', 'ec:4+2:host'),
    ('ec:18+2', 'ec:18+2:host'), ('EC:8+3:OSD', 'ec:8+3:osd')])
def test_values_take_their_normal_form(raw: str, value: str) -> None:
    assert DataPool().parse(raw) == value


@pytest.mark.parametrize('raw', [
    'replica:0', 'replica:11', 'replica:', 'replica:2.5', 'replica:-1', 'replica 2', '2',
    'ec:1+1', 'ec:2+0', 'ec:19+2', 'ec:2+1:rack', 'ec:2+1:', 'ec:2+1:osd:x', 'ec:2-1', 'ec:2+',
    'ec:+1', 'jerasure', '', None, True, 'replica:2 osd'])
def test_other_values_are_refused_naming_the_setting(raw: Any) -> None:
    with pytest.raises(InvalidInput, match=r'^data-pool: .* is not valid') as refused:
        DataPool().parse(raw)
    assert refused.value.errno == -errno.EINVAL


def test_an_ec_plan_makes_profile_rule_pool_target_then_restarts_rgw() -> None:
    cluster = three_osds(hosts=1)
    (plan,) = applier(cluster).plan({'data-pool': 'ec:2+1:osd'})
    assert [(c.kind, c.target) for c in plan.changes] == EC_CHANGES
    profile, rule, pool, target, _ = plan.changes
    assert profile.after == {'k': '2', 'm': '1', 'crush-failure-domain': 'osd'}
    assert profile.summary == ('ceph osd erasure-code-profile set rgwbench-ec2-1-osd '
                               'crush-failure-domain=osd k=2 m=1')
    assert rule.summary == 'ceph osd crush rule create-erasure %s %s' % (EC_NAME, EC_NAME)
    assert pool.after == {'type': 'erasure', 'profile': EC_NAME, 'rule': EC_NAME}
    assert target.after == {'data_pool': EC_POOL}
    assert target.summary == (
        'radosgw-admin zonegroup placement add --rgw-zonegroup default --placement-id '
        'rgwbench-ec2-1-osd; zone placement add --rgw-zone default --placement-id '
        'rgwbench-ec2-1-osd --data-pool rgwbench.ec2-1-osd.data --index-pool '
        'default.rgw.buckets.index --data-extra-pool default.rgw.buckets.non-ec')
    assert cluster.calls == []


def test_a_replicated_plan_makes_a_pool_of_that_size() -> None:
    (plan,) = applier(three_osds()).plan({'data-pool': 'replica:3'})
    assert [(c.kind, c.target) for c in plan.changes] == [
        ('pool', 'rgwbench.replica3.data'), ('placement', 'rgwbench-replica3'),
        ('restart', 'rgw.default')]
    assert plan.changes[0].after == {'type': 'replicated', 'size': 3}


@pytest.mark.parametrize('value, hosts, why', [
    ('replica:3', {'a': 2}, 'replica:3 needs 3 OSDs up, the cluster has 2'),
    ('ec:2+1:osd', {'a': 1, 'b': 1}, 'ec:2+1:osd needs 3 OSDs up, the cluster has 2'),
    ('ec:2+1', {'a': 3}, 'ec:2+1:host needs 3 hosts with an OSD up, the cluster has 1'),
    ('ec:2+1', {'a': 2, 'b': 0, 'c': 0}, 'needs 3 hosts with an OSD up, the cluster has 1')])
def test_what_the_cluster_cannot_hold_is_refused_in_one_line_before_any_change(
        value: str, hosts: Any, why: str) -> None:
    cluster, store = FakeCluster(), MemoryStore()
    cluster.up_osds = hosts
    with pytest.raises(InvalidInput) as refused:
        applier(cluster).plan({'data-pool': value})
    assert why in str(refused.value) and str(refused.value).startswith('data-pool: ')
    assert '\n' not in str(refused.value) and refused.value.errno == -errno.EINVAL
    assert cluster.calls == [] and cluster.storage == {}
    assert Journal.unfinished(store) is None


def test_held_on_as_many_osds_or_hosts_as_it_needs() -> None:
    assert applier(three_osds(hosts=3)).plan({'data-pool': 'ec:2+1'})[0].changes
    assert applier(three_osds(hosts=1)).plan({'data-pool': 'replica:3'})[0].changes


def test_a_name_in_use_is_refused_not_taken_over() -> None:
    cluster = three_osds(hosts=1)
    cluster.storage[('pool', EC_POOL)] = {'type': 'erasure'}
    with pytest.raises(InvalidInput, match='pool rgwbench.ec2-1-osd.data exists already'):
        applier(cluster).plan({'data-pool': 'ec:2+1:osd'})
    assert cluster.calls == []


def apply(cluster: FakeCluster, store: MemoryStore, value: str) -> Journal:
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    client = a.apply(journal, a.plan({'data-pool': value}))
    assert client.placement == 'rgwbench-ec2-1-osd' if value == 'ec:2+1:osd' else True
    return journal


@pytest.mark.parametrize('allowed', [None, 'false', 'true'])
def test_journaled_then_removed_with_pool_delete_allowed_only_meanwhile(
        allowed: Any) -> None:
    cluster, store = three_osds(hosts=1), MemoryStore()
    if allowed is not None:
        cluster.config[ALLOW] = allowed
    config_before = dict(cluster.config)
    journal = apply(cluster, store, 'ec:2+1:osd')
    assert [(s.kind, s.target, s.state) for s in journal.steps()] == \
        [(k, t, MADE) for k, t in EC_CHANGES]
    assert all(s.before is None for s in journal.steps())
    assert sorted(cluster.storage) == sorted([('ec-profile', EC_NAME), ('crush-rule', EC_NAME),
                                              ('pool', EC_POOL), ('placement', EC_NAME)])
    assert cluster.config == config_before   # not allowed while the variant runs
    del cluster.calls[:]
    steps = applier(cluster).revert(journal)
    assert cluster.calls == [
        'placement %s rm' % EC_NAME, 'pool %s rm' % EC_POOL,
        'config mon/mon_allow_pool_delete=true', 'pool %s deleted' % EC_POOL,
        'config mon/mon_allow_pool_delete=%s' % allowed,
        'crush-rule %s rm' % EC_NAME, 'ec-profile %s rm' % EC_NAME, 'restart rgw.default']
    assert cluster.storage == {} and cluster.config == config_before
    # the allowance is a step of its own, put back
    assert [(s.kind, s.target, s.state) for s in steps][-1] == \
        ('config', 'mon/mon_allow_pool_delete', UNDONE)
    assert all(s.state == UNDONE for s in steps)
    assert Journal.unfinished(store) is None


def test_a_failed_pool_removal_still_puts_the_allowance_back_and_is_tried_again() -> None:
    cluster, store = three_osds(hosts=1), MemoryStore()
    journal = apply(cluster, store, 'ec:2+1:osd')
    cluster.fail_on = 'pool %s deleted' % EC_POOL
    steps = applier(cluster).revert(journal)
    assert ('pool', EC_POOL) in cluster.storage and ALLOW not in cluster.config
    assert {(s.kind, s.state) for s in steps if s.kind in ('pool', 'config')} == \
        {('pool', UNDO_FAILED), ('config', UNDONE)}
    assert Journal.unfinished(store) is not None
    cluster.fail_on = None
    applier(cluster).revert(Journal.unfinished(store))   # type: ignore[arg-type]
    assert cluster.storage == {} and ALLOW not in cluster.config
    assert Journal.unfinished(store) is None


def test_a_crash_while_deletion_was_allowed_is_put_back_first() -> None:
    cluster, store = three_osds(hosts=1), MemoryStore()
    journal = apply(cluster, store, 'ec:2+1:osd')

    def crash(remove: Any) -> None:
        raise SystemExit('the mgr died')
    a = applier(cluster)
    with pytest.raises(SystemExit):
        a.allowing_pool_delete(journal, lambda: crash(None))
    # SystemExit passes `finally` too: what the journal holds is what a crash between
    # its record and its put-back leaves
    journal.record('config', 'mon/mon_allow_pool_delete', None, 'true')
    cluster.config[ALLOW] = 'true'
    applier(cluster).revert(journal)
    assert ALLOW not in cluster.config and cluster.storage == {}
    assert Journal.unfinished(store) is None


def test_the_variants_jobs_create_their_buckets_under_the_placement_target() -> None:
    cluster = three_osds(hosts=1)
    a = applier(cluster)
    client = a.client(a.plan({'data-pool': 'ec:2+1:osd'}))
    assert client.placement == EC_NAME and client.shown().placement == EC_NAME
    stub = StubS3(access_key='AK', secret_key='SK').start()
    try:
        job = make_job(Workload(name='w', op='put', buckets=2),
                       creds={'access_key': 'AK', 'secret_key': 'SK'}, endpoints=[stub.url],
                       bucket_prefix='rgwbench-r-1', run_tag='r-1',
                       placement=client.placement)
        assert job.to_dict()['placement'] == EC_NAME
        assert ensure_buckets(job) == ['rgwbench-r-1-0', 'rgwbench-r-1-1']
        plain = make_job(Workload(name='w', op='put'),
                         creds={'access_key': 'AK', 'secret_key': 'SK'}, endpoints=[stub.url],
                         bucket_prefix='rgwbench-r-0', run_tag='r-0')
        assert ensure_buckets(plain) == ['rgwbench-r-0-0']
    finally:
        stub.stop()
    wanted = (b'<CreateBucketConfiguration><LocationConstraint>:rgwbench-ec2-1-osd'
              b'</LocationConstraint></CreateBucketConfiguration>')
    assert stub.bucket_bodies == {'rgwbench-r-1-0': wanted, 'rgwbench-r-1-1': wanted,
                                  'rgwbench-r-0-0': b''}


def test_a_variant_with_a_data_pool_reads_no_other_variants_prefill() -> None:
    assert storage_of(Variant('a', {'rgw-cpus': '1'}), 0) == SHARED
    assert storage_of(Variant('b', {'data-pool': 'replica:2'}), 1) == 'v1'


def test_its_prefill_goes_before_its_pool_even_in_an_interleaved_run() -> None:
    variants = [Variant('a', {}), Variant('b', {'data-pool': 'replica:2'})]
    rounds = Profile(name='p', variants=variants, workloads=[Workload(name='get', op='get')],
                     repeats=2, order=INTERLEAVED)
    assert rounds.interleaved()
    assert read_later(SHARED, 0, rounds) and not read_later('v1', 1, rounds)


ZONEGROUP = {'name': 'default', 'realm_id': '', 'default_placement': 'default-placement',
             'placement_targets': [{'name': 'default-placement', 'tags': []},
                                   {'name': 'rgwbench-replica2', 'tags': []}]}
ZONE = {'name': 'default', 'placement_pools': [
    {'key': 'default-placement', 'val': {
        'index_pool': 'default.rgw.buckets.index', 'data_extra_pool':
        'default.rgw.buckets.non-ec', 'storage_classes': {
            'STANDARD': {'data_pool': 'default.rgw.buckets.data'}}}},
    {'key': 'rgwbench-replica2', 'val': {
        'index_pool': 'default.rgw.buckets.index', 'storage_classes': {
            'STANDARD': {'data_pool': 'rgwbench.replica2.data'}}}}]}


def test_the_zonegroup_and_zone_as_radosgw_admin_prints_them() -> None:
    found = zone_placement(ZONEGROUP, ZONE)
    assert (found.zonegroup, found.zone, found.realm, found.default_id) == \
        ('default', 'default', False, 'default-placement')
    assert (found.index_pool, found.data_extra_pool) == \
        ('default.rgw.buckets.index', 'default.rgw.buckets.non-ec')
    assert found.targets == ('default-placement', 'rgwbench-replica2')
    assert found.data_pools['rgwbench-replica2'] == 'rgwbench.replica2.data'
    assert zone_placement(dict(ZONEGROUP, realm_id='r1'), ZONE).realm


def test_osds_up_are_counted_by_host() -> None:
    tree = {'nodes': [
        {'id': -1, 'type': 'root', 'name': 'default', 'children': [-2, -3]},
        {'id': -2, 'type': 'host', 'name': 'h1', 'children': [0, 1]},
        {'id': -3, 'type': 'host', 'name': 'h2', 'children': [2]},
        {'id': 0, 'type': 'osd', 'status': 'up'}, {'id': 1, 'type': 'osd', 'status': 'down'},
        {'id': 2, 'type': 'osd', 'status': 'up'}]}
    assert up_osds_by_host(tree) == {'h1': 1, 'h2': 1}


class Mon:
    """Monitor commands as `ClusterAccess.command_json` sends them, over a pool list."""

    def __init__(self) -> None:
        self.sent: List[Dict[str, Any]] = []
        self.pools: List[Dict[str, Any]] = []

    def command_json(self, **cmd: Any) -> Any:
        self.sent.append(cmd)
        if cmd['prefix'] == 'osd pool ls':
            return self.pools
        if cmd['prefix'] == 'osd pool create':
            self.pools.append({'pool_name': cmd['pool'], 'type': 1, 'size': 3})
        if cmd['prefix'] == 'osd pool delete':
            self.pools = [p for p in self.pools if p['pool_name'] != cmd['pool']]
        return None


def test_pools_are_created_with_rgws_application_and_removed_only_when_allowed() -> None:
    mon, allowed = Mon(), []
    put_pool(mon, 'p.ec', {'type': 'erasure', 'profile': 'prof', 'rule': 'rule'},
             lambda remove: None)
    put_pool(mon, 'p.rep', {'type': 'replicated', 'size': 2}, lambda remove: None)
    made = [c for c in mon.sent if c['prefix'] != 'osd pool ls']
    assert made == [
        {'prefix': 'osd pool create', 'pool': 'p.ec', 'pg_num': 8, 'pool_type': 'erasure',
         'erasure_code_profile': 'prof', 'rule': 'rule'},
        {'prefix': 'osd pool application enable', 'pool': 'p.ec', 'app': 'rgw'},
        {'prefix': 'osd pool create', 'pool': 'p.rep', 'pg_num': 8,
         'pool_type': 'replicated'},
        {'prefix': 'osd pool set', 'pool': 'p.rep', 'var': 'size', 'val': '2',
         'yes_i_really_mean_it': True},
        {'prefix': 'osd pool application enable', 'pool': 'p.rep', 'app': 'rgw'}]
    # one that exists is left as it is; its removal runs inside the allowance
    del mon.sent[:]
    put_pool(mon, 'p.ec', {'type': 'replicated', 'size': 3}, lambda remove: None)
    assert [c['prefix'] for c in mon.sent] == ['osd pool ls']

    def allowing(remove: Callable[[], None]) -> None:
        allowed.append('on')
        remove()
        allowed.append('off')
    put_pool(mon, 'p.ec', None, allowing)
    assert allowed == ['on', 'off'] and [p['pool_name'] for p in mon.pools] == ['p.rep']
    assert mon.sent[-1] == {'prefix': 'osd pool delete', 'pool': 'p.ec', 'pool2': 'p.ec',
                            'yes_i_really_really_mean_it': True}
    put_pool(mon, 'p.gone', None, allowing)   # already gone: nothing asked
    assert allowed == ['on', 'off']


class Tools:
    """radosgw-admin as the mgr runs it: the zonegroup and zone it prints, the argv sent."""

    def __init__(self, realm: str = '') -> None:
        self.argv: List[List[str]] = []
        self.realm = realm

    def get_ceph_conf_path(self) -> str:
        return 'ceph.conf'

    def tool_exec(self, args: List[str], timeout: int = 10,
                  stdin: Optional[bytes] = None) -> Tuple[int, str, str]:
        words = args[3 + len(QUIET):]
        self.argv.append(words)
        if words == ['zonegroup', 'get']:
            return 0, json.dumps(dict(ZONEGROUP, realm_id=self.realm)), ''
        if words == ['zone', 'get']:
            return 0, json.dumps(ZONE), ''
        return 0, '', ''


COMMIT = ['period', 'update', '--commit']


@pytest.mark.parametrize('realm, commit', [('', []), ('r1', [COMMIT])])
def test_placement_targets_go_to_the_zonegroup_and_the_zone_and_back(
        realm: str, commit: List[List[str]]) -> None:
    tools = Tools(realm)
    zones = RadosgwZones(tools)
    zones.add_placement('rgwbench-ec2-1-osd', 'rgwbench.ec2-1-osd.data')
    changed = [a for a in tools.argv if a[-1] != 'get']
    assert changed == [
        ['zonegroup', 'placement', 'add', '--rgw-zonegroup', 'default', '--placement-id',
         'rgwbench-ec2-1-osd'],
        ['zone', 'placement', 'add', '--rgw-zone', 'default', '--placement-id',
         'rgwbench-ec2-1-osd', '--data-pool', 'rgwbench.ec2-1-osd.data', '--index-pool',
         'default.rgw.buckets.index', '--data-extra-pool', 'default.rgw.buckets.non-ec']
    ] + commit
    del tools.argv[:]
    zones.remove_placement('rgwbench-replica2')   # in both
    zones.remove_placement('rgwbench-gone')       # in neither: nothing removed
    assert [a for a in tools.argv if a[-1] != 'get'] == [
        ['zone', 'placement', 'rm', '--rgw-zone', 'default', '--placement-id',
         'rgwbench-replica2'],
        ['zonegroup', 'placement', 'rm', '--rgw-zonegroup', 'default', '--placement-id',
         'rgwbench-replica2']] + commit
