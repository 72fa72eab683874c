"""The panel's server (panel/server.py) on a stand-in CherryPy: bodies it reads, keys it writes.

The unit environments have no CherryPy; the stand-in has the few names
server.py uses, and a request whose body never ends.
"""
import glob
import importlib
import os
import socket
import sys
import tempfile
import types
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from rgwbench.panel.app import Request, Response, parse_form

KEY = '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n'
CERT = '-----BEGIN CERTIFICATE-----\ncert\n-----END CERTIFICATE-----\n'


class EndlessBody:
    """A body that goes on as long as it is read, counting what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            raise AssertionError('the whole of an endless body was asked for')
        self.read_bytes += size
        return b'x' * size


class StoppingBody:
    """A body that stops after `sent` bytes: the client closed, or its bytes never came.

    `remaining`, as cheroot's reader of a body of known length has: what the server
    would read before answering (it cannot once a read timed out)."""

    def __init__(self, sent: int, then: Optional[BaseException]) -> None:
        self.sent = sent
        self.then = then
        self.remaining = 10

    def read(self, size: int = -1) -> bytes:
        if self.then is not None:
            raise self.then
        return b'x' * min(size, self.sent)


class FakeResponse:
    def __init__(self) -> None:
        self.status: Any = None
        self.headers: Dict[str, str] = {}
        self.cookie = types.SimpleNamespace(load=lambda value: None)


class FakeApp:
    def __init__(self) -> None:
        self.seen: List[Request] = []

    def handle(self, request: Request) -> Response:
        self.seen.append(request)
        return Response(200, b'ok', 'text/plain', [])


class Mounted:
    """What the stand-in CherryPyMgr got, and the key file as it was when mounting."""

    def __init__(self) -> None:
        self.ssl_info: Optional[Dict[str, str]] = None
        self.key_at_mount: Optional[str] = None
        self.server = types.SimpleNamespace(max_request_header_size=0, max_request_body_size=0)
        self.stopped = False


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tuple[Any, Any, Mounted]]:
    """(the server module on the stand-in CherryPy, the stand-in, what was mounted)."""
    fake = types.ModuleType('cherrypy')
    fake.expose = lambda f: f  # type: ignore[attr-defined]
    fake.request = None  # type: ignore[attr-defined]
    fake.response = FakeResponse()  # type: ignore[attr-defined]
    fake.lib = types.SimpleNamespace(httputil=types.SimpleNamespace(  # type: ignore
        parse_query_string=lambda q: urllib.parse.parse_qs(q)))
    fake._cptree = types.SimpleNamespace(  # type: ignore[attr-defined]
        Tree=lambda: types.SimpleNamespace(mount=lambda *a, **k: None))
    process = types.ModuleType('cherrypy.process')
    wspbus = types.ModuleType('cherrypy.process.wspbus')
    wspbus.os = os  # type: ignore[attr-defined]
    process.wspbus = wspbus  # type: ignore[attr-defined]
    mounted = Mounted()

    class CherryPyMgr:
        @staticmethod
        def mount(tree: Any, name: str, addr: Any, ssl_info: Any = None) -> Any:
            mounted.ssl_info = ssl_info
            if ssl_info:
                with open(ssl_info['key']) as f:  # as cheroot's adapter loads it
                    mounted.key_at_mount = f.read()
            adapter = types.SimpleNamespace(
                httpserver=mounted.server, stop=lambda: setattr(mounted, 'stopped', True),
                unsubscribe=lambda: None)
            return adapter, tree

        @staticmethod
        def unregister(name: str) -> None:
            pass

    mgr = types.ModuleType('cherrypy_mgr')
    mgr.CherryPyMgr = CherryPyMgr  # type: ignore[attr-defined]
    for name, module in (('cherrypy', fake), ('cherrypy.process', process),
                         ('cherrypy.process.wspbus', wspbus), ('cherrypy_mgr', mgr)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, 'rgwbench.panel.server', raising=False)
    module = importlib.import_module('rgwbench.panel.server')
    yield module, fake, mounted
    sys.modules.pop('rgwbench.panel.server', None)


def serve(module: Any, fake: Any, headers: Dict[str, str],
          body: Any = None) -> Tuple[Any, Any, FakeApp]:
    """One POST through the server's root; (the response, the body, the app)."""
    body = body or EndlessBody()
    fake.request = types.SimpleNamespace(
        headers=headers, rfile=body, query_string='', method='POST', path_info='/login',
        remote=types.SimpleNamespace(ip='192.0.2.1'), scheme='https')
    fake.response = FakeResponse()
    app = FakeApp()
    module._Root(app).default()
    return fake.response, body, app


@pytest.mark.parametrize('length', ['-1', '-100', ' -1', '1e3', '0x10', '5_0', '+5', '1, 1',
                                    '99999999999999999999999'])
def test_a_negative_or_malformed_length_is_refused_unread(
        server: Tuple[Any, Any, Mounted], length: str) -> None:
    module, fake, _ = server
    response, body, app = serve(module, fake, {'Content-Length': length})
    assert response.status == 400 and body.read_bytes == 0 and app.seen == []
    assert response.headers.get('Connection') == 'close'


def test_a_chunked_body_is_refused_unread(server: Tuple[Any, Any, Mounted]) -> None:
    module, fake, _ = server
    response, body, app = serve(module, fake, {'Transfer-Encoding': 'chunked'})
    assert response.status == 400 and body.read_bytes == 0 and app.seen == []


def test_a_body_over_the_limit_is_refused_unread(server: Tuple[Any, Any, Mounted]) -> None:
    module, fake, _ = server
    response, body, app = serve(module, fake, {'Content-Length': str(module.MAX_BODY + 1)})
    assert response.status == 413 and body.read_bytes == 0 and app.seen == []


@pytest.mark.parametrize('headers, read', [({'Content-Length': '11'}, 11), ({}, 0),
                                           ({'Content-Length': ''}, 0)])
def test_a_body_of_a_good_length_is_read_to_that_length(
        server: Tuple[Any, Any, Mounted], headers: Dict[str, str], read: int) -> None:
    module, fake, _ = server
    headers = dict(headers, **{'Content-Type': 'application/x-www-form-urlencoded'})
    response, body, app = serve(module, fake, headers)
    assert response.status == 200 and body.read_bytes == read and len(app.seen) == 1


@pytest.mark.parametrize('then, status', [(socket.timeout('timed out'), 408), (None, 400),
                                          (ConnectionResetError(104, 'reset'), 400)])
def test_a_body_that_stops_before_its_length_is_refused_not_handed_on(
        server: Tuple[Any, Any, Mounted], then: Optional[BaseException], status: int) -> None:
    # A body that never came made CherryPy answer 500 (and log the request's headers).
    module, fake, _ = server
    response, body, app = serve(module, fake, {'Content-Length': '10'}, StoppingBody(4, then))
    assert response.status == status and app.seen == []
    assert response.headers.get('Connection') == 'close' and body.remaining == 0


def test_the_server_bounds_request_lines_and_bodies(server: Tuple[Any, Any, Mounted]) -> None:
    module, _, mounted = server
    panel = module.PanelServer(FakeApp(), log=None)
    panel.start('127.0.0.1', 0, None)
    assert mounted.server.max_request_header_size == module.MAX_HEADERS > 0
    assert mounted.server.max_request_body_size == module.MAX_BODY
    panel.stop()
    assert mounted.stopped


def pem_files_in_temp() -> List[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), 'rgwbench-*'))


def test_the_key_is_never_in_temp_space_and_forgotten_once_loaded(
        server: Tuple[Any, Any, Mounted]) -> None:
    module, _, mounted = server
    before = pem_files_in_temp()
    panel = module.PanelServer(FakeApp(), log=None)
    panel.start('127.0.0.1', 0, (CERT, KEY))
    assert mounted.key_at_mount == KEY and mounted.ssl_info is not None
    path = mounted.ssl_info['key']
    assert not path.startswith(tempfile.gettempdir()), path
    assert not os.path.exists(path), 'the key is still readable after the server loaded it'
    assert pem_files_in_temp() == before
    panel.stop()
    assert pem_files_in_temp() == before


def test_a_failed_start_leaves_no_key(server: Tuple[Any, Any, Mounted],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    module, _, mounted = server
    panel = module.PanelServer(FakeApp(), log=None)

    def fail(*args: Any) -> None:
        mounted.ssl_info = {'key': args[2][1]}
        raise OSError('no')
    monkeypatch.setattr(panel, '_start', fail)
    with pytest.raises(OSError):
        panel.start('127.0.0.1', 0, (CERT, KEY))
    assert mounted.ssl_info is not None and not os.path.exists(mounted.ssl_info['key'])


@pytest.mark.parametrize('body', [b'[' * 100000, b'{"a":' * 100000, b'\xff\xfe{}', b'[1]'])
def test_a_json_body_too_deep_or_not_json_is_no_form(body: bytes) -> None:
    # Nested past the parser's depth, it once ended in a 500 from CherryPy.
    assert parse_form(body, 'application/json') == {}


class GlobalEngine:
    """Pacific's global CherryPy engine, as far as _start_global uses it: a start makes
    a server for the configured port unless one is left, and the first start fails."""

    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.ports: List[int] = []
        self.stops = 0

    def start(self) -> None:
        if self.fake.server.httpserver is None:
            self.fake.server.httpserver = types.SimpleNamespace(
                port=self.fake.config.settings['server.socket_port'])
        self.ports.append(self.fake.server.httpserver.port)
        if len(self.ports) == 1:
            raise OSError('port %d taken after the wait' % self.ports[0])

    def stop(self) -> None:
        self.stops += 1


def test_a_failed_start_leaves_no_server_that_a_start_on_another_port_would_reuse(
        server: Tuple[Any, Any, Mounted], monkeypatch: pytest.MonkeyPatch) -> None:
    module, fake, _ = server
    monkeypatch.delitem(sys.modules, 'cherrypy_mgr')   # Pacific: the global engine
    fake.server = types.SimpleNamespace(httpserver=None)
    fake.config = types.SimpleNamespace(settings={})
    fake.config.update = fake.config.settings.update
    fake.tree = types.SimpleNamespace(mount=lambda *a, **k: None)
    fake.engine = GlobalEngine(fake)
    monkeypatch.setattr(module, 'wait_for_port', lambda address, port: None)
    panel = module.PanelServer(FakeApp(), log=None)
    with pytest.raises(OSError):
        panel.start('::', 9494, None)
    assert fake.engine.stops == 1 and fake.server.httpserver is None
    module.PanelServer(FakeApp(), log=None).start('::', 37075, None)
    assert fake.engine.ports == [9494, 37075]


def test_a_failed_requests_headers_are_not_logged(server: Tuple[Any, Any, Mounted]) -> None:
    # CherryPy's default logs them on every error, with the session cookie and the CSRF
    # token: the integration test of secrets (test_load.py) found them in the mgr log.
    module, _, _ = server
    assert module._app_config()['/']['tools.log_headers.on'] is False
