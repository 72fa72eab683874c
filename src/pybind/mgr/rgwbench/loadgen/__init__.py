"""rgwbench's S3 load engine: standard library only, Python 3.9+.

Files, one concern each:

* ``cli.py``/``__main__.py`` command line (``python3 .../loadgen --help``)
* ``api.py``       a whole run in one call (preflight, buckets, prefill,
                   load, clean-up)
* ``workload.py``  the job settings, sizes, op mix, key space
* ``runner.py``    processes x threads, schedule, closed/open loop, figures
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
* ``s3stub.py``    a small in-memory S3 server for tests and demos

Importing the package has no side effects and imports none of them.
"""

__version__ = "0.1.0"
