"""Where an agent may enrol from: the addresses the cluster knows for its host.

An agent's one-time code is in its launch config, and for a container that is
the agents' spec, which `ceph orch ls --export` shows to a read-only user. A
code is spent at its first use, but whoever reads it and enrols before the
agent would be given the agent's job. So an agent is taken only from an
address of the host it was placed on: the orchestrator's address of the host,
the addresses the host's Ceph daemons (OSDs, RGWs, the mgr) listen or talk on,
and loopback for the mgr's own host. An agent placed on a host it connects
from otherwise (another network, NAT) is refused with the address it came
from; the module option `agent_source_check` turns the check off.
"""
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set

LOOPBACK = frozenset({'127.0.0.1', '::1'})

_SEPARATORS = re.compile(r'[\s,\[\]/]+')


def bare_ip(text: str) -> Optional[str]:
    """An IP address as compared here (an IPv4-mapped IPv6 one as IPv4); None if not one."""
    try:
        found = ipaddress.ip_address(text.strip().split('%', 1)[0])
    except ValueError:
        return None
    mapped = getattr(found, 'ipv4_mapped', None)
    return str(mapped if mapped is not None else found)


def ips_in(text: str) -> Set[str]:
    """The IP addresses in a Ceph address text: `10.0.0.1:6789/0`,
    `[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]`, `[::1]:6800`, or a bare address."""
    found: Set[str] = set()
    for token in _SEPARATORS.split(text or ''):
        for prefix in ('v1:', 'v2:', 'any:'):
            if token.startswith(prefix):
                token = token[len(prefix):]
        ip = bare_ip(token)
        if ip is None and token.count(':') == 1:   # IPv4 with its port
            ip = bare_ip(token.split(':', 1)[0])
        if ip is not None:
            found.add(ip)
    return found


def _short(host: str) -> str:
    return host.split('.')[0]


@dataclass
class HostAddresses:
    """Every address known for each host (by its short name)."""
    by_host: Dict[str, Set[str]] = field(default_factory=dict)

    def add(self, host: Optional[str], addresses: Iterable[str]) -> None:
        if host:
            self.by_host.setdefault(_short(host), set()).update(addresses)

    def of(self, hosts: Iterable[str]) -> Mapping[str, FrozenSet[str]]:
        """The allowed sources of agents on `hosts` (agent ids are host names)."""
        return {h: frozenset(self.by_host.get(_short(h), set())) for h in hosts}


def resolved(name: str, resolve: Callable[[str], List[str]]) -> Set[str]:
    """The addresses of a host's address as the orchestrator has it (an IP or a name)."""
    ip = bare_ip(name)
    if ip is not None:
        return {ip}
    try:
        return {a for a in (bare_ip(x) for x in resolve(name)) if a}
    except OSError:
        return set()


def resolve_name(name: str) -> List[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(name, None)]


def host_addresses(*, orch_hosts: Mapping[str, str], osd_metadata: Mapping[str, Any],
                   service_map: Mapping[str, Any], own_host: str,
                   own_addresses: Iterable[str],
                   resolve: Callable[[str], List[str]] = resolve_name) -> HostAddresses:
    """What the cluster knows of each host's addresses.

    `orch_hosts`: host name -> its address (the orchestrator's); `osd_metadata` and
    `service_map` as the mgr has them; `own_host`: the mgr's host, which may also be
    reached over loopback, and `own_addresses` (the mgr's own)."""
    found = HostAddresses()
    for host, addr in orch_hosts.items():
        found.add(host, resolved(addr, resolve))
    for meta in osd_metadata.values():
        if isinstance(meta, Mapping):
            found.add(meta.get('hostname'), set().union(*(
                ips_in(str(meta.get(k) or '')) for k in
                ('front_addr', 'back_addr', 'hb_front_addr', 'hb_back_addr'))))
    for service in (service_map.get('services') or {}).values():
        for daemon in ((service or {}).get('daemons') or {}).values():
            if isinstance(daemon, Mapping):
                meta = daemon.get('metadata') or {}
                found.add(meta.get('hostname'), ips_in(str(daemon.get('addr') or '')))
    found.add(own_host, set(LOOPBACK) | {a for a in (bare_ip(x) for x in own_addresses) if a})
    return found


def mgr_host_addresses(mgr: Any, orch_hosts: Callable[[], Mapping[str, str]]) -> HostAddresses:
    """`host_addresses` from the active mgr's maps; `orch_hosts`: the orchestrator's hosts
    and their addresses ({} without an orchestrator)."""
    try:
        hosts = orch_hosts()
    except Exception:   # no orchestrator: the daemons' own addresses still serve
        hosts = {}
    mgr_map = mgr.get('mgr_map') or {}
    own = ips_in(str(mgr_map.get('active_addr') or '')) | set().union(*(
        ips_in(str(a.get('addr') or '')) for a in
        ((mgr_map.get('active_addrs') or {}).get('addrvec') or [])))
    return host_addresses(orch_hosts=hosts, osd_metadata=mgr.get('osd_metadata') or {},
                          service_map=mgr.get('service_map') or {},
                          own_host=socket.gethostname(), own_addresses=own)


def enrolment_sources(mgr: Any, orch_hosts: Callable[[], Mapping[str, str]],
                      agents: List[str], warn: Callable[[str], None]
                      ) -> Mapping[str, FrozenSet[str]]:
    """Where each agent may enrol from. Fails closed: with the cluster's maps unreadable
    no address is known for any host, and no agent is taken (each says where it came
    from)."""
    try:
        return mgr_host_addresses(mgr, orch_hosts).of(agents)
    except Exception as e:
        warn('no agent can enrol now: the addresses of their hosts are unreadable (%s)' % e)
        return {a: frozenset() for a in agents}
