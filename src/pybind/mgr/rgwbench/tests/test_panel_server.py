"""The panel's server (panel/server.py): the WSGI app's reads and answers, and cheroot's life.

The WSGI app is driven with environ dicts as cheroot fills them; the server
itself is the real cheroot the unit environments install (each release's
version), on ports of this host.
"""
import glob
import http.client
import os
import select
import socket
import ssl
import tempfile
import threading
import time
import urllib.parse
from io import BytesIO
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from rgwbench.tests.local_ports import free_port
from rgwbench.tests.panel_fakes import FakeApp, Log, get
from panel_harness import PASSWORD, Harness, Login

from rgwbench.panel import server as module
from rgwbench.panel import app as app_module
from rgwbench.panel.app import LOGIN_COOKIE, SESSION_COOKIE, parse_form
from rgwbench.certs.pem import self_signed_certificate
from rgwbench.web import connection_slots


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


class Answer:
    def __init__(self) -> None:
        self.status = ''
        self.headers: List[Tuple[str, str]] = []
        self.body = b''

    def start_response(self, status: str, headers: List[Tuple[str, str]]) -> None:
        self.status, self.headers = status, headers

    def header(self, name: str) -> Optional[str]:
        found = [v for k, v in self.headers if k.lower() == name.lower()]
        return found[0] if found else None


def call(app: Any, headers: Dict[str, str], body: Any = None, method: str = 'POST',
         path: str = '/login', query: str = '', log: Optional[Log] = None) -> Tuple[Answer, Any]:
    """One request through the WSGI app; (the answer, the body it was given)."""
    body = body if body is not None else EndlessBody()
    environ: Dict[str, Any] = {'REQUEST_METHOD': method, 'PATH_INFO': path,
                               'QUERY_STRING': query, 'REMOTE_ADDR': '192.0.2.1',
                               'wsgi.url_scheme': 'https', 'wsgi.input': body}
    for name, value in headers.items():
        key = name.upper().replace('-', '_')
        environ[key if key in ('CONTENT_TYPE', 'CONTENT_LENGTH') else 'HTTP_' + key] = value
    answer = Answer()
    answer.body = b''.join(module.PanelWsgi(app, log or Log())(environ, answer.start_response))
    return answer, body


@pytest.mark.parametrize('length', ['-1', '-100', ' -1', '1e3', '0x10', '5_0', '+5', '1, 1',
                                    '99999999999999999999999'])
def test_a_negative_or_malformed_length_is_refused_unread(length: str) -> None:
    app = FakeApp()
    answer, body = call(app, {'Content-Length': length})
    assert answer.status.startswith('400 ') and body.read_bytes == 0 and app.seen == []
    assert answer.header('Connection') == 'close'


def test_a_chunked_body_is_refused_unread() -> None:
    app = FakeApp()
    answer, body = call(app, {'Transfer-Encoding': 'chunked'})
    assert answer.status.startswith('400 ') and body.read_bytes == 0 and app.seen == []


def test_a_body_over_the_limit_is_refused_unread() -> None:
    app = FakeApp()
    answer, body = call(app, {'Content-Length': str(module.MAX_BODY + 1)})
    assert answer.status.startswith('413 ') and body.read_bytes == 0 and app.seen == []


@pytest.mark.parametrize('headers, read', [({'Content-Length': '11'}, 11), ({}, 0),
                                           ({'Content-Length': ''}, 0)])
def test_a_body_of_a_good_length_is_read_to_that_length(headers: Dict[str, str],
                                                        read: int) -> None:
    app = FakeApp()
    headers = dict(headers, **{'Content-Type': 'application/x-www-form-urlencoded'})
    answer, body = call(app, headers)
    assert answer.status == '200 OK' and body.read_bytes == read and len(app.seen) == 1


@pytest.mark.parametrize('then, status', [(socket.timeout('timed out'), 408), (None, 400),
                                          (ConnectionResetError(104, 'reset'), 400)])
def test_a_body_that_stops_before_its_length_is_refused_not_handed_on(
        then: Optional[BaseException], status: int) -> None:
    app = FakeApp()
    answer, body = call(app, {'Content-Length': '10'}, StoppingBody(4, then))
    assert answer.status.startswith('%d ' % status) and app.seen == []
    assert answer.header('Connection') == 'close' and body.remaining == 0


def test_the_request_reaches_the_app_as_it_came() -> None:
    app = FakeApp()
    answer, _ = call(app, {'Cookie': 'rgwbench_session=abc; other=1', 'X-CSRF-Token': 't',
                           'Content-Type': 'application/x-www-form-urlencoded',
                           'Content-Length': '0'},
                     method='GET', path='/runs/caf\xc3\xa9', query='a=1&a=2&b=&c=%ff')
    seen = app.seen[0]
    assert (seen.method, seen.path, seen.remote, seen.secure) == (
        'GET', '/runs/caf\u00e9', '192.0.2.1', True)
    assert seen.query == {'a': '1', 'b': '', 'c': '\ufffd'}
    assert seen.cookies == {'rgwbench_session': 'abc', 'other': '1'}
    assert seen.headers['x-csrf-token'] == 't' and seen.headers['content-length'] == '0'
    assert answer.status == '200 OK' and answer.body == b'ok:/runs/caf\xc3\xa9'
    assert answer.header('Content-Length') == str(len(answer.body))
    assert [v for k, v in answer.headers if k == 'Set-Cookie'] == ['a=1; HttpOnly', 'b=2']


def test_a_path_that_is_not_utf8_reaches_the_app_unchanged() -> None:
    app = FakeApp()
    call(app, {}, method='GET', path='/\xff\xfe')
    assert app.seen[0].path == '/\xff\xfe'


def test_a_head_request_gets_the_headers_of_its_get_and_no_body() -> None:
    answer, _ = call(FakeApp(), {}, method='HEAD', path='/login')
    assert answer.status == '200 OK' and answer.body == b''
    assert answer.header('Content-Length') == str(len(b'ok:/login'))


def test_an_app_that_fails_answers_500_and_logs_no_header() -> None:
    log = Log()
    answer, _ = call(FakeApp(fail=KeyError('boom')), {'Cookie': 'rgwbench_session=SECRET'},
                     method='GET', path='/', log=log)
    assert answer.status.startswith('500 ') and b'SECRET' not in answer.body
    assert any('KeyError' in line for line in log.lines)
    assert not any('SECRET' in line for line in log.lines)


@pytest.mark.parametrize('body', [b'[' * 100000, b'{"a":' * 100000, b'\xff\xfe{}', b'[1]'])
def test_a_json_body_too_deep_or_not_json_is_no_form(body: bytes) -> None:
    # Nested past the parser's depth, it once ended in a 500 from CherryPy.
    assert parse_form(body, 'application/json') == {}


# -- who may send a body: decided from the headers, before a byte of it is read ------------
@pytest.fixture
def panel() -> Harness:
    """The panel's real app over a fake backend, its requests sent here through the WSGI app."""
    return Harness()


def session_headers(login: Login, csrf: Optional[str], length: int) -> Dict[str, str]:
    headers = {'Cookie': '%s=%s' % (SESSION_COOKIE, login.token),
               'Content-Type': 'application/x-www-form-urlencoded',
               'Content-Length': str(length)}
    if csrf is not None:
        headers['X-CSRF-Token'] = csrf
    return headers


@pytest.mark.parametrize('path', ['/api/runs', '/api/abort', '/logout', '/no/such/page'])
def test_a_body_without_a_session_is_refused_unread(panel: Harness, path: str) -> None:
    answer, body = call(panel.app, {'Content-Length': str(module.MAX_BODY),
                                    'Cookie': '%s=guessed' % SESSION_COOKIE}, path=path)
    assert answer.status.startswith('401 ') and body.read_bytes == 0
    assert answer.header('Connection') == 'close'
    assert panel.backend.calls == []


def test_a_body_with_a_wrong_csrf_header_is_refused_unread(panel: Harness) -> None:
    login = panel.login()
    answer, body = call(panel.app, session_headers(login, 'wrong', 1000), path='/api/abort')
    assert answer.status.startswith('403 ') and body.read_bytes == 0
    assert 'abort_run' not in panel.backend.names()


def test_a_login_body_is_read_only_with_the_login_pages_cookie_and_small(panel: Harness) -> None:
    answer, body = call(panel.app, {'Content-Length': '100'}, path='/login')
    assert answer.status.startswith('403 ') and body.read_bytes == 0
    assert b'The login form expired' in answer.body
    answer, body = call(panel.app, {'Content-Length': str(app_module.MAX_LOGIN_BODY + 1),
                                    'Cookie': '%s=t' % LOGIN_COOKIE}, path='/login')
    assert answer.status.startswith('413 ') and body.read_bytes == 0
    assert panel.brake.locked_for('192.0.2.1') == 0.0        # no password was checked


def test_a_body_of_a_session_is_read_and_acted_on(panel: Harness) -> None:
    login = panel.login()
    form = ('csrf_token=%s' % login.csrf).encode()
    answer, _ = call(panel.app, session_headers(login, None, len(form)), BytesIO(form),
                     path='/api/abort')
    assert answer.status.startswith('202 ') and panel.backend.names()[-1] == 'abort_run'
    token = panel.login_form(remote='192.0.2.1')
    form = urllib.parse.urlencode({'login_token': token, 'password': PASSWORD}).encode()
    answer, _ = call(panel.app, {'Content-Length': str(len(form)),
                                 'Content-Type': 'application/x-www-form-urlencoded',
                                 'Cookie': '%s=%s' % (LOGIN_COOKIE, token)}, BytesIO(form))
    assert answer.status.startswith('303 ')


# -- the server: real cheroot ----------------------------------------------------------------


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(('127.0.0.1', port)) == 0


@pytest.fixture
def panels() -> Iterator[List[module.PanelServer]]:
    """Servers a test started; each is stopped after it, whatever the test did."""
    made: List[module.PanelServer] = []
    yield made
    for server in made:
        server.stop()


def panel_threads() -> List[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == 'rgwbench-panel-server']


def test_the_server_serves_with_its_bounds_and_stop_frees_the_port(
        panels: List[module.PanelServer]) -> None:
    port = free_port()
    server = module.PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
    panels.append(server)
    server.start('127.0.0.1', port, None)
    assert get(port) == (200, b'ok:/login')
    assert server._server.max_request_header_size == module.MAX_HEADERS > 0
    assert server._server.max_request_body_size == module.MAX_BODY
    server.stop()
    assert not listening(port) and panel_threads() == []
    module.wait_for_port('127.0.0.1', port, timeout_s=0)


def test_a_failed_start_leaves_nothing_and_a_start_on_another_port_serves(
        panels: List[module.PanelServer], monkeypatch: pytest.MonkeyPatch) -> None:
    # The port taken after the wait for it (another process was quicker): the start
    # fails at once; the next start, on another port, serves there and only there.
    monkeypatch.setattr(module, 'wait_for_port', lambda address, port: None)
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        first = int(taken.getsockname()[1])
        failed = module.PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
        panels.append(failed)
        with pytest.raises(OSError, match='in use'):
            failed.start('127.0.0.1', first, None)
        assert failed._server is None and panel_threads() == []
    assert not listening(first)
    second = free_port()
    server = module.PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
    panels.append(server)
    server.start('127.0.0.1', second, None)
    assert get(second) == (200, b'ok:/login') and not listening(first)


def pem_files_in_temp() -> List[str]:
    # Files only: other test sessions' folders (the unit suites' rgwbench-pylibs-*,
    # clusters) come and go in the same temp folder meanwhile.
    return sorted(path for path in glob.glob(os.path.join(tempfile.gettempdir(), 'rgwbench-*'))
                  if os.path.isfile(path))


def test_https_with_the_key_never_in_temp_space_and_forgotten_once_loaded(
        panels: List[module.PanelServer], monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed_certificate('rgwbench-test', ['127.0.0.1'])
    loaded: List[str] = []
    load_cert_chain = ssl.SSLContext.load_cert_chain

    def recording(context: ssl.SSLContext, certfile: str, keyfile: str,
                  **kwargs: Any) -> None:
        with open(keyfile) as f:
            loaded.append(f.read())
        loaded.append(keyfile)
        load_cert_chain(context, certfile, keyfile, **kwargs)
    monkeypatch.setattr(ssl.SSLContext, 'load_cert_chain', recording)
    before = pem_files_in_temp()
    port = free_port()
    server = module.PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
    panels.append(server)
    server.start('127.0.0.1', port, (cert, key))
    assert loaded[0] == key and not loaded[1].startswith(tempfile.gettempdir()), loaded[1]
    assert not os.path.exists(loaded[1]), 'the key is still readable after the server loaded it'
    assert pem_files_in_temp() == before
    assert get(port, tls=True) == (200, b'ok:/login')
    server.stop()
    assert pem_files_in_temp() == before


def test_a_failed_start_leaves_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    server = module.PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
    given: List[str] = []

    def fail(address: str, port: int, ssl_files: Tuple[str, str]) -> None:
        given.append(ssl_files[1])
        raise OSError('no')
    monkeypatch.setattr(server, '_start', fail)
    with pytest.raises(OSError):
        server.start('127.0.0.1', free_port(), ('cert', 'key'))
    assert given and not os.path.exists(given[0])


def test_cheroots_error_log_goes_to_the_mgr_log_not_stderr(
        capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    server_log = module._ServerLog(log)
    try:
        raise ValueError('in a worker')
    except ValueError:
        server_log('Error in HTTPServer.serve', level=40, traceback=True)
    assert 'in a worker' in log.lines[0] and capsys.readouterr().err == ''


def test_an_announced_body_without_a_session_is_answered_before_it_is_sent(
        panels: List[module.PanelServer], panel: Harness) -> None:
    # The client announces 1 MiB and sends none of it: the answer comes at once, not
    # after the server has waited for the body (cheroot's timeout is 10 s).
    port = free_port()
    server = module.PanelServer(panel.app, Log())
    panels.append(server)
    server.start('127.0.0.1', port, None)
    with socket.create_connection(('127.0.0.1', port), timeout=30) as client:
        began = time.monotonic()
        client.sendall(b'POST /api/runs HTTP/1.1\r\nHost: x\r\n'
                       b'Content-Type: application/x-www-form-urlencoded\r\n'
                       b'Content-Length: %d\r\n\r\n' % module.MAX_BODY)
        answer = b''
        while b'\r\n\r\n' not in answer:
            chunk = client.recv(4096)
            if not chunk:
                break
            answer += chunk
        took = time.monotonic() - began
    assert answer.startswith(b'HTTP/1.1 401 '), answer[:100]
    assert took < 8, took


# -- connection deadlines and bounds (slowloris) ---------------------------------------------
class SlowClients:
    """Clients that send part of a request line, then a byte every second, never ending it."""

    def __init__(self, port: int, sources: List[str]) -> None:
        self.socks: List[socket.socket] = []
        for source in sources:
            sock = socket.socket()
            sock.settimeout(5)
            sock.bind((source, 0))
            sock.connect(('127.0.0.1', port))
            sock.sendall(b'GET /login?')
            self.socks.append(sock)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        while not self._stop.wait(1.0):
            for sock in self.socks:
                try:
                    sock.sendall(b'a')
                except OSError:
                    pass          # cut by the server

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for sock in self.socks:
            sock.close()


def started(panels: List[module.PanelServer], tls: bool = False) -> int:
    port = free_port()
    server = module.PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
    panels.append(server)
    server.start('127.0.0.1', port, self_signed_certificate('rgwbench-test', ['127.0.0.1'])
                 if tls else None)
    return port


def test_slow_clients_beyond_the_workers_do_not_keep_a_request_out(
        panels: List[module.PanelServer], monkeypatch: pytest.MonkeyPatch) -> None:
    # The deadline for headers far off: the request is served because a slow connection
    # gives way to it, not because the slow ones ran out of time.
    monkeypatch.setattr(connection_slots, 'HEAD_TIMEOUT_S', 120.0)
    port = started(panels)
    sources = ['127.0.0.%d' % (2 + i % 3) for i in range(module.THREADS + 5)]
    slow = SlowClients(port, sources)
    try:
        began = time.monotonic()
        assert get(port, timeout=5) == (200, b'ok:/login')
        assert time.monotonic() - began < 5
    finally:
        slow.close()


def cut_after(sock: socket.socket, limit_s: float, trickle: bytes) -> Optional[float]:
    """Send `trickle` a byte at a time, one every 0.2 s; seconds until the server cut the
    connection (None: not within `limit_s`)."""
    began = time.monotonic()
    sent = 0
    while time.monotonic() - began < limit_s:
        readable, _, _ = select.select([sock], [], [], 0.2)
        try:
            if readable and sock.recv(4096) == b'':
                return time.monotonic() - began
            if trickle:
                sock.sendall(trickle[sent % len(trickle):][:1])
                sent += 1
        except OSError:
            return time.monotonic() - began
    return None


@pytest.mark.parametrize('tls, trickle', [
    (False, b'GET /login HTTP/1.1\r\nX-Slow: ' + b'a' * 1000),
    (False, b''),
    (True, b'')])
def test_a_connection_without_its_headers_in_time_is_cut(
        panels: List[module.PanelServer], monkeypatch: pytest.MonkeyPatch,
        tls: bool, trickle: bytes) -> None:
    monkeypatch.setattr(connection_slots, 'HEAD_TIMEOUT_S', 1.0)
    port = started(panels, tls)
    with socket.create_connection(('127.0.0.1', port), timeout=5) as sock:
        took = cut_after(sock, 6.0, trickle)
    assert took is not None, 'the connection was not cut'
    assert 0.9 <= took < 4, took
    assert get(port, tls) == (200, b'ok:/login')      # a request in time is served


def test_a_source_over_its_bound_is_closed_at_once_and_the_others_kept(
        panels: List[module.PanelServer], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_slots, 'HEAD_TIMEOUT_S', 120.0)
    port = started(panels)
    slow = SlowClients(port, ['127.0.0.2'] * module.MAX_PER_SOURCE)
    try:
        with socket.socket() as extra:
            extra.settimeout(5)
            extra.bind(('127.0.0.2', 0))
            extra.connect(('127.0.0.1', port))
            took = cut_after(extra, 3.0, b'')
        assert took is not None and took < 2, took
        assert select.select(slow.socks, [], [], 0)[0] == []      # not one of them cut
        assert get(port) == (200, b'ok:/login')                    # another source is served
    finally:
        slow.close()


def test_a_kept_connection_is_served_again(panels: List[module.PanelServer]) -> None:
    # Its place is given back after each request and taken again for the next one.
    port = started(panels)
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
    socks = []
    try:
        for _ in range(module.THREADS + 2):
            conn.request('GET', '/login')
            answer = conn.getresponse()
            assert (answer.status, answer.read()) == (200, b'ok:/login')
            socks.append(conn.sock)
        assert socks[0] is not None and all(s is socks[0] for s in socks)  # one connection
    finally:
        conn.close()


def test_a_body_not_sent_in_time_is_cut(panels: List[module.PanelServer],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_slots, 'BODY_TIMEOUT_S', 1.0)
    port = started(panels)
    with socket.create_connection(('127.0.0.1', port), timeout=5) as sock:
        sock.sendall(b'POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n'
                     b'Content-Type: application/x-www-form-urlencoded\r\n\r\n')
        took = cut_after(sock, 6.0, b'a' * 1000)
    assert took is not None, 'the connection was not cut'
    assert 0.9 <= took < 4, took
