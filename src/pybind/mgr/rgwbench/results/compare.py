"""% change vs baseline, its 95 % interval, whether it is significant, and repeats.

Each row compares one workload of one variant with the same workload of the
baseline (or of another run): ``throughput_pct``, ``ops_pct``,
``latency_mean_pct``, ``latency_p50_pct``, ``latency_p99_pct``, ``rgw_cpu_pct`` and
``rgw_rss_pct`` (and ``haproxy_cpu_pct``, ``haproxy_rss_pct`` when either side ran
behind an ingress) are ``(variant - baseline) / baseline * 100``, None when the
baseline's figure is 0 or either figure is missing.

Every compared figure has its own interval (``intervals``, by change name):

* its noise inside the workloads (``noise_pct``, results.significance): from
  the repeats when both sides ran at least two (``method`` ``repeats``), else
  from the per-second series by batch means (throughput, ops/s, mean latency:
  ``per-second``) or from the latency histogram (p50, p99: ``histogram``);
  RGW and HAProxy CPU have one value per measurement, and the CPU spent
  follows the requests served: the noise of the ops/s (``per-second``);
  RGW and HAProxy memory have no noise of their own without repeats: the
  floor alone speaks for them (``method`` ``floor``);
* a floor (``floor_pct``, results.calibration): the smallest change this
  cluster can show between two applications of the same settings, calibrated
  or the default. It applies unless both sides have at least two repeats that
  were each a fresh application of the settings (profile ``order:
  interleaved``): repeats run one after another in one application, or a
  single measurement, know nothing of the noise between applications.

The interval is the change plus or minus the larger of the two, and the
change is ``significant`` when it leaves out 0. A run's figures are judged
together: each has a p-value, and every interval is at the level Benjamini
and Hochberg's rule leaves (results.significance.discovery_level). Where the
noise inside the workloads should have been measured and could not be (no
per-second series or histogram, as in a record of a single second) there is
no interval (``method`` None) and nothing is called significant (RGW's and
HAProxy's CPU included: their noise is that of the ops/s). The row's
``significant``, ``noise_pct``, ``method`` and ``tested`` are those of the
headline figure: the throughput in operations per second, or for an
open-loop workload (its rate is fixed) the mean latency.
"""
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..loadgen.histogram import Histogram, merged
from .calibration import Floors
from ..serial import load
from .model import (COMPARED, FLOOR_SOURCE, LATENCY_TEST, OPS_TEST, UNTESTED,
                    UNTESTED_FLOOR_PCT, Comparison, Figure, Figures, Interval, LatencyFigures,
                    Noise, Run, Second, TargetFigures, VariantResult, WorkloadResult)
from .significance import (LEVEL, UNBOUNDED_DF, Z, Estimate, difference, difference_half_width,
                           discovery_level, from_values, inflation, percentile_se,
                           relative_batch_se, t_quantile, two_sided_p)

#: the figure whose interval is the row's own verdict, by test
HEADLINE = {OPS_TEST: 'ops_pct', LATENCY_TEST: 'latency_mean_pct'}
INTERLEAVED = 'interleaved'
#: The floor shown for a run that measured nothing of the noise between two applications of
#: the same settings (one application per variant, or repeats in one application) on a
#: cluster never calibrated, in %: a guess, not a measurement (calibrate measured 42-48 %
#: on a local cluster). Such a run marks no change at all (`UntestedFloors`): an RGW
#: restart alone has moved a figure by 24.9 % on a fresh local cluster and by 73.7 %
#: (PUT ops/s; its mean latency +278 %, beyond any floor) on a loaded one, and no floor
#: tells that from a change. Its table says so (`untested_note`).


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


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


def _good_repeats(entry: WorkloadResult) -> List[WorkloadResult]:
    return [r for r in entry.repeats or [] if not r.error]


def _from_repeats(entry: WorkloadResult, figure: Figure) -> Optional[Estimate]:
    """The noise of the repeats' values, relative to their mean, scaled to the figure."""
    found = [_number(figure.read(r.figures)) for r in _good_repeats(entry)]
    spread = from_values([v for v in found if v is not None])
    value = _number(figure.of(entry))
    if spread is None or not spread.value or value is None:
        return None
    return Estimate(value, spread.se / abs(spread.value) * abs(value), spread.df)


def _whole_seconds(entry: WorkloadResult) -> List[Second]:
    """The per-second series of the measured window (the engine's starts after the warm-up)."""
    series = entry.per_second
    if series is None:
        repeats = entry.repeats or []
        series = repeats[0].per_second if len(repeats) == 1 else None
    if not series:
        return []
    window = _number(entry.figures.elapsed_s) or _number(entry.duration_s)
    whole = int(window) if window else len(series)
    return sorted((s for s in series if int(s.t or 0) < whole), key=lambda s: int(s.t or 0))


class _Measured:
    """What one measurement shows of its own noise, each part worked out once."""

    def __init__(self, entry: WorkloadResult) -> None:
        self.entry = entry
        self.seconds = _whole_seconds(entry)
        timed = [s for s in self.seconds if s.ops and _number(s.lat_mean_ms) is not None]
        self.latencies = [float(s.lat_mean_ms or 0.0) for s in timed]
        self.weights = [float(s.ops or 0) for s in timed]
        self._mean_latency: Optional[Tuple[float, float]] = None
        self._inflation: Optional[float] = None

    def counted(self, key: str) -> Optional[Tuple[float, float]]:
        return relative_batch_se([float(getattr(s, key) or 0) for s in self.seconds])

    def mean_latency(self) -> Optional[Tuple[float, float]]:
        if self._mean_latency is None:
            self._mean_latency = relative_batch_se(self.latencies, self.weights)
        return self._mean_latency

    def percentile(self, pct: float) -> Optional[float]:
        """The relative standard error of a latency percentile, from the histogram."""
        if self.entry.histogram is None:
            return None
        if self._inflation is None:
            self._inflation = inflation(self.latencies, self.weights)
        return percentile_se(self.entry.histogram, pct, self._inflation)


#: the noise inside one measurement, relative to the figure, and its df, by change name
_PER_SECOND: Dict[str, Callable[[_Measured], Optional[Tuple[float, float]]]] = {
    'throughput_pct': lambda m: m.counted('bytes'), 'ops_pct': lambda m: m.counted('ops'),
    'latency_mean_pct': lambda m: m.mean_latency()}
_PERCENTILES = {'latency_p50_pct': 50.0, 'latency_p99_pct': 99.0}
#: one value per measurement, but the CPU a server spends follows the requests it served:
#: its change is no less noisy than that of the ops/s (an A/A run on a busy machine saw
#: RGW CPU +76 % beside ops/s +70 %, the same 0.7 ms per request)
_FOLLOWS_OPS = frozenset({'rgw_cpu_pct', 'haproxy_cpu_pct'})
#: the figures whose noise comes from inside the measurement (none of them the floor alone)
_HAS_OWN_NOISE = frozenset(_PER_SECOND) | frozenset(_PERCENTILES) | _FOLLOWS_OPS


def _within(measured: _Measured, figure: Figure) -> Tuple[Optional[Estimate], Optional[str]]:
    """One measurement's own noise of a figure (results.significance) and how it was found."""
    value = _number(figure.of(measured.entry))
    change = str(figure.change)
    if not value:
        return None, None
    if change in _PER_SECOND or change in _FOLLOWS_OPS:
        found = (_PER_SECOND[change] if change in _PER_SECOND else _PER_SECOND['ops_pct'])(
            measured)
        if found is None:
            return None, None
        return Estimate(value, found[0] * abs(value), found[1]), 'per-second'
    if change in _PERCENTILES:
        own = measured.percentile(_PERCENTILES[change])
        if own is None:
            return None, None
        relative, df = own, UNBOUNDED_DF
        by_mean = measured.mean_latency()
        if by_mean is not None and by_mean[0] >= own:
            relative, df = by_mean
        return Estimate(value, relative * abs(value), df), 'histogram'
    return None, None


def own_estimate(entry: WorkloadResult, figure: Figure) -> Optional[Estimate]:
    """A workload's figure and its standard error: over its repeats when it has two or more,
    else from inside its measurement (per second, histogram); None where neither shows it."""
    found = _from_repeats(entry, figure)
    if found is None:
        found, _ = _within(_Measured(entry), figure)
    return found


def _separate_applications(entry: WorkloadResult) -> bool:
    return len(_good_repeats(entry)) >= 2


@dataclass
class _Cell:
    """One figure's change and what its interval is made of, before the level is known."""
    out: Interval
    change: float
    #: the standard error of the change from the noise inside the workloads, in %
    se_pct: Optional[float] = None
    df: float = UNBOUNDED_DF
    floor: Optional[float] = None
    #: False: the change may not be marked whatever its size (untested against restart noise)
    markable: bool = True

    def p_value(self) -> float:
        """How likely a change this large is when nothing changed (the larger of both)."""
        found = 0.0
        for width, df in ((self.se_pct, self.df), (None if self.floor is None
                                                   else self.floor / Z, UNBOUNDED_DF)):
            if width is not None:
                found = max(found, two_sided_p(self.change / width, df) if width
                            else float(not self.change))
        return found

    def settle(self, level: float) -> None:
        """The interval at ``level`` and whether it leaves out 0."""
        widths = []
        if self.se_pct is not None:
            widths.append(t_quantile(0.5 + level / 2, self.df) * self.se_pct)
        if self.floor is not None:
            widths.append(self.floor / Z * NormalDist().inv_cdf(0.5 + level / 2))
        half = max(widths)
        self.out.low, self.out.high = round(self.change - half, 2), round(self.change + half, 2)
        self.out.significant = bool(self.markable and abs(self.change) > half)
        self.out.level = round(level, 5)


_Found = Tuple[Interval, Optional[_Cell]]


def _cell(base: WorkloadResult, other: WorkloadResult, figure: Figure,
          change: Optional[float], floor: Optional[float],
          measured: Optional[Tuple[_Measured, _Measured]] = None) -> _Found:
    """A figure's interval as far as it is known before the level (None: it has none)."""
    out = Interval(floor_pct=floor)
    reference = _number(figure.of(base))
    if change is None or not reference:
        return out, None
    a, b = _from_repeats(base, figure), _from_repeats(other, figure)
    method: Optional[str] = 'repeats'
    if a is None or b is None:
        seen_a, seen_b = measured or (_Measured(base), _Measured(other))
        (a, method), (b, _) = _within(seen_a, figure), _within(seen_b, figure)
    cell = _Cell(out=out, change=change, floor=floor)
    if a is not None and b is not None:
        found = difference(a, b)
        cell.se_pct, cell.df = found.se / abs(reference) * 100.0, found.df
        out.noise_pct = round(difference_half_width(a, b) / abs(reference) * 100.0, 2)
        out.method = method
    elif str(figure.change) in _HAS_OWN_NOISE:
        # What would show its noise is missing: a record without it, or a workload too
        # short for it (one the capacity guard stopped in its first seconds). RGW's CPU
        # of such a workload, held to the floor alone, was once marked +16 % significant
        # after 1.4 s and 3 requests.
        return out, None
    elif floor is not None:
        out.method = 'floor'  # one value per measurement: the floor alone
    else:
        return out, None
    return out, cell


def interval(base: WorkloadResult, other: WorkloadResult, figure: Figure,
             change: Optional[float], floor: Optional[float],
             measured: Optional[Tuple[_Measured, _Measured]] = None) -> Interval:
    """The 95 % interval of one figure's change and its verdict, the figure alone."""
    out, cell = _cell(base, other, figure, change, floor, measured)
    if cell is not None:
        cell.settle(LEVEL)
    return out


def settle(cells: Sequence[_Cell]) -> None:
    """Every interval of one family at the level its discoveries allow (significance)."""
    level = discovery_level([cell.p_value() for cell in cells])
    for cell in cells:
        cell.settle(level)


def _headline(row: Comparison, tested: str) -> None:
    headline = row.intervals.get(HEADLINE[tested], Interval())
    row.noise = Noise(tested=tested, significant=headline.significant,
                      noise_pct=headline.half_width(), method=headline.method)


@dataclass(frozen=True)
class UntestedFloors(Floors):
    """The floors of a run that cannot tell restart noise from a change: each at least
    UNTESTED_FLOOR_PCT (the default floor's, or a given one's, when larger), and no
    change held to them is marked."""

    def of(self, change: str) -> float:
        return max(UNTESTED_FLOOR_PCT, super().of(change))


def run_floors(floors: Optional[Floors], separate_applications: bool) -> Floors:
    """The floors a run's comparison uses: ``floors`` when they were measured (a
    calibration) or given, or when the run measured the noise between applications
    itself (interleaved repeats); else, with the cluster never calibrated (the default
    floors), `UntestedFloors`."""
    if separate_applications or (floors is not None and (floors.run_id or floors.pct)):
        return Floors() if floors is None else floors
    return UntestedFloors()


def _row(base: WorkloadResult, other: WorkloadResult, variant: Optional[str],
         workload: Optional[str], run_a: Optional[str], run_b: Optional[str],
         floors: Optional[Floors], interleaved: bool,
         guarded: bool = False) -> Tuple[Comparison, List[_Cell], str]:
    """A row's changes and the cells of its intervals, not yet settled.

    ``guarded`` (a run's rows): with floors that are the default's, a row whose
    sides are not each two applications or more gets `UntestedFloors` and marks
    nothing."""
    no_floor = interleaved and _separate_applications(base) and _separate_applications(other)
    floors = (run_floors(floors, no_floor) if guarded
              else Floors() if floors is None else floors)
    # An optional figure (HAProxy's) only where either side has it.
    shown = [f for f in COMPARED
             if not f.optional or f.of(base) is not None or f.of(other) is not None]
    changes = {str(f.change): pct_change(_number(f.of(base)), _number(f.of(other)))
               for f in shown}
    measured = (_Measured(base), _Measured(other))
    intervals: Dict[str, Interval] = {}
    cells: List[_Cell] = []
    for f in shown:
        found, cell = _cell(base, other, f, changes[str(f.change)],
                            None if no_floor else floors.of(str(f.change)), measured)
        if not no_floor and isinstance(floors, UntestedFloors):
            found.extra[FLOOR_SOURCE] = UNTESTED
            if cell is not None:
                cell.markable = False
        intervals[str(f.change)] = found
        if cell is not None:
            cells.append(cell)
    open_loop = base.mode == 'open' or other.mode == 'open'
    row = Comparison(variant=variant, workload=workload, run_a=run_a, run_b=run_b,
                     changes=changes, intervals=intervals)
    return row, cells, LATENCY_TEST if open_loop else OPS_TEST


def compare_entries(base: WorkloadResult, other: WorkloadResult, variant: Optional[str],
                    workload: Optional[str], run_a: Optional[str] = None,
                    run_b: Optional[str] = None, floors: Optional[Floors] = None,
                    interleaved: bool = False) -> Comparison:
    """The % changes of one workload's figures vs another's, their intervals and verdicts.

    ``floors`` default to the default floor; ``interleaved``: each repeat of
    both sides was an application of its own (no floor when both have two).
    Each figure is judged alone (95 %); a run's rows are judged together
    (`comparison`, `between`).
    """
    return _settled([_row(base, other, variant, workload, run_a, run_b, floors,
                          interleaved)], alone=True)[0]


def _settled(rows: Sequence[Tuple[Comparison, List[_Cell], str]],
             alone: bool = False) -> List[Comparison]:
    """The rows with every figure of all of them settled as one family (or each alone)."""
    cells = [cell for _, found, _ in rows for cell in found]
    if alone:
        for cell in cells:
            cell.settle(LEVEL)
    else:
        settle(cells)
    for row, _, tested in rows:
        _headline(row, tested)
    return [row for row, _, _ in rows]


def interleaved(run: Run) -> bool:
    """Whether each repeat of the run was a fresh application of its variant's settings."""
    definition = run.definition or {}
    return definition.get('order') == INTERLEAVED and int(definition.get('repeats') or 1) > 1


def comparison(run: Run, floors: Optional[Floors] = None) -> List[Comparison]:
    """One row per non-baseline variant and workload present in both (and the baseline)."""
    base = run.baseline_variant()
    if base is None:
        return []
    base_loads = base.usable()
    rows: List[Tuple[Comparison, List[_Cell], str]] = []
    for variant in run.variants:
        if variant is base:
            continue
        for name, entry in variant.usable().items():
            if name in base_loads:
                rows.append(_row(base_loads[name], entry, variant.name, name, None, None,
                                 floors, interleaved(run), guarded=True))
    return _settled(rows)


def between(a: Run, b: Run, floors: Optional[Floors] = None) -> List[Comparison]:
    """Run b vs run a: a row per variant and workload of b with the same names in a."""
    in_a: Dict[Optional[str], VariantResult] = {}
    for variant in a.variants:
        in_a[variant.name] = variant
    rows: List[Tuple[Comparison, List[_Cell], str]] = []
    for variant in b.variants:
        loads_a = in_a[variant.name].usable() if variant.name in in_a else {}
        if not loads_a:
            continue
        for name, entry in variant.usable().items():
            if name in loads_a:
                both = interleaved(a) and interleaved(b)
                rows.append(_row(loads_a[name], entry, variant.name, name, a.run_id, b.run_id,
                                 floors, both, guarded=True))
    return _settled(rows)


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


def _merged_histogram(histograms: List[Optional[Histogram]]) -> Optional[Histogram]:
    """The repeats' histograms added up (a new one); None unless every repeat has one."""
    present = [h for h in histograms if h is not None]
    if not present or len(present) < len(histograms):
        return None
    return merged(present)


def merge_repeats(repeats: Sequence[WorkloadResult]) -> WorkloadResult:
    """A workload's result from those of its repeats (as the engine gives them).

    Each figure is the mean of the repeats' and ``spread`` has its sample
    standard deviation (None with one repeat). When every repeat has its
    latency histogram, the histograms are merged by adding counts and the
    latency mean, percentiles and max come from the merged counts (never an
    average of percentiles); the merged histogram is kept. ``repeats`` holds
    each repeat without histograms. Repeats with an ``error`` are left out;
    if all have one, the result has the first error.
    """
    if not repeats:
        raise ValueError('no repeats to merge')
    good = [r for r in repeats if not r.error]
    stripped = [r.without_histograms() for r in repeats]
    if not good:
        failed = stripped[0].without_figures().without_per_repeat_parts()
        failed.error, failed.repeats = repeats[0].error, stripped
        return failed
    first = good[0]
    entry = first if len(good) == 1 else first.without_per_repeat_parts()
    entry = entry.without_error()
    figures, spread = Figures.combine([r.figures for r in good], _mean_of)
    latency = _merged_histogram([r.histogram for r in good])
    if latency is not None:
        entry.histogram = latency
        figures.latency_ms = load(LatencyFigures, latency.summary())
    else:
        entry.histogram = None
    ttfb = _merged_histogram([r.ttfb_histogram for r in good])
    if ttfb is not None:
        entry.ttfb_histogram = ttfb
        figures.ttfb_ms = load(LatencyFigures, ttfb.summary())
    else:
        entry.ttfb_histogram = None
    entry.figures, entry.spread, entry.repeats = figures, spread, stripped
    if len(good) > 1:
        entry.targets = _mean_targets(good)
    return entry


def _mean_targets(repeats: Sequence[WorkloadResult]) -> Optional[List[TargetFigures]]:
    """Per target, the mean of the repeats' figures (as the workload's own are means)."""
    if not any(r.targets for r in repeats):
        return None
    found: Dict[str, TargetFigures] = {}
    for repeat in repeats:
        for target in repeat.targets or []:
            entry = found.setdefault(str(target.url), TargetFigures(
                url=target.url, workers=0, ops=0, errors=0))
            entry.workers = max(entry.workers or 0, target.workers or 0)
            entry.ops = (entry.ops or 0) + (target.ops or 0)
            entry.errors = (entry.errors or 0) + (target.errors or 0)
    for entry in found.values():
        entry.ops = round((entry.ops or 0) / len(repeats), 3)
        entry.errors = round((entry.errors or 0) / len(repeats), 3)
    return list(found.values())
