"""Running the load: processes x threads, one schedule, figures per op.

``run_load`` runs a job whose buckets (and prefill) are ready and returns
its finalized result.  Concurrency ``C`` is split over ``P`` processes
(forked by ``pool``, so the load can use more than one core) and threads
within them (``process``); each thread owns one keep-alive connection
(``ops``) and its own figures (``measure``), paced by the run's
``schedule``.  The progress line (``progress``) is fed by every process.

Client CPU seconds of the measured window are measured in every process;
the whole run's with ``os.times()`` including reaped children.
"""

import os
import socket
import time
from typing import IO, Any, Callable, Dict, List, Optional

from .pool import on_signals, restore_signals, run_forked
from .host_stats import HostSampler
from .proc import ProcSampler
from .process import ProcessRun
from .progress import Reporter
from .result import SUMMED_ECHO, finalize, merge_results
from .schedule import Schedule
from .workload import Job, format_size


def _echo(job: Job) -> Dict[str, Any]:
    echo = _job_echo(job)
    if job.sample_only:  # it adds nothing to the totals merged with the loading agents'
        echo.update({k: 0 for k in SUMMED_ECHO})
    return echo


def _job_echo(job: Job) -> Dict[str, Any]:
    sizes = job.sizes
    return {
        "op": job.op,
        "mix": job.weights if job.op == "mixed" else None,
        "object_size": job.size if sizes.fixed is None else format_size(sizes.max_size),
        "size_bytes": sizes.fixed,
        "concurrency": job.concurrency,
        "processes": job.processes,
        "sample_only": job.sample_only,
        "duration_s": job.duration_s,
        "warmup_s": job.warmup_s,
        "ops_limit": job.ops,
        "mode": "open" if job.rate else "closed",
        "rate": job.rate,
        "buckets": job.buckets,
        "objects": job.object_count() if job.reads_prefilled else None,
        "working_set_bytes": job.working_set_bytes(),
        "range": job.range or None,
        "sse": job.sse().mode,
        "payload_signing": job.payload_signing,
        "verify": job.verify,
        "multipart_threshold": job.multipart_threshold,
        "part_size": job.part_size,
        "endpoint": job.endpoint,
        "endpoints": list(job.targets),
        "run_tag": job.run_tag,
    }


def run_load(job: Job, progress: Optional[IO[str]] = None,
             live: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
    """Run a validated job whose buckets (and prefill) are ready.

    Returns the finalized result dict.  ``processes > 1`` forks: call this
    from a plain command-line process, not from inside ceph-mgr.  ``processes``
    0 runs one per core.
    """
    job = job.with_process_count()
    start_at = job.start_at
    if start_at is None:
        start_at = time.time() + 0.2 + 0.1 * job.processes
    late = max(0.0, time.time() - start_at)
    schedule = Schedule(start_at, job.warmup_s, job.duration_s)
    sampler = ProcSampler(job.proc_names, daemons=job.proc_daemons,
                          fsid=job.proc_fsid) if job.proc_stats else None
    hosted = HostSampler(job.proc_daemons, job.proc_fsid) if job.proc_stats else None
    reporter = Reporter(job, schedule, progress, sampler, live, host_sampler=hosted)
    partials: List[Dict[str, Any]] = []
    if job.processes == 1:
        run = ProcessRun(job, 0, schedule, tick=lambda r: reporter.tick(r.live()))
        previous = on_signals(run.halt)
        try:
            partials.append(run.run())
        finally:
            restore_signals(previous)
    else:
        partials = run_forked(job, schedule, reporter)
    reporter.finish()
    fatal = [p["fatal"] for p in partials if "fatal" in p]
    if fatal:
        raise RuntimeError("a worker process failed: %s" % fatal[0])
    host = job.host_label or socket.gethostname()
    for p in partials:
        p["hosts"] = [host]
    res = merge_results(partials)
    res.update(_echo(job))
    res["start_at"] = start_at
    res["late_start_s"] = round(late, 4)
    res["interrupted"] = any(p.get("interrupted") for p in partials)
    res["server"] = {host: reporter.server} if reporter.server else {}
    t = os.times()  # this process and its reaped workers, prefill included
    res["client_cpu_total_s"] = round(t.user + t.system + t.children_user
                                      + t.children_system, 3)
    return finalize(res)
