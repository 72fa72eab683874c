"""Checks of a profile's workloads against the cluster: the caches in front of a GET, and
what an RGW daemon admits at once; for `check --profile`, a load, and before each workload."""
from typing import Dict, List, Optional

from rgwbench.checks import Finding, Level, findings
from rgwbench.checks.gate import RunChecks, load_profile
from rgwbench.profiles import Profile, Variant, Workload

from checks_fakes import GIB_KB, FakeView, GiB, roomy
from fixtures import rgw_service_map


def profile(*workloads: Workload, placement: Optional[List[str]] = None) -> Profile:
    return Profile(name='p', description='', baseline='v', variants=[Variant('v')],
                   workloads=list(workloads), placement=list(placement or []))


def by_id(view: FakeView, p: Profile, load: bool = False) -> Dict[str, Finding]:
    return {f.id: f for f in findings(view, p, load=load)}


def get(size: str = '4KiB', objects: Optional[int] = None, **more: object) -> Workload:
    return Workload(name='get-%s' % size, op='get', size=size, objects=objects,
                    duration_s=10, warmup_s=0, **more)  # type: ignore[arg-type]


# -- the working set of a GET against the caches ----------------------------------------------

def test_a_get_working_set_the_osd_caches_hold_skews_with_its_evidence() -> None:
    f = by_id(FakeView(), profile(get()))['working-set-in-cache']
    assert f.level == Level.skews and f.workload == 'get-4KiB'
    # the engine's default on one agent: 1000 objects of 4 KiB; 3 OSDs of 4 GiB targets
    assert f.evidence == (
        'workload get-4KiB: 1000 objects x 4KiB read each = 3.9 MiB (its working set, '
        'after the prefill)',
        'the caches hold up to 12.0 GiB in all',
        '3 OSDs: osd_memory_target 4.0 GiB each (BlueStore cache, autotune on: up to the '
        'target)')
    # twice the caches, in objects of 4 KiB
    assert f.fix.startswith('objects: 6291456 in workload get-4KiB of the profile '
                            '(or `--objects 6291456`): a working set of 24.0 GiB')


def test_a_working_set_larger_than_the_caches_is_fine() -> None:
    # 4000 objects of 4 MiB = 15.6 GiB over 12 GiB of caches
    assert 'working-set-in-cache' not in by_id(roomy(FakeView()),
                                               profile(get('4MiB', objects=4000)))


def test_agents_each_prefill_the_default_but_objects_is_over_all_of_them() -> None:
    view = roomy(FakeView())
    # 256 objects of 4 MiB (1 GiB) per agent, on 16 agents: 16 GiB, more than 12 GiB
    assert 'working-set-in-cache' not in by_id(
        view, profile(get('4MiB'), placement=['h%d' % i for i in range(16)]))
    f = by_id(view, profile(get('4MiB', objects=256), placement=['h%d' % i for i in range(16)]))
    assert f['working-set-in-cache'].evidence[0].startswith('workload get-4MiB: 256 objects')


def test_puts_heads_and_lists_read_no_object_data() -> None:
    view = FakeView()
    for op in ('put', 'head', 'list', 'delete'):
        w = Workload(name=op, op=op, size='4KiB', duration_s=1, warmup_s=0)
        assert 'working-set-in-cache' not in by_id(view, profile(w)), op
    mixed = Workload(name='mixed', op='mixed', mix={'put': 0.5, 'get': 0.5}, size='4KiB',
                     duration_s=1, warmup_s=0)
    assert 'working-set-in-cache' in by_id(view, profile(mixed))


def test_a_ranged_get_reads_only_its_range_of_each_object() -> None:
    view = roomy(FakeView())
    whole = get('64MiB', objects=400)              # 25 GiB: out of the caches
    assert 'working-set-in-cache' not in by_id(view, profile(whole))
    ranged = get('64MiB', objects=400, range='0-1MiB')   # 400 MiB read
    f = by_id(view, profile(ranged))['working-set-in-cache']
    assert f.evidence[0].startswith('workload get-64MiB: 400 objects x 1MiB read each')


def test_the_caches_follow_each_osds_settings() -> None:
    view = FakeView().set('osd.1', 'osd_memory_target', str(8 * GiB))
    view.set('osd.2', 'bluestore_cache_autotune', 'false')
    view.metadata['2']['rotational'] = '1'
    f = by_id(view, profile(get()))['working-set-in-cache']
    # 4 + 8 GiB targets, and osd.2 without autotune: bluestore_cache_size_hdd 1 GiB
    assert f.evidence[1] == 'the caches hold up to 13.0 GiB in all'
    assert set(f.evidence[2:]) == {
        '1 OSD: bluestore_cache_size_hdd 1.0 GiB each (BlueStore cache, autotune off)',
        '1 OSD: osd_memory_target 4.0 GiB each (BlueStore cache, autotune on: up to the '
        'target)',
        '1 OSD: osd_memory_target 8.0 GiB each (BlueStore cache, autotune on: up to the '
        'target)'}
    view.set('osd.2', 'bluestore_cache_size', str(2 * GiB))
    f = by_id(view, profile(get()))['working-set-in-cache']
    assert f.evidence[1] == 'the caches hold up to 14.0 GiB in all'


def test_an_rgw_d3n_data_cache_counts_and_its_metadata_cache_does_not() -> None:
    view = roomy(FakeView()).set('client.rgw', 'rgw_cache_enabled', 'true')
    w = get('4MiB', objects=3500)   # 13.7 GiB: out of the OSDs' 12 GiB
    assert 'working-set-in-cache' not in by_id(view, profile(w))
    view.set('client.rgw', 'rgw_d3n_l1_local_datacache_enabled', 'true')
    view.set('client.rgw', 'rgw_d3n_l1_datacache_size', str(4 * GiB))
    f = by_id(view, profile(w))['working-set-in-cache']
    assert f.evidence[1] == 'the caches hold up to 16.0 GiB in all'
    assert f.evidence[-1] == ('rgw.default.vm.a: D3N data cache 4.0 GiB '
                              '(rgw_d3n_l1_datacache_size)')


def test_a_load_names_itself_and_its_flag() -> None:
    p = load_profile(Workload(name='load', op='get', size='4KiB', duration_s=5), None)
    f = by_id(FakeView(), p, load=True)['working-set-in-cache']
    assert f.workload is None and f.evidence[0].startswith('the load: 1000 objects')
    assert f.fix.startswith('ceph rgwbench load ... --objects 6291456')


# -- what RGW admits at once ------------------------------------------------------------------

def test_more_requests_per_beast_daemon_than_it_admits_skews() -> None:
    view = FakeView().set('client.rgw', 'rgw_max_concurrent_requests', '64')
    w = Workload(name='put', op='put', size='4KiB', concurrency=100, duration_s=1, warmup_s=0)
    f = by_id(view, profile(w))['rgw-queue-throttled']
    assert f.level == Level.skews and f.workload == 'put'
    assert f.evidence == (
        'workload put: 100 requests in flight over 1 RGW daemon = 100 per daemon',
        'rgw.default.vm.a (beast): rgw_max_concurrent_requests = 64 (section client.rgw)')
    assert f.fix == ('ceph config set client.rgw rgw_max_concurrent_requests 100; or a lower '
                     'concurrency (or concurrency_per_rgw) in workload put')


def test_requests_spread_over_the_daemons_and_at_the_limit_are_admitted() -> None:
    view = FakeView().set('client.rgw', 'rgw_max_concurrent_requests', '50')
    view.services = rgw_service_map(**{'default.vm.a': 'beast port=8000 tcp_nodelay=1',
                                       'default.vm.b': 'beast port=8001 tcp_nodelay=1'})
    w = Workload(name='put', op='put', size='4KiB', concurrency=100, duration_s=1, warmup_s=0)
    assert 'rgw-queue-throttled' not in by_id(view, profile(w))   # 50 each
    f = by_id(view, profile(Workload(name='put', op='put', size='4KiB', concurrency=101,
                                     duration_s=1, warmup_s=0)))['rgw-queue-throttled']
    assert f.evidence[0] == 'workload put: 101 requests in flight over 2 RGW daemons = 51 ' \
        'per daemon'
    assert len(f.evidence) == 3


def test_concurrency_per_rgw_is_scaled_to_the_daemons_there_are() -> None:
    view = FakeView().set('client.rgw', 'rgw_max_concurrent_requests', '32')
    w = Workload(name='get', op='get', size='4KiB', concurrency=16, concurrency_per_rgw=48,
                 duration_s=1, warmup_s=0)
    f = by_id(view, profile(w))['rgw-queue-throttled']
    assert f.evidence[0] == 'workload get: 48 requests in flight over 1 RGW daemon = 48 per ' \
        'daemon'


def test_beasts_thread_pool_is_no_bound_and_civetwebs_is() -> None:
    view = FakeView().set('client.rgw', 'rgw_thread_pool_size', '8')
    w = Workload(name='put', op='put', size='4KiB', concurrency=16, duration_s=1, warmup_s=0)
    assert 'rgw-queue-throttled' not in by_id(view, profile(w))
    view.services = rgw_service_map(**{'default.vm.a': 'civetweb port=8000'})
    f = by_id(view, profile(w))['rgw-queue-throttled']
    assert f.evidence[1] == 'rgw.default.vm.a (civetweb): rgw_thread_pool_size = 8 ' \
        '(section client.rgw)'
    assert f.fix.startswith('ceph config set client.rgw rgw_thread_pool_size 16; '
                            'ceph orch daemon restart rgw.default.vm.a; or a lower')
    view.services = rgw_service_map(**{'default.vm.a': 'civetweb port=8000 num_threads=100'})
    assert 'rgw-queue-throttled' not in by_id(view, profile(w))
    view.services = rgw_service_map(**{'default.vm.a': 'civetweb port=8000 num_threads=12'})
    f = by_id(view, profile(w))['rgw-queue-throttled']
    assert f.evidence[1] == 'rgw.default.vm.a (civetweb): num_threads = 12 (in rgw_frontends)'
    assert f.fix.startswith('num_threads=16 in rgw_frontends of rgw.default.vm.a; or a lower')


def test_the_dmclock_scheduler_is_not_the_throttler() -> None:
    view = FakeView().set('client.rgw', 'rgw_max_concurrent_requests', '8')
    w = Workload(name='put', op='put', size='4KiB', concurrency=16, duration_s=1, warmup_s=0)
    assert 'rgw-queue-throttled' in by_id(view, profile(w))
    view.set('client.rgw', 'rgw_scheduler_type', 'dmclock')
    assert 'rgw-queue-throttled' not in by_id(view, profile(w))


def test_the_defaults_admit_every_concurrency_a_profile_may_ask() -> None:
    w = Workload(name='put', op='put', size='4KiB', concurrency=1024, duration_s=1,
                 warmup_s=0)
    assert 'rgw-queue-throttled' not in by_id(FakeView(), profile(w))


# -- before each workload of a run ------------------------------------------------------------

def test_before_each_workload_what_the_variant_changed_is_found_once() -> None:
    view = roomy(FakeView())
    w = Workload(name='put', op='put', size='4KiB', concurrency=100, duration_s=1, warmup_s=0)
    checks = RunChecks(view=view)
    kept = checks.before(profile(w, get()), force=False)
    assert [(f.id, f.workload) for f in kept] == [('working-set-in-cache', 'get-4KiB'),
                                                  ('capacity-estimate', None)]
    # the same as before the start: not kept again
    checks.between(kept, variant='v', workload='get-4KiB', force=False, planned=get())
    assert len(kept) == 2
    # the variant lowered what RGW admits: found before the workload, with it
    view.set('client.rgw', 'rgw_max_concurrent_requests', '64')
    checks.between(kept, variant='v', workload='put', force=False, planned=w)
    (new,) = kept[2:]
    assert (new.id, new.variant, new.workload) == ('rgw-queue-throttled', 'v', 'put')


# -- working sets sized from the caches ------------------------------------------------------

def sized_checks(view: FakeView, seconds: float = 300.0) -> RunChecks:
    return RunChecks(view=view, prefill_time=lambda: seconds)


def test_a_get_that_names_no_objects_reads_twice_the_caches_where_the_pool_has_room() -> None:
    view = roomy(FakeView())
    sized = sized_checks(view).sized(get('4MiB'), agents=2)
    # 3 OSDs of 4 GiB targets: 24 GiB in objects of 4 MiB, over both agents
    assert sized.objects == 6144
    # and the checks count that working set: out of the caches, in the estimate
    found = {f.id: f for f in sized_checks(view).now(profile(get('4MiB')))}
    assert 'working-set-in-cache' not in found
    assert '24.0 GiB' in ' '.join(found['capacity-estimate'].evidence)
    # without sizing, the engine's default (256 objects of 4 MiB per agent) fits in them
    assert 'working-set-in-cache' in by_id(view, profile(get('4MiB')))


def test_a_sized_working_set_takes_at_most_half_the_room_and_none_if_it_stays_cached() -> None:
    view = roomy(FakeView())
    for stats in view.stats:  # 40 GiB OSDs, 2 GiB used: room for less than twice the caches
        stats.update(kb=40 * GIB_KB, kb_used=2 * GIB_KB, kb_avail=38 * GIB_KB)
    sized = sized_checks(view).sized(get('4MiB'), agents=1)
    assert sized.objects is not None and 12 * GiB < sized.objects * (4 << 20) < 24 * GiB
    for stats in view.stats:  # 10 GiB OSDs: whatever fits stays in the caches
        stats.update(kb=10 * GIB_KB, kb_used=1 * GIB_KB, kb_avail=9 * GIB_KB)
    assert sized_checks(view).sized(get('4MiB'), agents=1).objects is None


def test_named_objects_other_ops_and_a_prefill_time_of_0_are_left_as_they_are() -> None:
    view = roomy(FakeView())
    assert sized_checks(view).sized(get('4MiB', objects=10), agents=1).objects == 10
    put = Workload(name='put', op='put', size='4MiB', duration_s=1, warmup_s=0)
    assert sized_checks(view).sized(put, agents=1) == put
    assert sized_checks(view, 0.0).sized(get('4MiB'), agents=1).objects is None
    # Only a working set sized here has its prefill bounded in time: one named is
    # written whole (a load with --objects 200 after the option was set to 1 s wrote 119).
    assert sized_checks(view, 1.0).as_run(get('4MiB', objects=200), agents=1) == (
        get('4MiB', objects=200), 0.0)
    assert sized_checks(view, 1.0).as_run(put, agents=1) == (put, 0.0)
    sized, prefill_s = sized_checks(view, 1.0).as_run(get('4MiB'), agents=1)
    assert sized.objects and prefill_s == 1.0
    assert 'working-set-in-cache' in {f.id for f in sized_checks(view, 0.0).now(
        profile(get('4MiB')))}
