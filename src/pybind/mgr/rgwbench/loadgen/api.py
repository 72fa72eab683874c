"""A whole run in one call, as the command line makes it.

``run_job`` validates the job, sends the preflight request, creates the
buckets, prefills what the load reads (with ``prefill`` off, checks that it
is there), runs the load and, with ``cleanup``, deletes what the run wrote,
even when the load failed.  ``cleanup_only`` checks the job and the endpoint,
then only deletes what runs with these settings left behind.  ``cli.py``
calls both; the job can also be given as a dict of ``Job`` fields::

    from rgwbench.loadgen.api import run_job
    result = run_job({"endpoint": "http://127.0.0.1:8000", "access_key": ...,
                      "secret_key": ..., "op": "get", "size": "4KiB",
                      "concurrency": 8, "duration_s": 30})

Load agents started by the mgr module do not come here: ``agent.py`` takes
the steps of ``prepare`` and ``runner`` one by one, because it reports
ready between prefill and load, starts at the time the module sends, and
leaves clean-up to the module.

With ``processes > 1`` the load forks; do that in a process of its own,
never inside ceph-mgr.
"""

import time
from typing import IO, Any, Dict, Optional, Union

from . import prepare
from .runner import run_load
from .workload import Job


def as_job(job: Union[Job, Dict[str, Any]]) -> Job:
    return job if isinstance(job, Job) else Job.from_dict(dict(job))


def run_job(job: Union[Job, Dict[str, Any]], progress: Optional[IO[str]] = None,
            do_cleanup: Optional[bool] = None) -> Dict[str, Any]:
    """Validate, preflight, create buckets, prefill, run, clean up.

    Raises ``UsageError`` (bad settings) or ``EndpointError``/``AuthError``
    (endpoint unreachable, credentials refused, set-up failed) before any
    load is sent.
    """
    job = as_job(job).validate()
    prepare.preflight(job)
    created = prepare.ensure_buckets(job)
    prefill_info: Dict[str, Any] = {}
    cleanup = job.cleanup if do_cleanup is None else do_cleanup
    result: Dict[str, Any] = {}
    try:
        if job.reads_prefilled:
            t0 = time.time()
            if job.prefill:
                count = prepare.prefill(job, progress)
                prefill_info = {"objects": count, "seconds": round(time.time() - t0, 3)}
                if count < job.object_count():  # its time ran out: read what it wrote
                    prefill_info["of"] = job.object_count()
                    job.objects = count
            else:
                prepare.check_prefilled(job)
                prefill_info = {"objects": job.object_count(), "seconds": 0.0,
                                "skipped": True}
        result = run_load(job, progress)
    finally:
        if cleanup:
            info = prepare.cleanup(job, progress)
            result["cleanup"] = info
    result["prefill"] = prefill_info
    result["buckets_created"] = created
    return result


def cleanup_only(job: Union[Job, Dict[str, Any]],
                 progress: Optional[IO[str]] = None) -> Dict[str, Any]:
    """Delete what earlier runs with these settings left behind."""
    job = as_job(job).validate()
    prepare.preflight(job)
    return prepare.cleanup(job, progress)
