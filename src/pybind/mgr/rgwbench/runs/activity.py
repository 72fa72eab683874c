"""The one place that decides what may change the cluster together.

A run, a load and a settings change each start from a CLI command or from the
web panel's threads. Each asks the guard, which checks what else is going on
and starts the new activity under one lock, so two starts never both see the
cluster idle.
"""
import enum
import threading
from typing import Callable, Dict, FrozenSet, Optional, TypeVar

from ..errors import Busy

T = TypeVar('T')


class Activity(enum.Enum):
    RUN = 'run'
    LOAD = 'load'
    SETTINGS_APPLY = 'settings apply'
    SETTINGS_REVERT = 'settings revert'
    # The stored S3 credentials: a run or load holds them, and its clean-up (also a
    # new mgr's, of what it left) reads them again; another user's would not reach its
    # buckets, or reach someone else's.
    CREDENTIALS_CHANGE = 'credentials change'


class Going(enum.Enum):
    """What can be going on when an activity asks to start."""
    RUN = 'run'
    LOAD = 'load'
    SETTINGS_CHANGING = 'settings changing'
    SETTINGS_IN_PLACE = 'settings in place'


# What each activity cannot start beside. Settings kept in place by `settings apply`
# are what a load measures; a run compares its own settings, so it wants none.
BLOCKED_BY: Dict[Activity, FrozenSet[Going]] = {
    Activity.RUN: frozenset({Going.RUN, Going.LOAD, Going.SETTINGS_CHANGING,
                             Going.SETTINGS_IN_PLACE}),
    Activity.LOAD: frozenset({Going.RUN, Going.LOAD, Going.SETTINGS_CHANGING}),
    Activity.SETTINGS_APPLY: frozenset({Going.RUN, Going.LOAD, Going.SETTINGS_CHANGING}),
    # Putting settings back is never held up by settings themselves (a failed apply
    # is what it mends); the session refuses a second thread of its own.
    Activity.SETTINGS_REVERT: frozenset({Going.RUN, Going.LOAD}),
    Activity.CREDENTIALS_CHANGE: frozenset({Going.RUN, Going.LOAD}),
}

_WHY: Dict[Going, str] = {
    Going.RUN: 'run %s is in progress (`ceph rgwbench abort` stops it)',
    Going.LOAD: 'load %s is in progress; wait for it',
    Going.SETTINGS_CHANGING: 'settings %s are being applied or put back; see '
                             '`ceph rgwbench settings show`',
    Going.SETTINGS_IN_PLACE: 'settings %s applied with `ceph rgwbench settings apply` are '
                             'in place; `ceph rgwbench settings revert` first',
}

# Each probe names what is going on (a run id, a load id, a journal id), or None.
Probe = Callable[[], Optional[str]]


class ActivityGuard:
    def __init__(self, *, probes: Dict[Going, Probe]) -> None:
        self._probes = probes
        self._lock = threading.Lock()

    def start(self, activity: Activity, begin: Callable[[], T]) -> T:
        """Run `begin` (which starts the activity) unless something it cannot go beside is on.

        `begin` runs under the guard's lock: it must mark its activity as going
        before it returns, and not wait for the activity to end.
        """
        with self._lock:
            for going in Going:  # a stable order: the first reason is always the same
                if going not in BLOCKED_BY[activity]:
                    continue
                what = self._probes[going]()
                if what is not None:
                    why = _WHY[going] % what
                    raise Busy('cannot start the %s: %s' % (activity.value, why))
            return begin()
