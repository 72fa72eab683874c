"""The Ceph Dashboard's rgwbench REST API, and its Object Gateway → Benchmarks tab.

The cluster tool patches the release's dashboard and loads it in the cluster's
mgrs (`cluster dashboard --serve`): Tentacle's with the tab, its frontend built
(cached); Pacific's backend only (the REST API; its package's frontend, Angular
12, gets no tab). On both releases the API is tried through the dashboard's own
login (JWT) and roles: a user whose role reads rgw only, and one with the
built-in rgw-manager role. On Tentacle the same users also log in in headless
Chromium (the manager there with rgw's permissions only, see MANAGER_ROLE).
Screenshots go to RGWBENCH_SCREENSHOTS (default
.tox/screenshots)/<release>/dashboard-*.png.
"""
import http.client
import json
import secrets
import time
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from conftest import SMALL_LOAD, Cluster

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait
from helpers import snapshot as cluster_snapshot
from helpers import wait_run
from panel_client import browser, free_port, shot  # noqa: F401 (browser: a fixture)

EXPERIMENTAL = 'application/vnd.ceph.api.v0.1+json'
READER_ROLE = 'rgw-reader'
# rgw's every permission and nothing else: logged in with the built-in rgw-manager
# role (rgw, grafana and prometheus), the dashboard showed no navigation at all on
# these clusters, which have no Prometheus (see the manager's login screenshot).
MANAGER_ROLE = 'rgw-bench-manager'
BENCHMARKS_MENU = '.tc_submenuitem_rgw_benchmarks'
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
def dashboard(runs: Cluster) -> Iterator[Dashboard]:
    proc = runs.tool('dashboard', '--serve', '--port', str(free_port()),
                     timeout=BUILD_TIMEOUT_S)
    found = Dashboard(runs, proc.stdout.strip().splitlines()[-1])
    runs.ceph('dashboard', 'ac-role-create', READER_ROLE)
    runs.ceph('dashboard', 'ac-role-add-scope-perms', READER_ROLE, 'rgw', 'read')
    found.add_user('bench-reader', READER_ROLE)
    runs.ceph('dashboard', 'ac-role-create', MANAGER_ROLE)
    runs.ceph('dashboard', 'ac-role-add-scope-perms', MANAGER_ROLE, 'rgw',
              'read', 'create', 'update', 'delete')
    found.add_user('bench-manager', MANAGER_ROLE)
    found.add_user('rgw-manager', 'rgw-manager')
    yield found
    for user in ('bench-reader', 'bench-manager', 'rgw-manager'):
        runs.ceph('dashboard', 'ac-user-delete', user, check=False)
    for role in (READER_ROLE, MANAGER_ROLE):
        runs.ceph('dashboard', 'ac-role-delete', role, check=False)


def quick_overrides(duration_s: int) -> Dict[str, str]:
    """A `quick` run's overrides: a small load, `duration_s` a workload."""
    return {'duration': str(duration_s), 'warmup': '1', 'rate': str(SMALL_LOAD['rate']),
            'objects': str(SMALL_LOAD['objects'])}


def start_quick_run(dashboard: Dashboard, token: str, duration_s: int) -> str:
    """A `quick` run started through the REST API, confirmed; its id."""
    status, body = dashboard.api('POST', '/api/rgwbench/run', {
        'profile': 'quick', 'confirm': True, 'overrides': quick_overrides(duration_s)},
        token=token)
    assert status == 201, (status, body)
    return str(body['run_id'])


def chrome_log(driver: WebDriver) -> List[Dict[str, Any]]:
    """The page's console (Chrome's driver keeps it, see the browser fixture)."""
    entries: List[Dict[str, Any]] = getattr(driver, 'get_log')('browser')
    return entries


def snapshot(c: Cluster) -> Dict[str, Any]:
    """What a run puts back (helpers.snapshot), but the dashboard's own settings,
    which it rewrites itself as users log in (its MULTICLUSTER_CONFIG)."""
    found = cluster_snapshot(c)
    found['config'] = [e for e in found['config']
                       if not str(e.get('name', '')).startswith('mgr/dashboard/')]
    return found


def login(driver: WebDriver, dashboard: Dashboard, user: str) -> None:
    """Log `user` in on a browser of no session, and wait for the pages it may see."""
    driver.get(dashboard.url + '/#/login')
    # Another user's session (a token and permissions in local storage) would send the
    # login page on to that user's landing page while the new login is under way.
    driver.delete_all_cookies()
    driver.execute_script('window.localStorage.clear(); window.sessionStorage.clear();')
    driver.refresh()
    WebDriverWait(driver, 120).until(lambda d: d.find_elements(By.ID, 'username'))
    driver.find_element(By.ID, 'username').send_keys(user)
    driver.find_element(By.ID, 'password').send_keys(dashboard.passwords[user])
    driver.find_element(By.CSS_SELECTOR, 'input[type="submit"]').click()
    # Logged in once the navigation holds the entries of the user's permissions (each
    # user here reads rgw), not as soon as the address leaves the login page: a tab
    # opened then was replaced by the landing page (seen in the manager's screenshot).
    try:
        WebDriverWait(driver, 120).until(lambda d: '/login' not in d.current_url
                                         and d.find_elements(By.CSS_SELECTOR, BENCHMARKS_MENU))
    except TimeoutException:
        shot(driver, dashboard.cluster.release, 'dashboard-login-' + user, full=True)
        console = [e.get('message', '') for e in chrome_log(driver)
                   if e.get('level') in ('SEVERE', 'WARNING')
                   and '/api/prometheus/' not in e.get('message', '')]
        raise AssertionError('%s logged in, no Benchmarks entry: %s shows %r; console: %s' % (
            user, driver.current_url, driver.find_element(By.TAG_NAME, 'body').text[:1000],
            console[-15:]))


def open_tab(driver: WebDriver, dashboard: Dashboard) -> None:
    driver.get(dashboard.url + '/#/rgwbench')
    try:
        WebDriverWait(driver, 120).until(
            lambda d: '#/rgwbench' in d.current_url
            and d.find_elements(By.CSS_SELECTOR, 'cd-rgw-benchmark-list cd-table'))
    except TimeoutException:
        raise AssertionError('no Benchmarks tab: %s shows %r' % (
            driver.current_url, driver.find_element(By.TAG_NAME, 'body').text[:2000]))


def by_testid(driver: WebDriver, testid: str) -> Any:
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="%s"]' % testid)


def test_a_reader_reads_runs_through_the_api_and_may_not_start_or_abort_one(
        dashboard: Dashboard) -> None:
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


def test_the_rgw_manager_role_plans_starts_follows_reads_and_aborts_runs_through_the_api(
        dashboard: Dashboard) -> None:
    """What the tab does, through the REST API alone (Pacific has no tab)."""
    before = snapshot(dashboard.cluster)
    manager = dashboard.token('rgw-manager')
    overrides = quick_overrides(duration_s=8)
    status, plan = dashboard.api('POST', '/api/rgwbench/profile/quick/plan',
                                 {'overrides': overrides}, token=manager)
    assert status == 200 and 'quick' in plan['text'], (status, plan)
    assert snapshot(dashboard.cluster) == before, 'a plan changed the cluster'
    status, body = dashboard.api('POST', '/api/rgwbench/run',
                                 {'profile': 'quick', 'overrides': overrides}, token=manager)
    assert status == 400 and 'yes-i-really-mean-it' in body['detail'], (status, body)
    assert dashboard.cluster.ceph_json('rgwbench', 'status')['active_run'] is None
    status, body = dashboard.api('POST', '/api/rgwbench/run', {
        'profile': 'quick', 'overrides': overrides, 'confirm': True}, token=manager)
    assert status == 201, (status, body)
    run_id = body['run_id']
    messages = set()
    deadline = time.monotonic() + 900
    while True:
        status, live = dashboard.api('GET', '/api/rgwbench/live', token=manager)
        assert status == 200, (status, live)
        if live is None or live['run_id'] != run_id:
            break
        messages.add(str(live.get('progress')))
        assert time.monotonic() < deadline, messages
        time.sleep(0.5)
    assert any('workload' in m for m in messages), messages
    status, shown = dashboard.api('GET', '/api/rgwbench/run/' + run_id, token=manager)
    assert status == 200 and shown['state'] == 'complete', (status, shown)
    assert shown['comparison'], shown
    status, listed = dashboard.api('GET', '/api/rgwbench/run', token=manager)
    assert run_id in [r['run_id'] for r in listed], listed
    dashboard.cluster.wait_rgw_registered()
    assert snapshot(dashboard.cluster) == before

    aborted_id = start_quick_run(dashboard, manager, duration_s=60)
    status, body = dashboard.api('POST', '/api/rgwbench/abort', {}, token=manager)
    assert status == 200 and body['run_id'] == aborted_id, (status, body)
    record = wait_run(dashboard.cluster, aborted_id)
    assert record['state'] == 'aborted', record
    dashboard.cluster.wait_rgw_registered()
    assert snapshot(dashboard.cluster) == before


@pytest.mark.releases('tentacle')
def test_a_reader_sees_the_runs_but_no_start_button(
        dashboard: Dashboard, browser: WebDriver) -> None:  # noqa: F811
    release = dashboard.cluster.release
    login(browser, dashboard, 'bench-reader')
    open_tab(browser, dashboard)
    menu = browser.find_elements(By.CSS_SELECTOR, BENCHMARKS_MENU)
    assert menu, 'no Benchmarks entry under Object Gateway'
    assert browser.find_elements(By.CSS_SELECTOR, '[data-testid="start-run"]') == []
    shot(browser, release, 'dashboard-01-reader', full=True)


@pytest.mark.releases('tentacle')
def test_a_manager_plans_starts_follows_and_reads_a_quick_run(
        dashboard: Dashboard, browser: WebDriver) -> None:  # noqa: F811
    release = dashboard.cluster.release
    before = snapshot(dashboard.cluster)
    login(browser, dashboard, 'bench-manager')
    open_tab(browser, dashboard)
    shot(browser, release, 'dashboard-02-runs')
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '[data-testid="start-run"]'))
    by_testid(browser, 'start-run').click()
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '[data-testid="profile"] option[value="quick"]'))
    Select(by_testid(browser, 'profile')).select_by_value('quick')
    overrides = {'duration': 8, 'warmup': 1, 'rate': SMALL_LOAD['rate'],
                 'objects': SMALL_LOAD['objects']}
    for field, value in overrides.items():
        browser.find_element(By.ID, field).send_keys(str(value))
    start = by_testid(browser, 'start')
    assert not start.is_enabled(), 'a run can start before its plan is shown'
    by_testid(browser, 'show-plan').click()
    WebDriverWait(browser, 120).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '[data-testid="plan"]') or d.find_elements(
        By.CSS_SELECTOR, '[data-testid="form-error"]'))
    assert browser.find_elements(By.CSS_SELECTOR, '[data-testid="form-error"]') == []
    plan = by_testid(browser, 'plan').text
    assert 'quick' in plan and 'variant' in plan, plan
    assert not start.is_enabled(), 'a run can start before it is confirmed'
    by_testid(browser, 'confirm').click()
    shot(browser, release, 'dashboard-03-plan', full=True)
    assert start.is_enabled()
    start.click()
    WebDriverWait(browser, 120).until(lambda d: '/rgwbench/run/' in d.current_url
                                      or d.find_elements(By.CSS_SELECTOR,
                                                         '[data-testid="form-error"]'))
    assert '/rgwbench/run/' in browser.current_url, by_testid(browser, 'form-error').text
    run_id = browser.current_url.rsplit('/', 1)[1]
    active = dashboard.cluster.ceph_json('rgwbench', 'status')['active_run']
    assert active is not None and active['run_id'] == run_id, active
    # The live view follows the run until it ends; then the page shows its tables.
    seen = set()
    deadline = time.monotonic() + 900
    shot_taken = False
    while True:
        state = browser.find_elements(By.CSS_SELECTOR, '[data-testid="run-state"]')
        if state and state[0].text != 'running':
            break
        figures = browser.find_elements(By.CSS_SELECTOR, '[data-testid="live-figures"]')
        if figures and ' ops/s' in figures[0].text and not shot_taken:
            shot(browser, release, 'dashboard-04-live')
            shot_taken = True
        message = browser.find_elements(By.CSS_SELECTOR, '[data-testid="live-message"]')
        if message:
            seen.add(message[0].text)
        assert time.monotonic() < deadline, seen
        time.sleep(0.5)
    assert shot_taken, 'the live view never showed throughput: %s' % sorted(seen)
    assert any('workload' in m for m in seen), seen
    record = wait_run(dashboard.cluster, run_id)
    assert record['state'] == 'complete', record
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '[data-testid="comparison"] tbody tr'))
    assert by_testid(browser, 'run-state').text == 'complete'
    rows = browser.find_elements(By.CSS_SELECTOR, '[data-testid="comparison"] tbody tr')
    assert len(rows) == len(record['comparison']) > 0, [r.text for r in rows]
    assert browser.find_elements(By.CSS_SELECTOR, 'cd-area-chart'), 'no throughput chart'
    shot(browser, release, 'dashboard-05-run', full=True)
    dashboard.cluster.wait_rgw_registered()
    assert snapshot(dashboard.cluster) == before


@pytest.mark.releases('tentacle')
def test_a_manager_aborts_a_run_from_the_tab(
        dashboard: Dashboard, browser: WebDriver) -> None:  # noqa: F811
    release = dashboard.cluster.release
    before = snapshot(dashboard.cluster)
    run_id = start_quick_run(dashboard, dashboard.token('bench-manager'), duration_s=60)
    login(browser, dashboard, 'bench-manager')
    browser.get(dashboard.url + '/#/rgwbench/run/' + run_id)
    WebDriverWait(browser, 120).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '[data-testid="abort"]'))
    by_testid(browser, 'abort').click()
    by_testid(browser, 'abort-confirm').click()
    WebDriverWait(browser, 600).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="run-state"]')
        and by_testid(d, 'run-state').text not in ('running', ''))
    shot(browser, release, 'dashboard-06-aborted', full=True)
    record = wait_run(dashboard.cluster, run_id)
    assert record['state'] == 'aborted', record
    dashboard.cluster.wait_rgw_registered()
    assert snapshot(dashboard.cluster) == before
