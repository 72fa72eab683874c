"""Per-daemon server figures in the run record, and HAProxy's columns in the tables."""
import copy
import csv
import io
import json
import os
import re
from typing import Any, Dict, List, Optional

from rgwbench.results.calibration import Floors
from rgwbench.results.compare import between, comparison, merge_repeats
from rgwbench.serial import dump, load
from rgwbench.results.model import (Comparison, DaemonFigures, Run, VariantResult, WorkloadResult,
                                    columns, strip_histograms)
from rgwbench.results.report import (comparison_to_text, result_to_csv, result_to_markdown,
                                     result_to_text)
from rgwbench.tests.fixtures import steady_seconds

#: a cluster whose calibration found the default floor (an uncalibrated one: test_significance)
CALIBRATED = Floors(run_id='calibration')

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'stored_runs.json')) as f:
    STORED: Dict[str, Dict[str, Any]] = json.load(f)


def daemon(name: str, cpu: float, rss: float) -> Dict[str, Any]:
    return {'daemon': name, 'host': 'h1', 'cpu_cores': cpu, 'rss_mib': rss,
            'rss_mib_max': rss + 1}


def servers(rgw: List[Dict[str, Any]],
            haproxy: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, found in (('rgw', rgw), ('haproxy', haproxy)):
        if found is not None:
            out[key] = {'daemons': len(found),
                        'cpu_cores': round(sum(d['cpu_cores'] for d in found), 4),
                        'rss_mib': round(sum(d['rss_mib'] for d in found), 2),
                        'rss_mib_max': round(sum(d['rss_mib_max'] for d in found), 2),
                        'per_daemon': found}
    return out


def loadgen_result(ops_per_s: float, rgw_cpu: float, haproxy_cpu: Optional[float] = None,
                   seconds: bool = False) -> Dict[str, Any]:
    """A load generator's result, as the agents' merge gives it (the parts a run keeps);
    with `seconds`, ten steady seconds of it."""
    result = {'ops': int(ops_per_s * 10), 'bytes': int(ops_per_s * 10) * 4096, 'errors': 0,
              'ops_per_s': ops_per_s, 'throughput_mib_s': ops_per_s * 4096 / 2.0 ** 20,
              'elapsed_s': 10.0, 'latency_ms': {'mean': 1000.0 / ops_per_s, 'p50': 1.0,
                                                'p90': 2.0, 'p99': 3.0, 'p999': 4.0,
                                                'max': 5.0},
              'server': {'machine': {}}, 'hosts': ['machine']}
    result.update(servers([daemon('rgw.a', rgw_cpu, 100.0), daemon('rgw.b', rgw_cpu / 2, 90.0)],
                          None if haproxy_cpu is None
                          else [daemon('haproxy.ingress.h1.x', haproxy_cpu, 20.0)]))
    if seconds:
        result['per_second'] = steady_seconds(ops_per_s, 4096, 10)
    return result


def workload(name: str, *repeats: Dict[str, Any]) -> WorkloadResult:
    merged = merge_repeats([WorkloadResult.from_result(r) for r in repeats])
    return WorkloadResult.measured(name=name, op='put', object_size='4KiB', concurrency=8,
                                   duration_s=10.0, merged=merged, error=None)


def run_of(ingress_in_baseline: bool, haproxy_cpu: float = 0.5, seconds: bool = False) -> Run:
    base = loadgen_result(1000.0, 1.0, 0.1 if ingress_in_baseline else None, seconds)
    other = loadgen_result(800.0, 0.8, haproxy_cpu, seconds)
    run = Run(run_id='r1', profile='tls', state='complete', baseline='plain', variants=[
        VariantResult(name='plain', settings={}, workloads=[workload('put', base)]),
        VariantResult(name='tls-ingress', settings={'tls@ingress': 'https'},
                      workloads=[workload('put', other)])])
    run.comparison = comparison(run, CALIBRATED)
    return run


def test_each_daemon_is_kept_in_the_record_and_its_json() -> None:
    run = run_of(ingress_in_baseline=False)
    entry = run.variants[1].workloads[0]
    assert entry.figures.rgw is not None and entry.figures.haproxy is not None
    assert entry.figures.rgw.per_daemon == [DaemonFigures('rgw.a', 'h1', 0.8, 100.0, 101.0),
                                            DaemonFigures('rgw.b', 'h1', 0.4, 90.0, 91.0)]
    assert entry.figures.rgw.cpu_cores == 1.2 and entry.figures.haproxy.cpu_cores == 0.5
    shown = strip_histograms(dump(run))  # what `results show -f json` prints
    doc = shown['variants'][1]['workloads'][0]
    assert doc['rgw']['per_daemon'] == [daemon('rgw.a', 0.8, 100.0),
                                        daemon('rgw.b', 0.4, 90.0)]
    assert doc['haproxy']['per_daemon'] == [daemon('haproxy.ingress.h1.x', 0.5, 20.0)]
    assert doc['haproxy']['cpu_cores'] == 0.5 and doc['rgw']['daemons'] == 2
    assert dump(load(Run, copy.deepcopy(dump(run)))) == dump(run)
    assert 'haproxy' not in shown['variants'][0]['workloads'][0]


def test_repeats_average_each_daemon() -> None:
    entry = workload('put', loadgen_result(1000.0, 1.0, 0.2), loadgen_result(1000.0, 0.5, 0.4))
    rgw, haproxy = entry.figures.rgw, entry.figures.haproxy
    assert rgw is not None and haproxy is not None and entry.spread is not None
    assert [(d.daemon, d.cpu_cores) for d in rgw.per_daemon or []] == [
        ('rgw.a', 0.75), ('rgw.b', 0.375)]
    assert rgw.cpu_cores == 1.125 and haproxy.cpu_cores == 0.3
    assert entry.spread.rgw is not None and entry.spread.rgw.per_daemon is not None
    assert entry.spread.rgw.per_daemon[0].cpu_cores is not None


def test_runs_stored_before_keep_loading_and_their_tables_have_no_haproxy_columns() -> None:
    for stored in STORED.values():
        run = load(Run, copy.deepcopy(stored))
        assert dump(run) == stored
        assert not [f for f in columns(run) if f.optional]
        text = result_to_text(load(Run, stored))
        assert 'RGW CPU' in text and 'HAP' not in text and 'HAProxy' not in text
        assert 'haproxy' not in result_to_csv(load(Run, stored))
        assert 'HAProxy' not in result_to_markdown(load(Run, stored))
        rows = [dump(c) for c in comparison(run, CALIBRATED)]
        assert rows and not [k for row in rows for k in row if 'haproxy' in k]
        assert 'HAP' not in comparison_to_text([load(Comparison, r) for r in rows])


def table_cells(text: str, variant: str) -> Dict[str, str]:
    """The cells of a variant's row in the plain table, by column (a row without a workload)."""
    lines = text.splitlines()
    header = re.split(r'\s{2,}', next(line for line in lines if line.startswith('WORKLOAD')))
    line = next(line for line in lines if line.strip().startswith(variant + ' '))
    row = re.split(r'\s{2,}', line.strip())
    return dict(zip(header[1:], row))


def test_tables_show_haproxy_columns_with_an_ingress() -> None:
    run = run_of(ingress_in_baseline=False)
    text = result_to_text(run)
    assert 'HAP CPU' in text and 'HAP MiB' in text
    # The baseline ran without an ingress: the ingress variant's own figures.
    cells = table_cells(text, 'tls-ingress')
    assert (cells['HAP CPU'], cells['HAP MiB']) == ('0.500', '20.00')
    # RGW CPU takes its noise from the ops/s, and the ops have no per-second series here:
    # no interval for either (held to the floor alone, the CPU was marked).
    assert (cells['RGW CPU'], cells['OPS/s']) == ('-20.0%', '-20.0%')
    assert [line for line in text.splitlines() if line.startswith('put ')][0].split()[-2:] == [
        '-', '-']  # the baseline's, without an ingress
    assert 'HAP CPU, HAP MiB: HAProxy' in text
    assert '| HAProxy CPU cores | HAProxy RSS MiB |' in result_to_markdown(run)
    header = next(csv.reader(io.StringIO(result_to_csv(run))))
    end = header.index('error') + 1
    assert header[end - 5:end] == ['haproxy_cpu_pct', 'haproxy_rss_pct', 'significant',
                                   'noise_pct', 'error']
    assert header[-6:] == ['haproxy_cpu_pct_low', 'haproxy_cpu_pct_high',
                           'haproxy_cpu_pct_significant', 'haproxy_rss_pct_low',
                           'haproxy_rss_pct_high', 'haproxy_rss_pct_significant']
    assert 'haproxy_cpu_cores' in header
    # An ingress on both sides: its % change.
    both = run_of(ingress_in_baseline=True)
    cells = table_cells(result_to_text(both), 'tls-ingress')
    # HAProxy's CPU as RGW's; its memory has the floor alone (5 %), at the level of the
    # table's figures together (a 97.5 % here)
    assert (cells['HAP CPU'], cells['HAP MiB']) == ('+400.0%', '0.0% ±5.7')
    assert both.comparison[0].changes['haproxy_cpu_pct'] == 400.0
    # With steady seconds the ops/s have a small noise, and the CPU with them: the floor
    # decides, and the change is marked.
    cells = table_cells(result_to_text(run_of(ingress_in_baseline=True, seconds=True)),
                        'tls-ingress')
    assert re.fullmatch(r'\+400\.0% ±\d+\.\d\*', cells['HAP CPU']), cells
    assert re.fullmatch(r'-20\.0% ±\d+\.\d\*', cells['RGW CPU']), cells
    assert re.fullmatch(r'0\.0% ±5\.\d', cells['HAP MiB']), cells  # unmarked, the floor alone
    rows = dump(between(both, run_of(ingress_in_baseline=True, haproxy_cpu=0.25), CALIBRATED))
    text = comparison_to_text([load(Comparison, r) for r in rows])
    assert 'HAP CPU' in text and '-50.0%' in text
