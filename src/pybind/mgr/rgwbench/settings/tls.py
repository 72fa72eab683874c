"""TLS under test: at the RGW daemons (`tls@rgw`) and at an HAProxy ingress (`tls@ingress`).

Both serve one certificate: the operator's (`ceph rgwbench certificate set`)
or a self-signed one rgwbench makes once, names every RGW host and the
ingress address in, and keeps in its store once applied (a plan holds it in
memory only), so that a plan and the apply after it put the same
certificate in the same spec. Clients trust its CA
bundle: the operator's chain, or the self-signed certificate itself.
"""
import copy
import http.client
import ipaddress
import socket
import ssl
from typing import Any, Dict, List, NamedTuple, Optional, Set, Tuple

from ..certificates import (NEW, TLS_KEYS, Certificates, TLSCertificate,  # noqa: F401
                            certificate_to_text)
from ..errors import InvalidInput
from ..pem import der_fingerprint, fingerprint
from ..targets import unique
from .base import (ClientSide, PlanView, Setting, SettingContext, SettingNotInEffect, on_off,
                   poll)
from .changes import Change, config_key_change, service_change

# Where cephadm keeps the certificate of an RGW service with ssl. It writes the key
# when it deploys the service but never removes it when ssl is turned off again.
RGW_CERT_KEY = 'rgw/cert/%s'
OPERATOR_KEY = TLS_KEYS.operator
GENERATED_KEY = TLS_KEYS.generated


# -- the cluster as TLS sees it -----------------------------------------------------------
def host_of(address: str) -> str:
    """An address without its prefix length (`10.0.0.1/24` → `10.0.0.1`)."""
    return str(address or '').split('/')[0].strip()


def rgw_names(ctx: SettingContext) -> List[str]:
    """Names and addresses of the RGW service's hosts and daemons, for the certificate."""
    service = ctx.rgw_service()
    daemons = ctx.cluster.daemons(service)
    hosts = {d.host for d in daemons if d.host}
    names: Set[str] = set(hosts)
    names.update(d.ip for d in daemons if d.ip)
    get_hosts = getattr(ctx.cluster.mgr, 'get_hosts', None)
    if get_hosts is not None:
        for host in ctx.cluster.orch(get_hosts()):
            if host.hostname in hosts and getattr(host, 'addr', None):
                names.add(str(host.addr))
    ids = {d.daemon_id for d in daemons}
    for daemon in ctx.cluster.rgw_daemons():
        if daemon.name in ids:
            names.update(e.host for e in daemon.endpoints if e.host)
    return sorted(n for n in names if n)


def certificate_names(ctx: SettingContext) -> List[str]:
    """Every name a certificate of the TLS settings should have (RGW hosts, ingress address)."""
    names = set(rgw_names(ctx))
    vip = host_of(str(ctx.option('ingress_virtual_ip') or ''))
    if not vip:
        existing = ingress_of(ctx)
        vip = host_of(str(existing[1]['spec'].get('virtual_ip') or '')) if existing else ''
    if vip:
        names.add(vip)
    return sorted(names)


def ingress_of(ctx: SettingContext) -> Optional[Tuple[str, Dict[str, Any]]]:
    """(service name, spec) of the ingress in front of the RGW service, if there is one."""
    backend = ctx.rgw_service()
    for spec in ctx.cluster.services('ingress'):
        if (spec.get('spec') or {}).get('backend_service') == backend:
            return ctx.cluster.spec_from_json(spec).service_name(), spec
    return None


def checked_spec(ctx: SettingContext, setting: Setting, spec: Dict[str, Any]) -> None:
    """InvalidInput when the running release would not take the spec."""
    try:
        made = ctx.cluster.spec_from_json(copy.deepcopy(spec))
        validate = getattr(made, 'validate', None)
        if validate is not None:
            validate()
    except Exception as e:
        raise InvalidInput('%s: the %s spec would be refused by this release: %s'
                           % (setting.name, spec.get('service_type'), e))


def in_use(host: str, port: int, timeout_s: float = 2.0) -> bool:
    """Whether something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


# -- talking to endpoints ------------------------------------------------------------------
class Answer(NamedTuple):
    status: int
    headers: Dict[str, str]
    body: bytes
    peer_der: Optional[bytes]


def client_context(ca_bundle: str) -> ssl.SSLContext:
    """What the load engine's clients use: verify the chain and the host name."""
    return ssl.create_default_context(cadata=ca_bundle)


def request(host: str, port: int, path: str = '/',
            context: Optional[ssl.SSLContext] = None, timeout_s: float = 10.0) -> Answer:
    """One GET; with a context, over TLS that must verify."""
    conn: http.client.HTTPConnection
    if context is not None:
        conn = http.client.HTTPSConnection(host, port, timeout=timeout_s, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        conn.request('GET', path)
        peer = None
        if context is not None and isinstance(conn.sock, ssl.SSLSocket):
            peer = conn.sock.getpeercert(binary_form=True)
        resp = conn.getresponse()
        return Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()},
                      resp.read(65536), peer)
    finally:
        conn.close()


def s3_problem(answer: Answer) -> Optional[str]:
    """Why an answer is not from RGW's S3 API (None when it is)."""
    if 'x-amz-request-id' not in answer.headers:
        return 'answered %d without an S3 request id (not RGW)' % answer.status
    if answer.status == 200 and b'ListAllMyBucketsResult' not in answer.body:
        return 'answered 200 but not with an S3 bucket listing'
    return None


def tls_problem(host: str, port: int, tls: TLSCertificate) -> Optional[str]:
    """Why host:port does not serve S3 over TLS with exactly this certificate (None: it does)."""
    wanted = fingerprint(tls.bundle.certificate)
    try:
        answer = request(host, port, context=client_context(tls.bundle.ca_bundle))
    except ssl.SSLCertVerificationError as e:
        return 'the TLS handshake does not verify against the %s CA bundle: %s' % (
            tls.source, e.verify_message or e)
    except (OSError, ssl.SSLError, http.client.HTTPException) as e:
        return 'no TLS answer: %s' % e
    if answer.peer_der is None:
        return 'no peer certificate'
    got = der_fingerprint(answer.peer_der)
    if got != wanted:
        return 'it presents certificate %s, not %s' % (got, wanted)
    return s3_problem(answer)


def url(scheme: str, host: str, port: int) -> str:
    try:
        if ipaddress.ip_address(host).version == 6:
            host = '[%s]' % host
    except ValueError:
        pass
    return '%s://%s:%d' % (scheme, host, port)


def described(tls: TLSCertificate) -> str:
    """How a plan names the certificate it puts in place."""
    if tls.source == NEW:
        return 'a new self-signed certificate %s (stored when applied)' % (
            fingerprint(tls.bundle.certificate)[:23])
    return 'the %s certificate %s' % (tls.source, fingerprint(tls.bundle.certificate)[:23])


def applied_certificate(ctx: SettingContext) -> Optional[TLSCertificate]:
    """The certificate in place once applied: one a plan made is stored now."""
    certificates = Certificates(ctx.secrets)
    certificates.keep_planned()
    return certificates.current()


# -- tls@rgw -------------------------------------------------------------------------------
class RGWTls(Setting):
    """`tls@rgw`: HTTPS at the RGW daemons themselves (beast `ssl_port`)."""

    name = 'tls@rgw'
    values = 'on or off'
    summary = ('RGW serves HTTPS (the operator\'s certificate or a self-signed one), on the '
               'port it served before unless mgr/rgwbench/rgw_ssl_port is set')

    def parse(self, raw: Any) -> bool:
        return on_off(self, raw)

    def port(self, ctx: SettingContext, spec: Dict[str, Any]) -> int:
        """The operator's rgw_ssl_port, else the port the spec serves now."""
        chosen = int(ctx.option('rgw_ssl_port') or 0)
        if chosen:
            return chosen
        fields = spec.get('spec') or {}
        if fields.get('rgw_frontend_port'):
            return int(fields['rgw_frontend_port'])
        return 443 if fields.get('ssl') else 80

    def plan(self, ctx: SettingContext, view: PlanView, value: bool) -> List[Change]:
        service = ctx.rgw_service()
        spec = view.service_spec(service)
        if spec is None:
            raise self.bad(value, 'no service %s' % service)
        fields = dict(spec.get('spec') or {})
        if not value:
            if not fields.get('ssl'):
                return []
            fields['ssl'] = False
            fields.pop('rgw_frontend_ssl_certificate', None)
            spec['spec'] = fields
            checked_spec(ctx, self, spec)
            return [service_change(service, spec, 'ceph orch apply %s without ssl (plain HTTP '
                                   'on port %s)' % (service, fields.get('rgw_frontend_port')
                                                    or 80))]
        tls = Certificates(ctx.secrets).planned(certificate_names(ctx))
        port = self.port(ctx, spec)
        wanted = dict(fields, ssl=True, rgw_frontend_port=port,
                      rgw_frontend_ssl_certificate=tls.bundle.server_pem)
        if wanted == fields:
            return []
        spec['spec'] = wanted
        checked_spec(ctx, self, spec)
        # Journaled before the spec, so that what it puts back is the key as it was
        # before the orchestrator wrote the certificate there.
        key = RGW_CERT_KEY % service
        return [config_key_change(key, tls.bundle.server_pem,
                                  'ceph config-key set %s to that certificate (where the '
                                  'orchestrator keeps it; put back afterwards)' % key),
                service_change(service, spec, 'ceph orch apply %s with ssl on port %d and '
                               '%s' % (service, port, described(tls)))]

    def notes(self, ctx: SettingContext, value: bool) -> List[str]:
        if not value:
            return []
        return ['RGW daemons are redeployed; while they are, S3 does not answer',
                'clients must use https:// and trust the CA bundle of `ceph rgwbench '
                'certificate show`']

    def endpoints(self, ctx: SettingContext, scheme: str) -> List[Tuple[str, str, int]]:
        """(daemon, host, port) of each endpoint with this scheme of the service's daemons."""
        ids = {d.daemon_id for d in ctx.cluster.daemons(ctx.rgw_service()) if d.running}
        return [(d.name, e.host, e.port) for d in ctx.cluster.rgw_daemons()
                if d.name in ids for e in d.endpoints if e.scheme == scheme]

    def verify(self, ctx: SettingContext, value: bool) -> None:
        if not value:
            poll(ctx, 'RGW to serve plain HTTP only', lambda: self._plain_problem(ctx))
            return
        current = applied_certificate(ctx)
        if current is None:
            raise SettingNotInEffect('tls@rgw: no certificate is stored')
        tls = current
        poll(ctx, 'RGW to serve HTTPS with the certificate', lambda: self._tls_problem(ctx, tls))

    def _plain_problem(self, ctx: SettingContext) -> Optional[str]:
        https = self.endpoints(ctx, 'https')
        if https:
            return '%s still serves HTTPS on port %d' % (https[0][0], https[0][2])
        if not self.endpoints(ctx, 'http'):
            return 'no RGW daemon of %s serves HTTP' % ctx.rgw_service()
        return None

    def _tls_problem(self, ctx: SettingContext, tls: TLSCertificate) -> Optional[str]:
        daemons = [d for d in ctx.cluster.daemons(ctx.rgw_service()) if d.running]
        found = self.endpoints(ctx, 'https')
        serving = {name for name, _, _ in found}
        missing = [d.daemon_id for d in daemons if d.daemon_id not in serving]
        if not daemons or missing:
            return 'no HTTPS endpoint in the service map for %s' % (
                ', '.join(missing) or 'any RGW daemon')
        for daemon, host, port in found:
            problem = tls_problem(host, port, tls)
            if problem:
                return '%s (%s): %s' % (daemon, url('https', host, port), problem)
        return None

    def client(self, ctx: SettingContext, value: bool, client: ClientSide) -> ClientSide:
        if not value:
            return client
        current = Certificates(ctx.secrets).current()
        return client._replace(rgw=tuple(rgw_urls(ctx, 'https')),
                               ca_bundle=current.bundle.ca_bundle if current else None)


# -- tls@ingress ---------------------------------------------------------------------------
INGRESS_OPTIONS = ('ingress_virtual_ip', 'ingress_frontend_port', 'ingress_monitor_port')
PLAIN_FIELDS = ('ssl_cert', 'ssl_key')


class IngressTls(Setting):
    """`tls@ingress`: an HAProxy ingress in front of the RGW service, with TLS or without."""

    name = 'tls@ingress'
    values = 'https, http or off'
    summary = ('an HAProxy ingress in front of RGW (mgr/rgwbench/ingress_virtual_ip, '
               'ingress_frontend_port, ingress_monitor_port), terminating TLS or plain HTTP')

    def parse(self, raw: Any) -> str:
        text = str(raw).strip().lower()
        if text in ('https', 'tls', 'on'):
            return 'https'
        if text == 'http':
            return 'http'
        if text in ('off', 'none', 'no'):
            return 'off'
        raise self.bad(raw)

    def where(self, ctx: SettingContext, existing: Optional[Dict[str, Any]]
              ) -> Tuple[str, int, int]:
        """Virtual IP, frontend and monitor port: the module's options, else the existing spec."""
        fields = (existing or {}).get('spec') or {}
        vip = str(ctx.option('ingress_virtual_ip') or fields.get('virtual_ip') or '')
        frontend = int(ctx.option('ingress_frontend_port') or fields.get('frontend_port') or 0)
        monitor = int(ctx.option('ingress_monitor_port') or fields.get('monitor_port') or 0)
        for option, given in zip(INGRESS_OPTIONS, (vip, frontend, monitor)):
            if not given:
                raise InvalidInput(
                    '%s: no ingress for %s exists to take it from; set it with `ceph config '
                    'set mgr mgr/rgwbench/%s <value>`%s' % (
                        self.name, ctx.rgw_service(), option,
                        ' (an address of the ingress host, e.g. 192.168.0.10/24)'
                        if option == 'ingress_virtual_ip' else ' (a free port)'))
        try:
            ipaddress.ip_address(host_of(vip))
        except ValueError:
            raise InvalidInput('%s: ingress_virtual_ip %r is not an IP address (with an '
                               'optional /prefix)' % (self.name, vip))
        if frontend == monitor:
            raise InvalidInput('%s: ingress_frontend_port and ingress_monitor_port are both %d'
                               % (self.name, frontend))
        return vip, frontend, monitor

    def plan(self, ctx: SettingContext, view: PlanView, value: str) -> List[Change]:
        backend = ctx.rgw_service()
        if view.service_spec(backend) is None:
            raise self.bad(value, 'no service %s' % backend)
        found = ingress_of(ctx)
        service = found[0] if found else 'ingress.%s' % backend
        existing = view.service_spec(service) if found else None
        if value == 'off':
            if existing is None:
                return []
            return [service_change(service, None, 'ceph orch rm %s' % service)]
        vip, frontend, monitor = self.where(ctx, existing)
        spec: Dict[str, Any] = copy.deepcopy(existing) if existing else {
            'service_type': 'ingress', 'service_id': backend, 'placement': {'count': 1},
            'spec': {}}
        fields = dict(spec.get('spec') or {})
        wanted = dict(fields, backend_service=backend, virtual_ip=vip,
                      frontend_port=frontend, monitor_port=monitor, ssl=value == 'https')
        if value == 'https':
            tls = Certificates(ctx.secrets).planned(certificate_names(ctx))
            wanted.update(ssl_cert=tls.bundle.full_chain, ssl_key=tls.bundle.key)
            what = 'terminating TLS with %s' % described(tls)
        else:
            for field in PLAIN_FIELDS:
                wanted.pop(field, None)
            what = 'plain HTTP'
        if existing is not None and wanted == fields:
            return []
        self._check_free(ctx, existing, vip, [frontend, monitor])
        spec['spec'] = wanted
        checked_spec(ctx, self, spec)
        summary = 'ceph orch apply %s: HAProxy on %s:%d (monitor %d) in front of %s, %s' % (
            service, host_of(vip), frontend, monitor, backend, what)
        return [service_change(service, spec, summary)]

    def _check_free(self, ctx: SettingContext, existing: Optional[Dict[str, Any]],
                    vip: str, ports: List[int]) -> None:
        fields = (existing or {}).get('spec') or {}
        own = {int(fields.get(p) or 0) for p in ('frontend_port', 'monitor_port')} \
            if host_of(str(fields.get('virtual_ip') or '')) == host_of(vip) else set()
        for port, option in zip(ports, INGRESS_OPTIONS[1:]):
            if port not in own and in_use(host_of(vip), port):
                raise InvalidInput('%s: %s:%d is already in use; set mgr/rgwbench/%s to a '
                                   'free port' % (self.name, host_of(vip), port, option))

    def notes(self, ctx: SettingContext, value: str) -> List[str]:
        if value == 'off':
            return []
        trust = ' and trust the CA bundle of `ceph rgwbench certificate show`' \
            if value == 'https' else ''
        return ['the ingress address must already be an address of the ingress host where '
                'keepalived does not run', 'clients use the ingress URL%s' % trust]

    def _ingress(self, ctx: SettingContext) -> Tuple[str, Dict[str, Any]]:
        found = ingress_of(ctx)
        if found is None:
            raise SettingNotInEffect('%s: the orchestrator has no ingress for %s'
                                     % (self.name, ctx.rgw_service()))
        return found

    def verify(self, ctx: SettingContext, value: str) -> None:
        if value == 'off':
            found = ingress_of(ctx)
            if found is not None:
                raise SettingNotInEffect('%s: %s still exists' % (self.name, found[0]))
            return
        tls: Optional[TLSCertificate] = None
        if value == 'https':
            tls = applied_certificate(ctx)
            if tls is None:
                raise SettingNotInEffect('%s: no certificate is stored' % self.name)
        poll(ctx, 'the ingress to answer S3 through HAProxy',
             lambda: self._problem(ctx, value, tls))

    def _problem(self, ctx: SettingContext, value: str,
                 tls: Optional[TLSCertificate]) -> Optional[str]:
        service, spec = self._ingress(ctx)
        fields = spec.get('spec') or {}
        host, port = host_of(str(fields.get('virtual_ip') or '')), int(fields['frontend_port'])
        where = url(value, host, port)
        rgw = {(h, p) for _, h, p in RGWTls().endpoints(ctx, 'http') +
               RGWTls().endpoints(ctx, 'https')}
        if (host, port) in rgw:
            return '%s is an RGW daemon\'s own endpoint, not HAProxy' % where
        if tls is not None:
            problem = tls_problem(host, port, tls)
        else:
            try:
                problem = s3_problem(request(host, port))
            except (OSError, http.client.HTTPException) as e:
                problem = 'no HTTP answer: %s' % e
        if problem:
            return '%s: %s' % (where, problem)
        # HAProxy's own monitor URI (cephadm's haproxy.cfg has it too) answers on the
        # monitor port: the ingress is HAProxy, and HAProxy sees its backends.
        daemons = ctx.cluster.daemons(service)
        hosts = [host] + [d.ip for d in daemons if d.ip and d.ip != host]
        monitor = int(fields['monitor_port'])
        for candidate in hosts:
            try:
                if request(candidate, monitor, '/health').status == 200:
                    return None
            except (OSError, http.client.HTTPException):
                continue
        return 'HAProxy\'s monitor (/health on port %d of %s) does not answer 200' % (
            monitor, ', '.join(hosts))

    def client(self, ctx: SettingContext, value: str, client: ClientSide) -> ClientSide:
        if value == 'off':
            return client
        frontends = ingress_urls(ctx)
        if not frontends:
            raise SettingNotInEffect('%s: the orchestrator has no ingress for %s'
                                     % (self.name, ctx.rgw_service()))
        if value == 'http':
            return client._replace(ingress=tuple(frontends))
        current = Certificates(ctx.secrets).current()
        return client._replace(ingress=tuple(frontends),
                               ca_bundle=current.bundle.ca_bundle if current else None)


# -- where clients go ----------------------------------------------------------------------
def rgw_urls(ctx: SettingContext, scheme: str) -> List[str]:
    """Every URL of this scheme of the running daemons of the RGW service under test."""
    return unique([url(scheme, host, port)
                   for _, host, port in sorted(RGWTls().endpoints(ctx, scheme))])


def ingress_urls(ctx: SettingContext) -> List[str]:
    """Every frontend of the ingress in front of the RGW service (none: there is no ingress).

    HAProxy serves the frontend port on each virtual IP; an ingress without
    one serves it on each of its daemons' addresses.
    """
    found = ingress_of(ctx)
    if found is None:
        return []
    service, spec = found
    fields = spec.get('spec') or {}
    if not fields.get('frontend_port'):
        return []
    scheme = 'https' if fields.get('ssl') else 'http'
    addresses = [host_of(str(a)) for a in
                 list(fields.get('virtual_ips_list') or []) + [fields.get('virtual_ip')] if a]
    if not addresses:
        addresses = sorted(d.ip for d in ctx.cluster.daemons(service)
                           if d.ip and d.daemon_type == 'haproxy')
    return unique([url(scheme, address, int(fields['frontend_port']))
                   for address in addresses if address])
