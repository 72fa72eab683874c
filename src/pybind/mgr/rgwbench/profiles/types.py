"""The profile types: a profile, its variants and its workloads, frozen."""
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple, Union

from ..errors import NotFound
from ..loadgen.workload import Job
from ..settings.targets import Target

DEFAULT_CONCURRENCY = 16
DEFAULT_DURATION_S = 60.0
DEFAULT_WARMUP_S = 5.0
#: engine processes of each agent: 0, one per core of its host (at most the module
#: option agent_processes_max and the agent's share of the concurrency), so that an
#: agent is not the limit wherever its host has cores to spare
DEFAULT_PROCESSES = 0
#: how repeats run: each variant's one after another in one application of its
#: settings, or round by round (A B A B ...), each repeat a fresh application
SEQUENTIAL, INTERLEAVED = 'sequential', 'interleaved'
ORDERS = (SEQUENTIAL, INTERLEAVED)


def plain_seconds(value: float) -> Union[int, float]:
    """Seconds as a document shows them: 60.0 -> 60, 2.5 -> 2.5."""
    return int(value) if float(value).is_integer() else value


def format_rate(rate: float) -> str:
    """Operations a second as names and tables show them: 200.0 -> 200, 12.5 -> 12.5."""
    return '%g' % rate


@dataclass(frozen=True)
class Workload:
    """One load every variant runs: the engine's Job fields a profile chooses.

    Fields left None are the engine's defaults (closed loop, its prefill size,
    its multipart threshold and part size, whole-object GETs).
    """
    name: str
    op: str = 'put'
    mix: Dict[str, float] = field(default_factory=dict)
    size: str = '4KiB'
    concurrency: int = DEFAULT_CONCURRENCY
    duration_s: float = DEFAULT_DURATION_S
    warmup_s: float = DEFAULT_WARMUP_S
    processes: int = DEFAULT_PROCESSES
    buckets: int = 1
    # The same for every variant of a run: RGW checks a signed body's SHA-256, which
    # would weigh on the variants that sign it and not on the others.
    payload_signing: str = 'unsigned'
    # Open loop: operations a second over all agents together (the engine's rate is
    # per agent: each gets its share); latency counts from each request's due time.
    rate: Optional[float] = None
    # The working set a reading workload prefills, objects over all agents together.
    objects: Optional[int] = None
    multipart_threshold: Optional[str] = None
    part_size: Optional[str] = None
    # Ranged GET: START-END of each object (END not included), e.g. 0-1MiB.
    range: Optional[str] = None
    # Requests in flight per RGW daemon of the variant: the concurrency is this times
    # the RGW daemons each variant has (at most MAX_CONCURRENCY), so that a workload
    # loads a larger cluster as hard as a small one. None: `concurrency` as it is.
    concurrency_per_rgw: Optional[int] = None

    OPTIONAL: ClassVar[Tuple[str, ...]] = (
        'rate', 'objects', 'multipart_threshold', 'part_size', 'range')

    def for_rgws(self, rgw_daemons: int, most: int) -> 'Workload':
        """This workload as it runs against `rgw_daemons` RGW daemons, `most` in flight
        at most: its concurrency scaled when it is given per RGW."""
        if not self.concurrency_per_rgw:
            return self
        return replace(self, concurrency=min(most, self.concurrency_per_rgw *
                                             max(1, rgw_daemons)))

    def to_dict(self) -> Dict[str, Any]:
        """The document form (`duration` and `warmup` in seconds), as parse_profile reads it."""
        data: Dict[str, Any] = {'name': self.name, 'op': self.op, 'size': self.size,
                                'concurrency': self.concurrency,
                                'duration': plain_seconds(self.duration_s),
                                'warmup': plain_seconds(self.warmup_s),
                                'processes': self.processes, 'buckets': self.buckets,
                                'payload_signing': self.payload_signing}
        if self.mix:
            data['mix'] = dict(self.mix)
        for key in self.OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                data[key] = plain_seconds(value) if key == 'rate' else value
        if self.concurrency_per_rgw:
            data['concurrency_per_rgw'] = self.concurrency_per_rgw
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> 'Workload':
        """From to_dict's form (stored or shown); not checked: parse_profile checks."""
        def optional(key: str, kind: Callable[[Any], Any]) -> Any:
            return None if data.get(key) is None else kind(data[key])
        return cls(name=str(data['name']), op=str(data.get('op', 'put')),
                   mix=dict(data.get('mix') or {}), size=str(data.get('size', '4KiB')),
                   concurrency=int(data.get('concurrency', DEFAULT_CONCURRENCY)),
                   duration_s=float(data.get('duration', data.get('duration_s',
                                                                  DEFAULT_DURATION_S))),
                   warmup_s=float(data.get('warmup', data.get('warmup_s', DEFAULT_WARMUP_S))),
                   # to_dict writes it; a record without it ran before it was a field,
                   # with one process
                   processes=int(data.get('processes', 1)),
                   buckets=int(data.get('buckets', 1)),
                   payload_signing=str(data.get('payload_signing', 'unsigned')),
                   rate=optional('rate', float), objects=optional('objects', int),
                   multipart_threshold=optional('multipart_threshold', str),
                   part_size=optional('part_size', str), range=optional('range', str),
                   concurrency_per_rgw=optional('concurrency_per_rgw', int))

    def job_fields(self) -> Dict[str, Any]:
        """The fields of the engine's Job this workload sets."""
        fields = {'op': self.op, 'mix': dict(self.mix), 'size': self.size,
                  'concurrency': self.concurrency, 'processes': self.processes,
                  'duration_s': self.duration_s, 'warmup_s': self.warmup_s,
                  'buckets': self.buckets, 'payload_signing': self.payload_signing}
        for key in self.OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                fields[key] = value
        return fields

    def job(self, **settings: Any) -> Job:
        """The engine's Job of this workload: its `job_fields`, with `settings` (targets,
        credentials, buckets) added; without them, what an estimate reads (op weights,
        sizes, working set). Not checked: `Job.validate` checks."""
        return Job(**dict(self.job_fields(), **settings))

    @property
    def open_loop(self) -> bool:
        return self.rate is not None


@dataclass(frozen=True)
class Variant:
    """The cluster with these settings in place; no settings: the cluster as it is."""
    name: str
    settings: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return {'name': self.name, 'settings': dict(self.settings)}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> 'Variant':
        return cls(name=str(data['name']), settings=dict(data.get('settings') or {}))


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    baseline: str
    variants: List[Variant]
    workloads: List[Workload]
    placement: List[str] = field(default_factory=list)   # empty: every RGW host (placement.py)
    repeats: int = 1
    target: Target = Target()   # where each variant's load goes (settings/targets.py)
    order: str = SEQUENTIAL

    def interleaved(self) -> bool:
        """Whether each repeat is a round of its own over every variant (A B A B ...)."""
        return self.order == INTERLEAVED and self.repeats > 1

    def to_dict(self) -> Dict[str, Any]:
        data = {'name': self.name, 'description': self.description,
                'baseline': self.baseline,
                'variants': [v.to_dict() for v in self.variants],
                'workloads': [w.to_dict() for w in self.workloads],
                'placement': list(self.placement), 'repeats': self.repeats}
        if self.target.to_value() is not None:
            data['target'] = self.target.to_value()
        if self.order != SEQUENTIAL:
            data['order'] = self.order
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> 'Profile':
        variants = [Variant.from_dict(v) for v in data.get('variants') or []]
        return cls(name=str(data['name']), description=str(data.get('description') or ''),
                   baseline=str(data.get('baseline') or (variants[0].name if variants else '')),
                   variants=variants,
                   workloads=[Workload.from_dict(w) for w in data.get('workloads') or []],
                   placement=[str(h) for h in data.get('placement') or []],
                   repeats=int(data.get('repeats', 1)),
                   target=Target.from_value(data.get('target')),
                   order=str(data.get('order') or SEQUENTIAL))

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise NotFound('profile %s has no variant %r' % (self.name, name))
