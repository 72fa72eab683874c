"""The module's HTTPS endpoint that load agents fetch jobs from and post results to.

Only the agents of the run in progress are served, and the agents trust this
endpoint by the SHA-256 fingerprint of its certificate. An agent first
enrols (POST enrol) with the one-time code its launch config holds for it,
and is given a token of its own; every other request carries that token as
a bearer token and the agent's id, and a token serves only the agent it was
given to. A wrong code or token is answered 401, and its source must then
wait longer with each one before a wrong one is answered 401 again (429
until then, see web/brake.py); a right one always passes.
Connections are bounded, in all and from one source, each handled in a
thread of its own; its TLS handshake and headers, then its body, must come
within their time, and slow connections make way for new ones when all
places are taken (see web/connection_slots.py): clients that hold
connections open cannot keep an agent out.
"""
import hashlib
import json
import logging
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional, Protocol, Tuple

from ..web import connection_slots
from ..web.brake import AuthBrake
from ..web.connection_slots import ConnectionSlots
from ..web.handshake import finish_handshake
from ..loadgen.clock import ECHO, MGR_CLOCK, SENT
from ..certs.memory_files import PemFiles
from ..web.request_body import BodyRefused, body_length, read_body
from ..checks.clock_skew import ClockSample, sample

log = logging.getLogger(__name__)

PREFIX = '/agent/v1/'
MAX_BODY = 64 * 1024 * 1024
MAX_CONNECTIONS = 64           # handled at once, in all
MAX_PER_SOURCE = 8             # and from one source (an agent uses one at a time)
TIMEOUT_S = 30                 # for each read and write of a connection


class AgentSession(Protocol):
    """What the channel asks of the run in progress."""

    def enrol(self, agent: str, code: str, source: Optional[str] = None) -> Optional[str]: ...

    def authorized(self, agent: str, token: str) -> bool: ...

    def job_for(self, agent: str) -> Tuple[int, Dict[str, Any]]: ...

    def ready(self, agent: str) -> None: ...

    def start_for(self, agent: str) -> Tuple[int, Dict[str, Any]]: ...

    def result(self, agent: str, body: Dict[str, Any]) -> None: ...

    def progress(self, agent: str, body: Dict[str, Any]) -> Dict[str, Any]: ...

    def clock_sample(self, agent: str, found: ClockSample) -> None:
        """A sample of the agent's clock against the mgr's (see checks/clock_skew.py)."""


class _Handler(BaseHTTPRequestHandler):
    server: '_Server'

    def log_message(self, fmt: str, *args: Any) -> None:
        log.debug('agent channel: ' + fmt, *args)

    def handle(self) -> None:
        # Here, in the connection's own thread: see _Server.get_request.
        if finish_handshake(self.connection):
            super().handle()

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        try:
            announced = body_length(self.headers.get('Content-Length'),
                                    self.headers.get('Transfer-Encoding'), MAX_BODY)
        except BodyRefused:
            announced = 0          # refused before a read, once the request is handled
        self.server.slots.headers_read(self.connection, announced)
        return True

    def _reply(self, status: int, body: Dict[str, Any],
               headers: Tuple[Tuple[str, str], ...] = ()) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        # T1 of the agent's clock sample: the headers go out right after.
        self.send_header(MGR_CLOCK, '%.6f' % time.time())
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, address: str) -> None:
        # A right code or token always passes (a guesser on an agent's host cannot lock
        # the agent out); a wrong one counts only once its source has waited its time.
        self.close_connection = True
        wait = self.server.brake.locked_for(address)
        if wait > 0:
            self._reply(429, {'error': 'too many wrong tokens; wait %d s' % (int(wait) + 1)},
                        (('Retry-After', str(int(wait) + 1)),))
        else:
            self.server.brake.failed(address)
            self._reply(401, {'error': 'unknown run, agent or token'})

    def _session(self) -> Optional[Tuple[AgentSession, str]]:
        received = time.time()   # T4 of the agent's clock sample: the request is read
        session = self.server.session
        kind, _, token = self.headers.get('Authorization', '').partition(' ')
        agent = self.headers.get('X-Agent-Id', '')
        address = str(self.client_address[0])
        if self.command == 'POST' and self.path == PREFIX + 'enrol':
            given = session.enrol(agent, token, address) \
                if session and kind == 'Bearer' else None
            if given is None:
                self._refuse(address)
            else:
                self.server.brake.succeeded(address)
                self._reply(200, {'token': given})
            return None
        if session is None or kind != 'Bearer' or not session.authorized(agent, token):
            self._refuse(address)
            return None
        self.server.brake.succeeded(address)
        found = sample(self.headers.get(SENT), self.headers.get(ECHO), received)
        if found is not None:
            session.clock_sample(agent, found)
        return session, agent

    def do_GET(self) -> None:
        found = self._session()
        if found is None:
            return
        session, agent = found
        if self.path == PREFIX + 'job':
            self._reply(*session.job_for(agent))
        elif self.path == PREFIX + 'alive':
            self._reply(200, {})  # the agent's dead-man switch: the mgr still answers
        elif self.path == PREFIX + 'start':
            self._reply(*session.start_for(agent))
        else:
            self._reply(404, {'error': 'no such resource'})

    def do_POST(self) -> None:
        found = self._session()
        if found is None:
            return
        session, agent = found
        try:
            raw = read_body(self.rfile, body_length(self.headers.get('Content-Length'),
                                                    self.headers.get('Transfer-Encoding'),
                                                    MAX_BODY))
            self.server.slots.body_read(self.connection)
        except BodyRefused as e:
            self.close_connection = True  # the body is not (all) read: nothing can follow
            self._reply(e.status, {'error': str(e)})
            return
        try:
            body = json.loads(raw or b'{}')
        except ValueError:
            self._reply(400, {'error': 'body is not JSON'})
            return
        if self.path == PREFIX + 'ready':
            session.ready(agent)
        elif self.path == PREFIX + 'result':
            session.result(agent, body)
        elif self.path == PREFIX + 'progress':
            self._reply(200, session.progress(agent, body))
            return
        else:
            self._reply(404, {'error': 'no such resource'})
            return
        self._reply(200, {})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    session: Optional[AgentSession] = None
    context: ssl.SSLContext
    brake: AuthBrake

    def __init__(self, address: Tuple[str, int], handler: Any) -> None:
        super().__init__(address, handler)
        self.slots = ConnectionSlots(total=MAX_CONNECTIONS, per_source=MAX_PER_SOURCE,
                                     head_s=connection_slots.HEAD_TIMEOUT_S,
                                     body_s=connection_slots.BODY_TIMEOUT_S)

    def get_request(self) -> Tuple[Any, Any]:
        # The TLS handshake happens in the request's own thread (_Handler.handle), so
        # that a client that never completes it cannot hold up the others.
        sock, addr = self.socket.accept()
        sock.settimeout(TIMEOUT_S)
        return self.context.wrap_socket(sock, server_side=True,
                                        do_handshake_on_connect=False), addr

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.take(request, str(client_address[0])):
            self.shutdown_request(request)  # closed at once: no thread for it
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.give_back(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.give_back(request)

    def service_actions(self) -> None:
        # serve_forever calls it between accepts, at least every half second.
        self.slots.cut_overdue()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A connection cut for its time, or a client gone: not worth a traceback on stderr.
        log.debug('agent channel: a connection from %s ended in an error', client_address[0],
                  exc_info=True)


class AgentChannel:
    """Serves one run's agents, over TLS with a certificate made for it."""

    def __init__(self, address: str, port: int, cert_pem: str, key_pem: str,
                 brake: Optional[AuthBrake] = None) -> None:
        self._server = _Server((address, port), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with PemFiles() as pems:
            context.load_cert_chain(pems.path('agent-cert', cert_pem),
                                    pems.path('agent-key', key_pem))
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
