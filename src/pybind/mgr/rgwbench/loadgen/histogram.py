"""Log-linear (HDR style) latency histogram.

Values are non-negative integers (the engine records nanoseconds).  Values
below 256 get a bucket each; above that every power of two is split into
128 equal sub-buckets, so a bucket is at most 1/128 of its lower bound
wide.  A percentile is reported as the middle of its bucket, which is
within 1/256 (0.4 %) of any value in the bucket, comfortably inside the
1 % the measurement method asks for.

Histograms merge by adding counts (threads, processes, hosts alike) and
serialise to a compact dict that survives JSON.  Never average
percentiles: merge, then ask.
"""

import math
from typing import Any, Dict, Iterable, List, Optional, Tuple

SUB_BITS = 7
_SUB = 1 << SUB_BITS            # 128 sub-buckets per power of two
_EXACT_LIMIT = _SUB << 1        # values below 256 are exact
_EXACT_BITS = SUB_BITS + 1      # bit length of the largest exact value
FORMAT_VERSION = 1

#: relative error bound of a reported value (half a bucket / bucket start)
RELATIVE_ERROR = 1.0 / (2 * _SUB)

PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p999", 99.9))


def bucket_index(value: int) -> int:
    """Index of the bucket holding ``value`` (negative values count as 0)."""
    if value < _EXACT_LIMIT:
        return value if value > 0 else 0
    shift = value.bit_length() - _EXACT_BITS
    return (shift << SUB_BITS) + (value >> shift)


def bucket_bounds(index: int) -> Tuple[int, int]:
    """Lowest value of bucket ``index`` and the lowest value of the next one."""
    if index < _EXACT_LIMIT:
        return index, index + 1
    shift = (index >> SUB_BITS) - 1
    mantissa = index - (shift << SUB_BITS)
    return mantissa << shift, (mantissa + 1) << shift


def bucket_value(index: int) -> float:
    """The value a bucket stands for: its middle (exact below 256)."""
    lo, hi = bucket_bounds(index)
    return (lo + hi - 1) / 2.0


class Histogram:
    """Counts of values in log-linear buckets, plus exact count/sum/min/max."""

    __slots__ = ("counts", "count", "total", "min", "max")

    def __init__(self) -> None:
        self.counts: Dict[int, int] = {}
        self.count = 0
        self.total = 0
        self.min: Optional[int] = None
        self.max: Optional[int] = None

    def record(self, value: int) -> None:
        """Add one value (hot path: kept to a handful of operations)."""
        if value < _EXACT_LIMIT:
            if value < 0:
                value = 0
            index = value
        else:
            shift = value.bit_length() - _EXACT_BITS
            index = (shift << SUB_BITS) + (value >> shift)
        counts = self.counts
        counts[index] = counts.get(index, 0) + 1
        self.count += 1
        self.total += value
        if self.max is None or value > self.max:
            self.max = value
        if self.min is None or value < self.min:
            self.min = value

    def record_many(self, values: Iterable[int]) -> None:
        for value in values:
            self.record(value)

    def merge(self, other: "Histogram") -> "Histogram":
        """Add ``other``'s counts into this histogram; returns self."""
        counts = self.counts
        for index, n in other.counts.items():
            counts[index] = counts.get(index, 0) + n
        self.count += other.count
        self.total += other.total
        if other.max is not None and (self.max is None or other.max > self.max):
            self.max = other.max
        if other.min is not None and (self.min is None or other.min < self.min):
            self.min = other.min
        return self

    def copy(self) -> "Histogram":
        return Histogram().merge(self)

    def mean(self) -> Optional[float]:
        return self.total / self.count if self.count else None

    def percentile(self, pct: float) -> Optional[float]:
        """Nearest-rank percentile (``pct`` in 0..100), or None if empty."""
        if not self.count:
            return None
        if pct <= 0:
            return float(self.min) if self.min is not None else None
        rank = max(1, int(math.ceil(pct / 100.0 * self.count - 1e-9)))
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                value = bucket_value(index)
                # the exact extremes are known: never report beyond them
                if self.max is not None and value > self.max:
                    value = float(self.max)
                if self.min is not None and value < self.min:
                    value = float(self.min)
                return value
        return float(self.max) if self.max is not None else None

    def summary(self, scale: float = 1e-6) -> Dict[str, Optional[float]]:
        """mean, p50, p90, p99, p999, min, max multiplied by ``scale``.

        With nanosecond values the default scale gives milliseconds.
        """
        def scaled(v: Optional[float]) -> Optional[float]:
            return None if v is None else round(v * scale, 6)

        out: Dict[str, Optional[float]] = {"mean": scaled(self.mean())}
        for name, pct in PERCENTILES:
            out[name] = scaled(self.percentile(pct))
        out["min"] = scaled(None if self.min is None else float(self.min))
        out["max"] = scaled(None if self.max is None else float(self.max))
        return out

    def to_dict(self) -> Dict[str, Any]:
        """Compact, JSON-safe form: bucket indices delta-coded with counts."""
        flat: List[int] = []
        previous = 0
        for index in sorted(self.counts):
            flat.append(index - previous)
            flat.append(self.counts[index])
            previous = index
        return {"v": FORMAT_VERSION, "sub_bits": SUB_BITS, "n": self.count,
                "sum": self.total, "min": self.min, "max": self.max, "b": flat}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Histogram":
        if data.get("v") != FORMAT_VERSION or data.get("sub_bits") != SUB_BITS:
            raise ValueError("unsupported histogram format %r/%r"
                             % (data.get("v"), data.get("sub_bits")))
        hist = cls()
        flat = data.get("b") or []
        if len(flat) % 2:
            raise ValueError("histogram bucket list has odd length")
        index = 0
        for i in range(0, len(flat), 2):
            index += int(flat[i])
            hist.counts[index] = hist.counts.get(index, 0) + int(flat[i + 1])
        hist.count = int(data.get("n", sum(hist.counts.values())))
        hist.total = int(data.get("sum", 0))
        hist.min = None if data.get("min") is None else int(data["min"])
        hist.max = None if data.get("max") is None else int(data["max"])
        if hist.count != sum(hist.counts.values()):
            raise ValueError("histogram count does not match its buckets")
        return hist

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Histogram):
            return NotImplemented
        return (self.counts == other.counts and self.count == other.count
                and self.total == other.total and self.min == other.min
                and self.max == other.max)

    def __repr__(self) -> str:
        return "Histogram(count=%d, buckets=%d)" % (self.count, len(self.counts))


def merged(histograms: Iterable[Histogram]) -> Histogram:
    out = Histogram()
    for hist in histograms:
        out.merge(hist)
    return out
