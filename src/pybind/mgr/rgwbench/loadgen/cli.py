"""Command line of the load engine.

    python3 src/pybind/mgr/rgwbench/loadgen --endpoint http://127.0.0.1:8000 \\
        --access-key K --secret-key S --op put --size 4KiB --concurrency 8 \\
        --duration 30 --json

Exit codes: 0 done, 1 endpoint or credential problem (nothing was sent
beyond the preflight request), 2 bad arguments, 130 interrupted (SIGINT or
SIGTERM: the load stops, the result so far is still printed, and --cleanup
still runs; a second signal stops at once).
"""

import argparse
import json
import os
import socket
import sys
from typing import Any, Dict, List, NoReturn, Optional

from . import __version__
from .errors import LoadgenError, UsageError
from .proc import PROGRAMS
from .result import summary_text
from .workload import ALL_OPS, Job, parse_mix

PROG = "rgwbench-loadgen"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit code 2)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write("%s: error: %s (see --help)\n" % (PROG, message))
        sys.exit(2)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text)
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="S3 load generator for the Ceph Object Gateway "
                "(standard library only; part of the rgwbench mgr module).")
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    g = p.add_argument_group("endpoint")
    g.add_argument("--endpoint", action="append", metavar="URL[,URL...]",
                   help="S3 endpoint URL, http(s)://HOST:PORT; several (comma separated "
                        "or repeated): each connection goes to one of them, round-robin")
    g.add_argument("--access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"),
                   help="access key (default: $AWS_ACCESS_KEY_ID)")
    g.add_argument("--secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"),
                   help="secret key (default: $AWS_SECRET_ACCESS_KEY)")
    g.add_argument("--region", default="us-east-1",
                   help="SigV4 region (RGW takes its zonegroup's api name or any "
                        "region by default; default %(default)s)")
    tls = g.add_mutually_exclusive_group()
    tls.add_argument("--ca-bundle", metavar="FILE", help="CA certificates to trust (PEM)")
    tls.add_argument("--insecure", action="store_true",
                     help="do not verify the server's TLS certificate")
    g.add_argument("--timeout", type=_positive_float, default=30.0, metavar="S",
                   help="socket timeout per request, seconds (default %(default)s)")

    w = p.add_argument_group("workload")
    w.add_argument("--op", default="put", choices=ALL_OPS, help="operation (default put)")
    w.add_argument("--mix", metavar="OP=W,...",
                   help="weights for --op mixed, e.g. put=1,get=3 "
                        "(default get=45,head=30,put=15,delete=10)")
    w.add_argument("--size", default="4KiB",
                   help="object size: 4KiB, a list 4KiB,1MiB or a range 4KiB-1MiB "
                        "(KiB/MiB/GiB binary, KB/MB/GB decimal; default %(default)s)")
    w.add_argument("--concurrency", "-c", type=int, default=8,
                   help="requests in flight (threads in all processes; default %(default)s)")
    w.add_argument("--processes", "-p", type=int, default=1,
                   help="worker processes the threads are spread over (default 1; 0: one per core)")
    w.add_argument("--duration", type=_positive_float, metavar="S",
                   help="measured seconds, after the warm-up (default 30 unless --ops)")
    w.add_argument("--ops", type=int, metavar="N",
                   help="stop after N operations in total (warm-up included)")
    w.add_argument("--warmup", type=_positive_float, default=0.0, metavar="S",
                   help="seconds of load before the measured window (default 0)")
    w.add_argument("--start-at", type=_positive_float, metavar="EPOCH",
                   help="start the load at this Unix time (to line up several hosts)")
    w.add_argument("--rate", type=_positive_float, metavar="OPS_PER_S",
                   help="open loop at this total rate instead of closed loop")
    w.add_argument("--buckets", type=int, default=1, help="buckets to spread objects over")
    w.add_argument("--bucket-prefix", default="rgwbench",
                   help="bucket names are PREFIX-0, PREFIX-1, ... (default %(default)s)")
    w.add_argument("--key-prefix", default="rgwbench/",
                   help="every object key starts with this (default %(default)s)")
    w.add_argument("--objects", type=int, default=0, metavar="N",
                   help="objects prefilled for get/head/list/delete (default: by size, "
                        "up to 1000; for delete --ops or up to 10000)")
    pf = w.add_mutually_exclusive_group()
    pf.add_argument("--prefill", dest="prefill", action="store_true", default=True,
                    help="write the objects get/head/list/delete read first (default)")
    pf.add_argument("--no-prefill", dest="prefill", action="store_false",
                    help="assume an earlier run wrote them")
    w.add_argument("--prefill-time", dest="prefill_s", type=float, default=0.0,
                   metavar="SECONDS",
                   help="prefill for at most this long; the load then reads the objects "
                        "written by then (default 0: write them all)")
    w.add_argument("--multipart-threshold", default="64MiB",
                   help="objects above this size are written with multipart upload "
                        "(default %(default)s)")
    w.add_argument("--part-size", default="16MiB", help="multipart part size "
                   "(default %(default)s)")
    w.add_argument("--range", default="", metavar="START-END",
                   help="ranged GET: read bytes START up to END of each object "
                        "(sizes, END not included; e.g. 0-1MiB); default: whole objects")
    w.add_argument("--verify", action="store_true",
                   help="write key-derived payloads and check every GET body")
    w.add_argument("--list-max-keys", type=int, default=100,
                   help="max-keys of a list op (default %(default)s)")
    w.add_argument("--payload-signing", choices=("auto", "signed", "unsigned"),
                   default="auto", help="x-amz-content-sha256: auto = UNSIGNED-PAYLOAD "
                   "over https, the body's SHA-256 over http (default)")
    w.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    w.add_argument("--run-tag", default="", help="tag in the keys this run writes "
                   "(default random)")
    w.add_argument("--cleanup", action="store_true",
                   help="delete the objects under --key-prefix and the buckets afterwards")
    w.add_argument("--cleanup-only", action="store_true",
                   help="only delete what earlier runs left (no load)")

    e = p.add_argument_group("server-side encryption")
    e.add_argument("--sse-c-key", metavar="KEY",
                   help="SSE-C with this 256-bit key (64 hex digits or base64)")
    e.add_argument("--sse-kms-key-id", metavar="ID", help="SSE-KMS with this key id")
    e.add_argument("--sse-s3", action="store_true", help="SSE-S3 (AES256)")

    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print one JSON object")
    o.add_argument("--progress", action="store_true",
                   help="a progress line on stderr once a second")
    o.add_argument("--no-proc-stats", dest="proc_stats", action="store_false",
                   help="do not sample radosgw/haproxy CPU and RSS on this host")
    o.add_argument("--proc-names", default="radosgw,haproxy",
                   help="process names to sample (default %(default)s)")
    o.add_argument("--proc-daemons", default="", metavar="NAME[@HOST],...",
                   help="sample only these daemons of the cluster, found by name: "
                        "rgw.<id> (radosgw -n client.rgw.<id>), haproxy.<id> (haproxy "
                        "-f .../haproxy.<id>/...); instead of --proc-names")
    o.add_argument("--proc-fsid", default="",
                   help="with --proc-daemons: leave out processes of another cluster "
                        "(--fsid on their command line)")
    o.add_argument("--host-label", default="", help="host name in the result")
    return p


def parse_daemons(text: str) -> Dict[str, str]:
    """``rgw.a@host1,haproxy.b`` -> daemon name -> host (this host's name if none)."""
    daemons: Dict[str, str] = {}
    for part in text.split(","):
        name, _, host = part.strip().partition("@")
        if not name:
            continue
        if name.partition(".")[0] not in PROGRAMS or "." not in name:
            raise UsageError("--proc-daemons: %r is not rgw.<id> or haproxy.<id>" % name)
        daemons[name] = host or socket.gethostname()
    return daemons


def job_from_args(args: argparse.Namespace) -> Job:
    duration = args.duration
    if duration is None and args.ops is None:
        duration = 30.0
    mix: Dict[str, float] = {}
    if args.mix:
        if args.op != "mixed":
            raise UsageError("--mix needs --op mixed")
        mix = parse_mix(args.mix)
    return Job(
        endpoints=[url for given in args.endpoint or [] for url in given.split(",")],
        access_key=args.access_key or "",
        secret_key=args.secret_key or "", region=args.region, ca_bundle=args.ca_bundle,
        insecure=args.insecure, op=args.op, mix=mix, size=args.size,
        concurrency=args.concurrency, processes=args.processes, duration_s=duration,
        ops=args.ops, warmup_s=args.warmup, start_at=args.start_at, rate=args.rate,
        buckets=args.buckets, bucket_prefix=args.bucket_prefix, key_prefix=args.key_prefix,
        objects=args.objects, multipart_threshold=args.multipart_threshold,
        part_size=args.part_size, verify=args.verify, sse_c_key=args.sse_c_key,
        sse_kms_key_id=args.sse_kms_key_id, sse_s3=args.sse_s3, prefill=args.prefill,
        prefill_s=args.prefill_s,
        cleanup=args.cleanup, timeout_s=args.timeout, list_max_keys=args.list_max_keys,
        range=args.range,
        payload_signing=args.payload_signing, seed=args.seed, run_tag=args.run_tag,
        proc_stats=args.proc_stats,
        proc_names=tuple(n.strip() for n in args.proc_names.split(",") if n.strip()),
        proc_daemons=parse_daemons(args.proc_daemons) if args.proc_daemons.strip() else None,
        proc_fsid=args.proc_fsid,
        host_label=args.host_label)


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    progress = sys.stderr if args.progress else None
    try:
        job = job_from_args(args).validate()
        from . import api  # the engine proper, only once the arguments are good
        out: Dict[str, Any]
        if args.cleanup_only:
            out = api.cleanup_only(job, progress)
            text = "deleted %(objects_deleted)d objects and %(buckets_deleted)d buckets" % out
        else:
            out = api.run_job(job, progress)
            text = summary_text(out)
    except LoadgenError as exc:
        sys.stderr.write("%s: error: %s\n" % (PROG, exc))
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
    if args.json:
        sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    else:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()
    if out.get("interrupted"):
        sys.stderr.write("%s: interrupted: the figures cover the time until then\n" % PROG)
        return 130
    return 0
