"""What to run: operations, object sizes, key space, and the job settings.

A ``Job`` is plain data (``to_dict``/``from_dict`` round-trip through JSON)
so it can be handed to worker processes, to remote agents, or built by the
mgr module.  ``Job.validate`` turns every bad setting into one
``UsageError`` line before anything is sent.
"""

import bisect
import math
import os
import random
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .errors import UsageError
from .s3 import Endpoint
from .sse import SSE

OPS = ("put", "get", "delete", "head", "list")
ALL_OPS = OPS + ("mixed",)
#: warp's mixed benchmark weights
DEFAULT_MIX = {"get": 45.0, "head": 30.0, "put": 15.0, "delete": 10.0}

_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kib": 1 << 10, "kb": 1000,
    "m": 1 << 20, "mib": 1 << 20, "mb": 1000 ** 2,
    "g": 1 << 30, "gib": 1 << 30, "gb": 1000 ** 3,
    "t": 1 << 40, "tib": 1 << 40, "tb": 1000 ** 4,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,50}\Z")
_KEY_PREFIX_RE = re.compile(r"^[A-Za-z0-9._~/-]*\Z")

MAX_OBJECT = 5 << 40  # S3's largest object
MAX_PUT = 5 << 30     # largest single PUT / part


def parse_size(text: str) -> int:
    """``4KiB`` -> 4096.  KiB/MiB/GiB/TiB (and K/M/G/T) are binary,
    KB/MB/GB/TB decimal, B or no unit bytes.  Units are case-insensitive."""
    m = _SIZE_RE.match(str(text))
    if not m:
        raise UsageError("bad size %r: use a number with an optional unit "
                         "(B, KiB, MiB, GiB, KB, MB, GB)" % (text,))
    unit = m.group(2).lower()
    if unit not in _UNITS:
        raise UsageError("bad size unit in %r (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
                         % (text,))
    value = float(m.group(1)) * _UNITS[unit]
    if value != int(value):
        raise UsageError("size %r is not a whole number of bytes" % (text,))
    return int(value)


def parse_range(text: str) -> Tuple[int, int]:
    """``0-1MiB`` -> (0, 1048576): the bytes START (included) to END (not included) of
    an object, each a size; a ranged GET asks for them (``Range: bytes=0-1048575``)."""
    start, sep, end = str(text).strip().partition("-")
    if not sep or not start.strip() or not end.strip():
        raise UsageError("bad range %r: use START-END in sizes, e.g. 0-1MiB" % (text,))
    first, stop = parse_size(start), parse_size(end)
    if stop <= first:
        raise UsageError("range %r is empty: END must be past START" % (text,))
    return first, stop


def format_size(n: int) -> str:
    """4096 -> ``4KiB``; exact binary units where possible, else bytes."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20),
                         ("KiB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return "%d%s" % (n // factor, unit)
    return "%dB" % n


class SizeSpec:
    """Object sizes: fixed ``4KiB``, a list ``4KiB,1MiB`` (each equally
    likely) or a range ``4KiB-1MiB`` (uniform over bytes)."""

    def __init__(self, text: str) -> None:
        text = str(text).strip()
        self.text = text
        self.values: List[int] = []
        self.low = self.high = 0
        if "," in text:
            self.kind = "list"
            self.values = [parse_size(part) for part in text.split(",") if part.strip()]
            if not self.values:
                raise UsageError("empty size list %r" % text)
        elif "-" in text:
            self.kind = "range"
            low, _, high = text.partition("-")
            self.low, self.high = parse_size(low), parse_size(high)
            if self.low > self.high:
                raise UsageError("size range %r runs backwards" % text)
            self.values = [self.low, self.high]
        else:
            self.kind = "fixed"
            self.values = [parse_size(text)]
        if min(self.values) <= 0:
            raise UsageError("object size must be at least 1 byte, got %r" % text)
        if max(self.values) > MAX_OBJECT:
            raise UsageError("object size %r is above S3's 5 TiB limit" % text)

    @property
    def fixed(self) -> Optional[int]:
        return self.values[0] if self.kind == "fixed" else None

    @property
    def max_size(self) -> int:
        return max(self.values)

    @property
    def min_size(self) -> int:
        return min(self.values)

    @property
    def mean_size(self) -> float:
        if self.kind == "range":
            return (self.low + self.high) / 2.0
        return sum(self.values) / float(len(self.values))

    def pick(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return self.values[0]
        if self.kind == "list":
            return self.values[int(rng.random() * len(self.values))]
        return rng.randint(self.low, self.high)

    def for_index(self, seed: int, index: int) -> int:
        """The size of prefilled object ``index`` (the same in every process)."""
        if self.kind == "fixed":
            return self.values[0]
        return self.pick(random.Random(seed * 1000003 + index))


def parse_mix(text: str) -> Dict[str, float]:
    """``put=1,get=3`` -> weights; unknown ops, negatives and a zero sum fail."""
    weights: Dict[str, float] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        op, sep, value = part.partition("=")
        op = op.strip().lower()
        if not sep:
            raise UsageError("bad --mix entry %r: use OP=WEIGHT, e.g. put=1,get=3" % part)
        if op not in OPS:
            raise UsageError("unknown op %r in --mix (use %s)" % (op, ", ".join(OPS)))
        try:
            weight = float(value)
        except ValueError:
            raise UsageError("bad weight %r for %s in --mix" % (value, op))
        if weight < 0 or math.isnan(weight) or math.isinf(weight):
            raise UsageError("weight for %s in --mix must be a finite number >= 0" % op)
        weights[op] = weights.get(op, 0.0) + weight
    if sum(weights.values()) <= 0:
        raise UsageError("--mix weights sum to 0: give at least one op a positive weight")
    return {op: w for op, w in weights.items() if w > 0}


class OpChooser:
    """Picks an op by weight from one uniform random number."""

    def __init__(self, weights: Dict[str, float]) -> None:
        self.ops: List[str] = []
        self._cum: List[float] = []
        total = 0.0
        for op in OPS:
            w = weights.get(op, 0.0)
            if w > 0:
                total += w
                self.ops.append(op)
                self._cum.append(total)
        if not self.ops:
            raise UsageError("no operation has a positive weight")
        self._total = total

    def choose(self, u: float) -> str:
        i = bisect.bisect_right(self._cum, u * self._total)
        return self.ops[i if i < len(self.ops) else -1]


def new_run_tag() -> str:
    return os.urandom(4).hex()


def host_cores() -> int:
    """The cores this process may run on (its CPU set, which a container may narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Job:
    """Everything one load run needs (one host; processes x threads).

    ``endpoints`` are the targets the connections are spread over (each
    connection pinned to one for its life, round-robin by the worker's
    global index ``target_offset`` + its index in this job); ``endpoint``
    is the first of them, kept for jobs written before there were several.
    """

    endpoint: str = ""
    endpoints: List[str] = field(default_factory=list)
    target_offset: int = 0
    access_key: str = ""
    secret_key: str = ""
    region: str = "us-east-1"
    ca_bundle: Optional[str] = None
    insecure: bool = False
    op: str = "put"
    mix: Dict[str, float] = field(default_factory=dict)
    size: str = "4KiB"
    concurrency: int = 8
    processes: int = 1
    duration_s: Optional[float] = 30.0
    ops: Optional[int] = None
    warmup_s: float = 0.0
    start_at: Optional[float] = None
    rate: Optional[float] = None
    buckets: int = 1
    bucket_prefix: str = "rgwbench"
    key_prefix: str = "rgwbench/"
    objects: int = 0
    multipart_threshold: str = "64MiB"
    part_size: str = "16MiB"
    verify: bool = False
    sse_c_key: Optional[str] = None
    sse_kms_key_id: Optional[str] = None
    sse_s3: bool = False
    # The RGW placement target of the job's buckets (None: the zonegroup's default).
    placement: Optional[str] = None
    prefill: bool = True
    # At most this many seconds of prefill (0: no bound): the load then reads the
    # objects written by then, at least PREFILL_FLOOR of them.
    prefill_s: float = 0.0
    cleanup: bool = False
    timeout_s: float = 30.0
    list_max_keys: int = 100
    # Ranged GET: "START-END" (sizes, END not included; "0-1MiB" reads the first MiB of
    # each object); "": whole objects.
    range: str = ""
    payload_signing: str = "auto"
    seed: int = 1
    run_tag: str = ""
    proc_stats: bool = True
    proc_names: Sequence[str] = ("radosgw", "haproxy")
    # The cluster's daemons to count on this host, by name (rgw.<id>,
    # haproxy.<id>) -> their host; None: every process named in proc_names.
    proc_daemons: Optional[Dict[str, str]] = None
    # The cluster's fsid: a daemon of that name in another cluster is not counted.
    proc_fsid: str = ""
    host_label: str = ""
    # No load: only the server-side samples of this host's daemons over the window
    # (an agent on a host that runs RGW or HAProxy and no load). Concurrency 0.
    sample_only: bool = False

    # -- (de)serialisation ----------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        data["proc_names"] = list(self.proc_names)
        data["endpoints"] = list(self.targets)
        data["endpoint"] = self.targets[0] if self.targets else self.endpoint
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Job":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError("unknown job settings: %s" % ", ".join(unknown))
        job = cls(**data)
        job.proc_names = tuple(job.proc_names)
        job.endpoints = list(job.endpoints)
        return job

    # -- derived values ---------------------------------------------------

    @property
    def targets(self) -> List[str]:
        """The endpoints the load goes to: ``endpoints``, else ``endpoint`` alone."""
        if self.endpoints:
            return self.endpoints
        return [self.endpoint] if self.endpoint else []

    def target_of(self, worker: int) -> str:
        """The endpoint of this job's worker ``worker`` (0 .. concurrency-1)."""
        targets = self.targets
        return targets[(self.target_offset + worker) % len(targets)]

    @property
    def sizes(self) -> SizeSpec:
        return SizeSpec(self.size)

    @property
    def weights(self) -> Dict[str, float]:
        if self.op == "mixed":
            return dict(self.mix) if self.mix else dict(DEFAULT_MIX)
        return {self.op: 1.0}

    @property
    def multipart_threshold_bytes(self) -> int:
        return parse_size(self.multipart_threshold)

    @property
    def part_size_bytes(self) -> int:
        return parse_size(self.part_size)

    @property
    def range_bytes(self) -> Optional[Tuple[int, int]]:
        """(START, END) of a ranged GET, END not included; None: GETs read whole objects."""
        return parse_range(self.range) if self.range else None

    @property
    def range_header(self) -> str:
        """The HTTP Range value of a ranged GET ("" for whole objects)."""
        found = self.range_bytes
        return "bytes=%d-%d" % (found[0], found[1] - 1) if found else ""

    @property
    def bucket_names(self) -> List[str]:
        return ["%s-%d" % (self.bucket_prefix, i) for i in range(self.buckets)]

    @property
    def reads_prefilled(self) -> bool:
        """Whether the run reads (or deletes) the prefilled key space."""
        return any(op in self.weights for op in ("get", "head", "list")) or \
            self.op == "delete"

    def sse(self) -> SSE:
        return SSE.from_settings(self.sse_c_key, self.sse_kms_key_id, self.sse_s3)

    def prefill_key(self, index: int) -> Tuple[str, str]:
        """(bucket, key) of prefilled object ``index``."""
        return ("%s-%d" % (self.bucket_prefix, index % self.buckets),
                "%sobj/%08d" % (self.key_prefix, index))

    def object_count(self) -> int:
        """Size of the prefilled key space (``objects``, or a default)."""
        if self.objects > 0:
            return self.objects
        size = self.sizes.max_size
        if self.op == "delete":
            if self.ops:
                return self.ops
            return max(1, min(10000, (1 << 30) // size))
        return max(4, min(1000, (1 << 30) // size))

    def with_process_count(self, cap: int = 0) -> "Job":
        """This job, its processes 0 made a number: one per core this host lets it run
        on (its CPU set), at most ``cap`` (0: no cap) and the concurrency."""
        if self.processes:
            return self
        cores = host_cores()
        return replace(self, processes=max(1, min(cores, cap or cores, self.concurrency)))

    def working_set_bytes(self) -> Optional[int]:
        """What the prefilled key space holds (objects x size; a mean for mixed sizes),
        None when the job reads nothing it prefilled."""
        if not self.reads_prefilled:
            return None
        return int(round(self.object_count() * self.sizes.mean_size))

    def validate(self) -> "Job":
        """Check everything; fill in defaults that depend on other settings."""
        if self.op not in ALL_OPS:
            raise UsageError("unknown op %r: use one of %s" % (self.op, "|".join(ALL_OPS)))
        self.endpoints = [url.strip().rstrip("/") for url in self.targets if url.strip()]
        if not self.endpoints:
            raise UsageError("--endpoint is required")
        schemes = {Endpoint(url).scheme for url in self.endpoints}  # parses each URL
        if len(schemes) > 1:
            raise UsageError("--endpoint URLs must all be http:// or all https://")
        if len(set(self.endpoints)) != len(self.endpoints):
            raise UsageError("--endpoint names a URL twice")
        self.endpoint = self.endpoints[0]
        if self.target_offset < 0:
            raise UsageError("target_offset must be >= 0")
        if (not self.access_key or not self.secret_key) and not self.sample_only:
            raise UsageError("--access-key and --secret-key are required")
        if self.ca_bundle and self.insecure:
            raise UsageError("use either --ca-bundle or --insecure, not both")
        if self.ca_bundle and not os.path.isfile(self.ca_bundle):
            raise UsageError("--ca-bundle %r is not a file" % self.ca_bundle)
        SizeSpec(self.size)  # parses and checks --size
        self.sse()  # checks the SSE settings
        if self.op == "mixed" and self.mix:
            self.mix = parse_mix(",".join("%s=%s" % kv for kv in self.mix.items()))
        elif self.mix and self.op != "mixed":
            raise UsageError("--mix needs --op mixed")
        if self.sample_only:
            if self.concurrency != 0 or self.processes != 1 or self.duration_s is None:
                raise UsageError("a sampling job has concurrency 0, one process and a "
                                 "duration")
        elif self.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        if self.processes < 0:
            raise UsageError("--processes must be at least 0 (0: one per core)")
        if self.processes > self.concurrency and not self.sample_only:
            raise UsageError("--processes (%d) cannot exceed --concurrency (%d)"
                             % (self.processes, self.concurrency))
        if self.duration_s is not None and not self.duration_s > 0:
            raise UsageError("--duration must be > 0 seconds")
        if self.ops is not None and self.ops < 1:
            raise UsageError("--ops must be at least 1")
        if self.duration_s is None and self.ops is None:
            raise UsageError("give --duration or --ops")
        if self.warmup_s < 0:
            raise UsageError("--warmup must be >= 0")
        if self.rate is not None and not self.rate > 0:
            raise UsageError("--rate must be > 0 operations per second")
        if self.buckets < 1:
            raise UsageError("--buckets must be at least 1")
        for name in self.bucket_names[-1:]:
            if not _BUCKET_RE.match(name) or ".." in name:
                raise UsageError("bad --bucket-prefix %r: bucket names need lower-case "
                                 "letters, digits, '.' or '-'" % self.bucket_prefix)
        if not _KEY_PREFIX_RE.match(self.key_prefix) or not self.key_prefix:
            raise UsageError("--key-prefix must be non-empty and use only letters, "
                             "digits and . _ ~ / -")
        if self.objects < 0:
            raise UsageError("--objects must be >= 0")
        if not 0 <= self.prefill_s < 1e7:
            raise UsageError("--prefill-time must be >= 0 seconds")
        threshold = self.multipart_threshold_bytes
        part = self.part_size_bytes
        if part < 5 << 20:
            raise UsageError("--part-size must be at least 5MiB (S3's minimum part)")
        if part > MAX_PUT:
            raise UsageError("--part-size must be at most 5GiB")
        if threshold > MAX_PUT:
            raise UsageError("--multipart-threshold must be at most 5GiB")
        if self.sizes.max_size > threshold and \
                -(-self.sizes.max_size // part) > 10000:
            raise UsageError("objects of %s need more than 10000 parts of %s"
                             % (self.size, self.part_size))
        if self.timeout_s <= 0:
            raise UsageError("--timeout must be > 0")
        if self.range:
            _, stop = parse_range(self.range)
            if "get" not in self.weights:
                raise UsageError("--range needs a workload that GETs (--op get or mixed)")
            if stop > self.sizes.min_size:
                raise UsageError("--range %s reaches past the end of the smallest object "
                                 "(%s)" % (self.range, format_size(self.sizes.min_size)))
        if not 1 <= self.list_max_keys <= 1000:
            raise UsageError("--list-max-keys must be 1..1000")
        if self.payload_signing not in ("auto", "signed", "unsigned"):
            raise UsageError("--payload-signing must be auto, signed or unsigned")
        if not self.run_tag:
            self.run_tag = new_run_tag()
        elif not re.match(r"^[A-Za-z0-9_-]{1,32}$", self.run_tag):
            raise UsageError("--run-tag must be 1-32 letters, digits, '_' or '-'")
        return self
