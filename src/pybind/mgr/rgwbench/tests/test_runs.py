"""The run engine with a fake cluster, agents as threads and the S3 stub."""
import logging
import threading
import time
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

import pytest
from rgwbench.tests.agent_fakes import ThreadLauncher
from rgwbench.tests.run_fakes import Setup
from rgwbench.tests.settings_fakes import applier

from rgwbench.serial import dump, load
from rgwbench.cluster.credentials import CredentialStore
from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.settings.journal import Journal
from rgwbench.tests.s3stub import StubS3
from rgwbench.results.model import Run
from rgwbench.runs.plan_text import run_plan_to_text
from rgwbench.settings.session import SettingsSession


def test_a_run_measures_every_variant_and_puts_every_setting_back(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    original = dict(s.cluster.config)
    saved: List[Dict[str, Any]] = []
    save = s.results.save

    def keep(run: Run) -> Dict[str, Any]:
        saved.append(dump(run))
        return save(run)
    s.results.save = keep  # type: ignore[method-assign]
    run_id = s.engine.start(s.profile())
    with pytest.raises(Busy, match=run_id):
        s.engine.start(s.profile())
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    # While it ran, each save carried the comparison of what was measured so far (the
    # tables of a running run compute none): none before threads measured, then its row.
    running = [r for r in saved if r['state'] == 'running']
    measured = [r for r in running if len(r['variants']) == 2 and r['variants'][1]['workloads']]
    assert measured and all([(c['variant'], c['workload']) for c in r['comparison']]
                            == [('threads', 'put-4KiB')] for r in measured)
    assert all(r['comparison'] == [] for r in running if r not in measured)
    assert record['state'] == 'complete', record['error']
    assert [v['name'] for v in record['variants']] == ['as-is', 'threads']
    for variant in record['variants']:
        (workload,) = variant['workloads']
        assert workload['ops'] > 0 and workload['errors'] == 0 and workload['error'] is None
        assert workload['latency_ms']['p50'] > 0 and 'histogram' in workload
    assert record['variants'][1]['changes'] == [
        {'kind': 'config', 'target': 'client.rgw/rgw_thread_pool_size', 'state': 'undone',
         'error': None},
        {'kind': 'restart', 'target': 'rgw.default', 'state': 'undone', 'error': None}]
    # as-is changes nothing, yet RGW restarts for it as for threads: both are measured
    # on RGW daemons just started
    assert record['variants'][0]['changes'] == [
        {'kind': 'restart', 'target': 'rgw.default', 'state': 'undone', 'error': None}]
    assert s.cluster.config == original and Journal.unfinished(s.store) is None
    (row,) = record['comparison']
    assert row['variant'] == 'threads' and row['workload'] == 'put-4KiB'
    # what the cluster was told: progress naming the change, then the end
    assert ('update', 'variant threads, workload put-4KiB',
            'ceph config set client.rgw rgw_thread_pool_size 128 / '
            'ceph orch restart rgw.default') in s.events.seen
    assert s.events.seen[-1] == ('finished', 'complete')
    assert s.engine.active() is None
    # the workload's buckets are gone; every agent was removed
    assert not any(stub.buckets.values()) and all(lc.removed for lc in s.launchers)
    assert len(s.launchers) == 2


def test_a_concurrency_per_rgw_scales_with_each_variants_rgw_daemons(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    counts = [1, 3]   # the RGW daemons the service has as each variant starts
    s = Setup(stub, certificate, rgw_daemons=lambda: counts.pop(0))
    run_id = s.engine.start(s.profile(variants=[
        {'name': 'one', 'settings': {}}, {'name': 'three', 'settings': {}}],
        baseline='one', workloads=[{'op': 'put', 'size': '4KiB', 'concurrency_per_rgw': 2,
                                    'duration': 1, 'warmup': 0}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    assert [[(w['concurrency'], sum(t['workers'] for t in w['targets']))
             for w in v['workloads']] for v in record['variants']] == [[(2, 2)], [(6, 6)]]
    assert counts == []


def test_each_variant_loads_every_rgw_it_runs(
        stub: StubS3, second_stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate, more_rgws=[second_stub])
    run_id = s.engine.start(s.profile(variants=[
        {'name': 'one', 'settings': {}}, {'name': 'two', 'settings': {'rgw-per-host': 2}}],
        baseline='one', workloads=[{'op': 'put', 'size': '4KiB', 'concurrency': 4,
                                    'duration': 2, 'warmup': 0}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    one, two = record['variants']
    assert one['client']['targets'] == [stub.url]
    assert two['client']['targets'] == [stub.url, second_stub.url]
    (targets,) = [w['targets'] for w in one['workloads']]
    assert [(t['url'], t['workers']) for t in targets] == [(stub.url, 4)]
    (targets,) = [w['targets'] for w in two['workloads']]
    assert [(t['url'], t['workers']) for t in targets] == [(stub.url, 2),
                                                           (second_stub.url, 2)]
    assert all(t['ops'] > 0 and t['errors'] == 0 for t in targets)
    # what was in flight when the window closed reached the server, uncounted
    assert 0 <= second_stub.counts['put'] - targets[1]['ops'] <= 2
    assert sum(t['ops'] for t in targets) == two['workloads'][0]['ops']


def test_a_profile_may_name_its_targets(
        stub: StubS3, second_stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    run_id = s.engine.start(s.profile(target=second_stub.url + '/'))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    assert [v['client']['targets'] for v in record['variants']] == [[second_stub.url]] * 2
    assert stub.counts['put'] == 0 and second_stub.counts['put'] > 0
    assert record['definition']['target'] == second_stub.url
    run_id = s.engine.start(s.profile(target='ingress', variants=[{'name': 'as-is'}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'failed'
    assert 'target: ingress, but no ingress is in front of rgw.default' in record['error']


def test_a_plan_says_where_the_load_goes(stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    for target, said in ((None, 'every RGW daemon of the service, or the ingress of a '
                                'variant that has one'),
                         ('rgw', 'every RGW daemon of the service'),
                         ('http://10.0.0.1:80,http://10.0.0.2:80',
                          'http://10.0.0.1:80,http://10.0.0.2:80')):
        plan = s.engine.plan(s.profile(target=target))
        assert 'load goes to: %s' % said in run_plan_to_text(plan).splitlines()


def test_a_plan_says_where_the_agents_go_or_why_they_cannot(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    text = run_plan_to_text(s.engine.plan(s.profile()))
    assert "agents: one, a process on the active mgr's host (mgr-host)" in text.splitlines()
    ThreadLauncher.started_by = 'orchestrator'
    try:
        plan = s.engine.plan(s.profile(placement=['h1', 'h2']))
    finally:
        ThreadLauncher.started_by = 'mgr-process'
    assert plan['agents'] == {'hosts': ['h1', 'h2'], 'samplers': [],
                              'started_by': 'orchestrator'}
    assert 'agents: one on each of h1, h2 (containers the orchestrator starts)' in \
        run_plan_to_text(plan).splitlines()

    def unplaceable(placement: Optional[List[str]]) -> ThreadLauncher:
        raise NotFound('placement rgw: the RGW service under test has no daemon')
    s.engine.make_launcher = unplaceable
    plan = s.engine.plan(s.profile(placement=['rgw']))
    assert 'agents: none can be placed now: placement rgw: the RGW service under test has ' \
        'no daemon' in run_plan_to_text(plan).splitlines()
    assert 'refused now: placement rgw: the RGW service under test has no daemon' in \
        run_plan_to_text(plan).splitlines()
    # The run is refused before its first change: no journal, no result, no call.

    def no_rgw_daemon(placement: Optional[List[str]]) -> List[str]:
        raise NotFound('placement rgw: the RGW service under test has no daemon')
    s.engine.agent_hosts = no_rgw_daemon
    with pytest.raises(NotFound, match='placement rgw'):
        s.engine.start(s.profile(placement=['rgw']))
    assert s.cluster.calls == [] and Journal.unfinished(s.store) is None
    assert dump(s.results.summaries()) == []


def test_a_variant_that_cannot_be_applied_or_put_back_stops_the_run(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    # applying it fails, and so does undoing it (as-is restarted RGW fine)
    s.fail_from('variant threads: applying its settings', 'restart rgw.default')
    run_id = s.engine.start(s.profile())
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'failed'
    assert 'variant threads could not all be put back' in record['error']
    threads = record['variants'][1]
    assert 'restart rgw.default failed' in threads['error'] and threads['workloads'] == []
    assert record['variants'][0]['workloads']  # what the baseline measured is kept
    assert ('client.rgw', 'rgw_thread_pool_size') not in s.cluster.config
    # the restart is still owed: the journal stays open for the module's next start
    assert Journal.unfinished(s.store) is not None
    s.cluster.fail_on = None
    SettingsSession(s.store, lambda: applier(s.cluster), logging.getLogger('test')).recover(
        threading.Event())
    assert Journal.unfinished(s.store) is None
    assert s.cluster.calls[-1] == 'restart rgw.default'


def test_an_abort_ends_the_load_and_keeps_what_was_measured(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    profile = s.profile(workloads=[{'op': 'put', 'size': '4KiB', 'concurrency': 2,
                                    'duration': 30, 'warmup': 0}])
    run_id = s.engine.start(profile)
    started = threading.Event()

    def abort_when_loading() -> None:
        for _ in range(200):
            active = s.engine.active()
            if active and (active.get('current') or {}).get('workload'):
                break
            started.wait(0.05)
        s.engine.abort()
    threading.Thread(target=abort_when_loading).start()
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'aborted'
    assert len(record['variants']) == 1 and record['finished']
    with pytest.raises(NotFound):
        s.engine.abort()
    for launcher in s.launchers:
        for thread in launcher.threads:
            thread.join(60)


def test_an_abort_stops_waiting_for_an_osd_restart_and_puts_back_at_once(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    restarting = threading.Event()
    restart = s.cluster.restart

    def slow_osd_restart(daemons: str) -> None:
        if daemons == 'osd' and not restarting.is_set():
            restarting.set()
            while True:   # osd.0 does not come back: only giving up ends the wait
                s.cluster.wait_for('osd.0 to be up again', lambda: None)
                time.sleep(0.01)
        restart(daemons)
    s.cluster.restart = slow_osd_restart  # type: ignore[method-assign]
    run_id = s.engine.start(s.profile(variants=[
        {'name': 'as-is', 'settings': {}},
        {'name': 'secure', 'settings': {'msgr2-secure': 'on'}}]))
    assert restarting.wait(30)
    s.engine.abort()
    s.engine.wait(10)
    assert s.engine.active() is None, 'the abort waited for the OSD restart'
    record = dump(s.results.load(run_id))
    assert record['state'] == 'aborted'
    assert 'the run was aborted' in record['variants'][1]['error']
    # what was changed is put back, OSDs restarted once more with the old settings (and
    # RGW, restarted for as-is and kept so for the next variant, once more too)
    assert not any(who == 'osd' for who, _ in s.cluster.config)
    assert s.cluster.calls[-2:] == ['restart osd', 'restart rgw.default']
    assert Journal.unfinished(s.store) is None


def test_a_put_workload_the_capacity_guard_stops_keeps_its_figures_and_says_why(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    made: List['Check'] = []

    class Check:   # each workload's own: the PUT's trips when asked a second time
        def __init__(self, in_flight_bytes: int, prefill_bytes: int, open_ended: bool) -> None:
            self.asked = self.asked_while_measured = 0
            self.in_flight_bytes, self.prefill_bytes = in_flight_bytes, prefill_bytes
            self.open_ended = open_ended
            made.append(self)

        def before_start(self) -> Optional[str]:
            return None

        def problem(self) -> Optional[str]:
            self.asked += 1
            if self is not made[0]:
                # The GET's: how often it is asked once its agents started measuring.
                run = s.engine._agent_run
                self.asked_while_measured += run is not None and run.start_at is not None
                return None
            # Once the PUT measured a second (a starved machine once measured none).
            run = s.engine._agent_run
            measured = run is not None and run.start_at is not None and \
                time.time() > run.start_at + 1.0
            return 'osd.0 is 81.0 % full' if self.asked >= 2 and measured else None
    s.engine.agents = replace(s.engine.agents, new_capacity_check=Check)
    run_id = s.engine.start(s.profile(
        variants=[{'name': 'as-is', 'settings': {}}], repeats=2,
        workloads=[{'op': 'put', 'size': '4KiB', 'concurrency': 2, 'duration': 2,
                    'warmup': 0}, {'op': 'get', 'size': '4KiB', 'concurrency': 2,
                                   'duration': 1, 'warmup': 0}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    put, get = record['variants'][0]['workloads']
    assert put['stopped'] == 'capacity: osd.0 is 81.0 % full'
    assert made[0].in_flight_bytes == 2 * 4096   # what its two workers can have begun
    assert made[0].prefill_bytes == 0 and made[1].prefill_bytes > 0
    assert made[0].open_ended and not made[1].open_ended   # the GET writes its prefill only
    assert put['ops'] > 0 and put['error'] is None
    assert len(put['repeats']) == 1, 'a second repeat wrote again after the guard stopped'
    assert 'stopped' not in get
    # A read is guarded only while it prefills (a watch that asked just before its
    # agents started may ask once more); its second repeat reads the first one's
    # prefill and writes nothing, so it has no guard at all.
    assert [c.asked_while_measured <= 1 for c in made[1:]] == [True]
    assert record['state'] == 'complete'


def test_a_workload_whose_prefill_would_pass_the_guard_is_not_started(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    full = ('osd.0 is 60.0 % full; the guard stops writes at 55.0 % (nearfull 85.0 % less '
            'the margin of 5.0 % and 25.0 % its prefill is about to write)')

    class Check:
        def __init__(self, in_flight_bytes: int, prefill_bytes: int, open_ended: bool) -> None:
            self.prefill_bytes = prefill_bytes

        def before_start(self) -> Optional[str]:
            return full if self.prefill_bytes else None

        def problem(self) -> Optional[str]:
            return None
    s.engine.agents = replace(s.engine.agents, new_capacity_check=Check)
    run_id = s.engine.start(s.profile(
        variants=[{'name': 'as-is', 'settings': {}}],
        workloads=[{'op': 'get', 'size': '4KiB', 'concurrency': 2, 'duration': 1,
                    'warmup': 0}, {'op': 'put', 'size': '4KiB', 'concurrency': 2,
                                   'duration': 1, 'warmup': 0}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    get, put = record['variants'][0]['workloads']
    assert get['stopped'] == 'capacity: not started: ' + full
    assert not get.get('ops') and get['error'] == 'no result'
    assert record['state'] == 'complete'   # the guard did what it is for
    # nothing of its prefill was written, and the workload after it ran
    assert put['ops'] > 0 and 'stopped' not in put
    # (outside the measured window, each of the PUT's two workers may have ended a request
    # or two more)
    assert 0 <= stub.counts['put'] - put['ops'] <= 4


def test_a_run_that_restarts_osds_is_refused_where_stopping_one_takes_pgs_offline(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.cluster.osd_blocker = 'osd.0: unsafe to stop osd(s) at this time'
    msgr2 = s.profile(variants=[{'name': 'as-is', 'settings': {}},
                                {'name': 'msgr2', 'settings': {'msgr2-secure': 'on'}}])
    assert 'restart every OSD' in ' '.join(s.engine.plan(msgr2)['problems'])
    with pytest.raises(Busy, match='restart every OSD'):
        s.engine.start(msgr2, force=True)
    assert s.cluster.calls == [] and dump(s.results.summaries()) == []
    run_id = s.engine.start(s.profile())   # restarts no OSD: not held back
    s.engine.wait(180)
    assert dump(s.results.load(run_id))['state'] == 'complete'


def test_a_run_is_refused_before_anything_changes(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.cluster.unclean = '3 peering'
    with pytest.raises(Busy, match='active[+]clean'):
        s.engine.start(s.profile())
    s.cluster.unclean = None
    Journal.open(s.store, 'settings-1')
    with pytest.raises(Busy, match='settings-1'):
        s.engine.start(s.profile())
    assert s.cluster.calls == [] and dump(s.results.summaries()) == []
    CredentialStore(s.store).remove()
    s.keep_objects = True  # a temporary user's buckets would go with it
    with pytest.raises(InvalidInput, match='keep_objects'):
        s.engine.start(s.profile())
    assert s.cluster.calls == [] and dump(s.results.summaries()) == []
    with pytest.raises(InvalidInput, match='Ceph does not know'):
        Setup(stub, certificate).engine.start(s.profile(variants=[
            {'name': 'as-is', 'settings': {}},
            {'name': 'x', 'settings': {'config': {'client.rgw/no_such_option': 1}}}]))


def test_a_new_mgr_keeps_a_cut_off_run_as_failed(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.results.save(load(Run, {
        'run_id': 'r1', 'profile': 'tiny', 'state': 'running', 'started': 1.0, 'finished': None,
        'baseline': 'as-is', 'variants': [], 'error': None}))
    s.engine.recover(lambda name: None)
    record = dump(s.results.load('r1'))
    assert record['state'] == 'failed' and 'mgr restarted' in record['error']
    assert s.events.seen == [('finished', 'failed')]


def test_objects_are_kept_when_asked(stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.keep_objects = True
    run_id = s.engine.start(s.profile(variants=[{'name': 'as-is', 'settings': {}}]))
    s.engine.wait(180)
    assert dump(s.results.load(run_id))['state'] == 'complete'
    assert [b for b, objects in stub.buckets.items() if objects] == ['rgwbench-%s-0-0' % run_id]


@pytest.mark.parametrize('mon_answers', [True, False])
def test_a_cut_off_run_says_its_settings_were_put_back_only_once_they_are(
        stub: StubS3, certificate: Tuple[str, str], mon_answers: bool) -> None:
    s = Setup(stub, certificate)
    s.results.save(load(Run, {'run_id': 'r2', 'profile': 'tiny', 'state': 'running',
                              'started': 1.0, 'finished': None, 'baseline': 'as-is',
                              'variants': [], 'error': None}))
    journal = Journal.open(s.store, 'r2-v1', about={'what': 'run', 'run_id': 'r2'})
    journal.made(journal.record('config', 'client.rgw/rgw_thread_pool_size', None, '128'))
    s.cluster.config[('client.rgw', 'rgw_thread_pool_size')] = '128'
    s.cluster.fail_on = None if mon_answers else 'config'
    s.engine.recover(lambda name: None)
    error = dump(s.results.load('r2'))['error']
    put_back = Journal.unfinished(s.store) is None
    assert put_back == mon_answers
    assert ('settings were put back' in error) == put_back
    assert (('client.rgw', 'rgw_thread_pool_size') in s.cluster.config) != put_back


def test_chunks_of_a_first_save_cut_off_are_removed_at_the_next_start(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.results.save(load(Run, {'run_id': 'kept', 'state': 'complete', 'variants': []}))
    set_store = s.store.set_store

    def crash_at_the_index(key: str, val: Optional[str]) -> None:
        if key.startswith('result_index/r3'):
            raise SystemExit('the mgr died')
        set_store(key, val)
    s.store.set_store = crash_at_the_index
    with pytest.raises(SystemExit):
        s.results.save(load(Run, {'run_id': 'r3', 'state': 'running', 'variants': [],
                                  'x': 'y' * 10}))
    s.store.set_store = set_store
    assert any(k.startswith('result/r3/') for k in s.store.data)
    s.engine.recover(lambda name: None)   # the module starts again
    assert sorted(k for k in s.store.data if k.startswith('result')) == [
        'result/kept/0000', 'result_index/kept']


@pytest.mark.parametrize('broken', ['comparison', 'save'])
def test_the_engine_is_free_again_when_finishing_a_run_fails(
        stub: StubS3, certificate: Tuple[str, str], monkeypatch: pytest.MonkeyPatch,
        broken: str) -> None:
    s = Setup(stub, certificate)
    profile = s.profile(variants=[{'name': 'as-is', 'settings': {}}])
    if broken == 'comparison':
        def no_comparison(record: Any) -> Any:
            raise ZeroDivisionError('no baseline figure')
        monkeypatch.setattr('rgwbench.runs.engine.comparison', no_comparison)
    else:
        save = s.results.save

        def save_until_the_end(record: Any) -> None:
            if record.finished is not None:
                raise OSError('the store is gone')
            save(record)
        monkeypatch.setattr(s.results, 'save', save_until_the_end)
    s.engine.start(profile)
    s.engine.wait(180)
    assert s.engine.active() is None
    assert s.events.seen[-1][0] == 'finished'
    monkeypatch.undo()
    s.engine.start(profile)   # not "run ... is in progress" for ever
    s.engine.wait(180)
    assert s.engine.active() is None


def test_interleaved_repeats_apply_each_variant_anew_round_by_round(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    original = dict(s.cluster.config)
    seen: List[Tuple[str, Optional[str]]] = []
    progress = s.events.update

    def update(run_id: str, message: str, fraction: float, changed: List[str]) -> None:
        if message.endswith('applying its settings'):
            seen.append((message.split()[1].rstrip(':'), s.cluster.config.get(
                ('client.rgw', 'rgw_thread_pool_size'))))
        progress(run_id, message, fraction, changed)
    s.events.update = update  # type: ignore[method-assign]
    run_id = s.engine.start(s.profile(repeats=2, order='interleaved'))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    # A B A B, each application from the cluster as it was
    assert seen == [('as-is', None), ('threads', None), ('as-is', None), ('threads', None)]
    for variant in record['variants']:
        (workload,) = variant['workloads']
        assert len(workload['repeats']) == 2 and workload['error'] is None
    assert [c['kind'] for c in record['variants'][1]['changes']] == [
        'config', 'restart', 'config', 'restart']
    assert s.cluster.config == original and Journal.unfinished(s.store) is None
    assert record['definition']['order'] == 'interleaved'
    # each repeat an application of its own: no floor for the figures with repeats
    (row,) = record['comparison']
    assert 'floor_pct' not in row['intervals']['ops_pct']


def test_a_calibrate_run_stores_the_floor_later_runs_use(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    from rgwbench.results.calibration import CalibrationStore
    from rgwbench.results.report import result_to_text
    s = Setup(stub, certificate)
    same = {'config': {'client.rgw/rgw_thread_pool_size': 512}}
    run_id = s.engine.start(s.profile(
        name='calibrate', baseline='a', repeats=2, order='interleaved',
        variants=[{'name': 'a', 'settings': same}, {'name': 'a-again', 'settings': same}],
        # two seconds: a one-second window once ended no request on a starved machine
        workloads=[{'op': 'put', 'size': '4KiB', 'concurrency': 2, 'duration': 2,
                    'warmup': 0}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    stored = CalibrationStore(s.store).get()
    assert stored is not None and stored.run_id == run_id and stored.repeats == 2
    # (the fake cluster's RGWs have no process to measure: no CPU nor RSS floor)
    assert set(stored.floors) >= {'throughput_pct', 'ops_pct', 'latency_mean_pct',
                                  'latency_p99_pct'}
    assert record['calibration'] == dump(stored)
    assert stored.finished is not None and stored.finished == record['finished']
    assert 'smallest change this cluster can show' in result_to_text(load(Run, record))
    # three seconds: on a starved machine (CI, load 36) a run of two-second workloads
    # once compared nothing (a side without figures)
    later = s.engine.start(s.profile(workloads=[{'op': 'put', 'size': '4KiB', 'concurrency': 2,
                                                 'duration': 3, 'warmup': 0}]))
    s.engine.wait(180)
    compared = dump(s.results.load(later))
    assert compared['state'] == 'complete' and all(
        v['workloads'][0].get('ops') for v in compared['variants']), compared
    (row,) = compared['comparison']
    assert row['intervals']['ops_pct']['floor_pct'] == stored.floors['ops_pct']


def test_a_run_that_could_not_put_back_says_so_in_health_and_settings_revert_finishes_it(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    """Its end tried once: until the module starts again nothing else would, so the health
    error the recovery loop raises when it gives up is raised now, and `settings revert`
    (which finishes a journal given up on) takes it over."""
    s = Setup(stub, certificate)
    session = SettingsSession(s.store, lambda: applier(s.cluster), logging.getLogger('test'))
    s.engine.gave_up = session.give_up
    s.fail_from('variant threads: putting its settings back', 'restart rgw.default')
    run_id = s.engine.start(s.profile())
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'failed'
    assert '`ceph rgwbench settings revert` now' in record['error'], record['error']
    journal = Journal.unfinished(s.store)
    assert journal is not None and journal.journal_id == run_id
    (check,) = session.health_checks().values()
    assert check['severity'] == 'error' and run_id in check['summary'], check
    assert any('restart rgw.default' in line for line in check['detail']), check

    s.cluster.fail_on = None
    assert session.revert(force=True) == run_id
    session.wait(60)
    assert Journal.unfinished(s.store) is None and session.health_checks() == {}
    assert s.cluster.calls[-1] == 'restart rgw.default'
