"""The panel reached as a user would: over HTTPS with its cookies, and in a headless browser."""
import hashlib
import http.client
import os
import re
import socket
import ssl
import time
import urllib.parse
from typing import TYPE_CHECKING, Dict, Iterator, Optional, Tuple

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

if TYPE_CHECKING:  # conftest imports this module, for its panel fixture
    from conftest import Cluster


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


SHOTS = os.environ.get('RGWBENCH_SCREENSHOTS', os.path.join(ROOT, '.tox', 'screenshots'))


CHROMIUM = os.environ.get('RGWBENCH_CHROMIUM', '/usr/bin/chromium')


CHROMEDRIVER = os.environ.get('RGWBENCH_CHROMEDRIVER', '/usr/bin/chromedriver')


#: the flags a headless Chromium needs on a closed network, as root
CHROMIUM_FLAGS = ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
                  '--ignore-certificate-errors', '--window-size=1280,1000')


class Panel:
    """The panel of the cluster's active mgr, reached as a client would (and its password)."""

    def __init__(self, cluster: 'Cluster', port: int, password: str) -> None:
        self.cluster = cluster
        self.port = port
        self.password = password

    def url(self) -> str:
        return str(self.cluster.ceph_json('mgr', 'services').get('rgwbench') or '')

    def wait_serving(self, timeout: float = 120) -> str:
        """Until `mgr services` shows the panel on its port and it answers.

        Tests start with it: on a busy machine Pacific's mgr can fail over between
        two tests, and the panel is then away until the other mgr serves it.
        """
        deadline = time.monotonic() + timeout
        while True:
            url = self.url()
            if url.endswith(':%d/' % self.port):
                try:
                    if HTTPS(url).request('GET', '/login')[0] == 200:
                        return url
                except OSError:
                    pass
            if time.monotonic() >= deadline:
                shown = self.cluster.ceph('rgwbench', 'panel', 'show', check=False)
                raise AssertionError('the panel is not serving on port %d after %.0f s: %r\n'
                                     'panel show: %s%s\n%s' % (
                                         self.port, timeout, url, shown.stdout, shown.stderr,
                                         self.cluster.mgr_logs_tail(40)))
            time.sleep(1)


class HTTPS:
    """A client of the panel with its own cookies; it trusts the certificate by fingerprint."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = str(parts.hostname), int(parts.port or 443)
        self.cookies: Dict[str, str] = {}

    def connection(self) -> http.client.HTTPSConnection:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # checked by fingerprint in the tests
        return http.client.HTTPSConnection(self.host, self.port, context=context, timeout=60)

    def fingerprint(self) -> str:
        conn = self.connection()
        conn.connect()
        assert conn.sock is not None
        der = conn.sock.getpeercert(binary_form=True)
        conn.close()
        assert der is not None
        digest = hashlib.sha256(der).hexdigest().upper()
        return ':'.join(digest[i:i + 2] for i in range(0, len(digest), 2))

    def request(self, method: str, path: str, form: Optional[Dict[str, str]] = None,
                headers: Optional[Dict[str, str]] = None) -> Tuple[int, str, float]:
        """(status, body, seconds taken); cookies the answer sets are kept."""
        conn = self.connection()
        sent = dict(headers or {})
        if self.cookies:
            sent['Cookie'] = '; '.join('%s=%s' % kv for kv in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            sent['Content-Type'] = 'application/x-www-form-urlencoded'
        began = time.monotonic()
        conn.request(method, path, body=body, headers=sent)
        answer = conn.getresponse()
        text = answer.read().decode('utf-8', 'replace')
        took = time.monotonic() - began
        for header in answer.msg.get_all('Set-Cookie') or []:
            name, _, rest = header.partition('=')
            value = rest.split(';')[0]
            if 'Max-Age=0' in header:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        conn.close()
        return answer.status, text, took

    def login(self, password: str) -> Tuple[int, float]:
        status, page, _ = self.request('GET', '/login')
        token = re.search(r'name="login_token" value="([^"]+)"', page)
        assert status == 200 and token, page[:500]
        status, _, took = self.request('POST', '/login', form={
            'password': password, 'login_token': token.group(1), 'next': '/'})
        return status, took

    def csrf(self) -> str:
        status, page, _ = self.request('GET', '/')
        found = re.search(r'name="csrf-token" content="([^"]+)"', page)
        assert status == 200 and found, page[:500]
        return found.group(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


@pytest.fixture
def browser(runs: 'Cluster') -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    # The page's console, for what a failed check says (driver.get_log('browser')).
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: WebDriver, release: str, name: str, full: bool = False,
         width: int = 1280) -> None:
    folder = os.path.join(SHOTS, release)
    os.makedirs(folder, exist_ok=True)
    if full:
        height = int(driver.execute_script('return document.body.scrollHeight'))
        driver.set_window_size(width, height + 120)
    driver.save_screenshot(os.path.join(folder, name + '.png'))
    if full:
        driver.set_window_size(1280, 1000)
