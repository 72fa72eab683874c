"""HAProxy in front of an RGW service, from an IngressSpec, as cephadm sets it up.

keepalived is not run; what it does for the test is done here (vips.py):
each HAProxy's host gets its virtual IP (`virtual_ip`, or one of
`virtual_ips_list` per host) before HAProxy starts, and loses it when
HAProxy goes. HAProxy binds its host's virtual IP only (cephadm binds every
address with `virtual_ips_list`, for failover, which is not needed here and
would take the port on the machine's other addresses too); a host without
a virtual IP of its own binds its own address.
"""
import errno
import os
import socket
from typing import Any, Dict, List, Tuple

import orchestrator

from .context import Context, DaemonKind
from .context import port_free
from .hosts import Host
from .placement import place
from .rgw import check_pem
from .state import DaemonRecord
from .vips import bare, bring_up, is_local, spec_vips, take_down, vip_of_host


def bind_problem(ip: str, port: int) -> str:
    """Why a port cannot be bound on an address, or '' when it can."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((ip, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return '%s:%d is already in use' % (ip, port)
            return 'cannot bind %s:%d (%s)' % (ip, port, e.strerror)
    return ''


class IngressKind(DaemonKind):
    daemon_type = 'haproxy'

    def __init__(self, ctx: Context, *, key_file: bool = True) -> None:
        super().__init__(ctx)
        # Pacific's cephadm writes HAProxy's haproxy.pem from ssl_cert alone and passes
        # over ssl_key; later ones write the key beside it, where HAProxy finds it.
        self.key_file = key_file

    def ports(self, spec: Any, rank: int) -> List[int]:
        return [int(spec.frontend_port), int(spec.monitor_port)]

    def pem(self, spec: Any) -> str:
        parts = (spec.ssl_cert, spec.ssl_key) if self.key_file else (spec.ssl_cert,)
        return '\n'.join(p.strip() for p in parts if p) + '\n'

    def validate(self, spec: Any, placed: List[Tuple[Host, int]]) -> None:
        name = spec.service_name()
        for field in ('backend_service', 'frontend_port', 'monitor_port'):
            if not getattr(spec, field, None):
                raise orchestrator.OrchestratorValidationError(
                    'Cannot add ingress: No %s specified' % field)
        if not spec_vips(spec):
            raise orchestrator.OrchestratorValidationError(
                'Cannot add ingress: No virtual_ip provided')
        hosts = sorted({h.name for h, _ in placed})
        if len(spec_vips(spec)) > len(hosts):
            raise orchestrator.OrchestratorValidationError(
                'Number of virtual IPs for ingress is greater than number of available hosts')
        backend = self.ctx.spec_of(spec.backend_service)
        if backend is None or backend.service_type != 'rgw':
            raise orchestrator.OrchestratorValidationError(
                '%s: backend_service %s is not an RGW service of this cluster'
                % (name, spec.backend_service))
        if spec.ssl:
            if not spec.ssl_cert:
                raise orchestrator.OrchestratorValidationError(
                    '%s: ssl is set but ssl_cert is empty' % name)
            check_pem(self.pem(spec), 'ssl_cert')
        own = {(d.host, p) for d in self.ctx.daemons_of(name) for p in d.ports}
        for host, rank in placed:
            address = self.bind_address(spec, host, hosts)
            # A virtual IP not up yet: what is bound on the host's own address (or on
            # every address) is what would be in the way.
            checked = address if host.addr == address or is_local(host, address) \
                else host.addr
            for port in self.ports(spec, rank):
                if (host.name, port) in own:
                    continue
                if not host.netns and checked == address:
                    problem = bind_problem(address, port)
                else:
                    problem = '' if port_free(host, port, checked) else \
                        '%s:%d is already in use' % (checked, port)
                if problem:
                    raise orchestrator.OrchestratorValidationError(
                        '%s: virtual_ip %s' % (name, problem))

    def hosts_of(self, spec: Any) -> List[str]:
        placed = place(spec.placement, self.ctx.hosts, spec.service_name())
        return sorted({h.name for h, _ in placed})

    def bind_address(self, spec: Any, host: Host, hosts: List[str]) -> str:
        """The host's virtual IP, else its own address."""
        vip = vip_of_host(spec, host.name, hosts)
        return bare(vip) if vip else host.addr

    def prepare(self, spec: Any, daemon: DaemonRecord) -> None:
        host = self.ctx.host(daemon.host)
        bring_up(host, vip_of_host(spec, host.name, self.hosts_of(spec)),
                 self.ctx.daemon_dir(daemon.name))

    def remove(self, spec: Any, daemon: DaemonRecord) -> None:
        take_down(self.ctx.host(daemon.host), self.ctx.daemon_dir(daemon.name))

    def config(self, spec: Any, daemon: DaemonRecord) -> str:
        ip = self.bind_address(spec, self.ctx.host(daemon.host), self.hosts_of(spec))
        backend = self.ctx.spec_of(spec.backend_service)
        backend_ssl = bool(backend is not None and backend.ssl)
        user = spec.monitor_user or 'admin'
        password = spec.monitor_password or 'admin'
        lines = [
            'global',
            '    maxconn 8000',
            '',
            'defaults',
            '    mode http',
            '    option dontlognull',
            '    option http-server-close',
            '    option forwardfor except 127.0.0.0/8',
            '    option redispatch',
            '    retries 3',
            '    timeout queue 20s',
            '    timeout connect 5s',
            '    timeout http-request 1s',
            '    timeout http-keep-alive 5s',
            '    timeout client 30s',
            '    timeout server 30s',
            '    timeout check 5s',
            '    maxconn 8000',
            '',
            'frontend stats',
            '    bind %s:%d' % (ip, spec.monitor_port),
            '    stats enable',
            '    stats uri /stats',
            '    stats refresh 10s',
            '    stats auth %s:%s' % (user, password),
            '    monitor-uri /health',
            '',
            'frontend frontend',
            '    bind %s:%d%s' % (ip, spec.frontend_port,
                                  ' ssl crt %s' % self.pem_path(daemon) if spec.ssl else ''),
            '    default_backend backend',
            '',
            'backend backend',
            '    option forwardfor',
            '    balance static-rr',
            '    option httpchk HEAD / HTTP/1.0',
        ]
        for rgw in self.ctx.daemons_of(spec.backend_service):
            addr = self.ctx.host(rgw.host).addr
            for port in rgw.ports:
                lines.append('    server %s %s:%d check weight 100%s' % (
                    rgw.name, addr, port, ' ssl verify none' if backend_ssl else ''))
        return '\n'.join(lines) + '\n'

    def pem_path(self, daemon: DaemonRecord) -> str:
        return os.path.join(self.ctx.daemon_dir(daemon.name), 'haproxy.pem')

    def files(self, spec: Any, daemon: DaemonRecord) -> Dict[str, str]:
        files = {'haproxy.cfg': self.config(spec, daemon)}
        if spec.ssl:
            files['haproxy.pem'] = self.pem(spec)
        return files

    def argv(self, spec: Any, daemon: DaemonRecord) -> List[str]:
        return ['haproxy', '-db', '-f',
                os.path.join(self.ctx.daemon_dir(daemon.name), 'haproxy.cfg')]
