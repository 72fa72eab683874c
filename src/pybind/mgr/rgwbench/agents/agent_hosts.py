"""Where a workload's agents go and what starts them.

A placement (see profiles/placement.py) resolved against the cluster: the hosts the
orchestrator knows, the hosts of the RGW service under test, and the launcher
for them: agent containers placed by the orchestrator, or one agent process on
the mgr's host (with containers that only sample the RGW and HAProxy daemons of
the other hosts, where an orchestrator is there to place them).
"""
from typing import Any, Callable, List, Optional, Protocol, Sequence

from ..profiles.placement import agent_hosts
from ..cluster.sampled_daemons import ServerDaemons
from .launchers import (AgentLauncher, LocalLauncher, LocalWithSamplers, Orchestrator,
                        OrchestratorLauncher)


class HostsAndDaemons(Orchestrator, Protocol):
    """The orchestrator calls of placing (OrchestratorClientMixin): its launchers' and
    the hosts'."""

    def get_hosts(self) -> Any: ...


class AgentPlacing:
    """The hosts and the launcher of a placement, read from the cluster when asked."""

    def __init__(self, orch: HostsAndDaemons, *, raise_if_exception: Callable[[Any], Any],
                 has_backend: Callable[[], bool],
                 rgw_service_names: Callable[[], List[str]],
                 rgw_service: Callable[[Optional[List[str]]], str],
                 server_daemons: Callable[[], ServerDaemons],
                 image: Callable[[], str],
                 local_launcher: Callable[[], LocalLauncher] = LocalLauncher) -> None:
        self.orch = orch
        self.raise_if_exception = raise_if_exception
        self.has_backend = has_backend
        self.rgw_service_names = rgw_service_names
        self.rgw_service = rgw_service
        self.server_daemons = server_daemons
        self.image = image
        self.local_launcher = local_launcher

    def known_hosts(self) -> List[str]:
        return [h.hostname for h in self.raise_if_exception(self.orch.get_hosts())]

    def rgw_hosts(self, names: Optional[List[str]] = None) -> List[str]:
        """The host of each daemon of the RGW service under test (a host once a daemon);
        `names`: the RGW services, when already read."""
        service = self.rgw_service(names)
        return [str(d.hostname) for d in self.raise_if_exception(
            self.orch.list_daemons(service_name=service))]

    def placed_rgw_hosts(self) -> Optional[List[str]]:
        """The RGW hosts agents go to by default: None with no orchestrator backend, none
        when the orchestrator manages no RGW service (RGWs deployed by other means)."""
        if not self.has_backend():
            return None
        names = self.rgw_service_names()
        return self.rgw_hosts(names) if names else []

    def hosts(self, placement: Optional[Sequence[str]]) -> List[str]:
        """The hosts of the placement's agents; none: one agent process on the mgr's host."""
        return agent_hosts(placement, self.placed_rgw_hosts, self.known_hosts)

    def launcher(self, placement: Optional[Sequence[str]]) -> AgentLauncher:
        hosts = self.hosts(placement)
        if hosts:
            samplers = self.server_daemons().unwatched_hosts(hosts, self.known_hosts())
            return OrchestratorLauncher(self.orch, hosts, self.image(), self.raise_if_exception,
                                        samplers=samplers)
        local = self.local_launcher()
        if not self.has_backend():
            return local
        samplers = self.server_daemons().unwatched_hosts(local.agent_ids(), self.known_hosts())
        if not samplers:
            return local
        return LocalWithSamplers(local, OrchestratorLauncher(
            self.orch, [], self.image(), self.raise_if_exception, samplers=samplers))
