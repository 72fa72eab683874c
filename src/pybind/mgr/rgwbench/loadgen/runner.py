"""Running the load: processes x threads, one schedule, figures per op.

* Concurrency ``C`` is split over ``P`` processes (forked, so the load can
  use more than one core) and threads within them; each thread owns one
  keep-alive connection and keeps its own counters and histograms, merged
  when the run ends (no locks on the hot path).
* Every process derives the same schedule from the job's absolute start
  time (``start_at``, Unix seconds): the load starts then, the first
  ``warmup_s`` are left out of the figures, the measured window lasts
  ``duration_s`` (or until ``ops`` operations were issued).  An operation
  counts in the window in which it completes.
* Closed loop by default: each thread issues its next request as soon as
  the previous one returns.  With ``rate`` set, open loop: requests are due
  at fixed intervals (a schedule shared by the threads of a process); a
  thread that is free before the due time sleeps until then and times the
  request from its actual start, a request that is late because every
  thread was busy is timed from when it was due, so stalls show in the
  latency figures (no coordinated omission).
* Errors are classified: ``http_<status>``, ``timeout``, ``connection``,
  ``tls``, ``protocol``, ``verify`` (payload mismatch), ``client`` (a bug).
* Client CPU seconds of the window are measured in every process with
  ``time.process_time()``; the whole run's with ``os.times()`` including
  reaped children.
"""

import collections
import itertools
import json
import mmap
import os
import random
import select
import signal
import socket
import ssl
import struct
import sys
import threading
import time
from typing import IO, Any, Callable, Deque, Dict, List, Optional, Tuple

from .errors import ProtocolError
from .http import Response
from .payload import Pattern, Verifier
from .proc import ProcSampler
from .result import MAX_ERROR_SAMPLES, OpStats, Series, finalize, merge_results
from .s3 import Endpoint, S3Client, describe_error, make_ssl_context
from .sigv4 import Signer
from .workload import OPS, Job, OpChooser, format_size

NS = 1000000000
FAR_FUTURE = 1 << 62
OpResult = Tuple[Optional[str], int, int]


class Exhausted(Exception):
    """No prefilled object left to delete."""


class Schedule:
    """The run's times on this process's monotonic clock (nanoseconds)."""

    def __init__(self, start_at: float, warmup_s: float,
                 duration_s: Optional[float]) -> None:
        wall = time.time()
        mono = time.perf_counter_ns()
        self.start_at = start_at
        self.start_ns = mono + int((start_at - wall) * NS)
        self.measure_ns = self.start_ns + int(warmup_s * NS)
        self.end_ns = (self.measure_ns + int(duration_s * NS)
                       if duration_s is not None else FAR_FUTURE)

    @staticmethod
    def sleep_until(deadline_ns: int, stop: Optional[threading.Event] = None) -> None:
        while True:
            left = deadline_ns - time.perf_counter_ns()
            if left <= 0:
                return
            if stop is not None:
                if stop.wait(min(left / NS, 0.5)):
                    return
            else:
                time.sleep(min(left / NS, 0.5))


def make_client(job: Job, timeout: Optional[float] = None,
                tls: Optional[ssl.SSLContext] = None) -> S3Client:
    endpoint = Endpoint(job.endpoint)
    if endpoint.tls and tls is None:
        tls = make_ssl_context(job.ca_bundle, job.insecure)
    return S3Client(endpoint, Signer(job.access_key, job.secret_key, job.region),
                    job.sse(), tls, timeout or job.timeout_s, job.payload_signing)


def share(total: int, parts: int, index: int) -> Tuple[int, int]:
    """(first, count) of part ``index`` when ``total`` items go to ``parts``."""
    first = total * index // parts
    return first, total * (index + 1) // parts - first


class ThreadStats:
    """What one worker thread measured."""

    def __init__(self) -> None:
        self.by_op: Dict[str, OpStats] = {}
        self.series = Series()
        self.samples: List[str] = []
        self.last_t1 = 0
        self.exit_reason = ""
        # live totals (warm-up included) for the progress line
        self.live_ops = 0
        self.live_bytes = 0
        self.live_errors = 0
        self.live_lat_ns = 0


class _Worker:
    """One thread's load loop and its S3 operations."""

    def __init__(self, run: "ProcessRun", gtid: int, stats: ThreadStats) -> None:
        job = run.job
        self.run = run
        self.job = job
        self.gtid = gtid
        self.stats = stats
        self.client = make_client(job, tls=run.tls)
        self.rng = random.Random(job.seed * 7919 + gtid)
        self.sizes = run.sizes
        self.pattern = run.pattern
        self.verify = job.verify
        self.buckets = job.bucket_names
        self.threshold = job.multipart_threshold_bytes
        self.part_size = job.part_size_bytes
        self.put_prefix = "%s%s/%d." % (job.key_prefix, job.run_tag, gtid)
        self.seq = 0
        self.mixed = job.op == "mixed"
        self.written: Deque[Tuple[str, str]] = collections.deque()
        self.delete_next = gtid  # op=delete: prefilled keys gtid, gtid+C, ...
        self.list_prefix = job.key_prefix + "obj/"
        self.funcs: Dict[str, Callable[[], OpResult]] = {
            "put": self.op_put, "get": self.op_get, "head": self.op_head,
            "delete": self.op_delete, "list": self.op_list}

    # -- operations ---------------------------------------------------------

    def fail(self, what: str, resp: Response) -> OpResult:
        if len(self.stats.samples) < MAX_ERROR_SAMPLES:
            self.stats.samples.append("%s: %s" % (what, describe_error(resp)))
        return "http_%d" % resp.status, 0, resp.first_byte_ns

    def op_put(self) -> OpResult:
        self.seq += 1
        key = self.put_prefix + str(self.seq)
        bucket = self.buckets[(self.gtid + self.seq) % len(self.buckets)]
        size = self.sizes.pick(self.rng)
        body = self.pattern.body(size, self.pattern.offset_for(key) if self.verify else 0)
        if size > self.threshold:
            resp = self.client.upload(bucket, key, body, self.threshold, self.part_size)
        else:
            resp = self.client.put_object(bucket, key, body)
        if resp.status != 200:
            return self.fail("PUT %s/%s" % (bucket, key), resp)
        if self.mixed:
            self.written.append((bucket, key))
        return None, size, resp.first_byte_ns

    def op_get(self) -> OpResult:
        run = self.run
        index = int(self.rng.random() * run.objects)
        bucket, key = run.prefilled[index]
        if not self.verify:
            resp = self.client.get_object(bucket, key)
            if resp.status != 200:
                return self.fail("GET %s/%s" % (bucket, key), resp)
            return None, resp.nbytes, resp.first_byte_ns
        check = Verifier(self.pattern, self.pattern.offset_for(key))
        resp = self.client.get_object(bucket, key, check)
        if resp.status != 200:
            return self.fail("GET %s/%s" % (bucket, key), resp)
        expected = self.sizes.for_index(self.job.seed, index)
        if not check.ok or resp.nbytes != expected:
            if len(self.stats.samples) < MAX_ERROR_SAMPLES:
                self.stats.samples.append(
                    "GET %s/%s: body does not match what was written (%d bytes read, "
                    "%d expected)" % (bucket, key, resp.nbytes, expected))
            return "verify", 0, resp.first_byte_ns
        return None, resp.nbytes, resp.first_byte_ns

    def op_head(self) -> OpResult:
        bucket, key = self.run.prefilled[int(self.rng.random() * self.run.objects)]
        resp = self.client.head_object(bucket, key)
        if resp.status != 200:
            return self.fail("HEAD %s/%s" % (bucket, key), resp)
        return None, 0, resp.first_byte_ns

    def op_delete(self) -> OpResult:
        if self.mixed:
            bucket, key = self.written.popleft()
        else:
            index = self.delete_next
            if index >= self.run.objects:
                raise Exhausted()
            self.delete_next += self.run.total_threads
            bucket, key = self.run.prefilled[index]
        resp = self.client.delete_object(bucket, key)
        if resp.status not in (200, 204):
            return self.fail("DELETE %s/%s" % (bucket, key), resp)
        return None, 0, resp.first_byte_ns

    def op_list(self) -> OpResult:
        bucket = self.buckets[int(self.rng.random() * len(self.buckets))]
        resp = self.client.list_objects(bucket, self.list_prefix, self.job.list_max_keys)
        if resp.status != 200:
            return self.fail("LIST %s" % bucket, resp)
        return None, 0, resp.first_byte_ns

    # -- the loop ---------------------------------------------------------

    def _sample(self, text: str) -> None:
        if len(self.stats.samples) < MAX_ERROR_SAMPLES:
            self.stats.samples.append(text)

    def loop(self) -> None:
        run = self.run
        sched = run.schedule
        stats = self.stats
        try:
            self.client.conn.connect()  # connect (and TLS handshake) before the start
        except OSError:
            pass  # the first request reports it
        Schedule.sleep_until(sched.start_ns, run.stop)
        measure_ns = sched.measure_ns
        end_ns = sched.end_ns
        by_op = stats.by_op
        for op in OPS:
            by_op[op] = OpStats()
        series = stats.series
        funcs = self.funcs
        choose = run.chooser.choose
        single = run.chooser.ops[0] if len(run.chooser.ops) == 1 else None
        rand = self.rng.random
        issued = run.issued
        quota = run.quota
        stop = run.stop
        open_loop = run.interval_ns is not None
        slots = run.slots
        first_slot = run.first_slot_ns
        interval = run.interval_ns or 0
        clock = time.perf_counter_ns
        reason = "time"
        while True:
            if quota is not None and next(issued) >= quota:
                reason = "ops"
                break
            if open_loop:
                due = first_slot + int(next(slots) * interval)
                if due >= end_ns:
                    break
                now = clock()
                if due > now:
                    if stop.wait((due - now) / NS):
                        reason = "stopped"
                        break
                    t0 = clock()  # idle until due: sleep overshoot is not latency
                else:
                    t0 = due  # late because all threads were busy: it counts
            else:
                t0 = clock()
                if t0 >= end_ns:
                    break
            if stop.is_set():
                reason = "stopped"
                break
            op = single or choose(rand())
            if op == "delete" and self.mixed and not self.written:
                op = "put"  # mixed deletes what it wrote; nothing yet
            err: Optional[str]
            try:
                err, nbytes, first_byte = funcs[op]()
            except Exhausted:
                reason = "exhausted"
                break
            except socket.timeout:
                err, nbytes, first_byte = "timeout", 0, 0
                self._sample("%s: no answer within %gs" % (op.upper(), self.job.timeout_s))
            except ssl.SSLError as exc:
                err, nbytes, first_byte = "tls", 0, 0
                self._sample("%s: TLS error: %s" % (op.upper(), exc))
            except ProtocolError as exc:
                err, nbytes, first_byte = "protocol", 0, 0
                self._sample("%s: %s" % (op.upper(), exc))
            except OSError as exc:
                err, nbytes, first_byte = "connection", 0, 0
                self._sample("%s: connection error: %s" % (op.upper(), exc))
            except Exception as exc:  # a bug in the engine: count it, keep going
                err, nbytes, first_byte = "client", 0, 0
                self._sample("%s: client error: %r" % (op.upper(), exc))
            t1 = clock()
            if stop.is_set():  # halted mid-request: the answer means nothing
                reason = "stopped"
                break
            latency = t1 - t0
            if err is None:
                stats.live_ops += 1
                stats.live_bytes += nbytes
                stats.live_lat_ns += latency
            else:
                stats.live_errors += 1
            if measure_ns <= t1 <= end_ns:
                st = by_op[op]
                second = (t1 - measure_ns) // NS
                if err is None:
                    st.ops += 1
                    st.bytes += nbytes
                    st.lat.record(latency)
                    if first_byte:
                        st.ttfb.record(first_byte - t0)
                    series.add(second, nbytes, latency)
                else:
                    st.error(err)
                    series.add_error(second)
                stats.last_t1 = t1
        stats.exit_reason = reason
        self.client.close()


class ProcessRun:
    """The threads of one process and their merged figures."""

    def __init__(self, job: Job, index: int, schedule: Schedule,
                 tick: Optional[Callable[["ProcessRun"], None]] = None) -> None:
        self.job = job
        self.index = index
        self.schedule = schedule
        self.tick = tick
        self.total_threads = job.concurrency
        self.thread_base, self.nthreads = share(job.concurrency, job.processes, index)
        self.quota: Optional[int] = None
        if job.ops is not None:
            lo = job.ops * self.thread_base // job.concurrency
            hi = job.ops * (self.thread_base + self.nthreads) // job.concurrency
            self.quota = hi - lo
        self.issued = itertools.count()
        self.slots = itertools.count()
        self.interval_ns: Optional[float] = None
        self.first_slot_ns = schedule.start_ns
        if job.rate:
            rate = job.rate * self.nthreads / job.concurrency
            self.interval_ns = NS / rate
            # interleave the processes' schedules
            self.first_slot_ns = schedule.start_ns + int(
                NS / job.rate * self.thread_base / max(1, self.nthreads))
        self.stop = threading.Event()
        self.sizes = job.sizes
        self.pattern = Pattern(job.seed)
        self.chooser = OpChooser(job.weights)
        self.tls = (make_ssl_context(job.ca_bundle, job.insecure)
                    if Endpoint(job.endpoint).tls else None)
        self.objects = job.object_count() if job.reads_prefilled else 0
        self.prefilled = [job.prefill_key(i) for i in range(self.objects)]
        self.stats = [ThreadStats() for _ in range(self.nthreads)]
        self.workers: List[_Worker] = []
        self.cpu_window_s = 0.0

    def halt(self) -> None:
        """Stop now: no new requests, requests in flight are cut off."""
        self.stop.set()
        for worker in self.workers:
            worker.client.conn.abort()

    def live(self) -> Tuple[int, int, int, int]:
        ops = nbytes = errors = lat = 0
        for st in self.stats:
            ops += st.live_ops
            nbytes += st.live_bytes
            errors += st.live_errors
            lat += st.live_lat_ns
        return ops, nbytes, errors, lat

    def run(self) -> Dict[str, Any]:
        """Run the threads to the end; returns this process's raw result."""
        threads = []
        for i, st in enumerate(self.stats):
            worker = _Worker(self, self.thread_base + i, st)
            self.workers.append(worker)
            t = threading.Thread(target=worker.loop, name="loadgen-%d" % i, daemon=True)
            threads.append(t)
        for t in threads:
            t.start()
        sched = self.schedule
        clock = time.perf_counter_ns

        def alive() -> bool:
            return not self.stop.is_set() and any(t.is_alive() for t in threads)

        # wait for the measured window, sample CPU at its start
        while alive() and clock() < sched.measure_ns:
            self._tick()
            Schedule.sleep_until(min(sched.measure_ns, clock() + NS // 2))
        cpu0 = time.process_time()
        measured_from = clock()
        self._tick()
        next_tick = sched.measure_ns
        while alive() and clock() < sched.end_ns:
            next_tick += NS
            deadline = min(next_tick, sched.end_ns)
            while alive() and clock() < deadline:
                for t in threads:
                    if t.is_alive():
                        t.join(max(0.0, min((deadline - clock()) / NS, 0.2)))
                        break
            self._tick()
        cpu1 = time.process_time()
        window_end = min(clock(), sched.end_ns)
        # requests in flight at the end finish (outside the window)
        for t in threads:
            t.join(self.job.timeout_s + 5.0 if not self.stop.is_set() else 2.0)
        self.halt()
        self._tick()
        self.cpu_window_s = cpu1 - cpu0 if measured_from < window_end else 0.0
        return self.raw_result(window_end)

    def _tick(self) -> None:
        if self.tick is not None:
            try:
                self.tick(self)
            except Exception:
                pass

    def raw_result(self, window_end: int) -> Dict[str, Any]:
        sched = self.schedule
        by_op: Dict[str, OpStats] = {}
        series = Series()
        samples: List[str] = []
        reasons = set()
        last = 0
        for st in self.stats:
            for op, s in st.by_op.items():
                if s.ops or s.errors:
                    by_op.setdefault(op, OpStats()).merge(s)
            series.merge(st.series)
            for text in st.samples:
                if len(samples) < MAX_ERROR_SAMPLES:
                    samples.append(text)
            reasons.add(st.exit_reason)
            last = max(last, st.last_t1)
        if "stopped" in reasons:
            elapsed_ns = min(window_end, sched.end_ns) - sched.measure_ns
        elif reasons <= {"time"} and sched.end_ns != FAR_FUTURE:
            elapsed_ns = sched.end_ns - sched.measure_ns
        else:  # ended by --ops or by running out of objects
            elapsed_ns = (last or sched.measure_ns) - sched.measure_ns
        elapsed_ns = max(0, elapsed_ns)
        t = os.times()
        return {
            "by_op": {op: s.to_dict() for op, s in by_op.items()},
            "per_second": series.to_list(),
            "client_cpu_s": self.cpu_window_s,
            "client_cpu_total_s": t.user + t.system,
            "elapsed_s": elapsed_ns / NS,
            "error_samples": samples,
            "exhausted": "exhausted" in reasons,
            "interrupted": "stopped" in reasons,
        }


class Board:
    """Live totals of every process, in shared memory (for the progress line)."""

    _FMT = "<5d"
    _SIZE = struct.calcsize(_FMT)

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.mem = mmap.mmap(-1, max(1, processes) * self._SIZE)

    def write(self, index: int, values: Tuple[int, int, int, int], done: bool) -> None:
        struct.pack_into(self._FMT, self.mem, index * self._SIZE,
                         float(values[0]), float(values[1]), float(values[2]),
                         float(values[3]), 1.0 if done else 0.0)

    def totals(self) -> Tuple[int, int, int, int]:
        ops = nbytes = errors = lat = 0.0
        for i in range(self.processes):
            a, b, c, d, _ = struct.unpack_from(self._FMT, self.mem, i * self._SIZE)
            ops += a
            nbytes += b
            errors += c
            lat += d
        return int(ops), int(nbytes), int(errors), int(lat)


class Reporter:
    """Progress line and server-side sampling, driven about once a second."""

    def __init__(self, job: Job, schedule: Schedule, stream: Optional[IO[str]],
                 sampler: Optional[ProcSampler],
                 live: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        self.job = job
        self.schedule = schedule
        self.stream = stream
        # Told the same figures as the progress line (an agent posts them to the module).
        self.live = live
        self.sampler = sampler
        self.server: Optional[Dict[str, Any]] = None
        self._sampling = False
        self._last: Tuple[int, int, int, int] = (0, 0, 0, 0)
        self._last_ns = 0

    def tick(self, totals: Tuple[int, int, int, int]) -> None:
        now = time.perf_counter_ns()
        sched = self.schedule
        if self.sampler is not None:
            if not self._sampling and self.server is None and now >= sched.measure_ns:
                self.sampler.start()
                self._sampling = True
            elif self._sampling:
                if now >= sched.end_ns:
                    self.finish()
                else:
                    self.sampler.sample()
        if (self.stream is not None or self.live is not None) and now >= sched.start_ns:
            if self._last_ns and now - self._last_ns >= NS // 2:
                dt = (now - self._last_ns) / NS
                d_ops = totals[0] - self._last[0]
                d_bytes = totals[1] - self._last[1]
                d_err = totals[2] - self._last[2]
                d_lat = totals[3] - self._last[3]
                phase = "warm-up" if now < sched.measure_ns else "measuring"
                if self.stream is not None:
                    mean = "%.2f ms" % (d_lat / d_ops / 1e6) if d_ops else "-"
                    self.stream.write(
                        "[%7.1fs %s] %9.1f ops/s  %9.2f MiB/s  mean %s  errors %d\n"
                        % ((now - sched.start_ns) / NS, phase, d_ops / dt,
                           d_bytes / dt / (1 << 20), mean, d_err))
                    self.stream.flush()
                if self.live is not None:
                    self.live({"elapsed_s": round((now - sched.start_ns) / NS, 1),
                               "phase": phase, "ops_per_s": round(d_ops / dt, 1),
                               "mib_per_s": round(d_bytes / dt / (1 << 20), 3),
                               "mean_ms": round(d_lat / d_ops / 1e6, 3) if d_ops else None,
                               "errors": d_err})
            if not self._last_ns or now - self._last_ns >= NS // 2:
                self._last = totals
                self._last_ns = now

    def finish(self) -> None:
        if self.sampler is not None and self._sampling:
            self.server = self.sampler.stop()
            self._sampling = False


def _echo(job: Job) -> Dict[str, Any]:
    sizes = job.sizes
    return {
        "op": job.op,
        "mix": job.weights if job.op == "mixed" else None,
        "object_size": job.size if sizes.fixed is None else format_size(sizes.max_size),
        "size_bytes": sizes.fixed,
        "concurrency": job.concurrency,
        "processes": job.processes,
        "duration_s": job.duration_s,
        "warmup_s": job.warmup_s,
        "ops_limit": job.ops,
        "mode": "open" if job.rate else "closed",
        "rate": job.rate,
        "buckets": job.buckets,
        "objects": job.object_count() if job.reads_prefilled else None,
        "sse": job.sse().mode,
        "payload_signing": job.payload_signing,
        "verify": job.verify,
        "multipart_threshold": job.multipart_threshold,
        "part_size": job.part_size,
        "endpoint": job.endpoint,
        "run_tag": job.run_tag,
    }


def _on_signals(halt: Callable[[], None]) -> Dict[signal.Signals, Any]:
    """SIGINT/SIGTERM call ``halt`` once (a second one interrupts for real).

    Only possible in the main thread; elsewhere nothing is installed.
    """
    seen = [0]

    def handler(signum: int, frame: Any) -> None:
        seen[0] += 1
        if seen[0] > 1:
            raise KeyboardInterrupt()
        halt()

    previous: Dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:
        pass  # not the main thread
    return previous


def _restore_signals(previous: Dict[signal.Signals, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _fork_process(job: Job, index: int, schedule: Schedule, board: Board) -> Tuple[int, int]:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(wfd)
        return pid, rfd
    # child
    code = 0
    try:
        os.close(rfd)
        parent = os.getppid()
        run = ProcessRun(job, index, schedule)
        _on_signals(run.halt)

        def tick(r: ProcessRun) -> None:
            board.write(index, r.live(), False)
            if os.getppid() != parent:
                r.stop.set()  # the coordinator is gone

        run.tick = tick
        out = run.run()
        board.write(index, run.live(), True)
    except BaseException as exc:
        out = {"fatal": "%s: %s" % (type(exc).__name__, exc)}
        code = 1
    try:
        data = json.dumps(out).encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(wfd, view)
            view = view[n:]
        os.close(wfd)
    finally:
        os._exit(code)


def run_load(job: Job, progress: Optional[IO[str]] = None,
             live: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
    """Run a validated job whose buckets (and prefill) are ready.

    Returns the finalized result dict.  ``processes > 1`` forks: call this
    from a plain command-line process, not from inside ceph-mgr.
    """
    start_at = job.start_at
    if start_at is None:
        start_at = time.time() + 0.2 + 0.1 * job.processes
    late = max(0.0, time.time() - start_at)
    schedule = Schedule(start_at, job.warmup_s, job.duration_s)
    sampler = ProcSampler(job.proc_names, only=job.proc_pids) if job.proc_stats else None
    reporter = Reporter(job, schedule, progress, sampler, live)
    partials: List[Dict[str, Any]] = []
    if job.processes == 1:
        run = ProcessRun(job, 0, schedule, tick=lambda r: reporter.tick(r.live()))
        previous = _on_signals(run.halt)
        try:
            partials.append(run.run())
        finally:
            _restore_signals(previous)
    else:
        partials = _run_forked(job, schedule, reporter)
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


def _next_tick(now: int, sched: Schedule) -> int:
    """Next reporting time: every second from the window start, and its end."""
    if now < sched.measure_ns:
        return min(sched.measure_ns, now + NS)
    nxt = sched.measure_ns + ((now - sched.measure_ns) // NS + 1) * NS
    if now < sched.end_ns:
        nxt = min(nxt, sched.end_ns)
    return nxt


def _run_forked(job: Job, schedule: Schedule, reporter: Reporter) -> List[Dict[str, Any]]:
    board = Board(job.processes)
    sys.stdout.flush()
    sys.stderr.flush()
    children: List[Tuple[int, int]] = []
    for i in range(job.processes):
        children.append(_fork_process(job, i, schedule, board))
    chunks: Dict[int, List[bytes]] = {fd: [] for _, fd in children}
    open_fds = set(chunks)
    interrupted = False

    def forward() -> None:
        for pid, _ in children:
            try:
                os.kill(pid, signal.SIGINT)
            except OSError:
                pass

    old_handlers = _on_signals(forward)
    try:
        next_tick = time.perf_counter_ns()
        while open_fds:
            timeout = max(0.0, (next_tick - time.perf_counter_ns()) / NS)
            try:
                ready, _, _ = select.select(list(open_fds), [], [], timeout)
            except InterruptedError:
                ready = []
            for fd in ready:
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    open_fds.discard(fd)
                    os.close(fd)
            now = time.perf_counter_ns()
            if now >= next_tick:
                reporter.tick(board.totals())
                next_tick = _next_tick(now, schedule)
    except KeyboardInterrupt:
        interrupted = True
        forward()
        raise
    finally:
        _restore_signals(old_handlers)
        for pid, _ in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if interrupted:
            for fd in open_fds:
                os.close(fd)
    out = []
    for _, fd in children:
        text = b"".join(chunks[fd])
        try:
            out.append(json.loads(text.decode("utf-8")))
        except ValueError:
            out.append({"fatal": "worker process ended without a result"})
    return out
