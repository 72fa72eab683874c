"""The RGW daemons a cluster runs, as its service map describes them."""
import ipaddress
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from ..serial import form

WILDCARDS = ('0.0.0.0', '::', '[::]', '*', '')


@dataclass(frozen=True, order=True)
class Endpoint:
    scheme: str
    host: str
    port: int
    COMPUTED: ClassVar[Tuple[str, ...]] = ('url',)

    @property
    def url(self) -> str:
        host = self.host
        if ':' in host and not host.startswith('['):
            host = '[%s]' % host
        return '%s://%s:%d' % (self.scheme, host, self.port)


@dataclass(frozen=True)
class RGWDaemon:
    name: str
    host: str
    zone: Optional[str]
    pid: Optional[int] = None
    # The service map's key: the gid since Pacific, and the name the mgr knows the
    # daemon by (`ceph config show rgw.<gid>`).
    key: Optional[str] = None
    version: Optional[str] = field(default=None, metadata=form(key='ceph_version'))
    frontends: List[str] = field(default_factory=list)
    endpoints: List[Endpoint] = field(default_factory=list)


def _split_host_port(text: str, default_port: int) -> Tuple[str, int]:
    """`addr`, `addr:port`, `[v6]:port` or `[v6]` into (host, port)."""
    if text.startswith('['):
        host, _, rest = text[1:].partition(']')
        return host, int(rest[1:]) if rest.startswith(':') else default_port
    if text.count(':') == 1:
        host, port = text.split(':')
        return host, int(port)
    return text, default_port


def parse_frontend(config: str, daemon_ip: str) -> List[Endpoint]:
    """Endpoints of one `rgw_frontends` entry (beast or civetweb).

    Wildcard binds are reported at the daemon's own address, which is where a
    client on another host reaches it.
    """
    words = config.split()
    if not words:
        return []
    kind, args = words[0], words[1:]
    found: List[Tuple[str, str, int]] = []
    for arg in args:
        key, _, value = arg.partition('=')
        if kind == 'civetweb' and key == 'port':
            for part in value.replace('+', ',').split(','):
                scheme = 'https' if part.endswith('s') else 'http'
                part = part.rstrip('s')
                if part.isdigit():
                    found.append((scheme, '', int(part)))
                else:
                    host, port = _split_host_port(part, 0)
                    found.append((scheme, host, port))
        elif key == 'port':
            found.append(('http', '', int(value)))
        elif key == 'ssl_port':
            found.append(('https', '', int(value)))
        elif key == 'endpoint':
            host, port = _split_host_port(value, 80)
            found.append(('http', host, port))
        elif key == 'ssl_endpoint':
            host, port = _split_host_port(value, 443)
            found.append(('https', host, port))
    if not found and kind == 'beast':
        found.append(('http', '', 80))
    return [Endpoint(scheme, daemon_ip if host in WILDCARDS else host, port)
            for scheme, host, port in found]


def _daemon_ip(addr: str) -> str:
    """The IP of a service map address such as `127.0.0.1:0/123` or `v2:[::1]:6800/1`."""
    text = addr.split('/')[0]
    for prefix in ('v1:', 'v2:', 'any:'):
        if text.startswith(prefix):
            text = text[len(prefix):]
    host, _ = _split_host_port(text, 0)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return ''
    return host


def _whole_number(value: Any) -> Optional[int]:
    return int(value) if str(value or '').isdigit() else None


def _newest_first(item: Tuple[str, Any]) -> Tuple[int, int]:
    info = item[1]
    return (-(_whole_number(info.get('start_epoch')) or 0),
            -(_whole_number(info.get('gid')) or 0))


def rgw_daemons(service_map: Dict[str, Any]) -> List[RGWDaemon]:
    """Every RGW daemon once, as its newest registration describes it.

    A restarted radosgw registers under a new gid while its old entry stays in
    the map until the mgr's beacon grace runs out (a minute), or while the old
    process still shuts down (Tentacle's takes up to 30 s).
    """
    daemons = service_map.get('services', {}).get('rgw', {}).get('daemons', {})
    found = []
    names = set()
    entries = [(k, v) for k, v in daemons.items() if k != 'summary' and isinstance(v, dict)]
    for key, info in sorted(entries, key=_newest_first):
        meta = info.get('metadata', {})
        # Since Pacific the map is keyed by gid; the daemon's name is in `id`.
        name = meta.get('id') or key
        if name in names:
            continue
        names.add(name)
        ip = _daemon_ip(str(info.get('addr', '')))
        frontends = [meta[k] for k in sorted(meta)
                     if k.startswith('frontend_config#')]
        endpoints = [e for f in frontends for e in parse_frontend(f, ip)]
        found.append(RGWDaemon(name=name, host=meta.get('hostname', ''),
                               zone=meta.get('zone_name'), version=meta.get('ceph_version'),
                               frontends=frontends, endpoints=endpoints,
                               pid=_whole_number(meta.get('pid')), key=str(key)))
    return sorted(found, key=lambda d: (d.host, d.name))


def endpoint_urls(service_map: Dict[str, Any]) -> List[str]:
    """Every URL the RGW daemons serve S3 on."""
    return [e.url for d in rgw_daemons(service_map) for e in d.endpoints]
