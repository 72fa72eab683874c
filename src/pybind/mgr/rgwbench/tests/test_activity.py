"""The activity guard: what may change the cluster together, decided in one place."""
import threading
import time
from typing import Callable, Dict, List, Optional

import pytest

from rgwbench.runs.activity import BLOCKED_BY, Activity, ActivityGuard, Going
from rgwbench.errors import Busy


class World:
    """What is going on, as the probes see it."""

    def __init__(self) -> None:
        self.going: Dict[Going, Optional[str]] = {g: None for g in Going}

    def probe(self, going: Going) -> Callable[[], Optional[str]]:
        return lambda: self.going[going]

    def guard(self) -> ActivityGuard:
        return ActivityGuard(probes={g: self.probe(g) for g in Going})


@pytest.mark.parametrize('activity', list(Activity))
@pytest.mark.parametrize('going', list(Going))
def test_an_activity_starts_only_beside_what_it_may_go_with(activity: Activity,
                                                            going: Going) -> None:
    world = World()
    world.going[going] = 'x-1'
    started: List[Activity] = []
    guard = world.guard()
    if going in BLOCKED_BY[activity]:
        with pytest.raises(Busy, match='cannot start the %s: .*x-1' % activity.value):
            guard.start(activity, lambda: started.append(activity))
        assert started == []
    else:
        guard.start(activity, lambda: started.append(activity))
        assert started == [activity]


def test_the_rules() -> None:
    assert BLOCKED_BY[Activity.RUN] == set(Going)
    # a load measures settings kept in place; a revert mends a failed apply
    assert Going.SETTINGS_IN_PLACE not in BLOCKED_BY[Activity.LOAD]
    assert Going.SETTINGS_CHANGING not in BLOCKED_BY[Activity.SETTINGS_REVERT]
    for activity in Activity:
        assert Going.RUN in BLOCKED_BY[activity] and Going.LOAD in BLOCKED_BY[activity]


def test_two_starts_at_once_never_both_see_the_cluster_idle() -> None:
    """A run from the panel and a load from the CLI, started in the same instant."""
    world = World()
    guard = world.guard()
    began: List[str] = []
    refused: List[str] = []
    barrier = threading.Barrier(2)

    def begin(kind: Going, ident: str) -> str:
        time.sleep(0.05)  # the gap a check-then-start without one lock would lose
        world.going[kind] = ident
        began.append(ident)
        return ident

    def start(activity: Activity, kind: Going, ident: str) -> None:
        barrier.wait()
        try:
            guard.start(activity, lambda: begin(kind, ident))
        except Busy:
            refused.append(ident)

    threads = [threading.Thread(target=start, args=(Activity.RUN, Going.RUN, 'run-1')),
               threading.Thread(target=start, args=(Activity.LOAD, Going.LOAD, 'load-1'))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(began) == 1 and len(refused) == 1


def test_what_begin_returns_is_returned() -> None:
    assert World().guard().start(Activity.LOAD, lambda: 'load-7') == 'load-7'
