"""Clocks of the agents' hosts that disagree, measured over the agent channel.

The mgr gives the agents one absolute start time on its clock, and each
agent starts when its own clock reaches it: an agent whose clock is off
starts that much early or late, so the agents' measured windows do not line
up (the merged figures count seconds only some agents loaded), and the
mgr's per-second PG samples name seconds of a window that is not where the
agents measured. The clocks compared are every agent's and the mgr's own
(its offset 0 by definition): the skew is the spread of their offsets.

Measured when the agents are up (agents/clock.py), so it is known once
they are ready, before the load starts; `check` cannot see it. Above
REFUSE_S the workload is not started: the figures could not be lined up.
"""
from typing import Mapping, Optional

from ..agents.clock import ClockSample
from .finding import Finding, Level

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
