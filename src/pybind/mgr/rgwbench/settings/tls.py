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
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..certs.store import (NEW, TLS_KEYS, Certificates, TLSCertificate,  # noqa: F401
                           certificate_to_text)
from ..errors import InvalidInput
from ..certs.pem import der_fingerprint, fingerprint
from .targets import Target, resolve_targets, unique
from .base import (ClientSide, PlanView, Setting, SettingContext, SettingNotInEffect, on_off, poll)
from .changes import Change, config_key_change, service_change
from .ingress_site import (IngressSite, Probe, TCPProbe, choose, fixed, read_site, spec_addresses,
                           split_addresses)

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


def certificate_names(ctx: SettingContext, vips: Sequence[str] = ()) -> List[str]:
    """Every name a certificate of the TLS settings should have (RGW hosts, ingress addresses).

    `vips`: the ingress addresses a plan chose; else the option's, or an existing ingress's.
    """
    names = set(rgw_names(ctx))
    found = [host_of(v) for v in vips] or [
        host_of(v) for v in split_addresses(str(ctx.option('ingress_virtual_ip') or ''))]
    if not found:
        existing = ingress_of(ctx)
        found = spec_addresses(existing[1]) if existing else []
    names.update(v for v in found if v)
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
#: the first release whose cephadm writes an ingress's ssl_key beside its certificate
KEY_FILE_SINCE = 18


class IngressTls(Setting):
    """`tls@ingress`: an HAProxy ingress in front of the RGW service, with TLS or without."""

    name = 'tls@ingress'
    values = 'https, http or off'
    summary = ('an HAProxy ingress in front of RGW, one per RGW host with a virtual IP each '
               '(chosen from the cluster unless mgr/rgwbench/ingress_virtual_ip, '
               'ingress_frontend_port, ingress_monitor_port are set), terminating TLS or '
               'plain HTTP')

    def __init__(self, *, probe: Optional[Probe] = None) -> None:
        self.probe = probe

    def parse(self, raw: Any) -> str:
        text = str(raw).strip().lower()
        if text in ('https', 'tls', 'on'):
            return 'https'
        if text == 'http':
            return 'http'
        if text in ('off', 'none', 'no'):
            return 'off'
        raise self.bad(raw)

    def where(self, ctx: SettingContext, existing: Optional[Dict[str, Any]],
              value: str) -> IngressSite:
        """Hosts, virtual IPs and ports: the module's options, else the existing ingress's,
        else chosen from the cluster (ingress_site)."""
        fields = (existing or {}).get('spec') or {}
        vip = str(ctx.option('ingress_virtual_ip') or '') or ','.join(
            str(a) for a in list(fields.get('virtual_ips_list') or []) +
            [fields.get('virtual_ip')] if a)
        frontend = int(ctx.option('ingress_frontend_port') or fields.get('frontend_port') or 0)
        monitor = int(ctx.option('ingress_monitor_port') or fields.get('monitor_port') or 0)
        if existing is not None and vip and frontend and monitor:
            placed = [str(h).split(':')[0] for h in
                      (existing.get('placement') or {}).get('hosts') or []]
            return fixed(vip, frontend, monitor, placed)
        site = read_site(ctx.cluster, ctx.rgw_service())
        return choose(site, self.probe or TCPProbe(), ssl=value == 'https', vip_option=vip,
                      frontend_option=frontend, monitor_option=monitor)

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
        site = self.where(ctx, existing, value)
        spec: Dict[str, Any] = copy.deepcopy(existing) if existing else {
            'service_type': 'ingress', 'service_id': backend,
            'placement': {'hosts': list(site.hosts)}, 'spec': {}}
        fields = dict(spec.get('spec') or {})
        wanted = dict(fields, backend_service=backend, ssl=value == 'https',
                      **site.spec_fields())
        # One of the two, never both (the spec refuses that).
        wanted.pop('virtual_ip' if len(site.vips) > 1 else 'virtual_ips_list', None)
        if value == 'https':
            tls = Certificates(ctx.secrets).planned(certificate_names(ctx, site.vips))
            # cephadm before Reef writes HAProxy's certificate file from ssl_cert alone
            # (Pacific's passes over ssl_key): the key goes in there too.
            chain = tls.bundle.full_chain if ctx.release >= KEY_FILE_SINCE else \
                tls.bundle.full_chain.rstrip('\n') + '\n' + tls.bundle.key
            wanted.update(ssl_cert=chain, ssl_key=tls.bundle.key)
            what = 'terminating TLS with %s' % described(tls)
        else:
            for field in PLAIN_FIELDS:
                wanted.pop(field, None)
            what = 'plain HTTP'
        if existing is not None and wanted == fields:
            return []
        if 'ingress_virtual_ip' not in site.defaults:
            self._check_free(ctx, existing, site.vips, [site.frontend_port, site.monitor_port])
        spec['spec'] = wanted
        checked_spec(ctx, self, spec)
        summary = 'ceph orch apply %s: %s in front of %s, %s' % (
            service, site.describe(), backend, what)
        return [service_change(service, spec, summary)]

    def _check_free(self, ctx: SettingContext, existing: Optional[Dict[str, Any]],
                    vips: List[str], ports: List[int]) -> None:
        """Ports in use on the operator's (or an existing ingress's) virtual IPs."""
        fields = (existing or {}).get('spec') or {}
        mine = set(spec_addresses(existing)) if existing else set()
        own = {int(fields.get(p) or 0) for p in ('frontend_port', 'monitor_port')}
        for vip in vips:
            for port, option in zip(ports, INGRESS_OPTIONS[1:]):
                if (host_of(vip) in mine and port in own) or not in_use(host_of(vip), port):
                    continue
                raise InvalidInput('%s: %s:%d is already in use; set mgr/rgwbench/%s to a '
                                   'free port' % (self.name, host_of(vip), port, option))

    def notes(self, ctx: SettingContext, value: str) -> List[str]:
        if value == 'off':
            return []
        trust = ' and trust the CA bundle of `ceph rgwbench certificate show`' \
            if value == 'https' else ''
        return ['the orchestrator brings each virtual IP up on its ingress host (cephadm: '
                'keepalived)', 'clients balance over every ingress URL%s' % trust]

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
        port = int(fields['frontend_port'])
        vips = spec_addresses(spec)
        if not vips:
            return '%s has no virtual IP' % service
        rgw = {(h, p) for _, h, p in RGWTls().endpoints(ctx, 'http') +
               RGWTls().endpoints(ctx, 'https')}
        for host in vips:
            where = url(value, host, port)
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
        hosts = vips + [d.ip for d in daemons if d.ip and d.ip not in vips]
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


class ClusterTargets:
    """RGW daemons and ingress frontends of the service under test, as the cluster runs them."""

    def __init__(self, ctx: SettingContext) -> None:
        self.ctx = ctx

    def rgw_service(self) -> str:
        return self.ctx.rgw_service()

    def rgw_urls(self, scheme: str) -> List[str]:
        return rgw_urls(self.ctx, scheme)

    def ingress_urls(self) -> List[str]:
        return ingress_urls(self.ctx)


def client_targets(ctx: SettingContext, target: Target, client: ClientSide) -> ClientSide:
    """The client side with the URLs the load goes to under it, resolved now."""
    urls = resolve_targets(target, rgw=client.rgw, ingress=client.ingress,
                           view=ClusterTargets(ctx))
    return client._replace(targets=tuple(urls))
