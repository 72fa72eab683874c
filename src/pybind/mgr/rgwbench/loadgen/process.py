"""The worker threads of one process, from start to their merged figures.

Client CPU seconds of the measured window are taken in every process with
``time.process_time()`` when the window starts and ends, with the seconds the
process waited for a CPU.
"""

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import reactor
from .measure import Pace, ThreadStats, Worker
from .ops import Operations
from .payload import Pattern
from .result import MAX_ERROR_SAMPLES, OpStats, Series, TargetStats
from .s3 import Endpoint, make_ssl_context
from .schedule import FAR_FUTURE, NS, Schedule, share
from .workload import Job


#: open files a process holds besides its connections (standard streams, pipes, logs)
OWN_FILES = 64


def room_for(connections: int) -> None:
    """Lets this process open `connections` sockets: its soft limit of open files raised
    as far as needed, within the hard limit (a soft limit of 1024 is common)."""
    try:
        import resource
    except ImportError:  # not on Linux: left as it is
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + OWN_FILES
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    raised = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    if raised > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))


def cpu_wait_s(runqueue: float, throttled: float, wall: float) -> float:
    """Seconds a process waited for CPU over `wall` seconds, from the growth of its
    runqueue wait and of its cgroup's throttled time over them.

    Either can hold the other's wait: a busy thread a quota throttles keeps its
    run delay growing meanwhile, an event-driven one throttled on its way back
    to user space does not (measured on Linux 6.18: 0.04 s run delay, 4.9 s
    throttled over 3 s at 1 % of a core). So the larger of the two counts, the
    throttled time (summed over the CPUs) at most the wall time.
    """
    return max(runqueue, min(throttled, wall), 0.0)


def cgroup_throttled_s(cgroup_file: str = '/proc/self/cgroup',
                       root: str = '/sys/fs/cgroup') -> float:
    """Seconds the CPU controller held this process's cgroup back, so far; 0 where none.

    The group's own count (cgroup v1 `throttled_time`, in ns; v2
    `throttled_usec`). A process with sibling engine processes in its group
    counts the group's time; the findings divide by processes.
    """
    try:
        with open(cgroup_file) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0.0
    found = []
    for line in lines:
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if 'cpu' in controllers.split(','):
            found += [(os.path.join(root, mount, path.lstrip('/'), 'cpu.stat'),
                       'throttled_time', 1e-9) for mount in ('cpu,cpuacct', 'cpu')]
        elif controllers == '':
            found.append((os.path.join(root, path.lstrip('/'), 'cpu.stat'),
                          'throttled_usec', 1e-6))
    for stat, key, unit in found:
        try:
            with open(stat) as f:
                for line in f:
                    name, _, value = line.partition(' ')
                    if name == key:
                        return int(value) * unit
        except (OSError, ValueError):
            continue
    return 0.0


def runqueue_wait_s() -> float:
    """Seconds this process's threads have waited for a CPU while runnable, so far.

    Linux's per-thread schedstat (its second field). 0 where there is none.
    Read at the window's start and end only.
    """
    try:
        tasks = os.listdir('/proc/self/task')
    except OSError:
        return 0.0
    total = 0
    for tid in tasks:
        try:
            with open('/proc/self/task/%s/schedstat' % tid) as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue  # a thread that just ended, or no schedstat
    return total / NS


# A window's first sample this late means the sampling thread itself was held back.
LATE_NS = NS // 10


@dataclass(frozen=True)
class CpuSample:
    """This process's CPU, runqueue wait and cgroup throttling at one instant."""
    at_ns: int
    cpu_s: float
    runqueue_s: float
    throttled_s: float

    @classmethod
    def now(cls) -> "CpuSample":
        return cls(time.perf_counter_ns(), time.process_time(), runqueue_wait_s(),
                   cgroup_throttled_s())


def window_start(before: Optional[CpuSample], opened: CpuSample,
                 measure_ns: int) -> CpuSample:
    """The sample a window's figures start from: the one taken as it opened or,
    when the sampling thread ran late, the last one taken before it, under the
    warmup's same load (a process starved of CPU missed its whole 8 s window,
    and showed no CPU and no wait at all)."""
    if before is not None and opened.at_ns - measure_ns > LATE_NS:
        return before
    return opened


def window_figures(start: CpuSample, end: CpuSample, window_s: float) -> Tuple[float, float]:
    """CPU and wait seconds over a window of `window_s` seconds, from the samples
    around it: their growth scaled by the window over the span between them
    (1 when both are on time)."""
    span_s = (end.at_ns - start.at_ns) / NS
    if span_s <= 0 or window_s <= 0:
        return 0.0, 0.0
    scale = window_s / span_s
    wait = cpu_wait_s(end.runqueue_s - start.runqueue_s, end.throttled_s - start.throttled_s,
                      span_s)
    return max(0.0, end.cpu_s - start.cpu_s) * scale, wait * scale


class ProcessRun:
    """The threads of one process and their merged figures.

    Process ``index`` of ``job.processes`` runs its share of the job's
    ``concurrency`` threads; ``tick`` is called about once a second.
    """

    def __init__(self, job: Job, index: int, schedule: Schedule,
                 tick: Optional[Callable[["ProcessRun"], None]] = None) -> None:
        self.job = job
        self.index = index
        self.schedule = schedule
        self.tick = tick
        self.total_threads = job.concurrency
        self.thread_base, self.nthreads = share(job.concurrency, job.processes, index)
        room_for(self.nthreads)
        self.pace = Pace.for_process(job, schedule, self.thread_base, self.nthreads)
        self.stop = self.pace.stop
        self.sizes = job.sizes
        self.pattern = Pattern(job.seed)
        self.tls = (make_ssl_context(job.ca_bundle, job.insecure)
                    if Endpoint(job.targets[0]).tls else None)
        objects = job.object_count() if job.reads_prefilled else 0
        self.prefilled = [job.prefill_key(i) for i in range(objects)]
        self.stats = [ThreadStats() for _ in range(self.nthreads)]
        by_target: Dict[str, List[int]] = {}
        for gtid in range(self.thread_base, self.thread_base + self.nthreads):
            by_target.setdefault(job.target_of(gtid), []).append(gtid)
        self.paces = {target: self.pace.for_target(job, gtids)
                      for target, gtids in by_target.items()}
        self.workers: List[Worker] = []
        self.cpu_window_s = 0.0
        self.wait_window_s = 0.0

    def halt(self) -> None:
        """Stop now: no new requests, requests in flight are cut off."""
        self.stop.set()
        for worker in self.workers:
            worker.ops.client.conn.abort()

    def live(self) -> Tuple[int, int, int, int]:
        ops = nbytes = errors = lat = 0
        for st in self.stats:
            ops += st.live_ops
            nbytes += st.live_bytes
            errors += st.live_errors
            lat += st.live_lat_ns
        return ops, nbytes, errors, lat

    def _worker(self, gtid: int, stats: ThreadStats) -> Worker:
        ops = Operations(self.job, gtid=gtid, target=self.job.target_of(gtid), tls=self.tls,
                         sizes=self.sizes,
                         pattern=self.pattern, prefilled=self.prefilled,
                         total_threads=self.total_threads, samples=stats.samples)
        return Worker(pace=self.paces[ops.target], ops=ops, stats=stats,
                      timeout_s=self.job.timeout_s)

    def run(self) -> Dict[str, Any]:
        """Run the threads to the end; returns this process's raw result."""
        threads = []
        for i, st in enumerate(self.stats):
            self.workers.append(self._worker(self.thread_base + i, st))
        if self.workers and reactor.suits(self.job, self.tls is not None):
            driver = reactor.Reactor(self.workers, self.schedule)
            threads.append(threading.Thread(target=driver.run, name="loadgen", daemon=True))
        else:
            for i, worker in enumerate(self.workers):
                threads.append(threading.Thread(target=worker.loop, name="loadgen-%d" % i,
                                                daemon=True))
        for t in threads:
            t.start()
        sched = self.schedule
        clock = time.perf_counter_ns

        def alive() -> bool:  # no threads at all: a sampling job, alive to the window's end
            return not self.stop.is_set() and (not threads or any(t.is_alive()
                                                                  for t in threads))

        # wait for the measured window, sample CPU at its start
        before: Optional[CpuSample] = None
        while alive() and clock() < sched.measure_ns:
            self._tick()
            before = CpuSample.now()
            Schedule.sleep_until(min(sched.measure_ns, clock() + NS // 2))
        start = window_start(before, CpuSample.now(), sched.measure_ns)
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
        end = CpuSample.now()
        window_end = min(end.at_ns, sched.end_ns)
        # requests in flight at the end finish (outside the window)
        for t in threads:
            t.join(self.job.timeout_s + 5.0 if not self.stop.is_set() else 2.0)
        self.halt()
        self._tick()
        self.cpu_window_s, self.wait_window_s = window_figures(
            start, end, max(0, window_end - sched.measure_ns) / NS)
        return self.raw_result(window_end)

    def _tick(self) -> None:
        if self.tick is not None:
            try:
                self.tick(self)
            except Exception:
                pass

    def targets(self) -> List[Dict[str, Any]]:
        """Per endpoint of the job: this process's workers on it, their ops and errors."""
        found = {url: TargetStats(url) for url in self.job.targets}
        for worker in self.workers:
            entry = found[worker.ops.target]
            entry.workers += 1
            for st in worker.stats.by_op.values():
                entry.ops += st.ops
                entry.errors += st.errors
        return [entry.to_dict() for entry in found.values()]

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
            "targets": self.targets(),
            "per_second": series.to_list(),
            "client_cpu_s": self.cpu_window_s,
            "client_wait_s": self.wait_window_s,
            "client_cpu_total_s": t.user + t.system,
            "elapsed_s": elapsed_ns / NS,
            "error_samples": samples,
            "exhausted": "exhausted" in reasons,
            "interrupted": "stopped" in reasons,
        }
