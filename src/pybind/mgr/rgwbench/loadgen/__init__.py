"""rgwbench's S3 load engine: standard library only, Python 3.9+.

Files, one concern each:

* ``cli.py``/``__main__.py`` command line (``python3 .../loadgen --help``)
* ``api.py``       a whole run in one call (preflight, buckets, prefill,
                   load, clean-up)
* ``workload.py``  the job settings, sizes, op mix, key space
* ``runner.py``    the load of a job: processes x threads, its result
* ``schedule.py``  start, warm-up and measured window on the monotonic clock
* ``pool.py``      worker processes: fork, result pipes, signals
* ``board.py``     live totals the worker processes share with the parent
* ``process.py``   the threads of one process, CPU of the window, raw result
* ``measure.py``   one thread's loop: closed/open pacing, errors, figures
* ``ops.py``       one thread's S3 operations (keys, sizes, verification)
* ``progress.py``  progress line and server-side samples, once a second
* ``prepare.py``   preflight, buckets, prefill, clean-up
* ``s3.py``        S3 requests on one connection
* ``http.py``      keep-alive HTTP/1.1 client on raw sockets
* ``sigv4.py``     AWS Signature Version 4 (header based, S3 rules)
* ``payload.py``   deterministic request bodies without buffering objects
* ``sse.py``       SSE-C / SSE-KMS / SSE-S3 headers
* ``histogram.py`` mergeable log-linear latency histogram
* ``result.py``    result JSON, merging results of processes and hosts
* ``proc.py``      radosgw/haproxy CPU and RSS on this host
* ``bundle.py``    builds a single-file zipapp of the engine for agents
* ``agent.py``     a load agent run under the mgr module's control
* ``errors.py``    the engine's exceptions and their exit codes

Importing the package has no side effects and imports none of them.
"""

__version__ = "0.1.0"
