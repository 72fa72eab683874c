"""A plan's estimate counts what the run will do to the cluster: each restart of RGW,
each spec applied, each batch of OSDs restarted, applied and put back, as many as the
run then makes."""
from typing import Any, Dict, List, Tuple

import pytest
from checks_fakes import FakeView, roomy
from rgwbench.tests.run_fakes import Setup

from rgwbench.checks.gate import RunChecks

from rgwbench.profiles.estimates import (APPLICATION_S, OSD_BATCH_S, RGW_RESTART_S,
                                         RGW_SPEC_S, RUN_ALLOWANCE_S, SLOW_RGW_RESTART_S,
                                         SLOW_RGW_SPEC_S, SPEC_S, WORKLOAD_ALLOWANCE_S,
                                         ClusterWork, default_steps, planned_seconds)
from rgwbench.runs.plan_text import estimate_text, run_plan_to_text
from rgwbench.serial import dump
from rgwbench.tests.s3stub import StubS3

SECURE = {'msgr2-secure': 'on'}
INSECURE = {'msgr2-secure': 'off'}
# a setting of the RGW spec (as TLS at RGW is, which these fakes do not have)
PER_HOST = {'rgw-per-host': 2}
THREADS = {'config': {'client.rgw/rgw_thread_pool_size': 256}}
# the fakes' cluster: Pacific, one RGW daemon, no step timed on it yet
STEPS = default_steps(16, 1)


def variants(*settings: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{'name': 'v%d' % i, 'settings': dict(s)} for i, s in enumerate(settings)]


@pytest.mark.parametrize('settings', [
    # the quick built-in's: RGW restarted for the cluster as it is too
    [{}, THREADS],
    # a spec setting in both, kept (RGW restarted for each all the same)
    [PER_HOST, PER_HOST],
    # put back for the middle variant and applied again
    [SECURE, THREADS, SECURE],
])
def test_the_plan_counts_the_restarts_and_specs_the_run_makes(
        stub: StubS3, certificate: Tuple[str, str], settings: List[Dict[str, Any]]) -> None:
    s = Setup(stub, certificate)
    profile = s.profile(baseline='v0', variants=variants(*settings))
    plan = s.engine.plan(profile)
    run_id = s.engine.start(profile)
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    calls = s.cluster.calls
    batches = s.cluster.osd_restart_batches()   # the fake's two hosts of one OSD
    estimate = plan['estimate']
    assert estimate['daemon_restarts'] == pytest.approx(
        RGW_RESTART_S * calls.count('restart rgw.default'))
    assert estimate['specs'] == pytest.approx(
        RGW_SPEC_S * sum(1 for c in calls if c.startswith('service ')))
    assert plan['step_seconds'] == {'daemon_restart': RGW_RESTART_S, 'rgw_spec': RGW_SPEC_S,
                                    'spec': SPEC_S, 'osd_batch': OSD_BATCH_S}
    assert estimate['osd_restarts'] == OSD_BATCH_S * batches * calls.count('restart osd')
    assert estimate['applications'] == APPLICATION_S * len(settings)
    assert estimate['workloads'] == len(settings) * (2 + WORKLOAD_ALLOWANCE_S)
    assert estimate['run'] == RUN_ALLOWANCE_S
    assert plan['estimated_s'] == estimate['total'] == pytest.approx(
        sum(v for k, v in estimate.items() if k != 'total'))


def test_the_msgr2_shape_applies_its_kept_spec_once(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    """A spec setting kept between the variants: applied and put back once, RGW
    restarted for each variant and once putting back."""
    s = Setup(stub, certificate)
    profile = s.profile(baseline='v0', variants=variants(dict(PER_HOST, **INSECURE),
                                                         dict(PER_HOST, **SECURE)))
    plan = s.engine.plan(profile)
    assert (plan['estimate']['specs'], plan['estimate']['daemon_restarts']) == pytest.approx((
        2 * RGW_SPEC_S, 3 * RGW_RESTART_S))
    assert plan['estimate']['osd_restarts'] == 2 * 2 * OSD_BATCH_S   # on, then off


def test_planned_seconds_adds_its_parts() -> None:
    profile = Setup.profile(Setup.__new__(Setup), baseline='v0',
                            variants=variants({}, THREADS))
    work = ClusterWork(applications=2, daemon_restarts=3, rgw_specs=2, specs=1, osd_batches=4,
                       prefill_s=30)
    parts = planned_seconds(profile, work, STEPS)
    # tiny's one workload: 2 s, no warm-up
    assert parts == {'workloads': 2 * (2 + WORKLOAD_ALLOWANCE_S), 'run': RUN_ALLOWANCE_S,
                     'applications': 2 * APPLICATION_S,
                     'daemon_restarts': 3 * RGW_RESTART_S, 'specs': 2 * RGW_SPEC_S + SPEC_S,
                     'osd_restarts': 4 * OSD_BATCH_S, 'prefills': 30,
                     'total': 2 * (2 + WORKLOAD_ALLOWANCE_S) + RUN_ALLOWANCE_S +
                     2 * APPLICATION_S + 3 * RGW_RESTART_S + 2 * RGW_SPEC_S + SPEC_S +
                     4 * OSD_BATCH_S + 30}


@pytest.mark.parametrize('release, slow', [(16, False), (19, False), (20, True)])
def test_without_times_measured_here_rgw_steps_count_each_daemon_by_release(
        release: int, slow: bool) -> None:
    """Tentacle's radosgw waits for its dedup background when told to stop, until it is
    killed: each daemon takes about 10 s more to restart or redeploy."""
    restart, spec = ((SLOW_RGW_RESTART_S, SLOW_RGW_SPEC_S) if slow else
                     (RGW_RESTART_S, RGW_SPEC_S))
    one, three = default_steps(release, 1), default_steps(release, 3)
    assert (three.daemon_restart_s, three.rgw_spec_s) == pytest.approx((3 * restart, 3 * spec))
    assert (one.daemon_restart_s, one.rgw_spec_s) == (restart, spec)
    # an ingress's spec and an OSD batch do not depend on RGW
    assert (three.spec_s, three.osd_batch_s) == (one.spec_s, one.osd_batch_s) == (
        SPEC_S, OSD_BATCH_S)
    assert default_steps(release, 0) == one
    assert three.measured == frozenset()


def test_the_plan_text_says_the_estimate_and_its_parts(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    assert estimate_text({'workloads': 48, 'osd_restarts': 36, 'specs': 8,
                          'daemon_restarts': 7.5, 'prefills': 0, 'applications': 2,
                          'run': 3, 'total': 104.5}) == (
        'estimate: 1m 44s (workloads 48s, OSD restarts 36s, specs applied and put back '
        '8s, RGW restarts 8s, settings 2s, its S3 user and record 3s), default step times')
    s = Setup(stub, certificate)
    plan = s.engine.plan(s.profile())
    assert run_plan_to_text(plan).splitlines()[1] == estimate_text(
        plan['estimate'], plan['estimate_measured'])


@pytest.mark.parametrize('settings, prefills', [
    # TLS, msgr2 and the like store alike: one prefill read by every variant
    ([{}, SECURE], 1),
    # a config option may change how objects are stored: a prefill of its own
    ([{}, THREADS], 2),
])
def test_the_plan_counts_each_bounded_prefill_at_its_time(
        stub: StubS3, certificate: Tuple[str, str], settings: List[Dict[str, Any]],
        prefills: int) -> None:
    s = Setup(stub, certificate,
              checks=RunChecks(view=roomy(FakeView()), prefill_time=lambda: 300.0))
    plan = s.engine.plan(s.profile(baseline='v0', variants=variants(*settings), workloads=[
        {'op': 'get', 'size': '4MiB', 'concurrency': 2, 'duration': 1, 'warmup': 0},
        {'op': 'put', 'size': '4KiB', 'concurrency': 2, 'duration': 1, 'warmup': 0},
        # its working set given: prefilled whole, in the workload's start
        {'op': 'get', 'size': '4KiB', 'concurrency': 2, 'duration': 1, 'warmup': 0,
         'objects': 100}]))
    assert [w.get('prefill_time_s') for w in plan['workloads']] == [300.0, None, None]
    assert plan['estimate']['prefills'] == prefills * 300.0
