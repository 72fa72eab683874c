"""The daemons an agent counts: by name, those of its own host."""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import pytest

from rgwbench.agents.coordinator import AgentRun
from rgwbench.agents.launchers import (MGR_PROCESS, LocalWithSamplers, OrchestratorLauncher,
                                       loading_agents)
from rgwbench.loadgen.workload import Job
from rgwbench.cluster.sampled_daemons import (ServerDaemon, ServerDaemons, ingress_haproxies,
                                              server_daemons)
from rgwbench.tests.fixtures import rgw_service_map

FSID = '5b5c7a9e-0000-4000-8000-000000000001'


class FakeSpec(NamedTuple):
    name: str
    backend_service: Optional[str]

    def service_name(self) -> str:
        return self.name


class FakeService(NamedTuple):
    spec: FakeSpec


class FakeDaemon(NamedTuple):
    daemon_type: str
    daemon_id: str
    hostname: str

    def name(self) -> str:
        return '%s.%s' % (self.daemon_type, self.daemon_id)


class FakeOrchestrator:
    def __init__(self) -> None:
        self.services = [FakeService(FakeSpec('ingress.rgw.foo', 'rgw.foo')),
                         FakeService(FakeSpec('ingress.rgw.other', 'rgw.other'))]
        self.daemons = {
            'ingress.rgw.foo': [FakeDaemon('haproxy', 'rgw.foo.h1.aaa', 'h1'),
                                FakeDaemon('keepalived', 'rgw.foo.h1.bbb', 'h1'),
                                FakeDaemon('haproxy', 'rgw.foo.h2.ccc', 'h2')],
            'ingress.rgw.other': [FakeDaemon('haproxy', 'rgw.other.h1.ddd', 'h1')]}

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any:
        assert service_type == 'ingress'
        return self.services

    def list_daemons(self, service_name: Optional[str] = None,
                     daemon_type: Optional[str] = None, daemon_id: Optional[str] = None,
                     host: Optional[str] = None, refresh: bool = False) -> Any:
        return self.daemons[str(service_name)]


def test_haproxies_of_the_ingress_in_front_of_the_rgw_service() -> None:
    found = ingress_haproxies(FakeOrchestrator(), lambda r: r, 'rgw.foo')
    assert found == [ServerDaemon('haproxy.rgw.foo.h1.aaa', 'h1'),
                     ServerDaemon('haproxy.rgw.foo.h2.ccc', 'h2')]
    assert ingress_haproxies(FakeOrchestrator(), lambda r: r, 'rgw.none') == []


def test_rgw_daemons_by_the_name_the_orchestrator_gives_them() -> None:
    service_map = rgw_service_map(**{'foo.vm.abc': 'beast port=8000',
                                     'foo.vm.def': 'beast port=8001'})
    daemons = server_daemons(service_map, FSID, [ServerDaemon('haproxy.x.vm.q', 'vm.example')])
    assert daemons.daemons == (ServerDaemon('rgw.foo.vm.abc', 'vm'),
                               ServerDaemon('rgw.foo.vm.def', 'vm'),
                               ServerDaemon('haproxy.x.vm.q', 'vm.example'))
    # An agent's id is its host's name, short or not.
    assert daemons.on_host('vm') == {'rgw.foo.vm.abc': 'vm', 'rgw.foo.vm.def': 'vm',
                                     'haproxy.x.vm.q': 'vm.example'}
    assert daemons.on_host('other') == {}


class NoLauncher:
    started_by = 'mgr-process'
    samplers: Sequence[str] = ()

    def agent_ids(self) -> List[str]:
        return ['h1', 'h2']


def test_each_agent_is_given_the_daemons_of_its_host_by_name() -> None:
    daemons = ServerDaemons(daemons=(ServerDaemon('rgw.a', 'h1'), ServerDaemon('rgw.b', 'h2'),
                                     ServerDaemon('haproxy.i.h2.x', 'h2')), fsid=FSID)
    job = Job(endpoint='http://h1:80', access_key='a', secret_key='s')
    agent_run = AgentRun(job, NoLauncher(), server_daemons=daemons)  # type: ignore
    for agent, wanted in (('h1', {'rgw.a': 'h1'}),
                          ('h2', {'rgw.b': 'h2', 'haproxy.i.h2.x': 'h2'})):
        given = Job.from_dict(agent_run.job_doc(agent)['job'])
        assert given.proc_daemons == wanted and given.proc_fsid == FSID


def test_agent_containers_see_the_hosts_processes() -> None:
    from ceph.deployment.service_spec import ServiceSpec
    launcher = OrchestratorLauncher(None, ['h1'], 'quay.io/ceph/ceph:v20',  # type: ignore
                                    lambda r: r)
    spec = launcher.spec({'server': 'https://10.0.0.1:7480', 'fingerprint': 'ab',
                          'secret': 's'})
    unprivileged = ['--net=host', '--pid=host', '--init=false', '--cap-drop=ALL',
                    '--security-opt=no-new-privileges', '--user=65534:65534']
    assert spec.args == unprivileged
    # As the orchestrator keeps it, in this release's own spec class: its files owned by
    # the user the agent runs as.
    again = ServiceSpec.from_json(spec.to_json())
    assert again.args == unprivileged and (again.uid, again.gid) == (65534, 65534)
    again.validate()


def test_hosts_of_daemons_without_an_agent_get_one_that_only_samples() -> None:
    daemons = ServerDaemons(daemons=(
        ServerDaemon('rgw.a', 'h1.example'), ServerDaemon('rgw.b', 'h2'),
        ServerDaemon('haproxy.i.h3.x', 'h3'), ServerDaemon('rgw.c', 'h4')))
    known = ['h4', 'h3', 'h2', 'h1', 'h5']
    # A daemon's host named by its FQDN in the service map is the orchestrator's h1.
    assert daemons.unwatched_hosts(['h2'], known) == ['h1', 'h3', 'h4']
    assert daemons.unwatched_hosts(['h1', 'h2', 'h3', 'h4'], known) == []
    # A host the orchestrator does not know cannot be given an agent.
    assert daemons.unwatched_hosts(['h2'], ['h2', 'h3']) == ['h3']
    launcher = OrchestratorLauncher(None, ['h2', 'h5'], 'image', lambda r: r,  # type: ignore
                                    samplers=['h1', 'h2', 'h3'])
    assert launcher.agent_ids() == ['h2', 'h5', 'h1', 'h3']
    assert launcher.samplers == ['h1', 'h3']
    spec = launcher.spec({'server': 'https://10.0.0.1:7480', 'fingerprint': 'ab'})
    assert [h.hostname for h in spec.placement.hosts] == ['h2', 'h5', 'h1', 'h3']


class Recorded:
    """A launcher that notes what is asked of it."""

    def __init__(self, name: str, ids: List[str], calls: List[str]) -> None:
        self.name, self.ids, self.calls = name, ids, calls

    def agent_ids(self) -> List[str]:
        return list(self.ids)

    def leftovers(self) -> Dict[str, Any]:
        return {'folder': '/f', 'host': 'h1'} if self.name == 'local' else {'service': 's'}

    def launch(self, config: Dict[str, Any]) -> None:
        self.calls.append('launch ' + self.name)

    def problem(self, agent: str) -> Optional[str]:
        return '%s knows %s' % (self.name, agent)

    def remove(self) -> None:
        self.calls.append('remove ' + self.name)
        if self.name == 'sampling':
            raise RuntimeError('the orchestrator does not answer')


def test_a_local_agent_gets_samplers_on_the_other_hosts_of_daemons() -> None:
    calls: List[str] = []
    launcher = LocalWithSamplers(Recorded('local', ['h1'], calls),  # type: ignore
                                 Recorded('sampling', ['h2', 'h3'], calls))  # type: ignore
    assert launcher.started_by == MGR_PROCESS
    assert launcher.agent_ids() == ['h1', 'h2', 'h3']
    assert list(launcher.samplers) == ['h2', 'h3'] and loading_agents(launcher) == ['h1']
    # Both are journaled: a mgr that vanishes leaves the local agent and the service.
    assert launcher.leftovers() == {'folder': '/f', 'host': 'h1', 'service': 's'}
    launcher.launch({})
    assert launcher.problem('h1') == 'local knows h1'
    assert launcher.problem('h3') == 'sampling knows h3'
    # The local agent is removed even when the orchestrator fails to remove the samplers.
    with pytest.raises(RuntimeError):
        launcher.remove()
    assert calls == ['launch local', 'launch sampling', 'remove sampling', 'remove local']
    # In a run, the local agent carries the whole load; the others only sample.
    daemons = ServerDaemons(daemons=(ServerDaemon('rgw.a', 'h1'), ServerDaemon('rgw.b', 'h2'),
                                     ServerDaemon('rgw.c', 'h3')), fsid=FSID)
    job = Job(endpoint='http://h1:80', access_key='a', secret_key='s', concurrency=8)
    agent_run = AgentRun(job, launcher, server_daemons=daemons)
    loader = Job.from_dict(agent_run.job_doc('h1')['job'])
    assert loader.concurrency == 8 and not loader.sample_only
    sampler = Job.from_dict(agent_run.job_doc('h3')['job'])
    assert sampler.sample_only and sampler.concurrency == 0
    assert sampler.proc_daemons == {'rgw.c': 'h3'}


class _Daemon:
    def __init__(self, hostname: str, status_desc: str) -> None:
        self.hostname = hostname
        self.status_desc = status_desc


class _Orch:
    def __init__(self, daemons: List[_Daemon]) -> None:
        self.daemons = daemons

    def list_daemons(self, service_name: str, refresh: bool) -> List[_Daemon]:
        return self.daemons


def test_an_agent_cephadm_calls_starting_is_alive_and_a_stopped_one_dead() -> None:
    # cephadm says `starting` from the deployment until its next refresh of the host.
    launcher = OrchestratorLauncher(_Orch([_Daemon('h1', 'starting'), _Daemon('h2', 'stopped'),
                                           _Daemon('h3', 'error')]),  # type: ignore
                                    ['h1', 'h2', 'h3'], 'image', lambda r: r)
    assert launcher.problem('h1') is None
    assert launcher.problem('h2') == 'agent container on h2 is stopped'
    assert launcher.problem('h3') == 'agent container on h3 is error'
