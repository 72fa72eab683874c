"""The panel's router with a fake backend, its pages, and the panel's service with a fake server."""
import base64
import csv
import hashlib
import html
import io
import json
import re
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

import pytest
from fixtures import MemoryStore
from mgr_util import build_url
from test_panel_auth import Clock, Sleeps

from rgwbench.agents.certificate import describe_certificate
from rgwbench.brake import AuthBrake
from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.panel.app import (LOGIN_COOKIE, SESSION_COOKIE, STATIC_DIR, PanelApp, Request,
                                Response)
from rgwbench.panel.auth import PasswordStore, Sessions
from rgwbench.panel.service import Listen, Panel, panel_to_text

PASSWORD = 'correct horse battery'
REMOTE = '192.0.2.50'
TIMEOUT_S = 3600.0
NASTY = '<script>alert(1)</script>'


def _seconds(ops: List[int], latency: List[float]) -> List[Dict[str, Any]]:
    """An engine's per-second series of a 4 KiB workload."""
    return [{'t': t, 'ops': n, 'bytes': n * 4096, 'errors': 0, 'lat_mean_ms': lat}
            for t, (n, lat) in enumerate(zip(ops, latency))]


def _latency(mean: float, p50: float, p99: float, low: float, high: float) -> Dict[str, float]:
    return {'min': low, 'mean': mean, 'p50': p50, 'p90': round(p50 * 1.8, 3), 'p99': p99,
            'p999': round(high * 0.99, 3), 'max': high}


def _workload(name: str, ops: List[int], ops_per_s: float, mib_s: float,
              latency: Dict[str, float], cpu: float, rss: float,
              per_second_latency: List[float]) -> Dict[str, Any]:
    """A workload entry as the engine stores it (histograms left out)."""
    return {'name': name, 'op': name.split('-')[0], 'object_size': '4KiB', 'concurrency': 16,
            'duration_s': 10.0, 'elapsed_s': 10.0, 'error': None, 'error_samples': [],
            'errors': 0, 'ops': sum(ops), 'bytes': sum(ops) * 4096, 'ops_per_s': ops_per_s,
            'throughput_mib_s': mib_s, 'client_cpu_s': 0.55, 'latency_ms': latency,
            'ttfb_ms': dict(latency), 'rgw': {'cpu_cores': cpu, 'daemons': 1, 'rss_mib': rss,
                                              'rss_mib_max': round(rss * 1.05, 2)},
            'per_second': _seconds(ops, per_second_latency)}


#: a run of the built-in `quick` profile on Pacific, as the engine stored it
RUN_ID = '20261122-185018-9c6c4f'
RECORD: Dict[str, Any] = {
    'run_id': RUN_ID, 'profile': 'quick', 'state': 'complete', 'progress': 'complete',
    'ceph_version': '16.2.15', 'baseline': 'as-is', 'error': None, 'current': None,
    'started': 1795373418.379676, 'finished': 1795373504.875632,
    'definition': {'name': 'quick', 'baseline': 'as-is', 'placement': [], 'repeats': 1,
                   'variants': [{'name': 'as-is', 'settings': {}},
                                {'name': 'threads-256', 'settings': {'config': {
                                    'client.rgw/rgw_thread_pool_size': '256'}}}],
                   'workloads': [{'name': 'put-4KiB', 'op': 'put', 'size': '4KiB',
                                  'concurrency': 16, 'duration': 10, 'warmup': 2},
                                 {'name': 'get-4KiB', 'op': 'get', 'size': '4KiB',
                                  'concurrency': 16, 'duration': 10, 'warmup': 2}]},
    'variants': [
        {'name': 'as-is', 'settings': {}, 'changes': [], 'error': None,
         'client': {'ca_bundle': False, 'endpoint': None, 'sse': [], 'sse_kms_key_id': None},
         'workloads': [
             _workload('put-4KiB', [634, 427, 296, 528, 596, 401, 61, 702, 695, 698], 503.8,
                       1.968, _latency(38.001368, 21.561343, 389.021695, 5.378709, 2116.875668),
                       0.4669, 88.27,
                       [74.2, 39.1, 53.8, 29.3, 27.8, 37.1, 186.8, 30.9, 23.0, 22.6]),
             _workload('get-4KiB', [1742, 1555, 1408, 1526, 1518, 1621, 1941, 1591, 1841, 1965],
                       1670.8, 6.527, _latency(9.563251, 8.486911, 28.377087, 0.648227,
                                               105.822863),
                       1.0107, 115.34, [9.2, 10.2, 11.4, 10.4, 10.6, 9.8, 8.2, 10.1, 8.7, 8.1]),
         ]},
        {'name': 'threads-256', 'error': None,
         'settings': {'config': {'client.rgw/rgw_thread_pool_size': '256'}},
         'changes': [{'kind': 'config', 'target': 'client.rgw/rgw_thread_pool_size',
                      'state': 'undone', 'error': None},
                     {'kind': 'restart', 'target': 'rgw.default', 'state': 'undone',
                      'error': None}],
         'client': {'ca_bundle': False, 'endpoint': None, 'sse': [], 'sse_kms_key_id': None},
         'workloads': [
             _workload('put-4KiB', [872, 834, 830, 822, 848, 775, 812, 858, 783, 859], 829.3,
                       3.239, _latency(19.286943, 18.153471, 45.481983, 2.833871, 85.095596),
                       0.7622, 80.86, [18.4, 19.3, 19.3, 19.3, 19.0, 20.6, 19.7, 18.6, 20.5, 18.5]),
             _workload('get-4KiB', [2106, 2238, 2310, 2282, 2078, 1939, 1830, 2319, 2312, 2309],
                       2172.3, 8.486, _latency(7.356777, 6.668287, 20.381695, 0.614103,
                                               41.420141),
                       1.2497, 106.02, [7.6, 7.2, 6.9, 7.0, 7.7, 8.2, 8.8, 6.9, 6.9, 6.9]),
         ]},
    ],
    'comparison': [
        {'variant': 'threads-256', 'workload': 'put-4KiB', 'throughput_pct': 64.58,
         'ops_pct': 64.61, 'latency_mean_pct': -49.25, 'latency_p99_pct': -88.31,
         'rgw_cpu_pct': 63.25, 'rgw_rss_pct': -8.39, 'significant': True, 'noise_pct': 26.62,
         'method': 'per-second', 'tested': 'ops_per_s'},
        {'variant': 'threads-256', 'workload': 'get-4KiB', 'throughput_pct': 30.01,
         'ops_pct': 30.02, 'latency_mean_pct': -23.07, 'latency_p99_pct': -28.18,
         'rgw_cpu_pct': 23.65, 'rgw_rss_pct': -8.08, 'significant': True, 'noise_pct': 9.85,
         'method': 'per-second', 'tested': 'ops_per_s'},
    ],
}
SUMMARIES: List[Dict[str, Any]] = [
    {'run_id': '20261121-101500-0a1b2c', 'profile': NASTY, 'state': 'failed',
     'started': 1795270500.0, 'finished': 1795270600.0, 'baseline': 'as-is',
     'variants': ['as-is', '<b>bold</b>']},
    {'run_id': RUN_ID, 'profile': 'quick', 'state': 'complete',
     'started': RECORD['started'], 'finished': RECORD['finished'], 'baseline': 'as-is',
     'variants': ['as-is', 'threads-256']},
    {'run_id': NASTY, 'profile': 'quick', 'state': 'running', 'started': 1795373600.0,
     'finished': None, 'baseline': 'as-is', 'variants': ['as-is']},
]
PROFILES: List[Dict[str, Any]] = [
    {'name': 'quick', 'builtin': True, 'estimated_s': 95, 'baseline': 'as-is'},
    {'name': '"><script>alert(2)</script>', 'builtin': False, 'estimated_s': 30,
     'baseline': 'as-is'},
]
PLAN = {'profile': 'quick', 'variants': ['as-is', 'threads-256'], 'estimated_s': 95}


class FakeBackend:
    """What the module gives the panel, recording each call; `fail` makes one raise."""

    def __init__(self) -> None:
        self.calls: List[Tuple[Any, ...]] = []
        self.records: Dict[str, Dict[str, Any]] = {RUN_ID: RECORD}
        self.active: Optional[Dict[str, Any]] = None
        self.fail: Dict[str, Exception] = {}

    def _call(self, name: str, *args: Any) -> None:
        self.calls.append((name,) + args)
        if name in self.fail:
            raise self.fail[name]

    def names(self) -> List[str]:
        return [str(c[0]) for c in self.calls]

    def about(self) -> Dict[str, Any]:
        self._call('about')
        return {'ceph_version': '16.2.15', 'ceph_release': 'pacific'}

    def runs(self) -> List[Dict[str, Any]]:
        self._call('runs')
        return SUMMARIES

    def run(self, run_id: str) -> Dict[str, Any]:
        self._call('run', run_id)
        if run_id not in self.records:
            raise NotFound('no result %r (see `ceph rgwbench results ls`)' % run_id)
        return self.records[run_id]

    def active_run(self) -> Optional[Dict[str, Any]]:
        self._call('active_run')
        return self.active

    def profiles(self) -> List[Dict[str, Any]]:
        self._call('profiles')
        return PROFILES

    def plan(self, profile: str, overrides: Dict[str, int]) -> Tuple[Dict[str, Any], str]:
        self._call('plan', profile, overrides)
        if profile != 'quick':
            raise InvalidInput('no profile %r' % profile)
        return PLAN, 'run quick: 2 variants, about 2 min'

    def start_run(self, profile: str, overrides: Dict[str, int]) -> str:
        self._call('start_run', profile, overrides)
        return '20261123-090000-abcdef'

    def abort_run(self) -> str:
        self._call('abort_run')
        return RUN_ID


class Login(NamedTuple):
    token: str
    csrf: str


class Harness:
    """A PanelApp over a fake backend, a password, a fake clock and a brake that never sleeps."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.sleeps = Sleeps()
        self.store = MemoryStore()
        self.passwords = PasswordStore(self.store, iterations=1000)
        self.passwords.set(PASSWORD)
        self.sessions = Sessions(lambda: TIMEOUT_S, clock=self.clock)
        self.brake = AuthBrake(lock_after=4, lock_s=300.0, sleep=self.sleeps, clock=self.clock)
        self.backend = FakeBackend()
        self.app = PanelApp(self.backend, self.passwords, self.sessions, self.brake,
                            lambda: TIMEOUT_S)
        self.responses: List[Response] = []

    def request(self, method: str, path: str, query: Optional[Dict[str, str]] = None,
                form: Optional[Dict[str, str]] = None, headers: Optional[Dict[str, str]] = None,
                cookies: Optional[Dict[str, str]] = None, remote: str = REMOTE,
                secure: bool = False) -> Response:
        response = self.app.handle(Request(method, path, query or {}, form or {},
                                           headers or {}, cookies or {}, remote, secure))
        self.responses.append(response)
        return response

    def login_form(self, remote: str = REMOTE, secure: bool = False) -> str:
        """The login token of a fresh login page (its cookie and its form hold it)."""
        return cookie_value(self.request('GET', '/login', remote=remote, secure=secure),
                            LOGIN_COOKIE)

    def post_login(self, password: str, next_path: str = '/', remote: str = REMOTE,
                   secure: bool = False) -> Response:
        token = self.login_form(remote, secure)
        return self.request('POST', '/login', form={'login_token': token, 'password': password,
                                                    'next': next_path},
                            cookies={LOGIN_COOKIE: token}, remote=remote, secure=secure)

    def login(self, password: str = PASSWORD) -> Login:
        response = self.post_login(password)
        assert response.status == 303
        token = cookie_value(response, SESSION_COOKIE)
        home = self.get('/', Login(token, ''))
        assert home.status == 200
        found = re.search(r'<meta name="csrf-token" content="([^"]+)">', body(home))
        assert found
        return Login(token, html.unescape(found.group(1)))

    def get(self, path: str, login: Login, query: Optional[Dict[str, str]] = None) -> Response:
        return self.request('GET', path, query=query, cookies={SESSION_COOKIE: login.token})

    def post(self, path: str, login: Login, form: Optional[Dict[str, str]] = None,
             csrf: Optional[str] = None) -> Response:
        return self.request('POST', path, form=form,
                            headers={'x-csrf-token': csrf} if csrf is not None else {},
                            cookies={SESSION_COOKIE: login.token})


def headers(response: Response, name: str) -> List[str]:
    return [v for k, v in response.headers if k.lower() == name.lower()]


def header(response: Response, name: str) -> str:
    [value] = headers(response, name)
    return value


def set_cookies(response: Response) -> Dict[str, List[str]]:
    """Set-Cookie headers by cookie name: [value, attribute, ...]."""
    found: Dict[str, List[str]] = {}
    for value in headers(response, 'Set-Cookie'):
        parts = [p.strip() for p in value.split(';')]
        name, _, first = parts[0].partition('=')
        assert name not in found
        found[name] = [first] + parts[1:]
    return found


def cookie_value(response: Response, name: str) -> str:
    return set_cookies(response)[name][0]


def body(response: Response) -> str:
    return response.body.decode('utf-8')


def data(response: Response) -> Any:
    assert response.content_type == 'application/json'
    return json.loads(response.body)


def hidden(page: str, name: str) -> str:
    found = re.search(r'<input type="hidden" name="%s" value="([^"]*)">' % name, page)
    assert found, name
    return html.unescape(found.group(1))


def table(page: str, table_id: str) -> List[List[str]]:
    """The cells' text of each row of the table with that id."""
    found = re.search(r'<table id="%s">(.*?)</table>' % table_id, page, re.S)
    assert found, table_id
    return [[html.unescape(re.sub(r'<[^>]+>', '', cell)) for cell in
             re.findall(r'<t[hd][^>]*>(.*?)</t[hd]>', row, re.S)]
            for row in re.findall(r'<tr[^>]*>(.*?)</tr>', found.group(1), re.S)]


def check_security_headers(response: Response) -> None:
    assert header(response, 'X-Content-Type-Options') == 'nosniff'
    assert header(response, 'X-Frame-Options') == 'DENY'
    assert header(response, 'Cache-Control') == 'no-store'
    assert header(response, 'Referrer-Policy') == 'no-referrer'
    csp = header(response, 'Content-Security-Policy')
    directives = dict((d.strip().split(' ', 1) + [''])[:2] for d in csp.split(';'))
    assert directives['default-src'] == "'none'"
    assert directives['frame-ancestors'] == "'none'"
    assert "'unsafe-inline'" not in csp


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    assert harness.responses
    for response in harness.responses:       # every answer of every test has them
        check_security_headers(response)


# -- without a session --------------------------------------------------------------
@pytest.mark.parametrize('path', ['/', '/runs/%s' % RUN_ID, '/no/such/page'])
def test_pages_without_a_session_answer_401_with_the_login_form(h: Harness, path: str) -> None:
    response = h.request('GET', path)
    assert response.status == 401
    assert response.content_type.startswith('text/html')
    page = body(response)
    assert '<form id="login" method="post" action="/login">' in page
    assert 'name="password" type="password"' in page
    assert hidden(page, 'next') == path
    assert hidden(page, 'login_token') == cookie_value(response, LOGIN_COOKIE)
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.backend.calls == []


@pytest.mark.parametrize('method, path', [
    ('GET', '/api/status'), ('GET', '/api/runs'), ('GET', '/api/plan'),
    ('GET', '/runs/%s.json' % RUN_ID), ('GET', '/runs/%s.csv' % RUN_ID),
    ('GET', '/static/panel.js'), ('GET', '/static/panel.css'), ('HEAD', '/'),
    ('POST', '/api/runs'), ('POST', '/api/abort'), ('POST', '/logout'), ('DELETE', '/'),
])
def test_data_and_actions_without_a_session_answer_401(h: Harness, method: str,
                                                       path: str) -> None:
    for cookies in ({}, {SESSION_COOKIE: 'made-up'}, {SESSION_COOKIE: ''}):
        response = h.request(method, path, query={'profile': 'quick'},
                             form={'profile': 'quick', 'csrf_token': 'made-up'},
                             headers={'x-csrf-token': 'made-up'}, cookies=cookies)
        assert response.status == 401
        assert data(response) == {'error': 'log in first'}
    assert h.backend.calls == []


def test_a_csrf_token_is_no_session_token(h: Harness) -> None:
    login = h.login()
    calls = len(h.backend.calls)
    response = h.request('GET', '/api/status', cookies={SESSION_COOKIE: login.csrf})
    assert response.status == 401
    assert len(h.backend.calls) == calls


# -- logging in ---------------------------------------------------------------------
@pytest.mark.parametrize('secure', [False, True])
def test_the_login_page_sets_its_token_in_a_cookie_and_the_form(h: Harness,
                                                                secure: bool) -> None:
    response = h.request('GET', '/login', secure=secure)
    assert response.status == 200
    assert response.content_type == 'text/html; charset=utf-8'
    cookie = set_cookies(response)[LOGIN_COOKIE]
    token = cookie[0]
    assert len(token) >= 24
    assert {'Path=/', 'HttpOnly', 'SameSite=Strict'} <= set(cookie[1:])
    assert ('Secure' in cookie[1:]) is secure
    page = body(response)
    assert hidden(page, 'login_token') == token
    assert hidden(page, 'next') == '/'
    assert 'No password is set yet' not in page
    assert cookie_value(h.request('GET', '/login'), LOGIN_COOKIE) != token
    assert h.backend.calls == []


def test_the_login_page_says_when_no_password_is_set(h: Harness) -> None:
    h.passwords.remove()
    assert 'password generate' in body(h.request('GET', '/login'))
    response = h.post_login('')
    assert response.status == 401
    assert SESSION_COOKIE not in set_cookies(response)


def test_the_login_page_escapes_next(h: Harness) -> None:
    response = h.request('GET', '/login', query={'next': '/"><script>alert(1)</script>'})
    page = body(response)
    assert '<script>' not in page
    assert hidden(page, 'next') == '/"><script>alert(1)</script>'


@pytest.mark.parametrize('form_token, cookie_token', [
    (None, 'T' * 32), ('T' * 32, None), (None, None), ('', ''), ('T' * 32, 'U' * 32),
    ('T' * 31, 'T' * 32),
])
def test_a_login_without_its_forms_token_is_refused(h: Harness, form_token: Optional[str],
                                                    cookie_token: Optional[str]) -> None:
    form = {'password': PASSWORD, 'next': '/'}
    if form_token is not None:
        form['login_token'] = form_token
    response = h.request('POST', '/login', form=form,
                         cookies={} if cookie_token is None else {LOGIN_COOKIE: cookie_token})
    assert response.status == 403
    page = body(response)
    assert 'The login form expired' in page
    assert hidden(page, 'login_token') == cookie_value(response, LOGIN_COOKIE)   # a new one
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.sessions.count() == 0
    assert h.sleeps.waits == []


def test_a_wrong_password_is_refused_and_braked(h: Harness) -> None:
    response = h.post_login('wrong password', next_path='/runs/%s' % RUN_ID)
    assert response.status == 401
    assert response.content_type.startswith('text/html')
    page = body(response)
    assert 'Wrong password.' in page
    assert hidden(page, 'next') == '/runs/%s' % RUN_ID
    assert hidden(page, 'login_token') == cookie_value(response, LOGIN_COOKIE)
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.sleeps.waits == [1.0]
    assert h.post_login('').status == 401
    assert h.post_login(PASSWORD + ' ').status == 401
    assert h.sleeps.waits == [1.0, 2.0, 4.0]
    assert h.post_login('wrong', remote='192.0.2.51').status == 401   # its own count
    assert h.sleeps.waits == [1.0, 2.0, 4.0, 1.0]
    assert h.sessions.count() == 0
    assert h.backend.calls == []


@pytest.mark.parametrize('secure', [False, True])
def test_the_right_password_opens_a_session(h: Harness, secure: bool) -> None:
    assert h.post_login('wrong password', secure=secure).status == 401
    response = h.post_login(PASSWORD, next_path='/runs/%s' % RUN_ID, secure=secure)
    assert response.status == 303
    assert header(response, 'Location') == '/runs/%s' % RUN_ID
    cookies = set_cookies(response)
    session = cookies[SESSION_COOKIE]
    assert len(session[0]) >= 32
    assert {'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=%d' % TIMEOUT_S} \
        <= set(session[1:])
    assert ('Secure' in session[1:]) is secure
    assert cookies[LOGIN_COOKIE][0] == '' and 'Max-Age=0' in cookies[LOGIN_COOKIE]
    assert h.sessions.count() == 1
    assert h.get('/api/status', Login(session[0], '')).status == 200
    # the success cleared the address's failures
    assert h.post_login('wrong password', secure=secure).status == 401
    assert h.sleeps.waits == [1.0, 1.0]


@pytest.mark.parametrize('target', [
    '//evil.example', '//evil.example/runs', 'https://evil', 'https://evil.example/x',
    'http:evil.example', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)',
    'evil.example', '', '///evil.example',
])
def test_next_stays_on_the_panel(h: Harness, target: str) -> None:
    response = h.post_login(PASSWORD, next_path=target)
    assert response.status == 303
    assert header(response, 'Location') == '/'
    page = body(h.request('GET', '/login', query={'next': target}))
    assert hidden(page, 'next') == '/'


@pytest.mark.parametrize('target', ['/', '/runs/%s' % RUN_ID, '/runs/x?y=1#z'])
def test_next_of_the_panel_is_kept(h: Harness, target: str) -> None:
    assert header(h.post_login(PASSWORD, next_path=target), 'Location') == target


@pytest.mark.parametrize('target', ['/\t/evil.example', '/\n/evil.example', '/\r/evil.example'])
def test_next_with_a_control_character_stays_on_the_panel(h: Harness, target: str) -> None:
    location = header(h.post_login(PASSWORD, next_path=target), 'Location')
    assert not re.sub(r'[\t\r\n]', '', location).startswith('//')
    assert not re.search(r'[\x00-\x1f]', location)


def test_too_many_wrong_passwords_lock_the_address(h: Harness) -> None:
    for _ in range(4):
        assert h.post_login('wrong password').status == 401
    assert h.sleeps.waits == [1.0, 2.0, 4.0, 8.0]
    h.clock.now += 10
    response = h.post_login(PASSWORD)          # even the right one: it is not checked
    assert response.status == 429
    assert 0 < int(header(response, 'Retry-After')) <= 300
    assert int(header(response, 'Retry-After')) >= 290
    assert 'Too many wrong passwords' in body(response)
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.sleeps.waits == [1.0, 2.0, 4.0, 8.0]
    assert h.sessions.count() == 0
    assert h.post_login(PASSWORD, remote='192.0.2.51').status == 303   # others can log in
    h.clock.now += 290
    assert h.post_login(PASSWORD).status == 303    # lock_s after the last failure


def test_changing_the_password_ends_the_sessions(h: Harness) -> None:
    login = h.login()
    assert h.get('/api/status', login).status == 200
    h.passwords.set('a new password')
    assert h.get('/api/status', login).status == 401
    assert h.get('/', login).status == 401
    assert h.post_login(PASSWORD).status == 401
    login = h.login('a new password')
    assert h.get('/api/status', login).status == 200
    h.passwords.set('a new password')          # the same one again ends them too
    assert h.get('/api/status', login).status == 401
    h.passwords.generate()
    assert h.post_login('a new password').status == 401


def test_removing_the_password_ends_the_sessions(h: Harness) -> None:
    login = h.login()
    h.passwords.remove()
    assert h.get('/api/status', login).status == 401
    assert h.post_login(PASSWORD).status == 401


def test_a_session_ends_after_its_timeout(h: Harness) -> None:
    login = h.login()
    h.clock.now += TIMEOUT_S - 1
    assert h.get('/api/status', login).status == 200
    h.clock.now += 1
    response = h.get('/', login)
    assert response.status == 401
    assert '<form id="login"' in body(response)


def test_logout_ends_the_session(h: Harness) -> None:
    login, other = h.login(), h.login()
    refused = h.request('POST', '/logout', cookies={SESSION_COOKIE: login.token})
    assert refused.status == 403                # without its CSRF token
    assert h.get('/api/status', login).status == 200
    response = h.request('POST', '/logout', form={'csrf_token': login.csrf},
                         cookies={SESSION_COOKIE: login.token})
    assert response.status == 303
    assert header(response, 'Location') == '/login'
    cookie = set_cookies(response)[SESSION_COOKIE]
    assert cookie[0] == '' and 'Max-Age=0' in cookie
    assert h.get('/api/status', login).status == 401
    assert h.get('/', login).status == 401
    assert h.get('/api/status', other).status == 200
    assert h.sessions.count() == 1


# -- with a session -----------------------------------------------------------------
def test_the_runs_page(h: Harness) -> None:
    login = h.login()
    h.backend.calls.clear()
    response = h.get('/', login)
    assert response.status == 200
    assert response.content_type == 'text/html; charset=utf-8'
    page = body(response)
    assert sorted(h.backend.names()) == ['about', 'active_run', 'profiles', 'runs']
    assert re.findall(r'<script[^>]*>', page) == ['<script src="/static/panel.js" defer>']
    assert '<b>' not in page
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in page
    rows = table(page, 'runs')
    assert rows[0] == ['Run', 'Profile', 'State', 'Started', 'Finished', 'Variants']
    assert rows[1] == ['20261121-101500-0a1b2c', NASTY, 'failed', '2026-11-21 14:15:00Z',
                       '2026-11-21 14:16:40Z', 'as-is, <b>bold</b>']
    assert rows[2][:3] == [RUN_ID, 'quick', 'complete']
    assert rows[2][5] == 'as-is, threads-256'
    assert rows[3][:3] == [NASTY, 'quick', 'running']
    assert 'href="/runs/%s"' % RUN_ID in page
    assert 'href="/runs/&lt;script&gt;' in page
    options = re.findall(r'<option value="([^"]*)">([^<]*)</option>', page)
    assert [html.unescape(v) for v, _ in options] == [p['name'] for p in PROFILES]
    assert html.unescape(options[0][1]) == 'quick (built-in, about 2 min)'
    assert html.unescape(options[1][1]).endswith('(custom, about 1 min)')
    assert '<section id="live" class="live" hidden>' in page     # nothing running
    assert hidden(page, 'csrf_token') == login.csrf          # the logout form's
    assert 'Ceph 16.2.15 (pacific)' in page


def test_the_runs_page_while_a_run_goes(h: Harness) -> None:
    login = h.login()
    h.backend.active = {'run_id': RUN_ID, 'profile': 'quick', 'state': 'running',
                        'fraction': 0.25, 'progress': 'variant threads-256: put-4KiB',
                        'live': {'ops_per_s': 829.3, 'mib_per_s': 3.24, 'phase': 'measure'}}
    page = body(h.get('/', login))
    assert '<section id="live" class="live">' in page
    assert '<a id="live-run" href="/runs/%s">%s</a>' % (RUN_ID, RUN_ID) in page
    assert 'value="0.25"' in page
    assert '829.3 ops/s, 3.24 MiB/s (measure)' in page
    assert data(h.get('/api/status', login)) == {'active_run': h.backend.active}


def test_no_runs_yet(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    login = h.login()
    monkeypatch.setattr(h.backend, 'runs', lambda: [])
    assert '<p id="no-runs">No runs yet.</p>' in body(h.get('/', login))


def test_the_run_page(h: Harness) -> None:
    login = h.login()
    h.backend.calls.clear()
    response = h.get('/runs/%s' % RUN_ID, login)
    assert response.status == 200
    assert ('run', RUN_ID) in h.backend.calls
    page = body(response)
    assert '<h1 id="run-title" data-run-id="%s">Run %s</h1>' % (RUN_ID, RUN_ID) in page
    assert 'href="/runs/%s.json"' % RUN_ID in page and 'href="/runs/%s.csv"' % RUN_ID in page
    summary = re.search(r'<dl id="run-summary">(.*?)</dl>', page, re.S)
    assert summary and 'complete' in summary.group(1) and '2026-11-22 18:50:18Z' in page
    rows = table(page, 'comparison')
    assert rows[0] == ['Workload', 'Variant', 'Throughput MiB/s', 'Ops/s', 'Latency mean ms',
                       'Latency p99 ms', 'RGW CPU cores', 'RGW RSS MiB', 'Noise']
    assert rows[1:] == [
        ['put-4KiB', 'as-is (baseline)', '1.97', '503.8', '38.00', '389.0', '0.467', '88.27',
         ''],
        ['', 'threads-256', '+64.6%', '+64.6%', '-49.2%', '-88.3%', '+63.2%', '-8.4%',
         '\u00b126.6%'],
        ['get-4KiB', 'as-is (baseline)', '6.53', '1,671', '9.56', '28.38', '1.01', '115.3', ''],
        ['', 'threads-256', '+30.0%', '+30.0%', '-23.1%', '-28.2%', '+23.6%', '-8.1%',
         '\u00b19.8%'],
    ]
    comparison = re.search(r'<table id="comparison">(.*?)</table>', page, re.S)
    assert comparison
    # the significant throughput changes are marked, the rest is not
    assert re.findall(r'<strong>([^<]*)</strong>', comparison.group(1)) == [
        '+64.6%', '+64.6%', '+30.0%', '+30.0%']
    charts = re.findall(r'<svg [^>]*class="chart"', page)
    metrics = re.findall(r'<figure class="chart-box" data-metric="([^"]+)">', page)
    assert metrics == ['throughput_pct', 'latency_p50_pct', 'latency_p99_pct', 'rgw_cpu_pct',
                       'rgw_rss_pct']
    assert re.findall(r'<figure class="chart-box" data-workload="([^"]+)">', page) == [
        'put-4KiB', 'get-4KiB']
    assert len(charts) == len(metrics) + 2
    per_second = re.search(r'<section id="per-second">(.*?)</section>', page, re.S)
    assert per_second and '<polyline' in per_second.group(1)
    settings = table(page, 'settings-table')
    assert settings[0] == ['Variant', 'Settings vs the baseline', 'Changes made and put back']
    assert settings[1] == ['as-is', 'as the cluster is', '-']
    assert settings[2][0] == 'threads-256'
    assert settings[2][1] == 'config={"client.rgw/rgw_thread_pool_size":"256"}'
    assert 'config client.rgw/rgw_thread_pool_size: undone' in settings[2][2]
    assert 'restart rgw.default: undone' in settings[2][2]
    assert '<section id="live"' not in page           # the run is over


def test_the_run_page_escapes_the_record(h: Harness) -> None:
    login = h.login()
    record = json.loads(json.dumps(RECORD))
    record['profile'] = NASTY
    record['error'] = '<img src=x onerror=alert(3)>'
    record['variants'][1]['name'] = '<i>threads</i>'
    record['comparison'][0]['variant'] = record['comparison'][1]['variant'] = '<i>threads</i>'
    record['variants'][1]['changes'][0]['target'] = '<u>target</u>'
    h.backend.records['nasty-1'] = record
    page = body(h.get('/runs/nasty-1', login))
    for raw in ('<script>alert', '<img', '<i>', '<u>'):
        assert raw not in page
    assert '&lt;img src=x onerror=alert(3)&gt;' in page
    assert table(page, 'comparison')[2][1] == '<i>threads</i>'
    assert table(page, 'settings-table')[2][0] == '<i>threads</i>'


def test_a_run_that_goes_shows_the_live_section(h: Harness) -> None:
    login = h.login()
    h.backend.active = {'run_id': RUN_ID, 'fraction': 0.5, 'progress': 'measuring',
                        'live': None}
    page = body(h.get('/runs/%s' % RUN_ID, login))
    assert '<section id="live" class="live">' in page
    assert 'no figures yet' in page


def test_the_json_download(h: Harness) -> None:
    login = h.login()
    response = h.get('/runs/%s.json' % RUN_ID, login)
    assert response.status == 200
    assert response.content_type == 'application/json'
    assert header(response, 'Content-Disposition') == \
        'attachment; filename="rgwbench-%s.json"' % RUN_ID
    assert json.loads(response.body) == RECORD
    assert ('run', RUN_ID) in h.backend.calls


def test_the_csv_download(h: Harness) -> None:
    login = h.login()
    response = h.get('/runs/%s.csv' % RUN_ID, login)
    assert response.status == 200
    assert response.content_type == 'text/csv; charset=utf-8'
    assert header(response, 'Content-Disposition') == \
        'attachment; filename="rgwbench-%s.csv"' % RUN_ID
    rows = list(csv.DictReader(io.StringIO(body(response))))
    assert [(r['run_id'], r['variant'], r['baseline'], r['workload']) for r in rows] == [
        (RUN_ID, 'as-is', 'yes', 'put-4KiB'), (RUN_ID, 'threads-256', 'no', 'put-4KiB'),
        (RUN_ID, 'as-is', 'yes', 'get-4KiB'), (RUN_ID, 'threads-256', 'no', 'get-4KiB')]
    assert rows[0]['op'] == 'put' and rows[0]['object_size'] == '4KiB'
    assert float(rows[0]['ops_per_s']) == 503.8
    assert float(rows[0]['latency_p99_ms']) == 389.021695
    assert int(rows[0]['ops']) == 5038 and int(rows[0]['bytes']) == 5038 * 4096
    assert rows[0]['throughput_pct'] == '' and rows[0]['significant'] == ''
    assert float(rows[1]['throughput_pct']) == 64.58
    assert rows[1]['significant'] == 'yes' and float(rows[1]['noise_pct']) == 26.62
    assert float(rows[3]['ops_per_s']) == 2172.3


def test_an_unknown_run(h: Harness) -> None:
    login = h.login()
    for path in ('/runs/20200101-000000-000000', '/runs/20200101-000000-000000.json',
                 '/runs/20200101-000000-000000.csv'):
        response = h.get(path, login)
        assert response.status == 404
        assert 'no result' in data(response)['error']


@pytest.mark.parametrize('path', ['/runs/', '/runs/.hidden', '/runs/a/b', '/runs/a%2Fb.json',
                                  '/runs/' + 'x' * 200, '/nothing', '/api/nothing',
                                  '/runs/%s/' % RUN_ID])
def test_unknown_paths_answer_404(h: Harness, path: str) -> None:
    login = h.login()
    h.backend.calls.clear()
    response = h.get(path, login)
    assert response.status == 404
    assert 'run' not in h.backend.names()
    if response.content_type.startswith('text/html'):
        assert '<h1>Not found</h1>' in body(response)


def test_other_methods(h: Harness) -> None:
    login = h.login()
    assert h.post('/nothing', login, csrf=login.csrf).status == 404
    response = h.request('PUT', '/', cookies={SESSION_COOKIE: login.token})
    assert response.status == 405
    assert h.request('PUT', '/login').status == 405
    head = h.request('HEAD', '/api/status', cookies={SESSION_COOKIE: login.token})
    assert head.status == 200


def test_the_static_files(h: Harness) -> None:
    login = h.login()
    for name, kind in (('panel.js', 'text/javascript'), ('panel.css', 'text/css')):
        response = h.get('/static/' + name, login)
        assert response.status == 200
        assert response.content_type.startswith(kind)
        with open('%s/%s' % (STATIC_DIR, name), 'rb') as f:
            assert response.body == f.read()
    for name in ('nope.js', '../app.py', '..%2Fapp.py', '', 'panel.js/'):
        assert h.get('/static/' + name, login).status == 404


def test_the_plan(h: Harness) -> None:
    login = h.login()
    response = h.get('/api/plan', login, query={'profile': 'quick'})
    assert response.status == 200
    assert data(response) == {'plan': PLAN, 'text': 'run quick: 2 variants, about 2 min'}
    assert h.backend.calls[-1] == ('plan', 'quick', {})
    changed = h.get('/api/plan', login, query={'profile': 'quick', 'duration': ' 30 ',
                                               'warmup': '', 'repeats': '3', 'other': '1'})
    assert changed.status == 200
    assert h.backend.calls[-1] == ('plan', 'quick', {'duration': 30, 'repeats': 3})
    calls = len(h.backend.calls)
    bad = h.get('/api/plan', login, query={'profile': 'quick', 'warmup': '2s'})
    assert bad.status == 400 and 'warmup' in data(bad)['error']
    assert len(h.backend.calls) == calls
    refused = h.get('/api/plan', login, query={'profile': 'nope'})
    assert refused.status == 400
    assert data(refused) == {'error': "no profile 'nope'"}


def test_the_runs_api(h: Harness) -> None:
    login = h.login()
    assert data(h.get('/api/runs', login)) == SUMMARIES
    assert data(h.get('/api/status', login)) == {'active_run': None}


def test_starting_a_run_needs_the_csrf_token(h: Harness) -> None:
    login, other = h.login(), h.login()
    for csrf in (None, '', 'made-up', other.csrf, login.token, login.csrf[:-1]):
        response = h.post('/api/runs', login, form={'profile': 'quick'}, csrf=csrf)
        assert response.status == 403
        assert 'CSRF' in data(response)['error']
    response = h.request('POST', '/api/runs',
                         form={'profile': 'quick', 'csrf_token': other.csrf},
                         cookies={SESSION_COOKIE: login.token})
    assert response.status == 403
    assert 'start_run' not in h.backend.names()


def test_starting_a_run(h: Harness) -> None:
    login = h.login()
    for unconfirmed in ({'profile': 'quick'}, {'profile': 'quick', 'confirm': 'no'}):
        refused = h.post('/api/runs', login, form=unconfirmed, csrf=login.csrf)
        assert refused.status == 400 and 'confirm' in data(refused)['error']
    assert 'start_run' not in h.backend.names()
    response = h.post('/api/runs', login, form={'profile': 'quick', 'confirm': 'yes'},
                      csrf=login.csrf)
    assert response.status == 202
    assert data(response) == {'run_id': '20261123-090000-abcdef'}
    assert h.backend.calls[-1] == ('start_run', 'quick', {})
    by_form = h.request('POST', '/api/runs', form={'profile': 'quick', 'confirm': 'yes',
                                                   'csrf_token': login.csrf},
                        cookies={SESSION_COOKIE: login.token})
    assert by_form.status == 202
    assert [c for c in h.backend.calls if c[0] == 'start_run'] == \
        [('start_run', 'quick', {})] * 2


def test_starting_a_run_with_overrides(h: Harness) -> None:
    login = h.login()
    response = h.post('/api/runs', login, form={'profile': 'quick', 'duration': '20',
                                                'warmup': '0', 'repeats': '',
                                                'confirm': 'yes'}, csrf=login.csrf)
    assert response.status == 202
    assert h.backend.calls[-1] == ('start_run', 'quick', {'duration': 20, 'warmup': 0})
    for bad in ('abc', '1.5', '10s'):
        refused = h.post('/api/runs', login, form={'profile': 'quick', 'repeats': bad,
                                                   'confirm': 'yes'}, csrf=login.csrf)
        assert refused.status == 400
        assert 'repeats must be a whole number' in data(refused)['error']
    assert h.backend.names().count('start_run') == 1


@pytest.mark.parametrize('error, status', [
    (Busy('run 20261122-185018-9c6c4f is in progress (`ceph rgwbench abort` stops it)'), 409),
    (NotFound('no profile nope'), 404), (InvalidInput('bad profile name'), 400),
])
def test_errors_of_a_start_are_json(h: Harness, error: Exception, status: int) -> None:
    login = h.login()
    h.backend.fail['start_run'] = error
    response = h.post('/api/runs', login, form={'profile': 'quick', 'confirm': 'yes'},
                      csrf=login.csrf)
    assert response.status == status
    assert data(response) == {'error': str(error)}


def test_aborting_a_run(h: Harness) -> None:
    login = h.login()
    assert h.post('/api/abort', login).status == 403
    assert h.post('/api/abort', login, csrf='made-up').status == 403
    assert 'abort_run' not in h.backend.names()
    response = h.post('/api/abort', login, csrf=login.csrf)
    assert response.status == 202
    assert data(response) == {'run_id': RUN_ID}
    assert h.backend.names().count('abort_run') == 1
    h.backend.fail['abort_run'] = NotFound('no run in progress')
    response = h.post('/api/abort', login, csrf=login.csrf)
    assert response.status == 404 and data(response) == {'error': 'no run in progress'}


def test_security_headers_on_every_answer(h: Harness) -> None:
    login = h.login()
    h.backend.fail['start_run'] = Busy('busy')
    answers = [h.request('GET', '/'), h.request('GET', '/api/status'), h.post_login('wrong'),
               h.post_login(PASSWORD), h.get('/', login), h.get('/runs/%s' % RUN_ID, login),
               h.get('/runs/%s.json' % RUN_ID, login), h.get('/runs/%s.csv' % RUN_ID, login),
               h.get('/static/panel.js', login), h.get('/nothing', login),
               h.post('/api/runs', login, form={'confirm': 'yes'}, csrf=login.csrf),
               h.post('/api/runs', login),
               h.post('/logout', login, csrf=login.csrf)]
    assert sorted({a.status for a in answers}) == [200, 303, 401, 403, 404, 409]
    for answer in answers:
        check_security_headers(answer)


def csp_directives(response: Response) -> Dict[str, List[str]]:
    csp = header(response, 'Content-Security-Policy')
    return {d.split()[0]: d.split()[1:] for d in csp.split(';') if d.strip()}


def test_the_login_pages_csp_allows_its_inline_style_by_hash(h: Harness) -> None:
    for response in (h.request('GET', '/login'), h.request('GET', '/'),
                     h.post_login('wrong password'), h.request('POST', '/login')):
        style = re.search(r'<style>(.*?)</style>', body(response), re.S)
        assert style
        digest = "'sha256-%s'" % base64.b64encode(
            hashlib.sha256(style.group(1).encode('utf-8')).digest()).decode('ascii')
        assert csp_directives(response)['style-src'] == [digest]
        assert csp_directives(response)['script-src'] == ["'self'"]
    login = h.login()
    for response in (h.get('/', login), h.get('/api/status', login)):
        assert csp_directives(response)['style-src'] == ["'self'"]


def test_pages_with_a_session_have_no_inline_script_or_style(h: Harness) -> None:
    login = h.login()
    for path in ('/', '/runs/%s' % RUN_ID, '/nothing'):
        page = body(h.get(path, login))
        assert '<style' not in page
        assert re.findall(r'<script[^>]*>', page) == ['<script src="/static/panel.js" defer>']
        assert not re.search(r'<[^>]*\son[a-z]+\s*=', page, re.I)     # no event handler


# -- the service --------------------------------------------------------------------
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


class FakeServer:
    def __init__(self, app: PanelApp, fail: Optional[Exception]) -> None:
        self.app = app
        self.fail = fail
        self.started: List[Tuple[str, int, Optional[Tuple[str, str]]]] = []
        self.stopped = 0

    def start(self, address: str, port: int, tls: Optional[Tuple[str, str]]) -> None:
        self.started.append((address, port, tls))
        if self.fail is not None:
            raise self.fail

    def stop(self) -> None:
        self.stopped += 1


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


class Service:
    """A Panel over a fake host and fake servers."""

    def __init__(self, **options: Any) -> None:
        self.host = FakeHost(**options)
        self.servers: List[FakeServer] = []
        self.fail: Optional[Exception] = None
        self.log = FakeLog()
        self.backend = FakeBackend()
        self.panel = Panel(self.host, self.backend, self.make_server, build_url, self.log,
                           default_address=lambda: '::')

    def make_server(self, app: PanelApp) -> FakeServer:
        server = FakeServer(app, self.fail)
        self.servers.append(server)
        return server


def test_the_panel_over_https_with_a_self_signed_certificate() -> None:
    service = Service(panel_ssl=True, panel_port=9443)
    service.panel.start()
    [server] = service.servers
    assert server.app is service.panel.app
    [(address, port, tls)] = server.started
    assert (address, port) == ('::', 9443)
    assert tls is not None
    cert, key = tls
    assert cert.startswith('-----BEGIN CERTIFICATE-----')
    assert 'PRIVATE KEY-----' in key
    info = describe_certificate(cert)
    assert 'IP:192.0.2.10' in info['sans']
    assert 'rgwbench-panel' in info['subject']
    assert service.host.uris == ['https://192.0.2.10:9443/']
    described = service.panel.describe()
    assert described['serving'] is True
    assert described['url'] == 'https://192.0.2.10:9443/'
    assert described['error'] is None
    assert (described['address'], described['port'], described['tls']) == ('::', 9443, True)
    assert described['certificate']['source'] == 'generated'
    assert described['certificate']['fingerprint_sha256'] == info['fingerprint_sha256']
    text = json.dumps(described)
    assert 'PRIVATE KEY' not in text and key.strip() not in text
    assert 'BEGIN CERTIFICATE' not in text
    assert 'PRIVATE KEY' not in panel_to_text(described)
    assert 'self-signed' in panel_to_text(described)
    # a restart serves the same certificate: it is kept, not made anew
    service.panel.restart()
    assert server.stopped == 1
    assert service.servers[1].started == [('::', 9443, (cert, key))]


def test_the_panel_over_http_on_its_own_address() -> None:
    service = Service(panel_address='192.0.2.77', panel_port=8080, panel_ssl=False)
    service.panel.start()
    assert service.servers[0].started == [('192.0.2.77', 8080, None)]
    assert service.host.uris == ['http://192.0.2.77:8080/']
    described = service.panel.describe()
    assert described['certificate'] is None
    assert described['address'] == '192.0.2.77'
    assert service.host.get_store_prefix('panel/') == {}     # no certificate made


def test_the_panel_defaults() -> None:
    service = Service()
    service.panel.start()
    assert service.servers[0].started == [('::', 9494, None)]
    assert service.host.uris == ['http://192.0.2.10:9494/']
    described = service.panel.describe()
    assert described['password_set'] is False
    assert described['sessions'] == 0
    assert described['session_timeout_s'] == 28800


def test_a_server_that_cannot_start() -> None:
    service = Service(panel_port=9494)
    service.fail = OSError(98, 'Address already in use')
    service.panel.start()
    assert len(service.servers) == 1
    described = service.panel.describe()
    assert described['serving'] is False
    assert described['url'] is None
    assert 'Address already in use' in described['error']
    assert 'OSError' in described['error']
    assert service.host.uris == []
    assert [level for level, _ in service.log.lines] == ['error']
    assert 'Address already in use' in service.log.lines[0][1]
    assert 'not serving (OSError' in panel_to_text(described)
    # the next option change tries again, even with the same options
    service.fail = None
    service.panel.restart_if_changed()
    assert service.panel.describe()['serving'] is True
    assert service.panel.describe()['error'] is None
    assert service.host.uris == ['http://192.0.2.10:9494/']


def test_a_restart_that_fails_unpublishes_the_old_url() -> None:
    service = Service(panel_port=9494, panel_ssl=False)
    service.panel.start()
    service.fail = OSError(98, 'Address already in use')
    service.host.options['panel_port'] = 9595
    service.panel.restart_if_changed()
    assert service.host.uris == ['http://192.0.2.10:9494/', '']
    assert service.panel.describe()['url'] is None
    assert service.panel.describe()['serving'] is False


def test_restart_if_changed() -> None:
    service = Service(panel_port=9494, panel_ssl=False)
    service.panel.start()
    service.host.options['panel_session_timeout'] = 600       # not where it listens
    service.panel.restart_if_changed()
    assert len(service.servers) == 1 and service.servers[0].stopped == 0
    assert service.host.uris == ['http://192.0.2.10:9494/']
    service.host.options['panel_port'] = 9595
    service.panel.restart_if_changed()
    first, second = service.servers
    assert first.stopped == 1
    assert second.started == [('::', 9595, None)]
    assert service.host.uris[-1] == 'http://192.0.2.10:9595/'
    assert service.panel.describe()['url'] == 'http://192.0.2.10:9595/'
    assert service.panel.wanted() == Listen('', 9595, False)
    service.panel.restart_if_changed()
    assert len(service.servers) == 2 and second.stopped == 0


def test_stop() -> None:
    service = Service()
    service.panel.start()
    service.panel.stop()
    assert service.servers[0].stopped == 1
    assert service.host.uris == ['http://192.0.2.10:9494/', '']
    described = service.panel.describe()
    assert described['serving'] is False and described['url'] is None
    service.panel.stop()                       # twice: nothing more to stop
    assert service.servers[0].stopped == 1


def test_a_start_after_the_stop_does_not_serve() -> None:
    # the module starts the panel in a thread of its own: a shutdown may come first
    service = Service()
    service.panel.stop()
    service.panel.start()
    service.panel.restart_if_changed()
    service.panel.restart()
    assert service.servers == []
    assert service.host.uris == []
    assert service.panel.describe()['serving'] is False


def test_a_failing_stop_is_logged() -> None:
    service = Service()
    service.panel.start()

    def broken() -> None:
        raise RuntimeError('engine stuck')

    service.servers[0].stop = broken  # type: ignore[method-assign]
    service.panel.stop()
    assert ('exception', 'stopping the rgwbench panel failed') in service.log.lines
    assert service.panel.describe()['serving'] is False


def test_a_password_change_ends_the_panels_sessions() -> None:
    service = Service(panel_session_timeout=600)
    panel = service.panel
    panel.passwords.iterations = 1000
    panel.passwords.set(PASSWORD)
    session = panel.sessions.open(panel.passwords.version())
    assert panel.describe()['sessions'] == 1
    assert panel.describe()['password_set'] is True
    assert panel.describe()['session_timeout_s'] == 600
    assert session.expires - panel.sessions.clock() == pytest.approx(600, abs=5)
    panel.password_changed()
    assert panel.describe()['sessions'] == 0
    assert panel.sessions.find(session.token, panel.passwords.version()) is None
