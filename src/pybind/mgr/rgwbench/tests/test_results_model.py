"""The typed run record: its JSON round trip, records stored before it, the figure table."""
import copy
import csv
import io
import json
import os
from typing import Any, Dict, Tuple

import pytest

from rgwbench.checks.finding import Level
from rgwbench.serial import dump, load
from rgwbench.loadgen.histogram import Histogram
from rgwbench.results.compare import merge_repeats
from rgwbench.results.model import (CHARTED, COLUMNS, COMPARED, FIGURES, Change, Comparison,
                                    Finding, Position, Run, RunSummary, TargetFigures,
                                    VariantResult, WorkloadResult, strip_histograms)
from rgwbench.results.report import result_to_csv, results_to_text
from rgwbench.results.seeds import shown_json
from rgwbench.results.store import ResultStore, encode

from rgwbench.tests.fixtures import MemoryStore

#: two runs as the engine stored them before the record was typed (its test setup, with the
#: S3 stub): one measured each workload twice, the other once (per-second series kept)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'stored_runs.json')) as f:
    STORED: Dict[str, Dict[str, Any]] = json.load(f)


@pytest.mark.parametrize('name', ['repeats', 'once'])
def test_a_stored_record_loads_and_writes_back_the_same(name: str) -> None:
    stored = STORED[name]
    run = load(Run, copy.deepcopy(stored))
    assert dump(run) == stored
    # byte for byte, as the store encodes it and as `results export` prints it
    assert json.dumps(dump(run), sort_keys=True, separators=(',', ':')) == json.dumps(
        stored, sort_keys=True, separators=(',', ':'))
    assert json.dumps(dump(run), sort_keys=True, indent=1) == json.dumps(
        stored, sort_keys=True, indent=1)
    (as_is, threads) = run.variants
    assert threads.name == 'threads' and threads.changes and threads.changes[0].state == 'undone'
    (workload,) = as_is.workloads
    assert workload.name == 'put-4KiB' and workload.error is None
    assert workload.figures.ops == stored['variants'][0]['workloads'][0]['ops']
    assert workload.figures.latency_ms is not None and workload.figures.latency_ms.p99
    assert workload.histogram and workload.repeats
    assert len(workload.repeats) == (2 if name == 'repeats' else 1)
    assert all(r.histogram is None and r.per_second for r in workload.repeats)
    assert (workload.per_second is not None) == (name == 'once')
    assert run.comparison[0].variant == 'threads'
    assert run.comparison[0].changes['throughput_pct'] is not None


def test_every_stored_record_writes_back_byte_for_byte() -> None:
    assert STORED
    for stored in STORED.values():
        run = load(Run, copy.deepcopy(stored))
        assert encode(dump(run)) == encode(stored)                 # what the store writes
        assert json.dumps(dump(run), indent=1, sort_keys=True) == json.dumps(
            stored, indent=1, sort_keys=True)                       # what export prints
        # and what a renderer reads: every workload and comparison row, typed
        for variant in stored['variants']:
            for workload in variant['workloads']:
                assert dump(load(WorkloadResult, workload)) == workload
        for row in stored['comparison']:
            assert dump(load(Comparison, row)) == row


def test_the_store_keeps_a_run_as_its_json_and_reads_it_back() -> None:
    results = ResultStore(MemoryStore(), lambda: 10)
    stored = STORED['repeats']
    results.save(load(Run, stored))
    assert dump(results.load(stored['run_id'])) == stored     # what `results export` prints
    assert results.load(stored['run_id']) == load(Run, stored)
    (summary,) = results.summaries()
    assert summary == RunSummary(run_id=stored['run_id'], profile='tiny', state='complete',
                                 started=stored['started'], finished=stored['finished'],
                                 baseline='as-is', variants=['as-is', 'threads'])
    # what `results ls -f json` prints
    assert dump(results.summaries()) == [{
        'run_id': stored['run_id'], 'profile': 'tiny', 'state': 'complete',
        'started': stored['started'], 'finished': stored['finished'], 'baseline': 'as-is',
        'variants': ['as-is', 'threads']}]
    assert results_to_text(results.summaries()) == results_to_text([summary])


def test_records_of_older_versions_load() -> None:
    # before the run's fraction was kept; a result with a key no version knows
    old = copy.deepcopy(STORED['once'])
    del old['fraction']
    old['variants'][0]['workloads'][0]['future'] = {'x': 1}
    run = load(Run, old)
    assert run.fraction is None and dump(run) == old
    run.state, run.current = 'failed', None
    assert 'fraction' not in dump(run) and dump(run)['current'] is None
    # a run cut off while it measured: the position it was at, then none
    running = dict(copy.deepcopy(STORED['once']), state='running', finished=None,
                   current={'variant': 'threads', 'workload': 'put-4KiB'})
    run = load(Run, running)
    assert run.current == Position(variant='threads', workload='put-4KiB')
    assert dump(run) == running
    run.current = None
    assert dump(run)['current'] is None


def test_a_run_made_here_has_the_keys_the_engine_always_wrote() -> None:
    run = Run(run_id='r1', profile='tiny', state='running', ceph_version='16.2.15',
              started=1.0, baseline='as-is', definition={'name': 'tiny'}, progress='starting',
              fraction=0.0)
    variant = VariantResult(name='as-is', settings={}, changes=[])
    run.variants.append(variant)
    run.current = Position(variant='as-is')
    assert sorted(dump(run)) == sorted(STORED['once'])
    assert dump(run)['current'] == {'variant': 'as-is', 'workload': None}
    assert dump(variant) == {'name': 'as-is', 'settings': {}, 'error': None,
                             'workloads': [], 'changes': [], 'client': None}
    failed = WorkloadResult.measured(name='put-4KiB', op='put', object_size='4KiB',
                                     concurrency=2, duration_s=1.0, merged=None,
                                     error='no result')
    assert dump(failed) == {'name': 'put-4KiB', 'op': 'put', 'object_size': '4KiB',
                            'concurrency': 2, 'duration_s': 1.0, 'error': 'no result'}
    assert dump(load(Change, {'kind': 'config', 'target': 't', 'state': 'undone',
                              'error': None}))['error'] is None


def test_a_workload_measured_again_is_stored_as_before() -> None:
    stored = STORED['repeats']['variants'][0]['workloads'][0]
    repeats = [load(WorkloadResult, r) for r in stored['repeats']]
    for repeat, histogram in zip(repeats, (Histogram(), Histogram())):
        histogram.record_many([1000000, 2000000])
        repeat.histogram = histogram
    merged = merge_repeats(repeats)
    entry = WorkloadResult.measured(
        name=stored['name'], op=stored['op'], object_size=stored['object_size'],
        concurrency=stored['concurrency'], duration_s=stored['duration_s'], merged=merged,
        error=None)
    written = dump(entry)
    assert sorted(written) == sorted(stored) and written['error'] is None
    # the same but for the latency, which comes from the (new) histograms
    assert {k: v for k, v in written.items() if k not in ('histogram', 'latency_ms')} == \
        {k: v for k, v in stored.items() if k not in ('histogram', 'latency_ms')}
    assert written['latency_ms'] == Histogram.from_dict(written['histogram']).summary()


def test_per_target_figures_are_typed_kept_and_averaged_over_repeats() -> None:
    def repeat(ops: Tuple[int, int]) -> WorkloadResult:
        return WorkloadResult.from_result({'ops': sum(ops), 'errors': 1, 'by_op': {}, 'targets': [
            {'url': 'http://a:80', 'workers': 2, 'ops': ops[0], 'errors': 1},
            {'url': 'http://b:80', 'workers': 2, 'ops': ops[1], 'errors': 0}]})
    once = repeat((10, 12))
    assert once.targets == [TargetFigures(url='http://a:80', workers=2, ops=10, errors=1),
                            TargetFigures(url='http://b:80', workers=2, ops=12, errors=0)]
    assert load(WorkloadResult, dump(once)) == once
    assert merge_repeats([once]).targets == once.targets
    merged = merge_repeats([once, repeat((20, 13))])
    assert [(t.url, t.workers, t.ops, t.errors) for t in merged.targets or []] == [
        ('http://a:80', 2, 15.0, 1.0), ('http://b:80', 2, 12.5, 0.0)]
    assert sum(t.ops or 0 for t in merged.targets or []) == merged.figures.ops
    assert [len(r.targets or []) for r in merged.repeats or []] == [2, 2]
    # runs stored before there were targets have none, and write none
    old = STORED['once']['variants'][0]['workloads'][0]
    assert 'targets' not in old and load(WorkloadResult, old).targets is None


def test_findings_are_kept_and_only_written_when_there_are_some() -> None:
    run = load(Run, STORED['once'])
    assert run.findings is None and 'findings' not in dump(run)
    # the findings of `ceph rgwbench check`, one type from the check to the record
    run.findings = [Finding(id='debug-rgw-raised', level=Level.skews,
                            summary='debug_rgw is 20', evidence=('client.rgw: debug_rgw 20',),
                            fix='ceph config rm client.rgw debug_rgw')]
    again = load(Run, json.loads(json.dumps(dump(run))))
    assert again.findings == run.findings
    assert dump(again)['findings'][0] == {
        'id': 'debug-rgw-raised', 'level': 'skews', 'summary': 'debug_rgw is 20',
        'evidence': ['client.rgw: debug_rgw 20'], 'fix': 'ceph config rm client.rgw debug_rgw'}


def test_strip_histograms_at_any_depth_without_touching_the_input() -> None:
    doc = {'histogram': {'b': [1]}, 'a': [{'ttfb_histogram': 1, 'per_second': [1], 'k': 2}],
           'per_second': [], 'by_op': {'put': {'histogram': {}, 'ops': 3}}}
    before = copy.deepcopy(doc)
    assert strip_histograms(doc) == {'a': [{'per_second': [1], 'k': 2}], 'per_second': [],
                                     'by_op': {'put': {'ops': 3}}}
    assert strip_histograms(doc, also=('per_second',)) == {'a': [{'k': 2}],
                                                           'by_op': {'put': {'ops': 3}}}
    assert doc == before


def test_one_table_names_the_figures_of_every_report() -> None:
    assert [f.change for f in COMPARED] == [
        'throughput_pct', 'ops_pct', 'latency_mean_pct', 'latency_p50_pct', 'latency_p99_pct',
        'rgw_cpu_pct', 'rgw_rss_pct', 'haproxy_cpu_pct', 'haproxy_rss_pct']
    assert [(f.column, f.label, f.change) for f in COLUMNS] == [
        ('MiB/s', 'Throughput MiB/s', 'throughput_pct'), ('OPS/s', 'Ops/s', 'ops_pct'),
        ('MEAN ms', 'Latency mean ms', 'latency_mean_pct'),
        ('P99 ms', 'Latency p99 ms', 'latency_p99_pct'),
        ('RGW CPU', 'RGW CPU cores', 'rgw_cpu_pct'), ('RGW MiB', 'RGW RSS MiB', 'rgw_rss_pct')]
    assert [(f.change, f.chart) for f in CHARTED] == [
        ('throughput_pct', 'Throughput'), ('latency_p50_pct', 'Latency p50'),
        ('latency_p99_pct', 'Latency p99'), ('rgw_cpu_pct', 'RGW CPU'),
        ('rgw_rss_pct', 'RGW memory')]
    assert all(f.better in ('higher', 'lower', None) and f.unit and f.label for f in FIGURES)
    header = next(csv.reader(io.StringIO(result_to_csv(load(Run, STORED['once'])))))
    assert header == [
        'run_id', 'variant', 'baseline', 'workload', 'op', 'object_size', 'concurrency',
        'duration_s', 'mode', 'rate', 'objects', 'working_set_bytes', 'range', 'ops', 'bytes',
        'errors', 'throughput_mib_s', 'ops_per_s',
        'latency_mean_ms', 'latency_p50_ms', 'latency_p90_ms', 'latency_p99_ms',
        'latency_p999_ms', 'latency_max_ms', 'rgw_daemons', 'rgw_cpu_cores',
        'rgw_cpu_cores_mean', 'rgw_rss_mib', 'rgw_rss_mib_mean', 'throughput_pct', 'ops_pct',
        'latency_mean_pct', 'latency_p99_pct', 'rgw_cpu_pct', 'rgw_rss_pct', 'significant',
        'noise_pct', 'error'] + [
        '%s_%s' % (change, end)
        for change in ('throughput_pct', 'ops_pct', 'latency_mean_pct', 'latency_p99_pct',
                       'rgw_cpu_pct', 'rgw_rss_pct')
        for end in ('low', 'high', 'significant')]


def test_each_figure_reads_its_place_in_the_json() -> None:
    stored = dict(STORED['once']['variants'][0]['workloads'][0],
                  haproxy={'daemons': 2, 'cpu_cores': 0.25, 'rss_mib': 20.5,
                           'cpu_cores_mean': 0.125, 'rss_mib_mean': 10.25},
                  osd={'daemons': 3, 'cpu_cores': 1.5, 'rss_mib': 900.0,
                       'cpu_cores_mean': 0.5, 'rss_mib_mean': 300.0})
    stored['rgw'] = dict(stored['rgw'], cpu_cores_mean=0.01, rss_mib_mean=1.5)
    workload = load(WorkloadResult, stored)
    paths = {'ops': ('ops',), 'bytes': ('bytes',), 'errors': ('errors',),
             'throughput_mib_s': ('throughput_mib_s',), 'ops_per_s': ('ops_per_s',),
             'latency_mean_ms': ('latency_ms', 'mean'), 'latency_p50_ms': ('latency_ms', 'p50'),
             'latency_p90_ms': ('latency_ms', 'p90'), 'latency_p99_ms': ('latency_ms', 'p99'),
             'latency_p999_ms': ('latency_ms', 'p999'), 'latency_max_ms': ('latency_ms', 'max'),
             'rgw_daemons': ('rgw', 'daemons'), 'rgw_cpu_cores': ('rgw', 'cpu_cores'),
             'rgw_cpu_cores_mean': ('rgw', 'cpu_cores_mean'),
             'rgw_rss_mib': ('rgw', 'rss_mib'),
             'rgw_rss_mib_mean': ('rgw', 'rss_mib_mean'),
             'haproxy_daemons': ('haproxy', 'daemons'),
             'haproxy_cpu_cores': ('haproxy', 'cpu_cores'),
             'haproxy_cpu_cores_mean': ('haproxy', 'cpu_cores_mean'),
             'haproxy_rss_mib': ('haproxy', 'rss_mib'),
             'haproxy_rss_mib_mean': ('haproxy', 'rss_mib_mean'),
             'osd_daemons': ('osd', 'daemons'), 'osd_cpu_cores': ('osd', 'cpu_cores'),
             'osd_cpu_cores_mean': ('osd', 'cpu_cores_mean')}
    assert [f.name for f in FIGURES] == list(paths)
    for figure in FIGURES:
        node: Any = stored
        for key in paths[figure.name]:
            node = node[key]
        assert figure.of(workload) == node, figure.name
    assert all(f.of(WorkloadResult()) is None for f in FIGURES)


def test_comparison_rows_keep_their_json() -> None:
    row = {'variant': 'tls', 'workload': 'put', 'run_a': 'a', 'run_b': 'b',
           'throughput_pct': -1.5, 'ops_pct': None, 'latency_mean_pct': 2.0,
           'latency_p50_pct': 1.0, 'latency_p99_pct': 3.0, 'rgw_cpu_pct': None,
           'rgw_rss_pct': 0.0, 'significant': True, 'noise_pct': 0.4, 'method': 'per-second',
           'tested': 'ops_per_s'}
    parsed = load(Comparison, row)
    assert dump(parsed) == row and parsed.noise.significant
    assert parsed.change(COLUMNS[0]) == -1.5 and parsed.change(FIGURES[0]) is None


def test_a_repeat_in_whose_window_no_request_ended_enters_no_mean() -> None:
    # A unit test's one-second repeat on a starved machine ended no request: its
    # throughput of 0 halved the mean, and its missing latency left a calibration
    # without latency floors.
    def repeat(ops: int) -> WorkloadResult:
        return WorkloadResult.from_result({'ops': ops, 'errors': 0, 'by_op': {},
                                           'throughput_mib_s': ops / 256.0,
                                           'ops_per_s': float(ops)})
    empty = repeat(0)
    assert empty.error == 'no request ended in its measured window'
    assert repeat(512).error is None
    merged = merge_repeats([repeat(512), empty, repeat(256)])
    assert merged.figures.ops_per_s == 384.0 and merged.error is None
    assert [r.error for r in merged.repeats or []] == [
        None, 'no request ended in its measured window', None]
    assert merge_repeats([empty]).error == 'no request ended in its measured window'
    # ... and the run's entry says so (CI: an SSE run's PUT had no ops and no error)
    entry = WorkloadResult.measured(name='put-4MiB', op='put', object_size='4MiB',
                                    concurrency=2, duration_s=4.0,
                                    merged=merge_repeats([empty]), error=None)
    assert dump(entry)['error'] == 'no request ended in its measured window'
    assert entry.figures.ops is None
    both = WorkloadResult.measured(name='put-4MiB', op='put', object_size='4MiB',
                                   concurrency=2, duration_s=4.0,
                                   merged=merge_repeats([empty]), error='agent a: gone')
    assert both.error == 'agent a: gone; no request ended in its measured window'


def test_a_shown_run_has_its_series_only_when_asked_for_them() -> None:
    run = load(Run, copy.deepcopy(STORED['once']))
    stored = [w['per_second'] for v in STORED['once']['variants'] for w in v['workloads']
              if w.get('per_second')]
    with_series = shown_json(run, series=True)
    assert [w['per_second'] for v in with_series['variants'] for w in v['workloads']
            if w.get('per_second')] == stored
    assert 'per_second' not in json.dumps(shown_json(run))
    assert 'histogram' not in json.dumps(with_series)
