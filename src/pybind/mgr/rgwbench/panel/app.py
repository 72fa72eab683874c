"""The panel's requests and answers, apart from the web server that carries them.

Nothing but the login page is served without a session: other pages answer
401 with the login form, the JSON API and downloads 401 with an error. Every
POST but the login's needs the session's CSRF token (the ``X-CSRF-Token``
header or a ``csrf_token`` form field); the login form has a token of its own
in a cookie, so that another site cannot log a browser in. A wrong password
waits longer each time (see brake.py).
"""
import json
import os
import re
import secrets
import urllib.parse
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Protocol, Tuple

from ..web.brake import AuthBrake
from ..errors import InvalidInput, RGWBenchError
from ..results.model import Run, RunSummary
from ..results.report import result_to_csv
from ..serial import dump
from .auth import PasswordStore, Session, Sessions, same_token
from . import pages

SESSION_COOKIE = 'rgwbench_session'
LOGIN_COOKIE = 'rgwbench_login'
STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'static')
STATIC_FILES = {'panel.css': 'text/css; charset=utf-8',
                'panel.js': 'text/javascript; charset=utf-8'}
_RUN_PATH = re.compile(r'^/runs/([A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}?)(\.json|\.csv)?\Z')
STATUS_OF_ERRNO = {22: 400, 2: 404, 16: 409, 17: 409, 1: 403, 13: 403}
#: a login form's body: its token, a password of at most 1024 characters (up to 12
#: bytes each, form-encoded), `next`
MAX_LOGIN_BODY = 64 * 1024


class Request(NamedTuple):
    method: str
    path: str
    query: Dict[str, str]
    form: Dict[str, str]
    headers: Dict[str, str]          # names in lower case
    cookies: Dict[str, str]
    remote: str
    secure: bool                     # came over TLS: cookies get the Secure flag


class Response(NamedTuple):
    status: int
    body: bytes
    content_type: str
    headers: List[Tuple[str, str]]


class PanelBackend(Protocol):
    """What the panel asks of the module (the same services the CLI commands use)."""

    def about(self) -> Dict[str, Any]: ...

    def runs(self) -> List[RunSummary]: ...

    def run(self, run_id: str) -> Run: ...

    def active_run(self) -> Optional[Dict[str, Any]]: ...

    def profiles(self) -> List[Dict[str, Any]]: ...

    def plan(self, profile: str, overrides: Dict[str, str]) -> Tuple[Dict[str, Any], str]: ...

    def start_run(self, profile: str, overrides: Dict[str, str], *, confirmed: bool) -> str: ...

    def abort_run(self) -> str: ...


CSP = ("default-src 'none'; script-src 'self'; style-src %s; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
COMMON_HEADERS = [
    ('X-Content-Type-Options', 'nosniff'),
    ('X-Frame-Options', 'DENY'),
    ('Referrer-Policy', 'no-referrer'),
    ('Cache-Control', 'no-store'),
]
SECURITY_HEADERS = COMMON_HEADERS + [('Content-Security-Policy', CSP % "'self'")]
#: the login page is served before a session, so it fetches no stylesheet
LOGIN_HEADERS = COMMON_HEADERS + [('Content-Security-Policy', CSP % pages.LOGIN_STYLE_CSP)]


def _json(status: int, data: Any, headers: Optional[List[Tuple[str, str]]] = None) -> Response:
    return Response(status, json.dumps(data, sort_keys=True).encode('utf-8'),
                    'application/json', SECURITY_HEADERS + (headers or []))


def _html(status: int, text: str, headers: Optional[List[Tuple[str, str]]] = None,
          security: Optional[List[Tuple[str, str]]] = None) -> Response:
    return Response(status, text.encode('utf-8'), 'text/html; charset=utf-8',
                    (security or SECURITY_HEADERS) + (headers or []))


def _redirect(location: str, headers: Optional[List[Tuple[str, str]]] = None) -> Response:
    return Response(303, b'', 'text/plain', SECURITY_HEADERS + [('Location', location)]
                    + (headers or []))


def _cookie(name: str, value: str, max_age: int, secure: bool) -> Tuple[str, str]:
    return ('Set-Cookie', '%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s'
            % (name, value, max_age, '; Secure' if secure else ''))


def _safe_next(target: str) -> str:
    """Where to go after the login: a path of this panel only.

    Browsers drop tabs and line breaks from a URL, so `/`, a tab, `/host` would
    be `//host`, another site: any control character or backslash sends to `/`.
    """
    if target.startswith('/') and not target.startswith('//') and \
            not any(c == '\\' or ord(c) < 32 or ord(c) == 127 for c in target):
        return target
    return '/'


class PanelApp:
    def __init__(self, backend: PanelBackend, passwords: PasswordStore, sessions: Sessions,
                 brake: AuthBrake, session_timeout_s: Callable[[], float]) -> None:
        self.backend = backend
        self.passwords = passwords
        self.sessions = sessions
        self.brake = brake
        self.session_timeout_s = session_timeout_s

    # -- the entry point ------------------------------------------------------------
    def admit_body(self, request: Request, length: int) -> Optional[Response]:
        """None when the server may read the request's body of `length` bytes; else the answer.

        Decided from the request line and headers alone, before a byte of the body
        is read: only a login form (small, with the login page's cookie) or a
        request of an open session, whose CSRF header, when it sends one, is right.
        """
        if request.path == '/login' and request.method == 'POST':
            if length > MAX_LOGIN_BODY:
                return _json(413, {'error': 'a login is at most %d bytes' % MAX_LOGIN_BODY})
            if not request.cookies.get(LOGIN_COOKIE):
                return self._login_page(request, 'The login form expired; try again.', 403)
            return None
        session = self._session_of(request)
        if session is None:
            return _json(401, {'error': 'log in first'})
        given = request.headers.get('x-csrf-token')
        if given is not None and not same_token(given, session.csrf):
            return _json(403, {'error': 'missing or wrong CSRF token'})
        return None

    def _session_of(self, request: Request) -> Optional[Session]:
        return self.sessions.find(request.cookies.get(SESSION_COOKIE), self.passwords.version())

    def handle(self, request: Request) -> Response:
        try:
            return self._route(request)
        except RGWBenchError as e:
            return _json(STATUS_OF_ERRNO.get(abs(e.errno), 500), {'error': str(e)})

    def _route(self, request: Request) -> Response:
        path, method = request.path, request.method
        if path == '/favicon.ico':
            # Browsers ask for it after every page, with or without a session: answered
            # with the login page, it would replace the login form's cookie under it.
            return Response(404, b'', 'text/plain', SECURITY_HEADERS)
        if path == '/login':
            if method == 'POST':
                return self._login(request)
            if method in ('GET', 'HEAD'):
                return self._login_page(request, None, 200)
            return _json(405, {'error': 'method not allowed'})
        session = self._session_of(request)
        if session is None:
            if method != 'GET' or path.startswith(('/api/', '/static/')) or \
                    path.endswith(('.json', '.csv')):
                return _json(401, {'error': 'log in first'})
            return self._login_page(request, None, 401, next_path=path)
        if method == 'POST':
            given = request.headers.get('x-csrf-token') or request.form.get('csrf_token')
            if not same_token(given, session.csrf):
                return _json(403, {'error': 'missing or wrong CSRF token'})
            return self._post(request, session)
        if method not in ('GET', 'HEAD'):
            return _json(405, {'error': 'method not allowed'})
        return self._get(request, session)

    # -- logging in and out ---------------------------------------------------------
    def _login_page(self, request: Request, error: Optional[str], status: int,
                    next_path: str = '/') -> Response:
        token = secrets.token_urlsafe(24)
        text = pages.login_page(token, _safe_next(request.form.get('next') or
                                                  request.query.get('next') or next_path),
                                error, self.passwords.is_set())
        return _html(status, text, [_cookie(LOGIN_COOKIE, token, 3600, request.secure)],
                     security=LOGIN_HEADERS)

    def _login(self, request: Request) -> Response:
        if not same_token(request.form.get('login_token'), request.cookies.get(LOGIN_COOKIE)
                          or '\0'):
            return self._login_page(request, 'The login form expired; try again.', 403)
        locked = self.brake.locked_for(request.remote)
        if locked > 0:
            response = self._login_page(request, 'Too many wrong passwords; wait %d s.'
                                        % (locked + 1), 429)
            return response._replace(headers=response.headers + [
                ('Retry-After', str(int(locked) + 1))])
        if not self.passwords.verify(request.form.get('password', '')):
            self.brake.failed(request.remote)
            return self._login_page(request, 'Wrong password.', 401)
        self.brake.succeeded(request.remote)
        session = self.sessions.open(self.passwords.version())
        return _redirect(_safe_next(request.form.get('next') or '/'), [
            _cookie(SESSION_COOKIE, session.token, int(self.session_timeout_s()),
                    request.secure),
            _cookie(LOGIN_COOKIE, '', 0, request.secure)])

    # -- pages and data -------------------------------------------------------------
    def _get(self, request: Request, session: Session) -> Response:
        path = request.path
        if path == '/':
            return _html(200, pages.runs_page(self.backend.about(), self.backend.runs(),
                                              self.backend.profiles(),
                                              self.backend.active_run(), session.csrf))
        if path == '/api/status':
            return _json(200, {'active_run': self.backend.active_run()})
        if path == '/api/runs':
            return _json(200, dump(self.backend.runs()))
        if path == '/api/plan':
            plan, text = self.backend.plan(request.query.get('profile', ''),
                                           overrides(request.query))
            return _json(200, {'plan': plan, 'text': text})
        if path.startswith('/static/'):
            return self._static(path[len('/static/'):])
        found = _RUN_PATH.match(path)
        if found:
            run_id, suffix = found.group(1), found.group(2)
            record = self.backend.run(run_id)
            if suffix == '.json':
                return Response(200, json.dumps(dump(record), indent=1,
                                                sort_keys=True).encode('utf-8'),
                                'application/json', SECURITY_HEADERS + [_attachment(
                                    'rgwbench-%s.json' % run_id)])
            if suffix == '.csv':
                return Response(200, result_to_csv(record).encode('utf-8'),
                                'text/csv; charset=utf-8', SECURITY_HEADERS + [_attachment(
                                    'rgwbench-%s.csv' % run_id)])
            return _html(200, pages.run_page(self.backend.about(), record,
                                             self.backend.active_run(), session.csrf))
        return _html(404, pages.not_found_page(self.backend.about(), session.csrf))

    def _static(self, name: str) -> Response:
        if name not in STATIC_FILES:
            return _json(404, {'error': 'no such file'})
        with open(os.path.join(STATIC_DIR, name), 'rb') as f:
            data = f.read()
        return Response(200, data, STATIC_FILES[name], SECURITY_HEADERS)

    def _post(self, request: Request, session: Session) -> Response:
        path = request.path
        if path == '/logout':
            self.sessions.close(session.token)
            return _redirect('/login', [_cookie(SESSION_COOKIE, '', 0, request.secure)])
        if path == '/api/runs':
            if request.form.get('confirm') != 'yes':
                raise InvalidInput('a run changes settings and restarts daemons of this '
                                   'cluster while it lasts; see its plan and confirm '
                                   '(confirm=yes)')
            run_id = self.backend.start_run(request.form.get('profile', ''),
                                            overrides(request.form), confirmed=True)
            return _json(202, {'run_id': run_id})
        if path == '/api/abort':
            return _json(202, {'run_id': self.backend.abort_run()})
        return _json(404, {'error': 'no such resource'})


#: what the panel lets an operator change of a profile for one run: the overrides of
#: `rgwbench plan` and `rgwbench run`, by their names in profiles.with_overrides
OVERRIDES = ('duration', 'warmup', 'repeats', 'rate', 'rates', 'objects',
             'multipart_threshold', 'part_size', 'range', 'processes', 'payload_signing')


def overrides(fields: Dict[str, str]) -> Dict[str, str]:
    """The run's overrides among the request's fields, as text (empty ones are left out).

    They are checked where the CLI's are, when the module applies them to the
    profile: a refusal names the override as the CLI does (`--warmup: ...`).
    """
    return {name: text for name, text in
            ((name, (fields.get(name) or '').strip()) for name in OVERRIDES) if text}


def _attachment(filename: str) -> Tuple[str, str]:
    return ('Content-Disposition', 'attachment; filename="%s"'
            % urllib.parse.quote(filename, safe='._-@+:'))


def parse_cookies(header: str) -> Dict[str, str]:
    cookies: Dict[str, str] = {}
    for part in header.split(';'):
        name, _, value = part.strip().partition('=')
        if name and name not in cookies:
            cookies[name] = value
    return cookies


def parse_form(body: bytes, content_type: str) -> Dict[str, str]:
    """Fields of a urlencoded form or a JSON object body (the first value of each)."""
    kind = content_type.split(';')[0].strip().lower()
    if kind == 'application/json':
        try:
            data = json.loads(body.decode('utf-8') or '{}')
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    if kind == 'application/x-www-form-urlencoded':
        return {k: v[0] for k, v in urllib.parse.parse_qs(
            body.decode('utf-8', 'replace'), keep_blank_values=True).items()}
    return {}
