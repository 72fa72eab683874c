"""What a workload's own figures say about it: too many errors, or agents that were the limit.

Read from each agent's result once the workload is over, so they cost the load
nothing. An agent whose engine processes were busy (or runnable, waiting for a core)
most of the measured window measured the client as much as RGW: more
requests would not have been sent faster, so the figures say little about
what RGW can do.
"""
from typing import Any, List, Mapping, Optional

from ..loadgen.workload import Job
from .finding import Finding, Level

ERROR_RATE = 0.001      # above 0.1 % of requests failing, the figures are not the cluster's
BUSY_SHARE = 0.8        # of each engine process's core over the measured window
# Waiting, runnable, for a core this share of the window: the client's own delay is
# in every latency, however little CPU it got to use.
WAIT_SHARE = 0.5
# Open loop: fewer requests than this share of those due at the rate were sent in the
# measured window.
RATE_HELD = 0.9


def measured_findings(results: Mapping[str, Mapping[str, Any]],
                      job: Optional[Job] = None) -> List[Finding]:
    """Findings from each agent's result (agent name to its engine result) of `job`."""
    return _errors(results) + _busy_agents(results) + _rate_not_held(results) + \
        _prefill_cut_short(results, job or Job())


def _rate_not_held(results: Mapping[str, Mapping[str, Any]]) -> List[Finding]:
    """Open loop: agents that sent clearly fewer requests than were due in the window.

    What the cluster does past what it serves is worth measuring (a `rates`
    curve's top), so this informs: the figures are true, of a queue.
    """
    behind = []
    for agent, result in sorted(results.items()):
        if result.get('sample_only') or result.get('mode') != 'open' or not result.get('rate'):
            continue
        rate, elapsed = float(result['rate']), float(result.get('elapsed_s') or 0.0)
        held = _held(rate, elapsed, result)
        if held:
            behind.append('agent %s: %s' % (agent, held))
            continue
        # Each target is due its own share (a slow RGW's requests wait for it): one can
        # fall behind while the agent's other targets keep the agent's total up.
        concurrency = max(1, int(result.get('concurrency') or 1))
        targets = result.get('targets') or []
        if len(targets) < 2:   # one target: its share is the agent's
            continue
        for target in targets:
            held = _held(rate * int(target.get('workers') or 0) / concurrency, elapsed, target)
            if held:
                behind.append('agent %s, target %s: %s' % (agent, target.get('url'), held))
    if not behind:
        return []
    return [Finding(
        id='rate-not-held', level=Level.info,
        summary='an open-loop workload sent fewer than %d %% of the requests due at its rate '
                '(to an agent, or to one of its targets): '
                'the cluster or the agents could not keep it, and its latencies, which count '
                'from when each request was due, include the queue that grew' % (
                    100 * RATE_HELD),
        evidence=tuple(behind),
        fix='nothing, if the rate was meant to be more than the cluster serves (the top of a '
            '`rates` curve); else a lower rate, more concurrency, or more agents if one was '
            'also client-bound')]


def _held(rate: float, elapsed: float, sent_by: Mapping[str, Any]) -> Optional[str]:
    """What was sent against what was due, when clearly fewer (None: the rate was held)."""
    due = rate * elapsed
    sent = int(sent_by.get('ops') or 0) + int(sent_by.get('errors') or 0)
    if due < 1 or sent >= RATE_HELD * due:
        return None
    return '%d of %.0f requests due at %g ops/s in %.0f s (%.0f %%)' % (
        sent, due, rate, elapsed, 100.0 * sent / due)


def _prefill_cut_short(results: Mapping[str, Mapping[str, Any]],
                       job: Job) -> List[Finding]:
    planned = job.objects
    if not job.prefill_s or not planned:
        return []
    loading = [r for r in results.values() if not r.get('sample_only')]
    written = sum(int(r.get('objects') or 0) for r in loading)
    if not loading or written >= planned:
        return []
    held = sum(int(r.get('working_set_bytes') or 0) for r in loading)
    return [Finding(
        id='prefill-time-ran-out', level=Level.info,
        summary='the prefill wrote fewer objects than the working set sized from the caches '
                'in the time it had: the GETs read what it wrote',
        evidence=('%d of %d objects written in %g s (%.1f MiB read by the GETs)' % (
            written, planned, job.prefill_s, held / float(1 << 20)),),
        fix='ceph config set mgr mgr/rgwbench/prefill_time <seconds> (a longer prefill), '
            'or `objects` in the workload')]


def _errors(results: Mapping[str, Mapping[str, Any]]) -> List[Finding]:
    ops = sum(int(r.get('ops') or 0) for r in results.values())
    errors = sum(int(r.get('errors') or 0) for r in results.values())
    if not errors or errors / float(ops + errors) <= ERROR_RATE:
        return []
    share = 100.0 * errors / (ops + errors)
    evidence = ['%d of %d requests failed (%.2f %%)' % (errors, ops + errors, share)]
    for agent, result in sorted(results.items()):
        classes = result.get('errors_by_class') or {}
        if classes:
            evidence.append('agent %s: %s' % (agent, ', '.join(
                '%s %s' % (n, kind) for kind, n in sorted(classes.items()))))
    return [Finding(
        id='error-rate', level=Level.skews,
        summary='more than %.1f %% of the requests failed: the figures count failures that '
                'are not the cluster serving the load' % (100 * ERROR_RATE),
        evidence=tuple(evidence),
        fix='ceph rgwbench results show <run> -f json (errors_by_class), and the RGW log')]


def _busy_agents(results: Mapping[str, Mapping[str, Any]]) -> List[Finding]:
    busy = []
    for agent, result in sorted(results.items()):
        if result.get('sample_only'):  # it sent no load
            continue
        elapsed = float(result.get('elapsed_s') or 0.0)
        cpu = float(result.get('client_cpu_s') or 0.0)
        # Runnable but not running: a host whose cores are taken, or a CPU quota.
        wait = float(result.get('client_wait_s') or 0.0)
        processes = max(1, int(result.get('processes') or 1))
        if elapsed > 0 and ((cpu + wait) / elapsed / processes > BUSY_SHARE or
                            wait / elapsed / processes > WAIT_SHARE):
            busy.append('agent %s: %.2f cores for %d engine process%s over %.0f s%s' % (
                agent, cpu / elapsed, processes, '' if processes == 1 else 'es', elapsed,
                ', and its threads %.1f s waiting for a core' % wait
                if wait >= 0.05 * elapsed else ''))
    if not busy:
        return []
    return [Finding(
        id='client-bound-agent', level=Level.skews,
        summary='an agent\'s engine processes were busy, or waiting for a core, more than '
                '%d %% of the measured window (or waited more than %d %% of it): the load '
                'measured the client as much as RGW' % (100 * BUSY_SHARE, 100 * WAIT_SHARE),
        evidence=tuple(busy),
        fix='run the workload with processes 0 (one per core of each agent\'s host) or with '
            'more agents (the default placement on every RGW host, or more hosts); an '
            'agent that waited for a core needs a host with cores to spare (no CPU quota, '
            'fewer other processes)')]
