"""The daemons whose CPU and memory a workload counts: by name, and by host.

RGW daemons come from the service map (each once, as `rgw_daemons` reads
it); HAProxy daemons from the orchestrator: those of the ingress services in
front of the RGW service under test. Each agent is given the daemons of its
own host by name (``rgw.<id>``, ``haproxy.<id>``) and finds their processes
in its host's /proc (loadgen/proc.py); a pid from the service map would be
the one inside a container's own PID namespace.
"""
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Tuple

from .rgw_daemons import rgw_daemons


@dataclass(frozen=True)
class ServerDaemon:
    name: str   # as the orchestrator names it: rgw.<id>, haproxy.<id>
    host: str


@dataclass(frozen=True)
class ServerDaemons:
    """The cluster's daemons to count, and its fsid (another cluster's daemons are not)."""
    daemons: Tuple[ServerDaemon, ...] = ()
    fsid: str = ''

    def on_host(self, host: str) -> Dict[str, str]:
        """Name -> host of the daemons on a host (a short host name matches its FQDN)."""
        short = host.split('.')[0]
        return {d.name: d.host for d in self.daemons
                if d.host == host or d.host.split('.')[0] == short}

    def unwatched_hosts(self, agents: List[str], known: List[str]) -> List[str]:
        """The orchestrator's hosts (of `known`) that run one of these daemons and none of
        the `agents`: each needs an agent that samples only, or its daemons go uncounted."""
        def short(host: str) -> str:
            return host.split('.')[0]
        watched = {short(a) for a in agents}
        found = []
        for host in sorted(known):
            if short(host) not in watched and self.on_host(host) and host not in found:
                found.append(host)
        return found

    def job_fields(self, host: str) -> Dict[str, Any]:
        """What the job of an agent on `host` says about the daemons it counts."""
        return {'proc_daemons': self.on_host(host), 'proc_fsid': self.fsid}


class Orchestrator(Protocol):
    """The orchestrator calls made here (OrchestratorClientMixin)."""

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any: ...

    def list_daemons(self, service_name: Optional[str] = None,
                     daemon_type: Optional[str] = None, daemon_id: Optional[str] = None,
                     host: Optional[str] = None, refresh: bool = False) -> Any: ...


def ingress_haproxies(orch: Orchestrator, raise_if_exception: Callable[[Any], Any],
                      rgw_service: str) -> List[ServerDaemon]:
    """The HAProxy daemons of the ingress services whose backend is `rgw_service`."""
    services = raise_if_exception(orch.describe_service(service_type='ingress')) or []
    found = []
    for service in services:
        spec = service.spec
        if getattr(spec, 'backend_service', None) != rgw_service:
            continue
        for daemon in raise_if_exception(
                orch.list_daemons(service_name=spec.service_name())) or []:
            if daemon.daemon_type == 'haproxy':
                found.append(ServerDaemon(name=daemon.name(), host=str(daemon.hostname)))
    return found


def server_daemons(service_map: Mapping[str, Any], fsid: str,
                   haproxies: List[ServerDaemon]) -> ServerDaemons:
    """Every RGW daemon of the service map (named as `ceph orch ps` names it) and the
    given HAProxy daemons."""
    # The service map names an RGW without its `rgw.` (client.rgw.<id> registers as <id>).
    rgws = [ServerDaemon(name='rgw.' + d.name, host=d.host)
            for d in rgw_daemons(dict(service_map))]
    return ServerDaemons(daemons=tuple(rgws + list(haproxies)), fsid=fsid)
