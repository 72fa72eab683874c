#!/usr/bin/env python3
"""What one request costs the client: the engine as it was, the engine now, boto3.

    bench/engine_cost.py                       # 4 KiB PUT and GET at c=16 and c=1024
    bench/engine_cost.py --before REF --duration 10 --repeats 3 --json out.json

In one run, side by side, for 4 KiB PUT and GET at each ``--concurrency``
(default 16 and 1024): requests per client CPU-second of

* the engine as it was: ``src/pybind/mgr/rgwbench/loadgen`` at git ``--before``
  (by default the last commit before the one-thread reactor), taken from git
  into a temporary folder for this run and deleted after it;
* the engine of this work tree;
* boto3 (the worker of ``loadgen_vs_boto3.py``: one shared client, a thread
  per request in flight).

warp is not run: the project does not install it (and never fetches it).

The server is ``instant_s3.py``, in processes of its own (its CPU is not
the clients'), answering every request at once, so that the figure is the
client's cost and not the server's.  Each client runs in a process of its
own, in turn (the order rotates between repeats); a warm-up is left out and
an operation counts when it completes inside the measured window.  Client
CPU is the process's CPU time (user + system, all threads) over that window,
read inside the client (``time.process_time``); the whole process's CPU,
start-up and set-up included, is read with ``getrusage(RUSAGE_CHILDREN)`` and
printed too (boto3 counts every request it made for it).  Where a client could
not read its CPU at the window's ends (boto3's reading thread, among a thousand
others, can get the interpreter seconds late), its figure is the whole
process's, and the table says so.  The figure is requests / client CPU-second,
the median of the
repeats; the ratios are printed, and whether the engine reaches
``--target`` (default 20,000) in every case.

boto3 must be importable by the Python that runs this script.
"""

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from loadgen_vs_boto3 import median, per_cpu, ratio, run_child

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LOADGEN_PATH = "src/pybind/mgr/rgwbench/loadgen"
SERVER = os.path.join(HERE, "instant_s3.py")
VS_BOTO3 = os.path.join(HERE, "loadgen_vs_boto3.py")
# The engine before it drove a process's connections from one thread.
BEFORE = "c8de853f9b08e5efcd1861737dd932b0e1bbd2ce"
SIZE = 4096
CLIENTS = ("before", "now", "boto3")


def engine_before(ref: str, into: str) -> str:
    """The engine's folder at git ``ref``, unpacked under ``into``."""
    archive = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", ref, LOADGEN_PATH],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if archive.returncode != 0:
        raise SystemExit("bench: git archive %s: %s" % (
            ref, archive.stderr.decode("utf-8", "replace").strip()))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into)
    return os.path.join(into, LOADGEN_PATH)


class Server:
    """instant_s3.py in processes of its own, until ``stop``."""

    def __init__(self, processes: int) -> None:
        self.proc = subprocess.Popen([sys.executable, SERVER, "--object-size", str(SIZE),
                                      "--processes", str(processes)],
                                     stdout=subprocess.PIPE, universal_newlines=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise SystemExit("bench: the S3 server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Clients:
    """Runs one client, one case, in a process of its own."""

    def __init__(self, *, url: str, before: str, warmup: float, duration: float) -> None:
        self.url = url
        self.loadgen = {"before": before, "now": os.path.join(REPO, LOADGEN_PATH)}
        self.warmup = warmup
        self.duration = duration
        self.tag = "%x" % random.getrandbits(32)

    def engine(self, which: str, op: str, concurrency: int) -> Dict[str, Any]:
        argv = [sys.executable, self.loadgen[which], "--endpoint", self.url,
                "--access-key=AK", "--secret-key=SK", "--op", op, "--size", "4KiB",
                "--concurrency", str(concurrency), "--duration", str(self.duration),
                "--warmup", str(self.warmup), "--bucket-prefix", "cost-" + self.tag,
                "--no-proc-stats", "--json"]
        if op == "get":
            argv += ["--no-prefill", "--objects", "1000"]
        res, whole = run_child(argv, self.duration + self.warmup + 300)
        res["whole_cpu_s"] = whole
        return res

    def boto3(self, op: str, concurrency: int) -> Dict[str, Any]:
        spec = {"endpoint": self.url, "access_key": "AK", "secret_key": "SK", "op": op,
                "size": SIZE, "concurrency": concurrency, "warmup": self.warmup,
                "duration": self.duration, "bucket": "cost-" + self.tag, "objects": 1000,
                "tag": self.tag}
        res, whole = run_child([sys.executable, VS_BOTO3, "--boto3-worker", json.dumps(spec)],
                               self.duration + self.warmup + 600)
        res["whole_cpu_s"] = whole
        return res

    def run(self, which: str, op: str, concurrency: int) -> Dict[str, Any]:
        if which == "boto3":
            return self.boto3(op, concurrency)
        return self.engine(which, op, concurrency)


def whole_per_cpu(r: Dict[str, Any]) -> float:
    return r.get("all_ops", r["ops"]) / r["whole_cpu_s"] if r["whole_cpu_s"] > 0 else 0.0


def window_read(r: Dict[str, Any], duration: float) -> bool:
    """Whether the client read its CPU at the window's ends (boto3's thread that reads
    it can get the interpreter seconds late among a thousand others)."""
    return r.get("cpu_read_late_s", 0.0) <= 0.1 * duration


def requests_per_cpu(r: Dict[str, Any], duration: float) -> float:
    """Over the window; over the whole process (every request, all its CPU) when the
    window's CPU was not read on time."""
    return per_cpu(r) if window_read(r, duration) else whole_per_cpu(r)


def report(op: str, concurrency: int, runs: Dict[str, List[Dict[str, Any]]],
           target: float, duration: float) -> Dict[str, Any]:
    figures = {name: {"requests_per_cpu_s": median([requests_per_cpu(r, duration)
                                                    for r in rs]),
                      "window_read": all(window_read(r, duration) for r in rs),
                      "requests_per_whole_cpu_s": median([whole_per_cpu(r) for r in rs]),
                      "ops_per_s": median([float(r["ops_per_s"]) for r in rs]),
                      "errors": sum(int(r["errors"]) for r in rs)}
               for name, rs in runs.items()}
    print("\n4 KiB %s, concurrency %d (median of %d)" % (op.upper(), concurrency,
                                                         len(runs["now"])))
    print("  %-38s %10s %10s %10s" % ("", *CLIENTS))
    for label, key, fmt in (("requests per client CPU-second", "requests_per_cpu_s", "%.0f"),
                            ("  (whole process, set-up included)",
                             "requests_per_whole_cpu_s", "%.0f"),
                            ("ops/s", "ops_per_s", "%.0f"), ("errors", "errors", "%d")):
        print("  %-38s %10s %10s %10s" % (label, *(fmt % figures[n][key] for n in CLIENTS)))
    for name in CLIENTS:
        if not figures[name]["window_read"]:
            print("  %s: its CPU could not be read at the window's ends (%.1f s late): "
                  "the figure above is the whole process's" % (name, max(
                      r.get("cpu_read_late_s", 0.0) for r in runs[name])))
    now = figures["now"]["requests_per_cpu_s"]
    before = figures["before"]["requests_per_cpu_s"]
    boto3 = figures["boto3"]["requests_per_cpu_s"]
    met = now >= target
    print("  ratios: now/before %s, now/boto3 %s, before/boto3 %s; target %.0f: %s" % (
        ratio(now, before), ratio(now, boto3), ratio(before, boto3), target,
        "met" if met else "NOT met"))
    for name in CLIENTS:
        for r in runs[name]:
            for text in (r.get("error_samples") or [])[:2]:
                print("    %s e.g. %s" % (name, text))
    return {"op": op, "size": SIZE, "concurrency": concurrency, "figures": figures,
            "target_met": met, "runs": runs}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", default=BEFORE,
                   help="git revision of the engine as it was (default %(default)s)")
    p.add_argument("--concurrency", type=int, action="append",
                   help="requests in flight; repeat for several (default 16 and 1024)")
    p.add_argument("--duration", type=float, default=5.0, help="measured seconds (default 5)")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds left out (default 1)")
    p.add_argument("--repeats", type=int, default=1, help="runs of each client per case")
    p.add_argument("--server-processes", type=int, default=1,
                   help="processes of the S3 server (default 1)")
    p.add_argument("--target", type=float, default=20000.0,
                   help="requests per client CPU-second the engine must reach")
    p.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    args = p.parse_args(argv)
    try:
        import boto3
    except ImportError:
        raise SystemExit("bench: boto3 is not installed for %s" % sys.executable)
    concurrencies = args.concurrency or [16, 1024]
    results = []
    with tempfile.TemporaryDirectory(prefix="engine-before-") as tmp:
        before = engine_before(args.before, tmp)
        server = Server(args.server_processes)
        try:
            clients = Clients(url=server.url, before=before, warmup=args.warmup,
                              duration=args.duration)
            print("client cost against %s (answers at once, %d process(es)): the engine at "
                  "%s (before), this tree's engine (now), boto3 %s; %g s measured after "
                  "%g s warm-up, %d run(s) each" % (
                      server.url, args.server_processes, args.before[:12],
                      boto3.__version__, args.duration, args.warmup, args.repeats))
            print("warp: not run (the project does not install it; its figures measured "
                  "earlier are in doc/mgr/rgwbench.rst)")
            for concurrency in concurrencies:
                for op in ("put", "get"):
                    runs: Dict[str, List[Dict[str, Any]]] = {n: [] for n in CLIENTS}
                    for i in range(args.repeats):
                        order = CLIENTS[i % 3:] + CLIENTS[:i % 3]
                        for name in order:
                            res = clients.run(name, op, concurrency)
                            runs[name].append(res)
                            sys.stderr.write("  %s c=%d %s: %.0f ops/s, %.2f CPU-s, %d errors\n"
                                             % (op, concurrency, name, res["ops_per_s"],
                                                res["client_cpu_s"], res["errors"]))
                    results.append(report(op, concurrency, runs, args.target,
                                          args.duration))
        finally:
            server.stop()
    cases: List[Tuple[str, int, float]] = [
        (r["op"], r["concurrency"], r["figures"]["now"]["requests_per_cpu_s"])
        for r in results]
    print("\nengine now, requests per client CPU-second: %s" % ", ".join(
        "%s c=%d %.0f" % case for case in cases))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"before": args.before, "duration_s": args.duration,
                       "warmup_s": args.warmup, "repeats": args.repeats,
                       "results": results}, f, indent=1)
    return 0 if all(r["target_met"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
