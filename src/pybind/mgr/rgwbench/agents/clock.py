"""Each agent's clock against the mgr's, measured over the agent channel.

NTP's method over two exchanges (see loadgen/clock.py for the stamps): the
mgr's reply leaves at T1, reaches the agent at T2; the agent's next request
leaves at T3 and reaches the mgr at T4. The agent's clock is then ahead of
the mgr's by ((T2 - T1) + (T3 - T4)) / 2, give or take half the round trip
(T4 - T1) - (T3 - T2): whatever the network does, the true offset lies in
that interval. Of an agent's samples, the one of the shortest round trip is
kept: the tightest bound.
"""
import math
import threading
from dataclasses import dataclass
from typing import Dict, Mapping, Optional


@dataclass(frozen=True)
class ClockSample:
    offset_s: float     # the agent's clock minus the mgr's
    error_s: float      # the true offset is within offset_s +- error_s

    def to_dict(self) -> Dict[str, float]:
        return {'offset_ms': round(self.offset_s * 1000, 3),
                'error_ms': round(self.error_s * 1000, 3)}


def sample(sent: Optional[str], echo: Optional[str], received_at: float) -> Optional[ClockSample]:
    """The sample of a request that reached the mgr at `received_at` (T4, the mgr's clock),
    from its stamps: `sent` T3 and `echo` "T1,T2"; None when it has none or they are
    inconsistent (a clock stepped between the stamps)."""
    if not sent or not echo:
        return None
    try:
        t3 = float(sent)
        first, _, second = echo.partition(',')
        t1, t2 = float(first), float(second)
    except ValueError:
        return None
    t4 = received_at
    if not all(math.isfinite(t) for t in (t1, t2, t3, t4)):
        return None
    delay = (t4 - t1) - (t3 - t2)
    if t3 < t2 or t4 < t1 or delay < 0:
        return None
    return ClockSample(offset_s=((t2 - t1) + (t3 - t4)) / 2.0, error_s=delay / 2.0)


class AgentClocks:
    """The best sample of each agent so far; safe to feed from the channel's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._best: Dict[str, ClockSample] = {}

    def add(self, agent: str, found: ClockSample) -> None:
        with self._lock:
            known = self._best.get(agent)
            if known is None or found.error_s < known.error_s:
                self._best[agent] = found

    def best(self) -> Mapping[str, ClockSample]:
        with self._lock:
            return dict(self._best)
