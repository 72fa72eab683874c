"""Where agents go and what starts them (agents/placing.py), against a fake orchestrator."""
from typing import Any, List, NamedTuple, Optional

import pytest

from rgwbench.agents.launchers import (LocalLauncher, LocalWithSamplers, OrchestratorLauncher)
from rgwbench.agents.agent_hosts import AgentPlacing
from rgwbench.errors import NotFound
from rgwbench.cluster.sampled_daemons import ServerDaemon, ServerDaemons


class Host(NamedTuple):
    hostname: str


class Daemon(NamedTuple):
    hostname: str


class FakeOrchestrator:
    def __init__(self, hosts: List[str], rgw: List[str]) -> None:
        self.hosts, self.rgw = hosts, rgw
        self.asked: List[Optional[str]] = []

    def get_hosts(self) -> List[Host]:
        return [Host(h) for h in self.hosts]

    def list_daemons(self, service_name: Optional[str] = None, daemon_type: Optional[str] = None,
                     daemon_id: Optional[str] = None, host: Optional[str] = None,
                     refresh: bool = False) -> List[Daemon]:
        self.asked.append(service_name)
        return [Daemon(h) for h in self.rgw]

    def apply(self, specs: List[Any], no_overwrite: bool = False) -> Any:
        raise AssertionError('choosing where agents go launches none')

    def remove_service(self, service_name: str, force: bool = False) -> Any:
        raise AssertionError('choosing where agents go removes nothing')


def placing(orch: FakeOrchestrator, *, backend: bool = True, services: Any = ('rgw.foo',),
            daemons: ServerDaemons = ServerDaemons()) -> AgentPlacing:
    return AgentPlacing(orch, raise_if_exception=lambda c: c, has_backend=lambda: backend,
                        rgw_service_names=lambda: list(services),
                        rgw_service=lambda names: (names or list(services))[0],
                        server_daemons=lambda: daemons, image=lambda: 'image:1',
                        local_launcher=lambda: LocalLauncher('mgr-host'))


def test_by_default_an_agent_goes_to_each_rgw_host_of_the_service_under_test() -> None:
    orch = FakeOrchestrator(['h1', 'h2', 'h3'], rgw=['h2', 'h1', 'h2'])
    launcher = placing(orch).launcher(None)
    assert isinstance(launcher, OrchestratorLauncher)
    assert launcher.agent_ids() == ['h1', 'h2'] and launcher.image == 'image:1'
    assert orch.asked == ['rgw.foo']


def test_rgw_hosts_without_an_agent_get_one_that_only_samples() -> None:
    orch = FakeOrchestrator(['h1', 'h2', 'h3'], rgw=['h1', 'h3'])
    daemons = ServerDaemons((ServerDaemon('rgw.foo.h1.a', 'h1'),
                             ServerDaemon('rgw.foo.h3.b', 'h3')))
    launcher = placing(orch, daemons=daemons).launcher(['h1', 'h2'])
    assert launcher.agent_ids() == ['h1', 'h2', 'h3'] and list(launcher.samplers) == ['h3']


def test_without_a_backend_one_agent_runs_on_the_mgr_host() -> None:
    orch = FakeOrchestrator([], rgw=[])
    chosen = placing(orch, backend=False)
    launcher = chosen.launcher(None)
    assert isinstance(launcher, LocalLauncher) and launcher.agent_ids() == ['mgr-host']
    assert chosen.placed_rgw_hosts() is None and orch.asked == []
    with pytest.raises(NotFound, match='no orchestrator backend'):
        chosen.launcher(['rgw'])


def test_the_mgr_placement_samples_the_other_rgw_hosts_through_the_orchestrator() -> None:
    orch = FakeOrchestrator(['mgr-host', 'h2'], rgw=['mgr-host', 'h2'])
    daemons = ServerDaemons((ServerDaemon('rgw.foo.m.a', 'mgr-host'),
                             ServerDaemon('rgw.foo.h2.b', 'h2')))
    launcher = placing(orch, daemons=daemons).launcher(['mgr'])
    assert isinstance(launcher, LocalWithSamplers)
    assert launcher.agent_ids() == ['mgr-host', 'h2'] and list(launcher.samplers) == ['h2']
    alone = placing(orch, daemons=ServerDaemons((ServerDaemon('rgw.foo.m.a', 'mgr-host'),)))
    assert isinstance(alone.launcher(['mgr']), LocalLauncher)


def test_rgws_not_managed_by_the_orchestrator_leave_the_agent_on_the_mgr_host() -> None:
    orch = FakeOrchestrator(['h1'], rgw=['h1'])
    chosen = placing(orch, services=())
    assert chosen.placed_rgw_hosts() == [] and chosen.hosts(None) == []
    assert orch.asked == []
