"""A brake on guessing: after each wrong password or secret, its source must wait to try again.

A source is an IPv4 address, or an IPv6 /64: a host commonly has a whole
/64, and counting single IPv6 addresses would let it rotate past the brake.
After its first failure a source waits `first_s`, after each next one twice
as long, up to `max_s`; after `lock_after` failures it is locked until
`lock_s` after its last one. A source that tries before its time is refused
without a check (the panel and the agents' endpoint answer 429 with
Retry-After): nothing sleeps, so a guesser holds no server thread. A
success clears the source.

The table of sources is bounded. When it is full, the source that waited
longest and may try again makes room; a source that must still wait is never
pushed out by a new one, so that rotating addresses frees none. When every
source of a full table must still wait, new sources count as one: many new
addresses guessing at once are braked as a single one, while a source already
known keeps its own count.

Besides each source's count there is one budget for all of them: at most
`budget` failures within any `window_s`. Once it is spent every source is
refused without a check until the oldest failure of the window has aged out,
so that many sources guessing at once (an IPv6 network has more /64s than
the table has rows) get no more tries between them than the budget.
Shared by the panel's login and the agents' endpoint.
"""
import collections
import ipaddress
import threading
import time
from typing import Callable, Deque, Dict, NamedTuple

MAX_SOURCES = 10000
BUDGET = 100            # failures of all sources together ...
BUDGET_WINDOW_S = 600.0  # ... within any 10 minutes
OVERFLOW = '*'          # the source new ones count as while the table is full


def source_of(address: str) -> str:
    """What failures are counted by: an IPv4 address, or an IPv6 /64."""
    try:
        ip = ipaddress.ip_address(address.split('%', 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


class _Failures(NamedTuple):
    failures: int
    last: float          # when the last failure was
    until: float         # until when the source is refused without a check


class AuthBrake:
    def __init__(self, first_s: float = 1.0, max_s: float = 8.0, lock_after: int = 10,
                 lock_s: float = 300.0, clock: Callable[[], float] = time.monotonic,
                 max_sources: int = MAX_SOURCES, budget: int = BUDGET,
                 window_s: float = BUDGET_WINDOW_S) -> None:
        self.first_s = first_s
        self.max_s = max_s
        self.lock_after = lock_after
        self.lock_s = lock_s
        self.clock = clock
        self.max_sources = max_sources
        self.budget = budget
        self.window_s = window_s
        self._lock = threading.Lock()
        self._failures: Dict[str, _Failures] = {}
        self._spent: Deque[float] = collections.deque(maxlen=budget)  # the last failures, when

    def _budget_wait(self, now: float) -> float:
        """Seconds until the budget of all sources has a failure to spend again."""
        while self._spent and now - self._spent[0] >= self.window_s:
            self._spent.popleft()
        if len(self._spent) < self.budget:
            return 0.0
        return self._spent[0] + self.window_s - now

    def _key(self, address: str, now: float) -> str:
        """The source's key in the table; OVERFLOW for a new one while the table is full."""
        key = source_of(address)
        if key in self._failures or len(self._failures) < self.max_sources:
            return key
        free = [k for k, f in self._failures.items() if f.until <= now and k != OVERFLOW]
        if free:
            del self._failures[min(free, key=lambda k: self._failures[k].last)]
            return key
        return OVERFLOW

    def locked_for(self, address: str) -> float:
        """Seconds `address` must still wait before a check (0: it may try now)."""
        with self._lock:
            now = self.clock()
            everyone = self._budget_wait(now)
            key = self._key(address, now)
            found = self._failures.get(key)
            if found is None:
                return everyone
            if now - found.last >= self.lock_s:
                del self._failures[key]
                return everyone
            return max(everyone, found.until - now)

    def failed(self, address: str) -> float:
        """Count a failure of `address`; returns the seconds it must wait before its next try."""
        with self._lock:
            now = self.clock()
            self._budget_wait(now)
            self._spent.append(now)
            key = self._key(address, now)
            count, last, _ = self._failures.get(key, _Failures(0, 0.0, 0.0))
            if count and now - last >= self.lock_s:
                count = 0
            count += 1
            wait = self.lock_s if count >= self.lock_after else \
                min(self.max_s, self.first_s * 2 ** (count - 1))
            self._failures[key] = _Failures(count, now, now + wait)
            return wait

    def succeeded(self, address: str) -> None:
        with self._lock:
            self._failures.pop(source_of(address), None)
