"""The checks of `ceph rgwbench check`, each present and absent, on a fake cluster view."""
import errno
import os
import re
from dataclasses import replace
from typing import Dict, List, Optional

import pytest

from rgwbench.checks import Finding, Level, findings, findings_to_text
from rgwbench.serial import dump, load
from rgwbench.checks.config_checks import DEBUG_OPTIONS
from rgwbench.checks.gate import Refused, RunChecks
from rgwbench.profiles import Profile, Variant, Workload
from rgwbench.settings.targets import URLS, Target

from checks_fakes import DATA_POOL, GIB_KB, FakeView, pool
from fixtures import rgw_service_map


def by_id(view: FakeView, profile: Optional[Profile] = None,
          keep_objects: bool = False) -> Dict[str, Finding]:
    found = findings(view, profile, keep_objects=keep_objects)
    return {f.id: f for f in found}


def test_a_healthy_cluster_has_no_findings() -> None:
    assert findings(FakeView()) == []


# -- beast and tcp_nodelay -------------------------------------------------------------------

def test_beast_without_tcp_nodelay_skews_with_the_fix() -> None:
    view = FakeView()
    view.services['services']['rgw']['daemons']['4131']['metadata']['frontend_config#0'] = \
        'beast port=8000'
    f = by_id(view)['beast-without-tcp-nodelay']
    assert f.level == Level.skews
    assert f.evidence == ("rgw.default.vm.a: rgw_frontends = 'beast port=8000' "
                          "(set in section client.rgw.default.vm.a)",)
    assert f.fix == ("ceph config set client.rgw.default.vm.a rgw_frontends "
                     "'beast port=8000 tcp_nodelay=1'; "
                     "ceph orch daemon restart rgw.default.vm.a")


def test_frontends_from_config_when_the_service_map_has_none() -> None:
    view = FakeView()
    del view.services['services']['rgw']['daemons']['4131']['metadata']['frontend_config#0']
    view.config = []
    f = by_id(view)['beast-without-tcp-nodelay']
    assert 'the default' in f.evidence[0] and "'beast port=7480'" in f.evidence[0]
    view.config = [view.entry('client.rgw', 'rgw_frontends', 'beast port=80 tcp_nodelay=1')]
    assert 'beast-without-tcp-nodelay' not in by_id(view)


def test_civetweb_is_not_beast() -> None:
    view = FakeView()
    view.services['services']['rgw']['daemons']['4131']['metadata']['frontend_config#0'] = \
        'civetweb port=8000'
    assert 'beast-without-tcp-nodelay' not in by_id(view)


# -- debug levels ------------------------------------------------------------------------------

def test_debug_rgw_above_its_default_skews() -> None:
    f = by_id(FakeView().set('client.rgw', 'debug_rgw', '20/20'))['debug-rgw-raised']
    assert f.level == Level.skews
    assert f.evidence == ('section client.rgw: debug_rgw = 20/20, reaching rgw.default.vm.a',)
    assert f.fix == 'ceph config rm client.rgw debug_rgw'
    assert '(1/5)' in f.summary


@pytest.mark.parametrize('value', ['1/5', '0/5', '1', '0'])
def test_debug_rgw_at_or_below_its_default_does_not(value: str) -> None:
    assert 'debug-rgw-raised' not in by_id(FakeView().set('global', 'debug_rgw', value))


def test_a_more_specific_section_wins() -> None:
    view = FakeView().set('global', 'debug_rgw', '20').set('client.rgw.default', 'debug_rgw',
                                                           '1/5')
    assert 'debug-rgw-raised' not in by_id(view)
    view.set('client.rgw.default.vm.a', 'debug_rgw', '5', mask='host:vm')
    assert 'debug-rgw-raised' in by_id(view)
    other_host = FakeView().set('client.rgw', 'debug_rgw', '5', mask='host:elsewhere')
    assert 'debug-rgw-raised' not in by_id(other_host)


def test_the_default_is_the_release_s_own() -> None:
    view = FakeView().set('client.rgw', 'debug_rgw', '20/20')
    view.defaults['debug_rgw'] = '20/20'
    assert 'debug-rgw-raised' not in by_id(view)
    view.defaults['debug_rgw'] = None  # the release does not know it
    assert 'debug-rgw-raised' not in by_id(view)


def test_debug_osd_and_ms_name_the_daemons_they_reach() -> None:
    view = FakeView().set('osd.1', 'debug_osd', '10').set('global', 'debug_ms', '1')
    found = by_id(view)
    assert found['debug-osd-raised'].evidence == ('section osd.1: debug_osd = 10, reaching '
                                                  'osd.1',)
    assert found['debug-ms-raised'].evidence == (
        'section global: debug_ms = 1, reaching rgw.default.vm.a, osd.0, osd.1, osd.2',)
    assert found['debug-ms-raised'].fix == 'ceph config rm global debug_ms'


# -- the ops log -------------------------------------------------------------------------------

def test_ops_log_to_a_file_skews() -> None:
    view = FakeView().set('client.rgw', 'rgw_enable_ops_log', 'true', runtime=False)
    view.set('client.rgw', 'rgw_ops_log_rados', 'false')
    view.set('client.rgw', 'rgw_ops_log_file_path', '/var/log/ceph/ops.log')
    f = by_id(view)['rgw-ops-log']
    assert 'the file /var/log/ceph/ops.log' in f.evidence[0]
    assert f.fix == ('ceph config rm client.rgw rgw_enable_ops_log; '
                     'ceph orch daemon restart rgw.default.vm.a')


def test_ops_log_to_rados_by_default_skews() -> None:
    f = by_id(FakeView().set('global', 'rgw_enable_ops_log', 'true'))['rgw-ops-log']
    assert 'rgw_ops_log_rados' in f.evidence[0]


def test_ops_log_off_or_without_a_sink_does_not_skew() -> None:
    assert 'rgw-ops-log' not in by_id(FakeView().set('global', 'rgw_enable_ops_log', 'false'))
    view = FakeView().set('global', 'rgw_enable_ops_log', 'true')
    view.set('global', 'rgw_ops_log_rados', 'false')
    assert 'rgw-ops-log' not in by_id(view)


# -- placement groups --------------------------------------------------------------------------

@pytest.mark.parametrize('state', ['active+clean+scrubbing', 'active+clean+scrubbing+deep'])
def test_scrubbing_skews(state: str) -> None:
    view = FakeView()
    view.pgs['all'] = {'active+clean': 50, state: 7}
    f = by_id(view)['pgs-scrubbing']
    assert f.evidence == ('7 PGs %s' % state,)
    assert 'noscrub' in f.fix and 'nodeep-scrub' in f.fix


@pytest.mark.parametrize('state', ['active+recovering+degraded', 'active+recovery_wait',
                                   'active+remapped+backfilling', 'active+backfill_wait'])
def test_recovery_and_backfill_skew(state: str) -> None:
    view = FakeView()
    view.pgs['all'] = {'active+clean': 50, state: 3}
    assert by_id(view)['pgs-recovering'].evidence == ('3 PGs %s' % state,)


def test_clean_pgs_do_not_skew() -> None:
    view = FakeView()
    view.pgs['all'] = {'active+clean': 50, 'active+clean+scrubbing': 0}
    assert not {'pgs-scrubbing', 'pgs-recovering'} & set(by_id(view))


def test_pg_num_moving_towards_its_target_skews() -> None:
    view = FakeView()
    view.data_pool()['pg_num_target'] = 64
    f = by_id(view)['pg-autoscale-pending']
    assert f.evidence == ('pool %s: pg_num 32, pg_num_target 64 (a split or merge is under '
                          'way)' % DATA_POOL,)
    assert DATA_POOL in f.fix


def test_autoscaler_warning_on_an_rgw_pool_skews() -> None:
    view = FakeView()
    view.health_data = {'status': 'HEALTH_WARN', 'checks': {'POOL_TOO_FEW_PGS': {
        'severity': 'HEALTH_WARN', 'summary': {'message': '1 pools have too few placement '
                                                          'groups', 'count': 1},
        'detail': [{'message': 'Pool %s has 32 placement groups, should have 128'
                               % DATA_POOL}]}}}
    f = by_id(view)['pg-autoscale-pending']
    assert f.evidence == ('POOL_TOO_FEW_PGS: Pool %s has 32 placement groups, should have 128'
                          % DATA_POOL,)


def test_pg_changes_of_other_pools_do_not_skew() -> None:
    view = FakeView()
    view.map['pools'].append(pool(9, 'rbd', 8, apps=['rbd'], pg_num_target=16))
    assert 'pg-autoscale-pending' not in by_id(view)


def test_too_few_pgs_per_osd_in_the_data_pool() -> None:
    view = FakeView()
    view.data_pool().update(pg_num=4, pg_num_target=4, pg_placement_num=4,
                            pg_placement_num_target=4)
    f = by_id(view)['data-pool-few-pgs']
    assert f.evidence == ('pool %s: 4 PGs x 3 copies or shards over 3 OSDs = 4.0 per OSD; '
                          'an OSD has 8 op shards' % DATA_POOL,)
    assert f.fix == 'ceph osd pool set %s pg_num 8' % DATA_POOL


def test_hdd_osds_have_fewer_shards() -> None:
    view = FakeView()
    view.data_pool().update(pg_num=6, pg_num_target=6, pg_placement_num=6,
                            pg_placement_num_target=6)
    assert 'data-pool-few-pgs' in by_id(view)
    for meta in view.metadata.values():
        meta['rotational'] = '1'
    assert 'data-pool-few-pgs' not in by_id(view)
    view.set('osd', 'osd_op_num_shards', '16')
    assert 'data-pool-few-pgs' in by_id(view)


# -- health and fullness -----------------------------------------------------------------------

def test_health_warn_names_its_checks() -> None:
    view = FakeView()
    view.health_data = {'status': 'HEALTH_WARN', 'checks': {
        'OSDMAP_FLAGS': {'severity': 'HEALTH_WARN', 'summary': {'message': 'noout flag(s) '
                                                                           'set'}},
        'MUTED_ONE': {'severity': 'HEALTH_WARN', 'summary': {'message': 'x'}, 'muted': True}}}
    f = by_id(view)['health-warn']
    assert f.level == Level.skews
    assert f.evidence == ('OSDMAP_FLAGS: noout flag(s) set',)
    assert 'health-err' not in by_id(view)


def test_health_err_refuses() -> None:
    view = FakeView()
    view.health_data = {'status': 'HEALTH_ERR', 'checks': {
        'OSD_FULL': {'severity': 'HEALTH_ERR', 'summary': {'message': '1 full osd(s)'}}}}
    f = by_id(view)['health-err']
    assert f.level == Level.refuse
    assert f.evidence == ('OSD_FULL: 1 full osd(s)',)
    assert f.fix == 'ceph health detail'


def test_nearfull_osds_skew() -> None:
    view = FakeView()
    view.stats[1]['kb_avail'] = 12 * GIB_KB
    view.map['osds'][2]['state'].append('nearfull')
    f = by_id(view)['osd-nearfull']
    assert f.evidence == ('osd.1: 88.0 % used, nearfull_ratio 0.85',
                          'osd.2: 10.0 % used, nearfull_ratio 0.85, flagged nearfull')


# -- capacity for a profile --------------------------------------------------------------------

def profile(*workloads: Workload, repeats: int = 1, variants: int = 1) -> Profile:
    return Profile(name='p', description='', baseline='v0',
                   variants=[Variant('v%d' % i) for i in range(variants)],
                   workloads=list(workloads), repeats=repeats)


def small_cluster(view: FakeView, osds: int = 1, gib: int = 8, used_gib: int = 1) -> FakeView:
    view.map['osds'] = view.map['osds'][:osds]
    view.stats = [{'osd': i, 'kb': gib * GIB_KB, 'kb_used': used_gib * GIB_KB,
                   'kb_avail': (gib - used_gib) * GIB_KB} for i in range(osds)]
    view.data_pool().update(size=1, pg_num=8, pg_num_target=8, pg_placement_num=8,
                            pg_placement_num_target=8)
    view.df_data['pools'][0]['stats']['max_avail'] = (gib - used_gib) << 30
    return view


def test_a_run_that_fits_is_an_estimate_only() -> None:
    view = small_cluster(FakeView())
    quick = profile(Workload('put', op='put', size='4KiB', duration_s=10, warmup_s=2),
                    Workload('get', op='get', size='4KiB', duration_s=10, warmup_s=2))
    found = by_id(view, quick)
    # 1000 objects of 4 KiB fit in the OSDs' caches (see test_checks_workloads.py)
    assert set(found) == {'capacity-estimate', 'working-set-in-cache'}
    f = found['capacity-estimate']
    assert f.level == Level.info
    # 16 requests of 4 KiB, each at least 1 ms: 62.5 MiB/s for 12 s; prefill 1000 x 4 KiB
    assert f.evidence[1] == 'PUT workloads: 0.7 GiB in all; prefills: 0.0 GiB in all'
    # (0.80 - 0.125) x 8 GiB
    assert f.evidence[3].endswith(': 5.4 GiB')


def test_an_open_loop_workload_writes_at_its_rate_not_its_concurrency() -> None:
    view = small_cluster(FakeView())
    closed = Workload('put', op='put', size='4KiB', concurrency=54, duration_s=30,
                      warmup_s=2)
    # 54 requests of 4 KiB, each at least 1 ms: 211 MiB/s for 32 s, past the 5.4 GiB of
    # room, which is the capacity guard's to stop, not a refusal
    found = by_id(view, profile(closed))
    assert 'capacity-exceeded' not in found
    assert found['capacity-estimate'].evidence[1] == \
        'PUT workloads: 6.6 GiB in all; prefills: 0.0 GiB in all'
    # 150 requests a second of 4 KiB for 32 s: 19 MiB
    opened = by_id(view, profile(replace(closed, rate=150.0)))
    assert 'capacity-exceeded' not in opened
    assert opened['capacity-estimate'].evidence[1] == \
        'PUT workloads: 0.0 GiB in all; prefills: 0.0 GiB in all'


def test_puts_past_the_room_are_the_guards_and_prefills_past_it_refuse() -> None:
    view = small_cluster(FakeView())
    big = profile(Workload('put', op='put', size='4MiB', duration_s=60, warmup_s=5))
    found = by_id(view, big)
    # 1 OSD at 1 GiB/s (the client bound is higher): 65 GiB at most, past the 5.4 GiB of
    # room: the capacity guard stops the workload before nearfull (on the project's own
    # cluster, such a bound refused five of the eight built-in profiles)
    assert 'capacity-exceeded' not in found
    assert found['capacity-estimate'].evidence[1].startswith('PUT workloads: 65.0 GiB')
    # 1500 objects of 4 MiB to read: 5.9 GiB, which no guard can make do with less
    reads = profile(Workload('get', op='get', size='4MiB', objects=1500))
    f = by_id(view, reads)['capacity-exceeded']
    assert f.level == Level.refuse
    assert 'pool %s' % DATA_POOL in f.evidence[0]
    assert f.evidence[1].startswith('prefills: at most 5.9 GiB in the pool at once')
    assert f.fix.startswith('free space') and f.fix.endswith("read fewer objects (a "
                                                             "workload's objects)")


def test_copies_and_more_osds_are_counted() -> None:
    view = FakeView()  # 3 OSDs of 100 GiB, 3 copies: 70 GiB of room each, 70 GiB in all
    one = profile(Workload('put', op='put', size='4MiB', duration_s=60, warmup_s=5))
    est = by_id(view, one)['capacity-estimate']
    assert est.evidence[0] == ('pool %s (3 raw bytes per byte, 3 OSDs holding data)'
                               % DATA_POOL)
    assert est.evidence[1].startswith('PUT workloads: 65.0 GiB')
    assert est.evidence[3].endswith(': 70.0 GiB')
    assert 'capacity-exceeded' not in by_id(view, one)
    view.data_pool().update(type=3, erasure_code_profile='default', size=4)
    # EC 2+2: 2 raw bytes per byte, 1.5 GiB/s of client writes, 105 GiB of room... capped
    # by max_avail (80 GiB)
    est = by_id(view, one)['capacity-estimate']
    assert est.evidence[0].startswith('pool %s (2 raw bytes per byte' % DATA_POOL)
    assert est.evidence[3].endswith(': 80.0 GiB')


def test_the_fullest_osd_limits_the_room() -> None:
    view = FakeView()
    view.stats[2]['kb_avail'] = 30 * GIB_KB   # 70 % used: 10 % of 100 GiB left, a third
    f = by_id(view, profile(Workload('get', op='get', size='4KiB')))['capacity-estimate']
    assert f.evidence[3].endswith(': 10.0 GiB')


def test_prefill_and_tails_left_to_gc_add_up() -> None:
    view = small_cluster(FakeView(), gib=100, used_gib=0)
    # variants whose config may change how objects are stored: each prefills its own
    gets = replace(profile(Workload('get', op='get', size='64MiB', concurrency=1)), variants=[
        Variant('v%d' % i, {'config': {'client.rgw/rgw_max_chunk_size': 1 << 22}})
        for i in range(3)])
    f = by_id(view, gets)['capacity-estimate']
    # each prefill: 16 objects x 64 MiB = 1 GiB; the tails (60 of each 64 MiB) stay
    assert f.evidence[1] == 'PUT workloads: 0.0 GiB in all; prefills: 3.0 GiB in all'
    assert f.evidence[2].startswith(
        'prefills: at most 2.9 GiB in the pool at once, during workload get of variant v2')
    kept = by_id(view, gets, keep_objects=True)['capacity-estimate']
    assert kept.evidence[2].startswith('prefills: at most 3.0 GiB')


def test_a_workload_s_own_multipart_threshold_makes_every_part_a_tail() -> None:
    view = small_cluster(FakeView(), gib=100, used_gib=0)
    variants = [Variant('v%d' % i, {'config': {'client.rgw/rgw_max_chunk_size': 1 << 22}})
                for i in range(3)]

    def at_once(workload: Workload) -> str:
        found = by_id(view, replace(profile(workload), variants=variants))
        return found['capacity-estimate'].evidence[2]
    # each prefill: 64 objects x 16 MiB = 1 GiB; below the engine's 64 MiB threshold,
    # the tails (12 of each 16 MiB) stay
    whole = Workload('get', op='get', size='16MiB', concurrency=1)
    assert at_once(whole).startswith('prefills: at most 2.5 GiB in the pool at once')
    # uploaded in parts of 8 MiB: every part is a tail, and all of it stays
    parts = replace(whole, multipart_threshold='8MiB', part_size='8MiB')
    assert at_once(parts).startswith('prefills: at most 3.0 GiB in the pool at once')


def test_variants_that_store_alike_count_one_prefill_held_while_a_later_one_reads_it() -> None:
    view = small_cluster(FakeView(), gib=100, used_gib=0)
    gets = profile(Workload('get', op='get', size='64MiB', concurrency=1), variants=3,
                   repeats=2)
    f = by_id(view, gets)['capacity-estimate']
    # 1 GiB written once for six repeats over three variants
    assert f.evidence[1] == 'PUT workloads: 0.0 GiB in all; prefills: 1.0 GiB in all'
    assert f.evidence[2].startswith('prefills: at most 1.0 GiB in the pool at once')
    sse = Variant('sse', {'sse': 'kms-testing'})
    # the shared prefill removed after its last reader (its tails, 60 of each 64 MiB,
    # left to RGW's garbage collection) before SSE prefills its own ...
    after = replace(gets, variants=[Variant('v0'), Variant('v1', {'tls@rgw': 'on'}), sse])
    f = by_id(view, after)['capacity-estimate']
    assert f.evidence[1] == 'PUT workloads: 0.0 GiB in all; prefills: 2.0 GiB in all'
    assert f.evidence[2].startswith(
        'prefills: at most 1.9 GiB in the pool at once, during workload get of variant sse'
    ), f.evidence
    # ... and held beside it while a later variant still reads it
    between = replace(gets, variants=[Variant('v0'), sse, Variant('v1', {'tls@rgw': 'on'})])
    f = by_id(view, between)['capacity-estimate']
    assert f.evidence[2].startswith(
        'prefills: at most 2.0 GiB in the pool at once, during workload get of variant sse'
    ), f.evidence


def test_a_larger_working_set_is_counted_and_can_refuse_the_run() -> None:
    view = small_cluster(FakeView(), gib=100, used_gib=0)
    # 25000 objects of 4 MiB: 97.7 GiB over all agents, more than the 80 GiB of room
    gets = profile(Workload('get', op='get', size='4MiB', concurrency=1, objects=25000))
    found = by_id(view, gets)
    assert found['capacity-estimate'].evidence[1] == \
        'PUT workloads: 0.0 GiB in all; prefills: 97.7 GiB in all'
    assert 'capacity-exceeded' in found


def test_no_data_pool_yet_takes_the_copies_of_rgws_other_pools() -> None:
    view = FakeView()
    view.map['pools'] = [p for p in view.map['pools'] if p['pool_name'] != DATA_POOL]
    for found in view.map['pools']:
        found['size'] = 1   # as a ceph.conf default makes them, unseen in the config database
    f = by_id(view, profile(Workload('get', op='get', size='4KiB')))['capacity-estimate']
    assert f.evidence[0] == ('pool %s (not created yet) (1 raw bytes per byte, 3 OSDs holding '
                             'data)' % DATA_POOL)
    # no pool of RGW's at all: the default copies
    view.map['pools'] = [p for p in view.map['pools'] if p['pool_name'] == '.mgr']
    f = by_id(view, profile(Workload('get', op='get', size='4KiB')))['capacity-estimate']
    assert f.evidence[0] == ('pool %s (not created yet) (3 raw bytes per byte, 3 OSDs holding '
                             'data)' % DATA_POOL)


def test_a_cluster_past_the_margin_refuses_any_write() -> None:
    view = small_cluster(FakeView(), gib=10, used_gib=8)
    f = by_id(view, profile(Workload('put', op='put', size='4KiB', duration_s=1,
                                     warmup_s=0)))['capacity-exceeded']
    assert f.evidence[2].endswith(': 0.0 GiB')


# -- the finding and its text ------------------------------------------------------------------

def test_findings_round_trip_and_come_most_serious_first() -> None:
    view = FakeView().set('client.rgw', 'debug_rgw', '20')
    view.health_data = {'status': 'HEALTH_ERR', 'checks': {}}
    found = findings(view)
    assert [f.level for f in found] == [Level.refuse, Level.skews]
    assert [load(Finding, dump(f)) for f in found] == found
    assert dump(found[0]) == {'id': 'health-err', 'level': 'refuse',
                              'summary': found[0].summary,
                              'evidence': ['status HEALTH_ERR'],
                              'fix': 'ceph health detail'}


def test_text_names_each_finding_with_its_fix() -> None:
    found: List[Finding] = findings(FakeView().set('client.rgw', 'debug_rgw', '20'))
    text = findings_to_text([dump(f) for f in found])
    assert text.splitlines()[0] == '1 finding (1 skews)'
    assert '[skews] debug-rgw-raised: debug_rgw is above its default' in text
    assert '  fix:  ceph config rm client.rgw debug_rgw' in text
    assert findings_to_text([]).startswith('no findings')


DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), *(['..'] * 5),
                   'doc', 'mgr', 'rgwbench.rst')
CHECKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'checks')


def test_every_finding_id_is_documented() -> None:
    if not os.path.exists(DOC):
        pytest.fail('the docs are not next to the module: %s' % DOC)
    code = ''
    for name in sorted(os.listdir(CHECKS)):
        if name.endswith('.py'):
            with open(os.path.join(CHECKS, name)) as f:
                code += f.read()
    ids = set(re.findall(r"id='([a-z0-9-]+)'", code))
    ids |= {'%s-raised' % o.replace('_', '-') for o, _ in DEBUG_OPTIONS}
    with open(DOC) as f:
        doc = f.read()
    assert len(ids) == 26
    assert [i for i in sorted(ids) if '``%s``' % i not in doc] == []


def test_no_rgw_daemon_refuses_a_run_and_check_says_so_but_not_a_load() -> None:
    view = FakeView()
    view.services = rgw_service_map()
    (found,) = findings(view, rgw_required=True)
    assert (found.id, found.level) == ('no-rgw-daemon', Level.refuse)
    assert found.fix.startswith('ceph orch apply rgw')
    assert findings(view) == []   # between workloads, and for a load with its endpoints
    assert findings(FakeView(), rgw_required=True) == []


def test_check_and_a_run_see_no_rgw_daemon_and_a_load_does_not() -> None:
    view = FakeView()
    view.services = rgw_service_map()
    gate = RunChecks(view=view)
    assert [f.id for f in gate.now(None)] == ['no-rgw-daemon']
    with pytest.raises(Refused, match='refusing the run: no-rgw-daemon: no RGW daemon') as e:
        gate.before(profile(Workload('put', op='put', size='4KiB')), force=True)
    assert e.value.errno == -errno.EBUSY
    load = gate.before(profile(Workload('put', op='put', size='4KiB')), force=False, load=True)
    assert 'no-rgw-daemon' not in [f.id for f in load]


def test_a_concurrency_its_targets_do_not_divide_is_told() -> None:
    nine = FakeView()
    nine.services = rgw_service_map(**{'rgw.%d' % i: 'beast port=%d tcp_nodelay=1' % (8000 + i)
                                       for i in range(9)})
    profile = Profile(name='p', description='', baseline='a', variants=[Variant('a', {})],
                      workloads=[Workload(name='put', concurrency=24),
                                 Workload(name='get', op='get', concurrency=27)])
    (found,) = [f for f in findings(nine, profile) if f.id == 'uneven-concurrency']
    assert found.level == Level.info and found.workload == 'put'
    assert found.evidence == ('workload put: 24 requests in flight over 9 targets: '
                              '6 get 3, 3 get 2',)
    assert found.fix.startswith('concurrency 27 (a multiple of 9)')
    # targets given as URLs count as they are; one target divides everything
    two = replace(profile, target=Target(kind=URLS, urls=('http://a:80', 'http://b:80')),
                  workloads=[Workload(name='put', concurrency=5)])
    assert [f.evidence for f in findings(nine, two) if f.id == 'uneven-concurrency'] == [
        ('workload put: 5 requests in flight over 2 targets: 1 get 3, 1 get 2',)]
    one = replace(two, target=Target(kind=URLS, urls=('http://a:80',)))
    assert 'uneven-concurrency' not in by_id(nine, one)
