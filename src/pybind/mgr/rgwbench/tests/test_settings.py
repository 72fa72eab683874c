import copy
import json
import threading
from typing import Any, Dict, List, Optional, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.fixtures import RGW_SPEC, RUNTIME, FakeCluster
from rgwbench.tests.settings_fakes import applier, session, summaries
from rgwbench.tests.osd_fakes import OsdRestartMgr, pg_stat
from rgwbench.tests.rgw_restart_fakes import InstantRestartMgr

from rgwbench.errors import Busy, InvalidInput, NotFound, RGWBenchError
from rgwbench.cluster.fencing import Fenced
from rgwbench.settings.journal import Journal
from rgwbench.cluster.access import (APPLY_TRIES, ClusterAccess, GaveUp, NotReady, is_clean,
                                     pg_states, pgs_not_reported_since)
from rgwbench.settings.registry import parse_assignments


def test_settings_plan_in_order_and_restart_rgw_once_after_every_change() -> None:
    cluster = FakeCluster()
    plans = applier(cluster).plan(parse_assignments(
        ['msgr2-secure=on', 'config=client.rgw/rgw_thread_pool_size:128', 'rgw-per-host=2']))
    assert [p.setting for p in plans] == ['config', 'rgw-per-host', 'msgr2-secure']
    assert summaries(plans) == [
        'ceph config set client.rgw rgw_thread_pool_size 128',
        'ceph orch apply rgw.default with count_per_host 2',
        'ceph config set osd ms_cluster_mode secure',
        'ceph config set osd ms_service_mode secure',
        'ceph config set client.rgw ms_client_mode secure',
        'restart every OSD up and in, a host at a time where `osd ok-to-stop` allows it '
        '(else one at a time), with PGs active+clean before the next',
        'ceph orch restart rgw.default']
    assert cluster.calls == []  # planning changes nothing


def test_settings_already_in_place_plan_nothing() -> None:
    cluster = FakeCluster()
    cluster.config[('client.rgw', 'rgw_thread_pool_size')] = '128'
    plans = applier(cluster).plan({'config': {'client.rgw/rgw_thread_pool_size': 128},
                                   'rgw-per-host': '1', 'msgr2-secure': 'off'})
    assert summaries(plans) == []


def test_an_osd_option_that_updates_at_runtime_restarts_nothing() -> None:
    cluster = FakeCluster()
    RUNTIME['osd_max_backfills'] = True
    try:
        plans = applier(cluster).plan({'config': 'osd/osd_max_backfills:4'})
    finally:
        del RUNTIME['osd_max_backfills']
    assert summaries(plans) == ['ceph config set osd osd_max_backfills 4']
    plans = applier(cluster).plan({'config': 'osd/osd_op_num_shards:4'})
    assert summaries(plans)[-1].startswith('restart every OSD')


@pytest.mark.parametrize('settings, message', [
    ({'tls': 'on'}, 'unknown setting tls'),
    ({'msgr2-secure': 'maybe'}, "msgr2-secure: 'maybe' is not valid"),
    ({'rgw-per-host': '17'}, "rgw-per-host: '17' is not valid"),
    ({'rgw-per-host': 'two'}, "rgw-per-host: 'two' is not valid"),
    ({'config': 'client.rgw/rgw_thread_pool_size'}, 'write <who>/<option>:<value>'),
    ({'config': {'client.rgw/nope': 1}}, 'Ceph does not know this option'),
    ({'config': {'mds/x': 1}}, "config: 'mds/x' is not valid"),
    ({'config': {'osd/ms_cluster_mode': ''}}, 'must be a number or a word'),
])
def test_bad_settings_are_refused_naming_the_setting(settings: Dict[str, Any],
                                                     message: str) -> None:
    cluster = FakeCluster()
    with pytest.raises(InvalidInput) as e:
        applier(cluster).plan(settings)
    assert message in str(e.value)
    assert cluster.calls == []


@pytest.mark.parametrize('words', [['a'], ['=1'], ['a='], ['a=1', 'a=2']])
def test_assignments_must_be_name_equals_value_once(words: List[str]) -> None:
    with pytest.raises(InvalidInput):
        parse_assignments(words)


THREADS_128 = {'config': {'client.rgw/rgw_thread_pool_size': 128}}


@pytest.mark.parametrize('variants, alike', [
    ([{}, THREADS_128], True),                       # a config option RGW reads at start
    ([{}, {'rgw-per-host': '2'}], True),             # RGW's spec redeployed
    ([{}, {'msgr2-secure': 'on'}], True),
    ([{}, {'config': {'osd/osd_op_num_shards': 8}}], False),  # RGW not touched
    ([{}, {}], False),
    ([THREADS_128], False),                          # nothing to compare with
])
def test_rgw_restarts_for_every_variant_when_it_restarts_for_one(
        variants: List[Dict[str, Any]], alike: bool) -> None:
    a = applier(FakeCluster())
    assert a.alike_restarts(variants) is alike


@pytest.mark.parametrize('variants', [
    [{'config': {'client.rgw/no_such_option': 1}}],           # one variant alone
    [THREADS_128, {'config': {'client.rgw/no_such_option': 1}}],  # after one that restarts
])
def test_wrong_settings_in_any_variant_are_refused_by_the_restart_check(
        variants: List[Dict[str, Any]]) -> None:
    cluster = FakeCluster()
    with pytest.raises(InvalidInput, match='no_such_option'):
        applier(cluster).alike_restarts(variants)
    assert cluster.calls == []


def test_a_variant_that_leaves_rgw_running_restarts_it_once_when_asked() -> None:
    cluster = FakeCluster()
    a = applier(cluster)
    assert summaries(a.plan({}, restart_rgw=True)) == [
        'ceph orch restart rgw.default (nothing else changed)']
    assert summaries(a.plan({}, restart_rgw=False)) == []
    # a variant that restarts RGW already does not restart it twice
    assert summaries(a.plan(THREADS_128, restart_rgw=True)) == summaries(a.plan(THREADS_128))
    # a redeployed spec is restarted after, as a variant's own restart would be
    assert summaries(a.plan({'rgw-per-host': '2'}, restart_rgw=True)) == [
        'ceph orch apply rgw.default with count_per_host 2',
        'ceph orch restart rgw.default (nothing else changed)']
    store = MemoryStore()
    journal = Journal.open(store, 'j1')
    original = dict(cluster.config)
    a.apply(journal, a.plan({}, restart_rgw=True))
    a.revert(journal)
    # journaled like any restart: once applied, once put back; nothing else changed
    assert cluster.calls == ['restart rgw.default', 'restart rgw.default']
    assert cluster.config == original and Journal.unfinished(store) is None


def test_an_undo_of_a_spec_says_which_spec_it_puts_back_over() -> None:
    # What the run's spec left elsewhere (cephadm's certificate store) goes with it even
    # when the spec itself is already back (a crash came in between).
    cluster = FakeCluster()
    before = cluster.service_spec('rgw.default')
    a = applier(cluster)
    journal = Journal.open(MemoryStore(), 'j1')
    a.apply(journal, a.plan({'rgw-per-host': '2'}))
    made = cluster.service_spec('rgw.default')
    assert made != before
    cluster.replaced.clear()
    a.revert(journal)
    assert cluster.replaced == [('rgw.default', made)]
    assert cluster.service_spec('rgw.default') == before


def test_apply_verifies_on_the_daemons_and_revert_puts_back_restarting_last() -> None:
    cluster = FakeCluster()
    original = dict(cluster.config)
    store = MemoryStore()
    a = applier(cluster)
    plans = a.plan({'msgr2-secure': 'on', 'config': 'client.rgw/rgw_thread_pool_size:128'})
    journal = Journal.open(store, 'j1')
    a.apply(journal, plans)
    assert cluster.running[('osd.1', 'ms_cluster_mode')] == 'secure'
    assert cluster.running[('rgw.4100', 'rgw_thread_pool_size')] == '128'
    cluster.calls.clear()
    a.revert(journal)
    assert cluster.config == original
    assert cluster.calls[-2:] == ['restart rgw.default', 'restart osd']
    assert all(c.startswith('config') for c in cluster.calls[:-2])
    assert Journal.unfinished(store) is None


def test_a_setting_not_in_effect_on_the_daemons_fails_the_apply() -> None:
    cluster = FakeCluster()
    cluster.restart = lambda daemons: cluster.calls.append('restart %s' % daemons)  # type: ignore
    a = applier(cluster)
    journal = Journal.open(MemoryStore(), 'j2')
    with pytest.raises(InvalidInput, match='osd.0 runs with ms_cluster_mode = crc secure'):
        a.apply(journal, a.plan({'msgr2-secure': 'on'}))


def test_a_setting_the_mgr_reports_a_few_polls_late_is_in_effect() -> None:
    # Right after a restart the mgr may still show a daemon's value from before
    # (its config arrives with the daemon's reports): apply waits for it.
    cluster = FakeCluster()
    reads: List[str] = []
    running_config = cluster.running_config

    def late(daemon: str, option: str) -> Optional[str]:
        reads.append(daemon)
        return '512' if len(reads) <= 2 else running_config(daemon, option)
    cluster.running_config = late  # type: ignore
    a = applier(cluster)
    a.apply(Journal.open(MemoryStore(), 'j3'),
            a.plan({'config': 'client.rgw/rgw_thread_pool_size:128'}))
    assert reads == ['rgw.4100'] * 3


def test_every_change_is_journaled_before_it_is_made() -> None:
    cluster = FakeCluster()
    cluster.fail_on = 'config osd/ms_service_mode'
    store = MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'j3')
    with pytest.raises(RuntimeError):
        a.apply(journal, a.plan({'msgr2-secure': 'on'}))
    steps = journal.steps()
    assert [(s.target, s.state) for s in steps] == [('osd/ms_cluster_mode', 'made'),
                                                    ('osd/ms_service_mode', 'recorded')]
    cluster.fail_on = None
    a.revert(journal)
    assert ('osd', 'ms_cluster_mode') not in cluster.config
    assert ('osd', 'ms_service_mode') not in cluster.config


def test_one_failed_call_while_putting_back_does_not_leave_the_journal_open() -> None:
    cluster = FakeCluster()
    original = dict(cluster.config)
    store = MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'j4')
    a.apply(journal, a.plan({'msgr2-secure': 'on'}))
    put_config = cluster.put_config
    failed: List[str] = []

    def once(who: str, option: str, value: Optional[str]) -> None:
        if not failed:
            failed.append(option)
            raise RuntimeError('the orchestrator failed this call')
        put_config(who, option, value)
    cluster.put_config = once  # type: ignore
    a.revert(journal)
    assert failed and cluster.config == original
    assert Journal.unfinished(store) is None


def test_health_is_checked_before_anything_changes() -> None:
    cluster = FakeCluster()
    a = applier(cluster)
    assert a.precheck() == []
    cluster.health_status, cluster.unclean = 'HEALTH_ERR', '1 peering'
    problems = a.precheck()
    assert 'HEALTH_ERR (OSD_FULL)' in problems[0] and 'active+clean' in problems[1]
    assert a.precheck(force=True) == []
    cluster.rgws = []
    assert a.precheck(force=True) == ['no RGW daemon is in the service map']


BLOCKED = 'osd.0: unsafe to stop osd(s) at this time (57 PGs are or would become offline)'


def test_settings_that_restart_osds_are_refused_where_stopping_one_takes_pgs_offline() -> None:
    # The demo's one-OSD cluster: its ok-to-stop never allows a restart, and a change
    # let through waited 10 minutes for it, then as long again to be put back.
    cluster = FakeCluster()
    cluster.osd_blocker = BLOCKED
    a = applier(cluster)
    assert a.restart_osds([{}, {'msgr2-secure': 'on'}])
    assert not a.restart_osds([{}, {'config': {'client.rgw/rgw_thread_pool_size': 128}}])
    for force in (False, True):
        problems = a.precheck(force, restart_osds=True)
        assert len(problems) == 1 and 'restart every OSD' in problems[0] and \
            BLOCKED in problems[0], problems
    assert a.precheck(restart_osds=False) == []
    cluster.osd_blocker = None
    assert a.precheck(restart_osds=True) == []


def test_an_osd_restart_that_could_not_begin_is_not_journaled_nor_put_back() -> None:
    # A PG became offline-prone after the checks: no OSD stopped, so putting the
    # options back needs no restart (it waited 10 minutes for ok-to-stop again).
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    plans = a.plan({'msgr2-secure': 'on'})
    journal = Journal.open(store, 'j', about={})
    cluster.osd_blocker = BLOCKED
    with pytest.raises(NotReady, match='osd.0 to be ok to stop'):
        a.apply(journal, plans)
    assert 'restart' not in [s.kind for s in journal.steps()]
    a.revert(journal)
    assert not any(call.startswith('restart osd') for call in cluster.calls), cluster.calls
    assert set(cluster.config) == {('global', 'fsid_like')}
    assert Journal.unfinished(store) is None


def test_session_applies_in_a_thread_and_reverts_on_request() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    s = session(cluster, store)
    with pytest.raises(NotFound):
        s.show()
    assert s.in_place() is None
    journal_id = s.apply({'rgw-per-host': '2'})
    s.wait(120)
    assert s.in_place() == {'journal_id': journal_id, 'state': 'applied', 'progress': 'in place',
                            'settings': {'rgw-per-host': '2'}}
    assert not s.changing()
    shown = s.show()
    assert shown['journal_id'] == journal_id and shown['state'] == 'applied'
    assert [c['state'] for c in shown['changes']] == ['made']
    assert cluster.specs['rgw.default']['placement']['count_per_host'] == 2
    with pytest.raises(InvalidInput, match='nothing to change'):
        session(cluster, store).apply({'rgw-per-host': '2'})
    s.revert()
    s.wait(120)
    shown = s.show()
    assert shown['state'] == 'reverted' and shown['changes'][0]['state'] == 'undone'
    assert s.in_place() is None
    assert cluster.specs['rgw.default'] == RGW_SPEC
    with pytest.raises(NotFound, match='no settings are in place'):
        s.revert()


def test_session_refuses_while_settings_are_in_place_or_the_cluster_is_unhealthy() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    s = session(cluster, store)
    cluster.unclean = '2 undersized'
    with pytest.raises(Busy, match='not every PG is active[+]clean'):
        s.apply({'rgw-per-host': '2'})
    assert cluster.calls == [] and Journal.unfinished(store) is None
    cluster.unclean = None
    s.apply({'rgw-per-host': '2'})
    s.wait(120)
    with pytest.raises(Busy, match='not undone yet'):
        session(cluster, store).apply({'msgr2-secure': 'on'})


def test_session_refuses_settings_that_restart_osds_it_cannot_stop() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    cluster.osd_blocker = BLOCKED
    s = session(cluster, store)
    with pytest.raises(Busy, match='restart every OSD.*57 PGs'):
        s.apply({'msgr2-secure': 'on'}, force=True)
    assert cluster.calls == [] and Journal.unfinished(store) is None
    s.apply({'rgw-per-host': '2'})   # restarts no OSD
    s.wait(120)
    assert s.in_place() is not None


def test_a_failed_apply_puts_everything_back_and_says_why() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    cluster.fail_on = 'restart osd'
    s = session(cluster, store)
    s.apply({'msgr2-secure': 'on'})
    s.wait(120)
    shown = s.show()
    assert shown['state'] == 'failed' and 'restart osd failed' in shown['error']
    assert shown['progress'] == 'not everything could be put back; it is tried again when ' \
        'the module starts'  # the restart is also what undoing does
    cluster.fail_on = None
    s.recover(threading.Event())
    assert s.show()['state'] == 'failed' and s.show()['progress'] == \
        'put back after a mgr restart'
    assert not any(who == 'osd' for who, _ in cluster.config)
    assert Journal.unfinished(store) is None


def test_a_new_mgr_puts_back_what_the_old_one_left() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    old = session(cluster, store)
    old.apply({'msgr2-secure': 'on'})
    old.wait(120)
    assert old.show()['state'] == 'applied'
    new = session(cluster, store)  # the module of the new active mgr
    new.recover(threading.Event())
    shown = new.show()
    assert shown['state'] == 'reverted' and 'mgr restarted' in shown['error']
    assert set(cluster.config) == {('global', 'fsid_like')}
    assert cluster.calls[-2:] == ['restart rgw.default', 'restart osd']


def test_recovery_is_retried_until_everything_is_put_back() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    s = session(cluster, store)
    s.apply({'msgr2-secure': 'on'})
    s.wait(120)
    cluster.fail_on = 'config'
    stopping = threading.Event()
    attempts: List[float] = []

    def wait(seconds: float) -> bool:
        attempts.append(seconds)
        cluster.fail_on = None  # the mon answers again
        return False
    stopping.wait = wait  # type: ignore
    s.recover(stopping, retry_s=3)
    assert attempts == [3] and Journal.unfinished(store) is None
    assert s.show()['state'] == 'reverted'


def test_pg_states_sum_over_pools() -> None:
    assert pg_states({'by_pool': {'1': {'active+clean': 8},
                                  '2': {'active+clean': 7, 'peering': 1}}}) == {
        'active+clean': 15, 'peering': 1}


def test_pgs_being_scrubbed_or_trimmed_are_clean_and_any_missing_copy_is_not() -> None:
    assert is_clean('active+clean') and is_clean('active+clean+scrubbing')
    assert is_clean('active+clean+scrubbing+deep') and is_clean('active+clean+snaptrim_wait')
    for state in ('active+undersized+degraded', 'active+clean+remapped', 'peering',
                  'active+recovering', 'active+clean+inconsistent', 'clean', 'stale+active+clean'):
        assert not is_clean(state), state


class PGSummaryMgr:
    def __init__(self, by_pool: Dict[str, Dict[str, int]]) -> None:
        self.by_pool = by_pool

    def get(self, data_name: str) -> Any:
        assert data_name == 'pg_summary'
        return {'by_pool': self.by_pool}


def test_a_restart_waits_for_no_scrub_but_for_every_pg_not_clean() -> None:
    def access(by_pool: Dict[str, Dict[str, int]]) -> ClusterAccess:
        return ClusterAccess(PGSummaryMgr(by_pool), lambda found: found,  # type: ignore
                             lambda spec: spec)
    assert access({'1': {'active+clean': 31, 'active+clean+scrubbing': 1}}
                  ).pgs_not_clean() is None
    assert access({'1': {'active+clean+scrubbing+deep': 2, 'active+undersized': 3},
                   '2': {'active+undersized': 1, 'active+clean': 0}}
                  ).pgs_not_clean() == 'PGs 4 active+undersized'


def test_pgs_of_an_osd_count_only_once_reported_since_it_came_back() -> None:
    stats = {'pg_stats': [pg_stat('1.0', [0, 1], 40), pg_stat('1.1', [1, 2], 30),
                          pg_stat('2.0', [2, 0], 41)]}
    assert pgs_not_reported_since(stats, 0, 41) == (
        '1 PGs of osd.0 not reported since it came back at epoch 41 (1.0)')
    assert pgs_not_reported_since(stats, 0, 40) is None
    assert pgs_not_reported_since(stats, 3, 99) is None   # no PG of its


def test_the_next_osd_restarts_only_once_the_pgs_reported_since_the_last_came_back() -> None:
    mgr = OsdRestartMgr(stale_reads=3)
    cluster = ClusterAccess(mgr, lambda found: found, lambda spec: spec,  # type: ignore
                            timeout_s=60, clock=lambda: 0.0, sleep=lambda s: None)
    cluster.restart_osds()
    assert mgr.stale_when_restarted == [0, 0]
    assert mgr.reported == mgr.epoch


class FailedOverDuringRestartMgr(OsdRestartMgr):
    """The mgr `x`, failed over (the mgr map names `y`) while it restarted osd.0."""

    def __init__(self) -> None:
        super().__init__(stale_reads=0)
        self.active = 'x'

    def get_mgr_id(self) -> str:
        return 'x'

    def daemon_action(self, action: str, daemon_name: str, image: Optional[str] = None) -> None:
        super().daemon_action(action, daemon_name, image)
        self.active = 'y'

    def get(self, data_name: str) -> Any:
        if data_name == 'mgr_map':
            return {'epoch': 20, 'active_name': self.active}
        return super().get(data_name)


def test_a_mgr_failed_over_mid_way_through_the_osd_restarts_restarts_no_other() -> None:
    mgr = FailedOverDuringRestartMgr()
    cluster = ClusterAccess(mgr, lambda found: found, lambda spec: spec,  # type: ignore
                            timeout_s=60, clock=lambda: 0.0, sleep=lambda s: None)
    # it stops at its next wait (osd.0's PGs back) or before restarting osd.1
    with pytest.raises(Fenced, match='no longer the active mgr .* (restart osd.1|wait for)'):
        cluster.restart_osds()
    assert mgr.restarted == ['osd.0']


class FailedOverWhileWaitingMgr:
    """The mgr `x`; the mgr map names `y` from the moment `fail_over` is called."""

    def __init__(self) -> None:
        self.active = 'x'

    def get_mgr_id(self) -> str:
        return 'x'

    def get(self, data_name: str) -> Any:
        assert data_name == 'mgr_map'
        return {'epoch': 20, 'active_name': self.active}


def test_a_mgr_failed_over_while_it_waits_stops_waiting_and_checks_nothing_more() -> None:
    mgr = FailedOverWhileWaitingMgr()
    cluster = ClusterAccess(mgr, lambda found: found, lambda spec: spec,  # type: ignore
                            timeout_s=60, clock=lambda: 0.0, sleep=lambda s: None)
    checks: List[int] = []

    def check() -> Optional[str]:
        checks.append(1)
        if len(checks) == 2:
            mgr.active = 'y'   # failed over while this mgr slept between two polls
        return 'the daemon is not back'
    with pytest.raises(Fenced, match='mgr x is no longer the active mgr .y is.: it does not '
                                     'wait for the daemon'):
        cluster.wait_for('the daemon', check)
    assert len(checks) == 2


def test_a_restart_that_is_done_before_it_returns_is_not_waited_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
    monkeypatch.setattr('rgwbench.cluster.access.answers', lambda url: None)
    cluster = ClusterAccess(InstantRestartMgr(), lambda found: found,  # type: ignore
                            lambda spec: spec, timeout_s=600, clock=lambda: now[0],
                            sleep=sleep)
    cluster.restart('rgw.default')
    assert now[0] < 5


def test_a_wait_ends_as_soon_as_its_waiter_gives_up() -> None:
    # The fake cluster of the run tests waits its own way: this is the real wait an
    # abort cuts short (an OSD restart's, say), not one that runs to its time-out.
    now = [0.0]
    aborted = threading.Event()

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] > 30:
            aborted.set()
    cluster = ClusterAccess(InstantRestartMgr(), lambda found: found,  # type: ignore
                            lambda spec: spec, timeout_s=600, clock=lambda: now[0],
                            sleep=sleep)
    with cluster.giving_up_when(aborted.is_set):
        with pytest.raises(GaveUp, match='osd.1 to restart'):
            cluster.wait_for('osd.1 to restart', lambda: 'still down')
    assert 30 < now[0] < 60
    cluster.wait_for('nothing', lambda: None)  # outside, a given-up wait is over


def test_settings_revert_does_not_race_the_recovery_loop() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    old = session(cluster, store)
    old.apply({'rgw-per-host': '2'})
    old.wait(120)   # a cap only
    assert old.show()['state'] == 'applied' and cluster.calls == ['service rgw.default']
    s = session(cluster, store)   # the new mgr's module: serve() recovers, a user reverts
    in_put, release = threading.Event(), threading.Event()
    put_service = cluster.put_service

    def slow_put_service(service_name: str, spec: Optional[Dict[str, Any]],
                         replaced: Optional[Dict[str, Any]] = None) -> None:
        in_put.set()
        release.wait(120)   # a cap only: set as soon as the revert was refused
        put_service(service_name, spec, replaced)
    cluster.put_service = slow_put_service  # type: ignore
    recovery = threading.Thread(target=s.recover, args=(threading.Event(),))
    recovery.start()
    assert in_put.wait(120)
    try:
        with pytest.raises(Busy, match='putting the settings back already'):
            s.revert()
    finally:
        release.set()
        recovery.join(120)
        s.wait(120)
    assert cluster.calls == ['service rgw.default', 'service rgw.default']  # apply, undo
    assert s.show()['state'] == 'reverted' and Journal.unfinished(store) is None


def test_settings_whose_state_is_too_large_for_the_store_change_nothing() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    huge = {'client.rgw/rgw_thread_pool_size': '1' * 70000}
    with pytest.raises(RGWBenchError, match='more than'):
        session(cluster, store).apply({'config': huge})
    assert cluster.calls == [] and Journal.unfinished(store) is None
    assert 'settings/state' not in store.data


def test_a_fenced_mgr_makes_no_change() -> None:
    class Mgr(MemoryStore):
        def __init__(self, data: Dict[str, str], name: str) -> None:
            super().__init__()
            self.data, self.name = data, name

        def get_mgr_id(self) -> str:
            return self.name

        def get(self, data_name: str) -> Any:
            return {'epoch': 3, 'active_name': self.name}   # each still thinks it is active
    cluster = FakeCluster()
    data: Dict[str, str] = {}
    a = applier(cluster)
    plans = a.plan({'rgw-per-host': '2'})
    journal = Journal.open(Mgr(data, 'a'), 'settings-1')
    taken = Journal.unfinished(Mgr(data, 'b'))
    assert taken is not None
    taken.claim()   # mgr b took over while mgr a hung
    with pytest.raises(Fenced, match='belongs to mgr b'):
        a.apply(journal, plans)
    with pytest.raises(Fenced):
        a.revert(journal)
    assert cluster.calls == []


class TypedHelp(FakeCluster):
    """`config help` with the type and bounds Ceph gives its options."""

    def command_json(self, **cmd: Any) -> Any:
        found = dict(super().command_json(**cmd))
        if cmd['key'] == 'rgw_thread_pool_size':
            found.update(type='int', min='', max='')
        if cmd['key'] == 'osd_op_num_shards':
            found.update(type='uint', min=1, max=64)
        return found


@pytest.mark.parametrize('value, message', [
    ('9' * 400, "config: rgw_thread_pool_size: '99999999999999999999...' is out of range"),
    ('many', "config: rgw_thread_pool_size: 'many' is not a whole number"),
    ('1.5', "config: rgw_thread_pool_size: '1.5' is not a whole number"),
])
def test_a_numeric_option_out_of_its_type_or_range_is_refused_by_the_plan(
        value: str, message: str) -> None:
    cluster = TypedHelp()
    with pytest.raises(InvalidInput, match=message.replace('.', r'\.').replace('(', r'\(')):
        applier(cluster).plan({'config': {'client.rgw/rgw_thread_pool_size': value}})
    for shards, ok in (('0', False), ('-1', False), ('65', False), ('64', True), ('8', True)):
        if ok:
            applier(cluster).plan({'config': {'osd/osd_op_num_shards': shards}})
        else:
            with pytest.raises(InvalidInput, match='is out of range'):
                applier(cluster).plan({'config': {'osd/osd_op_num_shards': shards}})


class SpecMgr:
    """An orchestrator that keeps the specs it is given and the actions it is asked."""

    def __init__(self, specs: List[Dict[str, Any]]) -> None:
        self.specs = {self.name(s): s for s in specs}
        self.calls: List[Tuple[str, str]] = []

    @staticmethod
    def name(spec: Dict[str, Any]) -> str:
        return '%s.%s' % (spec['service_type'], spec['service_id'])

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any:
        return [type('Described', (), {'spec': type('Spec', (), {
            'to_json': lambda self, s=s: copy.deepcopy(s)})()})() for s in self.specs.values()]

    def apply(self, specs: List[Dict[str, Any]]) -> None:
        for spec in specs:
            self.specs[self.name(spec)] = spec
            self.calls.append(('apply', self.name(spec)))

    def service_action(self, action: str, service_name: str) -> None:
        self.calls.append((action, service_name))

    def get(self, data_name: str) -> Any:
        return {'epoch': 1, 'services': {}}     # no RGW registered

    def list_daemons(self, service_name: Optional[str] = None, **kwargs: Any) -> Any:
        return []


class LateRedeployMgr(InstantRestartMgr):
    """cephadm: it redeploys an RGW by itself when the container arguments of its spec
    change, and does an `orch redeploy` it accepted later, in its serve loop, while the
    old daemons go on serving as before."""

    def __init__(self) -> None:
        super().__init__(count=2)
        self.spec: Dict[str, Any] = {'service_type': 'rgw', 'service_id': 'default', 'spec': {}}
        self.reads = 0
        self.due: List[int] = []          # the service-map read at which a redeploy is done
        self.calls: List[str] = []

    def get(self, data_name: str) -> Any:
        self.reads += 1
        while self.due and self.due[0] <= self.reads:
            self.due.pop(0)
            self.generation += 1
        return super().get(data_name)

    def apply(self, specs: List[Dict[str, Any]]) -> None:
        if specs[0].get('extra_container_args') != self.spec.get('extra_container_args'):
            self.due.append(self.reads + 5)
        self.spec = specs[0]

    def service_action(self, action: str, service_name: str) -> None:
        self.calls.append('%s %s' % (action, service_name))
        self.due.append(self.reads + 5)

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any:
        spec = type('Spec', (), {'service_type': 'rgw', 'ssl': False,
                                 'to_json': lambda _, s=self.spec: copy.deepcopy(s)})()
        return [type('Described', (), {'size': len(self.names), 'spec': spec})()]


def test_an_rgw_spec_change_waits_for_cephadms_own_redeploy_or_asks_for_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr('rgwbench.cluster.access.answers', lambda url: None)
    mgr = LateRedeployMgr()
    cluster = ClusterAccess(mgr, lambda found: found, SpecJSON,  # type: ignore[arg-type]
                            sleep=lambda seconds: None)
    # container arguments only: cephadm redeploys by itself, and is not asked twice
    cluster.put_service('rgw.default', dict(mgr.spec, extra_container_args=['--cpus=1']))
    assert mgr.generation == 1 and mgr.calls == []
    # anything else: redeployed when asked, and waited for
    cluster.put_service('rgw.default', dict(mgr.spec, spec={'rgw_frontend_port': 8080}))
    assert mgr.generation == 2 and mgr.calls == ['redeploy rgw.default']


def test_a_changed_rgw_spec_is_followed_by_a_redeploy_as_cephadm_needs() -> None:
    rgw = {'service_type': 'rgw', 'service_id': 'default', 'spec': {'ssl': False}}
    ingress = {'service_type': 'ingress', 'service_id': 'rgw.default', 'spec': {}}
    mgr = SpecMgr([rgw, ingress])
    cluster = ClusterAccess(mgr, lambda found: found, SpecJSON)  # type: ignore[arg-type]
    cluster.wait_service = lambda service_name: None  # type: ignore[method-assign]
    cluster.put_service('rgw.default', dict(rgw, spec={'ssl': True}))
    assert mgr.calls == [('apply', 'rgw.default'), ('redeploy', 'rgw.default')]
    del mgr.calls[:]
    cluster.put_service('rgw.default', dict(rgw, spec={'ssl': True}))   # the same again
    cluster.put_service('ingress.rgw.default', dict(ingress, spec={'frontend_port': 443}))
    cluster.put_service('rgw.other', dict(rgw, service_id='other'))     # a new service
    assert mgr.calls == [('apply', 'rgw.default'), ('apply', 'ingress.rgw.default'),
                         ('apply', 'rgw.other')]


def test_a_replaced_spec_is_told_to_what_cleans_up_after_cephadm_only() -> None:
    rgw = {'service_type': 'rgw', 'service_id': 'default', 'spec': {'ssl': True}}
    told: List[Any] = []

    def replaced(old: Any, new: Any, service_name: str, orch: Any, mgr: Any,
                 log: Any) -> List[str]:
        told.append((old, new, service_name))
        return []
    for backend in ('cephadm', 'test_orchestrator'):
        mgr = SpecMgr([rgw])
        cluster = ClusterAccess(mgr, lambda found: found, SpecJSON,  # type: ignore[arg-type]
                                spec_replaced=replaced)
        cluster.wait_service = lambda service_name: None  # type: ignore[method-assign]
        cluster.backend = lambda b=backend: b  # type: ignore[method-assign,misc]
        cluster.put_service('rgw.default', dict(rgw, spec={'ssl': False}))
        cluster.put_service('rgw.other', dict(rgw, service_id='other'))     # a new service
        # An undo after a crash: the spec is back already, the one it replaced is named.
        cluster.put_service('rgw.default', dict(rgw, spec={'ssl': False}), replaced=rgw)
    plain = dict(rgw, spec={'ssl': False})
    assert told == [(rgw, plain, 'rgw.default'), (plain, plain, 'rgw.default'),
                    (rgw, plain, 'rgw.default')]


class OverwritingSpecMgr(SpecMgr):
    """cephadm configuring a service with the spec it read before an apply: it saves that
    one back over the applied spec, `overwrites` times."""

    def __init__(self, specs: List[Dict[str, Any]], overwrites: int) -> None:
        super().__init__(specs)
        self.overwrites = overwrites

    def apply(self, specs: List[Dict[str, Any]]) -> None:
        read_before = dict(self.specs)
        super().apply(specs)
        if self.overwrites:
            self.overwrites -= 1
            self.specs = read_before


def test_a_spec_the_orchestrator_overwrote_with_the_one_before_is_applied_again() -> None:
    rgw = {'service_type': 'rgw', 'service_id': 'default', 'spec': {'ssl': False}}
    tls = dict(rgw, spec={'ssl': True})
    mgr = OverwritingSpecMgr([rgw], overwrites=1)
    cluster = ClusterAccess(mgr, lambda found: found, SpecJSON)  # type: ignore[arg-type]
    cluster.wait_service = lambda service_name: None  # type: ignore[method-assign]
    cluster.put_service('rgw.default', tls)
    assert mgr.specs['rgw.default'] == tls
    assert mgr.calls == [('apply', 'rgw.default'), ('redeploy', 'rgw.default')] * 2
    # One that keeps doing it: the setting fails, saying why.
    mgr = OverwritingSpecMgr([rgw], overwrites=APPLY_TRIES)
    cluster = ClusterAccess(mgr, lambda found: found, SpecJSON)  # type: ignore[arg-type]
    cluster.wait_service = lambda service_name: None  # type: ignore[method-assign]
    with pytest.raises(NotReady, match='kept putting back an older spec of rgw.default'):
        cluster.put_service('rgw.default', tls)
    assert len(mgr.calls) == 2 * APPLY_TRIES


def test_a_spec_someone_else_changed_during_the_apply_is_not_applied_over() -> None:
    rgw = {'service_type': 'rgw', 'service_id': 'default', 'spec': {'ssl': False}}
    theirs = dict(rgw, spec={'ssl': False, 'rgw_frontend_port': 8081})

    class OperatorApplies(SpecMgr):
        def apply(self, specs: List[Dict[str, Any]]) -> None:
            super().apply(specs)
            self.specs['rgw.default'] = theirs    # an operator's apply, right after ours
    mgr = OperatorApplies([rgw])
    cluster = ClusterAccess(mgr, lambda found: found, SpecJSON)  # type: ignore[arg-type]
    cluster.wait_service = lambda service_name: None  # type: ignore[method-assign]
    with pytest.raises(NotReady, match='changed by someone else during the apply'):
        cluster.put_service('rgw.default', dict(rgw, spec={'ssl': True}))
    assert mgr.specs['rgw.default'] == theirs
    assert mgr.calls == [('apply', 'rgw.default'), ('redeploy', 'rgw.default')]


class SpecJSON(dict):
    """A spec as the orchestrator reads it from JSON, naming its service."""

    def service_name(self) -> str:
        return SpecMgr.name(self)


class OsdServicesMgr(SpecMgr):
    """cephadm or another backend, with OSD services as given, every OSD ok to stop."""

    def __init__(self, backend: str, specs: List[Dict[str, Any]]) -> None:
        super().__init__(specs)
        self.backend = backend

    def remote(self, module: str, method: str, *args: Any) -> Any:
        assert (module, method) == ('orchestrator', '_select_orchestrator')
        return self.backend

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any:
        return [d for d, s in zip(super().describe_service(), self.specs.values())
                if service_type in (None, s['service_type'])]

    def mon_command(self, cmd: Dict[str, Any], inbuf: str = '') -> Tuple[int, str, str]:
        if cmd['prefix'] == 'osd dump':
            return 0, json.dumps({'osds': [{'osd': 0}, {'osd': 1}]}), ''
        assert cmd['prefix'] == 'osd ok-to-stop'
        return 0, '', ''


def test_osds_of_an_unmanaged_service_are_not_restarted_through_cephadm() -> None:
    osd = {'service_type': 'osd', 'service_id': 'default', 'unmanaged': True}

    def blocker(backend: str, *specs: Dict[str, Any]) -> Optional[str]:
        mgr = OsdServicesMgr(backend, list(specs))
        return ClusterAccess(mgr, lambda found: found,  # type: ignore[arg-type]
                             SpecJSON).osd_restart_blocker()
    assert blocker('cephadm', osd, dict(osd, service_id='fast', unmanaged=False)) == (
        'cephadm restarts no daemon of an unmanaged service (osd.default); make it managed '
        '(its spec applied without unmanaged, where it adds no OSD you do not want) or '
        'leave out the settings that restart OSDs')
    assert blocker('cephadm', dict(osd, unmanaged=False)) is None
    assert blocker('test_orchestrator', osd) is None   # it restarts them all the same


class NoConfigYet(FakeCluster):
    """A daemon restarted a moment ago: the mgr holds no config of its new name for the
    first looks (`config show` fails)."""

    def __init__(self, looks: int) -> None:
        super().__init__()
        self.looks = looks

    def running_config(self, daemon: str, option: str) -> Optional[str]:
        if self.looks > 0:
            self.looks -= 1
            raise RGWBenchError('`config show` failed: no config state for daemon %s' % daemon)
        return 'secure'


def test_msgr2_secure_is_checked_again_while_a_daemon_has_no_config_yet() -> None:
    """Seen on a 3-host cluster: the check right after RGW's restart failed the variant."""
    from rgwbench.settings.daemon_settings import Msgr2Secure
    cluster = NoConfigYet(looks=2)
    Msgr2Secure().verify(applier(cluster).ctx, True)
    assert cluster.looks == 0
