"""A brake on guessing: each wrong password or secret from an address waits longer.

The first failure from an address waits `first_s`, each next one twice as
long up to `max_s`; after `lock_after` failures the address is refused
without a check until `lock_s` has passed since its last failure. A success
clears the address. Shared by the panel's login and the agents' endpoint.
"""
import threading
import time
from typing import Callable, Dict, Tuple


class AuthBrake:
    def __init__(self, first_s: float = 1.0, max_s: float = 8.0, lock_after: int = 10,
                 lock_s: float = 300.0, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.first_s = first_s
        self.max_s = max_s
        self.lock_after = lock_after
        self.lock_s = lock_s
        self.sleep = sleep
        self.clock = clock
        self._lock = threading.Lock()
        self._failures: Dict[str, Tuple[int, float]] = {}  # address -> (count, last failure)

    def locked_for(self, address: str) -> float:
        """Seconds `address` is still refused without a check (0: it may try)."""
        with self._lock:
            count, last = self._failures.get(address, (0, 0.0))
            if count < self.lock_after:
                return 0.0
            left = last + self.lock_s - self.clock()
            if left <= 0:
                del self._failures[address]
                return 0.0
            return left

    def failed(self, address: str) -> float:
        """Count a failure of `address` and wait its delay; returns the seconds waited."""
        with self._lock:
            count, last = self._failures.get(address, (0, 0.0))
            if count and self.clock() - last > self.lock_s:
                count = 0
            count += 1
            self._failures[address] = (count, self.clock())
            if len(self._failures) > 10000:  # never grows without bound
                oldest = min(self._failures, key=lambda a: self._failures[a][1])
                del self._failures[oldest]
        delay = min(self.max_s, self.first_s * 2 ** (count - 1))
        self.sleep(delay)
        return delay

    def succeeded(self, address: str) -> None:
        with self._lock:
            self._failures.pop(address, None)
