"""Clocks of the agents' hosts that disagree, measured over the agent channel.

The mgr gives the agents one absolute start time on its clock, and each
agent starts when its own clock reaches it: an agent whose clock is off
starts that much early or late, so the agents' measured windows do not line
up (the merged figures count seconds only some agents loaded), and the
mgr's per-second PG samples name seconds of a window that is not where the
agents measured. The clocks compared are every agent's and the mgr's own
(its offset 0 by definition): the skew is the spread of their offsets.

Measured when the agents are up, so it is known once they are ready,
before the load starts; `check` cannot see it. Above REFUSE_S the workload
is not started: the figures could not be lined up.

How each agent's clock is measured against the mgr's: NTP's method over two
exchanges (see loadgen/clock.py for the stamps): the mgr's reply leaves at
T1, reaches the agent at T2; the agent's next request leaves at T3 and
reaches the mgr at T4. The agent's clock is then ahead of the mgr's by ((T2
- T1) + (T3 - T4)) / 2, give or take half the round trip (T4 - T1) - (T3 -
T2): whatever the network does, the true offset lies in that interval. Of an
agent's samples, the one of the shortest round trip is kept: the tightest
bound.
"""
import math
import threading
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional

from ..serial import form
from .finding import Finding, Level


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _seconds(ms: float) -> float:
    return ms / 1000.0


@dataclass(frozen=True)
class ClockSample:
    # the agent's clock minus the mgr's
    offset_s: float = field(metadata=form(key='offset_ms', write=_ms, read=_seconds))
    # the true offset is within offset_s +- error_s
    error_s: float = field(metadata=form(key='error_ms', write=_ms, read=_seconds))


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


SKEWS_S = 0.050
REFUSE_S = 1.0
MGR = 'the mgr'


def clock_skew(samples: Mapping[str, ClockSample]) -> Optional[Finding]:
    """The finding for agents' best clock samples (agent to its sample), if any."""
    if not samples:
        return None
    clocks = dict(samples)
    clocks[MGR] = ClockSample(offset_s=0.0, error_s=0.0)
    spread = max(c.offset_s for c in clocks.values()) - min(c.offset_s for c in clocks.values())
    # the true spread is at least this, whatever the round trips hid
    at_least = max(0.0, max(c.offset_s - c.error_s for c in clocks.values()) -
                   min(c.offset_s + c.error_s for c in clocks.values()))
    # Only a spread the round trips prove: on a busy host a slow exchange widens the
    # bound, and its midpoint alone would name clocks that agree (agents on one host).
    if at_least > REFUSE_S:
        level, limit = Level.refuse, REFUSE_S
    elif at_least > SKEWS_S:
        level, limit = Level.skews, SKEWS_S
    else:
        return None
    evidence = tuple('agent %s: %+.1f ms from the mgr\'s clock, +-%.1f ms (half the round '
                     'trip of its best exchange)' % (agent, s.offset_s * 1000, s.error_s * 1000)
                     for agent, s in sorted(samples.items()))
    evidence += ('spread over the mgr and %d agent%s: %.1f ms (at least %.1f ms)' % (
        len(samples), '' if len(samples) == 1 else 's', spread * 1000, at_least * 1000),)
    summary = 'the clocks of the agents\' hosts and the mgr differ by more than %d ms: ' \
              'each agent starts the load when its own clock reaches the common start, ' \
              'so their measured windows do not line up' % round(limit * 1000)
    if level == Level.refuse:
        summary += '; the workload was not started'
    return Finding(
        id='clock-skew', level=level, summary=summary, evidence=evidence,
        fix='chronyc tracking; chronyc sources (on each agent host and the mgr\'s host: '
            'sync them to the same NTP servers)')
