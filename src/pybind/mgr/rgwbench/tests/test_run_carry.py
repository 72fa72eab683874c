"""Settings a run's next variant keeps are not put back and applied again between them;
the journal still puts everything back after a failure, and the record counts the OSDs
restarted."""
from typing import Any, Dict, List, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster
from rgwbench.tests.run_fakes import Setup
from rgwbench.tests.settings_fakes import applier

from rgwbench.serial import dump
from rgwbench.settings.journal import Journal
from rgwbench.tests.s3stub import StubS3
from rgwbench.runs.plan_text import run_plan_to_text

SECURE = {'msgr2-secure': 'on'}
THREADS = {'config': {'client.rgw/rgw_thread_pool_size': 256}}
# the fake cluster's two OSDs, each restarted once per rolling restart
OSDS = 2


def variants(*settings: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{'name': 'v%d' % i, 'settings': dict(s)} for i, s in enumerate(settings)]


def run(s: Setup, profile: Any) -> Dict[str, Any]:
    run_id = s.engine.start(profile)
    s.engine.wait(180)
    return dump(s.results.load(run_id))


def osd_restart_calls(s: Setup) -> int:
    return sum(1 for call in s.cluster.calls if call == 'restart osd')


@pytest.mark.parametrize('settings, rolling', [
    # as-is, then two variants with msgr2 secure: applied once, put back once
    ([{}, SECURE, dict(SECURE, **THREADS)], 2),
    # as-is, msgr2, as-is, msgr2: each variant starts from the cluster as it was
    ([{}, SECURE, {}, SECURE], 4),
    # msgr2 in the first and the last only: put back for the middle one
    ([SECURE, THREADS, SECURE], 4),
])
def test_a_setting_two_variants_share_is_applied_once_and_the_count_says_so(
        stub: StubS3, certificate: Tuple[str, str], settings: List[Dict[str, Any]],
        rolling: int) -> None:
    s = Setup(stub, certificate)
    profile = s.profile(baseline='v0', variants=variants(*settings))
    plan = s.engine.plan(profile)
    assert plan['osd_restarts'] == rolling * OSDS
    assert 'OSD restarts: %d' % (rolling * OSDS) in run_plan_to_text(plan)
    record = run(s, profile)
    assert record['state'] == 'complete', record['error']
    assert record['osd_restarts'] == rolling * OSDS == s.cluster.osd_restarted
    assert osd_restart_calls(s) == rolling
    assert set(s.cluster.config) == {('global', 'fsid_like')}   # all put back
    assert Journal.unfinished(s.store) is None


def test_the_plan_and_the_record_say_what_a_variant_keeps(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    profile = s.profile(baseline='v0', variants=variants({}, SECURE, dict(SECURE, **THREADS)))
    plan = s.engine.plan(profile)
    kept = plan['variants'][2]
    assert kept['kept'] == ['msgr2-secure']
    summaries = [c['summary'] for p in kept['changes'] for c in p['changes']]
    assert summaries == ['ceph config set client.rgw rgw_thread_pool_size 256',
                         'ceph orch restart rgw.default']
    assert '  - keeps msgr2-secure as the variant before left it' in run_plan_to_text(plan)
    record = run(s, profile)
    secure = [(c['kind'], c['target'], c['state']) for c in record['variants'][1]['changes']]
    # made by v1, kept through v2, put back after it
    assert ('config', 'osd/ms_cluster_mode', 'undone') in secure
    assert ('restart', 'osd', 'undone') in secure
    threads = [c['target'] for c in record['variants'][2]['changes']]
    assert 'osd/ms_cluster_mode' not in threads and \
        'client.rgw/rgw_thread_pool_size' in threads


def test_interleaved_rounds_keep_what_consecutive_applications_share(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    # v0 v1 v0 v1: both have msgr2 secure, so it stays from the first to the last
    profile = s.profile(baseline='v0', order='interleaved', repeats=2,
                        variants=variants(SECURE, dict(SECURE, **THREADS)))
    assert s.engine.plan(profile)['osd_restarts'] == 2 * OSDS
    record = run(s, profile)
    assert record['state'] == 'complete', record['error']
    assert osd_restart_calls(s) == 2 and record['osd_restarts'] == 2 * OSDS
    # the thread pool went and came back each round
    assert s.cluster.calls.count('config client.rgw/rgw_thread_pool_size=256') == 2
    assert set(s.cluster.config) == {('global', 'fsid_like')}


def test_a_failure_mid_way_puts_back_what_was_kept_too(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.cluster.fail_on = 'config client.rgw/rgw_thread_pool_size=256'
    profile = s.profile(baseline='v0', variants=variants(
        SECURE, dict(SECURE, **THREADS), SECURE))
    record = run(s, profile)
    assert record['state'] == 'failed'
    assert 'rgw_thread_pool_size=256 failed' in record['variants'][1]['error']
    # v1 failed: everything, v0's msgr2 secure too, went back before v2 applied it anew
    restarts_and_secure = [c for c in s.cluster.calls
                           if c == 'restart osd' or c.startswith('config osd/ms_cluster_mode')]
    assert restarts_and_secure == [
        'config osd/ms_cluster_mode=secure', 'restart osd',     # v0
        'config osd/ms_cluster_mode=None', 'restart osd',       # v1's failure
        'config osd/ms_cluster_mode=secure', 'restart osd',     # v2
        'config osd/ms_cluster_mode=None', 'restart osd']       # the end
    assert record['osd_restarts'] == 4 * OSDS
    assert set(s.cluster.config) == {('global', 'fsid_like')}
    assert Journal.unfinished(s.store) is None


def test_a_kept_setting_sharing_a_target_with_one_that_goes_goes_too() -> None:
    a = applier(FakeCluster())
    in_place = a.plan({'rgw-per-host': '2', 'msgr2-secure': 'on'})
    carry = a.carry(in_place, {'msgr2-secure': 'on'})
    assert carry.kept == ('msgr2-secure',)
    assert carry.put_back == {('service', 'rgw.default')} and carry.owed == ()
    # config's spec-free options share nothing with the RGW spec: both stay
    both = a.carry(in_place, {'rgw-per-host': 2, 'msgr2-secure': True})
    assert both.kept == ('rgw-per-host', 'msgr2-secure') and not both.put_back


def test_an_osd_restart_a_kept_setting_still_needs_is_journaled_again() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'j', about={})
    # msgr2 stays, the OSD option goes: the OSDs restart with msgr2 still secure, and
    # restart again when msgr2 goes in turn
    plans = a.plan({'config': 'osd/osd_op_num_shards:4', 'msgr2-secure': 'on'})
    a.apply(journal, plans)
    carry = a.carry(plans, {'msgr2-secure': 'on'})
    assert ('restart', 'osd') in carry.put_back and carry.owed == ('osd',)
    a.put_back_leaving(journal, carry)
    assert ('osd', 'osd_op_num_shards') not in cluster.config
    assert cluster.config[('osd', 'ms_cluster_mode')] == 'secure'
    assert cluster.calls.count('restart osd') == 2
    a.revert(journal)
    assert cluster.calls.count('restart osd') == 3
    assert set(cluster.config) == {('global', 'fsid_like')}
    assert Journal.unfinished(store) is None
