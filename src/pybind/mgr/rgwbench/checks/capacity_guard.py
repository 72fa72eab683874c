"""The capacity guard: a workload that writes stops before any OSD gets near full.

A PUT workload writes new objects for its whole duration. On a cluster that
is already well filled it could cross the `nearfull` ratio (and then
`backfillfull`, `full`: every client's writes blocked). While such a
workload runs, the guard reads how full the fullest OSD is, every second,
and stops the workload once it is within a margin of `nearfull`; what was
measured until then is kept and the workload says why it stopped.

The mgr's figures lag the writes by up to a report period, and a stop reaches
the agents a second after it is decided: until the figures show a workload's
own rate, it may write for START_BLIND_S unseen, so a workload that writes
while it is measured starts only with room for that at the fastest rate this
cluster was seen filling lately. (A 256 MiB PUT workload on a two-OSD
cluster, started 2.5 points below the line, filled it by 1.9 points a second:
its OSD was nearfull before the guard could stop it.)
"""
import collections
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Deque, Dict, List, Optional, Protocol, Tuple

from ..loadgen.workload import Job
from .periodic import Periodic

# Stop this far below the nearfull ratio, or earlier where the OSD fills so
# fast that it would get there within LOOKAHEAD_S (the mgr's figures are a few
# seconds old, and the agents stop a few seconds after they are told).
DEFAULT_MARGIN = 0.05
LOOKAHEAD_S = 20.0
TREND_WINDOW_S = 15.0
# How often an OSD's use reaches the mgr (Ceph's `mgr_stats_period`, 5 s by default):
# a change seen between two readings a second apart was written over a whole period.
STATS_PERIOD_S = 5.0
CHECK_EVERY_S = 1.0
# How long a workload writes before a rate of its own is seen and its stop reaches
# the agents: the mgr's first figure that moves (a report period) is up to a report
# period old; a check and the answer to the agents' next post take a second each.
START_BLIND_S = 2 * STATS_PERIOD_S
# How long a fill rate seen stays the cluster's "lately".
FILL_MEMORY_S = 3600.0
# Without a figure the guard cannot tell: a writer does not start, and one that writes
# stops once no OSD has reported for this long (two report periods: one missed reading,
# a map being replaced, is no reason).
NO_FIGURES_S = 2 * STATS_PERIOD_S
NO_FIGURES = ('no OSD reports how full its store is (the mgr\'s osd_stats): the capacity '
              'guard cannot tell whether writes would fill the cluster')


class MgrData(Protocol):
    def get(self, data_name: str) -> Any: ...


@dataclass(frozen=True)
class Fullness:
    """How full the fullest OSD is, the ratio at which Ceph calls it nearfull, and what
    the workload's requests in flight can still add to it once its agents are told to
    stop (they end the requests they have begun: a 256 MiB PUT writes all of it);
    before it starts, also what its prefill is about to write."""
    osd: int
    used_ratio: float
    nearfull_ratio: float
    in_flight_ratio: float = 0.0
    prefill_ratio: float = 0.0
    unseen_ratio: float = 0.0     # what may be written before the guard sees a rate

    def stop_at(self, margin: float) -> float:
        return self.nearfull_ratio - margin - self.in_flight_ratio - self.prefill_ratio - \
            self.unseen_ratio

    def too_full(self, margin: float) -> bool:
        return self.used_ratio >= self.stop_at(margin)

    def describe(self, margin: float) -> str:
        in_flight = ''.join(' and %.1f %% %s' % (100 * ratio, what) for ratio, what in (
            (self.in_flight_ratio, 'its requests in flight can still write'),
            (self.prefill_ratio, 'its prefill is about to write'),
            (self.unseen_ratio, 'it may write before it can be stopped, at the fastest '
                                'this cluster filled lately')) if ratio >= 0.0005)
        return ('osd.%d is %.1f %% full; the guard stops writes at %.1f %% (nearfull %.1f %% '
                'less the margin of %.1f %%%s)' % (
                    self.osd, 100 * self.used_ratio, 100 * self.stop_at(margin),
                    100 * self.nearfull_ratio, 100 * margin, in_flight))


def _store_bytes(stats: Dict[str, Any]) -> Optional[Tuple[float, float]]:
    """(total, available) bytes of one OSD's store: its statfs, or its KiB figures."""
    statfs = stats.get('statfs') or {}
    total, available, unit = statfs.get('total'), statfs.get('available'), 1.0
    if not total:
        total, available, unit = stats.get('kb'), stats.get('kb_avail'), 1024.0
    try:
        total_f, available_f = unit * float(total or 0), unit * float(available or 0)
    except (TypeError, ValueError):
        return None
    return (total_f, available_f) if total_f > 0 else None


def _used_ratio(stats: Dict[str, Any]) -> Optional[float]:
    """Used over total of one OSD's store, as Ceph's full ratios count it."""
    found = _store_bytes(stats)
    if found is None:
        return None
    total, available = found
    return max(0.0, min(1.0, (total - available) / total))


def in_flight_ratio(in_flight_bytes: int, osd_stats: Dict[str, Any],
                    osd_map: Dict[str, Any]) -> float:
    """What `in_flight_bytes` of new objects (or any other bytes about to be written)
    take of an OSD: written `size` times (the
    largest of the pools' sizes: the data pool is not known here; more than an erasure
    coded pool takes) and spread over all the OSDs' bytes."""
    if in_flight_bytes <= 0:
        return 0.0
    total = sum(found[0] for found in map(_store_bytes, osd_stats.get('osd_stats', []))
                if found is not None)
    copies = max((int(p.get('size') or 0) for p in osd_map.get('pools') or []), default=0)
    return in_flight_bytes * (copies or 3) / total if total > 0 else 0.0


def fullest_osd(osd_stats: Dict[str, Any], osd_map: Dict[str, Any],
                in_flight_bytes: int = 0, prefill_bytes: int = 0) -> Optional[Fullness]:
    """The fullest OSD (None when no OSD reports its store yet)."""
    nearfull = float(osd_map.get('nearfull_ratio') or 0.85)
    held = in_flight_ratio(in_flight_bytes, osd_stats, osd_map)
    prefill = in_flight_ratio(prefill_bytes, osd_stats, osd_map)
    seen: List[Fullness] = []
    for stats in osd_stats.get('osd_stats', []):
        ratio = _used_ratio(stats)
        if ratio is not None and 'osd' in stats:
            seen.append(Fullness(int(stats['osd']), ratio, nearfull, held, prefill))
    return max(seen, key=lambda f: f.used_ratio) if seen else None


class CapacityCheck(Protocol):
    def before_start(self) -> Optional[str]:
        """Why the workload must not start at all (None: it may)."""

    def problem(self) -> Optional[str]:
        """Why writes must stop now (None: they may go on)."""


class FillRates:
    """The fastest the fullest OSD was seen filling (ratio a second) over the last
    FILL_MEMORY_S, by any workload's check."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._seen: Deque[Tuple[float, float]] = collections.deque()

    def seen(self, rate: float) -> None:
        if rate > 0:
            self._seen.append((self.clock(), rate))

    def fastest(self) -> float:
        while self._seen and self.clock() - self._seen[0][0] > FILL_MEMORY_S:
            self._seen.popleft()
        return max((rate for _, rate in self._seen), default=0.0)


class FillTrend:
    """One workload's check: how full the fullest OSD is, and how fast it fills.

    The mgr learns an OSD's use from its reports, every few seconds, and the
    agents stop a few seconds after they are told: writes go on meanwhile. So
    the check stops them when the OSD is within the margin of nearfull, or
    when at the rate it filled over the last seconds it would get there
    within LOOKAHEAD_S. `open_ended`: the workload writes while it is measured
    (PUT), not only a prefill of a known size.
    """

    def __init__(self, read: Callable[[], Optional[Fullness]], margin: Callable[[], float],
                 clock: Callable[[], float] = time.monotonic,
                 read_with_prefill: Optional[Callable[[], Optional[Fullness]]] = None,
                 rates: Optional[FillRates] = None, open_ended: bool = True) -> None:
        self.read = read
        self.open_ended = open_ended
        self.read_with_prefill = read_with_prefill or read
        self.margin = margin
        self.clock = clock
        self.rates = rates or FillRates(clock)
        self.samples: Deque[Tuple[float, float]] = collections.deque()
        # Since when no OSD has reported (None: one has, at the last check).
        self.unseen_since: Optional[float] = None

    def before_start(self) -> Optional[str]:
        """Whether the OSD is past the line already, with the prefill's bytes counted.

        Once its agents start, a workload is stopped only when the mgr's figures
        move, seconds late, while a prefill writes its whole working set at once.
        And what earlier workloads deleted can still be held (RGW's garbage
        collector keeps the tails of deleted objects for hours). Until a rate of
        its own is seen, an open-ended workload may write START_BLIND_S at the
        fastest rate seen lately.
        """
        found = self.read_with_prefill()
        if found is None:
            return NO_FIGURES   # fails closed: nothing is written unseen
        if self.open_ended:
            found = replace(found, unseen_ratio=self.rates.fastest() * START_BLIND_S)
        margin = self.margin()
        return found.describe(margin) if found.too_full(margin) else None

    def rate(self) -> float:
        """How fast the fullest OSD fills (ratio a second) over the trend window.

        The mgr's figure moves in steps, one per report of the OSD: a step seen
        over a span shorter than the report period is spread over the period.
        (Over the span alone, a 64 KiB PUT workload writing under 0.2 % of its
        OSD a second was once seen filling it by 3.2 % a second, and stopped at
        50 % full.)
        """
        if len(self.samples) < 2:
            return 0.0
        (t0, used0), (t1, used1) = self.samples[0], self.samples[-1]
        return max(0.0, (used1 - used0) / max(t1 - t0, STATS_PERIOD_S))

    def problem(self) -> Optional[str]:
        found = self.read()
        now = self.clock()
        if found is None:
            if self.unseen_since is None:
                self.unseen_since = now
            if now - self.unseen_since >= NO_FIGURES_S:
                return '%s for %d s' % (NO_FIGURES, now - self.unseen_since)
            return None
        self.unseen_since = None
        self.samples.append((now, found.used_ratio))
        while now - self.samples[0][0] > TREND_WINDOW_S:
            self.samples.popleft()
        rate = self.rate()
        self.rates.seen(rate)
        margin = self.margin()
        if found.too_full(margin):
            return found.describe(margin)
        if found.used_ratio + rate * LOOKAHEAD_S >= found.stop_at(margin):
            return '%s, filling by %.2f %% a second: it would get there within %d s' % (
                found.describe(margin).replace(' is ', ' was ', 1), 100 * rate, LOOKAHEAD_S)
        return None


class CapacityGuard:
    """Reads how full the OSDs are from the mgr's maps; a check of its own for each workload."""

    def __init__(self, mgr: MgrData, margin: Callable[[], float]) -> None:
        self.mgr = mgr
        self.margin = margin
        self.rates = FillRates()

    def fullness(self, in_flight_bytes: int = 0, prefill_bytes: int = 0) -> Optional[Fullness]:
        return fullest_osd(self.mgr.get('osd_stats'), self.mgr.get('osd_map'), in_flight_bytes,
                           prefill_bytes)

    def new_check(self, in_flight_bytes: int = 0, prefill_bytes: int = 0,
                  open_ended: bool = True) -> FillTrend:
        return FillTrend(lambda: self.fullness(in_flight_bytes), self.margin,
                         read_with_prefill=lambda: self.fullness(in_flight_bytes, prefill_bytes),
                         rates=self.rates, open_ended=open_ended)


def in_flight_bytes(job: Job) -> int:
    """The most a job's requests can have begun writing at once: every worker a PUT of
    its largest object (a prefill's writers are as many)."""
    return job.concurrency * job.sizes.max_size


def prefill_bytes(job: Job) -> int:
    """What a job writes before it is measured: the working set it prefills (0: none)."""
    return (job.working_set_bytes() or 0) if job.reads_prefilled and job.prefill else 0


def writes(job: Job) -> bool:
    """Whether a job writes new data: for its duration (PUT, or a mix with PUT), or before
    it, the working set it prefills."""
    return writes_while_measured(job) or (job.reads_prefilled and job.prefill)


def writes_while_measured(job: Job) -> bool:
    """Whether a job writes while it is measured (PUT, or a mix with PUT): else only its
    prefill needs watching."""
    return job.weights.get('put', 0.0) > 0


class CapacityWatch(Periodic):
    """While a workload runs: asks the guard every second, and stops it once."""

    def __init__(self, problem: Callable[[], Optional[str]], stop: Callable[[str], None],
                 every_s: float = CHECK_EVERY_S, log: Optional[Any] = None,
                 watching: Callable[[], bool] = lambda: True) -> None:
        super().__init__(self._ask, every_s, 'rgwbench-capacity', log)
        # `watching` turns false for good once nothing more is written (a reading
        # workload's prefill is over): the watch ends then.
        self.watching = watching
        self.problem = problem
        self.stop = stop

    def _ask(self) -> bool:
        if not self.watching():
            return True
        problem = self.problem()
        if problem:
            self.stop('capacity: ' + problem)
        return bool(problem)
