"""The run record, typed: a run, its variants, what each workload measured, findings.

``serial.dump(run)`` is the JSON the store keeps and `results export` prints
(the contract in DESIGN.md); ``serial.load(Run, doc)`` reads it back, as any
version of the module wrote it. Reports, the comparison and the panel read a
result only through these classes and through FIGURES, the one table of the
figures they show.

Round trip: ``dump(load(Run, d)) == d`` for every record the module has
stored. A key a class does not know is kept as it came (``extra``). A field
that is None is left out of the JSON unless it is in the object's ``nulls``:
an object read from JSON has there the keys that came as null, and those of
its class's default ``nulls`` that came at all; an object made here has the
default (e.g. a workload's ``error``, which the engine always writes).
"""
from dataclasses import dataclass, field, replace
from typing import (Any, Callable, ClassVar, Dict, FrozenSet, Iterable, List, Mapping,
                    Optional, Protocol, Sequence, Tuple, TypeVar)

from ..checks.finding import Finding
from ..loadgen.histogram import Histogram
from ..serial import FLAT, OMIT_EMPTY, field_names, flat_keys, load

HIGHER, LOWER = 'higher', 'lower'
#: what the noise test of a comparison measured (`Noise.tested`)
OPS_TEST, LATENCY_TEST = 'ops_per_s', 'latency_mean'
#: the confidence level of one figure's interval (results.significance)
LEVEL = 0.95
HISTOGRAMS = ('histogram', 'ttfb_histogram')
Doc = Dict[str, Any]


def strip_histograms(doc: Any, also: Iterable[str] = ()) -> Any:
    """A copy of a JSON document without histograms, nor the keys in ``also``, at any depth."""
    drop = frozenset(HISTOGRAMS).union(also)

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in drop}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    return strip(doc)


def _present(obj: Any, name: str) -> bool:
    """Whether a figure is in the object's JSON: it has a value, or a null written."""
    return getattr(obj, name) is not None or name in obj.nulls


def _part(obj: Any, name: str) -> Any:
    """A field of a record, or a key it keeps as extra; None for no record."""
    if obj is None:
        return None
    return getattr(obj, name) if name in field_names(type(obj)) else obj.extra.get(name)


class _Record(Protocol):
    """A record of figures: the keys it keeps as they came, and the fields written null."""
    extra: Doc
    nulls: FrozenSet[str]


R = TypeVar('R', bound=_Record)


def _made(cls: Callable[..., R], fields: Doc, extra: Optional[Doc] = None) -> R:
    """A record of ``cls`` with these fields, those that are None written as null (as in a
    record read with them null), and the keys it keeps as extra."""
    return cls(**fields, extra=extra or {},
               nulls=frozenset(k for k, v in fields.items() if v is None))


def _combined(parts: Sequence[R], mean: Callable[[List[Any]], Tuple[Any, Any]],
              special: Optional[Dict[str, Callable[[Sequence[Any]], Tuple[Any, Any]]]] = None
              ) -> Tuple[R, R]:
    """Several records of one kind, key by key: their means, their spread.

    The keys are those the first has (its figures and those it keeps as extra)."""
    first = parts[0]
    merged: Doc = {}
    spread: Doc = {}
    for name in [k for k in field_names(type(first)) if _present(first, k)]:
        combine = (special or {}).get(name)
        merged[name], spread[name] = combine(parts) if combine else mean(
            [_part(p, name) for p in parts])
    extra: Doc = {}
    extra_spread: Doc = {}
    for name in first.extra:
        extra[name], extra_spread[name] = mean([_part(p, name) for p in parts])
    return (_made(type(first), merged, extra),
            _made(type(first), spread, extra_spread))


# -- figures ---------------------------------------------------------------------------


@dataclass
class LatencyFigures:
    """Latency (or time to first byte) of a workload in ms; None when nothing was timed."""
    mean: Optional[float] = None
    p50: Optional[float] = None
    p90: Optional[float] = None
    p99: Optional[float] = None
    p999: Optional[float] = None
    min: Optional[float] = None
    max: Optional[float] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)


@dataclass
class DaemonFigures:
    """CPU and memory of one daemon while a workload ran, found by its name on its host."""
    daemon: Optional[str] = None
    host: Optional[str] = None
    cpu_cores: Optional[float] = None
    rss_mib: Optional[float] = None
    rss_mib_max: Optional[float] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    NUMBERS: ClassVar[Tuple[str, ...]] = ('cpu_cores', 'rss_mib', 'rss_mib_max')


@dataclass
class ServerFigures:
    """CPU and memory of the RGW (HAProxy, OSD) daemons while a workload ran, summed;
    each daemon's own under ``per_daemon`` (runs before it have none), and the mean per
    daemon (``*_mean``: the sum over ``daemons``; runs before it have none, see
    ``per_daemon_mean``)."""
    daemons: Optional[int] = None
    cpu_cores: Optional[float] = None
    rss_mib: Optional[float] = None
    rss_mib_max: Optional[float] = None
    per_daemon: Optional[List[DaemonFigures]] = None
    cpu_cores_mean: Optional[float] = None
    rss_mib_mean: Optional[float] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    def per_daemon_mean(self, name: str) -> Optional[float]:
        """A figure's mean per daemon: stored, or worked out of the sum (older runs)."""
        stored = getattr(self, name + '_mean')
        if stored is not None:
            return float(stored)
        total = getattr(self, name)
        if total is None or not self.daemons:
            return None
        return float(total) / self.daemons

    @staticmethod
    def combine_daemons(servers: Sequence[Optional['ServerFigures']],
                        mean: Callable[[List[Any]], Tuple[Any, Any]]
                        ) -> Tuple[Optional[List[DaemonFigures]], Optional[List[DaemonFigures]]]:
        """Each daemon's figures over several repeats (those it was found in): means, spread."""
        lists = [s.per_daemon for s in servers if s is not None and s.per_daemon is not None]
        if not lists:
            return None, None
        by_daemon: Dict[str, List[DaemonFigures]] = {}
        for found in lists:
            for entry in found:
                by_daemon.setdefault(str(entry.daemon), []).append(entry)
        means, spread = [], []
        for name in sorted(by_daemon):
            entries = by_daemon[name]
            average: Doc = {'daemon': name, 'host': entries[0].host}
            deviation = dict(average)
            for key in DaemonFigures.NUMBERS:
                average[key], deviation[key] = mean([getattr(e, key) for e in entries])
            means.append(_made(DaemonFigures, average))
            spread.append(_made(DaemonFigures, deviation))
        return means, spread


@dataclass
class NicFigures:
    """What a network interface of a host carried while a workload ran (bytes and
    bytes/s each way); its link speed in Mb/s, None where the kernel does not know it."""
    name: Optional[str] = None
    rx_bytes: Optional[float] = None
    tx_bytes: Optional[float] = None
    rx_bytes_s: Optional[float] = None
    tx_bytes_s: Optional[float] = None
    speed_mbit: Optional[int] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'speed_mbit'}), repr=False,
                                  compare=False)

    NUMBERS: ClassVar[Tuple[str, ...]] = ('rx_bytes', 'tx_bytes', 'rx_bytes_s', 'tx_bytes_s')

    def busiest_share(self) -> Optional[float]:
        """The busier direction's share of the link speed (0..1); None for an unknown speed."""
        if not self.speed_mbit:
            return None
        rate = max(self.rx_bytes_s or 0.0, self.tx_bytes_s or 0.0)
        return rate * 8 / (self.speed_mbit * 1e6)


@dataclass
class HostFigures:
    """One sampled host while a workload ran: its CPU (% of all its cores: the mean over
    the window, the peak of a second), its interfaces but loopback (``loopback``: the
    traffic between daemons of one machine) and the CPU of the cluster's OSDs on it."""
    host: Optional[str] = None
    cpus: Optional[int] = None
    cpu_pct_mean: Optional[float] = None
    cpu_pct_peak: Optional[float] = None
    nics: Optional[List[NicFigures]] = None
    loopback: Optional[NicFigures] = None
    osd: Optional[ServerFigures] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    NUMBERS: ClassVar[Tuple[str, ...]] = ('cpus', 'cpu_pct_mean', 'cpu_pct_peak')

    @staticmethod
    def combine(repeats: Sequence[Optional[List['HostFigures']]],
                mean: Callable[[List[Any]], Tuple[Any, Any]]
                ) -> Tuple[Optional[List['HostFigures']], Optional[List['HostFigures']]]:
        """Each host's figures over several repeats (those it was sampled in): means, spread."""
        by_host: Dict[str, List[HostFigures]] = {}
        for found in repeats:
            for entry in found or []:
                by_host.setdefault(str(entry.host), []).append(entry)
        if not by_host:
            return None, None
        means, spread = [], []
        for name in sorted(by_host):
            entries = by_host[name]
            average: Doc = {'host': name}
            deviation: Doc = {'host': name}
            for key in HostFigures.NUMBERS:
                average[key], deviation[key] = mean([getattr(e, key) for e in entries])
            nics: Dict[str, List[NicFigures]] = {}
            for entry in entries:
                for nic in (entry.nics or []) + ([entry.loopback] if entry.loopback else []):
                    nics.setdefault(str(nic.name), []).append(nic)
            for side, names in (('nics', [n for n in sorted(nics) if n != 'lo']),
                                ('loopback', [n for n in nics if n == 'lo'])):
                rows, spreads = [], []
                for nic_name in names:
                    seen = nics[nic_name]
                    row: Doc = {'name': nic_name, 'speed_mbit': seen[0].speed_mbit}
                    dev: Doc = dict(row)
                    for key in NicFigures.NUMBERS:
                        row[key], dev[key] = mean([getattr(n, key) for n in seen])
                    rows.append(_made(NicFigures, row))
                    spreads.append(_made(NicFigures, dev))
                if side == 'nics':
                    average[side], deviation[side] = rows, spreads
                elif rows:
                    average[side], deviation[side] = rows[0], spreads[0]
            osds = [e.osd for e in entries if e.osd is not None]
            if osds:
                average['osd'], deviation['osd'] = _combined(osds, mean)
            means.append(_made(HostFigures, average))
            spread.append(_made(HostFigures, deviation))
        return means, spread


@dataclass
class Figures:
    """What a workload measured: counts, rates, latency, the servers' load.

    The same shape holds a workload's spread over its repeats (each figure's
    sample standard deviation).
    """
    ops: Optional[float] = None
    bytes: Optional[float] = None
    errors: Optional[float] = None
    throughput_mib_s: Optional[float] = None
    ops_per_s: Optional[float] = None
    elapsed_s: Optional[float] = None
    client_cpu_s: Optional[float] = None
    client_cpu_ms_per_op: Optional[float] = None
    client_wait_s: Optional[float] = None   # the engine waiting, runnable, for a CPU
    latency_ms: Optional[LatencyFigures] = None
    ttfb_ms: Optional[LatencyFigures] = None
    rgw: Optional[ServerFigures] = None
    haproxy: Optional[ServerFigures] = None
    #: the cluster's OSDs on the sampled hosts, summed (None in runs stored before them)
    osd: Optional[ServerFigures] = None
    #: each sampled host's CPU, interfaces and OSDs (None in runs stored before them)
    host_figures: Optional[List[HostFigures]] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    NUMBERS: ClassVar[Tuple[str, ...]] = (
        'ops', 'bytes', 'errors', 'throughput_mib_s', 'ops_per_s', 'elapsed_s', 'client_cpu_s',
        'client_cpu_ms_per_op', 'client_wait_s')
    LATENCIES: ClassVar[Tuple[str, ...]] = ('latency_ms', 'ttfb_ms')
    SERVERS: ClassVar[Tuple[str, ...]] = ('rgw', 'haproxy', 'osd')

    @classmethod
    def combine(cls, items: Sequence['Figures'],
                mean: Callable[[List[Any]], Tuple[Any, Any]]) -> Tuple['Figures', 'Figures']:
        """Figures of several repeats, one by one: (their means, their spread).

        ``mean`` gives both for the values of one figure. The figures are
        those the first item has (numbers and every part of a nested one).
        """
        first = items[0]
        merged: Doc = {}
        spread: Doc = {}
        for key in cls.NUMBERS:
            if _present(first, key):
                merged[key], spread[key] = mean([getattr(i, key) for i in items])
        servers = {'per_daemon': lambda parts: ServerFigures.combine_daemons(parts, mean)}
        for key in cls.LATENCIES + cls.SERVERS:
            if getattr(first, key) is not None:
                merged[key], spread[key] = _combined(
                    [getattr(i, key) for i in items], mean,
                    servers if key in cls.SERVERS else None)
        if first.host_figures is not None:
            merged['host_figures'], spread['host_figures'] = HostFigures.combine(
                [i.host_figures for i in items], mean)
        return _made(cls, merged), _made(cls, spread)


@dataclass
class Second:
    """One second of a workload's measured window."""
    t: int = 0
    ops: Optional[float] = None
    bytes: Optional[float] = None
    errors: Optional[float] = None
    lat_mean_ms: Optional[float] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)


@dataclass
class TargetFigures:
    """What a workload sent to one target (an RGW daemon's URL, or an ingress frontend's).

    ``workers``: the connections pinned to it; ``ops`` and ``errors``: in the
    measured window, added over processes and agents (a mean over repeats).
    """
    url: Optional[str] = None
    workers: Optional[float] = None
    ops: Optional[float] = None
    errors: Optional[float] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)


@dataclass
class WorkloadResult:
    """What one workload of a variant measured (or one repeat of it: no name then).

    The figures are the mean of the repeats' (``spread``: their standard
    deviation); ``repeats`` has each repeat without its histograms. The
    per-second series, error samples and the other per-repeat parts are
    the workload's own only when it ran once.
    """
    name: Optional[str] = None
    op: Optional[str] = None
    object_size: Optional[str] = None
    concurrency: Optional[int] = None
    duration_s: Optional[float] = None
    #: `open` (at `rate` ops/s asked, over all agents; latency from each request's due
    #: time) or `closed`; None in runs stored before it was kept
    mode: Optional[str] = None
    rate: Optional[float] = None
    #: what a reading workload prefilled and read: objects and their bytes, over all agents
    objects: Optional[int] = None
    working_set_bytes: Optional[int] = None
    #: a ranged GET's START-END
    range: Optional[str] = None
    figures: Figures = field(default_factory=Figures, metadata=FLAT)
    #: the latency (and time to first byte) of every request timed, in ns (the engine's
    #: histograms, merged over the repeats); JSON in their own form (serial)
    histogram: Optional[Histogram] = None
    ttfb_histogram: Optional[Histogram] = None
    per_second: Optional[List[Second]] = None
    error_samples: Optional[List[str]] = None
    by_op: Optional[Doc] = None
    server: Optional[Doc] = None
    hosts: Optional[List[str]] = None
    spread: Optional[Figures] = None
    repeats: Optional[List['WorkloadResult']] = None
    error: Optional[str] = None
    # Why the workload ended before its duration, keeping its figures (the
    # capacity guard); absent when it ran its course.
    stopped: Optional[str] = None
    #: per target of the load (loadgen's `targets`); None in runs stored before targets
    targets: Optional[List[TargetFigures]] = None
    #: the variant whose prefill a reading workload of a run read (its own when it wrote it)
    prefilled_by: Optional[str] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'error'}), repr=False, compare=False)

    #: what the workload was (beyond its name, op and size), as the load generator echoes it
    SHAPE: ClassVar[Tuple[str, ...]] = ('mode', 'rate', 'objects', 'working_set_bytes', 'range')
    #: what a run keeps of a load generator's result, for each repeat
    KEPT: ClassVar[Tuple[str, ...]] = (
        'ops', 'bytes', 'errors', 'throughput_mib_s', 'ops_per_s', 'latency_ms', 'rgw',
        'ttfb_ms', 'client_cpu_s', 'client_wait_s', 'elapsed_s', 'per_second', 'histogram',
        'error_samples', 'haproxy', 'targets') + SHAPE

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> 'WorkloadResult':
        """One repeat, from the load generator's result: the parts a run keeps (what the
        workload was only where it says something: no null rate for a closed loop). A
        repeat in whose window no request ended measured nothing: it has an error, so
        that its throughput of 0 and its missing latency enter no mean and no floor."""
        kept = load(cls, {k: result[k] for k in cls.KEPT if k in result and (
            result[k] is not None or k not in cls.SHAPE)})
        if not result.get('ops') and not result.get('errors'):
            kept.error = 'no request ended in its measured window'
        return kept

    @classmethod
    def measured(cls, name: str, op: str, object_size: str, concurrency: int,
                 duration_s: float, merged: Optional['WorkloadResult'],
                 error: Optional[str], stopped: Optional[str] = None,
                 prefilled_by: Optional[str] = None) -> 'WorkloadResult':
        """A run's entry for a workload: what it is, what its repeats gave, its error (or
        null): `error` (how its agents failed) and the merged repeats' own (every repeat
        failed, e.g. none ended a request in its window), so that a workload that measured
        nothing never reads as one without an error."""
        base = merged if merged is not None else cls()
        error = '; '.join(filter(None, [error, base.error])) or None
        return replace(base, name=name, op=op, object_size=object_size,
                       concurrency=concurrency, duration_s=duration_s, error=error,
                       stopped=stopped, prefilled_by=prefilled_by, nulls=base.nulls | {'error'})

    @property
    def open_loop(self) -> bool:
        return self.mode == 'open'

    def without_histograms(self) -> 'WorkloadResult':
        """Without its histograms, nor its repeats', nor any in the parts kept as JSON."""
        return replace(
            self, histogram=None, ttfb_histogram=None,
            by_op=strip_histograms(self.by_op), server=strip_histograms(self.server),
            repeats=None if self.repeats is None else [r.without_histograms()
                                                       for r in self.repeats],
            extra=strip_histograms(self.extra), nulls=self.nulls - frozenset(HISTOGRAMS))

    def without_per_repeat_parts(self) -> 'WorkloadResult':
        """Without what does not add up over repeats (per-second series, samples, ...)."""
        cleared = frozenset({'per_second', 'error_samples', 'by_op', 'server', 'hosts'})
        return replace(self, per_second=None, error_samples=None, by_op=None, server=None,
                       hosts=None, nulls=self.nulls - cleared)

    def without_error(self) -> 'WorkloadResult':
        return replace(self, error=None, nulls=self.nulls - {'error'})

    def without_figures(self) -> 'WorkloadResult':
        return replace(self, figures=Figures())

    def seconds(self) -> List[Second]:
        """Its per-second series, else its first repeat's (for charts)."""
        if self.per_second:
            return self.per_second
        if self.repeats:
            return self.repeats[0].per_second or []
        return []


# -- variants, comparison, findings, run ---------------------------------------------------


@dataclass
class Change:
    """One change a variant made to the cluster, and whether it was put back."""
    kind: Optional[str] = None
    target: Optional[str] = None
    state: Optional[str] = None
    error: Optional[str] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'error'}), repr=False, compare=False)


@dataclass
class VariantResult:
    """One variant of a run: its settings, what its workloads measured, what it changed."""
    name: Optional[str] = None
    settings: Optional[Doc] = None
    error: Optional[str] = None
    workloads: List[WorkloadResult] = field(default_factory=list)
    changes: Optional[List[Change]] = None
    #: how the workloads reached the cluster (settings.base.ClientSide, as JSON)
    client: Optional[Doc] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'error', 'client'}), repr=False,
                                  compare=False)

    def workload(self, name: Optional[str]) -> Optional[WorkloadResult]:
        return next((w for w in self.workloads if w.name == name), None)

    def usable(self) -> Dict[str, WorkloadResult]:
        """Its workloads that measured something, by name (none if the variant failed)."""
        if self.error:
            return {}
        return {w.name: w for w in self.workloads if w.name is not None and not w.error}


@dataclass
class Noise:
    """Whether a change is outside the noise the run measured (results.compare)."""
    significant: bool = False
    noise_pct: Optional[float] = None
    method: Optional[str] = None
    tested: Optional[str] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'noise_pct', 'method', 'tested'}),
                                  repr=False, compare=False)


#: the floor of a run whose restart noise nobody measured: a guess, and nothing marked
UNTESTED_FLOOR_PCT = 50.0
#: an interval's ``extra`` key: where its floor came from
FLOOR_SOURCE = 'floor_source'
UNTESTED = 'untested'


@dataclass
class Interval:
    """A figure's % change, its interval and whether it is significant (results.compare).

    ``noise_pct``: half the 95 % interval's width from the noise measured
    inside the workloads (None: not measured for this figure); ``floor_pct``:
    the smallest change taken as real (95 %) when that noise leaves out the
    noise between two applications of the same settings (None: not applied).
    ``low`` and ``high``: the change plus or minus the larger of the two,
    both at the confidence ``level`` the figures compared with it allow (95 %
    for a figure alone; records before it have none and are at 95 %);
    ``significant`` when the interval leaves out 0. ``method``: where the
    noise came from (repeats, per-second, histogram, floor).
    """
    low: Optional[float] = None
    high: Optional[float] = None
    noise_pct: Optional[float] = None
    floor_pct: Optional[float] = None
    method: Optional[str] = None
    significant: bool = False
    #: the confidence level of low and high (results.significance.discovery_level)
    level: Optional[float] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    def half_width(self) -> Optional[float]:
        if self.low is None or self.high is None:
            return None
        return round((self.high - self.low) / 2.0, 2)


@dataclass
class Comparison:
    """One workload of one variant against the same of the baseline (or of another run).

    ``changes`` has the % change of each compared figure, by the figure's
    ``change`` name (FIGURES); None when it cannot be computed.
    """
    variant: Optional[str] = None
    workload: Optional[str] = None
    run_a: Optional[str] = None
    run_b: Optional[str] = None
    changes: Dict[str, Optional[float]] = field(default_factory=dict,
                                                metadata=flat_keys(lambda: CHANGE_NAMES))
    noise: Noise = field(default_factory=Noise, metadata=FLAT)
    #: per compared figure (by its ``change`` name); none in rows stored before them
    intervals: Dict[str, Interval] = field(default_factory=dict, metadata=OMIT_EMPTY)
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'variant', 'workload'}), repr=False,
                                  compare=False)

    def change(self, figure: 'Figure') -> Optional[float]:
        return self.changes.get(figure.change) if figure.change else None

    def interval(self, figure: 'Figure') -> Optional[Interval]:
        return self.intervals.get(figure.change) if figure.change else None


@dataclass
class Position:
    """Where a running run is: the variant and the workload it measures."""
    variant: Optional[str] = None
    workload: Optional[str] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'workload'}), repr=False, compare=False)


@dataclass
class Calibration:
    """What a calibrate run found: the floor per figure (by its ``change`` name), in %."""
    run_id: Optional[str] = None
    finished: Optional[float] = None
    floors: Dict[str, float] = field(default_factory=dict)
    repeats: int = 0


@dataclass
class Run:
    """A run of a profile: every variant's results and their comparison with the baseline."""
    run_id: Optional[str] = None
    profile: Optional[str] = None
    state: Optional[str] = None
    ceph_version: Optional[str] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    baseline: Optional[str] = None
    error: Optional[str] = None
    #: the profile as run (profiles.Profile, as JSON)
    definition: Optional[Doc] = None
    progress: Optional[str] = None
    fraction: Optional[float] = None
    #: what a calibrate run found: the smallest change per figure (results.calibration)
    calibration: Optional['Calibration'] = None
    variants: List[VariantResult] = field(default_factory=list)
    #: every workload of every variant against the baseline; while the run runs, those
    #: measured so far (results.compare.comparison, when the engine saves its progress)
    comparison: List[Comparison] = field(default_factory=list)
    current: Optional[Position] = None
    findings: Optional[List[Finding]] = None
    #: the run's own changes, put back at its end (its temporary S3 user); None before
    changes: Optional[List[Change]] = None
    #: OSD daemons the run restarted, applying settings and putting them back (None:
    #: a record from before they were counted)
    osd_restarts: Optional[int] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'finished', 'error', 'current'}),
                                  repr=False, compare=False)

    def summary(self) -> 'RunSummary':
        return RunSummary(run_id=self.run_id, profile=self.profile, state=self.state,
                          started=self.started, finished=self.finished,
                          baseline=self.baseline, variants=[v.name for v in self.variants])

    def baseline_variant(self) -> Optional[VariantResult]:
        return next((v for v in self.variants if v.name == self.baseline), None)

    def workload_names(self) -> List[Optional[str]]:
        """Every workload's name, in the order the variants first measured them."""
        names: List[Optional[str]] = []
        for variant in self.variants:
            for workload in variant.workloads:
                if workload.name not in names:
                    names.append(workload.name)
        return names


@dataclass
class RunSummary:
    """What `results ls` shows of a run (the store keeps it in the run's index)."""
    run_id: Optional[str] = None
    profile: Optional[str] = None
    state: Optional[str] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    baseline: Optional[str] = None
    variants: List[Optional[str]] = field(default_factory=list)


# -- loads -------------------------------------------------------------------------------------

@dataclass
class AgentState:
    """Where one agent of a load is (waiting, started, done, failed) and how it failed."""
    state: Optional[str] = None
    error: Optional[str] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'error'}), repr=False, compare=False)


@dataclass
class LoadRecord:
    """A `load`: what it was asked, where it went, what its agents measured.

    ``request``: the command's words (op, size, concurrency, ...); ``result``:
    the load generator's figures, added over the agents (loadgen's result).
    """
    load_id: Optional[str] = None
    state: Optional[str] = None
    endpoint: Optional[str] = None
    targets: Optional[List[str]] = None
    request: Optional[Doc] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    agents: Dict[str, AgentState] = field(default_factory=dict)
    result: Optional[WorkloadResult] = None
    error: Optional[str] = None
    findings: Optional[List[Finding]] = None
    #: what removing its buckets found (workload_runs.AgentWorkloads.run_once)
    cleanup: Optional[Doc] = None
    stopped: Optional[str] = None
    clocks: Optional[Doc] = None
    #: while it runs: the agents' figures of the second just measured
    live: Optional[Doc] = None
    #: kept without histograms (then series), in loads stored before records were chunked
    trimmed: Optional[bool] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'finished', 'result', 'error'}),
                                  repr=False, compare=False)

    def summary(self) -> 'LoadSummary':
        return LoadSummary(load_id=self.load_id, state=self.state, started=self.started,
                           finished=self.finished, endpoint=self.endpoint, error=self.error)


@dataclass
class LoadSummary:
    """What `load ls` shows of a load (the store keeps it in the load's index)."""
    load_id: Optional[str] = None
    state: Optional[str] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    endpoint: Optional[str] = None
    error: Optional[str] = None


# -- the figures that reports show -------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A figure of a workload as the reports show it.

    ``change``: the name of its % change in a comparison row (None: not
    compared). ``column``: its header in the text table (None: only in the
    CSV); ``label`` heads it in Markdown, the panel and charts. ``chart``:
    the title of its bar chart in the panel. ``tested``: the noise test
    (OPS_TEST or LATENCY_TEST) whose verdict marks its change as significant.
    ``optional``: in the tables only when a workload has it (HAProxy's
    figures: only when an ingress was in the run). ``absolute``: a row of the seeds
    layout whatever its column, its value shown in every variant with no % change (a mean
    per daemon, whose change is the sum's); the text tables show these under the table
    (results.host_report).
    """
    name: str
    unit: str
    label: str
    better: Optional[str]
    read: Callable[[Figures], Optional[float]]
    change: Optional[str] = None
    column: Optional[str] = None
    chart: Optional[str] = None
    tested: Optional[str] = None
    optional: bool = False
    absolute: bool = False

    def of(self, workload: WorkloadResult) -> Optional[float]:
        return self.read(workload.figures)


def _latency(pick: Callable[[LatencyFigures], Optional[float]]
             ) -> Callable[[Figures], Optional[float]]:
    return lambda f: None if f.latency_ms is None else pick(f.latency_ms)


def _rgw(pick: Callable[[ServerFigures], Optional[float]]
         ) -> Callable[[Figures], Optional[float]]:
    return lambda f: None if f.rgw is None else pick(f.rgw)


def _haproxy(pick: Callable[[ServerFigures], Optional[float]]
             ) -> Callable[[Figures], Optional[float]]:
    return lambda f: None if f.haproxy is None else pick(f.haproxy)


def _osd(pick: Callable[[ServerFigures], Optional[float]]
         ) -> Callable[[Figures], Optional[float]]:
    return lambda f: None if f.osd is None else pick(f.osd)


def _cpu_each(s: ServerFigures) -> Optional[float]:
    return s.per_daemon_mean('cpu_cores')


def _rss_each(s: ServerFigures) -> Optional[float]:
    return s.per_daemon_mean('rss_mib')


#: every figure the comparison, the tables, the CSV and the panel's charts show, in their order
FIGURES: Tuple[Figure, ...] = (
    Figure('ops', 'ops', 'Operations', HIGHER, lambda f: f.ops),
    Figure('bytes', 'B', 'Bytes', HIGHER, lambda f: f.bytes),
    Figure('errors', 'errors', 'Errors', LOWER, lambda f: f.errors),
    Figure('throughput_mib_s', 'MiB/s', 'Throughput MiB/s', HIGHER,
           lambda f: f.throughput_mib_s, change='throughput_pct', column='MiB/s',
           chart='Throughput', tested=OPS_TEST),
    Figure('ops_per_s', 'ops/s', 'Ops/s', HIGHER, lambda f: f.ops_per_s, change='ops_pct',
           column='OPS/s', tested=OPS_TEST),
    Figure('latency_mean_ms', 'ms', 'Latency mean ms', LOWER, _latency(lambda lat: lat.mean),
           change='latency_mean_pct', column='MEAN ms', tested=LATENCY_TEST),
    Figure('latency_p50_ms', 'ms', 'Latency p50 ms', LOWER, _latency(lambda lat: lat.p50),
           change='latency_p50_pct', chart='Latency p50'),
    Figure('latency_p90_ms', 'ms', 'Latency p90 ms', LOWER, _latency(lambda lat: lat.p90)),
    Figure('latency_p99_ms', 'ms', 'Latency p99 ms', LOWER, _latency(lambda lat: lat.p99),
           change='latency_p99_pct', column='P99 ms', chart='Latency p99'),
    Figure('latency_p999_ms', 'ms', 'Latency p99.9 ms', LOWER, _latency(lambda lat: lat.p999)),
    Figure('latency_max_ms', 'ms', 'Latency max ms', LOWER, _latency(lambda lat: lat.max)),
    Figure('rgw_daemons', 'daemons', 'RGW daemons', None, _rgw(lambda s: s.daemons)),
    Figure('rgw_cpu_cores', 'cores', 'RGW CPU cores', LOWER, _rgw(lambda s: s.cpu_cores),
           change='rgw_cpu_pct', column='RGW CPU', chart='RGW CPU'),
    Figure('rgw_cpu_cores_mean', 'cores', 'RGW CPU cores per daemon', LOWER, _rgw(_cpu_each),
           absolute=True),
    Figure('rgw_rss_mib', 'MiB', 'RGW RSS MiB', LOWER, _rgw(lambda s: s.rss_mib),
           change='rgw_rss_pct', column='RGW MiB', chart='RGW memory'),
    Figure('rgw_rss_mib_mean', 'MiB', 'RGW RSS MiB per daemon', LOWER, _rgw(_rss_each),
           absolute=True),
    Figure('haproxy_daemons', 'daemons', 'HAProxy daemons', None,
           _haproxy(lambda s: s.daemons), optional=True),
    Figure('haproxy_cpu_cores', 'cores', 'HAProxy CPU cores', LOWER,
           _haproxy(lambda s: s.cpu_cores), change='haproxy_cpu_pct', column='HAP CPU',
           optional=True),
    Figure('haproxy_cpu_cores_mean', 'cores', 'HAProxy CPU cores per daemon', LOWER,
           _haproxy(_cpu_each), optional=True, absolute=True),
    Figure('haproxy_rss_mib', 'MiB', 'HAProxy RSS MiB', LOWER, _haproxy(lambda s: s.rss_mib),
           change='haproxy_rss_pct', column='HAP MiB', optional=True),
    Figure('haproxy_rss_mib_mean', 'MiB', 'HAProxy RSS MiB per daemon', LOWER,
           _haproxy(_rss_each), optional=True, absolute=True),
    Figure('osd_daemons', 'daemons', 'OSD daemons (sampled hosts)', None,
           _osd(lambda s: s.daemons), optional=True),
    Figure('osd_cpu_cores', 'cores', 'OSD CPU cores (sampled hosts)', LOWER,
           _osd(lambda s: s.cpu_cores), optional=True, absolute=True),
    Figure('osd_cpu_cores_mean', 'cores', 'OSD CPU cores per daemon', LOWER, _osd(_cpu_each),
           optional=True, absolute=True),
)
#: the figures a comparison row has a % change of
COMPARED: Tuple[Figure, ...] = tuple(f for f in FIGURES if f.change)
#: the figures of the text, Markdown and panel tables in every run (see `columns`)
COLUMNS: Tuple[Figure, ...] = tuple(f for f in FIGURES if f.column and not f.optional)
#: the figures of the panel's bar charts
CHARTED: Tuple[Figure, ...] = tuple(f for f in FIGURES if f.chart)
CHANGE_NAMES: Tuple[str, ...] = tuple(str(f.change) for f in COMPARED)


def present(workloads: Iterable[WorkloadResult],
            figures: Sequence[Figure] = FIGURES) -> Tuple[Figure, ...]:
    """Of ``figures``, those every run has and the optional ones a workload here has."""
    entries = list(workloads)
    return tuple(f for f in figures
                 if not f.optional or any(f.of(w) is not None for w in entries))


def all_workloads(run: Run) -> List[WorkloadResult]:
    return [w for variant in run.variants for w in variant.workloads]


def columns(run: Run) -> Tuple[Figure, ...]:
    """The columns of a run's tables: COLUMNS, and HAProxy's when an ingress was in the run."""
    return present(all_workloads(run), tuple(f for f in FIGURES if f.column))


def compared_columns(rows: Iterable[Comparison]) -> Tuple[Figure, ...]:
    """The columns of a table of comparison rows: an optional one when a row has its change."""
    found = list(rows)
    return tuple(f for f in FIGURES if f.column and (
        not f.optional or any(f.change in r.changes for r in found)))


def untested(row: 'Comparison') -> bool:
    """Whether a row's floors stood in for restart noise nobody measured."""
    return any(i.extra.get(FLOOR_SOURCE) == UNTESTED for i in row.intervals.values())
