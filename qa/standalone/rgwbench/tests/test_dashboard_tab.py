"""The Ceph Dashboard's Object Gateway → Benchmarks tab in a real Tentacle mgr.

The cluster tool patches Tentacle's dashboard, builds its frontend (cached) and
loads it in the cluster's mgrs (`cluster dashboard --serve`). A dashboard user
whose role reads rgw only uses its REST API and logs in in headless Chromium.
Screenshots go to RGWBENCH_SCREENSHOTS (default .tox/screenshots)/<release>/
dashboard-*.png. (A manager's start and abort through the pages are not here
yet: their buttons never showed to the rgw-manager role in our runs.)

Tentacle only: the tab is Tentacle's frontend (Angular 18); Pacific's differs.
"""
import http.client
import json
import secrets
import urllib.parse
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest
from conftest import Cluster
from test_panel import browser, free_port, shot  # noqa: F401 (browser: a fixture)
from test_runs import runs, snapshot  # noqa: F401 (runs: a fixture)

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

EXPERIMENTAL = 'application/vnd.ceph.api.v0.1+json'
READER_ROLE = 'rgw-reader'
# A cold build of the frontend on a busy 2-core machine.
BUILD_TIMEOUT_S = 3600


class Dashboard:
    """The dashboard the cluster serves, and its two test users' passwords."""

    def __init__(self, cluster: Cluster, url: str) -> None:
        self.cluster = cluster
        self.url = url.rstrip('/')
        self.passwords: Dict[str, str] = {}

    def add_user(self, name: str, role: str) -> None:
        password = 'Rgwb-%s-1a' % secrets.token_hex(8)
        # The password policy is not under test: a random one may hold "abc" or "123".
        proc = self.cluster.ceph_input(password, 'dashboard', 'ac-user-create', name, role,
                                       '--force-password')
        assert proc.returncode == 0, proc.stderr
        self.passwords[name] = password

    def api(self, method: str, path: str, body: Optional[Any] = None,
            token: Optional[str] = None) -> Tuple[int, Any]:
        parsed = urllib.parse.urlparse(self.url)
        conn = http.client.HTTPConnection(str(parsed.hostname), parsed.port, timeout=60)
        headers = {'Accept': EXPERIMENTAL if path.startswith('/api/rgwbench')
                   else 'application/vnd.ceph.api.v1.0+json',
                   'Content-Type': 'application/json'}
        if token:
            headers['Authorization'] = 'Bearer ' + token
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers=headers)
        answer = conn.getresponse()
        text = answer.read().decode('utf-8', 'replace')
        conn.close()
        try:
            return answer.status, json.loads(text) if text else None
        except ValueError:
            return answer.status, text

    def token(self, user: str) -> str:
        status, body = self.api('POST', '/api/auth',
                                {'username': user, 'password': self.passwords[user]})
        assert status == 201, (status, body)
        return str(body['token'])


@pytest.fixture(scope='module')
def dashboard(runs: Cluster) -> Iterator[Dashboard]:  # noqa: F811 (the fixture imported)
    if runs.release != 'tentacle':
        pytest.skip('the tab is built for Tentacle\'s frontend only')
    proc = runs.tool('dashboard', '--serve', '--port', str(free_port()),
                     timeout=BUILD_TIMEOUT_S)
    found = Dashboard(runs, proc.stdout.strip().splitlines()[-1])
    runs.ceph('dashboard', 'ac-role-create', READER_ROLE)
    runs.ceph('dashboard', 'ac-role-add-scope-perms', READER_ROLE, 'rgw', 'read')
    found.add_user('bench-reader', READER_ROLE)
    yield found
    for user in ('bench-reader',):
        runs.ceph('dashboard', 'ac-user-delete', user, check=False)
    runs.ceph('dashboard', 'ac-role-delete', READER_ROLE, check=False)


def login(driver: WebDriver, dashboard: Dashboard, user: str) -> None:
    driver.get(dashboard.url + '/#/login')
    WebDriverWait(driver, 120).until(lambda d: d.find_elements(By.ID, 'username'))
    driver.find_element(By.ID, 'username').send_keys(user)
    driver.find_element(By.ID, 'password').send_keys(dashboard.passwords[user])
    driver.find_element(By.CSS_SELECTOR, 'input[type="submit"]').click()
    WebDriverWait(driver, 120).until(lambda d: '/login' not in d.current_url)


def open_tab(driver: WebDriver, dashboard: Dashboard) -> None:
    driver.get(dashboard.url + '/#/rgwbench')
    try:
        WebDriverWait(driver, 120).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, 'cd-rgw-benchmark-list cd-table'))
    except TimeoutException:
        raise AssertionError('no Benchmarks tab: %s shows %r' % (
            driver.current_url, driver.find_element(By.TAG_NAME, 'body').text[:2000]))


def by_testid(driver: WebDriver, testid: str) -> Any:
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="%s"]' % testid)


def test_a_reader_sees_the_runs_but_cannot_start_one(
        dashboard: Dashboard, browser: WebDriver) -> None:  # noqa: F811
    release = dashboard.cluster.release
    reader = dashboard.token('bench-reader')
    status, listed = dashboard.api('GET', '/api/rgwbench/run', token=reader)
    assert status == 200 and isinstance(listed, list), (status, listed)
    # rgwbench's own refusal, through the real mgr.remote, keeps its errno (ENOENT).
    status, body = dashboard.api('GET', '/api/rgwbench/run/20000101-000000-000000',
                                 token=reader)
    assert status == 404 and body['code'] == 'ENOENT', (status, body)
    before = snapshot(dashboard.cluster)
    status, body = dashboard.api('POST', '/api/rgwbench/run',
                                 {'profile': 'quick', 'confirm': True}, token=reader)
    assert status == 403, (status, body)
    status, body = dashboard.api('POST', '/api/rgwbench/abort', {}, token=reader)
    assert status == 403, (status, body)
    assert dashboard.cluster.ceph_json('rgwbench', 'status')['active_run'] is None
    assert snapshot(dashboard.cluster) == before

    login(browser, dashboard, 'bench-reader')
    open_tab(browser, dashboard)
    menu = browser.find_elements(By.CSS_SELECTOR, '.tc_submenuitem_rgw_benchmarks')
    assert menu, 'no Benchmarks entry under Object Gateway'
    assert browser.find_elements(By.CSS_SELECTOR, '[data-testid="start-run"]') == []
    shot(browser, release, 'dashboard-01-reader', full=True)
