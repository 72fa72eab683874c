"""The module's HTTPS endpoint that load agents fetch jobs from and post results to.

Only the agents of the run in progress are served: each request carries the
run's secret as a bearer token and the agent's id, and the agents trust this
endpoint by the SHA-256 fingerprint of its certificate. A wrong secret is
answered 401 after a delay that grows with each one from the same address,
as a wrong password of the panel is (see brake.py).
"""
import hashlib
import hmac
import json
import logging
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional, Protocol, Tuple

from ..brake import AuthBrake

log = logging.getLogger(__name__)

PREFIX = '/agent/v1/'
MAX_BODY = 64 * 1024 * 1024


class AgentSession(Protocol):
    """What the channel asks of the run in progress."""

    secret: str

    def knows(self, agent: str) -> bool: ...

    def job_for(self, agent: str) -> Dict[str, Any]: ...

    def ready(self, agent: str) -> None: ...

    def start_for(self, agent: str) -> Tuple[int, Dict[str, Any]]: ...

    def result(self, agent: str, body: Dict[str, Any]) -> None: ...

    def progress(self, agent: str, body: Dict[str, Any]) -> None: ...


class _Handler(BaseHTTPRequestHandler):
    server: '_Server'

    def log_message(self, fmt: str, *args: Any) -> None:
        log.debug('agent channel: ' + fmt, *args)

    def _reply(self, status: int, body: Dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _session(self) -> Optional[Tuple[AgentSession, str]]:
        session = self.server.session
        token = self.headers.get('Authorization', '')
        agent = self.headers.get('X-Agent-Id', '')
        address = str(self.client_address[0])
        if session is None or not hmac.compare_digest(token.encode(),
                                                      ('Bearer ' + session.secret).encode()):
            self.server.brake.failed(address)
            self._reply(401, {'error': 'unknown run or wrong secret'})
            return None
        self.server.brake.succeeded(address)
        if not session.knows(agent):
            self._reply(403, {'error': 'agent %r is not part of this run' % agent})
            return None
        return session, agent

    def do_GET(self) -> None:
        found = self._session()
        if found is None:
            return
        session, agent = found
        if self.path == PREFIX + 'job':
            self._reply(200, session.job_for(agent))
        elif self.path == PREFIX + 'start':
            self._reply(*session.start_for(agent))
        else:
            self._reply(404, {'error': 'no such resource'})

    def do_POST(self) -> None:
        found = self._session()
        if found is None:
            return
        session, agent = found
        length = int(self.headers.get('Content-Length') or 0)
        if length > MAX_BODY:
            self._reply(413, {'error': 'body too large'})
            return
        try:
            body = json.loads(self.rfile.read(length) or b'{}')
        except ValueError:
            self._reply(400, {'error': 'body is not JSON'})
            return
        if self.path == PREFIX + 'ready':
            session.ready(agent)
        elif self.path == PREFIX + 'result':
            session.result(agent, body)
        elif self.path == PREFIX + 'progress':
            session.progress(agent, body)
        else:
            self._reply(404, {'error': 'no such resource'})
            return
        self._reply(200, {})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    session: Optional[AgentSession] = None
    context: ssl.SSLContext
    brake: AuthBrake

    def get_request(self) -> Tuple[Any, Any]:
        # The TLS handshake happens in the request's own thread, so that a
        # client that never completes it cannot hold up the others.
        sock, addr = self.socket.accept()
        sock.settimeout(30)
        return self.context.wrap_socket(sock, server_side=True,
                                        do_handshake_on_connect=False), addr


class AgentChannel:
    """Serves one run's agents, over TLS with a certificate made for it."""

    def __init__(self, address: str, port: int, cert_pem: str, key_pem: str,
                 brake: Optional[AuthBrake] = None) -> None:
        self._server = _Server((address, port), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.NamedTemporaryFile('w') as cert, tempfile.NamedTemporaryFile('w') as key:
            cert.write(cert_pem)
            key.write(key_pem)
            cert.flush()
            key.flush()
            context.load_cert_chain(cert.name, key.name)
        self._server.context = context
        self._server.brake = brake or AuthBrake()
        self.fingerprint = hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert_pem)).hexdigest()
        host, bound_port = str(self._server.server_address[0]), self._server.server_address[1]
        self.url = 'https://%s:%d' % (host if ':' not in host else '[%s]' % host, bound_port)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='rgwbench-agent-channel', daemon=True)

    def open(self, session: AgentSession) -> None:
        self._server.session = session
        if not self._thread.is_alive():
            self._thread.start()

    def close(self) -> None:
        self._server.session = None
        self._server.shutdown()
        self._server.server_close()
