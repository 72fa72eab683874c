"""Virtual IPs of an ingress, brought up on their hosts as cephadm's keepalived does.

keepalived makes one host the master of each virtual IP (with
`virtual_ips_list`, the i-th IP's master is the i-th of the ingress's hosts
in name order; a single `virtual_ip` belongs to the first) and adds the
address to the interface of the host that is in its network. There is no
failover here: the address is added with `ip addr add` on the interface
that holds the host's own address (in the host's network namespace for a
namespaced host) and removed when the HAProxy of that host goes. A
loopback address needs nothing (127.0.0.0/8 is local everywhere), and an
address the host already had is used as it is and never removed.

The addresses this backend added are listed in the daemon's folder
(`vips.json`), so that a new active mgr removes them too.
"""
import ipaddress
import json
import os
import subprocess
from typing import Any, Dict, List, Optional, Sequence

import orchestrator

from .hosts import Host

LOOPBACK = ipaddress.ip_network('127.0.0.0/8')
ADDED_FILE = 'vips.json'


def spec_vips(spec: Any) -> List[str]:
    """The spec's virtual IPs with their prefix, in the spec's order."""
    listed = list(getattr(spec, 'virtual_ips_list', None) or [])
    return [str(v) for v in listed] if listed else (
        [str(spec.virtual_ip)] if spec.virtual_ip else [])


def vip_of_host(spec: Any, host: str, hosts: Sequence[str]) -> Optional[str]:
    """The virtual IP (with prefix) whose master `host` is, among the ingress's hosts."""
    ordered = sorted(set(hosts))
    vips = spec_vips(spec)
    if host not in ordered or ordered.index(host) >= len(vips):
        return None
    return vips[ordered.index(host)]


def bare(vip: str) -> str:
    return vip.split('/')[0]


def _run(host: Host, argv: List[str]) -> str:
    try:
        proc = subprocess.run(host.argv(argv), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise orchestrator.OrchestratorError('%s on %s: %s' % (' '.join(argv), host.name, e))
    if proc.returncode != 0:
        raise orchestrator.OrchestratorError('%s on %s: %s' % (
            ' '.join(argv), host.name, proc.stderr.strip()))
    return proc.stdout


def host_addresses(host: Host) -> Dict[str, str]:
    """Every address of the host's interfaces, and the interface that has it."""
    out = _run(host, ['ip', '-j', 'addr', 'show']).strip()
    found: Dict[str, str] = {}
    for link in json.loads(out) if out else []:
        for info in link.get('addr_info', []):
            found[str(info.get('local'))] = str(link['ifname'])
    return found


def is_local(host: Host, vip: str) -> bool:
    """Whether programs on the host can bind the address now."""
    address = bare(vip)
    return ipaddress.ip_address(address) in LOOPBACK or address in host_addresses(host)


def _added_path(folder: str) -> str:
    return os.path.join(folder, ADDED_FILE)


def added(folder: str) -> List[str]:
    try:
        with open(_added_path(folder)) as f:
            return list(json.load(f))
    except (OSError, ValueError):
        return []


def _write_added(folder: str, vips: List[str]) -> None:
    path = _added_path(folder)
    if not vips:
        if os.path.exists(path):
            os.unlink(path)
        return
    with open(path, 'w') as f:
        json.dump(vips, f)


def bring_up(host: Host, vip: Optional[str], folder: str) -> None:
    """The host holds `vip` (and none of the addresses added before for this daemon)."""
    before = added(folder)
    keep = [v for v in before if v == vip]
    for old in before:
        if old != vip:
            _remove(host, old)
    _write_added(folder, keep)
    if vip is None or vip in keep:
        return
    if ipaddress.ip_address(bare(vip)) in LOOPBACK:
        return
    addresses = host_addresses(host)
    if bare(vip) in addresses:
        return  # the host's own: used, never removed
    device = addresses.get(host.addr)
    if device is None:
        raise orchestrator.OrchestratorError('host %s has no interface with its address %s'
                                             % (host.name, host.addr))
    prefix = vip if '/' in vip else '%s/%d' % (vip, 32 if ':' not in vip else 128)
    _run(host, ['ip', 'addr', 'add', prefix, 'dev', device])
    _write_added(folder, keep + [prefix])


def take_down(host: Host, folder: str) -> None:
    """Remove every address added for this daemon."""
    for vip in added(folder):
        _remove(host, vip)
    _write_added(folder, [])


def _remove(host: Host, vip: str) -> None:
    device = host_addresses(host).get(bare(vip))
    if device is not None:
        _run(host, ['ip', 'addr', 'del', vip, 'dev', device])
