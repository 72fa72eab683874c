"""The run's schedule: one absolute start, a warm-up, a measured window.

Every process derives the same schedule from the job's absolute start time
(``start_at``, Unix seconds): the load starts then, the first ``warmup_s``
are left out of the figures, the measured window lasts ``duration_s`` (or
until ``ops`` operations were issued).  An operation counts in the window
in which it completes.
"""

import threading
import time
from typing import Optional, Tuple

NS = 1000000000
FAR_FUTURE = 1 << 62


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

    def next_tick(self, now: int) -> int:
        """Next reporting time: every second from the window start, and its end."""
        if now < self.measure_ns:
            return min(self.measure_ns, now + NS)
        nxt = self.measure_ns + ((now - self.measure_ns) // NS + 1) * NS
        if now < self.end_ns:
            nxt = min(nxt, self.end_ns)
        return nxt


def share(total: int, parts: int, index: int) -> Tuple[int, int]:
    """(first, count) of part ``index`` when ``total`` items go to ``parts``."""
    first = total * index // parts
    return first, total * (index + 1) // parts - first
