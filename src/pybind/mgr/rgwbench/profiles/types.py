"""The profile types: a profile, its variants and its workloads, frozen."""
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Dict, List, Optional, Tuple, Union

from ..errors import NotFound
from ..loadgen.workload import Job
from ..serial import OMIT_DEFAULT, OMIT_EMPTY, OMIT_NONE, form
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
#: the workload fields a document may give as a list, one workload per value (a sweep)
SWEPT_FIELDS = ('concurrency', 'concurrency_per_rgw', 'size')


def plain_seconds(value: float) -> Union[int, float]:
    """Seconds as a document shows them: 60.0 -> 60, 2.5 -> 2.5."""
    return int(value) if float(value).is_integer() else value


def seconds_form(key: str) -> Dict[str, Any]:
    """A duration in seconds as a document has it: under ``key``, 60.0 as 60 (older records:
    under the field's name)."""
    return form(key=key, write=plain_seconds, read=float, older_keys=(key + '_s',))


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
    size: str = '4KiB'
    concurrency: int = DEFAULT_CONCURRENCY
    duration_s: float = field(default=DEFAULT_DURATION_S, metadata=seconds_form('duration'))
    warmup_s: float = field(default=DEFAULT_WARMUP_S, metadata=seconds_form('warmup'))
    # a record without it ran before it was a field, with one process
    processes: int = field(default=DEFAULT_PROCESSES, metadata=form(absent=1))
    buckets: int = 1
    # The same for every variant of a run: RGW checks a signed body's SHA-256, which
    # would weigh on the variants that sign it and not on the others.
    payload_signing: str = 'unsigned'
    mix: Dict[str, float] = field(default_factory=dict, metadata=OMIT_EMPTY)
    # Open loop: operations a second over all agents together (the engine's rate is
    # per agent: each gets its share); latency counts from each request's due time.
    rate: Optional[float] = field(default=None, metadata=form(write=plain_seconds, read=float,
                                                              omit='none'))
    # The working set a reading workload prefills, objects over all agents together.
    objects: Optional[int] = field(default=None, metadata=OMIT_NONE)
    multipart_threshold: Optional[str] = field(default=None, metadata=OMIT_NONE)
    part_size: Optional[str] = field(default=None, metadata=OMIT_NONE)
    # Ranged GET: START-END of each object (END not included), e.g. 0-1MiB.
    range: Optional[str] = field(default=None, metadata=OMIT_NONE)
    # Requests in flight per RGW daemon of the variant: the concurrency is this times
    # the RGW daemons each variant has (at most MAX_CONCURRENCY), so that a workload
    # loads a larger cluster as hard as a small one. None: `concurrency` as it is.
    concurrency_per_rgw: Optional[int] = field(default=None, metadata=OMIT_EMPTY)
    # A point of a sweep (a list of concurrencies or sizes in the document, one workload
    # each): the curve's name, and the field it varies (SWEPT_FIELDS). None: no sweep.
    curve: Optional[str] = field(default=None, metadata=OMIT_NONE)
    swept: Optional[str] = field(default=None, metadata=OMIT_NONE)

    OPTIONAL: ClassVar[Tuple[str, ...]] = (
        'rate', 'objects', 'multipart_threshold', 'part_size', 'range')

    def for_rgws(self, rgw_daemons: int, most: int) -> 'Workload':
        """This workload as it runs against `rgw_daemons` RGW daemons, `most` in flight
        at most: its concurrency scaled when it is given per RGW."""
        if not self.concurrency_per_rgw:
            return self
        return replace(self, concurrency=min(most, self.concurrency_per_rgw *
                                             max(1, rgw_daemons)))

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
    """The cluster with these settings in place; no settings: the cluster as it is.

    A variant of a setting sweep (`sweep: {setting: [values]}` in the document) has
    its curve's name (the document's variant name) and the setting it varies."""
    name: str
    settings: Dict[str, Any] = field(default_factory=dict)
    curve: Optional[str] = field(default=None, metadata=OMIT_NONE)
    swept: Optional[str] = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Profile:
    """A profile (in its document form: as parse_profile reads it, stored and shown)."""
    name: str
    description: str = ''
    baseline: str = ''   # empty: the first variant (the form of older records)
    variants: List[Variant] = field(default_factory=list)
    workloads: List[Workload] = field(default_factory=list)
    placement: List[str] = field(default_factory=list)   # empty: every RGW host (placement.py)
    repeats: int = 1
    # where each variant's load goes (settings/targets.py)
    target: Target = field(default=Target(), metadata=form(
        write=Target.to_value, read=Target.from_value, omit='none'))
    order: str = field(default=SEQUENTIAL, metadata=OMIT_DEFAULT)

    def __post_init__(self) -> None:
        if not self.baseline and self.variants:
            object.__setattr__(self, 'baseline', self.variants[0].name)

    def interleaved(self) -> bool:
        """Whether each repeat is a round of its own over every variant (A B A B ...)."""
        return self.order == INTERLEAVED and self.repeats > 1

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise NotFound('profile %s has no variant %r' % (self.name, name))
