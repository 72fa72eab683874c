"""The web server that carries the panel: CherryPy, the way each release's mgr runs it.

From Tentacle on, mgr modules mount their own CherryPy server through
``cherrypy_mgr.CherryPyMgr``; before it (Pacific to Squid) each module owns
the global ``cherrypy.engine`` of its sub-interpreter. Both are handled. One
catch is common to both: when CherryPy's bus fails to start, it calls
``os._exit``, which would take the whole ceph-mgr down; the bus module of
this sub-interpreter gets an ``os`` whose ``_exit`` only raises.
"""
import errno
import json
import os
import socket
import time
from typing import Any, Callable, Dict, Optional, Tuple

import cherrypy

from ..pem_files import PemFiles
from ..request_body import BodyRefused, body_length, read_body
from .app import SECURITY_HEADERS, PanelApp, Request, Response, parse_cookies, parse_form

MAX_BODY = 1024 * 1024
# A request line and its headers: without a bound, Tentacle's server reads a
# line until it ends, however long.
MAX_HEADERS = 64 * 1024
APP_NAME = 'rgwbench'


class _NoExit:
    """`os` for CherryPy's bus: everything as usual but `_exit`, which raises."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def _exit(status: int) -> None:
        raise RuntimeError('the CherryPy bus wanted to end the process (status %d)' % status)


def _guard_bus() -> None:
    from cherrypy.process import wspbus
    if not isinstance(wspbus.os, _NoExit):
        wspbus.os = _NoExit()


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


class _Root:
    """Every path goes to the panel's own router."""

    def __init__(self, app: PanelApp) -> None:
        self.app = app

    @cherrypy.expose
    def index(self, *args: Any, **kwargs: Any) -> bytes:
        return self._serve()

    @cherrypy.expose
    def default(self, *args: Any, **kwargs: Any) -> bytes:
        return self._serve()

    def _serve(self) -> bytes:
        req = cherrypy.request
        headers = {str(k).lower(): str(v) for k, v in req.headers.items()}
        try:
            length = body_length(headers.get('content-length'),
                                 headers.get('transfer-encoding'), MAX_BODY)
            try:
                body = read_body(req.rfile, length)
            except BodyRefused:
                _forget_unread_body(req.rfile)
                raise
        except BodyRefused as e:
            # The body is not (all) read, so the connection cannot carry another request.
            return self._answer(Response(e.status, json.dumps({'error': str(e)}).encode(),
                                         'application/json',
                                         SECURITY_HEADERS + [('Connection', 'close')]))
        query = {k: v[0] if isinstance(v, list) else str(v)
                 for k, v in cherrypy.lib.httputil.parse_query_string(
                     req.query_string).items()}
        request = Request(method=req.method, path=req.path_info or '/', query=query,
                          form=parse_form(body, headers.get('content-type', '')),
                          headers=headers, cookies=parse_cookies(headers.get('cookie', '')),
                          remote=str(req.remote.ip), secure=req.scheme == 'https')
        return self._answer(self.app.handle(request))

    @staticmethod
    def _answer(response: Response) -> bytes:
        out = cherrypy.response
        out.status = response.status
        out.headers['Content-Type'] = response.content_type
        for name, value in response.headers:
            if name.lower() == 'set-cookie':
                out.cookie.load(value)
            else:
                out.headers[name] = value
        return response.body


def _forget_unread_body(rfile: Any) -> None:
    """Tell cheroot there is no more body to read before it answers.

    On a connection it keeps, cheroot reads what is left of a body before
    sending the answer; after a read that timed out it cannot, and it dropped
    the connection without the answer.
    """
    if hasattr(rfile, 'remaining'):
        rfile.remaining = 0


def _app_config() -> Dict[str, Dict[str, Any]]:
    # CherryPy logs a failed request's headers by default: the session cookie and the
    # CSRF token would be in the mgr log for anyone who reads it.
    return {'/': {'request.process_request_body': False,
                  'tools.log_headers.on': False,
                  'tools.sessions.on': False,
                  'response.headers.server': 'rgwbench',
                  'request.show_tracebacks': False}}


class PanelServer:
    """Starts and stops the panel's HTTP(S) server in this mgr."""

    def __init__(self, app: PanelApp, log: Any) -> None:
        self.app = app
        self.log = log
        self._adapter: Any = None
        self._global = False
        self._pems = PemFiles()

    def start(self, address: str, port: int, tls: Optional[Tuple[str, str]]) -> None:
        _guard_bus()
        wait_for_port(address, port)
        # The server loads the certificate and key as it starts; then they are forgotten.
        try:
            ssl_files = (self._pems.path('panel-cert', tls[0]),
                         self._pems.path('panel-key', tls[1])) if tls else None
            self._start(address, port, ssl_files)
        finally:
            self._pems.close()

    def _start(self, address: str, port: int, ssl_files: Optional[Tuple[str, str]]) -> None:
        try:
            from cherrypy_mgr import CherryPyMgr  # Tentacle and later
        except ImportError:
            self._start_global(address, port, ssl_files)
            return
        tree = cherrypy._cptree.Tree()
        tree.mount(_Root(self.app), '/', config=_app_config())
        ssl_info = {'cert': ssl_files[0], 'key': ssl_files[1]} if ssl_files else None
        self._adapter, _ = CherryPyMgr.mount(tree, APP_NAME, (address, port),
                                             ssl_info=ssl_info)
        bound_server(self._adapter.httpserver)

    def _start_global(self, address: str, port: int,
                      ssl_files: Optional[Tuple[str, str]]) -> None:
        settings: Dict[str, Any] = {
            'server.socket_host': address, 'server.socket_port': port,
            'engine.autoreload.on': False, 'checker.on': False, 'log.screen': False,
            'server.thread_pool': 10, 'server.max_request_body_size': MAX_BODY,
            'server.max_request_header_size': MAX_HEADERS,
            'server.ssl_module': 'builtin' if ssl_files else None,
            'server.ssl_certificate': ssl_files[0] if ssl_files else None,
            'server.ssl_private_key': ssl_files[1] if ssl_files else None}
        # A server left by a start that failed (its port taken after wait_for_port)
        # keeps its own address: started again, it would listen on the old port while
        # the panel publishes the new one.
        cherrypy.server.httpserver = None
        cherrypy.config.update(settings)
        cherrypy.tree.mount(_Root(self.app), '/', config=_app_config())
        self._global = True
        try:
            cherrypy.engine.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self._adapter is not None:
            from cherrypy_mgr import CherryPyMgr
            self._adapter.stop()
            self._adapter.unsubscribe()
            CherryPyMgr.unregister(APP_NAME)
            self._adapter = None
        if self._global:
            cherrypy.engine.stop()
            cherrypy.server.httpserver = None
            self._global = False
        self._pems.close()


def bound_server(server: Any) -> None:
    """Limits of a cheroot server that CherryPyMgr made with none (0 means unlimited)."""
    server.max_request_header_size = MAX_HEADERS
    server.max_request_body_size = MAX_BODY
