"""What a daemon kind needs of the cluster: paths, hosts, mon commands, records."""
import hashlib
import os
import socket
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

import orchestrator
from ceph.deployment.service_spec import ServiceSpec

from .hosts import Host
from .state import DaemonRecord, OrchestratorState


class MonCommander(Protocol):
    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]: ...


class Context:
    def __init__(self, cluster_dir: str, hosts: List[Host], mon: MonCommander,
                 state: OrchestratorState, containers: Optional[Any] = None,
                 cpu_quotas: Optional[Any] = None) -> None:
        self.dir = cluster_dir
        self.conf = os.path.join(cluster_dir, 'ceph.conf')
        self.hosts = hosts
        self.mon = mon
        self.state = state
        # Set on a cluster started with --containers: custom containers and
        # radosgw then run under podman.
        self.containers = containers
        # The daemons' cgroups with a CPU quota (localcluster/cpu_quota.py).
        self.cpu_quotas: Any = cpu_quotas

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise orchestrator.OrchestratorError('Unknown host %s' % name)

    def daemon_dir(self, daemon_name: str) -> str:
        path = os.path.join(self.dir, 'orch', daemon_name)
        os.makedirs(path, exist_ok=True)
        return path

    def command(self, **cmd: Any) -> str:
        inbuf = cmd.pop('inbuf', None)
        ret, out, err = self.mon.mon_command(cmd, inbuf)
        if ret != 0:
            raise orchestrator.OrchestratorError('%s failed: %s' % (cmd['prefix'], err))
        return out

    def daemons_of(self, service_name: str) -> List[DaemonRecord]:
        return sorted((d for d in self.state.daemons().values()
                       if d.service_name == service_name), key=lambda d: (d.host, d.name))

    def spec_of(self, service_name: str) -> Optional[ServiceSpec]:
        record = self.state.services().get(service_name)
        return record.service_spec() if record else None


def port_free(host: Host, port: int, ip: str = '') -> bool:
    """Whether a TCP port can be bound on a host (its own address, or `ip`)."""
    if host.netns:
        # Checked inside the host's namespace; if that cannot be done, the
        # daemon reports a taken port when it starts there.
        return host.can_bind(ip or host.addr, port) is not False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((ip or host.addr, port))
        except OSError:
            return False
    return True


def digest(parts: Sequence[Any]) -> str:
    return hashlib.sha256(repr(list(parts)).encode()).hexdigest()[:16]


class DaemonKind:
    """How the daemons of one service type are configured, started and removed."""

    daemon_type = ''
    # Whether a daemon found dead is started again, as systemd would.
    restart_when_dead = True

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def validate(self, spec: Any, placed: List[Tuple[Host, int]]) -> None:
        """Refuse a spec before anything changes (OrchestratorValidationError)."""

    def ports(self, spec: Any, rank: int) -> List[int]:
        return []

    def check_ports(self, spec: Any, placed: List[Tuple[Host, int]]) -> None:
        """Refuse ports taken on their hosts, except by this service's own daemons."""
        own = {(d.host, p) for d in self.ctx.daemons_of(spec.service_name()) for p in d.ports}
        for host, rank in placed:
            for port in self.ports(spec, rank):
                if (host.name, port) not in own and not port_free(host, port):
                    raise orchestrator.OrchestratorValidationError(
                        'port %d on host %s is already in use' % (port, host.name))

    def files(self, spec: Any, daemon: DaemonRecord) -> Dict[str, str]:
        """Files written into the daemon's folder before it starts."""
        return {}

    def argv(self, spec: Any, daemon: DaemonRecord) -> List[str]:
        raise NotImplementedError

    def env(self, spec: Any, daemon: DaemonRecord) -> Dict[str, str]:
        return {}

    def prepare(self, spec: Any, daemon: DaemonRecord) -> None:
        """Cluster-side set-up before a (re)start: keys, config options."""

    def before_start(self, spec: Any, daemon: DaemonRecord) -> None:
        """Host-side set-up before every start, a restart's too (a CPU quota)."""

    def after_start(self, spec: Any, daemon: DaemonRecord) -> None:
        """Host-side clean-up once the daemon started (a CPU quota it no longer has)."""

    def config_digest(self, spec: Any, daemon: DaemonRecord) -> str:
        return digest([self.argv(spec, daemon), sorted(self.files(spec, daemon).items()),
                       sorted(self.env(spec, daemon).items())])

    def remove(self, spec: Any, daemon: DaemonRecord) -> None:
        """Cluster-side clean-up once the daemon is gone."""

    def remove_service(self, spec: Any) -> None:
        """Cluster-side clean-up once the service is gone."""
