"""The agent's side of the clock comparison with the module, over the agent channel.

The module measures each agent's clock against its own, NTP style, from
four stamps over two exchanges: its reply leaves the mgr at T1 (mgr clock,
the reply's X-Rgwbench-Mgr-Clock header), reaches the agent at T2 (agent
clock); the agent's next request leaves at T3 (agent clock) and reaches the
mgr at T4 (mgr clock). The agent sends T3 in X-Rgwbench-Clock and T1, T2 in
X-Rgwbench-Clock-Echo; the mgr computes the offset ((T2 - T1) + (T3 - T4)) / 2
and its bound, half the round trip (T4 - T1) - (T3 - T2). Nothing the agent
computes is trusted, and no NTP status is asked.

RGWBENCH_AGENT_CLOCK_OFFSET_MS (tests only): shifts the agent's wall clock
by that many milliseconds, as on a host whose clock is that far off: the
agent stamps its requests with it and starts the load when the shifted clock
reaches the common start. The hosts of a local test cluster (network
namespaces, or processes, on one machine) share one kernel clock, and
shifting the real clock would shift the whole machine's: this is the one
way to give one agent a clock of its own there. Unset in real use.
"""
import math
import os
import threading
import time
from typing import Callable, Dict, Mapping, Optional, Tuple

OFFSET_ENV = 'RGWBENCH_AGENT_CLOCK_OFFSET_MS'
SENT = 'X-Rgwbench-Clock'             # T3: the agent's clock as it sends a request
ECHO = 'X-Rgwbench-Clock-Echo'        # "T1,T2" of the last reply the agent got
MGR_CLOCK = 'X-Rgwbench-Mgr-Clock'    # T1: the mgr's clock as it sends a reply


def offset_from_env(environ: Mapping[str, str] = os.environ) -> float:
    """The test-facing shift of the agent's clock, in seconds (0 when unset)."""
    raw = environ.get(OFFSET_ENV, '').strip()
    if not raw:
        return 0.0
    try:
        value = float(raw) / 1000.0
    except ValueError:
        raise ValueError('%s must be a number of milliseconds, got %r' % (OFFSET_ENV, raw))
    if not math.isfinite(value):
        raise ValueError('%s must be finite, got %r' % (OFFSET_ENV, raw))
    return value


class AgentClock:
    """The agent's wall clock (shifted by `offset_s`), and the stamps it sends."""

    def __init__(self, offset_s: Optional[float] = None,
                 now: Callable[[], float] = time.time) -> None:
        self.offset_s = offset_from_env() if offset_s is None else offset_s
        self._now = now
        self._lock = threading.Lock()
        self._last: Optional[Tuple[str, float]] = None   # (T1 as the mgr sent it, T2)

    def wall(self) -> float:
        return self._now() + self.offset_s

    def headers(self) -> Dict[str, str]:
        """The stamps for a request about to be sent (T3, and the last T1, T2)."""
        with self._lock:
            last = self._last
        found = {SENT: '%.6f' % self.wall()}   # after reading T2: T3 >= T2
        if last is not None:
            found[ECHO] = '%s,%.6f' % last
        return found

    def received(self, mgr_clock: Optional[str]) -> None:
        """A reply has come (its T1, if it has one): remember it and T2 for the next request."""
        at = self.wall()
        if not mgr_clock:
            return
        try:
            if not math.isfinite(float(mgr_clock)):
                return
        except ValueError:
            return
        with self._lock:
            self._last = (mgr_clock.strip(), at)
