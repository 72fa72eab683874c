"""Test hosts with their own addresses: network namespaces on one Linux bridge.

A cluster started with `--hosts N` (N > 1) gets a bridge in the machine's own
network namespace and a private /24 from 10.77.0.0/16 that nothing on the
machine uses. Host 1 is the machine itself, at the bridge's address; hosts
2..N are network namespaces, each joined to the bridge by a veth pair and
holding the next address. Nothing else is set up: no default route, no NAT,
no forwarding, so packets can only go to loopback and to those addresses.

Every name carries a random id kept in cluster.json, so that two clusters
never share a bridge, a namespace or a subnet, and so that `stop` removes
exactly what `start` made.
"""
import contextlib
import fcntl
import ipaddress
import json
import os
import secrets
import subprocess
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set

MAX_HOSTS = 16
POOL = ipaddress.ip_network('10.77.0.0/16')
PREFIX = 'rgwb'
LOCK_FILE = '/run/lock/rgwbench-network.lock'
NETNS_DIR = '/run/netns'

Network = Dict[str, Any]
HostEntry = Dict[str, Any]


class NetworkError(Exception):
    pass


def _ip(args: Sequence[str], netns: Optional[str] = None) -> str:
    argv = ['ip'] + (['-n', netns] if netns else []) + list(args)
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
    except FileNotFoundError:
        raise NetworkError('`ip` is missing: install iproute2')
    if proc.returncode != 0:
        raise NetworkError('%s: %s' % (' '.join(argv), proc.stderr.strip()))
    return proc.stdout


def _ip_json(args: Sequence[str], netns: Optional[str] = None) -> List[Dict[str, Any]]:
    out = _ip(['-j'] + list(args), netns).strip()
    found: List[Dict[str, Any]] = json.loads(out) if out else []
    return found


def links(netns: Optional[str] = None) -> Set[str]:
    return {link['ifname'] for link in _ip_json(['link', 'show'], netns)}


def namespaces() -> Set[str]:
    return {ns['name'] for ns in _ip_json(['netns', 'list'])}


@contextlib.contextmanager
def lock() -> Iterator[None]:
    """Keep two `cluster start`s from choosing the same names or subnet."""
    os.makedirs(os.path.dirname(LOCK_FILE), exist_ok=True)
    with open(LOCK_FILE, 'w') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _used_networks(except_dev: str = '') -> List[Any]:
    """Every IPv4 network the machine has an address or a route in, but the default."""
    used = []
    for link in _ip_json(['-4', 'addr', 'show']):
        if link['ifname'] == except_dev:
            continue
        for a in link.get('addr_info', []):
            used.append(ipaddress.ip_network('%s/%s' % (a['local'], a['prefixlen']),
                                             strict=False))
    for route in _ip_json(['-4', 'route', 'show', 'table', 'all']):
        if route.get('dst', 'default') == 'default' or route.get('dev') == except_dev:
            continue
        try:
            used.append(ipaddress.ip_network(route['dst'], strict=False))
        except ValueError:
            continue
    return used


def _clashes(subnet: str, except_dev: str = '') -> List[str]:
    net = ipaddress.ip_network(subnet)
    return sorted({str(u) for u in _used_networks(except_dev) if u.overlaps(net)})


def plan(count: int, host_name: str) -> Dict[str, Any]:
    """Names and addresses for `count` hosts; call under lock() and bring up at once."""
    if not 2 <= count <= MAX_HOSTS:
        raise NetworkError('--hosts %d: between 2 and %d namespaced hosts are supported'
                           % (count, MAX_HOSTS))
    taken_links, taken_ns = links(), namespaces()
    for _ in range(100):
        short = secrets.token_hex(3)
        if PREFIX + short not in taken_links and not any(
                n.startswith('%s-%s-' % (PREFIX, short)) for n in taken_ns):
            break
    else:
        raise NetworkError('no unused bridge name found')
    used = _used_networks()
    free = [s for s in POOL.subnets(new_prefix=24)
            if s.network_address.packed[2] != 0 and not any(u.overlaps(s) for u in used)]
    if not free:
        raise NetworkError('every /24 of %s is in use on this machine' % POOL)
    # A random free one, so that a stopped cluster's subnet is seldom taken.
    subnet = free[secrets.randbelow(len(free))]
    addrs = list(subnet.hosts())
    network: Network = {'id': short, 'bridge': PREFIX + short, 'subnet': str(subnet)}
    hosts: List[HostEntry] = [{'name': host_name, 'addr': str(addrs[0])}]
    for i in range(2, count + 1):
        hosts.append({'name': '%s-%d' % (host_name, i), 'addr': str(addrs[i - 1]),
                      'netns': '%s-%s-%d' % (PREFIX, short, i),
                      'veth': '%s%sv%d' % (PREFIX, short, i)})
    return {'network': network, 'hosts': hosts}


def _no_ipv6(dev: str, netns: Optional[str] = None) -> None:
    """No IPv6 link-local address, hence no IPv6 packets, on a link of ours."""
    if os.path.isdir('/proc/sys/net/ipv6'):
        _ip(['link', 'set', 'dev', dev, 'addrgenmode', 'none'], netns)


def up(network: Network, hosts: List[HostEntry]) -> None:
    """Create what is missing of the bridge, namespaces and veths; safe to repeat."""
    bridge = network['bridge']
    prefixlen = ipaddress.ip_network(network['subnet']).prefixlen
    clashes = _clashes(network['subnet'], except_dev=bridge)
    if clashes:
        raise NetworkError(
            'the cluster\'s subnet %s is now in use on this machine (%s); remove the '
            'cluster folder and start a new cluster' % (network['subnet'], ', '.join(clashes)))
    present = links()
    if bridge not in present:
        _ip(['link', 'add', 'name', bridge, 'type', 'bridge'])
        _no_ipv6(bridge)
    _ip(['addr', 'replace', '%s/%d' % (hosts[0]['addr'], prefixlen), 'dev', bridge])
    _ip(['link', 'set', 'dev', bridge, 'up'])
    existing_ns = namespaces()
    for host in hosts[1:]:
        ns, veth = host['netns'], host['veth']
        if ns not in existing_ns:
            _ip(['netns', 'add', ns])
        _ip(['link', 'set', 'dev', 'lo', 'up'], ns)
        inside = links(ns)
        if veth not in present or 'eth0' not in inside:
            # What an interrupted start left of the pair goes first.
            peer = veth + 'p'
            if veth in present:
                _ip(['link', 'del', 'dev', veth])  # takes its peer along
            elif peer in present:
                _ip(['link', 'del', 'dev', peer])
            elif 'eth0' in inside:
                _ip(['link', 'del', 'dev', 'eth0'], ns)
            _ip(['link', 'add', 'name', veth, 'type', 'veth', 'peer', 'name', peer])
            _no_ipv6(veth)
            _ip(['link', 'set', 'dev', peer, 'netns', ns])
            _ip(['link', 'set', 'dev', peer, 'name', 'eth0'], ns)
            # (set in the namespace: a link that moves there loses the setting)
            _no_ipv6('eth0', ns)
        _ip(['link', 'set', 'dev', veth, 'master', bridge, 'up'])
        _ip(['addr', 'replace', '%s/%d' % (host['addr'], prefixlen), 'dev', 'eth0'], ns)
        _ip(['link', 'set', 'dev', 'eth0', 'up'], ns)


def _is_bridge(dev: str) -> bool:
    (link,) = _ip_json(['-d', 'link', 'show', 'dev', dev])
    return bool(link.get('linkinfo', {}).get('info_kind') == 'bridge')


def down(network: Network, hosts: List[HostEntry]) -> List[str]:
    """Remove the cluster's veths, namespaces and bridge; returns what went."""
    removed = []
    present, existing_ns = links(), namespaces()
    for host in hosts[1:]:
        if host['veth'] in present:
            _ip(['link', 'del', 'dev', host['veth']])  # takes its peer along
            removed.append(host['veth'])
        if host['netns'] in existing_ns:
            _ip(['netns', 'del', host['netns']])
            removed.append('netns ' + host['netns'])
    bridge = network['bridge']
    if bridge in present and _is_bridge(bridge):
        _ip(['link', 'del', 'dev', bridge])
        removed.append(bridge)
    return removed
