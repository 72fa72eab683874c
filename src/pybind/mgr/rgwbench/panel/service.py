"""The panel in the active mgr: its settings, certificate, password, and server's life.

The module starts the panel when it becomes active and stops it when it
shuts down (a failover, `ceph mgr module disable`); options that change
where or how it listens start it again. Its URL is published with
``set_uri`` and shows in `ceph mgr services`.
"""
import socket
import threading
from typing import Any, Callable, Dict, NamedTuple, Optional, Protocol, Tuple

from ..errors import InvalidInput
from ..web.brake import AuthBrake
from ..certs.store import CertificateKeys, Certificates
from ..cluster.kvstore import SecretStore
from ..certs.pem import describe_certificate
from .app import PanelApp, PanelBackend
from .auth import PasswordStore, Sessions

DEFAULT_PORT = 9494


WILDCARDS = ('', '::', '0.0.0.0')


def panel_keys(mgr_id: str) -> CertificateKeys:
    """The operator's certificate is shared; a self-signed one is each mgr's own."""
    return CertificateKeys('panel/certificate', 'panel/generated/%s' % mgr_id,
                           'rgwbench-panel', 'ceph rgwbench panel certificate')


class Listen(NamedTuple):
    address: str           # '' for the manager's own address
    port: int
    tls: bool


class Server(Protocol):
    def start(self, address: str, port: int, tls: Optional[Tuple[str, str]]) -> None: ...

    def stop(self) -> None: ...


class PanelHost(SecretStore, Protocol):
    """What the panel asks of the mgr module."""

    def get_module_option(self, key: str, default: Any = None) -> Any: ...

    def get_mgr_ip(self) -> str: ...

    def get_mgr_id(self) -> str: ...

    def set_uri(self, uri: str) -> None: ...


class Panel:
    def __init__(self, host: PanelHost, backend: PanelBackend,
                 make_server: Callable[[PanelApp], Server],
                 build_url: Callable[..., str], log: Any) -> None:
        self.host = host
        self.passwords = PasswordStore(host)
        self.sessions = Sessions(self.session_timeout_s)
        self.brake = AuthBrake()
        self.app = PanelApp(backend, self.passwords, self.sessions, self.brake,
                            self.session_timeout_s)
        self.make_server = make_server
        self.build_url = build_url
        self.log = log
        self._lock = threading.Lock()
        self._server: Optional[Server] = None
        self._listening: Optional[Listen] = None
        self.url: Optional[str] = None
        self.error: Optional[str] = None
        self._closed = False

    def session_timeout_s(self) -> float:
        return float(self.host.get_module_option('panel_session_timeout') or 28800)

    def certificates(self) -> Certificates:
        return Certificates(self.host, panel_keys(self.host.get_mgr_id()))

    def default_address(self) -> str:
        """The address the active manager serves on (its first in the mgr map).

        Never every address by default: an operator who wants the panel on
        another interface, or on all of them, says so with `panel_address`.
        """
        address = str(self.host.get_mgr_ip() or '')
        if address in WILDCARDS:
            raise InvalidInput('cannot tell the address of this manager; set one with '
                               '`ceph config set mgr mgr/rgwbench/panel_address <address>`')
        return address

    def wanted(self) -> Listen:
        return Listen(str(self.host.get_module_option('panel_address') or ''),
                      int(self.host.get_module_option('panel_port') or DEFAULT_PORT),
                      bool(self.host.get_module_option('panel_ssl')))

    # -- the server's life ----------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            self._start()

    def _start(self) -> None:
        if self._closed:
            return
        wanted = self.wanted()
        address = wanted.address
        try:
            address = address or self.default_address()
            tls = None
            if wanted.tls:
                names = [n for n in (self.host.get_mgr_ip(), socket.gethostname(),
                                     wanted.address) if n not in WILDCARDS]
                found = self.certificates().for_names(names)
                tls = (found.bundle.full_chain, found.bundle.key)
            server = self.make_server(self.app)
            server.start(address, wanted.port, tls)
        except Exception as e:
            self.error = '%s: %s' % (type(e).__name__, e)
            self.log.error('the rgwbench panel cannot start on %s port %d: %s',
                           address, wanted.port, self.error)
            return
        self._server, self._listening, self.error = server, wanted, None
        shown = address if address not in WILDCARDS else self.host.get_mgr_ip()
        self.url = self.build_url(scheme='https' if wanted.tls else 'http', host=shown,
                                  port=wanted.port, path='/')
        self.host.set_uri(self.url)
        self.log.info('the rgwbench panel serves %s', self.url)

    def stop(self) -> None:
        """Stop serving for good: a start, restart or change of options after it does nothing."""
        with self._lock:
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        if self._server is not None:
            try:
                self._server.stop()
            except Exception:
                self.log.exception('stopping the rgwbench panel failed')
        self._server, self._listening = None, None
        if self.url is not None:
            # An empty URI leaves `ceph mgr services`: no stale URL if the next start fails.
            self.host.set_uri('')
            self.url = None

    def restart_if_changed(self) -> None:
        """After an option changed: start again if the panel must listen elsewhere."""
        with self._lock:
            if self._listening is not None and self._listening == self.wanted():
                return
            self._stop()
            self._start()

    def restart(self) -> None:
        with self._lock:
            self._stop()
            self._start()

    # -- what `panel show` says -----------------------------------------------------
    def describe(self) -> Dict[str, Any]:
        wanted = self.wanted()
        try:
            address = wanted.address or self.default_address()
        except InvalidInput as e:
            address = '(%s)' % e
        current = None
        try:
            found = self.certificates().current()
            if found is not None:
                info = describe_certificate(found.bundle.certificate)
                current = {'source': found.source, 'subject': info['subject'],
                           'not_after': info['not_after'],
                           'fingerprint_sha256': info['fingerprint_sha256']}
        except Exception as e:
            current = {'error': str(e)}
        return {'url': self.url,
                'serving': self._server is not None, 'error': self.error,
                'address': address, 'port': wanted.port,
                'tls': wanted.tls, 'certificate': current if wanted.tls else None,
                'password_set': self.passwords.is_set(), 'sessions': self.sessions.count(),
                'session_timeout_s': int(self.session_timeout_s())}

    def password_changed(self) -> None:
        self.sessions.close_all()


def panel_to_text(info: Dict[str, Any]) -> str:
    lines = ['url:       %s' % (info['url'] or 'not serving%s' % (
        ' (%s)' % info['error'] if info['error'] else ''))]
    lines.append('listens:   %s port %d, %s' % (info['address'], info['port'],
                                                'HTTPS' if info['tls'] else 'HTTP'))
    cert = info.get('certificate')
    if cert:
        lines.append('cert:      %s' % (cert.get('error') or '%s, %s, sha256 %s' % (
            'set by the operator' if cert['source'] == 'operator' else 'self-signed',
            cert['subject'], cert['fingerprint_sha256'])))
    lines.append('password:  %s' % ('set' if info['password_set'] else
                                    'not set (`ceph rgwbench panel password generate`)'))
    lines.append('sessions:  %d open, each ends %d s after its login'
                 % (info['sessions'], info['session_timeout_s']))
    return '\n'.join(lines)
