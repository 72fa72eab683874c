"""% change vs baseline, whether it is outside the run's own noise, and repeats.

Each row compares one workload of one variant with the same workload of the
baseline (or of another run): ``throughput_pct``, ``ops_pct``,
``latency_mean_pct``, ``latency_p50_pct``, ``latency_p99_pct``, ``rgw_cpu_pct`` and ``rgw_rss_pct``
are ``(variant - baseline) / baseline * 100``, None when the baseline's figure
is 0 or either figure is missing.

Significance rule (``significant``, ``noise_pct``, ``method``). The figure
tested is the throughput in operations per second (for an open-loop workload,
whose rate is fixed, the mean latency instead). A change is significant only
when it is outside the noise that the run itself measured, and at least 1 %:

* both sides ran at least two repeats (``method`` ``"repeats"``): Welch's
  two-sample t-test on the repeats' figures. With the standard error
  ``se = sqrt(s_a**2 / n_a + s_b**2 / n_b)`` and the Welch-Satterthwaite
  degrees of freedom ``df`` (rounded down), the change is significant when
  ``|mean_b - mean_a| > t(0.975, df) * se`` (95 %, two-sided).
* otherwise (``method`` ``"per-second"``): the per-second samples of the
  measured window (the engine's series starts after the warm-up; only whole
  seconds). Each side's standard error of the mean is
  ``mean * cv / sqrt(n)`` (``cv`` the coefficient of variation of its
  samples); the change is significant when
  ``|mean_b - mean_a| > 2 * sqrt(se_a**2 + se_b**2)``.
* with neither (fewer than two samples on a side) the noise is unknown:
  ``method`` and ``noise_pct`` are None and nothing is called significant.

``noise_pct`` is that threshold as a percentage of the baseline's mean: a
change smaller than ``noise_pct`` is noise.
"""
import math
from typing import Any, Dict, List, Optional, Tuple

from ..loadgen.histogram import Histogram

MIN_CHANGE_PCT = 1.0
#: the run's figures that the rows compare: (row field, path in a workload entry)
CHANGES: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ('throughput_pct', ('throughput_mib_s',)),
    ('ops_pct', ('ops_per_s',)),
    ('latency_mean_pct', ('latency_ms', 'mean')),
    ('latency_p50_pct', ('latency_ms', 'p50')),
    ('latency_p99_pct', ('latency_ms', 'p99')),
    ('rgw_cpu_pct', ('rgw', 'cpu_cores')),
    ('rgw_rss_pct', ('rgw', 'rss_mib')),
)
#: figures of a workload entry that repeats average (and give a spread of)
FIGURES = ('ops', 'bytes', 'errors', 'throughput_mib_s', 'ops_per_s', 'elapsed_s',
           'client_cpu_s', 'client_cpu_ms_per_op')
NESTED_FIGURES = ('latency_ms', 'ttfb_ms', 'rgw', 'haproxy')
HISTOGRAMS = (('histogram', 'latency_ms'), ('ttfb_histogram', 'ttfb_ms'))
#: parts of a single repeat that do not add up over several (kept in `repeats`)
PER_REPEAT = ('per_second', 'server', 'by_op', 'error_samples', 'hosts')

# two-sided 95 % quantiles of Student's t by degrees of freedom
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
         23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
         30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df: float) -> float:
    """Student's t quantile for a two-sided 95 % test, df rounded down (conservative)."""
    if df >= 1e9:
        return 1.960
    whole = max(1, int(math.floor(df)))
    return _T975[max(k for k in _T975 if k <= whole)] if whole <= 120 else 1.960


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _get(entry: Dict[str, Any], path: Tuple[str, ...]) -> Optional[float]:
    node: Any = entry
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return _number(node)


def pct_change(base: Optional[float], value: Optional[float]) -> Optional[float]:
    """% change of value vs base; None when base is 0 or either is missing."""
    if base is None or value is None or base == 0:
        return None
    return round((value - base) / abs(base) * 100.0, 2)


def mean_sd(values: List[float]) -> Tuple[float, Optional[float]]:
    """Mean and sample standard deviation (None with fewer than two values)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _open_loop(entry: Dict[str, Any]) -> bool:
    return entry.get('mode') == 'open'


def _repeat_samples(entry: Dict[str, Any], open_loop: bool) -> List[float]:
    path = ('latency_ms', 'mean') if open_loop else ('ops_per_s',)
    found = [_get(r, path) for r in entry.get('repeats') or [] if not r.get('error')]
    return [v for v in found if v is not None]


def _second_samples(entry: Dict[str, Any], open_loop: bool) -> List[float]:
    series = entry.get('per_second')
    if series is None:
        repeats = entry.get('repeats') or []
        series = repeats[0].get('per_second') if len(repeats) == 1 else None
    if not series:
        return []
    window = _number(entry.get('elapsed_s')) or _number(entry.get('duration_s'))
    whole = int(window) if window else len(series)
    out = []
    for item in series:
        if int(item.get('t', 0)) >= whole:
            continue
        if open_loop:
            lat = _number(item.get('lat_mean_ms'))
            if lat is not None:
                out.append(lat)
        else:
            out.append(float(item.get('ops') or 0))
    return out


def noise(base: Dict[str, Any], other: Dict[str, Any]) -> Dict[str, Any]:
    """Whether other differs from base beyond the measured noise (module docstring)."""
    open_loop = _open_loop(base) or _open_loop(other)
    out: Dict[str, Any] = {'significant': False, 'noise_pct': None, 'method': None,
                           'tested': 'latency_mean' if open_loop else 'ops_per_s'}
    a, b = _repeat_samples(base, open_loop), _repeat_samples(other, open_loop)
    if len(a) >= 2 and len(b) >= 2:
        (ma, sa), (mb, sb) = mean_sd(a), mean_sd(b)
        va, vb = (sa or 0.0) ** 2 / len(a), (sb or 0.0) ** 2 / len(b)
        se = math.sqrt(va + vb)
        if se > 0:
            df = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1) if va else 0.0)
                                   + (vb ** 2 / (len(b) - 1) if vb else 0.0))
        else:
            df = float(len(a) + len(b) - 2)
        threshold = t975(df) * se
        out['method'] = 'repeats'
    else:
        a, b = _second_samples(base, open_loop), _second_samples(other, open_loop)
        if len(a) < 2 or len(b) < 2:
            return out
        (ma, sa), (mb, sb) = mean_sd(a), mean_sd(b)
        # mean * cv / sqrt(n) is sd / sqrt(n)
        se = math.sqrt((sa or 0.0) ** 2 / len(a) + (sb or 0.0) ** 2 / len(b))
        threshold = 2.0 * se
        out['method'] = 'per-second'
    if ma == 0:
        return out
    out['noise_pct'] = round(threshold / abs(ma) * 100.0, 2)
    change = abs(mb - ma)
    out['significant'] = bool(change > threshold
                              and change / abs(ma) * 100.0 >= MIN_CHANGE_PCT)
    return out


def compare_entries(base: Dict[str, Any], other: Dict[str, Any]) -> Dict[str, Any]:
    """The % changes of one workload entry vs another, and their significance."""
    row: Dict[str, Any] = {}
    for field, path in CHANGES:
        row[field] = pct_change(_get(base, path), _get(other, path))
    row.update(noise(base, other))
    return row


def _usable(variant: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    if variant.get('error'):
        return {}
    return {w['name']: w for w in variant.get('workloads') or []
            if w.get('name') is not None and not w.get('error')}


def comparison(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One row per non-baseline variant and workload present in both (and the baseline)."""
    variants = record.get('variants') or []
    base = next((v for v in variants if v.get('name') == record.get('baseline')), None)
    if base is None:
        return []
    base_loads = _usable(base)
    rows = []
    for variant in variants:
        if variant is base:
            continue
        for name, entry in _usable(variant).items():
            if name in base_loads:
                row = {'variant': variant.get('name'), 'workload': name}
                row.update(compare_entries(base_loads[name], entry))
                rows.append(row)
    return rows


def compare_runs(a: Dict[str, Any], b: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Run b vs run a: a row per variant and workload of b with the same names in a."""
    in_a = {v.get('name'): _usable(v) for v in a.get('variants') or []}
    rows = []
    for variant in b.get('variants') or []:
        loads_a = in_a.get(variant.get('name'))
        if not loads_a:
            continue
        for name, entry in _usable(variant).items():
            if name in loads_a:
                row = {'variant': variant.get('name'), 'workload': name,
                       'run_a': a.get('run_id'), 'run_b': b.get('run_id')}
                row.update(compare_entries(loads_a[name], entry))
                rows.append(row)
    return rows


def _strip_histograms(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_histograms(v) for k, v in node.items()
                if k not in ('histogram', 'ttfb_histogram')}
    if isinstance(node, list):
        return [_strip_histograms(v) for v in node]
    return node


def _mean_of(values: List[Any]) -> Tuple[Any, Optional[float]]:
    numbers = [_number(v) for v in values]
    present = [v for v in numbers if v is not None]
    if not present:
        return None, None
    mean, sd = mean_sd(present)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values) \
            and mean == int(mean):
        return int(mean), sd
    return round(mean, 6), None if sd is None else round(sd, 6)


def merge_repeats(repeats: List[Dict[str, Any]]) -> Dict[str, Any]:
    """A workload entry from the figures of its repeats (as the engine gives them).

    Each figure is the mean of the repeats' and ``spread`` has its sample
    standard deviation (None with one repeat). When every repeat has its
    latency histogram, the histograms are merged by adding counts and the
    latency mean, percentiles and max come from the merged counts (never an
    average of percentiles); the merged histogram is kept. ``repeats`` holds
    each repeat without histograms. Repeats with an ``error`` are left out;
    if all have one, the entry has the first error.
    """
    if not repeats:
        raise ValueError('no repeats to merge')
    good = [r for r in repeats if not r.get('error')]
    stripped = [_strip_histograms(r) for r in repeats]
    if not good:
        entry = {k: v for k, v in stripped[0].items() if k not in FIGURES + NESTED_FIGURES
                 and k not in PER_REPEAT}
        entry.update(error=repeats[0]['error'], repeats=stripped)
        return entry
    first = good[0]
    if len(good) == 1:
        entry = dict(first)
    else:
        entry = {k: v for k, v in first.items() if k not in PER_REPEAT}
    entry.pop('error', None)
    spread: Dict[str, Any] = {}
    for key in FIGURES:
        if key in first:
            entry[key], spread[key] = _mean_of([r.get(key) for r in good])
    for key in NESTED_FIGURES:
        if not isinstance(first.get(key), dict):
            continue
        entry[key], spread[key] = {}, {}
        for sub in first[key]:
            values = [(r.get(key) or {}).get(sub) for r in good]
            entry[key][sub], spread[key][sub] = _mean_of(values)
    for hist_key, summary_key in HISTOGRAMS:
        if all(r.get(hist_key) for r in good):
            merged = Histogram()
            for r in good:
                merged.merge(Histogram.from_dict(r[hist_key]))
            entry[hist_key] = merged.to_dict()
            entry[summary_key] = merged.summary()
        else:
            entry.pop(hist_key, None)
    entry['spread'] = spread
    entry['repeats'] = stripped
    return entry
