"""Where `tls@ingress` puts its HAProxy: virtual IPs and ports chosen from the cluster.

As in the published studies, an ingress runs one HAProxy on every RGW host
with a virtual IP of its own (`virtual_ips_list`, which keepalived brings up
one per host), and clients balance over all of them; a release whose
IngressSpec has no `virtual_ips_list` gets one VIP on the first RGW host.

The mgr cannot bind a port on a remote host, so what is free is derived
from what the orchestrator knows (the ports of the daemons on each host,
the addresses of hosts, daemons and other virtual IPs), plus a short TCP
probe from the mgr: a port that answers is taken. A port is the first
free one from a well-known default up.

A virtual IP is never guessed on a network the module does not own: keepalived
claims its address with gratuitous ARP, so an address that merely did not
answer the mgr (a gateway dropping the probe, a machine switched off) would be
taken from its owner for the whole segment. Outside loopback the VIPs are the
operator's (`ingress_virtual_ip`) or an existing ingress's; without them the
plan is refused with the option to set. Only a loopback host (a test cluster)
gets one chosen here: a 127.x address derived from the cluster's fsid, so that
two test clusters on one machine never pick the same.
"""
import errno
import hashlib
import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Set, Tuple

from ..errors import InvalidInput

# HTTPS where clients expect it; the monitor port of the ingress example in
# Ceph's documentation. An HTTP frontend starts at 8080, above RGW's own 80.
DEFAULT_HTTPS_PORT = 443
DEFAULT_HTTP_PORT = 8080
DEFAULT_MONITOR_PORT = 1967
# The monitors' ports and the range OSDs and mgrs bind (ms_bind_port_min..max).
CEPH_PORTS = {3300, 6789} | set(range(6800, 7301))
PORT_TRIES = 200
ADDRESS_TRIES = 64
PROBE_TIMEOUT_S = 0.5
LOOPBACK = ipaddress.ip_network('127.0.0.0/8')


@dataclass(frozen=True)
class SiteHost:
    """An RGW host: its name and the address the orchestrator has for it."""
    name: str
    addr: str


@dataclass
class Site:
    """What the orchestrator and the config database say about the RGW hosts."""
    hosts: List[SiteHost]                     # the RGW service's hosts, by name
    ports_taken: Dict[str, Set[int]] = field(default_factory=dict)   # by host name
    addresses_in_use: Set[str] = field(default_factory=set)
    networks: List[str] = field(default_factory=list)   # public and cluster networks
    cluster_id: str = ''                      # the fsid
    virtual_ips_list: bool = True             # the release's IngressSpec has it


class Probe(Protocol):
    """Short TCP probes from the mgr."""

    def taken(self, addr: str, port: int) -> bool:
        """Whether addr:port accepts TCP connections, or may: a probe that times out
        proves nothing (a firewall drops it) and counts as taken."""


class TCPProbe:
    def __init__(self, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    def _connect(self, addr: str, port: int) -> Optional[int]:
        """0 when it connected, else the errno (ETIMEDOUT on a time-out)."""
        try:
            with socket.create_connection((addr, port), timeout=self.timeout_s):
                return 0
        except socket.timeout:
            return errno.ETIMEDOUT
        except OSError as e:
            return e.errno or errno.EIO

    def taken(self, addr: str, port: int) -> bool:
        return self._connect(addr, port) in (0, errno.ETIMEDOUT)


@dataclass(frozen=True)
class IngressSite:
    """Where the ingress goes, and which parts were chosen by default."""
    hosts: List[str]           # where HAProxy runs
    vips: List[str]            # with /prefix; several: one per host (virtual_ips_list)
    frontend_port: int
    monitor_port: int
    defaults: List[str]        # the options that were not set and were chosen here

    def addresses(self) -> List[str]:
        return [bare(v) for v in self.vips]

    def spec_fields(self) -> Dict[str, Any]:
        vip: Dict[str, Any] = {'virtual_ips_list': list(self.vips)} if len(self.vips) > 1 \
            else {'virtual_ip': self.vips[0]}
        return dict(vip, frontend_port=self.frontend_port, monitor_port=self.monitor_port)

    def describe(self) -> str:
        """`VIP 10.0.0.254/24 on host1, ... port 443 (monitor 1967)`, for plans."""
        if not self.hosts:
            where = ', '.join(self.vips)
        elif len(self.vips) == len(self.hosts):
            where = ', '.join('%s on %s' % (v, h) for v, h in zip(self.vips, self.hosts))
        else:
            where = '%s on %s' % (', '.join(self.vips), ', '.join(self.hosts))
        text = 'HAProxy at %s, port %d (monitor %d)' % (where, self.frontend_port,
                                                        self.monitor_port)
        if self.defaults:
            text += ' [chosen from the cluster: %s; set mgr/rgwbench/%s to override]' % (
                ', '.join(d.replace('ingress_', '') for d in self.defaults),
                ', '.join(self.defaults))
        return text


def bare(address: str) -> str:
    """An address without its prefix length."""
    return str(address or '').split('/')[0].strip()


def split_addresses(text: str) -> List[str]:
    return [a.strip() for a in str(text or '').split(',') if a.strip()]


def network_of(addr: str, networks: Sequence[str]) -> Tuple[Any, bool]:
    """(network, assumed) the address is in: a configured one, loopback's, else a /24 (/64)."""
    ip = ipaddress.ip_address(addr)
    if ip in LOOPBACK:
        return LOOPBACK, False
    for text in networks:
        try:
            net = ipaddress.ip_network(text.strip(), strict=False)
        except ValueError:
            continue
        if net.version == ip.version and ip in net:
            return net, False
    return ipaddress.ip_interface('%s/%d' % (addr, 24 if ip.version == 4 else 64)).network, True


def _loopback_candidates(cluster_id: str) -> List[Any]:
    """127.x addresses from a point the fsid gives, upwards (127.0.0.x left alone)."""
    start = int(hashlib.sha256(cluster_id.encode()).hexdigest()[:6], 16) % (2 ** 24 - 512)
    first = int(LOOPBACK.network_address) + 256 + start
    return [ipaddress.ip_address(first + i) for i in range(ADDRESS_TRIES)]


def vip_needed(site: Site, count: int) -> InvalidInput:
    """The refusal of a non-loopback ingress without VIPs: exactly what to set."""
    hosts = site.hosts[:count]
    nets = []
    for host in hosts:
        net, assumed = network_of(host.addr, site.networks)
        text = '%s%s' % (net, ' (assumed)' if assumed else '')
        if text not in nets:
            nets.append(text)
    example = ','.join('<address>/%d' % network_of(h.addr, site.networks)[0].prefixlen
                       for h in hosts)
    return InvalidInput(
        'tls@ingress: no virtual IP given for %s (%s, not loopback), and rgwbench takes no '
        'address of a network it does not own; set `ceph config set mgr '
        'mgr/rgwbench/ingress_virtual_ip %s` with %s unused address%s of %s that nobody '
        'else owns' % (', '.join(h.name for h in hosts), ', '.join(h.addr for h in hosts),
                       example, 'an' if count == 1 else '%d' % count,
                       '' if count == 1 else 'es', ', '.join(nets)))


def choose_vips(site: Site, count: int) -> List[str]:
    """A 127.x address (/8) for each of the first `count` hosts, all on loopback.

    Any other host refuses the choice (`vip_needed`): see the module's docstring."""
    if any(ipaddress.ip_address(h.addr) not in LOOPBACK for h in site.hosts[:count]):
        raise vip_needed(site, count)
    taken = {bare(a) for a in site.addresses_in_use} | {h.addr for h in site.hosts}
    chosen: List[str] = []
    for host in site.hosts[:count]:
        for candidate in _loopback_candidates(site.cluster_id):
            text = str(candidate)
            if text in taken:
                continue
            chosen.append('%s/%d' % (text, LOOPBACK.prefixlen))
            taken.add(text)
            break
        else:
            raise InvalidInput(
                'tls@ingress: no unused address found in %s for %s; set '
                '`ceph config set mgr mgr/rgwbench/ingress_virtual_ip <address/prefix>`'
                % (LOOPBACK, host.name))
    return chosen


def choose_port(site: Site, probe: Probe, start: int, hosts: Sequence[str],
                vips: Sequence[str], avoid: Set[int], option: str) -> int:
    """The first port from `start` up free on every ingress host and virtual IP."""
    addrs = {h.name: h.addr for h in site.hosts}
    # Only a loopback VIP exists before the ingress does; probing one that does
    # not would only wait for a time-out.
    live_vips = [bare(v) for v in vips if ipaddress.ip_address(bare(v)) in LOOPBACK]
    for port in range(start, min(start + PORT_TRIES, 65536)):
        if port in avoid or port in CEPH_PORTS:
            continue
        if any(port in site.ports_taken.get(h, set()) for h in hosts):
            continue
        targets = [addrs[h] for h in hosts if h in addrs] + live_vips
        if any(probe.taken(a, port) for a in targets):
            continue
        return port
    raise InvalidInput('tls@ingress: no free port found from %d on %s; set `ceph config set '
                       'mgr mgr/rgwbench/%s <port>`' % (start, ', '.join(hosts), option))


def checked_addresses(text: str) -> List[str]:
    """The addresses of ingress_virtual_ip (comma separated); InvalidInput if one is not."""
    given = split_addresses(text)
    for address in given:
        try:
            ipaddress.ip_interface(address)
        except ValueError:
            raise InvalidInput('tls@ingress: ingress_virtual_ip %r is not an IP address (with '
                               'an optional /prefix)' % address)
    return given


def fixed(vips: str, frontend: int, monitor: int, hosts: Sequence[str]) -> IngressSite:
    """An ingress whose addresses and ports are all given (an existing one): checked only."""
    if frontend == monitor:
        raise InvalidInput('tls@ingress: ingress_frontend_port and ingress_monitor_port are '
                           'both %d' % frontend)
    return IngressSite(hosts=list(hosts), vips=checked_addresses(vips), frontend_port=frontend,
                       monitor_port=monitor, defaults=[])


def choose(site: Site, probe: Probe, *, ssl: bool, vip_option: str = '',
           frontend_option: int = 0, monitor_option: int = 0) -> IngressSite:
    """VIPs, hosts and ports of a new ingress: the options where set, else chosen here."""
    if not site.hosts:
        raise InvalidInput('tls@ingress: the RGW service runs on no host the orchestrator '
                           'knows')
    names = [h.name for h in site.hosts]
    defaults: List[str] = []
    given = checked_addresses(vip_option)
    if len(given) > 1 and not site.virtual_ips_list:
        raise InvalidInput('tls@ingress: ingress_virtual_ip names %d addresses, but this '
                           'release\'s ingress takes one' % len(given))
    if len(given) > len(names):
        raise InvalidInput('tls@ingress: ingress_virtual_ip names %d addresses for %d RGW '
                           'host(s): one per host at most' % (len(given), len(names)))
    first_port = frontend_option or (DEFAULT_HTTPS_PORT if ssl else DEFAULT_HTTP_PORT)
    if given:
        vips = given
    else:
        defaults.append('ingress_virtual_ip')
        count = len(names) if site.virtual_ips_list else 1
        vips = choose_vips(site, count)
    hosts = names if len(vips) > 1 else names[:1]
    frontend = frontend_option
    if not frontend:
        defaults.append('ingress_frontend_port')
        frontend = choose_port(site, probe, first_port, hosts, vips, {monitor_option},
                               'ingress_frontend_port')
    monitor = monitor_option
    if not monitor:
        defaults.append('ingress_monitor_port')
        monitor = choose_port(site, probe, DEFAULT_MONITOR_PORT, hosts, vips, {frontend},
                              'ingress_monitor_port')
    if frontend == monitor:
        raise InvalidInput('tls@ingress: ingress_frontend_port and ingress_monitor_port are '
                           'both %d' % frontend)
    return IngressSite(hosts=hosts, vips=list(vips), frontend_port=frontend,
                       monitor_port=monitor, defaults=defaults)


# -- the site, as the cluster reports it ---------------------------------------------------
def address_of(text: str, resolve: Callable[[str], str]) -> Optional[str]:
    """An IP address for a host's `addr` (which may be a name); None if there is none."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    try:
        return str(ipaddress.ip_address(resolve(text)))
    except (OSError, ValueError):
        return None


def resolve_name(name: str) -> str:
    return str(socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)[0][4][0])


def spec_addresses(spec: Dict[str, Any]) -> List[str]:
    """The virtual IPs a service spec names (ingress, NFS, ...)."""
    fields = spec.get('spec') or {}
    found = [fields.get('virtual_ip')] + list(fields.get('virtual_ips_list') or [])
    return [bare(str(a)) for a in found if a]


def read_site(cluster: Any, rgw_service: str,
              resolve: Callable[[str], str] = resolve_name) -> Site:
    """The Site of an RGW service from the orchestrator, the mon map and the config."""
    daemons = cluster.daemons()
    rgw_hosts = sorted({d.host for d in cluster.daemons(rgw_service) if d.host})
    known: Dict[str, str] = {}
    get_hosts = getattr(cluster.mgr, 'get_hosts', None)
    if get_hosts is not None:
        for host in cluster.orch(get_hosts()):
            if getattr(host, 'addr', None):
                known[host.hostname] = str(host.addr)
    hosts: List[SiteHost] = []
    for name in rgw_hosts:
        own = [d.ip for d in daemons if d.host == name and d.ip]
        addr = address_of(known.get(name) or (own[0] if own else name), resolve)
        if addr is None:
            raise InvalidInput('tls@ingress: no IP address is known for host %s; set '
                               'mgr/rgwbench/ingress_virtual_ip' % name)
        hosts.append(SiteHost(name, addr))
    ports: Dict[str, Set[int]] = {}
    used: Set[str] = set()
    for d in daemons:
        ports.setdefault(d.host, set()).update(int(p) for p in d.ports or [])
        if d.ip:
            used.add(bare(str(d.ip)))
    for addr in known.values():
        found = address_of(addr, resolve)
        if found:
            used.add(found)
    for spec in cluster.services():
        used.update(spec_addresses(spec))
    get = getattr(cluster.mgr, 'get', None)
    mon_map = (get('mon_map') if get is not None else None) or {}
    for mon in mon_map.get('mons') or []:
        used.add(bare(str(mon.get('addr') or '').rsplit(':', 1)[0]).strip('[]'))
    networks: List[str] = []
    for option in ('public_network', 'cluster_network'):
        for who in ('global', 'mon'):
            value = cluster.config_value(who, option)
            if value:
                networks += [n.strip() for n in value.split(',') if n.strip()]
    return Site(hosts=hosts, ports_taken=ports, addresses_in_use={u for u in used if u},
                networks=networks, cluster_id=str(mon_map.get('fsid') or ''),
                virtual_ips_list=takes_vip_list(cluster))


def takes_vip_list(cluster: Any) -> bool:
    """Whether the running release's IngressSpec has `virtual_ips_list`."""
    try:
        made = cluster.spec_from_json({
            'service_type': 'ingress', 'service_id': 'probe',
            'spec': {'backend_service': 'rgw.probe', 'virtual_ips_list': ['127.0.0.2/8'],
                     'frontend_port': 1, 'monitor_port': 2}})
    except Exception:
        return False
    return bool(getattr(made, 'virtual_ips_list', None))
