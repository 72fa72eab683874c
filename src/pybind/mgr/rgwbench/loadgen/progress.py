"""The progress line and the server-side samples, driven about once a second."""

import time
from typing import IO, Any, Callable, Dict, Optional, Tuple

from .host_stats import HostSampler
from .proc import ProcSampler
from .schedule import NS, Schedule
from .workload import Job


class Reporter:
    """Progress line and server-side sampling, driven about once a second."""

    def __init__(self, job: Job, schedule: Schedule, stream: Optional[IO[str]],
                 sampler: Optional[ProcSampler],
                 live: Optional[Callable[[Dict[str, Any]], None]] = None,
                 host_sampler: Optional[HostSampler] = None) -> None:
        self.job = job
        self.schedule = schedule
        self.stream = stream
        # Told the same figures as the progress line (an agent posts them to the module).
        self.live = live
        self.sampler = sampler
        # The whole host's figures, beside the daemons' (under the key ``host``).
        self.host_sampler = host_sampler
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
                if self.host_sampler is not None:
                    self.host_sampler.start()
                self._sampling = True
            elif self._sampling:
                if now >= sched.end_ns:
                    self.finish()
                else:
                    self.sampler.sample()
                    if self.host_sampler is not None:
                        self.host_sampler.sample()
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
            if self.host_sampler is not None:
                self.server["host"] = self.host_sampler.stop()
            self._sampling = False
