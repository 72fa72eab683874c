"""Records of runs as the result store keeps them (JSON), for tests: entries, variants,
runs with their comparison, and a small run of four variants for the reports."""
from typing import Any, Dict, List, Optional

from rgwbench.results import compare
from rgwbench.results.calibration import Floors
from rgwbench.results.model import Run
from rgwbench.serial import dump, load


#: a cluster whose calibration found the default floor: these tests are about the rule at
#: and beyond a floor (an uncalibrated cluster's runs: test_significance)
CALIBRATED = Floors(run_id='calibration')


def comparison(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [dump(row) for row in compare.comparison(load(Run, record), CALIBRATED)]


def entry(name: str = 'put-4KiB', mib: float = 100.0, ops: float = 200.0,
          mean: float = 2.0, p99: float = 10.0, cpu: Optional[float] = 1.0,
          rss: Optional[float] = 500.0, **extra: Any) -> Dict[str, Any]:
    rgw: Dict[str, Any] = {'daemons': 1}
    if cpu is not None:
        rgw['cpu_cores'] = cpu
    if rss is not None:
        rgw['rss_mib'] = rss
    out = {'name': name, 'op': 'put', 'object_size': '4KiB', 'concurrency': 16,
           'duration_s': 10.0, 'ops': int(ops * 10), 'bytes': int(mib * 10 * (1 << 20)),
           'errors': 0, 'throughput_mib_s': mib, 'ops_per_s': ops,
           'latency_ms': {'mean': mean, 'p50': mean, 'p90': p99 / 2, 'p99': p99,
                          'p999': p99 * 2, 'max': p99 * 3},
           'rgw': rgw}
    out.update(extra)
    return out


def seconds(values: List[float]) -> List[Dict[str, Any]]:
    return [{'t': i, 'ops': v, 'bytes': v * 4096, 'errors': 0, 'lat_mean_ms': 1.0}
            for i, v in enumerate(values)]


def record(variants: List[Dict[str, Any]], run_id: str = 'r1', state: str = 'complete',
           started: float = 1758017700.0, baseline: str = 'off') -> Dict[str, Any]:
    return {'run_id': run_id, 'profile': 'sse', 'state': state, 'ceph_version': '16.2.15',
            'started': started, 'finished': started + 1812, 'baseline': baseline,
            'error': None, 'variants': variants, 'comparison': []}


def variant(name: str, workloads: List[Dict[str, Any]], error: Optional[str] = None,
            **settings: Any) -> Dict[str, Any]:
    return {'name': name, 'settings': settings, 'error': error, 'workloads': workloads}


def small_record() -> Dict[str, Any]:
    off = entry('put-4KiB', mib=17.2, ops=4409.0, mean=0.9, p99=4.17, cpu=1.5, rss=880.0,
                per_second=seconds([4400, 4420, 4390, 4410, 4405, 4415, 4400, 4410, 4395,
                                    4425]))
    sse = entry('put-4KiB', mib=13.76, ops=3527.2, mean=1.13, p99=4.17, cpu=1.65, rss=880.0,
                per_second=seconds([3520, 3530, 3525, 3529, 3524, 3531, 3522, 3528, 3525,
                                    3530]))
    tls = entry('put-4KiB', mib=17.1, ops=4400.0, mean=0.91, p99=4.2, cpu=1.6, rss=881.0,
                per_second=seconds([4000, 4800, 4100, 4700, 4400, 4400, 4300, 4500, 4400,
                                    4400]))
    rec = record([variant('off', [off], sse='off'),
                  variant('kms', [sse], sse='kms-testing'),
                  variant('tls', [tls], sse='off', tls='rgw'),
                  variant('sse-c', [], error='refused', sse='sse-c')])
    rec['comparison'] = comparison(rec)
    return rec
