"""The run record, typed: a run, its variants, what each workload measured, findings.

`Run.to_dict()` is the JSON the store keeps and `results export` prints (the
contract in DESIGN.md); `Run.from_dict()` reads it back, as any version of
the module wrote it. Reports, the comparison and the panel read a result only
through these classes and through FIGURES, the one table of the figures they
show.

Round trip: ``from_dict(d).to_dict() == d`` for every record the module has
stored. A key a class does not know is kept as it came (``extra``). A field
that is None is left out of the JSON unless it is in the object's ``nulls``:
an object read from JSON has there the keys that came as null, and those of
its class's NULLABLE that came at all; an object made here has its class's
NULLABLE (e.g. a workload's ``error``, which the engine always writes).
"""
from dataclasses import dataclass, field, replace
from typing import (Any, Callable, ClassVar, Dict, FrozenSet, Iterable, List, Mapping,
                    Optional, Sequence, Tuple, Union)

from ..checks.finding import Finding

HIGHER, LOWER = 'higher', 'lower'
#: what the noise test of a comparison measured (`Noise.tested`)
OPS_TEST, LATENCY_TEST = 'ops_per_s', 'latency_mean'
HISTOGRAMS = ('histogram', 'ttfb_histogram')
#: a latency histogram in the load generator's JSON form (loadgen.histogram.Histogram)
HistogramDoc = Dict[str, Any]
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


def _nulls(data: Mapping[str, Any], keys: Iterable[str],
           nullable: FrozenSet[str]) -> FrozenSet[str]:
    return frozenset(k for k in keys if k in data and (data[k] is None or k in nullable))


def _extra(data: Mapping[str, Any], known: Iterable[str]) -> Doc:
    known = frozenset(known)
    return {k: v for k, v in data.items() if k not in known}


def _write(items: Iterable[Tuple[str, Any]], nulls: FrozenSet[str], extra: Doc) -> Doc:
    out = {k: v for k, v in items if v is not None or k in nulls}
    out.update(extra)
    return out


def _list(value: Any) -> List[Any]:
    return list(value) if isinstance(value, list) else []


def _dicts(value: Any) -> List[Mapping[str, Any]]:
    return [v for v in _list(value) if isinstance(v, Mapping)]


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

    KEYS: ClassVar[Tuple[str, ...]] = ('mean', 'p50', 'p90', 'p99', 'p999', 'min', 'max')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'LatencyFigures':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, frozenset()))


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

    KEYS: ClassVar[Tuple[str, ...]] = ('daemon', 'host', 'cpu_cores', 'rss_mib', 'rss_mib_max')
    NUMBERS: ClassVar[Tuple[str, ...]] = ('cpu_cores', 'rss_mib', 'rss_mib_max')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'DaemonFigures':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, frozenset()))


@dataclass
class ServerFigures:
    """CPU and memory of the RGW (or HAProxy) daemons while a workload ran, summed;
    each daemon's own under ``per_daemon`` (runs before it have none)."""
    daemons: Optional[int] = None
    cpu_cores: Optional[float] = None
    rss_mib: Optional[float] = None
    rss_mib_max: Optional[float] = None
    per_daemon: Optional[List[DaemonFigures]] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    SUMS: ClassVar[Tuple[str, ...]] = ('daemons', 'cpu_cores', 'rss_mib', 'rss_mib_max')
    KEYS: ClassVar[Tuple[str, ...]] = SUMS + ('per_daemon',)

    def to_dict(self) -> Doc:
        items: List[Tuple[str, Any]] = [(k, getattr(self, k)) for k in self.SUMS]
        items.append(('per_daemon', None if self.per_daemon is None
                      else [d.to_dict() for d in self.per_daemon]))
        return _write(items, self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'ServerFigures':
        values: Dict[str, Any] = {k: data[k] for k in cls.SUMS if k in data}
        if isinstance(data.get('per_daemon'), list):
            values['per_daemon'] = [DaemonFigures.from_dict(d)
                                    for d in _dicts(data['per_daemon'])]
        return cls(**values, extra=_extra(data, cls.KEYS),
                   nulls=_nulls(data, cls.KEYS, frozenset()))

    @staticmethod
    def combine_daemons(docs: Sequence[Mapping[str, Any]],
                        mean: Callable[[List[Any]], Tuple[Any, Any]]) -> Tuple[Any, Any]:
        """Each daemon's figures over several repeats (those it was found in): means, spread."""
        lists = [d.get('per_daemon') for d in docs if isinstance(d.get('per_daemon'), list)]
        if not lists:
            return None, None
        by_daemon: Dict[str, List[Mapping[str, Any]]] = {}
        for found in lists:
            for entry in _dicts(found):
                by_daemon.setdefault(str(entry.get('daemon')), []).append(entry)
        means, spread = [], []
        for name in sorted(by_daemon):
            entries = by_daemon[name]
            average = {'daemon': name, 'host': entries[0].get('host')}
            deviation = dict(average)
            for key in DaemonFigures.NUMBERS:
                average[key], deviation[key] = mean([e.get(key) for e in entries])
            means.append(average)
            spread.append(deviation)
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
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset(), repr=False, compare=False)

    NUMBERS: ClassVar[Tuple[str, ...]] = (
        'ops', 'bytes', 'errors', 'throughput_mib_s', 'ops_per_s', 'elapsed_s', 'client_cpu_s',
        'client_cpu_ms_per_op', 'client_wait_s')
    LATENCIES: ClassVar[Tuple[str, ...]] = ('latency_ms', 'ttfb_ms')
    SERVERS: ClassVar[Tuple[str, ...]] = ('rgw', 'haproxy')
    KEYS: ClassVar[Tuple[str, ...]] = NUMBERS + LATENCIES + SERVERS

    def to_dict(self) -> Doc:
        items: List[Tuple[str, Any]] = [(k, getattr(self, k)) for k in self.NUMBERS]
        for key in self.LATENCIES + self.SERVERS:
            value = getattr(self, key)
            items.append((key, None if value is None else value.to_dict()))
        return _write(items, self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Figures':
        values: Dict[str, Any] = {k: data[k] for k in cls.NUMBERS if k in data}
        for key in cls.LATENCIES:
            if isinstance(data.get(key), Mapping):
                values[key] = LatencyFigures.from_dict(data[key])
        for key in cls.SERVERS:
            if isinstance(data.get(key), Mapping):
                values[key] = ServerFigures.from_dict(data[key])
        return cls(**values, extra=_extra(data, cls.KEYS),
                   nulls=_nulls(data, cls.KEYS, frozenset()))

    @classmethod
    def combine(cls, items: Sequence['Figures'],
                mean: Callable[[List[Any]], Tuple[Any, Any]]) -> Tuple['Figures', 'Figures']:
        """Figures of several repeats, one by one: (their means, their spread).

        ``mean`` gives both for the values of one figure. The figures are
        those the first item has (numbers and every part of a nested one).
        """
        docs = [item.to_dict() for item in items]
        first = docs[0]
        merged: Doc = {}
        spread: Doc = {}
        for key in cls.NUMBERS:
            if key in first:
                merged[key], spread[key] = mean([d.get(key) for d in docs])
        for key in cls.LATENCIES + cls.SERVERS:
            if not isinstance(first.get(key), dict):
                continue
            merged[key], spread[key] = {}, {}
            for sub in first[key]:
                if key in cls.SERVERS and sub == 'per_daemon':
                    merged[key][sub], spread[key][sub] = ServerFigures.combine_daemons(
                        [d.get(key) or {} for d in docs], mean)
                    continue
                merged[key][sub], spread[key][sub] = mean([(d.get(key) or {}).get(sub)
                                                           for d in docs])
        return cls.from_dict(merged), cls.from_dict(spread)


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

    KEYS: ClassVar[Tuple[str, ...]] = ('t', 'ops', 'bytes', 'errors', 'lat_mean_ms')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Second':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, frozenset()))


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

    KEYS: ClassVar[Tuple[str, ...]] = ('url', 'workers', 'ops', 'errors')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'TargetFigures':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, frozenset()))


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
    #: the variant whose prefill a reading workload of a run read (its own when it wrote it)
    prefilled_by: Optional[str] = None
    figures: Figures = field(default_factory=Figures)
    histogram: Optional[HistogramDoc] = None
    ttfb_histogram: Optional[HistogramDoc] = None
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
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'error'}), repr=False, compare=False)

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'error'})
    #: what the workload was (beyond its name, op and size), as the load generator echoes it
    SHAPE: ClassVar[Tuple[str, ...]] = ('mode', 'rate', 'objects', 'working_set_bytes', 'range')
    KEYS: ClassVar[Tuple[str, ...]] = (
        'name', 'op', 'object_size', 'concurrency', 'duration_s') + SHAPE + (
        'histogram', 'ttfb_histogram', 'per_second', 'error_samples', 'by_op', 'server',
        'hosts', 'spread', 'repeats', 'error', 'stopped', 'targets', 'prefilled_by')
    #: what a run keeps of a load generator's result, for each repeat
    KEPT: ClassVar[Tuple[str, ...]] = (
        'ops', 'bytes', 'errors', 'throughput_mib_s', 'ops_per_s', 'latency_ms', 'rgw',
        'ttfb_ms', 'client_cpu_s', 'client_wait_s', 'elapsed_s', 'per_second', 'histogram',
        'error_samples', 'haproxy', 'targets') + SHAPE

    def to_dict(self) -> Doc:
        items: List[Tuple[str, Any]] = [(k, getattr(self, k)) for k in (
            'name', 'op', 'object_size', 'concurrency', 'duration_s') + self.SHAPE]
        items += list(self.figures.to_dict().items())
        items += [('histogram', self.histogram), ('ttfb_histogram', self.ttfb_histogram),
                  ('per_second', None if self.per_second is None
                   else [s.to_dict() for s in self.per_second]),
                  ('error_samples', self.error_samples), ('by_op', self.by_op),
                  ('server', self.server), ('hosts', self.hosts),
                  ('spread', None if self.spread is None else self.spread.to_dict()),
                  ('repeats', None if self.repeats is None
                   else [r.to_dict() for r in self.repeats]),
                  ('error', self.error), ('stopped', self.stopped),
                  ('targets', None if self.targets is None
                   else [t.to_dict() for t in self.targets]),
                  ('prefilled_by', self.prefilled_by)]
        return _write(items, self.nulls | self.figures.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'WorkloadResult':
        values: Dict[str, Any] = {k: data[k] for k in (
            'name', 'op', 'object_size', 'concurrency', 'duration_s') + cls.SHAPE + (
            'histogram', 'ttfb_histogram', 'error_samples', 'by_op', 'server', 'hosts',
            'error', 'stopped', 'prefilled_by') if k in data}
        if isinstance(data.get('per_second'), list):
            values['per_second'] = [Second.from_dict(s) for s in _dicts(data['per_second'])]
        if isinstance(data.get('spread'), Mapping):
            values['spread'] = Figures.from_dict(data['spread'])
        if isinstance(data.get('repeats'), list):
            values['repeats'] = [cls.from_dict(r) for r in _dicts(data['repeats'])]
        if isinstance(data.get('targets'), list):
            values['targets'] = [TargetFigures.from_dict(t) for t in _dicts(data['targets'])]
        figures = Figures.from_dict({k: data[k] for k in Figures.KEYS if k in data})
        return cls(**values, figures=figures, extra=_extra(data, cls.KEYS + Figures.KEYS),
                   nulls=_nulls(data, cls.KEYS, cls.NULLABLE))

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> 'WorkloadResult':
        """One repeat, from the load generator's result: the parts a run keeps (what the
        workload was only where it says something: no null rate for a closed loop). A
        repeat in whose window no request ended measured nothing: it has an error, so
        that its throughput of 0 and its missing latency enter no mean and no floor."""
        kept = cls.from_dict({k: result[k] for k in cls.KEPT if k in result and (
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
        return WorkloadResult.from_dict(strip_histograms(self.to_dict()))

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

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'error'})
    KEYS: ClassVar[Tuple[str, ...]] = ('kind', 'target', 'state', 'error')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Change':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, cls.NULLABLE))


@dataclass
class VariantResult:
    """One variant of a run: its settings, what its workloads measured, what it changed."""
    name: Optional[str] = None
    settings: Optional[Doc] = None
    error: Optional[str] = None
    workloads: List[WorkloadResult] = field(default_factory=list)
    changes: Optional[List[Change]] = None
    #: how the workloads reached the cluster (settings.base.ClientSide.to_dict)
    client: Optional[Doc] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'error', 'client'}), repr=False,
                                  compare=False)

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'error', 'client'})
    KEYS: ClassVar[Tuple[str, ...]] = ('name', 'settings', 'error', 'workloads', 'changes',
                                       'client')

    def to_dict(self) -> Doc:
        return _write([('name', self.name), ('settings', self.settings), ('error', self.error),
                       ('workloads', [w.to_dict() for w in self.workloads]),
                       ('changes', None if self.changes is None
                        else [c.to_dict() for c in self.changes]),
                       ('client', self.client)], self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'VariantResult':
        values: Dict[str, Any] = {k: data[k] for k in ('name', 'settings', 'error', 'client')
                                  if k in data}
        if isinstance(data.get('changes'), list):
            values['changes'] = [Change.from_dict(c) for c in _dicts(data['changes'])]
        return cls(**values,
                   workloads=[WorkloadResult.from_dict(w) for w in _dicts(data.get('workloads'))],
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, cls.NULLABLE))

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

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'noise_pct', 'method', 'tested'})
    KEYS: ClassVar[Tuple[str, ...]] = ('significant', 'noise_pct', 'method', 'tested')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Noise':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, cls.NULLABLE))


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

    KEYS: ClassVar[Tuple[str, ...]] = ('low', 'high', 'noise_pct', 'floor_pct', 'method',
                                       'significant', 'level')

    def half_width(self) -> Optional[float]:
        if self.low is None or self.high is None:
            return None
        return round((self.high - self.low) / 2.0, 2)

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Interval':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, frozenset()))


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
    changes: Dict[str, Optional[float]] = field(default_factory=dict)
    noise: Noise = field(default_factory=Noise)
    #: per compared figure (by its ``change`` name); none in rows stored before them
    intervals: Dict[str, Interval] = field(default_factory=dict)
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'variant', 'workload'}), repr=False,
                                  compare=False)

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'variant', 'workload'})
    KEYS: ClassVar[Tuple[str, ...]] = ('variant', 'workload', 'run_a', 'run_b')

    def change(self, figure: 'Figure') -> Optional[float]:
        return self.changes.get(figure.change) if figure.change else None

    def interval(self, figure: 'Figure') -> Optional[Interval]:
        return self.intervals.get(figure.change) if figure.change else None

    def to_dict(self) -> Doc:
        out = _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, {})
        out.update(self.changes)
        out.update(self.noise.to_dict())
        if self.intervals:
            out['intervals'] = {k: v.to_dict() for k, v in self.intervals.items()}
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Comparison':
        changes = {k: data[k] for k in CHANGE_NAMES if k in data}
        noise = Noise.from_dict({k: data[k] for k in Noise.KEYS if k in data})
        found = data.get('intervals')
        intervals = {str(k): Interval.from_dict(v) for k, v in found.items()
                     if isinstance(v, Mapping)} if isinstance(found, Mapping) else {}
        return cls(**{k: data[k] for k in cls.KEYS if k in data}, changes=changes, noise=noise,
                   intervals=intervals,
                   extra=_extra(data, cls.KEYS + CHANGE_NAMES + Noise.KEYS + ('intervals',)),
                   nulls=_nulls(data, cls.KEYS, cls.NULLABLE))


def as_comparison(row: Union[Comparison, Mapping[str, Any]]) -> Comparison:
    return row if isinstance(row, Comparison) else Comparison.from_dict(row)


@dataclass
class Position:
    """Where a running run is: the variant and the workload it measures."""
    variant: Optional[str] = None
    workload: Optional[str] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'workload'}), repr=False, compare=False)

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'workload'})
    KEYS: ClassVar[Tuple[str, ...]] = ('variant', 'workload')

    def to_dict(self) -> Doc:
        return _write(((k, getattr(self, k)) for k in self.KEYS), self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Position':
        return cls(**{k: data[k] for k in cls.KEYS if k in data},
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, cls.NULLABLE))


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
    #: the profile as run (profiles.Profile.to_dict)
    definition: Optional[Doc] = None
    variants: List[VariantResult] = field(default_factory=list)
    comparison: List[Comparison] = field(default_factory=list)
    progress: Optional[str] = None
    fraction: Optional[float] = None
    current: Optional[Position] = None
    findings: Optional[List[Finding]] = None
    #: what a calibrate run found: the smallest change per figure (results.calibration)
    calibration: Optional[Doc] = None
    #: the run's own changes, put back at its end (its temporary S3 user); None before
    changes: Optional[List[Change]] = None
    extra: Doc = field(default_factory=dict)
    nulls: FrozenSet[str] = field(default=frozenset({'finished', 'error', 'current'}),
                                  repr=False, compare=False)

    NULLABLE: ClassVar[FrozenSet[str]] = frozenset({'finished', 'error', 'current'})
    SCALARS: ClassVar[Tuple[str, ...]] = (
        'run_id', 'profile', 'state', 'ceph_version', 'started', 'finished', 'baseline', 'error',
        'definition', 'progress', 'fraction', 'calibration')
    KEYS: ClassVar[Tuple[str, ...]] = SCALARS + ('variants', 'comparison', 'current',
                                                 'findings', 'changes')

    def to_dict(self) -> Doc:
        items: List[Tuple[str, Any]] = [(k, getattr(self, k)) for k in self.SCALARS]
        items += [('variants', [v.to_dict() for v in self.variants]),
                  ('comparison', [c.to_dict() for c in self.comparison]),
                  ('current', None if self.current is None else self.current.to_dict()),
                  ('findings', None if self.findings is None
                   else [f.to_dict() for f in self.findings])]
        if self.changes is not None:
            items.append(('changes', [c.to_dict() for c in self.changes]))
        return _write(items, self.nulls, self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'Run':
        values: Dict[str, Any] = {k: data[k] for k in cls.SCALARS if k in data}
        if isinstance(data.get('current'), Mapping):
            values['current'] = Position.from_dict(data['current'])
        if isinstance(data.get('findings'), list):
            values['findings'] = [Finding.from_dict(f) for f in _dicts(data['findings'])]
        if isinstance(data.get('changes'), list):
            values['changes'] = [Change.from_dict(c) for c in _dicts(data['changes'])]
        return cls(**values,
                   variants=[VariantResult.from_dict(v) for v in _dicts(data.get('variants'))],
                   comparison=[Comparison.from_dict(c) for c in _dicts(data.get('comparison'))],
                   extra=_extra(data, cls.KEYS), nulls=_nulls(data, cls.KEYS, cls.NULLABLE))

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

    SCALARS: ClassVar[Tuple[str, ...]] = ('run_id', 'profile', 'state', 'started', 'finished',
                                          'baseline')

    def to_dict(self) -> Doc:
        out = {k: getattr(self, k) for k in self.SCALARS}
        out['variants'] = list(self.variants)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'RunSummary':
        return cls(**{k: data.get(k) for k in cls.SCALARS}, variants=_list(data.get('variants')))


def as_summary(summary: Union[RunSummary, Mapping[str, Any]]) -> RunSummary:
    return summary if isinstance(summary, RunSummary) else RunSummary.from_dict(summary)


RunLike = Union[Run, Mapping[str, Any]]


def as_run(record: RunLike) -> Run:
    """A Run, from itself or from its JSON (as `ResultStore.load` gives it)."""
    return record if isinstance(record, Run) else Run.from_dict(record)


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
    figures: only when an ingress was in the run).
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
    Figure('rgw_rss_mib', 'MiB', 'RGW RSS MiB', LOWER, _rgw(lambda s: s.rss_mib),
           change='rgw_rss_pct', column='RGW MiB', chart='RGW memory'),
    Figure('haproxy_daemons', 'daemons', 'HAProxy daemons', None,
           _haproxy(lambda s: s.daemons), optional=True),
    Figure('haproxy_cpu_cores', 'cores', 'HAProxy CPU cores', LOWER,
           _haproxy(lambda s: s.cpu_cores), change='haproxy_cpu_pct', column='HAP CPU',
           optional=True),
    Figure('haproxy_rss_mib', 'MiB', 'HAProxy RSS MiB', LOWER, _haproxy(lambda s: s.rss_mib),
           change='haproxy_rss_pct', column='HAP MiB', optional=True),
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
