"""The web panel in a real mgr: its rules over HTTPS, and an operator's visit in headless Chromium.

On the `two_osds` cluster (two mgrs, for the failover). Screenshots go to
RGWBENCH_SCREENSHOTS (default .tox/screenshots), one folder per release.
"""
import errno
import itertools
import json
import os
import re
import socket
import ssl
import time
from typing import Any, List

from conftest import SMALL_LOAD, active_mgr_pid, one_line, rss_bytes, stream, tls_socket

from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait
from helpers import make_pems, rgwbench_buckets, served_certificate, snapshot, wait_run
from panel_client import (HTTPS, SHOTS, Panel, browser, free_port,  # noqa: F401 (a fixture)
                          shot)


def browser_login(driver: WebDriver, panel: Panel) -> str:
    url = panel.wait_serving().rstrip('/')
    driver.get(url + '/')
    driver.find_element(By.ID, 'password').send_keys(panel.password)
    driver.find_element(By.ID, 'login-button').click()
    try:
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, 'start'))
    except TimeoutException:
        raise AssertionError('no panel after the login: %s shows %r' % (
            driver.current_url, driver.page_source[:3000]))
    return url


def start_from_panel(driver: WebDriver, profile: str, duration: int, warmup: int) -> str:
    """Pick a profile, see its plan, confirm, start; returns the run id the live view shows."""
    Select(driver.find_element(By.ID, 'profile')).select_by_value(profile)
    driver.find_element(By.CSS_SELECTOR, '#overrides summary').click()
    driver.find_element(By.ID, 'duration').send_keys(str(duration))
    driver.find_element(By.ID, 'warmup').send_keys(str(warmup))
    for field in ('rate', 'objects'):  # the form has no concurrency: the profile's
        driver.find_element(By.ID, field).send_keys(str(SMALL_LOAD[field]))
    start = driver.find_element(By.ID, 'start-run')
    assert not start.is_enabled(), 'a run can start before its plan is shown'
    driver.find_element(By.ID, 'show-plan').click()
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, 'plan').is_displayed())
    plan = driver.find_element(By.ID, 'plan').text
    assert 'profile %s' % profile in plan and 'variant' in plan, plan
    assert not start.is_enabled(), 'a run can start before it is confirmed'
    driver.find_element(By.ID, 'confirm').click()
    assert start.is_enabled()
    start.click()
    # The live view shows, or the page says why the run did not start.
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, 'live').is_displayed()
                                    or d.find_element(By.ID, 'start-error').text)
    assert driver.find_element(By.ID, 'start-error').text == ''
    return str(driver.find_element(By.ID, 'live-run').text)


def test_the_panel_is_published_and_serves_its_certificate(panel: Panel) -> None:
    url = panel.wait_serving()
    assert url.startswith('https://') and url.endswith(':%d/' % panel.port), url
    shown = panel.cluster.ceph_json('rgwbench', 'panel', 'show')
    assert shown['serving'] and shown['url'] == url and shown['password_set']
    assert shown['certificate']['source'] == 'generated'
    assert HTTPS(url).fingerprint() == shown['certificate']['fingerprint_sha256']
    assert 'PRIVATE KEY' not in panel.cluster.ceph('rgwbench', 'panel', 'show',
                                                   '-f', 'json').stdout


def test_a_port_in_use_takes_the_url_out_until_the_panel_serves_again(panel: Panel) -> None:
    c = panel.cluster
    with socket.socket(socket.AF_INET6) as taken:
        taken.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        taken.bind(('::', 0))
        taken.listen()
        c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/panel_port', str(taken.getsockname()[1]))
        try:
            deadline = time.monotonic() + 120
            while c.ceph_json('rgwbench', 'panel', 'show')['error'] is None:
                assert time.monotonic() < deadline, 'the panel did not try the port in use'
                time.sleep(1)
            shown = c.ceph_json('rgwbench', 'panel', 'show')
            assert shown['serving'] is False and shown['url'] is None
            assert 'in use' in shown['error'], shown['error']
            assert 'rgwbench' not in c.ceph_json('mgr', 'services')
        finally:
            c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/panel_port', str(panel.port))
    panel.wait_serving()


def test_the_operators_certificate_is_checked_and_served(panel: Panel, tmp_path: Any) -> None:
    c = panel.cluster
    generated = c.ceph_json('rgwbench', 'panel', 'show')['certificate']['fingerprint_sha256']
    pems = make_pems(str(tmp_path))
    proc = c.ceph_input(pems['a_cert'] + pems['b_key'], 'rgwbench', 'panel', 'certificate',
                        'set')
    assert proc.returncode == errno.EINVAL and 'does not match' in one_line(proc.stderr)
    assert HTTPS(panel.wait_serving()).fingerprint() == generated
    proc = c.ceph_input(pems['a_cert'] + pems['a_key'], 'rgwbench', 'panel', 'certificate',
                        'set')
    assert proc.returncode == 0, proc.stderr
    try:
        shown = c.ceph_json('rgwbench', 'panel', 'show')['certificate']
        assert shown['source'] == 'operator' and shown['subject'] == 'commonName=rgwbench-a'
        ca_file = os.path.join(str(tmp_path), 'a.crt')  # the certificate is its own CA
        # A handshake that verifies against the operator's certificate, name included.
        assert served_certificate(panel.wait_serving().rstrip('/'), ca_file) == \
            shown['fingerprint_sha256']
    finally:
        assert c.ceph('rgwbench', 'panel', 'certificate', 'rm').stdout.strip() == \
            'panel certificate removed'
    assert HTTPS(panel.wait_serving()).fingerprint() == generated


def test_nothing_is_served_without_a_session(panel: Panel) -> None:
    client = HTTPS(panel.wait_serving())
    for method, path in (('GET', '/'), ('GET', '/api/status'), ('GET', '/api/runs'),
                         ('GET', '/static/panel.js'), ('GET', '/runs/x.json'),
                         ('POST', '/api/runs'), ('POST', '/api/abort')):
        status, body, _ = client.request(method, path, form={'profile': 'quick'}
                                         if method == 'POST' else None)
        assert status == 401, (method, path, status, body[:200])
        assert 'run-link' not in body and 'csrf-token' not in body
    assert panel.cluster.ceph_json('rgwbench', 'status')['active_run'] is None


def test_a_wrong_password_makes_its_source_wait_and_no_server_thread_sleeps(
        panel: Panel) -> None:
    client = HTTPS(panel.wait_serving())
    statuses = []
    # Each wrong password makes its source wait longer (1, 2, 4, 8 s): a try before that is
    # refused at once, unchecked. Trying back to back, one lands in a wait.
    for _ in range(5):
        status, took = client.login('not-the-password')
        statuses.append(status)
        if status == 429:
            assert took < 5.0, took  # answered at once, not after a sleep
            break
    assert statuses[0] == 401 and statuses[-1] == 429, statuses
    status, page, _ = client.request('GET', '/login')
    assert client.request('GET', '/api/status')[0] == 401
    token = re.search(r'name="login_token" value="([^"]+)"', page)
    assert token
    status, page, _ = client.request('POST', '/login', form={
        'password': panel.password, 'login_token': token.group(1), 'next': '/'})
    wait = re.search(r'wait (\d+) s', page)
    if status == 429:  # even the right password waits its time
        assert wait, page[:300]
        time.sleep(int(wait.group(1)))
        status, _ = client.login(panel.password)
    assert status == 303
    assert client.request('GET', '/api/status')[0] == 200


def test_a_post_without_the_csrf_token_is_refused(panel: Panel) -> None:
    client = HTTPS(panel.wait_serving())
    assert client.login(panel.password)[0] == 303
    csrf = client.csrf()
    for headers in ({}, {'X-CSRF-Token': 'x' + csrf}):
        status, body, _ = client.request('POST', '/api/runs', form={'profile': 'quick'},
                                         headers=headers)
        assert status == 403 and 'CSRF' in body, (status, body)
    assert panel.cluster.ceph_json('rgwbench', 'status')['active_run'] is None
    # The right token is taken (and a bad override is refused before anything runs).
    status, body, _ = client.request('POST', '/api/runs', form={
        'profile': 'quick', 'duration': '-5', 'confirm': 'yes'}, headers={'X-CSRF-Token': csrf})
    assert status == 400 and 'duration' in body, (status, body)
    assert panel.cluster.ceph_json('rgwbench', 'status')['active_run'] is None
    status, _, _ = client.request('POST', '/logout', form={'csrf_token': csrf})
    assert status == 303 and client.request('GET', '/api/status')[0] == 401


def test_an_operator_runs_quick_from_the_panel_and_reads_its_charts(
        panel: Panel, browser: WebDriver) -> None:  # noqa: F811 (the fixture imported)
    release = panel.cluster.release
    before = snapshot(panel.cluster)
    browser.get(panel.wait_serving())
    shot(browser, release, '01-login')
    browser_login(browser, panel)
    shot(browser, release, '02-runs')
    rm_shot = os.path.join(SHOTS, release, '03-live.png')
    if os.path.exists(rm_shot):
        os.remove(rm_shot)
    run_id = start_from_panel(browser, 'quick', duration=8, warmup=1)
    seen: List[str] = []
    figures = re.compile(r'[1-9][0-9.]* ops/s')
    deadline = time.monotonic() + 900
    # The live view follows the run without a reload, until the run ends (then the
    # page reloads itself).
    for turn in itertools.count():
        try:
            message = browser.find_element(By.ID, 'live-message').text
            throughput = browser.find_element(By.ID, 'live-throughput').text
        except WebDriverException:  # the page is reloading
            message = throughput = ''
        if message and message not in seen:
            seen.append(message)
        if figures.search(throughput) and \
                not os.path.exists(os.path.join(SHOTS, release, '03-live.png')):
            shot(browser, release, '03-live')
        if 'ended' in message or turn % 8 == 7 and panel.cluster.ceph_json(
                'rgwbench', 'status')['active_run'] is None:
            break
        assert time.monotonic() < deadline, seen
        time.sleep(0.5)
    assert any('workload' in m for m in seen), seen
    assert os.path.exists(os.path.join(SHOTS, release, '03-live.png')), \
        'the live view never showed throughput'
    record = wait_run(panel.cluster, run_id)
    assert record['state'] == 'complete', record
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, 'tr[data-run-id="%s"] .state-complete' % run_id))
    browser.find_element(By.CSS_SELECTOR, 'tr[data-run-id="%s"] a.run-link' % run_id).click()
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.ID, 'comparison'))
    assert browser.find_element(By.ID, 'run-state').text == 'complete'
    rows = browser.find_elements(By.CSS_SELECTOR, '#comparison tbody tr')
    assert len(rows) == 4, [r.text for r in rows]  # 2 workloads x 2 variants
    assert 'threads-256' in browser.find_element(By.ID, 'comparison').text
    charts = browser.find_elements(By.CSS_SELECTOR, '#bar-charts figure')
    assert [c.get_attribute('data-metric') for c in charts] == [
        'throughput_pct', 'latency_p50_pct', 'latency_p99_pct', 'rgw_cpu_pct', 'rgw_rss_pct']
    for chart in charts:
        bars = chart.find_elements(By.CSS_SELECTOR, 'rect.bar')
        assert {b.get_attribute('data-series') for b in bars} == {'threads-256'}
        assert {b.get_attribute('data-group') for b in bars} == {
            'put-4KiB@%d/s' % SMALL_LOAD['rate'], 'get-4KiB@%d/s' % SMALL_LOAD['rate']}
    lines = browser.find_elements(By.CSS_SELECTOR, '#per-second polyline.line')
    assert len(lines) == 4, 'one line per variant and workload'
    assert 'rgw_thread_pool_size' in browser.find_element(By.ID, 'settings-table').text
    shot(browser, release, '04-run', full=True)
    shot(browser, release, '05-run-phone', full=True, width=390)
    # The downloads are the stored result.
    client = HTTPS(panel.wait_serving())
    assert client.login(panel.password)[0] == 303
    status, body, _ = client.request('GET', '/runs/%s.json' % run_id)
    assert status == 200 and json.loads(body) == json.loads(panel.cluster.ceph(
        'rgwbench', 'results', 'export', run_id).stdout)
    status, body, _ = client.request('GET', '/runs/%s.csv' % run_id)
    assert status == 200 and body == panel.cluster.ceph(
        'rgwbench', 'results', 'show', run_id, '--table', 'csv').stdout.rstrip('\n') + '\n'
    panel.cluster.wait_rgw_registered()
    assert snapshot(panel.cluster) == before and rgwbench_buckets(panel.cluster) == []


def text_of(browser: WebDriver, element_id: str) -> str:  # noqa: F811
    """An element's text, read again when the page replaced the element meanwhile
    (Chrome says so as a stale element, or as a node that "does not belong to the
    document")."""
    for _ in range(9):
        try:
            return str(browser.find_element(By.ID, element_id).text)
        except WebDriverException:
            time.sleep(0.2)
    return str(browser.find_element(By.ID, element_id).text)


def test_an_operator_aborts_a_run_from_the_panel(
        panel: Panel, browser: WebDriver) -> None:  # noqa: F811
    before = snapshot(panel.cluster)
    browser_login(browser, panel)
    # Long enough to abort while it runs, short enough for the capacity check to let it
    # start on this small cluster.
    run_id = start_from_panel(browser, 'quick', duration=60, warmup=1)
    # The live view redraws its message: one read may find the element just replaced.
    WebDriverWait(browser, 600).until(lambda d: 'workload' in text_of(d, 'live-message'))
    browser.find_element(By.ID, 'abort').click()
    confirm = browser.find_element(By.ID, 'abort-confirm')
    assert confirm.is_displayed()
    confirm.click()
    record = wait_run(panel.cluster, run_id, timeout=600)
    assert record['state'] == 'aborted', record
    assert text_of(browser, 'abort-error') == ''
    # The live view sees the end by itself and the page then lists the run aborted.
    WebDriverWait(browser, 120).until(
        lambda d: d.find_elements(By.CSS_SELECTOR,
                                  'tr[data-run-id="%s"] .state-aborted' % run_id),
        message='the page never listed %s as aborted; live view says %r' % (
            run_id, text_of(browser, 'live-message')))   # read before the wait: it redraws
    assert not browser.find_element(By.ID, 'live').is_displayed()
    shot(browser, panel.cluster.release, '06-aborted')
    panel.cluster.wait_rgw_registered()
    assert snapshot(panel.cluster) == before and rgwbench_buckets(panel.cluster) == []


STREAM = 96 << 20
GROWTH = 8 << 20


def test_a_body_of_negative_length_is_refused_at_once_and_never_read(panel: Panel) -> None:
    url = panel.wait_serving()
    pid = active_mgr_pid(panel.cluster)
    before = rss_bytes(pid)
    sock = tls_socket(url)
    try:
        sock.sendall(b'POST /login HTTP/1.1\r\nHost: panel\r\nContent-Length: -1\r\n'
                     b'Content-Type: application/x-www-form-urlencoded\r\n\r\n' + b'x' * 4096)
        try:
            head = sock.recv(4096)  # a server that reads the body answers only at its end
        except socket.timeout:
            raise AssertionError('no answer within 10 s to Content-Length: -1')
        assert head.startswith(b'HTTP/1.1 400'), head[:200]
        stream(sock, STREAM)
    finally:
        sock.close()
    grown = rss_bytes(pid) - before
    assert grown < GROWTH, 'the mgr grew by %d MiB' % (grown >> 20)


def test_a_request_line_without_end_is_cut_short(panel: Panel) -> None:
    url = panel.wait_serving()
    pid = active_mgr_pid(panel.cluster)
    before = rss_bytes(pid)
    sock = tls_socket(url)
    try:
        sock.sendall(b'GET /')
        sent = stream(sock, STREAM)
    finally:
        sock.close()
    grown = rss_bytes(pid) - before
    assert sent < STREAM and grown < GROWTH, (sent >> 20, grown >> 20)


def files_with(root: str, text: str) -> List[str]:
    """Files in the /tmp of `root` that hold `text` (the host's /tmp is shared by clusters)."""
    folder, found = os.path.join(root, 'tmp'), []
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        try:
            if os.path.isfile(path) and os.path.getsize(path) < (1 << 20):
                with open(path, 'rb') as f:
                    if text.encode() in f.read().replace(b'\n', b''):
                        found.append(path)
        except OSError:
            continue
    return found


def open_key_files(pid: int) -> List[str]:
    """What of a PEM the process holds open: a memfd of rgwbench's, or a .pem file."""
    found = []
    for fd in os.listdir('/proc/%d/fd' % pid):
        try:
            target = os.readlink('/proc/%d/fd/%s' % (pid, fd))
        except OSError:
            continue
        if 'memfd:rgwbench' in target or target.endswith('.pem'):
            found.append(target)
    return found


def test_the_panels_key_is_in_no_file_and_none_is_left_when_its_mgr_stops(
        panel: Panel) -> None:
    c = panel.cluster
    url = panel.wait_serving()
    assert url.startswith('https://')
    pid = active_mgr_pid(c)
    root = os.readlink('/proc/%d/root' % pid)  # a chroot's own /tmp for some releases
    conn = HTTPS(url).connection()
    conn.connect()
    assert conn.sock is not None
    der = conn.sock.getpeercert(binary_form=True)
    conn.close()
    assert der
    served = ''.join(ssl.DER_cert_to_PEM_cert(der).strip().splitlines()[1:-1])
    # The key was loaded from an in-memory file, closed once the server had it.
    assert open_key_files(pid) == []
    assert files_with(root, served) == [] and files_with('/', served) == []
    # The mgr stops being active (its modules, the panel among them, are shut down),
    # and another takes over: no file holds the old panel's certificate or key.
    old = c.fail_over_mgr()
    deadline = time.monotonic() + 300
    while c.ceph_json('mgr', 'stat')['active_name'] in ('', old):
        assert time.monotonic() < deadline, 'no other mgr took over'
        time.sleep(1)
    panel.wait_serving()
    assert files_with(root, served) == [] and files_with('/', served) == []
    assert open_key_files(active_mgr_pid(c)) == []


def test_the_panel_comes_back_on_the_new_active_mgr(panel: Panel) -> None:
    client = HTTPS(panel.wait_serving())
    assert client.login(panel.password)[0] == 303
    old = panel.cluster.fail_over_mgr()
    deadline = time.monotonic() + 300
    while panel.cluster.ceph_json('mgr', 'stat')['active_name'] in ('', old):
        assert time.monotonic() < deadline, 'no other mgr took over'
        time.sleep(1)
    panel.wait_serving()
    # Sessions were the old mgr's: log in again.
    assert client.request('GET', '/api/status')[0] == 401
    assert client.login(panel.password)[0] == 303
    assert client.request('GET', '/api/status')[0] == 200
