#!/usr/bin/env python3
"""One agent with one load engine process against one agent with a process per core.

    bench/agent_processes.py --cluster-dir /tmp/bench-hosts3

A real `ceph rgwbench load` of 4 KiB GETs from one agent, placed by the
orchestrator on host 2 of a three-host local cluster (every host runs an
RGW, and the agent's workers spread over all three), run with
``--processes 1`` and with ``--processes 0`` (one engine process per core of
the agent's host, at most ``agent_processes_max``), alternating which goes
first, ``--repeats`` times. It prints the medians side by side: ops/s, the
agent's CPU in cores over the measured window (the engine's ``client_cpu_s``
over its ``elapsed_s``), ops per agent CPU-second, and the ratios of the
per-core run to the single-process one.

With no cluster in DIR yet the bench starts one there (as root: ``cluster
start --hosts 3 --objectstore memstore``, tuned as loadgen_vs_boto3.py tunes
its cluster) and leaves it running for the next runs; end it with
``qa/standalone/rgwbench/cluster stop --dir DIR``.

On a machine of few cores that runs the whole cluster, the agent, the RGWs
and the OSD share those cores: a gain from more processes shows the engine
was the limit; none shows the cluster was.
"""
import argparse
import json
import os
import subprocess
import time
from typing import Any, Dict, List, Optional

from loadgen_vs_boto3 import CLUSTER, cluster_tool, median, ratio, start_bench_cluster

MODES = {"1 process": "1", "per core": "0"}


def ceph(directory: str, *args: str, stdin: Optional[str] = None) -> str:
    proc = subprocess.run([CLUSTER, "ceph", "--dir", directory, "--"] + list(args),
                          input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit("bench: ceph %s: %s" % (" ".join(args), proc.stderr.strip()))
    return proc.stdout


def prepare(directory: str) -> str:
    """The cluster (started if need be) with its test user's keys stored; the agent's host."""
    if not os.path.exists(os.path.join(directory, "cluster.json")):
        start_bench_cluster(directory, "--hosts", "3")
    info = json.loads(cluster_tool("info", directory))
    if len(info["hosts"]) < 2:
        raise SystemExit("bench: %s has %d host(s); it needs three (--hosts 3)"
                         % (directory, len(info["hosts"])))
    s3 = json.loads(cluster_tool("s3-endpoints", directory))
    ceph(directory, "rgwbench", "credentials", "set", "-i", "-",
         stdin=json.dumps({"access_key": s3["access_key"], "secret_key": s3["secret_key"]}))
    return str(info["hosts"][1]["name"])


def one_load(directory: str, host: str, processes: str, args: argparse.Namespace
             ) -> Dict[str, Any]:
    load_id = ceph(directory, "rgwbench", "load", "--op", "get", "--size", "4KiB",
                   "--concurrency", str(args.concurrency), "--processes", processes,
                   "--duration", str(args.duration), "--warmup", str(args.warmup),
                   "--placement", host).strip()
    deadline = time.monotonic() + args.duration * 10 + 300
    while True:
        record = json.loads(ceph(directory, "rgwbench", "load", "show", load_id, "-f",
                                 "json"))
        if record["state"] != "running":
            break
        if time.monotonic() > deadline:
            raise SystemExit("bench: load %s still running" % load_id)
        time.sleep(2)
    if record["state"] != "complete" or not record.get("result"):
        raise SystemExit("bench: load %s %s: %s"
                         % (load_id, record["state"], record.get("error")))
    result: Dict[str, Any] = record["result"]
    if result["errors"]:
        raise SystemExit("bench: load %s had %d errors" % (load_id, result["errors"]))
    return result


def cores(r: Dict[str, Any]) -> float:
    return r["client_cpu_s"] / r["elapsed_s"] if r["elapsed_s"] else 0.0


def per_cpu(r: Dict[str, Any]) -> float:
    return r["ops"] / r["client_cpu_s"] if r["client_cpu_s"] else 0.0


def report(runs: Dict[str, List[Dict[str, Any]]]) -> None:
    rows = [("processes", lambda r: float(r["processes"]), "%.0f"),
            ("ops/s", lambda r: float(r["ops_per_s"]), "%.0f"),
            ("agent CPU cores", cores, "%.2f"),
            ("ops per agent CPU-s", per_cpu, "%.0f"),
            ("p99 ms", lambda r: float(r["latency_ms"]["p99"]), "%.1f")]
    names = list(MODES)
    print("%-22s %12s %12s %8s" % ("median of %d" % len(runs[names[0]]), names[0],
                                   names[1], "ratio"))
    for title, figure, fmt in rows:
        a = median([figure(r) for r in runs[names[0]]])
        b = median([figure(r) for r in runs[names[1]]])
        print("%-22s %12s %12s %8s" % (title, fmt % a, fmt % b, ratio(b, a)))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cluster-dir", default="/tmp/rgwbench-bench-hosts3")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    host = prepare(args.cluster_dir)
    print("one agent on %s, 4 KiB GET, concurrency %d, %d s after %d s of warm-up"
          % (host, args.concurrency, args.duration, args.warmup))
    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in MODES}
    for repeat in range(args.repeats):
        order = list(MODES) if repeat % 2 == 0 else list(reversed(MODES))
        for name in order:
            result = one_load(args.cluster_dir, host, MODES[name], args)
            runs[name].append(result)
            print("  %-10s %d processes: %8.0f ops/s, agent %.2f cores" % (
                name, result["processes"], result["ops_per_s"], cores(result)), flush=True)
    report(runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
