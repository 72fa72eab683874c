"""A sweep as a curve, and the knee of a concurrency sweep or of a rate curve: typed points
in, the knee out.

The knee (the "high-water mark" of IBM's scale benchmark, part 2, and of Red
Hat's sizing posts: "the point beyond which throughput either remains flat, or
decreases") is the first point no later point beats by more than the noise:
every later point's ops/s is at most the point's own plus half the 95 %
interval of their difference, that interval made of each point's own standard
error (results.significance, as a comparison's). A point whose noise is unknown
counts as exact: then any rise is a rise. No such point before the last: the
curve still rises, the knee is not reached.

A rate curve (open-loop workloads that differ only in their rate) has a knee of its own
(find_saturation): in open loop the load is what is offered, and what the points show is
whether the achieved ops/s follows it. Its knee is the first point whose achieved ops/s
falls short of its offered rate by more than half the 95 % interval of that ops/s (its
own standard error: the offered rate is exact). A point whose noise is unknown is not
judged: the count of a window's requests is not exactly the rate times the window, so a
shortfall without a noise to hold it to says nothing; no point judged, no knee.
"""
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from ..serial import derived
from .significance import LEVEL, UNBOUNDED_DF, Estimate, difference_half_width, t_quantile

#: what a curve varies: a workload's concurrency (in all, or per RGW), its size, its
#: open-loop rate, or a variant's setting (any other name: the setting's)
CONCURRENCY, PER_RGW, SIZE, RATE = 'concurrency', 'concurrency_per_rgw', 'size', 'rate'
#: the sweeps whose curve has a knee: throughput against requests in flight
KNEE_SWEEPS = (CONCURRENCY, PER_RGW)


@dataclass(frozen=True)
class CurvePoint:
    """One point of a curve: a workload of a variant, at one value of what is swept.

    ``x``: the value as a number (requests in flight, bytes, a setting's number; None
    for a setting that is not one); ``ops_per_s_se`` and ``ops_per_s_df``: the standard
    error of its ops/s and that error's degrees of freedom (None: not known)."""
    value: str
    workload: str
    variant: str
    x: Optional[float] = None
    ops_per_s: Optional[float] = None
    throughput_mib_s: Optional[float] = None
    p50_ms: Optional[float] = None
    p99_ms: Optional[float] = None
    ops_per_s_se: Optional[float] = None
    ops_per_s_df: Optional[float] = None
    #: half the 95 % interval of its ops/s (None: not known)
    ops_per_s_noise: Optional[float] = None

    def ops_estimate(self) -> Estimate:
        return Estimate(float(self.ops_per_s or 0.0), self.ops_per_s_se or 0.0,
                        self.ops_per_s_df or UNBOUNDED_DF)


@dataclass(frozen=True)
class Knee:
    """Where throughput stops rising: ``point`` the index of the knee's point in its
    curve; ``reached`` False (and no point) when every point but the last is beaten
    beyond the noise by a later one. ``rise``: the most a later point's ops/s rose above
    the knee's (negative: all fell), ``noise``: the half-width that point's rise was held
    to (ops/s). On a rate curve, where the achieved ops/s stops following the offered
    rate: ``reached`` False when every point judged kept its rate; ``rise`` the knee's
    achieved ops/s less its offered rate (negative), ``noise`` the half-width of its
    ops/s that shortfall was held to."""
    reached: bool
    point: Optional[int] = None
    rise: Optional[float] = None
    noise: Optional[float] = None


@dataclass(frozen=True)
class ShownKnee:
    """A knee as a curve's JSON shows it: with its point's ``value`` and ``workload``."""
    reached: bool
    point: Optional[int]
    value: Optional[str]
    workload: Optional[str]
    rise: Optional[float]
    noise: Optional[float]


def _shown_knee(curve: 'Curve') -> Optional[ShownKnee]:
    knee, at = curve.knee, curve.knee_point()
    if knee is None:
        return None
    return ShownKnee(knee.reached, knee.point, None if at is None else at.value,
                     None if at is None else at.workload, knee.rise, knee.noise)


@dataclass(frozen=True)
class Curve:
    """A sweep of one variant (a workload's, a rate curve's) or of one workload (a
    setting's), its points in the order swept; ``knee`` for a concurrency sweep and a rate
    curve (None for the others, and for a rate curve none of whose points has a noise)."""
    name: str
    swept: str
    points: List[CurvePoint] = field(default_factory=list)
    knee: Optional[Knee] = field(default=None, metadata=derived(_shown_knee))

    @property
    def of_concurrency(self) -> bool:
        return self.swept in KNEE_SWEEPS

    @property
    def of_workloads(self) -> bool:
        """Whether its points are workloads (a workload's sweep), not variants."""
        return self.swept in KNEE_SWEEPS + (SIZE, RATE)

    def knee_point(self) -> Optional[CurvePoint]:
        """The knee's point; None where the curve has no knee or did not reach it."""
        if self.knee is None or self.knee.point is None:
            return None
        return self.points[self.knee.point]


def find_knee(points: Sequence[CurvePoint]) -> Knee:
    """The first point beyond which ops/s does not rise by more than the noise (see the
    module's docstring); points without ops/s are left out."""
    measured = [(i, p) for i, p in enumerate(points) if p.ops_per_s is not None]
    for at, (index, point) in enumerate(measured[:-1]):
        rises = [(float(later.ops_per_s or 0.0) - float(point.ops_per_s or 0.0),
                  difference_half_width(point.ops_estimate(), later.ops_estimate()))
                 for _, later in measured[at + 1:]]
        if all(rise <= noise for rise, noise in rises):
            rise, noise = max(rises, key=lambda found: found[0])
            return Knee(reached=True, point=index, rise=round(rise, 2), noise=round(noise, 2))
    return Knee(reached=False)


def find_saturation(points: Sequence[CurvePoint]) -> Optional[Knee]:
    """The knee of a rate curve: the first point whose achieved ops/s falls short of its
    offered rate (``x``) beyond the noise of that ops/s (see the module's docstring);
    points without ops/s, rate or noise are not judged, and without any judged, None."""
    judged = False
    for index, point in enumerate(points):
        if point.ops_per_s is None or point.x is None or point.ops_per_s_se is None:
            continue
        judged = True
        noise = t_quantile(0.5 + LEVEL / 2, point.ops_per_s_df or UNBOUNDED_DF) * \
            point.ops_per_s_se
        shortfall = float(point.x) - float(point.ops_per_s)
        if shortfall > noise:
            return Knee(reached=True, point=index, rise=round(-shortfall, 2),
                        noise=round(noise, 2))
    return Knee(reached=False) if judged else None
