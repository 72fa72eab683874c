"""The check before a change (`settings apply`, a run): PGs only on their way to active+clean
have their wait; PGs missing a copy, and any other problem, are refused at once.

Seen in CI: a test's S3 round trip made RGW's pools, and the next test's apply a few
seconds later found their PGs `creating+peering` and was refused."""
import errno
from typing import Any, Callable, List, Optional, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster, SettlingCluster
from rgwbench.tests.run_fakes import Setup
from rgwbench.tests.s3stub import StubS3
from rgwbench.tests.settings_fakes import applier, session

from rgwbench.errors import Busy
from rgwbench.settings.journal import Journal

THREADS = {'config': {'client.rgw/rgw_thread_pool_size': 128}}
REFUSAL = ('refusing to change the cluster: not every PG is active+clean (%s); --force to '
           'go on anyway')


class Looks:
    """Counts a fake cluster's looks at its PGs and its waits."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.pg_looks = 0
        self.waits: List[str] = []
        not_clean, wait_for = cluster.pgs_not_clean, cluster.wait_for

        def look() -> Optional[str]:
            self.pg_looks += 1
            return not_clean()

        def wait(what: str, check: Callable[[], Optional[str]],
                 timeout_s: Optional[float] = None) -> None:
            self.waits.append(what)
            wait_for(what, check, timeout_s)
        cluster.pgs_not_clean = look  # type: ignore[method-assign]
        cluster.wait_for = wait  # type: ignore[method-assign]


def test_an_apply_waits_for_pgs_made_a_moment_ago_then_changes() -> None:
    cluster, store = SettlingCluster(polls=3), MemoryStore()
    lines: List[str] = []
    s = session(cluster, store)
    s.make_applier = lambda: applier(cluster, log=lines.append)
    s.apply(THREADS)
    s.wait(60)
    assert cluster.polls == 0
    assert s.show()['state'] == 'applied'
    assert cluster.calls[0] == 'config client.rgw/rgw_thread_pool_size=128', cluster.calls
    assert any(line.startswith('waiting (at most ready_timeout) for PGs 64 unknown')
               and line.endswith('before changing the cluster') for line in lines), lines
    assert 'every PG is active+clean before changing the cluster' in lines, lines


def test_pgs_that_stay_settling_past_the_wait_are_refused_and_nothing_changes() -> None:
    cluster, store = SettlingCluster(polls=1000), MemoryStore()
    config = dict(cluster.config)
    looks = Looks(cluster)
    with pytest.raises(Busy) as refused:
        session(cluster, store).apply(THREADS)
    assert str(refused.value) == REFUSAL % 'PGs 64 unknown'
    assert refused.value.errno == -errno.EBUSY
    assert looks.waits == ['PGs made or peering a moment ago to settle before changing the '
                           'cluster']
    assert cluster.calls == [] and cluster.config == config
    assert Journal.unfinished(store) is None


def test_pgs_missing_a_copy_are_refused_at_once() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    cluster.unclean = 'PGs 8 active+undersized+degraded'
    looks = Looks(cluster)
    with pytest.raises(Busy) as refused:
        session(cluster, store).apply(THREADS)
    assert str(refused.value) == REFUSAL % 'PGs 8 active+undersized+degraded'
    assert refused.value.errno == -errno.EBUSY
    assert looks.waits == [] and looks.pg_looks == 1
    assert cluster.calls == [] and Journal.unfinished(store) is None


def test_settling_pgs_beside_another_problem_are_refused_at_once() -> None:
    cluster = SettlingCluster(polls=1000)
    cluster.health_status = 'HEALTH_ERR'
    looks = Looks(cluster)
    problems = applier(cluster).precheck(settle=True)
    assert 'HEALTH_ERR (OSD_FULL)' in problems[0], problems
    assert problems[1] == ('not every PG is active+clean (PGs 64 unknown); --force to go on '
                           'anyway')
    assert looks.waits == []
    cluster.health_status = 'HEALTH_OK'
    cluster.rgws = []
    assert applier(cluster).precheck(settle=True)[-1] == 'no RGW daemon is in the service map'
    assert looks.waits == []


def test_a_plan_waits_for_nothing() -> None:
    cluster = SettlingCluster(polls=1000)
    looks = Looks(cluster)
    assert applier(cluster).precheck() == [
        'not every PG is active+clean (PGs 64 unknown); --force to go on anyway']
    assert looks.waits == [] and looks.pg_looks == 1


def test_a_run_waits_for_pgs_made_a_moment_ago_then_starts(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    polls = [3]

    def settling() -> Optional[str]:
        if polls[0] > 0:
            polls[0] -= 1
            return 'PGs 8 creating+peering'
        return None
    s.cluster.unclean_settles = True
    s.cluster.pgs_not_clean = settling  # type: ignore[method-assign]
    run_id: Any = s.engine.start(s.profile())
    s.engine.wait(180)
    assert polls == [0]
    record = s.results.load(run_id)
    assert record.state == 'complete', record.error
