"""The panel's server and service for tests: an app, logs, the mgr module as the panel's
host, and a GET of the login page over HTTP or HTTPS."""
import http.client
import ssl
from typing import Any, Dict, List, Optional, Tuple

from fixtures import MemoryStore

from rgwbench.panel.app import Request, Response


class FakeApp:
    def __init__(self, fail: Optional[Exception] = None) -> None:
        self.seen: List[Request] = []
        self.fail = fail

    def handle(self, request: Request) -> Response:
        self.seen.append(request)
        if self.fail is not None:
            raise self.fail
        return Response(200, b'ok:' + request.path.encode('utf-8'), 'text/plain',
                        [('Set-Cookie', 'a=1; HttpOnly'), ('Set-Cookie', 'b=2')])

    def admit_body(self, request: Request, length: int) -> Optional[Response]:
        return None


class Log:
    def __init__(self) -> None:
        self.lines: List[str] = []

    def _add(self, fmt: str, *args: Any) -> None:
        self.lines.append(fmt % args if args else fmt)

    error = info = warning = debug = _add

    def log(self, level: int, fmt: str, *args: Any) -> None:
        self._add(fmt, *args)


def get(port: int, tls: bool = False, timeout: float = 10) -> Tuple[int, bytes]:
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            '127.0.0.1', port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout)
    try:
        conn.request('GET', '/login')
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


class FakeHost(MemoryStore):
    """The mgr module as the panel sees it: its store, options and URI."""

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.options: Dict[str, Any] = dict(options)
        self.uris: List[str] = []

    def get_module_option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)

    def get_mgr_ip(self) -> str:
        return '192.0.2.10'

    def get_mgr_id(self) -> str:
        return 'x'

    def set_uri(self, uri: str) -> None:
        self.uris.append(uri)


class FakeLog:
    def __init__(self) -> None:
        self.lines: List[Tuple[str, str]] = []

    def _add(self, level: str, message: str, *args: Any) -> None:
        self.lines.append((level, message % args if args else message))

    def info(self, message: str, *args: Any) -> None:
        self._add('info', message, *args)

    def error(self, message: str, *args: Any) -> None:
        self._add('error', message, *args)

    def exception(self, message: str, *args: Any) -> None:
        self._add('exception', message, *args)
