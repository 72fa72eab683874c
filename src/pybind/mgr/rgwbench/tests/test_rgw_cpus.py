"""`rgw-cpus`: parsed, refused where the release's spec cannot say it, journaled, put back,
the operator's container arguments kept."""
import copy
import errno
from typing import Any, Dict, List

import pytest
from fixtures import MemoryStore
from rgwbench.tests.fixtures import RGW_SPEC, FakeCluster

from rgwbench.errors import InvalidInput, NotSupported, RGWBenchError
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import SettingContext
from rgwbench.settings.daemon_settings import RGWPerHost, RGWRestart
from rgwbench.settings.journal import LEFT, MADE, UNDONE, Journal, findings
from rgwbench.settings.container_args import takes_container_args
from rgwbench.settings.rgw_cpus import RGWCpus, cpus_of, with_cpus

OPERATOR_ARGS = ['--ulimit=nofile=65536:65536', {'argument': '--env=A=b c', 'split': False}]


def applier(cluster: FakeCluster) -> SettingsApplier:
    ctx = SettingContext(cluster=cluster, rgw_service=lambda: 'rgw.default',  # type: ignore
                         option=lambda name: None, secrets=MemoryStore(), release=16)
    return SettingsApplier(ctx, [RGWPerHost(), RGWCpus(), RGWRestart()])


def spec_with(args: List[Any]) -> Dict[str, Any]:
    return dict(copy.deepcopy(RGW_SPEC), extra_container_args=copy.deepcopy(args))


@pytest.mark.parametrize('raw, cores', [('1', 1.0), ('0.5', 0.5), (' 1.5 ', 1.5), (4, 4.0),
                                        (2.25, 2.25), ('0.01', 0.01), ('1024', 1024.0)])
def test_cores_are_a_positive_number_fractions_allowed(raw: Any, cores: float) -> None:
    assert RGWCpus().parse(raw) == cores


@pytest.mark.parametrize('raw', ['0', '-1', 'two', '', 'nan', 'inf', '0.001', '1.234', '2000',
                                 True, None])
def test_other_values_are_refused_naming_the_setting(raw: Any) -> None:
    with pytest.raises(InvalidInput, match=r'^rgw-cpus: .* is not valid'):
        RGWCpus().parse(raw)


def test_the_cpus_argument_is_set_in_place_and_every_other_argument_kept() -> None:
    assert with_cpus([], 1.0) == ['--cpus=1']
    assert with_cpus(OPERATOR_ARGS, 0.5) == OPERATOR_ARGS + ['--cpus=0.5']
    # an operator's own limit, in each form the runtimes take, is replaced where it was
    assert with_cpus(['--a', '--cpus=8', '--b'], 2.0) == ['--a', '--cpus=2', '--b']
    assert with_cpus(['--cpus 8', '--b'], 2.0) == ['--cpus=2', '--b']
    assert with_cpus(['--cpus', '8', '--b'], 1.5) == ['--cpus=1.5', '--b']
    assert with_cpus([{'argument': '--cpus=8', 'split': False}, '--b'], 2.0) == \
        ['--cpus=2', '--b']
    assert with_cpus(['--cpuset-cpus=0-1'], 1.0) == ['--cpuset-cpus=0-1', '--cpus=1']
    assert cpus_of(['--x', '--cpus', '3']) == '3' and cpus_of(['--cpus 3']) == '3'
    assert cpus_of(['--cpuset-cpus=0']) is None


def test_plan_adds_the_argument_to_the_rgw_spec() -> None:
    cluster = FakeCluster(specs=[spec_with(OPERATOR_ARGS)])
    (plan,) = applier(cluster).plan({'rgw-cpus': '1.5'})
    (change,) = plan.changes
    assert (change.kind, change.target) == ('service', 'rgw.default')
    assert change.after['extra_container_args'] == OPERATOR_ARGS + ['--cpus=1.5']
    assert change.summary == ('ceph orch apply rgw.default with extra_container_args '
                              '--cpus=1.5 (other container arguments kept)')
    assert cluster.calls == []
    # the spec already holds the limit: nothing to change
    held = FakeCluster(specs=[spec_with(['--cpus=1.5'])])
    assert applier(held).plan({'rgw-cpus': 1.5})[0].changes == []


class OlderSpecs(FakeCluster):
    """A release whose ServiceSpec has no extra_container_args (Pacific before 16.2.11)."""

    @staticmethod
    def spec_from_json(spec: Dict[str, Any]) -> Any:
        if 'extra_container_args' in spec:
            raise TypeError("__init__() got an unexpected keyword argument "
                            "'extra_container_args'")
        return FakeCluster.spec_from_json(spec)


def test_a_release_without_container_args_is_refused_in_one_line_and_nothing_changes() -> None:
    assert takes_container_args(FakeCluster.spec_from_json)
    assert not takes_container_args(OlderSpecs.spec_from_json)
    cluster, store = OlderSpecs(), MemoryStore()
    before = copy.deepcopy(cluster.specs)
    a = applier(cluster)
    with pytest.raises(NotSupported) as refused:
        a.plan({'rgw-cpus': '1'})
    assert refused.value.errno == -errno.EOPNOTSUPP
    assert '\n' not in str(refused.value)
    assert str(refused.value).startswith("rgw-cpus: this Ceph release's service spec has no "
                                         'extra_container_args')
    assert isinstance(refused.value, RGWBenchError)
    assert cluster.specs == before and cluster.calls == []
    assert Journal.unfinished(store) is None


def test_applied_journaled_first_then_put_back_exactly() -> None:
    cluster, store = FakeCluster(specs=[spec_with(OPERATOR_ARGS)]), MemoryStore()
    before = copy.deepcopy(cluster.specs)
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan({'rgw-cpus': '1'}))
    (step,) = journal.steps()
    assert (step.kind, step.target, step.state) == ('service', 'rgw.default', MADE)
    assert step.before == before['rgw.default']
    assert cluster.specs['rgw.default']['extra_container_args'] == OPERATOR_ARGS + ['--cpus=1']
    steps = a.revert(journal)
    assert [s.state for s in steps] == [UNDONE]
    assert cluster.specs == before
    assert Journal.unfinished(store) is None and findings(store) == []


def test_with_rgw_per_host_both_go_into_one_spec_and_come_back_together() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    before = copy.deepcopy(cluster.specs)
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan({'rgw-per-host': '2', 'rgw-cpus': '0.5'}))
    spec = cluster.specs['rgw.default']
    assert spec['placement']['count_per_host'] == 2
    assert spec['extra_container_args'] == ['--cpus=0.5']
    a.revert(journal)
    assert cluster.specs == before


def test_the_operators_arguments_changed_mid_run_are_left_as_they_made_them() -> None:
    cluster, store = FakeCluster(specs=[spec_with(OPERATOR_ARGS)]), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan({'rgw-cpus': '1'}))
    # the operator adds an argument of their own while the run goes on
    theirs = OPERATOR_ARGS + ['--cpus=1', '--pids-limit=4096']
    cluster.specs['rgw.default']['extra_container_args'] = copy.deepcopy(theirs)
    (step,) = a.revert(journal)
    assert step.state == LEFT and 'changed' in (step.error or '')
    assert cluster.specs['rgw.default']['extra_container_args'] == theirs
    assert [f.target for f in findings(store)] == ['rgw.default']


def test_arguments_only_normalised_by_the_orchestrator_are_put_back() -> None:
    # Reef and later store {argument} with its `split` filled in
    cluster, store = FakeCluster(specs=[spec_with([{'argument': '--x=1'}])]), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan({'rgw-cpus': '2'}))
    cluster.specs['rgw.default']['extra_container_args'] = [
        {'argument': '--x=1', 'split': False}, '--cpus=2']
    (step,) = a.revert(journal)
    assert step.state == UNDONE
    assert cluster.specs['rgw.default']['extra_container_args'] == [{'argument': '--x=1'}]


def test_verify_reads_the_limit_in_the_stored_spec() -> None:
    cluster = FakeCluster(specs=[spec_with(['--cpus=2'])])
    a = applier(cluster)
    a.settings['rgw-cpus'].verify(a.ctx, 2.0)
    with pytest.raises(InvalidInput, match='has --cpus 2, not 1'):
        a.settings['rgw-cpus'].verify(a.ctx, 1.0)
