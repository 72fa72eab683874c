"""The checks around a run and a load: refused before any change, --force, the records."""
import errno
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.agent_fakes import ThreadLauncher
from rgwbench.tests.run_fakes import BlockingLauncher, Events, Setup, checks_on, load_ended
from rgwbench.tests.run_fakes import load_service as loads_on

from rgwbench.results.model import LoadRecord
from rgwbench.serial import dump, load
from rgwbench.agents.channel import AgentChannel
from rgwbench.checks.gate import Refused, RunChecks
from rgwbench.cluster.credentials import CredentialStore
from rgwbench.settings.journal import Journal
from rgwbench.runs.loads import LEFTOVERS_KEY, LoadRequest, LoadService, load_to_text
from rgwbench.results.model import Run
from rgwbench.results.report import result_to_text
from rgwbench.runs.plan_text import run_plan_to_text
from rgwbench.tests.s3stub import StubS3

from checks_fakes import FakeView, filled, health_err, rgw_service_map, roomy

# 5000 objects of 4 MiB to read: a prefill of 19.5 GiB, past the 10 GiB of room
BIG = [{'op': 'get', 'size': '4MiB', 'concurrency': 64, 'duration': 10, 'warmup': 0,
        'objects': 5000}]
SCRUBBING = {'all': {'active+clean': 50, 'active+clean+scrubbing': 2}}


class ChangingEvents(Events):
    """Changes the cluster when the run comes to a workload (`at`, its progress message)."""

    def __init__(self, at: str, change: Callable[[], Any]) -> None:
        super().__init__()
        self.at = at
        self.change = change

    def update(self, run_id: str, message: str, fraction: float,
               changed: List[str]) -> None:
        super().update(run_id, message, fraction, changed)
        if message == self.at:
            self.change()


def ids(found: List[Dict[str, Any]]) -> List[Tuple[str, Optional[str], Tuple[int, ...]]]:
    return [(f['id'], f.get('variant'), tuple(f.get('seconds') or ())) for f in found]


# -- runs -------------------------------------------------------------------------------------

def test_a_run_that_could_fill_the_cluster_is_refused_forced_or_not_changing_nothing(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate, checks=checks_on(filled(FakeView())))
    for force in (False, True):
        with pytest.raises(Refused) as e:
            s.engine.start(s.profile(workloads=BIG), force=force)
        assert e.value.errno == -errno.ENOSPC and '\n' not in str(e.value)
        assert str(e.value).startswith('refusing the run: capacity-exceeded: the prefills '
                                       'of a run of profile tiny need')
    assert s.cluster.calls == [] and dump(s.results.summaries()) == [] and s.launchers == []
    assert Journal.unfinished(s.store) is None and stub.counts['put'] == 0
    assert s.engine.active() is None and s.events.seen == []


def test_health_err_refuses_a_run_unless_forced_and_the_record_keeps_it(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate, checks=checks_on(health_err(FakeView())))
    with pytest.raises(Refused, match='health-err: .* or --force') as e:
        s.engine.start(s.profile())
    assert e.value.errno == -errno.EBUSY
    assert s.cluster.calls == [] and dump(s.results.summaries()) == [] and s.launchers == []
    run_id = s.engine.start(s.profile(), force=True)
    s.engine.wait(60)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    # seen before the run; the same before each workload is not kept again
    assert ids(record['findings']) == [('health-err', None, ()),
                                       ('capacity-estimate', None, ())]


def test_findings_before_and_during_a_workload_are_kept_with_it(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    view = FakeView()
    events = ChangingEvents('variant threads, workload put-4KiB',
                            lambda: setattr(view, 'pgs', SCRUBBING))
    s = Setup(stub, certificate, checks=checks_on(view), events=events)
    one_second = [{'op': 'put', 'size': '4KiB', 'concurrency': 2, 'duration': 1, 'warmup': 0}]
    run_id = s.engine.start(s.profile(workloads=one_second))
    s.engine.wait(60)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    assert ids(record['findings']) == [
        ('capacity-estimate', None, ()),
        ('pgs-scrubbing', 'threads', ()),      # the check before the workload
        ('pgs-scrubbing', 'threads', (0,))]    # and while it ran: its one second
    assert {f.get('workload') for f in record['findings'][1:]} == {'put-4KiB'}
    assert record['findings'][2]['evidence'] == ['up to 2 PGs active+clean+scrubbing']
    text = result_to_text(load(Run, record))
    assert '          threads !' in text and 'put-4KiB  as-is  ' in text
    assert '    when: threads / put-4KiB, seconds 0 of the measured window' in text


def test_a_health_err_during_the_run_ends_it_and_puts_everything_back(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    view = FakeView()
    s = Setup(stub, certificate, checks=checks_on(view),
              events=ChangingEvents('variant threads, workload put-4KiB',
                                    lambda: health_err(view)))
    original = dict(s.cluster.config)
    run_id = s.engine.start(s.profile())
    s.engine.wait(60)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'failed'
    assert 'refusing to go on with workload put-4KiB of variant threads: health-err' in \
        record['error']
    assert record['variants'][1]['workloads'] == []
    assert s.cluster.config == original and Journal.unfinished(s.store) is None
    assert ('health-err', 'threads', ()) in ids(record['findings'])


def test_a_plan_shows_the_findings_and_changes_nothing(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate, checks=checks_on(filled(FakeView())))
    plan = s.engine.plan(s.profile(workloads=BIG))
    assert [f['id'] for f in plan['findings']] == ['capacity-exceeded', 'capacity-estimate']
    text = run_plan_to_text(plan)
    assert 'refused now: [refuse] capacity-exceeded: the prefills of a run of profile tiny' \
        in text
    assert 'finding: [info] capacity-estimate: ' in text
    assert s.cluster.calls == [] and dump(s.results.summaries()) == []


def test_a_plan_says_how_a_concurrency_splits_over_the_targets(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    view = FakeView()
    view.services = rgw_service_map(**{'rgw.%d' % i: 'beast port=%d' % (8000 + i)
                                       for i in range(9)})
    s = Setup(stub, certificate, checks=checks_on(view))
    plan = s.engine.plan(s.profile(workloads=[
        {'name': 'put', 'op': 'put', 'size': '4KiB', 'concurrency': 24}]))
    text = run_plan_to_text(plan).splitlines()
    (at,) = [n for n, line in enumerate(text) if 'uneven-concurrency' in line]
    assert text[at].startswith('finding: [info] uneven-concurrency: a workload\'s requests '
                               'in flight do not divide evenly over its targets')
    assert 'not comparable' in text[at]
    assert text[at + 1] == '  seen: workload put: 24 requests in flight over 9 targets: ' \
                           '6 get 3, 3 get 2'


def test_a_run_finds_a_variants_targets_do_not_divide_a_concurrency(
        stub: StubS3, second_stub: StubS3, certificate: Tuple[str, str]) -> None:
    """Before the run the cluster had one RGW; a variant with two per host sends 3
    requests in flight over 2: said at that variant's workload, not at the other's."""
    s = Setup(stub, certificate, more_rgws=[second_stub], checks=checks_on(roomy(FakeView())))
    run_id = s.engine.start(s.profile(variants=[
        {'name': 'one', 'settings': {}}, {'name': 'two', 'settings': {'rgw-per-host': 2}}],
        baseline='one', workloads=[{'name': 'put', 'op': 'put', 'size': '4KiB',
                                    'concurrency': 3, 'duration': 2, 'warmup': 0,
                                    'rate': 30}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    found = [f for f in record['findings'] if f['id'] == 'uneven-concurrency']
    assert [(f['variant'], f['workload'], f['evidence']) for f in found] == [
        ('two', 'put', ['workload put: 3 requests in flight over 2 targets: 1 get 2, 1 get 1'])]
    (targets,) = [w['targets'] for w in record['variants'][1]['workloads']]
    assert sorted(t['workers'] for t in targets) == [1, 2]


# -- loads ------------------------------------------------------------------------------------

def load_service(store: MemoryStore, view: FakeView, made: List[Any]) -> LoadService:
    CredentialStore(store).set('access_key: A\nsecret_key: S')

    def launcher(placement: Optional[List[str]]) -> BlockingLauncher:
        made.append(placement)
        return BlockingLauncher()

    def no_channel() -> Any:
        raise RuntimeError('no channel in this test')
    return loads_on(store, ['http://127.0.0.1:9'], launcher, no_channel, checks_on(view))


def test_a_load_that_could_fill_the_cluster_is_refused_forced_or_not() -> None:
    store = MemoryStore()
    made: List[Any] = []
    loads = load_service(store, filled(FakeView()), made)
    for force in (False, True):
        refused = '^refusing the load: capacity-exceeded: the prefills of the load'
        with pytest.raises(Refused, match=refused) as e:
            loads.start(LoadRequest.of(op='get', size='4MiB', concurrency=64, duration_s=10.0,
                                       objects=5000), force=force)
        assert e.value.errno == -errno.ENOSPC
    assert made == [] and loads.active() is None
    assert store.get_store_prefix('load/') == {} and store.get_store(LEFTOVERS_KEY) is None


def test_health_err_refuses_a_load_unless_forced() -> None:
    store = MemoryStore()
    made: List[Any] = []
    loads = load_service(store, health_err(FakeView()), made)
    with pytest.raises(Refused, match='health-err') as e:
        loads.start(LoadRequest.of(duration_s=1.0))
    assert e.value.errno == -errno.EBUSY and made == []
    load_id = loads.start(LoadRequest.of(duration_s=1.0), force=True)
    found = [f['id'] for f in dump(loads.show(load_id))['findings']]
    assert found == ['health-err', 'capacity-estimate']


def test_a_load_keeps_what_it_was_checked_with_and_what_it_ran_beside(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    store = MemoryStore()
    CredentialStore(store).set('access_key: AK\nsecret_key: SK')
    view = FakeView().set('client.rgw', 'debug_rgw', '20')
    view.pgs = SCRUBBING
    loads = loads_on(store, [stub.url], lambda placement: ThreadLauncher(['mgr-host']),
                     lambda: AgentChannel('127.0.0.1', 0, *certificate), checks_on(view))
    load_id = loads.start(LoadRequest.of(duration_s=1.0, warmup_s=0.0, concurrency=2))
    assert load_ended(loads)
    record = dump(loads.show(load_id))
    assert record['state'] == 'complete', record['error']
    assert ids(record['findings']) == [('debug-rgw-raised', None, ()),
                                       ('pgs-scrubbing', None, ()),
                                       ('capacity-estimate', None, ()),
                                       ('pgs-scrubbing', None, (0,))]
    text = load_to_text(load(LoadRecord, record))
    assert 'findings (`ceph rgwbench check` describes each):' in text
    assert '  [skews] debug-rgw-raised: debug_rgw is above its default (1/5)' in text
    assert '    when: seconds 0 of the measured window' in text


def test_a_sized_working_set_cut_short_by_its_time_is_read_alike_by_every_variant(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    # 3 OSDs of 4 GiB targets: a 4 KiB GET sized to 24 GiB, more than a second's prefill
    # writes; each variant then reads the objects the first one's prefill wrote.
    view = roomy(FakeView())
    s = Setup(stub, certificate, checks=RunChecks(view=view, prefill_time=lambda: 1.0))
    # (In open loop, for a request to end in the window of a test CI leaves little CPU.)
    run_id = s.engine.start(s.profile(workloads=[
        {'op': 'get', 'size': '4KiB', 'concurrency': 2, 'duration': 2, 'warmup': 0,
         'rate': 20}]))
    s.engine.wait(120)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    read = [v['workloads'][0]['objects'] for v in record['variants']]
    assert read[0] == read[1] and 4 <= read[0] < 6291456, read
    assert read[0] * 4096 == record['variants'][0]['workloads'][0]['working_set_bytes']
    found = [(f['id'], f.get('variant')) for f in record['findings']]
    assert ('prefill-time-ran-out', 'as-is') in found and \
        ('prefill-time-ran-out', 'threads') not in found, found
    # what it wrote is in the caches: said for the variant that found it, and the next
    assert ('working-set-in-cache', 'as-is') in found and \
        ('working-set-in-cache', 'threads') in found, found
    cut = next(f for f in record['findings'] if f['id'] == 'prefill-time-ran-out')
    assert cut['evidence'][0].startswith('%d of 6291456 objects written in 1 s' % read[0])


def test_the_plan_shows_a_sized_working_set_and_its_prefill_time(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate,
              checks=RunChecks(view=roomy(FakeView()), prefill_time=lambda: 300.0))
    plan = s.engine.plan(s.profile(workloads=[
        {'op': 'get', 'size': '4MiB', 'concurrency': 2, 'duration': 1, 'warmup': 0},
        {'op': 'put', 'size': '4KiB', 'concurrency': 2, 'duration': 1, 'warmup': 0}]))
    get, put = plan['workloads']
    assert (get['objects'], get['prefill_time_s']) == (6144, 300.0)
    assert 'objects' not in put and 'prefill_time_s' not in put
    assert '  get-4MiB reads 6144 objects (twice the caches in front of the disks), ' \
        'prefilled for at most 300 s' in run_plan_to_text(plan).splitlines()
