"""Results of runs: the store (chunks, limits, retention), comparison, repeats, reports."""
import copy
import csv
import errno
import io
import json
import random
from statistics import NormalDist
from typing import Any, Dict, List, Optional

import pytest

from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.serial import dump, load
from rgwbench.tests.fixtures import stored_run
from rgwbench.tests.result_records import (CALIBRATED, comparison, entry, record, seconds,
                                           small_record, variant)
from rgwbench.loadgen.histogram import Histogram
from rgwbench.results import compare
from rgwbench.results import store as result_store
from rgwbench.results.calibration import Floors
from rgwbench.results.compare import between, pct_change
from rgwbench.results.significance import t_quantile
from rgwbench.results.model import Comparison, Run, WorkloadResult
from rgwbench.results.report import (comparison_to_text, result_to_csv, result_to_markdown,
                                     result_to_text, results_to_text)
from rgwbench.results.store import MAX_VALUE, ResultStore

from rgwbench.tests.fixtures import MemoryStore


# The comparison and the merge of repeats, on records as the store keeps them (JSON).


def z_of(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def noise(base: Dict[str, Any], other: Dict[str, Any], **options: Any) -> Dict[str, Any]:
    """The comparison row of two workloads (its headline verdict and every interval)."""
    return dump(compare.compare_entries(load(WorkloadResult, base), load(WorkloadResult, other),
                                        'v', 'w', **options))


def merge_repeats(repeats: List[Dict[str, Any]]) -> Dict[str, Any]:
    return dump(compare.merge_repeats([load(WorkloadResult, r) for r in repeats]))


# -- store ---------------------------------------------------------------------------------

def big_histogram(rng: random.Random) -> Dict[str, Any]:
    hist = Histogram()
    for index in rng.sample(range(256, 4000), 1500):
        hist.counts[index] = rng.randint(1, 100000)
    hist.count = sum(hist.counts.values())
    hist.total = hist.count * 1000000
    hist.min, hist.max = 256, 10 ** 9
    return hist.to_dict()


def big_record(run_id: str = 'big', variants: int = 8, workloads: int = 8) -> Dict[str, Any]:
    rng = random.Random(7)
    out = []
    for v in range(variants):
        loads = []
        for w in range(workloads):
            e = entry('w%d' % w, ops=rng.uniform(100, 1000))
            e['histogram'] = big_histogram(rng)
            e['ttfb_histogram'] = big_histogram(rng)
            e['per_second'] = seconds([rng.randint(100, 1000) for _ in range(300)])
            e['repeats'] = [{'ops_per_s': rng.random()} for _ in range(3)]
            loads.append(e)
        out.append(variant('v%d' % v, loads, sse='v%d' % v))
    return record(out, run_id=run_id)


def test_store_round_trip_of_a_big_record_in_chunks_below_the_limit() -> None:
    mem = MemoryStore()
    results = ResultStore(mem, lambda: 50)
    rec = big_record()
    assert len(json.dumps(rec)) > 3 * 1000 * 1000
    index = results.save(load(Run, rec))
    assert index['chunks'] >= 4
    assert all(len(v.encode('utf-8')) < MAX_VALUE for v in mem.data.values())
    assert set(mem.data) == {'result_index/big'} | {
        'result/big/%04d' % n for n in range(index['chunks'])}
    assert dump(results.load('big')) == rec
    assert dump(results.summaries()) == [{
        'run_id': 'big', 'profile': 'sse', 'state': 'complete', 'started': 1758017700.0,
        'finished': 1758019512.0, 'baseline': 'off', 'variants': ['v%d' % v for v in range(8)]}]


def test_saving_again_replaces_the_chunks_and_removes_extra_ones() -> None:
    mem = MemoryStore()
    results = ResultStore(mem, lambda: 50)
    big = big_record(run_id='r1')
    big['state'] = 'running'
    first = results.save(load(Run, big))
    small = record([variant('off', [entry()])], state='running')
    second = results.save(load(Run, small))
    assert second['chunks'] == 1
    assert sorted(mem.data) == ['result/r1/%04d' % second['start'], 'result_index/r1']
    assert dump(results.load('r1')) == small
    third = results.save(load(Run, big))
    assert dump(results.load('r1')) == big
    assert len(mem.data) == third['chunks'] + 1
    assert first['chunks'] == third['chunks']


class HookedStore(MemoryStore):
    """Calls `hook` before every set_store (a reader in the middle of a save)."""

    def __init__(self) -> None:
        super().__init__()
        self.hook: Any = None

    def set_store(self, key: str, val: Optional[str]) -> None:
        if self.hook is not None:
            self.hook(key)
        super().set_store(key, val)


def test_a_reader_during_a_save_sees_the_old_or_the_new_version_whole() -> None:
    mem = HookedStore()
    results = ResultStore(mem, lambda: 50)
    old = big_record(run_id='r1', variants=2)
    old['state'] = 'running'
    results.save(load(Run, old))
    new = big_record(run_id='r1', variants=3)
    seen = []
    mem.hook = lambda key: seen.append(dump(results.load('r1'))['variants'][-1]['name'])
    results.save(load(Run, new))
    mem.hook = None
    assert set(seen) <= {'v1', 'v2'} and seen[0] == 'v1' and seen[-1] == 'v2'
    assert dump(results.load('r1')) == new


class FailingStore(MemoryStore):
    def __init__(self, fail_after: int) -> None:
        super().__init__()
        self.left = fail_after

    def set_store(self, key: str, val: Optional[str]) -> None:
        if self.left == 0:
            raise RuntimeError('mgr went away')
        self.left -= 1
        super().set_store(key, val)


def test_a_half_written_result_is_never_listed_and_the_next_save_cleans_up() -> None:
    mem = FailingStore(fail_after=2)
    results = ResultStore(mem, lambda: 50)
    rec = big_record(run_id='r1', variants=2)
    with pytest.raises(RuntimeError):
        results.save(load(Run, rec))
    assert mem.data and all(k.startswith('result/r1/') for k in mem.data)
    assert dump(results.summaries()) == []
    with pytest.raises(NotFound):
        dump(results.load('r1'))
    mem.left = -1
    small = record([variant('off', [entry()])])
    results.save(load(Run, small))
    assert sorted(mem.data) == ['result/r1/0000', 'result_index/r1']
    assert dump(results.load('r1')) == small


def test_ids_that_prefix_each_other_stay_apart() -> None:
    mem = MemoryStore()
    results = ResultStore(mem, lambda: 50)
    a = big_record(run_id='run1', variants=1)
    b = big_record(run_id='run10', variants=2)
    c = record([variant('off', [entry()])], run_id='run1.5')
    for rec in (a, b, c):
        results.save(load(Run, rec))
    assert dump(results.load('run1')) == a
    results.rm('run1')
    assert dump(results.load('run10')) == b
    assert dump(results.load('run1.5')) == c
    assert not [k for k in mem.data if k.startswith(('result/run1/', 'result_index/run1'))
                and k not in ('result_index/run10', 'result_index/run1.5')
                and not k.startswith(('result/run10/', 'result/run1.5/'))]
    with pytest.raises(NotFound):
        dump(results.load('run1'))


def test_not_found_and_bad_ids() -> None:
    results = ResultStore(MemoryStore(), lambda: 50)
    with pytest.raises(NotFound) as e:
        dump(results.load('nope'))
    assert e.value.errno == -errno.ENOENT
    assert 'results ls' in str(e.value) and '\n' not in str(e.value)
    with pytest.raises(NotFound):
        dump(results.load('../x'))
    with pytest.raises(NotFound):
        results.rm('nope')
    with pytest.raises(InvalidInput):
        results.save(load(Run, record([], run_id='a/b')))


def test_retention_keeps_the_newest_finished_runs_and_every_running_one() -> None:
    mem = MemoryStore()
    keep = [3]
    results = ResultStore(mem, lambda: keep[0])
    results.save(load(Run, record([variant('off', [entry()])], run_id='running',
                                  state='running', started=1.0)))
    for n in range(5):
        results.save(load(Run, record(
            [variant('off', [entry()])], run_id='r%d' % n,
            state=('complete', 'failed', 'aborted')[n % 3], started=10.0 + n)))
    assert [s['run_id'] for s in dump(results.summaries())] == ['running', 'r2', 'r3', 'r4']
    assert not [k for k in mem.data if 'r0' in k or 'r1' in k]
    # a running run's saves never remove anything
    keep[0] = 1
    results.save(load(Run, record([], run_id='running', state='running', started=1.0)))
    assert len(dump(results.summaries())) == 4
    results.save(load(Run, record([], run_id='running', state='failed', started=1.0)))
    assert [s['run_id'] for s in dump(results.summaries())] == ['r4']


def test_rm_of_a_running_run_needs_force() -> None:
    results = ResultStore(MemoryStore(), lambda: 50)
    results.save(load(Run, record([], run_id='r1', state='running')))
    with pytest.raises(Busy):
        results.rm('r1')
    results.rm('r1', force=True)
    assert dump(results.summaries()) == []


def test_ls_newest_last() -> None:
    results = ResultStore(MemoryStore(), lambda: 50)
    for run_id, started in (('b', 30.0), ('a', 10.0), ('c', 20.0)):
        results.save(load(Run, record([], run_id=run_id, started=started)))
    assert [s['run_id'] for s in dump(results.summaries())] == ['a', 'c', 'b']


def test_encoding_is_zlib_in_base64() -> None:
    rec = record([variant('off', [entry()])])
    assert result_store.decode(result_store.encode(rec)) == rec


# -- comparison ----------------------------------------------------------------------------

def test_percent_changes_against_hand_computed_ones() -> None:
    base = entry(mib=100.0, ops=200.0, mean=2.0, p99=10.0, cpu=0.0, rss=500.0)
    other = entry(mib=90.0, ops=250.0, mean=2.5, p99=9.0, cpu=1.0, rss=None)
    rows = comparison(record([variant('off', [base]), variant('tls', [other])]))
    assert len(rows) == 1
    row = rows[0]
    assert (row['variant'], row['workload']) == ('tls', 'put-4KiB')
    assert row['throughput_pct'] == -10.0
    assert row['ops_pct'] == 25.0
    assert row['latency_mean_pct'] == 25.0
    assert row['latency_p99_pct'] == -10.0
    assert row['rgw_cpu_pct'] is None  # baseline 0
    assert row['rgw_rss_pct'] is None  # missing
    # No per-second series: the noise of the ops is unknown, no verdict
    assert row['significant'] is False and row['noise_pct'] is None
    assert row['intervals']['ops_pct'] == {'floor_pct': 5.0, 'significant': False}
    # RGW's CPU takes its noise from the ops/s: unknown too (here no change either)
    assert row['intervals']['rgw_cpu_pct'] == {'floor_pct': 5.0, 'significant': False}
    # RGW's memory has one value per measurement: the floor alone
    rss = noise(entry(rss=100.0), entry(rss=120.0))['intervals']['rgw_rss_pct']
    assert rss == {'low': 15.0, 'high': 25.0, 'floor_pct': 5.0, 'method': 'floor',
                   'significant': True, 'level': 0.95}
    assert pct_change(3.0, 4.0) == 33.33


def test_only_workloads_present_in_both_and_without_errors() -> None:
    rec = record([
        variant('off', [entry('a'), entry('b'), entry('c', error='boom')]),
        variant('tls', [entry('a', ops=100.0), entry('c'), entry('d')]),
        variant('sse', [entry('b', error='refused')]),
        variant('msgr', [], error='could not apply'),
    ])
    rows = comparison(rec)
    assert [(r['variant'], r['workload'], r['ops_pct']) for r in rows] == [
        ('tls', 'a', -50.0)]
    assert comparison(record([variant('tls', [entry()])])) == []  # no baseline


def test_per_second_noise_a_clean_20_percent_change_is_significant() -> None:
    rng = random.Random(1)
    base = entry(ops=1000.0, per_second=seconds([1000 + rng.uniform(-20, 20)
                                                 for _ in range(10)]))
    other = entry(ops=800.0, per_second=seconds([800 + rng.uniform(-20, 20)
                                                 for _ in range(10)]))
    row = comparison(record([variant('off', [base]), variant('sse', [other])]))[0]
    assert row['method'] == 'per-second' and row['tested'] == 'ops_per_s'
    assert row['significant'] is True
    assert 0 < row['intervals']['ops_pct']['noise_pct'] < 5
    # The floor is the larger, at the level of the run's figures taken together.
    level = row['intervals']['ops_pct']['level']
    assert 0.95 < level < 1
    assert row['noise_pct'] == round(5.0 * z_of(level) / z_of(0.95), 2)


def test_rgw_cpu_that_follows_noisy_ops_is_no_change() -> None:
    # A busy machine: the baseline's seconds swing by half, and RGW's CPU follows the
    # requests it served (the same 5 ms per request on both sides). Held to the floor
    # alone, the CPU's +25 % was called a change while the ops/s' +25 % was not.
    rng = random.Random(2)
    base_seconds = [rng.choice((100.0, 300.0)) for _ in range(16)]
    base_ops = sum(base_seconds) / len(base_seconds)
    other_ops = base_ops * 1.25
    base = entry(ops=base_ops, cpu=base_ops * 0.005, per_second=seconds(base_seconds))
    other = entry(ops=other_ops, cpu=other_ops * 0.005,
                  per_second=seconds([v * 1.25 for v in base_seconds]))
    row = comparison(record([variant('off', [base]), variant('same', [other])]))[0]
    cpu, ops = row['intervals']['rgw_cpu_pct'], row['intervals']['ops_pct']
    assert row['rgw_cpu_pct'] == row['ops_pct'] == 25.0
    assert cpu['method'] == 'per-second' and cpu['noise_pct'] == ops['noise_pct'] > 25
    assert not cpu['significant'] and not ops['significant']
    # Memory does not follow the requests: the floor alone, as before.
    assert row['intervals']['rgw_rss_pct']['method'] == 'floor'


def test_a_workload_too_short_to_show_its_noise_marks_no_cpu_change() -> None:
    # A PUT workload the capacity guard stopped after 1.4 s (3 requests): one whole second,
    # too few for batch means. RGW's CPU +16.5 % was marked significant by the floor alone
    # while the ops/s +68 % beside it had no interval.
    base = entry(ops=1.27, cpu=0.85, elapsed_s=1.43, per_second=seconds([1.0, 2.0]))
    other = entry(ops=2.14, cpu=0.99, elapsed_s=1.40, per_second=seconds([2.0, 1.0]))
    result = noise(base, other)
    for name in ('ops_pct', 'throughput_pct', 'rgw_cpu_pct'):
        assert result['intervals'][name] == {'floor_pct': 5.0, 'significant': False}, name
    assert result['significant'] is False and result['method'] is None
    # The same CPU change over a workload long enough to show its noise is tested.
    steady = [100.0 + (i % 2) for i in range(16)]
    cpu = noise(entry(ops=100.5, cpu=0.85, per_second=seconds(steady)),
                entry(ops=100.5, cpu=0.99, per_second=seconds(steady)))['intervals']['rgw_cpu_pct']
    assert cpu['method'] == 'per-second' and cpu['significant'] is True


def test_per_second_noise_is_that_of_batch_means() -> None:
    # 8 seconds: batches of round(sqrt(8)) = 3, two of them (the last 2 seconds cut off)
    base = entry(ops=100.0, per_second=seconds([50, 150, 60, 140, 55, 145, 100, 100]))
    other = entry(ops=105.0, per_second=seconds([55, 155, 65, 145, 60, 150, 105, 105]))
    result = noise(base, other)
    assert result['method'] == 'per-second'
    assert result['significant'] is False
    # each side's batch means differ by 26.67: se 13.33 of a mean of 100 (105 for the
    # other), df 1 each, Welch's df 2: t(0.975, 2) = 4.303
    se = (26.0 + 2 / 3) / 2
    assert result['intervals']['ops_pct']['noise_pct'] == pytest.approx(
        4.3027 * (2 * se ** 2) ** 0.5, abs=0.02)


def test_per_second_uses_whole_seconds_of_the_window_and_the_floor() -> None:
    # the last, partial second (t=10 of a 10 s window) is left out
    base = entry(per_second=seconds([100.0] * 10 + [3.0]))
    other = entry(per_second=seconds([100.5] * 10 + [1.0]))
    result = noise(base, other)
    assert result['intervals']['ops_pct']['noise_pct'] == 0.0
    assert result['significant'] is False  # no noise at all, but below the floor
    other = entry(ops=204.0, per_second=seconds([102.0] * 10))
    assert noise(base, other)['significant'] is False  # 2 %: below the default 5 %
    calibrated = Floors(pct={'ops_pct': 1.0}, run_id='cal')
    row = noise(base, other, floors=calibrated)
    assert row['significant'] is True and row['intervals']['ops_pct']['floor_pct'] == 1.0


def test_repeats_welch_interval_and_the_floor_unless_interleaved() -> None:
    base = entry(repeats=[{'ops_per_s': v} for v in (100.0, 102.0, 98.0)])
    other = entry(ops=160.0, repeats=[{'ops_per_s': v} for v in (80.0, 82.0, 78.0)])
    result = noise(base, other)
    # se = sqrt(4/3 + 4/3) of the repeats' mean of 100 (as much of the figure, 200),
    # df = 4, t computed: 2.7764
    within = round(2.7764 * (8 / 3) ** 0.5, 2)
    assert result['method'] == 'repeats'
    assert result['intervals']['ops_pct']['noise_pct'] == pytest.approx(within, abs=0.01)
    assert result['intervals']['ops_pct']['floor_pct'] == 5.0  # repeats in one application
    assert result['noise_pct'] == 5.0 and result['significant'] is True
    interleaved = noise(base, other, interleaved=True)
    assert 'floor_pct' not in interleaved['intervals']['ops_pct']
    assert interleaved['noise_pct'] == pytest.approx(within, abs=0.01)
    noisy_a = entry(repeats=[{'ops_per_s': v} for v in (100.0, 120.0, 80.0)])
    noisy_b = entry(ops=210.0, repeats=[{'ops_per_s': v} for v in (105.0, 125.0, 85.0)])
    assert noise(noisy_a, noisy_b, interleaved=True)['significant'] is False


def test_t_quantiles_are_computed() -> None:
    for df, expected in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423),
                         (120, 1.9799), (1e12, 1.9600)):
        assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)
    assert 2.4469 < t_quantile(0.975, 5.5) < 2.5706  # between its neighbours'


def test_open_loop_tests_the_latency() -> None:
    base = entry(mode='open', per_second=[{'t': i, 'ops': 100, 'lat_mean_ms': 2.0 + i % 2 * 0.01}
                                          for i in range(10)])
    other = entry(mode='open', mean=3.0,
                  per_second=[{'t': i, 'ops': 100, 'lat_mean_ms': 3.0} for i in range(10)])
    result = noise(base, other)
    assert result['tested'] == 'latency_mean' and result['significant'] is True
    assert result['intervals']['latency_mean_pct']['method'] == 'per-second'


def test_p99_noise_from_the_histogram_is_at_least_that_of_the_mean() -> None:
    rng = random.Random(5)
    hist = hist_of([int(rng.lognormvariate(14.5, 0.5)) for _ in range(20000)])
    flat = seconds([100.0] * 16)
    steady = entry(histogram=hist.to_dict(), per_second=flat)
    row = noise(steady, entry(histogram=hist.to_dict(), per_second=flat), interleaved=True)
    p99 = row['intervals']['latency_p99_pct']
    # 20,000 requests: the ranks 99 % +/- 0.14 % hold the p99 within a few %
    assert p99['method'] == 'histogram' and 0.5 < p99['noise_pct'] < 6
    wobbly = [dict(s, lat_mean_ms=1.0 + 0.3 * (s['t'] // 4 % 2)) for s in flat]
    noisy = noise(entry(histogram=hist.to_dict(), per_second=wobbly),
                  entry(histogram=hist.to_dict(), per_second=wobbly), interleaved=True)
    assert noisy['intervals']['latency_p99_pct']['noise_pct'] \
        == noisy['intervals']['latency_mean_pct']['noise_pct'] > p99['noise_pct']


def test_compare_runs_matches_variants_and_workloads_by_name() -> None:
    a = record([variant('off', [entry('x', ops=100.0), entry('y')]),
                variant('tls', [entry('x', ops=50.0)])], run_id='a')
    b = record([variant('off', [entry('x', ops=110.0), entry('z')]),
                variant('sse', [entry('x')]),
                variant('tls', [entry('x', ops=40.0)])], run_id='b')
    rows = dump(between(load(Run, a), load(Run, b), CALIBRATED))
    assert [(r['variant'], r['workload'], r['ops_pct'], r['run_a'], r['run_b'])
            for r in rows] == [('off', 'x', 10.0, 'a', 'b'), ('tls', 'x', -20.0, 'a', 'b')]


# -- merge_repeats -------------------------------------------------------------------------

def hist_of(values: List[int]) -> Histogram:
    hist = Histogram()
    hist.record_many(values)
    return hist


def test_merge_repeats_means_spread_and_merged_histogram() -> None:
    rng = random.Random(3)
    values_a = [int(rng.uniform(1e6, 2e6)) for _ in range(990)] + [50 * 10 ** 6] * 10
    values_b = [int(rng.uniform(3e6, 4e6)) for _ in range(1000)]
    a = entry(mib=100.0, ops=200.0, cpu=1.0, rss=500.0)
    b = entry(mib=110.0, ops=220.0, cpu=3.0, rss=520.0)
    for e, values in ((a, values_a), (b, values_b)):
        hist = hist_of(values)
        e['histogram'] = hist.to_dict()
        e['latency_ms'] = hist.summary()
        e['per_second'] = seconds([1.0, 2.0])
    merged = merge_repeats([a, b])
    assert merged['throughput_mib_s'] == 105.0 and merged['ops_per_s'] == 210.0
    assert merged['ops'] == 2100 and isinstance(merged['ops'], int)
    assert merged['rgw'] == {'daemons': 1, 'cpu_cores': 2.0, 'rss_mib': 510.0}
    assert merged['spread']['throughput_mib_s'] == round(50 ** 0.5, 6)
    assert merged['spread']['rgw']['cpu_cores'] == round(2 ** 0.5, 6)
    union = hist_of(values_a + values_b)
    assert Histogram.from_dict(merged['histogram']) == union
    assert merged['latency_ms'] == union.summary()
    # the percentile of the merged counts, not an average of the repeats' percentiles
    assert merged['latency_ms']['p99'] != round((a['latency_ms']['p99']
                                                 + b['latency_ms']['p99']) / 2, 6)
    assert len(merged['repeats']) == 2
    assert all('histogram' not in r for r in merged['repeats'])
    assert merged['repeats'][0]['per_second'] == seconds([1.0, 2.0])
    assert 'per_second' not in merged
    assert merged['name'] == 'put-4KiB' and merged['concurrency'] == 16


def test_merge_repeats_one_repeat_and_failures() -> None:
    one = entry(per_second=seconds([1.0, 2.0]))
    merged = merge_repeats([one])
    assert merged['ops_per_s'] == 200.0 and merged['spread']['ops_per_s'] is None
    assert merged['per_second'] == one['per_second']
    failed = dict(entry(), error='timeout')
    merged = merge_repeats([failed, entry(ops=300.0)])
    assert merged['ops_per_s'] == 300.0 and 'error' not in merged
    assert len(merged['repeats']) == 2
    merged = merge_repeats([failed])
    assert merged['error'] == 'timeout' and 'ops_per_s' not in merged
    with pytest.raises(ValueError):
        merge_repeats([])


# -- reports -------------------------------------------------------------------------------


def test_result_to_text() -> None:
    text = result_to_text(load(Run, small_record()))
    assert text.split('\n') == [
        'run r1  profile sse  state complete  ceph 16.2.15',
        'started 2025-09-16 10:15:00Z  finished 2025-09-16 10:45:12Z  baseline off',
        '',
        'WORKLOAD  VARIANT  MiB/s         OPS/s         MEAN ms       P99 ms  RGW CPU       '
        'RGW MiB',
        'put-4KiB  off      17.20         4,409         0.900         4.17    1.50          880.0',
        # Ten figures with an interval, four of them changes: all at 1 - 4 * 5 % / 10.
        '          kms      -20.0% ±5.9*  -20.0% ±5.9*  +25.6% ±5.9*  0.0%    +10.0% ±5.9*  '
        '0.0% ±5.9',
        '          tls      -0.6% ±9.1    -0.2% ±9.1    +1.1% ±5.9    +0.7%   +6.7% ±9.8    '
        '+0.1% ±5.9',
        '          sse-c    -             -             -             -       -             -',
        '',
        'off: absolute figures; other variants: % change vs off.',
        '±: half the 98 % interval of the change: the larger of the noise measured in the',
        '   workloads and the floor; * the interval leaves out 0 (a change beyond both).',
        '   The level is that of all the figures of the table taken together: when none',
        '   changed, the chance that any is marked is at most 5 %.',
        'floor (the noise between two applications of the same settings; see the calibrate',
        '   profile): 5.0% for each figure.',
        '',
        'settings:',
        '  off    sse=off',
        '  kms    sse=kms-testing',
        '  tls    tls=rgw',
        '  sse-c  sse=sse-c',
        '',
        'sse-c / put-4KiB: variant failed: refused',
        '',
        'daemons:',
        'WORKLOAD  VARIANT  DAEMONS  COUNT  CPU cores  CPU/DAEMON  RSS MiB  MiB/DAEMON',
        'put-4KiB  off      RGW      1      1.500      1.500       880.0    880.0',
        'put-4KiB  kms      RGW      1      1.650      1.650       880.0    880.0',
        'put-4KiB  tls      RGW      1      1.600      1.600       881.0    881.0',
        'daemons: CPU cores and RSS summed over the daemons counted, and their mean per daemon;',
        "   OSD: the cluster's OSDs on the hosts the agents sampled.",
    ]
    assert max(len(line) for line in text.split('\n')) <= 100


def test_result_to_text_of_a_record_stored_before_intervals() -> None:
    # Rows without `intervals` show as they did: the one NOISE column, the headline mark.
    rec = small_record()
    for row in rec['comparison']:
        del row['intervals']
    lines = result_to_text(load(Run, rec)).split('\n')
    assert lines[3].endswith('RGW MiB  NOISE')
    assert lines[5] == ('          kms      -20.0%*  -20.0%*  +25.6%   0.0%    +10.0%   0.0%     '
                        '±5.9%')
    assert 'NOISE: the smallest change that is not noise.' in lines


def test_result_to_markdown() -> None:
    lines = result_to_markdown(load(Run, small_record())).split('\n')
    assert lines[:8] == ['## rgwbench run r1', '', '* Profile: sse', '* State: complete',
                         '* Ceph version: 16.2.15', '* Baseline: off',
                         '* Started: 2025-09-16 10:15:00Z, finished: 2025-09-16 10:45:12Z',
                         '']
    assert lines[8] == ('| Workload | Variant | Throughput MiB/s | Ops/s | Latency mean ms | '
                        'Latency p99 ms | RGW CPU cores | RGW RSS MiB |')
    assert lines[10] == ('| put-4KiB | off (baseline) | 17.20 | 4,409 | 0.900 | 4.17 | 1.50 '
                         '| 880.0 |')
    # no histogram in these records: the p99 has no interval
    assert lines[11] == ('| put-4KiB | kms | **-20.0% ±5.9** | **-20.0% ±5.9** | **+25.6% ±5.9** '
                         '| 0.0% | **+10.0% ±5.9** | 0.0% ±5.9 |')
    assert '* kms: sse=kms-testing' in lines


def test_result_to_csv_parses_back() -> None:
    rows = list(csv.DictReader(io.StringIO(result_to_csv(load(Run, small_record())))))
    assert [(r['variant'], r['baseline'], r['workload']) for r in rows] == [
        ('off', 'yes', 'put-4KiB'), ('kms', 'no', 'put-4KiB'), ('tls', 'no', 'put-4KiB'),
        ('sse-c', 'no', 'put-4KiB')]
    assert rows[0]['throughput_mib_s'] == '17.2' and rows[0]['ops_pct'] == ''
    assert rows[0]['latency_p99_ms'] == '4.17' and rows[0]['rgw_rss_mib'] == '880.0'
    assert float(rows[1]['ops_pct']) == -20.0 and rows[1]['significant'] == 'yes'
    assert (rows[1]['ops_pct_low'], rows[1]['ops_pct_high']) == ('-25.93', '-14.07')
    assert rows[1]['latency_p99_pct_significant'] == 'no'
    assert rows[2]['significant'] == 'no' and rows[2]['rgw_cpu_pct_significant'] == 'no'
    assert rows[1]['rgw_cpu_pct_significant'] == 'yes'
    assert rows[3]['error'] == 'variant failed: refused' and rows[3]['ops_per_s'] == ''


def test_results_to_text_and_comparison_to_text() -> None:
    results = ResultStore(MemoryStore(), lambda: 50)
    results.save(load(Run, small_record()))
    assert results_to_text(results.summaries()).split('\n') == [
        'RUN  PROFILE  STATE     STARTED               FINISHED              BASELINE  VARIANTS',
        'r1   sse      complete  2025-09-16 10:15:00Z  2025-09-16 10:45:12Z  off       4',
    ]
    assert results_to_text([]) == 'no results yet'
    text = comparison_to_text([load(Comparison, r) for r in small_record()['comparison']],
                              title='r2 vs r1')
    assert text.split('\n')[:3] == [
        'r2 vs r1',
        'VARIANT  WORKLOAD  MiB/s         OPS/s         MEAN ms       P99 ms  RGW CPU       '
        'RGW MiB',
        'kms      put-4KiB  -20.0% ±5.9*  -20.0% ±5.9*  +25.6% ±5.9*  0.0%    +10.0% ±5.9*  '
        '0.0% ±5.9',
    ]
    assert 'nothing to compare' in comparison_to_text([])


def test_renderers_survive_a_copy_without_comparison() -> None:
    # Without a stored comparison the renderers compare the run themselves, with the
    # floors of a cluster never calibrated (the record says nothing of one).
    rec = copy.deepcopy(small_record())
    rec['comparison'] = []
    uncalibrated = load(Run, small_record())
    uncalibrated.comparison = compare.comparison(uncalibrated)
    text = result_to_text(stored_run(rec))
    assert text == result_to_text(uncalibrated)
    assert 'untested against restart noise' in text


def test_an_open_loop_workload_is_marked_and_its_working_set_shown() -> None:
    shape: Dict[str, Any] = {'mode': 'open', 'rate': 200.0, 'objects': 5000,
                             'working_set_bytes': 5000 * 4096, 'range': '0-1KiB'}
    base = entry('get-4KiB@200/s', ops=199.2, **shape)
    other = entry('get-4KiB@200/s', ops=198.0, mean=3.0, **shape)
    closed = entry('put-4KiB', mode='closed')
    rec = record([variant('off', [base, closed]), variant('on', [other, closed])])
    text = result_to_text(load(Run, rec)).split('\n')
    assert text[4].startswith('get-4KiB@200/s (open)  off')
    assert any(line.startswith('put-4KiB ') for line in text)
    legend = text.index('(open): open loop at a fixed rate; latency counts from each '
                        'request\'s intended start')
    assert text[legend + 1] == ('(time waiting for a free connection included: no coordinated '
                                'omission).')
    index = text.index('workloads:')
    assert text[index + 1:index + 5] == [
        '  get-4KiB@200/s  open loop at 200 ops/s asked, 199.2 achieved',
        '                  working set 5,000 objects, 19.53 MiB',
        '                  ranged GET of bytes 0-1KiB',
        '']  # a closed-loop PUT has nothing to say there
    assert max(len(line) for line in text) <= 100
    markdown = result_to_markdown(load(Run, rec))
    assert '| get-4KiB@200/s (open) | off (baseline) |' in markdown
    assert '* get-4KiB@200/s: open loop at 200 ops/s asked, 199.2 achieved; working set' \
        in markdown
    rows = list(csv.DictReader(io.StringIO(result_to_csv(load(Run, rec)))))
    opened = ('get-4KiB@200/s', 'open', '200.0', '20480000')
    assert [(r['workload'], r['mode'], r['rate'], r['working_set_bytes']) for r in rows] == [
        opened, opened, ('put-4KiB', 'closed', '', ''), ('put-4KiB', 'closed', '', '')]


def test_a_run_keeps_what_the_engine_says_a_workload_was() -> None:
    result = dict(entry('get-4KiB@50/s'), mode='open', rate=50.0, objects=300,
                  working_set_bytes=300 * 4096, range=None, run_tag='x', sse='none')
    kept = WorkloadResult.from_result(result)
    assert (kept.mode, kept.rate, kept.objects, kept.working_set_bytes) == (
        'open', 50.0, 300, 300 * 4096)
    assert 'run_tag' not in dump(kept) and 'range' not in dump(kept)
    merged = merge_repeats([dump(kept), dump(kept)])
    assert (merged['mode'], merged['rate'], merged['working_set_bytes']) == (
        'open', 50.0, 300 * 4096)
