"""The panel's app over a fake backend, shared by the panel's tests: a stored run, the
fake backend, the Harness that logs in and sends requests, and readers of the answers."""
import html
import json
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from fixtures import Clock, MemoryStore

from rgwbench.web.brake import AuthBrake
from rgwbench.errors import InvalidInput, NotFound
from rgwbench.panel.app import LOGIN_COOKIE, SESSION_COOKIE, PanelApp, Request, Response
from rgwbench.panel.auth import PasswordStore, Sessions
from rgwbench.results.model import Run, RunSummary
from rgwbench.serial import load

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

    def runs(self) -> List[RunSummary]:
        self._call('runs')
        return [load(RunSummary, s) for s in SUMMARIES]

    def run(self, run_id: str) -> Run:
        self._call('run', run_id)
        if run_id not in self.records:
            raise NotFound('no result %r (see `ceph rgwbench results ls`)' % run_id)
        return load(Run, self.records[run_id])

    def active_run(self) -> Optional[Dict[str, Any]]:
        self._call('active_run')
        return self.active

    def profiles(self) -> List[Dict[str, Any]]:
        self._call('profiles')
        return PROFILES

    def plan(self, profile: str, overrides: Dict[str, str]) -> Tuple[Dict[str, Any], str]:
        self._call('plan', profile, overrides)
        if profile != 'quick':
            raise InvalidInput('no profile %r' % profile)
        return PLAN, 'run quick: 2 variants, about 2 min'

    def start_run(self, profile: str, overrides: Dict[str, str], *, confirmed: bool) -> str:
        assert confirmed
        self._call('start_run', profile, overrides)
        return '20261123-090000-abcdef'

    def abort_run(self) -> str:
        self._call('abort_run')
        return RUN_ID


class Login(NamedTuple):
    token: str
    csrf: str


class Harness:
    """A PanelApp over a fake backend, a password, a fake clock and a brake."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.store = MemoryStore()
        self.passwords = PasswordStore(self.store, iterations=1000)
        self.passwords.set(PASSWORD)
        self.sessions = Sessions(lambda: TIMEOUT_S, clock=self.clock)
        self.brake = AuthBrake(lock_after=4, lock_s=300.0, clock=self.clock)
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
