"""A run's prefills, written once and read by every variant that stores objects alike.

A reading workload (GET, HEAD, LIST: nothing it does changes an object) prefills
its key space in the first variant that runs it; the later variants whose
settings leave how RGW stores objects as it is (TLS, an ingress, msgr2 secure
mode, RGW daemons per host or their cores) read the same objects, with nothing written again.
A variant whose settings may change how objects are stored (SSE; a `config`
option, say `rgw_max_chunk_size`) prefills its own, once for all its repeats
(and, in an interleaved run, its rounds). Each agent reads its own share under
its own key prefix, so a prefill is reused only by the same set of agents.

The buckets of a prefill stay until its last reader ends: the workload in the
last variant that reads them (in an interleaved run, the run's end). They are
removed then, through that variant's endpoints: a run holds as little as it
can at once. A shared prefill held to the run's end left an SSE variant's own
too little room on a small cluster; every GET working set of a one-variant
`sizes` run held to the variant's end took a demo cluster's OSDs to 65 % before
its largest PUT workload started.
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..loadgen.workload import Job
from . import Profile, Variant, Workload

# Settings under which objects are written and read as without them.
STORE_ALIKE = frozenset({'tls@rgw', 'tls@ingress', 'msgr2-secure', 'rgw-per-host', 'rgw-cpus',
                         'rgw-restart'})
# Settings whose storage goes when their variant ends (data-pool's pool): the variant's
# prefills go before it, even in an interleaved run (its next round writes them again).
GONE_WITH_VARIANT = frozenset({'data-pool'})
SHARED = 'shared'
READING_OPS = frozenset({'get', 'head', 'list'})

PrefillKey = Tuple[str, str, Tuple[str, ...]]


def storage_of(variant: Variant, index: int) -> str:
    """Which prefills a variant may read: those of every variant that stores alike
    (`shared`), or its own."""
    return SHARED if set(variant.settings) <= STORE_ALIKE else 'v%d' % index


def reads_only(workload: Workload) -> bool:
    """Whether a workload reads a prefilled key space and changes nothing in it."""
    job = workload.job()
    return job.reads_prefilled and workload.op != 'delete' and \
        set(job.weights) <= READING_OPS


def read_later(storage: str, index: int, profile: Profile) -> bool:
    """Whether a prefill of `storage` is read after variant `index` ends: by a later
    variant that stores alike, or in a later round of an interleaved run."""
    if set(profile.variants[index].settings) & GONE_WITH_VARIANT:
        return False
    later = [storage_of(v, i) for i, v in enumerate(profile.variants) if i > index]
    return profile.interleaved() or storage in later


def held_at_once(profile: Profile) -> int:
    """How many prefills of reading workloads a run of `profile` holds at most at once
    (working sets sized from the caches share the room between them)."""
    reading = [w.name or '' for w in profile.workloads if reads_only(w)]
    if profile.interleaved():   # every storage's, read again round after round
        return max(1, len(reading) * len({storage_of(v, i)
                                          for i, v in enumerate(profile.variants)}))
    held: Set[Tuple[str, str]] = set()
    most = 1
    for index, variant in enumerate(profile.variants):
        storage = storage_of(variant, index)
        for name in reading:
            held.add((name, storage))
            most = max(most, len(held))
            if not read_later(storage, index, profile):
                held.discard((name, storage))
    return most


@dataclass
class Prefill:
    """One prefill of a run: its buckets and the objects it wrote (over all agents)."""
    bucket_prefix: str
    job: Job
    written_by: str                 # the variant whose repeat wrote it
    objects: Optional[int] = None   # None until a repeat read them


class RunPrefills:
    """The prefills of one run, by workload, storage and agents."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._found: Dict[PrefillKey, Prefill] = {}
        self._made = 0   # prefills so far, removed ones too: each has buckets of its own

    @staticmethod
    def key(workload: Workload, storage: str, agents: Sequence[str]) -> PrefillKey:
        return workload.name or '', storage, tuple(sorted(agents))

    def get(self, key: PrefillKey) -> Optional[Prefill]:
        """The prefill of `key` that a repeat has read already (None: none yet)."""
        found = self._found.get(key)
        return found if found is not None and found.objects is not None else None

    def bucket_prefix(self, key: PrefillKey) -> str:
        """The buckets of `key`'s prefill (short: a bucket name has 63 characters)."""
        found = self._found.get(key)
        if found is not None:
            return found.bucket_prefix
        return 'rgwbench-%s-p%d' % (self.run_id, self._made)

    def made(self, key: PrefillKey, job: Job, variant: str) -> str:
        """`job` of `variant` was started on `key`'s buckets: they stay until
        `done_with` them. The variant that wrote what it reads."""
        if key not in self._found:
            self._made += 1
            self._found[key] = Prefill(bucket_prefix=job.bucket_prefix, job=job,
                                       written_by=variant)
        return self._found[key].written_by

    def read(self, key: PrefillKey, objects: int) -> None:
        """A repeat of `key` read `objects` objects: later ones read them, unwritten."""
        self._found[key].objects = objects

    def done_with(self, key: Optional[PrefillKey] = None) -> List[Job]:
        """The job of `key`'s prefill (None: of every one), forgotten here: the run
        removes their buckets."""
        keys = [k for k in self._found if key is None or k == key]
        return [self._found.pop(k).job for k in keys]
