"""The checks a run and a load go through: refusals, --force, between workloads, during one."""
import errno
from dataclasses import replace
from typing import Any, Dict, List

import pytest

from rgwbench.checks import Finding, Level
from rgwbench.serial import dump, load
from rgwbench.checks.during import PgWatch
from rgwbench.checks.finding import finding_lines, findings_to_text
from rgwbench.checks.gate import Refused, RunChecks, load_profile, refusal
from rgwbench.profiles import Profile, Variant, Workload

from checks_fakes import FakeView, filled, health_err


def profile(duration: float = 10.0) -> Profile:
    return Profile(name='p', description='', baseline='a', variants=[Variant('a')],
                   workloads=[Workload(name='put', size='4MiB', concurrency=8,
                                       duration_s=duration, warmup_s=0.0)])


def finding(id: str, level: Level) -> Finding:
    return Finding(id=id, level=level, summary='s', evidence=('e',), fix='f')


# -- refusals ---------------------------------------------------------------------------------

def test_nothing_to_refuse() -> None:
    assert refusal([finding('debug-rgw-raised', Level.skews)], 'the run', False) is None


def test_health_err_is_busy_and_forced_past() -> None:
    found = [finding('health-err', Level.refuse), finding('x', Level.skews)]
    refused = refusal(found, 'the run', force=False)
    assert refused is not None and refused.errno == -errno.EBUSY
    assert str(refused) == 'refusing the run: health-err: s (fix: f; or --force)'
    assert refusal(found, 'the run', force=True) is None


def test_capacity_is_enospc_and_never_forced() -> None:
    found = [finding('health-err', Level.refuse), finding('capacity-exceeded', Level.refuse)]
    for force in (False, True):
        refused = refusal(found, 'the load', force)
        assert refused is not None and refused.errno == -errno.ENOSPC
        assert str(refused).startswith('refusing the load: capacity-exceeded: s (fix: f)')
    assert 'health-err' in str(refusal(found, 'the load', False))
    assert 'health-err' not in str(refusal(found, 'the load', True))


def test_before_refuses_on_the_real_checks() -> None:
    checks = RunChecks(view=filled(FakeView()))
    reads = replace(profile(), workloads=[Workload(name='get', op='get', size='4MiB',
                                                   objects=5000)])
    with pytest.raises(Refused) as e:
        checks.before(reads, force=True)  # a prefill of 19.5 GiB, 10 GiB of room
    assert e.value.errno == -errno.ENOSPC and '\n' not in str(e.value)
    assert 'capacity-exceeded: the prefills of a run of profile p need' in str(e.value)
    # An hour of PUTs is no refusal: the capacity guard stops it before nearfull; its
    # one bucket may reach RGW's resharding line
    found = checks.before(profile(3600), force=False)
    assert [f.id for f in found] == ['capacity-estimate', 'bucket-reshard-likely']
    checks = RunChecks(view=health_err(FakeView()))
    with pytest.raises(Refused, match='health-err') as e:
        checks.before(profile(1), force=False)
    assert e.value.errno == -errno.EBUSY
    assert [f.id for f in checks.before(profile(1), force=True)] == [
        'health-err', 'capacity-estimate']


def test_a_load_is_named_as_a_load() -> None:
    checks = RunChecks(view=filled(FakeView()))
    load = load_profile(Workload(name='load', op='get', size='4MiB', concurrency=64,
                                 objects=5000), None)
    with pytest.raises(Refused) as e:
        checks.before(load, force=False, load=True)
    assert str(e.value).startswith('refusing the load: capacity-exceeded: the prefills of '
                                   'the load need')
    assert 'or add OSDs or read fewer objects (--objects))' in str(e.value)


def test_the_module_s_own_warning_is_no_finding() -> None:
    view = FakeView()
    view.health_data = {'status': 'HEALTH_WARN', 'checks': {'RGWBENCH_RUNNING': {
        'severity': 'HEALTH_WARN', 'summary': {'message': 'an rgwbench run (r) is in progress'},
        'detail': []}}}
    assert RunChecks(view=view).now(None) == []


# -- between workloads ------------------------------------------------------------------------

def test_between_keeps_what_is_new_tagged_with_the_workload() -> None:
    view = FakeView().set('client.rgw', 'debug_rgw', '20')
    checks = RunChecks(view=view)
    kept = checks.before(profile(1), force=False)
    assert [f.id for f in kept] == ['debug-rgw-raised', 'capacity-estimate']
    checks.between(kept, variant='a', workload='put', force=False)
    assert len(kept) == 2  # the same finding as before the run: no second one
    view.pgs = {'all': {'active+clean': 50, 'active+clean+scrubbing+deep': 7}}
    checks.between(kept, variant='a', workload='put', force=False)
    (new,) = kept[2:]
    assert (new.id, new.variant, new.workload) == ('pgs-scrubbing', 'a', 'put')
    assert new.evidence == ('7 PGs active+clean+scrubbing+deep',)


def test_between_refuses_a_health_err_after_keeping_it_unless_forced() -> None:
    view = FakeView()
    checks = RunChecks(view=view)
    kept = checks.before(profile(1), force=False)
    health_err(view)
    with pytest.raises(Refused, match='refusing to go on with workload put of variant a'):
        checks.between(kept, variant='a', workload='put', force=False)
    assert [f.id for f in kept if f.workload] == ['health-err']
    checks.between(kept, variant='a', workload='get', force=True)
    assert [(f.id, f.workload) for f in kept if f.workload] == [
        ('health-err', 'put'), ('health-err', 'get')]


def test_between_goes_on_when_the_cluster_cannot_be_read() -> None:
    class Broken(FakeView):
        def osd_map(self) -> Dict[str, Any]:
            raise RuntimeError('no map')
    kept: List[Finding] = []
    RunChecks(view=Broken()).between(kept, variant='a', workload='put', force=False)
    assert kept == []


# -- during a workload ------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_pg_watch_names_the_seconds_of_the_measured_window() -> None:
    clock = Clock()
    summaries = iter([{'all': {'active+clean': 8}}] * 2 + [
        {'all': {'active+clean': 7, 'active+clean+scrubbing': 1}},
        {'all': {'active+clean': 6, 'active+clean+scrubbing': 2}},
        {'all': {'active+clean': 8}},
        {'all': {'active+recovering': 3, 'active+clean+scrubbing': 1}},
    ] + [{'all': {'active+clean': 8}}] * 100)

    def pg_summary() -> Dict[str, Any]:
        clock.now += 1.0
        return next(summaries)
    watch = PgWatch(pg_summary, every_s=0.001, clock=clock)
    with watch:
        while clock.now < 1020:
            pass
    # window from 1002: samples at 1003 and 1004 (scrub), 1006 (both) are in it
    found = {f.id: f for f in watch.findings(window_start=1002.0, duration_s=10.0)}
    assert found['pgs-scrubbing'].seconds == (1, 2, 4)
    assert found['pgs-scrubbing'].evidence == ('up to 2 PGs active+clean+scrubbing',)
    assert found['pgs-recovering'].seconds == (4,)
    assert found['pgs-recovering'].level == Level.skews
    assert watch.findings(window_start=1007.0, duration_s=10.0) == []


def test_where_a_finding_was_seen() -> None:
    f = finding('pgs-scrubbing', Level.skews)
    assert f.where() == 'before the start'
    assert replace(f, variant='tls', workload='put').where() == 'before tls / put'
    during = replace(f, variant='tls', workload='put', seconds=(0, 1, 2, 5, 7, 8))
    assert during.where() == 'tls / put, seconds 0-2, 5, 7-8 of the measured window'
    assert load(Finding, dump(during)) == during
    assert 'variant' not in dump(f) and 'seconds' not in dump(f)
    assert '  when: tls / put, seconds 0-2, 5, 7-8 of the measured window' in \
        finding_lines(during)
    assert 'when:' not in findings_to_text([f])


def test_a_state_seen_twice_in_a_row_held_in_between() -> None:
    watch = PgWatch(lambda: {}, every_s=1.0)
    scrub = {'active+clean+scrubbing': 1}
    watch.samples = [(100.9, scrub, {}), (102.95, scrub, {}),   # 2.05 s apart: held
                     (104.0, {}, {}), (105.5, scrub, {}),
                     (109.9, scrub, {})]                        # 4.4 s apart: not known
    (found,) = watch.findings(window_start=99.0, duration_s=10.0)
    assert found.seconds == (1, 2, 3, 6)
    # held from before the window: from its second 0; a reading at its end is not in it
    assert watch.findings(window_start=101.5, duration_s=4.0)[0].seconds == (0, 1)
