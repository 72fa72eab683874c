"""How noisy a figure is, and the 95 % interval of a change between two measurements.

One side's figure is an `Estimate`: its value, its standard error and the
degrees of freedom of that error. Where it comes from (`estimate`):

* ``repeats``: the figure of each repeat (at least two): their mean, their
  standard deviation over the square root of their number, ``n - 1``.
* ``per-second``: throughput, ops/s and mean latency of one measurement from
  its per-second series by *batch means*: the whole seconds of the measured
  window are cut into ``k`` consecutive batches of ``b = round(sqrt(n))``
  seconds, each batch gives one mean, and the standard error is that of the
  ``k`` batch means (``k - 1`` degrees of freedom). Neighbouring seconds are
  correlated (a slow second is followed by a slow one), so the naive
  ``sd / sqrt(n)`` of single seconds understates the noise; batches of a few
  seconds are close to independent, and what correlation they still leave
  out is added back from the series' lag-1 autocorrelation
  (`short_batch_factor`).
* ``histogram``: a latency percentile of one measurement. Its order-statistic
  interval from the merged histogram (the values at ranks
  ``n * (p -/+ z * sqrt(p * (1 - p) / n_eff))``) with ``n_eff`` the request
  count divided by how much the seconds' correlation inflates the variance of
  the mean latency (batch-means variance over naive variance, at least 1);
  and never less noisy, relative to its value, than the mean latency is
  (what moves the whole distribution moves its tail as much). The load
  generator keeps one histogram per measurement, not one per second, hence
  this rather than a bootstrap over seconds.
* nothing for a figure with one value per measurement (RGW CPU and RSS): the
  floor alone speaks for them.

The interval of ``b - a`` is Welch's: ``t(0.975, df) * sqrt(se_a**2 + se_b**2)``
with the Welch-Satterthwaite ``df``; ``t`` is computed (Student's t
distribution by its regularised incomplete beta function), not read from a
table.
"""
import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional, Sequence, Tuple

from ..loadgen.histogram import Histogram
from .model import LEVEL

Z = statistics.NormalDist().inv_cdf(0.5 + LEVEL / 2)
#: degrees of freedom taken as infinite (the normal distribution)
UNBOUNDED_DF = 1e9
MIN_BATCHES = 2
#: the largest lag-1 autocorrelation `short_batch_factor` believes
MAX_LAG_ONE = 0.9


@dataclass(frozen=True)
class Estimate:
    """A figure of one side, its standard error and that error's degrees of freedom."""
    value: float
    se: float
    df: float


def _incomplete_beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta (modified Lentz)."""
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                          -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _incomplete_beta_fraction(a, b, x) / a
    return 1.0 - front * _incomplete_beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=512)
def _t_quantile(p: float, df: float) -> float:
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low < 1e-9:
            break
    return (low + high) / 2.0


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (p >= 0.5) of Student's t; the normal's when df is unbounded.

    A fractional df (Welch's) is rounded down to a tenth: a slightly wider
    interval, and quantiles that are computed once.
    """
    if df >= UNBOUNDED_DF:
        return statistics.NormalDist().inv_cdf(p)
    return _t_quantile(p, max(0.1, math.floor(df * 10.0) / 10.0))


def chi2_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of the chi-square distribution (Wilson and Hilferty's cube root
    of a normal; for a small ``p`` and df of 2 or more, a little low: on the safe side
    for `sd_upper`)."""
    z = statistics.NormalDist().inv_cdf(p)
    third = 2.0 / (9.0 * df)
    return df * max(1e-9, 1.0 - third + z * math.sqrt(third)) ** 3


def sd_upper(sd: float, df: float, confidence: float) -> float:
    """An upper confidence bound of a standard deviation estimated with ``df``."""
    return sd * math.sqrt(df / chi2_quantile(1.0 - confidence, df))


def mean_and_sd(values: Sequence[float]) -> Tuple[float, float]:
    """The mean and the sample standard deviation (two values or more), in floats."""
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def from_values(values: Sequence[float]) -> Optional[Estimate]:
    """The mean of independent values (repeats, batches) and its standard error."""
    if len(values) < 2:
        return None
    mean, sd = mean_and_sd(values)
    return Estimate(mean, sd / math.sqrt(len(values)), len(values) - 1.0)


def batches(count: int) -> Tuple[int, int]:
    """(batch length, number of batches) for ``count`` seconds; ends cut off."""
    length = max(1, int(round(math.sqrt(count))))
    return length, count // length


def batch_means(values: Sequence[float],
                weights: Optional[Sequence[float]] = None) -> List[float]:
    """The (weighted) mean of each batch of consecutive values; an empty batch is left out."""
    length, number = batches(len(values))
    out = []
    for start in range(0, number * length, length):
        part = values[start:start + length]
        weight = [1.0] * len(part) if weights is None else weights[start:start + length]
        total = sum(weight)
        if total > 0:
            out.append(sum(v * w for v, w in zip(part, weight)) / total)
    return out


def lag_one(values: Sequence[float]) -> float:
    """The lag-1 autocorrelation of a series, clipped to [0, MAX_LAG_ONE]."""
    if len(values) < 3:
        return 0.0
    mean = math.fsum(values) / len(values)
    spread = math.fsum((v - mean) ** 2 for v in values)
    if spread <= 0:
        return 0.0
    found = math.fsum((values[i] - mean) * (values[i + 1] - mean)
                      for i in range(len(values) - 1)) / spread
    return min(MAX_LAG_ONE, max(0.0, found))


def short_batch_factor(rho: float, length: int) -> float:
    """How much batches of ``length`` seconds understate the variance of the mean.

    For a series whose seconds follow their predecessor with correlation
    ``rho`` (first order autoregressive), the variance of a batch mean is
    ``tau - 2 rho (1 - rho**b) / (b (1 - rho)**2)`` times ``sigma**2 / b``
    where the long-run one is ``tau = (1 + rho) / (1 - rho)``: batches of a
    few seconds leave part of the correlation out. The ratio (at least 1).
    """
    if rho <= 0 or length < 1:
        return 1.0
    tau = (1.0 + rho) / (1.0 - rho)
    short = tau - 2.0 * rho * (1.0 - rho ** length) / (length * (1.0 - rho) ** 2)
    return max(1.0, tau / short) if short > 0 else 1.0


def relative_batch_se(values: Sequence[float],
                      weights: Optional[Sequence[float]] = None
                      ) -> Optional[Tuple[float, float]]:
    """(standard error relative to the mean, df) of a per-second series by batch means,
    corrected for what batches of a few seconds leave out (`short_batch_factor`)."""
    means = batch_means(values, weights)
    if len(means) < MIN_BATCHES:
        return None
    found = from_values(means)
    if found is None or found.value == 0:
        return None
    factor = short_batch_factor(lag_one(values), batches(len(values))[0])
    return found.se * math.sqrt(factor) / abs(found.value), found.df


def inflation(values: Sequence[float], weights: Optional[Sequence[float]] = None) -> float:
    """How much the seconds' correlation inflates the variance of the mean (at least 1)."""
    by_batch = relative_batch_se(values, weights)
    if by_batch is None or len(values) < 2:
        return 1.0
    mean, sd = mean_and_sd(values)
    naive = sd / math.sqrt(len(values)) / abs(mean) if mean else 0.0
    if naive <= 0:
        return 1.0
    return max(1.0, (by_batch[0] / naive) ** 2)


def percentile_se(histogram: Histogram, pct: float, inflated: float) -> Optional[float]:
    """The standard error of a histogram's percentile, relative to it (order statistics)."""
    value = histogram.percentile(pct)
    if not value or histogram.count < 2:
        return None
    p = pct / 100.0
    n_eff = histogram.count / max(1.0, inflated)
    half = Z * math.sqrt(p * (1.0 - p) / n_eff)
    low = histogram.percentile(max(0.0, p - half) * 100.0)
    high = histogram.percentile(min(1.0, p + half) * 100.0)
    if low is None or high is None:
        return None
    return (high - low) / (2.0 * Z) / value


def difference(a: Estimate, b: Estimate) -> Estimate:
    """``b.value - a.value``, its standard error and Welch-Satterthwaite degrees of freedom."""
    va, vb = a.se ** 2, b.se ** 2
    denominator = (va ** 2 / a.df if va else 0.0) + (vb ** 2 / b.df if vb else 0.0)
    df = (va + vb) ** 2 / denominator if denominator else UNBOUNDED_DF
    return Estimate(b.value - a.value, math.sqrt(va + vb), df)


def difference_half_width(a: Estimate, b: Estimate, level: float = LEVEL) -> float:
    """Half the width of the ``level`` interval of ``b.value - a.value`` (Welch)."""
    found = difference(a, b)
    if found.se == 0:
        return 0.0
    return t_quantile(0.5 + level / 2, found.df) * found.se


def two_sided_p(statistic: float, df: float) -> float:
    """P(|T| >= |statistic|) for Student's t with ``df`` (the normal's when unbounded)."""
    if df >= UNBOUNDED_DF:
        return 2.0 * (1.0 - statistics.NormalDist().cdf(abs(statistic)))
    return 2.0 * (1.0 - t_cdf(abs(statistic), df))


def discovery_level(p_values: Sequence[float], rate: float = 1.0 - LEVEL) -> float:
    """The confidence level of every interval of one family of ``p_values``.

    Benjamini and Hochberg's step-up rule at false discovery ``rate``: the
    ``R`` smallest p-values are discoveries for the largest ``R`` with
    ``p_(R) <= R * rate / m``. Each interval is then built at level
    ``1 - R * rate / m`` (Benjamini and Yekutieli's intervals for the
    selected; ``1 - rate / m`` when none is, as Bonferroni's), so an interval
    leaves out 0 exactly when its figure is a discovery. When every figure is
    noise, the chance that any is called a change is at most ``rate``.
    """
    ordered = sorted(p_values)
    count = len(ordered)
    if not count:
        return LEVEL
    found = max((k for k in range(1, count + 1) if ordered[k - 1] <= k * rate / count),
                default=0)
    return 1.0 - max(found, 1) * rate / count
