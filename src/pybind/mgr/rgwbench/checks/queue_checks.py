"""A workload that sends an RGW daemon more requests at once than it takes in.

What bounds the requests an RGW daemon works on at once depends on its frontend:

- beast runs each request as a coroutine on its `rgw_thread_pool_size`
  threads, yielding while it waits on RADOS, so the thread count is not a
  bound on requests in flight. Its request scheduler (`rgw_scheduler_type`
  `throttler`, the default) admits at most `rgw_max_concurrent_requests`;
  a request beyond that is answered 503 SlowDown at once.
- civetweb (Pacific and Quincy) serves one request per thread: at most
  `rgw_thread_pool_size` (or the frontend's `num_threads`), the others wait
  for a thread.

Either way, past the bound the figures measure RGW's admission (refusals,
or a queue), not the cluster serving the load. The engine's workers go
round-robin over the targets, so each daemon gets its share of the
concurrency: ceil(concurrency / daemons).
"""
import math
from typing import List, Optional, Sequence, Tuple

from ..profiles import Workload
from .facts import ConfigEntry, Daemon, Facts
from .finding import Finding, Level


def _whole(text: Optional[str]) -> Optional[int]:
    try:
        return int(str(text).strip())
    except ValueError:
        return None


def _frontend(facts: Facts, daemon: Daemon) -> str:
    if daemon.frontends:
        return daemon.frontends[0]
    return facts.value('rgw_frontends', daemon) or 'beast'


def _set_where(entry: Optional[ConfigEntry]) -> str:
    return 'section %s' % entry.who if entry is not None else 'the default'


def limit(facts: Facts, daemon: Daemon) -> Optional[Tuple[int, str, str]]:
    """(requests at once, what sets it, its option) for one RGW daemon; None: unbounded
    or unknown (beast with another scheduler, another frontend)."""
    frontend = _frontend(facts, daemon)
    kind = frontend.split()[0] if frontend.split() else ''
    if kind == 'beast':
        scheduler = (facts.value('rgw_scheduler_type', daemon) or 'throttler').strip()
        if scheduler != 'throttler':
            return None
        option = 'rgw_max_concurrent_requests'
    elif kind == 'civetweb':
        for arg in frontend.split()[1:]:
            key, _, value = arg.partition('=')
            threads = _whole(value) if key == 'num_threads' else None
            if threads:
                return threads, 'num_threads = %d (in rgw_frontends)' % threads, 'num_threads'
        option = 'rgw_thread_pool_size'
    else:
        return None
    bound = _whole(facts.value(option, daemon))
    if not bound or bound <= 0:
        return None
    return bound, '%s = %d (%s)' % (option, bound, _set_where(facts.effective(option, daemon))), \
        option


def per_daemon(workload: Workload, daemons: int) -> int:
    return int(math.ceil(workload.concurrency / float(max(1, daemons))))


def queue_throttled(facts: Facts, workload: Workload, load: bool = False) -> List[Finding]:
    daemons = facts.rgw_or_generic()
    each = per_daemon(workload, len(facts.rgws))
    evidence, fixes = [], []
    for daemon in daemons:
        found = limit(facts, daemon)
        if found is None or each <= found[0]:
            continue
        bound, said, option = found
        evidence.append('%s (%s): %s' % (daemon.label, _frontend(facts, daemon).split()[0],
                                         said))
        entry = facts.effective(option, daemon)
        who = entry.who if entry is not None else 'client.rgw'
        if option == 'rgw_max_concurrent_requests':
            fixes.append('ceph config set %s rgw_max_concurrent_requests %d' % (who, each))
        elif option == 'rgw_thread_pool_size':
            fixes.append('ceph config set %s rgw_thread_pool_size %d; ceph orch daemon '
                         'restart %s' % (who, each, daemon.label))
        else:
            fixes.append('num_threads=%d in rgw_frontends of %s' % (each, daemon.label))
    if not evidence:
        return []
    name = 'the load' if load else 'workload %s' % workload.name
    lower = 'a lower --concurrency' if load else \
        'a lower concurrency (or concurrency_per_rgw) in workload %s' % workload.name
    return [Finding(
        id='rgw-queue-throttled', level=Level.skews,
        summary='a workload sends each RGW daemon more requests at once than it admits: '
                'the figures measure RGW turning requests away or queueing them, not the '
                'cluster serving them',
        evidence=('%s: %d requests in flight over %d RGW daemon%s = %d per daemon' % (
            name, workload.concurrency, max(1, len(facts.rgws)),
            '' if len(facts.rgws) == 1 else 's', each),) + tuple(evidence),
        fix='; '.join(list(dict.fromkeys(fixes)) + ['or %s' % lower]),
        workload=None if load else workload.name)]


def queue_findings(facts: Facts, workloads: Sequence[Workload],
                   load: bool = False) -> List[Finding]:
    found: List[Finding] = []
    for workload in workloads:
        found += queue_throttled(facts, workload, load)
    return found


def uneven_spread(workload: Workload, targets: int, load: bool = False) -> List[Finding]:
    """A concurrency the targets do not divide: some get one request in flight more than
    the others, and their figures differ by that (24 over 9 RGWs: six get 3, three get
    2, and their ops differed by 35 %)."""
    if targets < 2 or workload.concurrency % targets == 0:
        return []
    fewer, more = workload.concurrency // targets, workload.concurrency // targets + 1
    with_more = workload.concurrency % targets
    even = more * targets
    name = 'the load' if load else 'workload %s' % workload.name
    return [Finding(
        id='uneven-concurrency', level=Level.info,
        summary='a workload\'s requests in flight do not divide evenly over its targets: '
                'some serve one request at once more than the others, so their figures '
                '(each RGW\'s ops, CPU, latency) differ by that and are not comparable',
        evidence=('%s: %d requests in flight over %d targets: %d get %d, %d get %d' % (
            name, workload.concurrency, targets, with_more, more, targets - with_more,
            fewer),),
        fix='%s %d (a multiple of %d)%s' % (
            '--concurrency' if load else 'concurrency', even, targets,
            '' if load else ', or concurrency_per_rgw, in workload %s' % workload.name),
        workload=None if load else workload.name)]
