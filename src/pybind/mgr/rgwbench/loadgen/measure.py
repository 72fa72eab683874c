"""The measuring loop of one worker thread.

* Closed loop by default: each thread issues its next request as soon as
  the previous one returns.  With ``rate`` set, open loop: requests are due
  at fixed intervals (a schedule shared by the threads of a process); a
  thread that is free before the due time sleeps until then and times the
  request from its actual start, a request that is late because every
  thread was busy is timed from when it was due, so stalls show in the
  latency figures (no coordinated omission).
* Errors are classified: ``http_<status>``, ``timeout``, ``connection``,
  ``tls``, ``protocol``, ``verify`` (payload mismatch), ``client`` (a bug).
* Each thread keeps its own counters and histograms, merged when the run
  ends (no locks on the hot path).
"""

import itertools
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Dict, Iterator, List, Optional

from .errors import ProtocolError
from .ops import Exhausted, Operations
from .result import MAX_ERROR_SAMPLES, OpStats, Series
from .schedule import NS, Schedule
from .workload import OPS, Job, OpChooser


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


@dataclass
class Pace:
    """What the threads of one process share to pace their requests."""

    schedule: Schedule
    chooser: OpChooser
    # requests this process may issue (``ops``), None: until the window ends
    quota: Optional[int]
    # open loop: nanoseconds between due times and the first one
    interval_ns: Optional[float]
    first_slot_ns: int
    stop: threading.Event = field(default_factory=threading.Event)
    issued: Iterator[int] = field(default_factory=itertools.count)
    slots: Iterator[int] = field(default_factory=itertools.count)

    @classmethod
    def for_process(cls, job: Job, schedule: Schedule, thread_base: int,
                    nthreads: int) -> "Pace":
        """The pace of the ``nthreads`` threads that start at ``thread_base``."""
        quota: Optional[int] = None
        if job.ops is not None:
            lo = job.ops * thread_base // job.concurrency
            hi = job.ops * (thread_base + nthreads) // job.concurrency
            quota = hi - lo
        interval_ns: Optional[float] = None
        first_slot_ns = schedule.start_ns
        if job.rate:
            rate = job.rate * nthreads / job.concurrency
            interval_ns = NS / rate
            # interleave the processes' schedules
            first_slot_ns = schedule.start_ns + int(
                NS / job.rate * thread_base / max(1, nthreads))
        return cls(schedule=schedule, chooser=OpChooser(job.weights), quota=quota,
                   interval_ns=interval_ns, first_slot_ns=first_slot_ns)

    def for_target(self, job: Job, gtids: List[int]) -> "Pace":
        """The pace of the threads ``gtids`` of this process that share one target.

        Open loop: each target gets its share of the due times, whatever the
        others do, as a round-robin balancer gives each RGW its share of the
        requests; a slow RGW makes its own requests wait instead of handing
        them to a faster one. The quota, the stop and the op mix stay shared.
        """
        if not job.rate:
            return self
        rate = job.rate * len(gtids) / job.concurrency
        return replace(
            self, interval_ns=NS / rate, slots=itertools.count(),
            first_slot_ns=self.schedule.start_ns + int(NS / job.rate * min(gtids) / len(gtids)))


def account(stats: ThreadStats, op: str, err: Optional[str], nbytes: int, first_byte: int,
            t0: int, t1: int, measure_ns: int, end_ns: int) -> None:
    """Count one finished request (from ``t0`` to ``t1``) in a thread's figures."""
    latency = t1 - t0
    if err is None:
        stats.live_ops += 1
        stats.live_bytes += nbytes
        stats.live_lat_ns += latency
    else:
        stats.live_errors += 1
    if measure_ns <= t1 <= end_ns:
        st = stats.by_op[op]
        second = (t1 - measure_ns) // NS
        if err is None:
            st.ops += 1
            st.bytes += nbytes
            st.lat.record(latency)
            if first_byte:
                st.ttfb.record(first_byte - t0)
            stats.series.add(second, nbytes, latency)
        else:
            st.error(err)
            stats.series.add_error(second)
        stats.last_t1 = t1


class Worker:
    """One thread: issues paced operations and records what they took."""

    def __init__(self, *, pace: Pace, ops: Operations, stats: ThreadStats,
                 timeout_s: float) -> None:
        self.pace = pace
        self.ops = ops
        self.stats = stats
        self.timeout_s = timeout_s

    def _sample(self, text: str) -> None:
        if len(self.stats.samples) < MAX_ERROR_SAMPLES:
            self.stats.samples.append(text)

    def loop(self) -> None:
        pace = self.pace
        sched = pace.schedule
        stats = self.stats
        ops = self.ops
        try:
            ops.client.conn.connect()  # connect (and TLS handshake) before the start
        except OSError:
            pass  # the first request reports it
        Schedule.sleep_until(sched.start_ns, pace.stop)
        measure_ns = sched.measure_ns
        end_ns = sched.end_ns
        for op in OPS:
            stats.by_op[op] = OpStats()
        funcs = ops.by_name
        mixed = ops.mixed
        written = ops.written
        choose = pace.chooser.choose
        single = pace.chooser.ops[0] if len(pace.chooser.ops) == 1 else None
        rand = ops.rng.random
        issued = pace.issued
        quota = pace.quota
        stop = pace.stop
        open_loop = pace.interval_ns is not None
        slots = pace.slots
        first_slot = pace.first_slot_ns
        interval = pace.interval_ns or 0
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
            if op == "delete" and mixed and not written:
                op = "put"  # mixed deletes what it wrote; nothing yet
            err: Optional[str]
            try:
                err, nbytes, first_byte = funcs[op]()
            except Exhausted:
                reason = "exhausted"
                break
            except socket.timeout:
                err, nbytes, first_byte = "timeout", 0, 0
                self._sample("%s: no answer within %gs" % (op.upper(), self.timeout_s))
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
            account(stats, op, err, nbytes, first_byte, t0, t1, measure_ns, end_ns)
        stats.exit_reason = reason
        ops.client.close()
