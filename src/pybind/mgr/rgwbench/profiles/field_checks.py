"""Checking one field of a profile, or a workload as a whole.

Each check returns the value in its form or raises FieldError naming the
field's path (a document path, or an override's flag).
"""
import json
import math
import re
from typing import Any, Callable, Dict, List, Optional

from ..loadgen.errors import UsageError
from ..loadgen.workload import (ALL_OPS, MAX_PUT, SizeSpec, format_size, parse_mix, parse_range,
                                parse_size)
from .placement import count_of, problem_of
from ..settings.targets import Target, parse_target
from .types import Workload, format_rate, plain_seconds

HOST = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,252}\Z')

#: Requests in flight of a workload, over all its agents. Each is a connection of one
#: engine process: the agents split it, then each agent's processes (schedule.share),
#: each process driving its part from one thread on epoll (loadgen.reactor) or from a
#: thread per connection (TLS, open loop, large objects). What bounds a process is its
#: open files, a connection each: many hosts' soft limit is 1024 (the old cap, which one
#: process at `processes: 1` could not quite hold), so an engine process raises its own
#: to what it needs, within the hard limit (loadgen.process.room_for; container runtimes
#: and systemd give 1048576 or 524288). 4096 is then what one agent carries even at
#: `processes: 1`; at agent_processes_max (8) processes it is 512 connections each, as
#: many as one process drove before; and the `saturation` built-in reaches it with 256
#: per RGW at 16 RGWs.
MAX_CONCURRENCY = 4096
#: values a sweep (of a workload's concurrency or size, or of a variant's setting) has at most
MAX_SWEEP = 16
MAX_PROCESSES = 64
MAX_BUCKETS = 1000
MAX_DURATION_S = 3600.0
MAX_REPEATS = 10
# One object of a workload: RGW's default rgw_max_put_size. The engine takes up to
# S3's 5 TiB, but a benchmark inside a production cluster has no use for more.
MAX_OBJECT_SIZE = 5 * 1024 ** 3
# Open loop: operations a second over all agents; a curve has at most MAX_RATES points.
MAX_RATE = 100000.0
MAX_RATES = 16
# The working set a reading workload prefills (over all agents): the engine's default is
# up to 1000 objects and 1 GiB; `objects` raises it to these. The prefill writes it
# before the measured window, watched by the capacity guard like any write.
MAX_OBJECTS = 1000000
MAX_WORKING_SET = 1 << 40
MIN_PART_SIZE = 5 << 20
#: how a PUT's body is signed, the same for every variant of a run: UNSIGNED-PAYLOAD
#: (as most SDKs send over TLS) or its SHA-256 (which RGW then verifies)
PAYLOAD_SIGNING = ('unsigned', 'signed')


class FieldError(Exception):
    """One field is wrong: its path and what is wrong with it."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__('%s: %s' % (path, message) if path else message)
        self.path = path
        self.message = message


def as_number(raw: Any) -> Optional[float]:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None
    else:
        return None
    return None if math.isnan(value) or math.isinf(value) else value


def check_whole(raw: Any, path: str, low: int, high: int) -> int:
    value = as_number(raw)
    if value is None or not value.is_integer() or not low <= value <= high:
        raise FieldError(path, 'must be a whole number from %d to %d, got %s'
                         % (low, high, shown(raw)))
    return int(value)


def check_duration(raw: Any, path: str) -> float:
    value = as_number(raw)
    if value is None or value <= 0:
        raise FieldError(path, 'must be a positive number of seconds, got %s' % shown(raw))
    if value < 1:
        raise FieldError(path, 'must be at least 1 second, got %s' % shown(raw))
    if value > MAX_DURATION_S:
        raise FieldError(path, 'must be at most %d seconds, got %s'
                         % (MAX_DURATION_S, shown(raw)))
    return value


def check_warmup(raw: Any, path: str, duration_s: float) -> float:
    value = as_number(raw)
    if value is None or not 0 <= value <= duration_s:
        raise FieldError(path, 'must be 0 to the duration (%s) seconds, got %s'
                         % (plain_seconds(duration_s), shown(raw)))
    return value


def check_size(raw: Any, path: str) -> str:
    if isinstance(raw, bool) or raw is None or isinstance(raw, (dict, list)):
        raise FieldError(path, '%s is not a size' % shown(raw))
    text = format_size(raw) if isinstance(raw, int) and raw > 0 else str(raw).strip()
    try:
        spec = SizeSpec(text)
    except UsageError as e:
        raise FieldError(path, '%s is not a size (%s)' % (shown(raw), e))
    if spec.max_size > MAX_OBJECT_SIZE:
        raise FieldError(path, '%s is above the %s an object may have here'
                         % (shown(raw), format_size(MAX_OBJECT_SIZE)))
    return text


def check_rate(raw: Any, path: str) -> float:
    value = as_number(raw)
    if value is None or not 0 < value <= MAX_RATE:
        raise FieldError(path, 'must be a number of operations a second above 0 and at most '
                         '%s, got %s' % (format_rate(MAX_RATE), shown(raw)))
    return value


def check_rates(raw: Any, path: str) -> List[float]:
    """A latency-vs-rate curve: a list (or comma text) of rates, each once."""
    items = raw.split(',') if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items:
        raise FieldError(path, 'must be a list of operations a second, e.g. [100, 200, 400]')
    if len(items) > MAX_RATES:
        raise FieldError(path, 'has %d rates, at most %d' % (len(items), MAX_RATES))
    rates = [check_rate(item, path) for item in items]
    if len(set(rates)) != len(rates):
        raise FieldError(path, 'gives a rate twice')
    return rates


def check_sweep(raw: Any, path: str, check: Callable[[Any, str], Any]) -> List[Any]:
    """A sweep's values: a list of at most MAX_SWEEP, each checked, each once."""
    if not isinstance(raw, list) or not raw:
        raise FieldError(path, 'must be a list of values, e.g. [16, 64, 256]')
    if len(raw) > MAX_SWEEP:
        raise FieldError(path, 'has %d values, at most %d' % (len(raw), MAX_SWEEP))
    values: List[Any] = []
    for item in raw:
        value = check(item, path)
        if value in values:
            raise FieldError(path, 'gives %s twice' % shown(item))
        values.append(value)
    return values


def check_processes(raw: Any, path: str) -> int:
    """Engine processes of each agent; 0: one per core of its host."""
    return check_whole(raw, path, 0, MAX_PROCESSES)


def check_payload_signing(raw: Any, path: str) -> str:
    if raw not in PAYLOAD_SIGNING:
        raise FieldError(path, '%s is not a signing mode (use %s)'
                         % (shown(raw), ' or '.join(PAYLOAD_SIGNING)))
    return str(raw)


def check_objects(raw: Any, path: str) -> int:
    return check_whole(raw, path, 1, MAX_OBJECTS)


def _one_size(raw: Any, path: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise FieldError(path, '%s is not a size' % shown(raw))
    try:
        return parse_size(format_size(raw) if isinstance(raw, int) else raw)
    except UsageError as e:
        raise FieldError(path, '%s is not a size (%s)' % (shown(raw), e))


def check_part_size(raw: Any, path: str) -> str:
    value = _one_size(raw, path)
    if not MIN_PART_SIZE <= value <= MAX_PUT:
        raise FieldError(path, 'must be %s to %s (S3\'s part sizes), got %s'
                         % (format_size(MIN_PART_SIZE), format_size(MAX_PUT), shown(raw)))
    return format_size(value)


def check_multipart_threshold(raw: Any, path: str) -> str:
    value = _one_size(raw, path)
    if not 1 <= value <= MAX_PUT:
        raise FieldError(path, 'must be 1B to %s (the largest single PUT), got %s'
                         % (format_size(MAX_PUT), shown(raw)))
    return format_size(value)


def check_range(raw: Any, path: str) -> str:
    if not isinstance(raw, str):
        raise FieldError(path, '%s is not a range: write START-END, e.g. 0-1MiB' % shown(raw))
    try:
        parse_range(raw)
    except UsageError as e:
        raise FieldError(path, str(e))
    return raw.strip()


def check_op(raw: Any, path: str) -> str:
    op = str(raw).strip().lower() if isinstance(raw, str) else ''
    if op not in ALL_OPS:
        raise FieldError(path, '%s is not an operation (use one of %s)'
                         % (shown(raw), ', '.join(ALL_OPS)))
    return op


def check_mix(raw: Any, path: str) -> Dict[str, float]:
    if isinstance(raw, dict):
        text = ','.join('%s=%s' % (k, v) for k, v in raw.items())
    elif isinstance(raw, str):
        text = raw
    else:
        raise FieldError(path, 'write it as op: weight, e.g. {get: 3, put: 1}')
    try:
        return parse_mix(text)
    except UsageError as e:
        raise FieldError(path, str(e).replace('--mix', 'mix'))


def check_placement(raw: Any, path: str) -> List[str]:
    if raw is None:
        return []
    items = raw.split(',') if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise FieldError(path, 'must be a list of hosts, got %s' % shown(raw))
    hosts: List[str] = []
    for item in items:
        host = str(item).strip() if isinstance(item, str) else ''
        if not host and isinstance(raw, str):
            continue
        if not HOST.match(host) and count_of(host) is None:
            raise FieldError(path, '%s is not a host name' % shown(item))
        if host in hosts:
            raise FieldError(path, 'host %s is given twice' % host)
        hosts.append(host)
    problem = problem_of(hosts)
    if problem:
        raise FieldError(path, problem)
    return hosts


def check_target(raw: Any, path: str) -> Target:
    """`rgw`, `ingress` or a list of URLs (text, comma separated, or a list); None: AUTO."""
    try:
        return parse_target(raw)
    except ValueError as e:
        raise FieldError(path, str(e))


def shown(raw: Any) -> str:
    if isinstance(raw, str):
        return repr(raw)
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return json.dumps(raw) if isinstance(raw, (bool, type(None), dict, list)) else str(raw)


def default_workload_name(op: str, size: str, rate: Optional[float] = None) -> str:
    """`get-4KiB`, or at a fixed rate `get-4KiB@200/s`."""
    return at_rate('%s-%s' % (op, size), rate)


def at_rate(name: str, rate: Optional[float]) -> str:
    """The name of a workload at a fixed rate: `get-4KiB` at 200 -> `get-4KiB@200/s`."""
    return name if rate is None else '%s@%s/s' % (name, format_rate(rate))


def reads_prefilled(workload: Workload) -> bool:
    """Whether the workload reads objects it prefills (its working set)."""
    return workload.op in ('get', 'head', 'list', 'delete', 'mixed')


def check_workload(workload: Workload, where: Callable[[str], str]) -> None:
    """What needs more than one field: the engine's own Job checks, warm-up within duration.

    `where(field)` names a field in messages (a document path, or an override's flag).
    """
    if workload.processes > workload.concurrency:  # 0: one per core of each agent's host
        raise FieldError(where('processes'), '%d processes are more than the concurrency %d'
                         % (workload.processes, workload.concurrency))
    check_warmup(workload.warmup_s, where('warmup'), workload.duration_s)
    sizes = SizeSpec(workload.size)
    if workload.objects is not None:
        if not reads_prefilled(workload):
            raise FieldError(where('objects'), 'only a workload that reads (get, head, list, '
                             'delete or mixed) has a working set')
        largest = workload.objects * sizes.max_size
        if largest > MAX_WORKING_SET:
            raise FieldError(where('objects'), '%d objects of %s are %s, more than the %s a '
                             'working set may have here' % (
                                 workload.objects, format_size(sizes.max_size),
                                 _gib(largest), _gib(MAX_WORKING_SET)))
    if workload.range is not None:
        if workload.op not in ('get', 'mixed'):
            raise FieldError(where('range'), 'only a workload that GETs (get or mixed) reads '
                             'a range')
        if parse_range(workload.range)[1] > sizes.min_size:
            raise FieldError(where('range'), '%s reaches past the end of the smallest '
                             'object (%s)' % (workload.range, format_size(sizes.min_size)))
    job = workload.job(endpoint='http://localhost', access_key='k', secret_key='s')
    try:
        job.validate()
    except UsageError as e:
        raise FieldError(where(''), str(e))


def _gib(n: float) -> str:
    return format_size(int(n)) if n % (1 << 30) == 0 else '%.1f GiB' % (n / float(1 << 30))


def unique_workloads(workloads: List[Workload], path: str) -> None:
    seen: List[str] = []
    for workload in workloads:
        if workload.name in seen:
            raise FieldError(path, 'workload names must be unique (%s is given twice; name '
                             'one of them)' % workload.name)
        seen.append(workload.name)
