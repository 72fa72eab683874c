"""The web server that carries the panel: a cheroot server of its own, the panel a WSGI app.

Every release's mgr ships cheroot (CherryPy's server). The panel does not use
CherryPy's engine: from Tentacle on, every module runs in the mgr's main
interpreter by default (``mgr_subinterpreter_modules``), so that engine is
shared with the dashboard and prometheus. A start that failed there left its
server subscribed to it, and each later start of the engine tried the old
port again: the panel stayed down on any port. Its own server binds in
``start`` (an error raises there, nothing is left behind) and ``stop`` ends it,
whatever other modules do.
"""
import errno
import http
import json
import logging
import socket
import threading
import time
import urllib.parse
from traceback import format_exc
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ..certs.memory_files import PemFiles
from ..web import connection_slots
from ..web.connection_slots import ConnectionSlots
from ..web.request_body import BodyRefused, body_length, read_body
from .app import SECURITY_HEADERS, PanelApp, Request, Response, parse_cookies, parse_form

MAX_BODY = 1024 * 1024
# A request line and its headers: without a bound, cheroot reads a line until it ends.
MAX_HEADERS = 64 * 1024
SERVER_NAME = 'rgwbench'
THREADS = 10
# A place for each worker and none for a queue: a connection let in beyond the workers
# would wait behind slow ones until their deadline; with every place taken, a new
# connection takes a slow one's place and so its worker.
MAX_CONNECTIONS = THREADS
MAX_PER_SOURCE = 6             # a browser's connections to one host at once
StartResponse = Callable[[str, List[Tuple[str, str]]], Any]


def wait_for_port(address: str, port: int, timeout_s: float = 10.0,
                  sleep: Callable[[float], None] = time.sleep) -> None:
    """Wait until (address, port) can be bound: an old mgr may not have let go of it yet."""
    family = socket.AF_INET6 if ':' in address else socket.AF_INET
    deadline = time.monotonic() + timeout_s
    while True:
        probe = socket.socket(family, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((address, port))
            return
        except OSError as e:
            if e.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                raise OSError(e.errno, 'cannot listen on %s port %d: %s'
                              % (address, port, e.strerror))
        finally:
            probe.close()
        sleep(0.5)


def _forget_unread_body(rfile: Any) -> None:
    """Tell cheroot there is no more body to read before it answers.

    On a connection it keeps, cheroot reads what is left of a body before
    sending the answer; after a read that timed out it cannot, and it dropped
    the connection without the answer.
    """
    if hasattr(rfile, 'remaining'):
        rfile.remaining = 0


def _headers_of(environ: Dict[str, Any]) -> Dict[str, str]:
    headers = {key[5:].replace('_', '-').lower(): str(value)
               for key, value in environ.items() if key.startswith('HTTP_')}
    for key in ('CONTENT_TYPE', 'CONTENT_LENGTH'):
        if key in environ:
            headers[key.replace('_', '-').lower()] = str(environ[key])
    return headers


def _path_of(environ: Dict[str, Any]) -> str:
    # WSGI hands the path over as latin-1; a path sent as UTF-8 is read as such.
    path = str(environ.get('PATH_INFO') or '/')
    try:
        return path.encode('latin-1').decode('utf-8')
    except UnicodeError:
        return path


def _query_of(environ: Dict[str, Any]) -> Dict[str, str]:
    parsed = urllib.parse.parse_qs(str(environ.get('QUERY_STRING') or ''),
                                   keep_blank_values=True, errors='replace')
    return {name: values[0] for name, values in parsed.items()}


def _status_line(status: int) -> str:
    try:
        return '%d %s' % (status, http.HTTPStatus(status).phrase)
    except ValueError:
        return '%d Unknown' % status


class PanelWsgi:
    """The panel's router as a WSGI application: every path goes to it."""

    def __init__(self, app: PanelApp, log: Any) -> None:
        self.app = app
        self.log = log

    def __call__(self, environ: Dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            response = self._handle(environ)
        except Exception as e:
            # Named, not dumped: a request's headers hold its session cookie and CSRF token.
            self.log.error('the rgwbench panel failed a request: %s: %s', type(e).__name__, e)
            response = Response(500, json.dumps({'error': 'internal error'}).encode(),
                                'application/json', SECURITY_HEADERS)
        headers = [('Content-Type', response.content_type),
                   ('Content-Length', str(len(response.body)))] + list(response.headers)
        start_response(_status_line(response.status), headers)
        return [b''] if environ.get('REQUEST_METHOD') == 'HEAD' else [response.body]

    def _handle(self, environ: Dict[str, Any]) -> Response:
        headers = _headers_of(environ)
        rfile = environ['wsgi.input']
        request = Request(method=str(environ.get('REQUEST_METHOD') or 'GET'),
                          path=_path_of(environ), query=_query_of(environ), form={},
                          headers=headers, cookies=parse_cookies(headers.get('cookie', '')),
                          remote=str(environ.get('REMOTE_ADDR') or ''),
                          secure=environ.get('wsgi.url_scheme') == 'https')
        try:
            length = body_length(headers.get('content-length'),
                                 headers.get('transfer-encoding'), MAX_BODY)
            refused = self.app.admit_body(request, length) if length else None
            if refused is not None:
                _forget_unread_body(rfile)
                return refused._replace(headers=refused.headers + [('Connection', 'close')])
            try:
                body = read_body(rfile, length)
            except BodyRefused:
                _forget_unread_body(rfile)
                raise
        except BodyRefused as e:
            # The body is not (all) read, so the connection cannot carry another request.
            return Response(e.status, json.dumps({'error': str(e)}).encode(),
                            'application/json', SECURITY_HEADERS + [('Connection', 'close')])
        return self.app.handle(request._replace(
            form=parse_form(body, headers.get('content-type', ''))))


class _ServerLog:
    """cheroot's error log into the mgr's: its default writes to the process's stderr."""

    def __init__(self, log: Any) -> None:
        self.log = log

    def __call__(self, msg: str = '', level: int = logging.INFO,
                 traceback: bool = False) -> None:
        if traceback:
            msg = '%s\n%s' % (msg, format_exc())
        self.log.log(level if level >= logging.WARNING else logging.DEBUG,
                     'rgwbench panel server: %s', msg)


class PanelServer:
    """Starts and stops the panel's HTTP(S) server in this mgr."""

    def __init__(self, app: PanelApp, log: Any) -> None:
        self.wsgi = PanelWsgi(app, log)
        self.log = log
        self._server: Any = None
        self._thread: Optional[threading.Thread] = None
        self._pems = PemFiles()

    def start(self, address: str, port: int, tls: Optional[Tuple[str, str]]) -> None:
        wait_for_port(address, port)
        # The server loads the certificate and key as it starts; then they are forgotten.
        try:
            ssl_files = (self._pems.path('panel-cert', tls[0]),
                         self._pems.path('panel-key', tls[1])) if tls else None
            self._start(address, port, ssl_files)
        finally:
            self._pems.close()

    def _start(self, address: str, port: int, ssl_files: Optional[Tuple[str, str]]) -> None:
        # cheroot is in the mgr; the unit tests bring their own.
        from .deadlines import PanelHttpServer
        slots = ConnectionSlots(total=MAX_CONNECTIONS, per_source=MAX_PER_SOURCE,
                                head_s=connection_slots.HEAD_TIMEOUT_S,
                                body_s=connection_slots.BODY_TIMEOUT_S)
        server = PanelHttpServer((address, port), self.wsgi, numthreads=THREADS,
                                 server_name=SERVER_NAME, slots=slots)
        bound_server(server)
        server.error_log = _ServerLog(self.log)
        if ssl_files:
            from .tls_worker import WrapOnlyAdapter
            server.ssl_adapter = WrapOnlyAdapter(ssl_files[0], ssl_files[1])
        server.prepare()    # binds and listens: a port in use raises here
        self._server = server
        self._thread = threading.Thread(target=self._serve, name='rgwbench-panel-server',
                                        daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        server = self._server
        try:
            server.serve()
        except Exception as e:
            self.log.error('the rgwbench panel server ended: %s: %s', type(e).__name__, e)

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server, self._thread = None, None
        if server is not None:
            server.stop()
        if thread is not None:
            thread.join(timeout=10)
        self._pems.close()


def bound_server(server: Any) -> None:
    """Limits a cheroot server has none of by default (0 means unlimited)."""
    server.max_request_header_size = MAX_HEADERS
    server.max_request_body_size = MAX_BODY
