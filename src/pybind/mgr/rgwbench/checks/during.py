"""PGs that scrub or recover while a workload runs, second by second.

A scrub or a recovery that starts during a workload skews the seconds it
lasts. While the workload runs, a thread reads the mgr's PG summary (a dict
it holds anyway, no mon command) every second and keeps the states seen with
their time; afterwards they become findings naming the seconds of the
measured window they cover (the per-second series' own seconds).
"""
import math
import time
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .periodic import Periodic
from .finding import Finding
from .pg_checks import (RECOVERY_STATES, SCRUB_STATES, recovering_finding, scrubbing_finding,
                        states_with)

SAMPLE_EVERY_S = 1.0


class PgWatch(Periodic):
    """Reads `pg_summary()` every `every_s` while it is entered; `findings()` after."""

    def __init__(self, pg_summary: Callable[[], Dict[str, Any]],
                 every_s: float = SAMPLE_EVERY_S, clock: Callable[[], float] = time.time,
                 log: Optional[Any] = None) -> None:
        super().__init__(self._read, every_s, 'rgwbench-pg-watch', log)
        self.pg_summary = pg_summary
        self.clock = clock
        # (when, scrubbing states, recovering states), every reading
        self.samples: List[Tuple[float, Dict[str, int], Dict[str, int]]] = []

    def _read(self) -> bool:
        states = {str(k): int(v) for k, v in (self.pg_summary().get('all') or {}).items()}
        self.samples.append((self.clock(), states_with(states, SCRUB_STATES),
                             states_with(states, RECOVERY_STATES)))
        return False

    def findings(self, window_start: float, duration_s: float) -> List[Finding]:
        """What was seen in the measured window [window_start, + duration_s).

        A state seen by two readings in a row held in between (the mgr
        updates its PG summary every few seconds): the seconds between them
        count too, not only those a reading fell in.
        """
        found = []
        for scrub, make in ((True, scrubbing_finding), (False, recovering_finding)):
            seconds: Set[int] = set()
            most: Dict[str, int] = {}
            previous: Optional[float] = None
            for at, scrubbing, recovering in self.samples:
                states = scrubbing if scrub else recovering
                if not states:
                    previous = None
                    continue
                held_from = previous if previous is not None and \
                    at - previous <= 3 * self.every_s else at
                previous = at
                # second k of the window is [k, k + 1) from its start
                first, last = held_from - window_start, at - window_start
                touched = [k for k in range(max(0, math.floor(first)), math.floor(last) + 1)
                           if k < duration_s]
                if not touched:
                    continue
                seconds.update(touched)
                for state, n in states.items():
                    most[state] = max(n, most.get(state, 0))
            if seconds:
                finding = make(tuple('up to %d PGs %s' % (n, state)
                                     for state, n in sorted(most.items())))
                found.append(replace(finding, seconds=tuple(sorted(seconds))))
        return found
