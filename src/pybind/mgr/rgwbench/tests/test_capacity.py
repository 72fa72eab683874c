"""The capacity guard: workloads that write stop before an OSD gets near full."""
import threading
import time
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple, Sequence

import pytest

from rgwbench.agents.coordinator import AgentRun
from rgwbench.serial import dump, load
from rgwbench.checks.capacity_guard import (FILL_MEMORY_S, STATS_PERIOD_S, CapacityGuard,
                                            CapacityWatch, FillTrend, Fullness, fullest_osd,
                                            in_flight_bytes, prefill_bytes, writes,
                                            writes_while_measured)
from rgwbench.loadgen import prepare
from rgwbench.loadgen.agent import LivePoster
from rgwbench.loadgen.agent import prefill_watched
from rgwbench.loadgen.workload import Job
from rgwbench.results.model import Run
from rgwbench.results.report import result_to_text
from rgwbench.tests.s3stub import StubS3

GIB = 1 << 30
# As the mgr's `osd_stats` has them (Pacific and Tentacle): statfs in bytes.
OSD_STATS = {'osd_stats': [
    {'osd': 0, 'kb': 8388608, 'kb_avail': 8046488,
     'statfs': {'total': 8 * GIB, 'available': 8 * GIB - 2 * GIB}},
    {'osd': 1, 'kb': 8388608, 'kb_avail': 1258291,
     'statfs': {'total': 8 * GIB, 'available': int(8 * GIB * 0.19)}},
]}
OSD_MAP = {'nearfull_ratio': 0.8500000238418579, 'full_ratio': 0.95}


class Maps:
    def __init__(self, stats: Dict[str, Any]) -> None:
        self.stats = stats

    def get(self, data_name: str) -> Any:
        return {'osd_stats': self.stats, 'osd_map': OSD_MAP}[data_name]


def test_the_fullest_osd_is_read_from_its_store() -> None:
    found = fullest_osd(OSD_STATS, OSD_MAP)
    assert found is not None and found.osd == 1
    assert found.used_ratio == pytest.approx(0.81, abs=1e-6)
    assert found.nearfull_ratio == pytest.approx(0.85)


def test_without_statfs_the_kib_figures_serve() -> None:
    found = fullest_osd({'osd_stats': [{'osd': 3, 'kb': 100, 'kb_avail': 10}]}, OSD_MAP)
    assert found is not None and (found.osd, found.used_ratio) == (3, 0.9)
    assert fullest_osd({'osd_stats': [{'osd': 3, 'kb': 0}]}, OSD_MAP) is None


def test_the_guard_stops_writes_within_its_margin_of_nearfull() -> None:
    assert CapacityGuard(Maps(OSD_STATS), lambda: 0.03).new_check().problem() is None  # 81<82
    problem = CapacityGuard(Maps(OSD_STATS), lambda: 0.05).new_check().problem()       # 81>=80
    assert problem == ('osd.1 is 81.0 % full; the guard stops writes at 80.0 % (nearfull '
                       '85.0 % less the margin of 5.0 %)')


class PooledMaps(Maps):
    """Maps whose pools keep 2 copies: 16 GiB of OSDs hold 8 GiB of objects."""

    def get(self, data_name: str) -> Any:
        found = super().get(data_name)
        return dict(found, pools=[{'pool': 1, 'size': 2}, {'pool': 7, 'size': 2}]) \
            if data_name == 'osd_map' else found


def test_what_requests_in_flight_can_still_write_lowers_where_the_guard_stops() -> None:
    # The README's cluster, 2 OSDs of 8 GiB and pools of 2 copies, filled by the built-in
    # `sizes` profile: four 256 MiB PUTs begun are 2 GiB written once they end, 12.5 %
    # of each OSD. Told to stop at 80 %, they took it from 83.8 % to 96.7 % (full).
    stats = {'osd_stats': [dict(s, statfs={'total': 8 * GIB, 'available': int(8 * GIB * 0.3)})
                           for s in OSD_STATS['osd_stats']]}           # both 70 % full
    guard = CapacityGuard(PooledMaps(stats), lambda: 0.05)
    assert guard.new_check().problem() is None                       # 70 < 80
    held = in_flight_bytes(Job(op='put', size='256MiB', concurrency=4))
    assert held == GIB
    problem = guard.new_check(held).problem()                         # 70 >= 67.5
    assert problem == ('osd.0 is 70.0 % full; the guard stops writes at 67.5 % (nearfull '
                       '85.0 % less the margin of 5.0 % and 12.5 % its requests in flight '
                       'can still write)')
    # small objects hold back next to nothing: 16 x 4 KiB
    assert guard.new_check(in_flight_bytes(
        Job(op='put', size='4KiB', concurrency=16))).problem() is None


def test_a_prefill_that_would_pass_the_line_keeps_its_workload_from_starting() -> None:
    # The README's cluster after `sizes`' put-256MiB: 66 % full, GC holding what it
    # deleted; get-256MiB's prefill of 16 x 256 MiB at 2 copies is 50 % of the OSDs.
    stats = {'osd_stats': [dict(s, statfs={'total': 8 * GIB, 'available': int(8 * GIB * 0.34)})
                           for s in OSD_STATS['osd_stats']]}
    guard = CapacityGuard(PooledMaps(stats), lambda: 0.05)
    job = Job(op='get', size='256MiB', concurrency=4, objects=16)
    check = guard.new_check(in_flight_bytes(job), prefill_bytes(job))
    assert prefill_bytes(job) == 4 * GIB and check.problem() is None   # 66 < 67.5
    assert check.before_start() == (
        'osd.0 is 66.0 % full; the guard stops writes at 17.5 % (nearfull 85.0 % less the '
        'margin of 5.0 % and 12.5 % its requests in flight can still write and 50.0 % its '
        'prefill is about to write)')
    # a PUT prefills nothing; a GET of what another workload prefilled neither
    assert prefill_bytes(Job(op='put', size='256MiB', concurrency=4)) == 0
    assert prefill_bytes(replace(job, prefill=False)) == 0
    assert guard.new_check(in_flight_bytes(job)).before_start() is None
    small = Job(op='get', size='4KiB', concurrency=4, objects=1000)
    assert guard.new_check(in_flight_bytes(small), prefill_bytes(small)).before_start() is None


def test_a_put_workload_starts_only_with_room_for_the_fastest_fill_seen_lately() -> None:
    # The README's cluster (2 x 8 GiB, 2 copies) at 40 %; sizes' put-256MiB filled its
    # OSDs by 1.9 points a second and took one from 65 % (2.5 below the line) to 85.4 %
    # before the guard could stop it.
    def at(used: float) -> Dict[str, Any]:
        return {'osd_stats': [dict(s, statfs={'total': 8 * GIB,
                                              'available': int(8 * GIB * (1 - used))})
                              for s in OSD_STATS['osd_stats']]}
    maps = PooledMaps(at(0.40))
    now = [0.0]
    guard = CapacityGuard(maps, lambda: 0.05)
    guard.rates.clock = lambda: now[0]
    big = in_flight_bytes(Job(op='put', size='256MiB', concurrency=4))
    assert guard.new_check(big).before_start() is None     # no rate seen yet
    writing = FillTrend(lambda: guard.fullness(big), guard.margin, clock=lambda: now[0],
                        rates=guard.rates)
    assert writing.problem() is None
    now[0], maps.stats = 5.0, at(0.495)                      # 1.9 points a second
    found = writing.problem()
    assert found is not None and 'filling by 1.90 % a second' in found, found
    # The next PUT workload starts only with room for START_BLIND_S of that, 19 points.
    now[0] = 600.0
    assert guard.new_check(big).before_start() == (
        'osd.0 is 49.5 % full; the guard stops writes at 48.5 % (nearfull 85.0 % less the '
        'margin of 5.0 % and 12.5 % its requests in flight can still write and 19.0 % it '
        'may write before it can be stopped, at the fastest this cluster filled lately)')
    # A GET's prefill writes what it writes, no more: it is not held back by the rate.
    job = Job(op='get', size='256MiB', concurrency=4, objects=4)
    assert guard.new_check(in_flight_bytes(job), prefill_bytes(job),
                           open_ended=False).before_start() is None   # 49.5 + 12.5 + 12.5
    # an hour later, the rate is forgotten
    now[0] = 5.0 + FILL_MEMORY_S + 1
    assert guard.rates.fastest() == 0.0
    assert guard.new_check(big).before_start() is None


def test_in_flight_is_the_largest_object_of_every_worker() -> None:
    assert in_flight_bytes(Job(op='get', size='4KiB-1MiB', concurrency=8)) == 8 << 20
    assert in_flight_bytes(Job(op='put', size='4KiB,64MiB', concurrency=2)) == 128 << 20
    # pools unknown: three copies, as Ceph's default size
    found = fullest_osd(OSD_STATS, OSD_MAP, in_flight_bytes=GIB)
    assert found is not None and found.in_flight_ratio == pytest.approx(3 / 16)


class FillingOsd:
    """osd.0 (nearfull at 85 %) at the use a test sets, read on the test's clock."""

    def __init__(self, used: float) -> None:
        self.now, self.used = 0.0, used

    def at(self, now: float, used: float) -> None:
        self.now, self.used = now, used

    def trend(self) -> FillTrend:
        return FillTrend(lambda: Fullness(0, self.used, 0.85), lambda: 0.05,
                         clock=lambda: self.now)


def test_an_osd_that_fills_fast_stops_writes_before_it_is_within_the_margin() -> None:
    # The mgr's figures are seconds old and agents stop seconds after they are told:
    # at a point a second, 20 s ahead is past the guard's 80 %.
    osd = FillingOsd(0.60)
    check = osd.trend()
    assert check.problem() is None           # one sample: no rate yet
    osd.at(5.0, 0.65)                         # a point a second
    problem = check.problem()
    assert problem is not None and problem.startswith('osd.0 was 65.0 % full')
    assert 'filling by 1.00 % a second: it would get there within 20 s' in problem
    slow = osd.trend()
    assert slow.problem() is None
    osd.at(10.0, 0.652)                       # 0.04 points a second: 20 s is far from 80 %
    assert slow.problem() is None
    assert slow.rate() == pytest.approx(0.0004)


def test_a_report_seen_a_second_after_the_first_reading_is_spread_over_its_period() -> None:
    # The mgr learns an OSD's use every STATS_PERIOD_S: 3 points in one report are
    # 0.6 a second, not 3 (which, 20 s ahead, would pass 80 % from 50 %).
    osd = FillingOsd(0.50)
    check = osd.trend()
    assert check.problem() is None
    osd.at(1.0, 0.53)
    assert check.problem() is None
    assert check.rate() == pytest.approx(0.03 / STATS_PERIOD_S)
    # An OSD that does fill that fast is stopped once its reports say so.
    for second in range(2, 6):
        osd.at(float(second), 0.50 + 0.03 * second)
        found = check.problem()
    assert found is not None and 'filling by 3.00 % a second' in found, found


@pytest.mark.parametrize('job, writing', [
    (Job(op='put'), True), (Job(op='get', prefill=False), False), (Job(op='mixed'), True),
    (Job(op='mixed', mix={'get': 1.0, 'head': 1.0}, prefill=False), False),
    (Job(op='mixed', mix={'get': 1.0, 'put': 0.5}), True),
    # what a reading workload prefills is written too
    (Job(op='get'), True), (Job(op='head', objects=100000), True)])
def test_only_workloads_that_write_are_guarded(job: Job, writing: bool) -> None:
    assert writes(job) is writing


def test_a_prefill_ends_when_the_module_says_stop() -> None:
    with StubS3(access_key='AK', secret_key='SK') as stub:
        job = Job(endpoint=stub.url, access_key='AK', secret_key='SK', op='get',
                  objects=500000, concurrency=4, proc_stats=False).validate()
        prepare.ensure_buckets(job)
        channel = StopChannel()
        began = time.monotonic()
        with pytest.raises(prepare.Stopped) as stopped:
            prefill_watched(channel, job)  # type: ignore[arg-type]
        assert time.monotonic() - began < 60
        assert channel.posts >= 1
        assert 0 < stub.counts['put'] < 500000
        assert str(stopped.value).startswith('prefill stopped after ')


def test_the_watch_stops_once_when_the_guard_trips() -> None:
    answers = [None, None, 'osd.0 is 81 % full']
    stops: List[str] = []
    with CapacityWatch(lambda: answers.pop(0) if answers else 'again', stops.append,
                       every_s=0.01):
        deadline = time.monotonic() + 5
        while not stops and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)
    assert stops == ['capacity: osd.0 is 81 % full']


class Launcher:
    started_by = 'mgr-process'
    samplers: Sequence[str] = ()

    def agent_ids(self) -> List[str]:
        return ['a']


def test_agents_are_asked_to_stop_in_their_progress_answer() -> None:
    run = AgentRun(Job(op='put'), Launcher())  # type: ignore[arg-type]
    run.agents['a']['state'] = 'started'
    assert run.progress('a', {'phase': 'measuring'}) == {}
    run.stop_early('capacity: osd.0 is 81 % full')
    run.stop_early('capacity: later')           # the first reason stands
    assert run.progress('a', {'phase': 'measuring'}) == {'stop': 'capacity: osd.0 is 81 % full'}
    assert run.summary().stopped == 'capacity: osd.0 is 81 % full'


class StopChannel:
    timeout = 1.0

    def __init__(self) -> None:
        self.posts = 0

    def call(self, method: str, what: str, body: Optional[Dict[str, Any]] = None
             ) -> Tuple[int, Dict[str, Any]]:
        self.posts += 1
        return 200, {'stop': 'capacity: full'}


def test_an_agent_ends_its_load_once_when_the_module_says_stop() -> None:
    stopped = threading.Event()
    calls: List[int] = []

    def stop() -> None:
        calls.append(1)
        stopped.set()
    channel = StopChannel()
    with LivePoster(channel, every_s=0.01, stop=stop) as live:  # type: ignore[arg-type]
        for i in range(20):
            live.update({'elapsed_s': i})
            time.sleep(0.01)
        assert stopped.wait(60)
    assert calls == [1] and channel.posts >= 2 and live.stop_asked == 'capacity: full'


def test_a_stopped_workload_keeps_its_figures_and_says_why() -> None:
    run = load(Run, {
        'run_id': 'r1', 'profile': 'p', 'state': 'complete', 'baseline': 'a',
        'variants': [{'name': 'a', 'settings': {}, 'workloads': [
            {'name': 'put-4MiB', 'op': 'put', 'ops': 10, 'ops_per_s': 5.0,
             'throughput_mib_s': 20.0, 'stopped': 'capacity: osd.0 is 81 % full'}]}]})
    assert dump(run)['variants'][0]['workloads'][0]['stopped'].startswith('capacity')
    text = result_to_text(run)
    assert 'a / put-4MiB: stopped early (capacity: osd.0 is 81 % full)' in text
    assert '20' in text  # the figures are still in the table


def test_a_reading_workload_is_watched_only_while_it_prefills() -> None:
    prefilling = [True]
    asked: List[int] = []

    def problem() -> Optional[str]:
        asked.append(1)
        return None
    with CapacityWatch(problem, lambda why: None, every_s=0.01,
                       watching=lambda: prefilling[0]):
        deadline = time.monotonic() + 5
        while len(asked) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        prefilling[0] = False
        time.sleep(0.1)
        seen = len(asked)
        time.sleep(0.1)
        assert len(asked) == seen >= 3
    assert writes_while_measured(Job(op='put')) and not writes_while_measured(Job(op='get'))
