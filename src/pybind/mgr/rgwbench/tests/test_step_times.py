"""How long the cluster's steps took here: timed where ClusterAccess makes them, kept
(the last few of each kind) in the module's store, and counted by the next plan."""
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.osd_fakes import OsdRestartMgr
from rgwbench.tests.rgw_restart_fakes import InstantRestartMgr
from rgwbench.tests.run_fakes import ServingCluster, Setup

from rgwbench.cluster.access import ClusterAccess
from rgwbench.cluster.step_times import (DAEMON_RESTART, KEPT, OSD_BATCH, RGW_SPEC, SPEC,
                                         STEP_TIMES_KEY, StepTimeStore, spec_kind)
from rgwbench.profiles.estimates import ClusterWork, default_steps, step_seconds
from rgwbench.runs.plan_text import estimate_text, run_plan_to_text
from rgwbench.serial import dump
from rgwbench.tests.s3stub import StubS3

PER_HOST = {'rgw-per-host': 2}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class SlowOsdMgr(OsdRestartMgr):
    """Each OSD takes `seconds` to restart."""

    def __init__(self, clock: Clock, seconds: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock, self.seconds = clock, seconds

    def daemon_action(self, action: str, daemon_name: str, image: Optional[str] = None) -> None:
        self.clock.now += self.seconds
        super().daemon_action(action, daemon_name, image)


class SlowRgwMgr(InstantRestartMgr):
    """Its RGW service takes `seconds` to restart."""

    def __init__(self, clock: Clock, seconds: float) -> None:
        super().__init__(count=3)
        self.clock, self.seconds = clock, seconds

    def service_action(self, action: str, service_name: str) -> None:
        self.clock.now += self.seconds
        super().service_action(action, service_name)


def told() -> Tuple[List[Tuple[str, float]], Any]:
    steps: List[Tuple[str, float]] = []
    return steps, lambda kind, seconds: steps.append((kind, seconds))


def test_each_batch_of_osds_restarted_is_timed() -> None:
    clock = Clock()
    steps, took = told()
    cluster = ClusterAccess(SlowOsdMgr(clock, 4.0, stale_reads=0,  # type: ignore
                                       hosts={'h1': [0, 3], 'h2': [1]}),
                            lambda found: found, lambda spec: spec, timeout_s=60,
                            clock=clock, sleep=lambda s: None, step_took=took)
    cluster.restart('osd')
    # a host's two OSDs together, then the other's one
    assert steps == [(OSD_BATCH, 8.0), (OSD_BATCH, 4.0)]


def test_a_restart_of_the_rgw_service_is_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr('rgwbench.cluster.access.answers', lambda url: None)
    clock = Clock()
    steps, took = told()
    cluster = ClusterAccess(SlowRgwMgr(clock, 31.0), lambda found: found,  # type: ignore
                            lambda spec: spec, timeout_s=600, clock=clock,
                            sleep=lambda s: None, step_took=took)
    cluster.restart('rgw.default')
    assert steps == [(DAEMON_RESTART, 31.0)]


def test_a_step_whose_time_cannot_be_kept_is_made_all_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr('rgwbench.cluster.access.answers', lambda url: None)
    clock = Clock()
    said: List[str] = []

    def refused(kind: str, seconds: float) -> None:
        raise OSError('the store refused it')
    mgr = SlowRgwMgr(clock, 2.0)
    cluster = ClusterAccess(mgr, lambda found: found, lambda spec: spec,  # type: ignore
                            timeout_s=600, clock=clock, sleep=lambda s: None,
                            log=said.append, step_took=refused)
    cluster.restart('rgw.default')
    assert mgr.generation == 1
    assert 'the time of a step (daemon_restart) was not kept: the store refused it' in said


def test_the_store_keeps_the_last_of_each_kind_and_gives_their_median() -> None:
    store = MemoryStore()
    times = StepTimeStore(store)
    assert times.medians() == {}
    for seconds in [1.0] * KEPT + [10.0, 11.0, 60.0, 9.0, 10.5]:
        times.took(DAEMON_RESTART, seconds)
    times.took(SPEC, 5.0)
    kept = json.loads(store.data[STEP_TIMES_KEY])
    assert len(kept[DAEMON_RESTART]) == KEPT
    # the four 1 s restarts still kept and one slow by chance (60 s) do not move it
    assert times.medians() == {DAEMON_RESTART: 9.0, SPEC: 5.0}


@pytest.mark.parametrize('stored', ['not json', '[1, 2]', json.dumps({
    'daemon_restart': 'fast', 'spec': [-1, True], 'later_kind': [3.0]})])
def test_what_the_store_holds_that_is_no_step_time_is_left_out(stored: str) -> None:
    store = MemoryStore()
    store.set_store(STEP_TIMES_KEY, stored)
    times = StepTimeStore(store)
    assert times.medians() == {}
    times.took(OSD_BATCH, 12.0)
    assert times.medians() == {OSD_BATCH: 12.0}


class TimedCluster(ServingCluster):
    """The fake cluster whose steps take `seconds` (by kind), told as ClusterAccess
    tells them (an OSD restart: each batch)."""

    def __init__(self, stubs: Sequence[StubS3], times: StepTimeStore,
                 seconds: Dict[str, float]) -> None:
        super().__init__(stubs)
        self.times, self.seconds = times, seconds

    def restart(self, daemons: str) -> None:
        super().restart(daemons)
        for _ in range(self.osd_restart_batches() if daemons == 'osd' else 1):
            self.times.took(OSD_BATCH if daemons == 'osd' else DAEMON_RESTART,
                            self.seconds[OSD_BATCH if daemons == 'osd' else DAEMON_RESTART])

    def put_service(self, service_name: str, spec: Optional[Dict[str, Any]],
                    replaced: Optional[Dict[str, Any]] = None) -> None:
        super().put_service(service_name, spec, replaced)
        self.times.took(spec_kind(service_name), self.seconds[spec_kind(service_name)])


def test_after_a_run_the_plan_counts_each_step_at_the_time_it_took_here(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    times = StepTimeStore(MemoryStore())
    s = Setup(stub, certificate, step_times=times.medians)
    s.cluster = TimedCluster([stub], times,
                             {DAEMON_RESTART: 10.0, RGW_SPEC: 6.0, OSD_BATCH: 12.0})
    # msgr2 secure (every OSD restarted, then RGW), then RGW's spec changed (so applied
    # and put back) with secure mode put back
    profile = s.profile(baseline='v0', variants=[
        {'name': 'v0', 'settings': {'msgr2-secure': 'on'}},
        {'name': 'v1', 'settings': PER_HOST}])
    before = s.engine.plan(profile)
    defaults = before['step_seconds']
    parts = {DAEMON_RESTART: 'daemon_restarts', RGW_SPEC: 'specs', OSD_BATCH: 'osd_restarts'}
    counted = {kind: before['estimate'][part] / defaults[kind] for kind, part in parts.items()}
    assert all(counted.values()), counted
    assert before['estimate_measured'] == []
    assert run_plan_to_text(before).splitlines()[1].endswith(', default step times')

    run_id = s.engine.start(profile)
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']

    after = s.engine.plan(profile)
    assert after['step_seconds'] == dict(defaults, daemon_restart=10.0, rgw_spec=6.0,
                                         osd_batch=12.0)
    assert [after['estimate'][p] for p in parts.values()] == pytest.approx([
        counted[DAEMON_RESTART] * 10.0, counted[RGW_SPEC] * 6.0, counted[OSD_BATCH] * 12.0])
    assert after['estimated_s'] == pytest.approx(before['estimated_s'] + sum(
        counted[kind] * (after['step_seconds'][kind] - defaults[kind]) for kind in parts))
    assert after['estimate_measured'] == ['daemon_restarts', 'osd_restarts', 'specs']
    assert run_plan_to_text(after).splitlines()[1].endswith(
        ', step times measured on this cluster')


def test_the_plan_text_says_which_step_times_were_measured_here() -> None:
    estimate: Dict[str, float] = {
        'workloads': 48, 'osd_restarts': 36, 'specs': 8, 'daemon_restarts': 30, 'prefills': 0,
        'applications': 2, 'run': 3, 'total': 127}
    assert estimate_text(estimate, ['daemon_restarts']) == (
        'estimate: 2m 7s (workloads 48s, OSD restarts 36s, specs applied and put back 8s, '
        'RGW restarts 30s, settings 2s, its S3 user and record 3s), RGW restarts measured '
        'on this cluster, other steps at default times')
    # a plan that restarts nothing says nothing of step times
    assert estimate_text({'workloads': 9.0, 'run': 3.0, 'total': 12.0}, ['specs']) == (
        'estimate: 12s (workloads 9s, its S3 user and record 3s)')


def test_an_rgw_spec_is_a_step_of_its_own_kind() -> None:
    """RGW's spec redeploys each of its daemons, an ingress's deploys HAProxy: timed
    apart."""
    assert spec_kind('rgw.default') == RGW_SPEC
    assert spec_kind('ingress.rgw.default') == SPEC


def test_a_part_is_measured_here_when_every_kind_of_step_it_counts_was() -> None:
    work = ClusterWork(daemon_restarts=2, rgw_specs=2, specs=2)
    rgw_only = step_seconds({DAEMON_RESTART: 30.0, RGW_SPEC: 60.0}, default_steps(20, 3))
    # the ingress's spec is still at its default: specs are not all measured
    assert work.measured_parts(rgw_only) == ['daemon_restarts']
    both = step_seconds({RGW_SPEC: 60.0, SPEC: 5.0}, default_steps(20, 3))
    assert work.measured_parts(both) == ['specs']
    # a part the run does not make says nothing, measured or not
    assert ClusterWork(rgw_specs=1).measured_parts(both) == ['specs']
    assert ClusterWork().measured_parts(both) == []
