"""`results show --layout seeds`: the published studies' tables."""
import csv
import io
import json
import re
from typing import Any, Dict, List

from rgwbench.results.calibration import Floors
from rgwbench.results.model import Run
from rgwbench.tests.fixtures import stored_run as stored
from rgwbench.results.seeds import (seeds_tables, seeds_to_csv, seeds_to_json,
                                    seeds_to_markdown, seeds_to_text)
from rgwbench.tests.fixtures import steady_seconds


def stored_run(record: Any) -> Run:
    """The run as a calibrated cluster's engine saves it (its marks are the layout's)."""
    return stored(record, Floors(run_id='calibration'))


def workload(name: str, mib_s: float, ops_s: float, mean: float, p99: float,
             cpu: float, rss: float) -> Dict[str, Any]:
    return {'name': name, 'op': name.split('-')[0], 'ops': int(ops_s * 10),
            'throughput_mib_s': mib_s, 'ops_per_s': ops_s,
            'latency_ms': {'mean': mean, 'p50': mean, 'p90': p99, 'p99': p99, 'p999': p99,
                           'max': p99},
            'rgw': {'daemons': 3, 'cpu_cores': cpu, 'rss_mib': rss},
            # steady seconds: the ops/s' noise (and with it the CPU's) is small; no latency
            # per second, so the latency changes have no interval
            'per_second': steady_seconds(ops_s, mib_s * (1 << 20) / ops_s, 16)}


RUN: Dict[str, Any] = {
    'run_id': 'r1', 'profile': 'tls', 'state': 'complete', 'baseline': 'no-tls',
    'variants': [
        {'name': 'no-tls', 'settings': {}, 'workloads': [
            workload('get-4MiB', 96351.0, 24088.0, 42.0, 80.0, 3.19, 313.0),
            workload('put-4MiB', 58086.0, 14521.0, 64.0, 120.0, 3.62, 308.0)]},
        {'name': 'tls-rgw', 'settings': {'tls@rgw': True}, 'workloads': [
            workload('get-4MiB', 95965.0, 23991.0, 42.0, 81.0, 4.46, 336.0),
            workload('put-4MiB', 55651.0, 13913.0, 70.0, 130.0, 6.19, 329.0)]},
        {'name': 'tls-ingress', 'settings': {'tls@ingress': True},
         'error': 'the orchestrator refused the ingress', 'workloads': []}],
}


def rows_of(table: Any) -> Dict[str, List[str]]:
    return {row[0]: row[1:] for row in table.rows}


def test_a_row_per_metric_and_a_column_per_variant_with_its_change() -> None:
    get, put = seeds_tables(stored_run(RUN))
    assert get.workload == 'get-4MiB' and put.workload == 'put-4MiB'
    assert get.headers == ['Metric', 'no-tls (baseline)', 'tls-rgw', '% change vs no-tls',
                           'tls-ingress', '% change vs no-tls']
    rows = rows_of(put)
    assert list(rows) == ['Throughput MiB/s', 'Ops/s', 'Latency mean ms', 'Latency p99 ms',
                          'RGW CPU cores', 'RGW CPU cores per daemon', 'RGW RSS MiB',
                          'RGW RSS MiB per daemon']
    assert rows['Throughput MiB/s'][:3] == ['58,086', '55,651', '-4.2%']
    # beside each sum its mean over the 3 RGWs, with no % change of its own (the sum's)
    assert rows['RGW CPU cores per daemon'][:3] == ['1.21', '2.06', '-']
    assert rows['RGW RSS MiB per daemon'][:3] == ['102.7', '109.7', '-']
    assert rows['Latency mean ms'][:3] == ['64.00', '70.00', '+9.4%']
    # the CPU's noise is that of the ops/s (small here): the default floor (5 %) decides
    assert rows['RGW CPU cores'][:3] == ['3.62', '6.19', '+71.0%*']
    # a variant that failed has no figures, and says why
    assert rows['Throughput MiB/s'][3:] == ['-', '-']
    assert put.missing == {'tls-ingress': 'the orchestrator refused the ingress'}


def test_every_format_carries_the_same_tables() -> None:
    text = seeds_to_text(stored_run(RUN))
    assert 'workload put-4MiB' in text and '+71.0%' in text
    assert 'tls-ingress: the orchestrator refused the ingress' in text
    markdown = seeds_to_markdown(stored_run(RUN))
    assert '| **Metric** | **no-tls (baseline)** | **tls-rgw** |' in markdown
    assert '| **RGW CPU cores** | 3.62 | 6.19 | **+71.0%** |' in markdown
    rows = list(csv.reader(io.StringIO(seeds_to_csv(stored_run(RUN)))))
    assert ['workload', 'get-4MiB'] in rows and ['RGW CPU cores', '3.62', '6.19', '+71.0%*',
                                                 '-', '-'] in rows
    doc = json.loads(json.dumps(seeds_to_json(stored_run(RUN))))
    assert doc['layout'] == 'seeds' and [t['workload'] for t in doc['tables']] == [
        'get-4MiB', 'put-4MiB']


def with_haproxy(entry: Dict[str, Any], cpu: float, rss: float) -> Dict[str, Any]:
    return dict(entry, haproxy={'daemons': 2, 'cpu_cores': cpu, 'rss_mib': rss})


#: TLS at RGW and at an HAProxy ingress: only the ingress variant has HAProxy figures,
#: and only for the workload its agents could read them in
INGRESS: Dict[str, Any] = {
    'run_id': 'r2', 'profile': 'tls', 'state': 'complete', 'baseline': 'no-tls',
    # RUN's no-tls and tls-rgw variants, then one behind the ingress
    'variants': RUN['variants'][:2] + [
        {'name': 'tls-haproxy', 'settings': {'tls@ingress': True}, 'workloads': [
            workload('get-4MiB', 70336.0, 17584.0, 57.0, 110.0, 2.95, 301.0),
            with_haproxy(workload('put-4MiB', 47050.0, 11762.0, 79.0, 150.0, 3.40, 300.0),
                         5.12, 61.5)]}],
}


def test_haproxy_rows_where_an_ingress_was_measured() -> None:
    get, put = seeds_tables(stored_run(INGRESS))
    rows = rows_of(put)
    assert list(rows) == ['Throughput MiB/s', 'Ops/s', 'Latency mean ms', 'Latency p99 ms',
                          'RGW CPU cores', 'RGW CPU cores per daemon', 'RGW RSS MiB',
                          'RGW RSS MiB per daemon', 'HAProxy CPU cores',
                          'HAProxy CPU cores per daemon', 'HAProxy RSS MiB',
                          'HAProxy RSS MiB per daemon']
    assert put.metrics[-4:] == ['haproxy_cpu_cores', 'haproxy_cpu_cores_mean',
                                'haproxy_rss_mib', 'haproxy_rss_mib_mean']
    assert rows['HAProxy CPU cores per daemon'] == ['-', '-', '-', '2.56', '-']
    # the baseline ran without an ingress: absolute figures only, no % change
    assert rows['HAProxy CPU cores'] == ['-', '-', '-', '5.12', '-']
    assert rows['HAProxy RSS MiB'] == ['-', '-', '-', '61.50', '-']
    # no variant measured HAProxy in this workload: no row for it
    assert 'HAProxy CPU cores' not in rows_of(get) and 'haproxy_cpu_cores' not in get.metrics
    # nor in a run without an ingress
    assert all('HAProxy' not in label
               for found in seeds_tables(stored_run(RUN)) for label in rows_of(found))


def test_haproxy_change_where_the_baseline_had_an_ingress_too() -> None:
    record = json.loads(json.dumps(INGRESS))
    base = record['variants'][0]['workloads'][1]
    record['variants'][0]['workloads'][1] = with_haproxy(base, 2.05, 60.0)
    put = rows_of(seeds_tables(stored_run(record))[1])
    assert put['HAProxy CPU cores'] == ['2.05', '-', '-', '5.12', '+149.8%*']
    assert put['HAProxy RSS MiB'] == ['60.00', '-', '-', '61.50', '+2.5%']


def test_every_format_carries_the_haproxy_rows() -> None:
    text = seeds_to_text(stored_run(INGRESS))
    assert re.search(r'HAProxy CPU cores +- +- +- +5\.12 +-', text)
    assert 'HAProxy rows: only where a variant ran behind an ingress' in text
    markdown = seeds_to_markdown(stored_run(INGRESS))
    assert '| **HAProxy CPU cores** | - | - | - | 5.12 | - |' in markdown
    assert 'HAProxy rows: only where a variant ran behind an ingress' in markdown
    rows = list(csv.reader(io.StringIO(seeds_to_csv(stored_run(INGRESS)))))
    assert ['HAProxy CPU cores', '-', '-', '-', '5.12', '-'] in rows
    assert ['HAProxy RSS MiB', '-', '-', '-', '61.50', '-'] in rows
    doc = json.loads(json.dumps(seeds_to_json(stored_run(INGRESS))))
    get, put = doc['tables']
    assert put['metrics'][-4:] == ['haproxy_cpu_cores', 'haproxy_cpu_cores_mean',
                                   'haproxy_rss_mib', 'haproxy_rss_mib_mean']
    assert put['rows'][put['metrics'].index('haproxy_cpu_cores')] == [
        'HAProxy CPU cores', '-', '-', '-', '5.12', '-']
    assert 'haproxy_cpu_cores' not in get['metrics']
    # a run without an ingress says nothing of HAProxy
    run = stored_run(RUN)
    assert 'HAProxy' not in seeds_to_text(run) + seeds_to_markdown(run) + seeds_to_csv(run)
