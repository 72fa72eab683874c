"""The run engine with a fake cluster, agents as threads and the S3 stub."""
import logging
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from fixtures import MemoryStore
from test_agents import ThreadLauncher
from test_settings import FakeCluster, applier

from rgwbench.agents.channel import AgentChannel
from rgwbench.credentials import CredentialStore
from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.journal import Journal
from rgwbench.loadgen.s3stub import StubS3
from rgwbench.profiles import parse_profile
from rgwbench.results.store import ResultStore
from rgwbench.runs.engine import RunEngine
from rgwbench.settings.registry import all_settings
from rgwbench.settings.session import SettingsSession

PROFILE = {'name': 'tiny', 'baseline': 'as-is',
           'variants': [{'name': 'as-is', 'settings': {}},
                        {'name': 'threads', 'settings': {
                            'config': {'client.rgw/rgw_thread_pool_size': 128}}}],
           'workloads': [{'op': 'put', 'size': '4KiB', 'concurrency': 2, 'duration': 1,
                          'warmup': 0}]}


class Events:
    def __init__(self) -> None:
        self.seen: List[Tuple[str, ...]] = []

    def started(self, run_id: str, profile: str) -> None:
        self.seen.append(('started', run_id))

    def update(self, run_id: str, message: str, fraction: float,
               changed: List[str]) -> None:
        assert 0.0 <= fraction < 1.0
        self.seen.append(('update', message, ' / '.join(changed)))

    def finished(self, run_id: str, state: str, message: str) -> None:
        self.seen.append(('finished', state))


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key='AK', secret_key='SK').start()
    yield s
    s.stop()


class Setup:
    def __init__(self, stub: StubS3, certificate: Tuple[str, str],
                 behaviour: Optional[Dict[str, str]] = None) -> None:
        self.store = MemoryStore()
        self.cluster = FakeCluster()
        self.events = Events()
        self.launchers: List[ThreadLauncher] = []
        self.results = ResultStore(self.store, lambda: 10)
        credentials = CredentialStore(self.store)
        credentials.set('access_key: AK\nsecret_key: SK')

        def launcher(placement: Optional[List[str]]) -> ThreadLauncher:
            made = ThreadLauncher(placement or ['mgr-host'], behaviour)
            self.launchers.append(made)
            return made
        self.engine = RunEngine(
            self.store, self.results, credentials, lambda: applier(self.cluster),
            lambda: stub.url, lambda: {}, launcher,
            lambda: AgentChannel('127.0.0.1', 0, *certificate), self.events,
            lambda: '16.2.15', logging.getLogger('test'))

    def profile(self, **changes: Any) -> Any:
        return parse_profile(dict(PROFILE, **changes), all_settings())


def test_a_run_measures_every_variant_and_puts_every_setting_back(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    original = dict(s.cluster.config)
    run_id = s.engine.start(s.profile())
    with pytest.raises(Busy, match=run_id):
        s.engine.start(s.profile())
    s.engine.wait(60)
    record = s.results.load(run_id)
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


def test_a_variant_that_cannot_be_applied_or_put_back_stops_the_run(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.cluster.fail_on = 'restart rgw.default'  # applying it fails, and so does undoing it
    run_id = s.engine.start(s.profile())
    s.engine.wait(60)
    record = s.results.load(run_id)
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
    s.engine.wait(60)
    record = s.results.load(run_id)
    assert record['state'] == 'aborted'
    assert len(record['variants']) == 1 and record['finished']
    with pytest.raises(NotFound):
        s.engine.abort()
    for launcher in s.launchers:
        for thread in launcher.threads:
            thread.join(60)


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
    assert s.cluster.calls == [] and s.results.ls() == []
    CredentialStore(s.store).remove()
    with pytest.raises(NotFound):
        s.engine.start(s.profile())
    with pytest.raises(InvalidInput, match='Ceph does not know'):
        Setup(stub, certificate).engine.start(s.profile(variants=[
            {'name': 'as-is', 'settings': {}},
            {'name': 'x', 'settings': {'config': {'client.rgw/no_such_option': 1}}}]))


def test_a_new_mgr_keeps_a_cut_off_run_as_failed(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.results.save({'run_id': 'r1', 'profile': 'tiny', 'state': 'running', 'started': 1.0,
                    'finished': None, 'baseline': 'as-is', 'variants': [], 'error': None})
    s.engine.recover(lambda name: None)
    record = s.results.load('r1')
    assert record['state'] == 'failed' and 'mgr restarted' in record['error']
    assert s.events.seen == [('finished', 'failed')]


def test_objects_are_kept_when_asked(stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    s.engine.keep_objects = lambda: True
    run_id = s.engine.start(s.profile(variants=[{'name': 'as-is', 'settings': {}}]))
    s.engine.wait(60)
    assert s.results.load(run_id)['state'] == 'complete'
    assert [b for b, objects in stub.buckets.items() if objects] == ['rgwbench-%s-0-0' % run_id]
