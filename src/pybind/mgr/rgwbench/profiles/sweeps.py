"""A profile's sweeps as `plan` and `profile show` present them: what each expands to and
the time it takes."""
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from .estimates import variant_seconds, workload_seconds
from .types import Profile

WORKLOADS, VARIANTS = 'workloads', 'variants'


@dataclass(frozen=True)
class Sweep:
    """One sweep of a profile: the workloads (or variants) its list became, their values,
    and the time they take in a run (every variant, or every workload, and every repeat)."""
    curve: str
    kind: str
    swept: str
    points: List[str] = field(default_factory=list)
    values: List[str] = field(default_factory=list)
    estimated_s: float = 0.0


def sweeps_of(profile: Profile) -> List[Sweep]:
    """Every sweep of the profile, its workloads' first, in the profile's order."""
    found: Dict[Tuple[str, str, str], Sweep] = {}
    for workload in profile.workloads:
        if workload.curve and workload.swept:
            value = ('%s/rgw' % workload.concurrency_per_rgw
                     if workload.swept == 'concurrency_per_rgw' else
                     workload.size if workload.swept == 'size' else str(workload.concurrency))
            key = (WORKLOADS, workload.curve, workload.swept)
            seen = found.get(key) or Sweep(workload.curve, WORKLOADS, workload.swept)
            found[key] = Sweep(seen.curve, seen.kind, seen.swept, seen.points + [workload.name],
                               seen.values + [value], seen.estimated_s + workload_seconds(
                                   workload) * len(profile.variants) * profile.repeats)
    for variant in profile.variants:
        if variant.curve and variant.swept:
            key = (VARIANTS, variant.curve, variant.swept)
            seen = found.get(key) or Sweep(variant.curve, VARIANTS, variant.swept)
            found[key] = Sweep(seen.curve, seen.kind, seen.swept, seen.points + [variant.name],
                               seen.values + [_value(variant.settings.get(variant.swept))],
                               seen.estimated_s + variant_seconds(profile, variant) *
                               profile.repeats)
    return list(found.values())


def _value(value: object) -> str:
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return ('on' if value else 'off') if isinstance(value, bool) else str(value)
