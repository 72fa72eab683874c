#!/usr/bin/env python3
"""The load engine against a plain boto3 client: same workload, same RGW, one run.

    bench/loadgen_vs_boto3.py --cluster-dir /tmp/bench-mem
    bench/loadgen_vs_boto3.py --endpoint http://127.0.0.1:8000 --access-key K --secret-key S

With ``--cluster-dir DIR`` and no cluster in DIR yet, the bench starts one
there itself (as root) and leaves it running for the next runs:

    qa/standalone/rgwbench/cluster start --objectstore memstore --dir DIR

then sets the options of ``BENCH_CLUSTER_CONFIG`` below in its configuration
database (less debug logging, a smaller PG log, fewer RGW and OSD worker
threads) and restarts it (``cluster stop`` and ``cluster start``; memstore
keeps its data across a clean stop).  The bench measures the clients' cost,
and on a small machine whose cores the cluster shares with both clients, a
cluster that spends less CPU per request lets the faster client show its
rate: on bluestore, 4 KiB PUTs are bound by the OSD's CPU, not by the
client.  A cluster that already exists in DIR is used as it is; end the
bench's cluster with ``qa/standalone/rgwbench/cluster stop --dir DIR``.

For 4 KiB PUT and GET at one concurrency (default 16), and for 64 MiB PUT
and GET at a lower one (default 4), it runs each client in a process of its
own, alternating which goes first, ``--repeats`` times, and prints the
medians side by side: ops/s, MiB/s, client CPU seconds in the measured
window, requests per client CPU-second, and the engine/boto3 ratios.

How each client is measured, the same way for both:

* a warm-up (``--warmup`` seconds, connections opened) is left out; the
  measured window is ``--duration`` seconds and an operation counts in it
  when it completes inside it;
* client CPU is the process CPU time (all threads, user + system) over the
  measured window, taken inside the client's process (the engine reports it
  as ``client_cpu_s``; the boto3 worker reads ``time.process_time()`` at the
  window's start and end).  The whole process's CPU, start-up and imports
  included, is taken with ``resource.getrusage(RUSAGE_CHILDREN)`` around
  each client process and printed too;
* GETs read the same prefilled objects (written once by the engine); PUTs
  write new keys into a bucket that is emptied after every run (with
  --cluster-dir, RGW's garbage collector is also run after 64 MiB PUTs, so
  that a small test OSD does not fill up); every object is deleted at the end;
* for 4 KiB, one more engine run at twice the concurrency shows whether RGW
  is saturated (ops/s that do not grow with more requests in flight are the
  server's ceiling, not the client's).

boto3 is configured as the task asks: path-style addressing,
``request_checksum_calculation``/``response_checksum_validation`` set to
``when_required`` (RGW before Squid rejects the default CRC uploads),
``max_pool_connections`` at least the concurrency, no retries; one shared
client, one ``put_object``/``get_object`` per request, a thread pool.

Traffic goes only to the given endpoint.  The script needs boto3.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LOADGEN = os.path.join(REPO, "src", "pybind", "mgr", "rgwbench", "loadgen")
CLUSTER = os.path.join(REPO, "qa", "standalone", "rgwbench", "cluster")
MIB = float(1 << 20)
KEY_PREFIX = "rgwbench/"
SIZES = {"4KiB": 4 << 10, "64MiB": 64 << 20}
# What the bench sets on a cluster it starts itself: less CPU per request on
# the cluster's side, nothing that changes what a client sends or receives.
BENCH_CLUSTER_CONFIG = [("global", "debug_" + sub, "0/0") for sub in (
    "ms", "auth", "monc", "mgrc", "osd", "objclass", "filestore", "bluestore", "bluefs",
    "bdev", "rocksdb", "objecter", "rados", "rgw", "rgw_sync", "finisher", "throttle",
    "optracker", "asok", "tp", "crypto", "heartbeatmap", "perfcounter")] + [
    ("osd", "osd_min_pg_log_entries", "100"),
    ("osd", "osd_max_pg_log_entries", "200"),
    ("osd", "osd_pg_log_dups_tracked", "200"),
    ("osd", "osd_op_num_shards", "2"),
    ("osd", "osd_op_num_threads_per_shard", "1"),
    ("client", "rgw_thread_pool_size", "32"),
]


# -- the boto3 client, run as a worker process ---------------------------------

def boto3_worker(spec: Dict[str, Any]) -> Dict[str, Any]:
    """One boto3 run: ``spec`` has endpoint, keys, op, size, concurrency,
    warmup, duration, bucket, objects (for get), tag (for put keys)."""
    import boto3
    from botocore.config import Config

    concurrency = int(spec["concurrency"])
    config = Config(request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                    s3={"addressing_style": "path"}, signature_version="s3v4",
                    max_pool_connections=max(concurrency, 10),
                    retries={"total_max_attempts": 1},
                    connect_timeout=10, read_timeout=60)
    client = boto3.client("s3", endpoint_url=spec["endpoint"],
                          aws_access_key_id=spec["access_key"],
                          aws_secret_access_key=spec["secret_key"],
                          region_name="us-east-1", config=config)
    op = spec["op"]
    size = int(spec["size"])
    bucket = spec["bucket"]
    objects = int(spec.get("objects") or 0)
    body = os.urandom(size) if op == "put" else b""
    if op == "put":
        try:
            client.create_bucket(Bucket=bucket)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
    start = time.monotonic() + 0.5
    measure = start + float(spec["warmup"])
    end = measure + float(spec["duration"])
    lock = threading.Lock()
    totals = {"ops": 0, "bytes": 0, "errors": 0, "all_ops": 0}
    latencies: List[float] = []
    samples: List[str] = []

    def loop(index: int) -> None:
        rng = random.Random(index)
        seq = 0
        ops = nbytes = errors = every = 0
        lat: List[float] = []
        while time.monotonic() < start:
            time.sleep(0.01)
        while True:
            t0 = time.monotonic()
            if t0 >= end:
                break
            got = 0
            failed = False
            try:
                if op == "put":
                    seq += 1
                    client.put_object(Bucket=bucket, Body=body,
                                      Key="%sb3/%s/%d.%d" % (KEY_PREFIX, spec["tag"], index, seq))
                    got = size
                else:
                    key = "%sobj/%08d" % (KEY_PREFIX, int(rng.random() * objects))
                    resp = client.get_object(Bucket=bucket, Key=key)
                    for chunk in resp["Body"].iter_chunks(1 << 20):
                        got += len(chunk)
            except Exception as exc:  # counted, as the engine counts its errors
                failed = True
                with lock:
                    if len(samples) < 3:
                        samples.append("%s: %s" % (type(exc).__name__, exc))
            t1 = time.monotonic()
            every += not failed
            if measure <= t1 <= end:
                if failed:
                    errors += 1
                else:
                    ops += 1
                    nbytes += got
                    lat.append(t1 - t0)
        with lock:
            totals["ops"] += ops
            totals["bytes"] += nbytes
            totals["errors"] += errors
            totals["all_ops"] += every
            latencies.extend(lat)

    pool = ThreadPoolExecutor(max_workers=concurrency)
    futures = [pool.submit(loop, i) for i in range(concurrency)]
    while time.monotonic() < measure:
        time.sleep(min(0.05, max(0.0, measure - time.monotonic())))
    cpu0 = time.process_time()
    # With many threads this one may get the interpreter late: how late it read the CPU
    late = time.monotonic() - measure
    while time.monotonic() < end:
        time.sleep(min(0.05, max(0.0, end - time.monotonic())))
    cpu1 = time.process_time()
    late = max(late, time.monotonic() - end)
    for f in futures:
        f.result()
    pool.shutdown()
    latencies.sort()
    elapsed = end - measure

    def pct(p: float) -> Optional[float]:
        if not latencies:
            return None
        return round(latencies[min(len(latencies) - 1, int(p / 100.0 * len(latencies)))]
                     * 1000.0, 3)

    return {"ops": totals["ops"], "bytes": totals["bytes"], "errors": totals["errors"],
            "elapsed_s": elapsed, "client_cpu_s": cpu1 - cpu0, "cpu_read_late_s": late,
            "all_ops": totals["all_ops"],
            "ops_per_s": totals["ops"] / elapsed,
            "throughput_mib_s": totals["bytes"] / MIB / elapsed,
            "latency_ms": {"mean": round(statistics.mean(latencies) * 1000.0, 3)
                           if latencies else None, "p50": pct(50), "p99": pct(99)},
            "error_samples": samples}


# -- running the clients as child processes -------------------------------------

def run_child(argv: List[str], timeout: float) -> Tuple[Dict[str, Any], float]:
    """Run a client process; its JSON result and its whole CPU time (rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    whole = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit("bench: %s failed (exit %d): %s" % (
            os.path.basename(argv[1]), proc.returncode,
            (proc.stderr.strip().splitlines() or ["no output"])[-1]))
    return json.loads(proc.stdout.strip().splitlines()[-1]), whole


class Bench:
    def __init__(self, args: argparse.Namespace, endpoint: str, access: str,
                 secret: str) -> None:
        self.args = args
        self.endpoint = endpoint
        self.access = access
        self.secret = secret
        self.tag = "%x" % random.getrandbits(32)

    def bucket_prefix(self, op: str, size: str) -> str:
        """GETs read one prefilled bucket; PUTs write into one emptied after each run."""
        return "lgvb3-%s-%s-%s" % ("put" if op == "put" else "get", size.lower(), self.tag)

    def engine_argv(self, op: str, size: str, concurrency: int, extra: List[str]) -> List[str]:
        return [sys.executable, LOADGEN, "--endpoint", self.endpoint,
                "--access-key=" + self.access, "--secret-key=" + self.secret,
                "--op", op, "--size", size, "--concurrency", str(concurrency),
                "--bucket-prefix", self.bucket_prefix(op, size), "--key-prefix", KEY_PREFIX,
                "--no-proc-stats", "--json"] + extra

    def objects_for(self, size: str) -> int:
        return 8 if SIZES[size] >= 16 << 20 else 1000

    def prefill(self, size: str, concurrency: int) -> None:
        """The objects GET reads, written once by the engine."""
        argv = self.engine_argv("get", size, concurrency,
                                ["--objects", str(self.objects_for(size)),
                                 "--ops", str(concurrency)])
        run_child(argv, 1800)

    def engine(self, op: str, size: str, concurrency: int, duration: float) -> Dict[str, Any]:
        extra = ["--duration", str(duration), "--warmup", str(self.args.warmup)]
        if op == "get":
            extra += ["--no-prefill", "--objects", str(self.objects_for(size))]
        res, whole = run_child(self.engine_argv(op, size, concurrency, extra),
                               duration + 600)
        return {"ops": res["ops"], "errors": res["errors"], "bytes": res["bytes"],
                "elapsed_s": res["elapsed_s"], "client_cpu_s": res["client_cpu_s"],
                "ops_per_s": res["ops_per_s"], "throughput_mib_s": res["throughput_mib_s"],
                "latency_ms": {k: res["latency_ms"][k] for k in ("mean", "p50", "p99")},
                "error_samples": res.get("error_samples", []), "whole_cpu_s": whole}

    def boto3(self, op: str, size: str, concurrency: int, duration: float) -> Dict[str, Any]:
        spec = {"endpoint": self.endpoint, "access_key": self.access,
                "secret_key": self.secret, "op": op, "size": SIZES[size],
                "concurrency": concurrency, "warmup": self.args.warmup,
                "duration": duration, "bucket": self.bucket_prefix(op, size) + "-0",
                "objects": self.objects_for(size), "tag": self.tag}
        res, whole = run_child([sys.executable, os.path.abspath(__file__),
                                "--boto3-worker", json.dumps(spec)], duration + 600)
        res["whole_cpu_s"] = whole
        return res

    def cleanup(self, op: str, size: str) -> None:
        """Delete a bucket's objects and the bucket (engine --cleanup-only).

        RGW frees the tails of deleted large objects only when its garbage
        collector runs (after rgw_gc_obj_min_wait, 2 h by default); with
        --cluster-dir the collector is run at once, so that repeated 64 MiB
        PUT runs do not fill a small test OSD.
        """
        argv = self.engine_argv(op, size, 4, ["--cleanup-only"])
        try:
            run_child(argv, 1800)
        except SystemExit as exc:
            sys.stderr.write("%s (clean-up)\n" % exc)
        if self.args.cluster_dir and SIZES[size] > 4 << 20:
            subprocess.run([CLUSTER, "radosgw-admin", "--dir", self.args.cluster_dir, "--",
                            "gc", "process", "--include-all"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=600)


def median(values: List[float]) -> float:
    return statistics.median(values) if values else 0.0


def per_cpu(r: Dict[str, Any]) -> float:
    return r["ops"] / r["client_cpu_s"] if r["client_cpu_s"] > 0 else 0.0


def ratio(a: float, b: float) -> str:
    return "%.2fx" % (a / b) if b > 0 else "-"


def report(title: str, runs: Dict[str, List[Dict[str, Any]]], small: bool,
           ceiling: Optional[Tuple[int, Dict[str, Any]]] = None) -> Dict[str, Any]:
    e, b = runs["engine"], runs["boto3"]
    out: Dict[str, Any] = {"case": title}
    rows = [("ops/s", "ops_per_s", "%.1f"), ("MiB/s", "throughput_mib_s", "%.2f"),
            ("client CPU s (window)", "client_cpu_s", "%.3f"),
            ("client CPU s (whole process)", "whole_cpu_s", "%.3f"),
            ("latency mean ms", None, "%.2f"), ("latency p99 ms", None, "%.2f")]
    print("\n%s" % title)
    header = ("median of %d runs" % len(e), "engine", "boto3", "ratio")
    print("  %-34s %12s %12s %9s" % header)
    for label, key, fmt in rows:
        if key is None:
            which = "mean" if "mean" in label else "p99"
            ev = median([r["latency_ms"][which] or 0.0 for r in e])
            bv = median([r["latency_ms"][which] or 0.0 for r in b])
        else:
            ev = median([float(r[key]) for r in e])
            bv = median([float(r[key]) for r in b])
        print("  %-34s %12s %12s %9s" % (label, fmt % ev, fmt % bv, ratio(ev, bv)))
        out[label] = {"engine": ev, "boto3": bv}
    ec, bc = median([per_cpu(r) for r in e]), median([per_cpu(r) for r in b])
    print("  %-34s %12.0f %12.0f %9s" % ("requests per client CPU-second", ec, bc,
                                         ratio(ec, bc)))
    out["requests per client CPU-second"] = {"engine": ec, "boto3": bc}
    errors = sum(r["errors"] for r in e + b)
    print("  %-34s %12s %12s" % ("errors (all runs)", sum(r["errors"] for r in e),
                                 sum(r["errors"] for r in b)))
    for name, rs in runs.items():
        print("  runs %-6s ops/s: %s  req/CPU-s: %s" % (
            name, " ".join("%.1f" % r["ops_per_s"] for r in rs),
            " ".join("%.0f" % per_cpu(r) for r in rs)))
        for r in rs:
            for s in r.get("error_samples") or []:
                print("    e.g. %s" % s)
    if small:
        cpu_ok = bc > 0 and ec / bc >= 8.0
        ops_ok = out["ops/s"]["boto3"] > 0 and \
            out["ops/s"]["engine"] / out["ops/s"]["boto3"] >= 3.0
        print("  bar: requests/CPU-s >= 8x: %s;  ops/s >= 3x: %s" % (
            "met" if cpu_ok else "NOT met", "met" if ops_ok else "NOT met"))
        out["bar"] = {"cpu_8x": cpu_ok, "ops_3x": ops_ok}
    if ceiling is not None:
        conc, res = ceiling
        print("  server ceiling check: the engine at concurrency %d did %.1f ops/s "
              "(%.2fx its median at the concurrency above)" % (
                  conc, res["ops_per_s"], res["ops_per_s"] / out["ops/s"]["engine"]
                  if out["ops/s"]["engine"] else 0.0))
        out["ceiling"] = {"concurrency": conc, "engine_ops_per_s": res["ops_per_s"]}
    out["errors"] = errors
    out["runs"] = runs
    return out


def cluster_tool(command: str, directory: str, *args: str, timeout: float = 900) -> str:
    proc = subprocess.run([CLUSTER, command, "--dir", directory] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit("bench: cluster %s: %s" % (command, proc.stderr.strip()))
    return proc.stdout


def start_bench_cluster(directory: str, *start_args: str) -> None:
    """A memstore cluster in an empty DIR, tuned with BENCH_CLUSTER_CONFIG.

    start_args: more arguments of `cluster start` (``--hosts 3``, say).
    """
    if os.geteuid() != 0:
        raise SystemExit("bench: no cluster in %s, and starting one needs root" % directory)
    print("starting a memstore cluster in %s ..." % directory)
    cluster_tool("start", directory, "--objectstore", "memstore", *start_args)
    for who, name, value in BENCH_CLUSTER_CONFIG:
        cluster_tool("ceph", directory, "--", "config", "set", who, name, value, timeout=120)
    # Thread counts are read at start-up.
    cluster_tool("stop", directory)
    cluster_tool("start", directory)
    print("started; end it with: %s stop --dir %s" % (os.path.relpath(CLUSTER), directory))


def resolve(args: argparse.Namespace) -> Tuple[str, str, str]:
    if args.cluster_dir:
        if not os.path.exists(os.path.join(args.cluster_dir, "cluster.json")):
            start_bench_cluster(args.cluster_dir)
        proc = subprocess.run([CLUSTER, "s3-endpoints", "--dir", args.cluster_dir],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
        if proc.returncode != 0:
            raise SystemExit("bench: cluster s3-endpoints: %s" % proc.stderr.strip())
        info = json.loads(proc.stdout)
        return info["url"], info["access_key"], info["secret_key"]
    if not (args.endpoint and args.access_key and args.secret_key):
        raise SystemExit("bench: give --cluster-dir DIR, or --endpoint, --access-key "
                         "and --secret-key")
    return args.endpoint, args.access_key, args.secret_key


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint")
    p.add_argument("--access-key")
    p.add_argument("--secret-key")
    p.add_argument("--cluster-dir", help="a local cluster (reads `cluster s3-endpoints`); "
                   "with no cluster there yet, the bench starts a tuned memstore one and leaves "
                   "it running")
    p.add_argument("--duration", type=float, help="measured seconds per run (default 10, "
                   "--quick 4)")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds left out (default 1)")
    p.add_argument("--repeats", type=int, help="runs of each client per case "
                   "(default 3, --quick 1)")
    p.add_argument("--concurrency", type=int, default=16, help="for 4 KiB (default 16)")
    p.add_argument("--large-concurrency", type=int, default=4,
                   help="for 64 MiB (default 4)")
    p.add_argument("--skip-large", action="store_true", help="4 KiB cases only")
    p.add_argument("--no-ceiling", action="store_true",
                   help="skip the extra engine run at twice the concurrency that shows "
                   "whether RGW is saturated")
    p.add_argument("--quick", action="store_true", help="shorter: --duration 4 --repeats 1")
    p.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    p.add_argument("--boto3-worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.boto3_worker:
        print(json.dumps(boto3_worker(json.loads(args.boto3_worker))))
        return 0
    try:
        import boto3  # noqa: F401  (checked before anything is sent)
    except ImportError:
        raise SystemExit("bench: boto3 is not installed (pip install boto3)")
    duration = args.duration or (4.0 if args.quick else 10.0)
    repeats = args.repeats or (1 if args.quick else 3)
    endpoint, access, secret = resolve(args)
    bench = Bench(args, endpoint, access, secret)
    cases = [("put", "4KiB", args.concurrency), ("get", "4KiB", args.concurrency)]
    if not args.skip_large:
        cases += [("put", "64MiB", args.large_concurrency),
                  ("get", "64MiB", args.large_concurrency)]
    print("engine vs boto3 %s against %s: %g s measured after %g s warm-up, %d run(s) "
          "of each client per case, alternating which goes first; client CPU over the "
          "measured window" % (getattr(__import__("boto3"), "__version__", "?"), endpoint,
                               duration, args.warmup, repeats))
    if args.cluster_dir:
        info = json.loads(cluster_tool("info", args.cluster_dir, timeout=60))
        print("cluster %s: %s, %s OSD(s)" % (
            args.cluster_dir, info.get("release"), info.get("objectstore", "bluestore")))
    sizes = sorted({size for _, size, _ in cases}, key=lambda s: SIZES[s])
    results = []
    try:
        for size in sizes:
            conc = max(c for op, s, c in cases if s == size)
            print("prefilling %d objects of %s ..." % (bench.objects_for(size), size))
            bench.prefill(size, conc)
        for op, size, conc in cases:
            runs: Dict[str, List[Dict[str, Any]]] = {"engine": [], "boto3": []}
            for i in range(repeats):
                order = ["engine", "boto3"] if i % 2 == 0 else ["boto3", "engine"]
                for name in order:
                    fn = bench.engine if name == "engine" else bench.boto3
                    res = fn(op, size, conc, duration)
                    runs[name].append(res)
                    if op == "put":
                        bench.cleanup(op, size)
                    sys.stderr.write("  %s %s %s c%d run %d: %.1f ops/s, %.2f MiB/s, "
                                     "CPU %.2f s, %d errors\n" % (
                                         op, size, name, conc, i + 1, res["ops_per_s"],
                                         res["throughput_mib_s"], res["client_cpu_s"],
                                         res["errors"]))
            small = SIZES[size] < (1 << 20)
            ceiling = None
            if small and not args.no_ceiling:
                # Twice the requests in flight: if ops/s stays, RGW is the limit.
                ceiling = (2 * conc, bench.engine(op, size, 2 * conc, duration))
                if op == "put":
                    bench.cleanup(op, size)
            title = "%s %s, concurrency %d" % (size, op.upper(), conc)
            results.append(report(title, runs, small, ceiling))
    finally:
        for size in sizes:
            bench.cleanup("get", size)
            bench.cleanup("put", size)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"endpoint": endpoint, "duration_s": duration, "repeats": repeats,
                       "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
