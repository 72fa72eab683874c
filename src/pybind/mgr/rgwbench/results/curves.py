"""A run's sweeps as curves (results.knee): each from the profile the run ran.

Besides the sweeps a profile names (a workload's ``curve`` and ``swept``, a variant's),
open-loop workloads that differ only in their name and rate (``rates``, ``--rates``, or
written one by one) are a rate curve: found here from what the run ran, so a run stored
before rate curves existed has them too."""
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from ..loadgen.errors import UsageError
from ..loadgen.workload import SizeSpec
from ..profiles.field_checks import at_rate
from ..profiles.types import Variant, Workload, format_rate
from ..serial import load
from .compare import own_estimate
from .knee import KNEE_SWEEPS, RATE, SIZE, Curve, CurvePoint, find_knee, find_saturation
from .significance import LEVEL, t_quantile
from .model import FIGURES, Run, VariantResult, WorkloadResult

OPS = next(f for f in FIGURES if f.change == 'ops_pct')


def _definition_part(run: Run, key: str, cls: Any) -> List[Any]:
    found = []
    for doc in (run.definition or {}).get(key) or []:
        try:
            found.append(load(cls, doc))
        except (TypeError, ValueError, KeyError):
            continue  # not a part this module wrote
    return found


def _number(value: Any) -> Optional[float]:
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _size_bytes(size: Optional[str]) -> Optional[float]:
    try:
        spec = SizeSpec(str(size))
    except UsageError:
        return None
    return float(spec.max_size)


def _point(entry: WorkloadResult, variant: str, value: str, x: Optional[float]) -> CurvePoint:
    latency = entry.figures.latency_ms
    noise = own_estimate(entry, OPS)
    return CurvePoint(value=value, workload=str(entry.name), variant=variant, x=x,
                      ops_per_s=entry.figures.ops_per_s,
                      throughput_mib_s=entry.figures.throughput_mib_s,
                      p50_ms=None if latency is None else latency.p50,
                      p99_ms=None if latency is None else latency.p99,
                      ops_per_s_se=None if noise is None else round(noise.se, 4),
                      ops_per_s_df=None if noise is None else round(noise.df, 2),
                      ops_per_s_noise=None if noise is None else round(
                          t_quantile(0.5 + LEVEL / 2, noise.df) * noise.se, 2))


def _workload_point(entry: WorkloadResult, variant: str, workload: Workload) -> CurvePoint:
    if workload.swept == SIZE:
        return _point(entry, variant, str(entry.object_size or workload.size),
                      _size_bytes(entry.object_size or workload.size))
    concurrency = entry.concurrency or workload.concurrency
    value = str(concurrency)
    if workload.concurrency_per_rgw:
        value += ' (%d/rgw)' % workload.concurrency_per_rgw
    return _point(entry, variant, value, float(concurrency))


def _setting_value(value: Any) -> str:
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return ('on' if value else 'off') if isinstance(value, bool) else str(value)


def _variants_curves(run: Run, name: str, swept: str, workloads: List[Workload]
                     ) -> List[Curve]:
    """The curve of the workloads in each variant that measured any of them."""
    curves = []
    for variant in run.variants:
        usable = variant.usable()
        points = [_rate_point(usable[w.name], str(variant.name), w) if swept == RATE
                  else _workload_point(usable[w.name], str(variant.name), w)
                  for w in workloads if w.name in usable]
        if not points:
            continue
        label = name if len(run.variants) == 1 else '%s / %s' % (name, variant.name)
        knee = (find_knee(points) if swept in KNEE_SWEEPS
                else find_saturation(points) if swept == RATE else None)
        curves.append(Curve(name=label, swept=swept, points=points, knee=knee))
    return curves


def workload_curves(run: Run) -> List[Curve]:
    """Each workload sweep (concurrency, per RGW, size) of each variant: its curve; a sweep
    whose points ran at several rates (``--rates`` over it), a curve per rate, named after
    it (``put-4KiB@200/s``), so that a curve varies one thing."""
    sweeps: Dict[Tuple[str, str], List[Workload]] = {}
    for workload in _definition_part(run, 'workloads', Workload):
        if workload.curve and workload.swept:
            sweeps.setdefault((workload.curve, workload.swept), []).append(workload)
    curves = []
    for (name, swept), workloads in sweeps.items():
        rates: List[Optional[float]] = []
        for workload in workloads:
            if workload.rate not in rates:
                rates.append(workload.rate)
        for rate in rates:
            curves += _variants_curves(run, at_rate(name, rate) if len(rates) > 1 else name,
                                       swept, [w for w in workloads if w.rate == rate])
    return curves


def _rate_point(entry: WorkloadResult, variant: str, workload: Workload) -> CurvePoint:
    rate = float(workload.rate or 0.0)
    return _point(entry, variant, format_rate(rate), rate)


def _base_name(workload: Workload) -> str:
    """Its name without the rate it is named after (`get-4KiB@200/s` -> `get-4KiB`)."""
    suffix = at_rate('', workload.rate)
    if workload.name.endswith(suffix) and len(workload.name) > len(suffix):
        return workload.name[:-len(suffix)]
    return workload.name


def rate_curves(run: Run) -> List[Curve]:
    """Each set of the run's open-loop workloads that differ only in their name and rate
    (two rates at least, each once), in each variant: its curve, the rates in increasing
    order, named after its first workload without its rate."""
    groups: List[Tuple[Workload, List[Workload]]] = []
    for workload in _definition_part(run, 'workloads', Workload):
        if workload.rate is None:
            continue
        alike = replace(workload, name='', rate=None)
        found = next((members for key, members in groups if key == alike), None)
        if found is None:
            groups.append((alike, [workload]))
        else:
            found.append(workload)
    curves = []
    for _, members in groups:
        # one rate twice: two workloads alike, which no x tells apart
        if len(members) > 1 and len({w.rate for w in members}) == len(members):
            curves += _variants_curves(run, _base_name(members[0]), RATE,
                                       sorted(members, key=lambda w: float(w.rate or 0.0)))
    return curves


def setting_curves(run: Run) -> List[Curve]:
    """Each setting sweep of the variants, for each workload: its curve (no knee)."""
    sweeps: Dict[Tuple[str, str], List[Variant]] = {}
    for variant in _definition_part(run, 'variants', Variant):
        if variant.curve and variant.swept:
            sweeps.setdefault((variant.curve, variant.swept), []).append(variant)
    results: Dict[Optional[str], VariantResult] = {v.name: v for v in run.variants}
    curves = []
    for (name, setting), variants in sweeps.items():
        for workload in run.workload_names():
            points = []
            for variant in variants:
                found = results.get(variant.name)
                entry = found.usable().get(str(workload)) if found is not None else None
                if entry is not None:
                    value = variant.settings.get(setting)
                    points.append(_point(entry, variant.name, _setting_value(value),
                                         _number(value)))
            if points:
                curves.append(Curve(name='%s / %s' % (name, workload), swept=setting,
                                    points=points))
    return curves


def run_curves(run: Run) -> List[Curve]:
    """Every sweep of a run as a curve: its workloads' first, its rate curves', then its
    settings'."""
    return workload_curves(run) + rate_curves(run) + setting_curves(run)
