"""Hostile input to a real mgr: every way in refuses it, the mgr stays bounded, the cluster
stays as it was.

Profile documents (malformed, oversized, self-expanding), every command with
wrong types and values out of range, the web panel's endpoints with bad
methods, lengths, cookies, CSRF tokens and encodings, and the agents' endpoint
with wrong tokens and bodies. Each is refused with one line (an errno for the
CLI, a 4xx for HTTP) and never a traceback; the active mgr's RSS grows by less
than GROWTH_MIB over each test, and `config dump`, `orch ls --export` and the
module's config-key entries (but results and loads) are equal before and after.
"""
import contextlib
import errno
import http.client
import json
import os
import random
import re
import socket
import ssl
import subprocess
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest
from conftest import Cluster, active_mgr_pid, rss_bytes, stream, tls_socket
from helpers import agent_folders, buckets, wait_load
from panel_client import HTTPS, Panel, free_port

# How much the active mgr may grow over one test. It holds what it parsed only while it
# parses it, and never reads more of a body than its limit; the margin is the allocator's
# (its arenas keep what hundreds of parsed documents took: 32 MiB was seen once; a body
# read whole would be hundreds).
GROWTH_MIB = 48
# Where a result or a load goes: these may change, nothing else of the module's.
RESULT_KEYS = ('mgr/rgwbench/result/', 'mgr/rgwbench/result_index/', 'mgr/rgwbench/load/',
               'mgr/rgwbench/load_chunk/')
TRACEBACK = re.compile(r'Traceback|File "[^"]+", line \d+')


def cluster_state(c: Cluster) -> Dict[str, Any]:
    keys = json.loads(c.ceph('config-key', 'dump', 'mgr/rgwbench/').stdout)
    return {'config': c.ceph_json('config', 'dump'),
            'specs': c.ceph('orch', 'ls', '--export').stdout,
            'keys': {k: v for k, v in keys.items() if not k.startswith(RESULT_KEYS)}}


@contextlib.contextmanager
def unchanged(c: Cluster) -> Iterator[None]:
    """The block leaves the cluster as it was and the active mgr alive and bounded."""
    pid = active_mgr_pid(c)
    before, rss = cluster_state(c), rss_bytes(pid)
    yield
    assert active_mgr_pid(c) == pid, 'the active mgr changed (it died?)'
    grown = (rss_bytes(pid) - rss) >> 20
    assert grown < GROWTH_MIB, 'the active mgr grew by %d MiB' % grown
    after = cluster_state(c)
    for what in before:
        assert after[what] == before[what], what


class Misses:
    """Checks that go on after one fails: a run names every input that was let through."""

    def __init__(self) -> None:
        self.found: List[str] = []

    def check(self, ok: bool, what: Any) -> bool:
        if not ok:
            text = repr(what)
            self.found.append(text if len(text) < 600 else text[:300] + ' ... ' + text[-300:])
        return ok

    def refused_by_module(self, proc: 'subprocess.CompletedProcess[str]', code: int,
                          what: Any, start: str = '') -> None:
        """A command the module refused: its errno and one line, no traceback."""
        if self.check(proc.returncode == code, (what, proc.returncode, proc.stderr[-300:])) \
                and self.check(not TRACEBACK.search(proc.stderr), (what, proc.stderr[-300:])):
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            self.check(len(lines) == 1 and lines[0].startswith(start),
                       (what, proc.stderr[-300:]))

    def refused(self, proc: 'subprocess.CompletedProcess[str]', what: Any) -> None:
        """Refused by the module or the `ceph` tool itself (its usage text), no traceback."""
        self.check(proc.returncode != 0, (what, proc.stdout[-300:]))
        self.check(not TRACEBACK.search(proc.stderr + proc.stdout), (what, proc.stderr[-300:]))

    def __enter__(self) -> 'Misses':
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is None:
            assert not self.found, '\n'.join(self.found)


@pytest.fixture(scope='module')
def hostile(cluster: Cluster) -> Iterator[Panel]:
    """The panel served with a password, and S3 credentials stored (for the load)."""
    s3 = cluster.s3()
    stored = cluster.ceph_input(json.dumps({'access_key': s3['access_key'],
                                            'secret_key': s3['secret_key']}),
                                'rgwbench', 'credentials', 'set')
    assert stored.returncode == 0, stored.stderr
    port = free_port()
    cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/panel_port', str(port))
    password = cluster.ceph('rgwbench', 'panel', 'password', 'generate').stdout.strip()
    panel = Panel(cluster, port, password)
    # The shard's first test: its mgr may still be starting every module on a busy
    # machine (CI9 saw the panel listed, and not answering, after 120 s).
    panel.wait_serving(timeout=300)
    yield panel
    cluster.ceph('rgwbench', 'panel', 'password', 'rm')
    cluster.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/panel_port')
    cluster.ceph('rgwbench', 'credentials', 'rm')


# -- profile documents ----------------------------------------------------------------------
GOOD: Dict[str, Any] = {'name': 'hostile', 'baseline': 'as-is',
                        'variants': [{'name': 'as-is', 'settings': {}}],
                        'workloads': [{'name': 'put', 'op': 'put', 'size': '4KiB', 'duration': 5}]}
ODD_VALUES: List[Any] = [None, True, -1, 0, 10 ** 40, -1e308, 1.5, '', 'x' * 5000, '\u202e\u0000',
                         [], [1, 2], {}, {'a': {'b': {'c': []}}}]


def laughs(levels: int = 9, width: int = 9) -> bytes:
    """YAML whose aliases expand to width ** levels values (a billion laughs)."""
    lines = ['a0: &a0 ["lol"]']
    for n in range(1, levels + 1):
        lines.append('a%d: &a%d [%s]' % (n, n, ', '.join(['*a%d' % (n - 1)] * width)))
    return ('\n'.join(lines) + '\nname: *a%d\n' % levels).encode()


def hostile_profiles(seed: int = 12, count: int = 24) -> List[Tuple[str, bytes]]:
    """Named documents, each of which must be refused: hand-made, then seeded mutations."""
    docs = [
        ('empty', b' \n'),
        ('not a mapping', b'[1, 2, 3]'),
        ('unclosed', b'{"name": "x", "variants": ['),
        ('tabs and colons', b'name:\t: :\n\t- ]['),
        ('binary', bytes(range(256)) * 16),
        ('not utf-8', b'name: \xff\xfe\xfd\nvariants: []\n'),
        ('nul bytes', b'name: "a\x00b"\n'),
        ('python tag', b'name: !!python/object/apply:os.system ["true"]\n'),
        ('billion laughs in the name', laughs()),
        ('billion laughs in a workload', laughs().replace(b'name: *a9', json.dumps(
            dict(GOOD, workloads='PLACEHOLDER')).encode()).replace(b'"PLACEHOLDER"', b'*a9')),
        ('self-referencing', b'name: &n [*n]\n'),
        ('self-referencing workloads', json.dumps(GOOD).encode().replace(
            b'"workloads": [', b'"workloads": &w [*w, ')),
        ('deep json', b'{"name": ' + b'[' * 100000 + b']' * 100000 + b'}'),
        ('deep yaml', b'name: ' + b'[' * 50000 + b']' * 50000 + b'\n'),
        ('huge number', json.dumps(dict(GOOD, workloads=[dict(
            GOOD['workloads'][0], concurrency=10 ** 400)])).encode()),
        ('oversized', json.dumps(dict(GOOD, description='x' * (4 << 20))).encode()),
        ('many workloads', json.dumps(dict(GOOD, workloads=[dict(
            GOOD['workloads'][0], name='w%d' % n) for n in range(20000)])).encode()),
    ]
    rng = random.Random(seed)
    paths = [('name',), ('baseline',), ('variants',), ('workloads',), ('variants', 0, 'name'),
             ('variants', 0, 'settings'), ('workloads', 0, 'op'), ('workloads', 0, 'size'),
             ('workloads', 0, 'duration'), ('workloads', 0, 'concurrency'),
             ('workloads', 0, 'warmup'), ('workloads', 0, 'processes'),
             ('workloads', 0, 'buckets'), ('unknown_field',)]
    while len(docs) < count + 17:
        doc = json.loads(json.dumps(GOOD))
        path = rng.choice(paths)
        value = rng.choice(ODD_VALUES)
        target = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        if doc == GOOD or (path[-1] in ('warmup', 'processes', 'buckets') and
                           value in (1, True)):
            continue
        text = json.dumps(doc).encode()
        if rng.random() < 0.3:  # and cut short
            text = text[:rng.randrange(1, len(text))]
        docs.append(('%s=%s' % ('.'.join(map(str, path)), json.dumps(value)[:20]), text))
    return docs


def test_hostile_profile_documents_are_refused_with_one_line(
        cluster: Cluster, hostile: Panel) -> None:
    accepted = []
    with unchanged(cluster), Misses() as misses:
        for what, doc in hostile_profiles():
            proc = cluster.ceph_input(doc, 'rgwbench', 'profile', 'set')
            if proc.returncode == 0:  # a mutation that happened to be valid
                accepted.append(what)
                cluster.ceph('rgwbench', 'profile', 'rm', 'hostile')
                continue
            misses.refused_by_module(proc, errno.EINVAL, what, 'Error EINVAL: ')
        for doc in (b'', b'\x00' * 1000, laughs(), b'access_key: &a [*a]\nsecret_key: x\n',
                    b'x' * (4 << 20)):
            misses.refused_by_module(cluster.ceph_input(doc, 'rgwbench', 'credentials', 'set'),
                                     errno.EINVAL, ('credentials', doc[:40]))
        for command in (('rgwbench', 'certificate', 'set'),
                        ('rgwbench', 'panel', 'certificate', 'set')):
            for doc in (b'', b'-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n',
                        laughs(), b'\xff' * 100000):
                misses.refused_by_module(cluster.ceph_input(doc, *command), errno.EINVAL,
                                         (command, doc[:40]))
        misses.refused_by_module(cluster.ceph_input(b'x' * (4 << 20), 'rgwbench', 'panel',
                                                    'password', 'set'), errno.EINVAL, 'password')
    assert len(accepted) <= 2, accepted


# -- commands ---------------------------------------------------------------------------
# Values of the right type the module must refuse (EINVAL unless said), one line each.
MODULE_REFUSES: List[Tuple[List[str], int]] = [
    (['load', '--concurrency', str(10 ** 6)], errno.EINVAL),
    (['load', '--concurrency', '0'], errno.EINVAL),
    (['load', '--concurrency', '-5'], errno.EINVAL),
    (['load', '--size', '150GiB'], errno.EINVAL),
    (['load', '--size', '-4KiB'], errno.EINVAL),
    (['load', '--size', '4QiB'], errno.EINVAL),
    (['load', '--size', 'x' * 5000], errno.EINVAL),
    (['load', '--duration', '-30'], errno.EINVAL),
    (['load', '--duration', str(10 ** 12)], errno.EINVAL),
    (['load', '--warmup', '-1'], errno.EINVAL),
    (['load', '--processes', '100000'], errno.EINVAL),
    (['load', '--buckets', '-1'], errno.EINVAL),
    (['load', '--op', 'frobnicate'], errno.EINVAL),
    (['load', '--op', 'put\nget'], errno.EINVAL),
    (['load', '--endpoint', 'file:///etc/passwd'], errno.EINVAL),
    (['load', '--endpoint', 'http://[::1'], errno.EINVAL),
    (['load', '--placement', 'no-such-host,,'], errno.EINVAL),
    (['load', 'show', '../../../etc/passwd'], errno.ENOENT),
    (['load', 'show', 'x' * 10000], errno.ENOENT),
    (['plan', '--profile', 'quick', '--concurrency', '0'], errno.EINVAL),
    (['plan', '--profile', 'quick', '--duration', '-1'], errno.EINVAL),
    (['plan', '--profile', 'quick', '--repeats', str(10 ** 9)], errno.EINVAL),
    (['plan', '--profile', 'quick', '--sizes', '4KiB,,150GiB'], errno.EINVAL),
    (['plan', '--profile', 'quick', '--warmup', '100000'], errno.EINVAL),
    (['plan', '--profile', 'no-such-profile'], errno.ENOENT),
    (['plan', '--profile', '../profile/quick'], errno.ENOENT),
    (['run', '--profile', 'quick', '--duration', '-1', '--yes-i-really-mean-it'],
     errno.EINVAL),
    (['run', '--profile', 'no-such-profile', '--yes-i-really-mean-it'], errno.ENOENT),
    (['run', '--profile', 'quick'], errno.EINVAL),
    (['check', '--profile', 'x' * 3000], errno.ENOENT),
    (['profile', 'show', 'evil\\..\\x'], errno.ENOENT),
    (['profile', 'rm', 'quick'], errno.EINVAL),
    (['profile', 'rm', '../credentials/s3'], errno.ENOENT),
    (['results', 'show', 'no-such-run'], errno.ENOENT),
    (['results', 'show', 'x', '--table', 'html'], errno.EINVAL),
    (['results', 'show', 'x', '--layout', '../../'], errno.EINVAL),
    (['results', 'compare', '../a', '../b'], errno.ENOENT),
    (['results', 'export', '*'], errno.ENOENT),
    (['results', 'rm', 'result_index/'], errno.ENOENT),
    (['settings', 'plan', 'tls@rgw'], errno.EINVAL),
    (['settings', 'plan', 'no-such-setting=on'], errno.EINVAL),
    (['settings', 'plan', 'tls@rgw=maybe'], errno.EINVAL),
    (['settings', 'plan', 'msgr2-secure=on', 'msgr2-secure=off'], errno.EINVAL),
    (['settings', 'plan', 'config=client.rgw/rgw_thread_pool_size:' + '9' * 400],
     errno.EINVAL),
    (['settings', 'plan', 'config=../../x:1'], errno.EINVAL),
    (['settings', 'apply', 'msgr2-secure=sometimes', '--yes-i-really-mean-it'],
     errno.EINVAL),
    (['settings', 'apply', 'msgr2-secure=on'], errno.EINVAL),
    (['settings', 'revert'], errno.ENOENT),
    (['status', '--format', 'xml'], errno.EINVAL),
    (['abort'], errno.ENOENT),
]
# Words of the wrong type: the `ceph` tool refuses them before the module sees them.
WRONG_TYPES: List[List[str]] = [
    ['load', '--concurrency', 'many'],
    ['load', '--duration', '1e3'],
    ['load', '--buckets', 'ten'],
    ['load', '--processes', '2.5'],
    ['plan', '--profile', 'quick', '--repeats', 'twice'],
    ['run', '--profile', 'quick', '--duration', '3.5', '--yes-i-really-mean-it'],
    ['settings', 'apply', 'msgr2-secure=on', '--force', 'yes'],
    ['profile', 'show'],
    ['profile', 'show', '\u202eevil'],
    ['results', 'compare', 'a'],
    ['no-such-command'],
]


def test_every_command_refuses_wrong_types_and_values_out_of_range(
        cluster: Cluster, hostile: Panel) -> None:
    with unchanged(cluster), Misses() as misses:
        for args, code in MODULE_REFUSES:
            proc = cluster.ceph('rgwbench', *args, check=False)
            misses.refused_by_module(proc, code, args, 'Error %s: ' % errno.errorcode[code])
        for args in WRONG_TYPES:
            misses.refused(cluster.ceph('rgwbench', *args, check=False), args)
        status = cluster.ceph_json('rgwbench', 'status')
        misses.check(status['active_load'] is None and status['active_run'] is None, status)


# -- the web panel --------------------------------------------------------------------------
NO_ANSWER = b'(no answer in time)'


def raw(url: str, request: bytes, wait_s: float = 15, body: bytes = b'') -> bytes:
    """One raw request over TLS; the head of the answer (empty: closed without one twice).

    Closed once is not enough to tell, as in `answered`: Tentacle's CI saw a POST of 16
    bytes closed on unanswered once while the machine's load was 28."""
    answer = b''
    for _ in range(2):
        answer = raw_once(url, request, wait_s, body)
        if answer:
            break
    return answer


def raw_once(url: str, request: bytes, wait_s: float, body: bytes) -> bytes:
    """One raw request over TLS; the head of the answer (empty: closed without one).

    A `body` is sent only if no answer came within 3 s of the head: a server that refuses
    the body answers at once, and a body it never reads would make its close a reset,
    which may discard its answer before the client has read it. A server that closes
    a connection at once (over its limit of connections from one source) may do so
    during the TLS handshake: that too is a close without an answer."""
    try:
        sock = tls_socket(url)
    except (ConnectionResetError, ssl.SSLEOFError):
        return b''
    try:
        sock.settimeout(3 if body else wait_s)
        try:
            sock.sendall(request)
            try:
                return sock.recv(65536)
            except socket.timeout:
                if not body:
                    raise
            sock.settimeout(wait_s)
            sock.sendall(body)
            return sock.recv(65536)
        except socket.timeout:
            return NO_ANSWER
        except OSError:
            return b''
    finally:
        sock.close()


CLOSED = (http.client.RemoteDisconnected, ssl.SSLError, ConnectionError)


def answered(send: Callable[[], Tuple[int, str, float]]) -> Optional[Tuple[int, str, float]]:
    """The answer to a request, or None when the server closed without one twice in a row.

    Once is not enough to tell: a server on a machine this busy may drop a connection
    it could not read in time (Tentacle's CI saw a CSRF token of 86 bytes closed on once).
    """
    for attempt in range(2):
        try:
            return send()
        except CLOSED:
            if attempt:
                return None
    return None


def status_of(head: bytes) -> int:
    found = re.match(rb'HTTP/1\.[01] (\d{3}) ', head)
    return int(found.group(1)) if found else 0


def logged_in(panel: Panel) -> Tuple[HTTPS, str]:
    client = HTTPS(panel.wait_serving())
    status, _ = client.login(panel.password)
    assert status == 303, status
    return client, client.csrf()


def test_the_panel_refuses_bad_methods_lengths_cookies_csrf_and_encodings(
        cluster: Cluster, hostile: Panel) -> None:
    url = hostile.wait_serving()
    client, csrf = logged_in(hostile)
    session = '; '.join('%s=%s' % kv for kv in client.cookies.items())
    with unchanged(cluster), Misses() as misses:
        # Methods: only GET, HEAD and (with a session and its CSRF token) POST.
        for method in ('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'FROB'):
            for path in ('/login', '/', '/api/runs', '/api/abort', '/static/panel.js'):
                answer = raw(url, ('%s %s HTTP/1.1\r\nHost: p\r\nCookie: %s\r\n'
                                   'Content-Length: 0\r\n\r\n' % (method, path, session)
                                   ).encode())
                # A method the server has no word for may just close the connection.
                misses.check(400 <= status_of(answer) < 500 or (
                    answer == b'' and method in ('CONNECT', 'FROB')), (method, path, answer[:200]))
                misses.check(not TRACEBACK.search(answer.decode('latin-1')), answer[:2000])
        # Lengths: refused before a byte of the body is sent (' 5' is 5: its body is read).
        for length in ('-1', 'abc', '1e3', '0x10', ' 5', str(10 ** 30), str(1 << 40),
                       '5, 7'):
            answer = raw(url, ('POST /api/runs HTTP/1.1\r\nHost: p\r\nCookie: %s\r\n'
                               'X-CSRF-Token: %s\r\nContent-Length: %s\r\n\r\n'
                               % (session, csrf, length)).encode(), body=b'x' * 5)
            # 408: a machine this busy may not read the body in the server's time.
            misses.check(status_of(answer) in (400, 408, 411, 413), (length, answer[:200]))
        # A body that stops coming: answered 408 once the server's read times out (10 s),
        # not 500.
        stalled = raw(url, ('POST /api/runs HTTP/1.1\r\nHost: p\r\nCookie: %s\r\nX-CSRF-Token:'
                            ' %s\r\nContent-Length: 10\r\n\r\nabcd' % (session, csrf)).encode(),
                      wait_s=90)
        misses.check(status_of(stalled) == 408, stalled[:200])
        two = raw(url, ('POST /api/runs HTTP/1.1\r\nHost: p\r\nCookie: %s\r\nX-CSRF-Token: '
                        '%s\r\nContent-Length: 3\r\nContent-Length: 99\r\n\r\nabc'
                        % (session, csrf)).encode())
        misses.check(status_of(two) == 0 or 400 <= status_of(two) < 500, two[:200])
        chunked = raw(url, ('POST /api/runs HTTP/1.1\r\nHost: p\r\nCookie: %s\r\nX-CSRF-Token: '
                            '%s\r\nTransfer-Encoding: chunked\r\n\r\n' % (session, csrf)
                            ).encode(), body=b'ffffffff\r\n' + b'x' * 4096)
        misses.check(status_of(chunked) in (400, 411, 413, 501), chunked[:200])
        sock = tls_socket(url)
        try:  # a huge announced body, then streamed: the connection is cut, nothing kept
            sock.sendall(('POST /api/runs HTTP/1.1\r\nHost: p\r\nCookie: %s\r\nX-CSRF-Token: '
                          '%s\r\nContent-Length: %d\r\n\r\n' % (session, csrf, 1 << 30)
                          ).encode())
            misses.check(stream(sock, 64 << 20) < 64 << 20, 'a 1 GiB body was read')
        finally:
            sock.close()
        # Cookies: forged, huge, odd; no session comes of them.
        for cookie in ('rgwbench_session=' + 'A' * 43, 'rgwbench_session=' + 'x' * 60000,
                       'rgwbench_session=%00%ff; rgwbench_session=' + 'b' * 10,
                       ';;;==;=;' * 1000, 'rgwbench_session="\\"\\\\"', '\u00e9=\u00e9'):
            probe = HTTPS(url)
            try:
                found = answered(lambda: probe.request('GET', '/api/status',
                                                       headers={'Cookie': cookie}))
            except UnicodeEncodeError:
                continue  # the client cannot send it; nor can a browser
            if found is None:
                # A header of 60 KiB may be closed on unanswered (Tentacle's server does).
                misses.check(len(cookie) > 8192, (cookie[:40], 'closed without an answer'))
                continue
            status, body, _ = found
            misses.check(status in (400, 401, 413, 431), (cookie[:40], status))
            misses.check(not TRACEBACK.search(body), body[:2000])
        # CSRF tokens: missing, wrong, huge, of another encoding.
        for token in ('', 'x' + csrf, csrf[:-1], csrf * 1000, csrf.encode().hex(),
                      urllib.parse.quote(csrf + '\u00e9')):
            found = answered(lambda: client.request('POST', '/api/abort', headers={
                'X-CSRF-Token': token} if token else {}))
            if found is None:
                # A header of 40 KiB may be closed on unanswered (Tentacle's server does).
                misses.check(len(token) > 8192, (token[:40], 'closed without an answer'))
                continue
            status, body, _ = found
            misses.check(status == 403 and 'CSRF' in body, (token[:40], status, body[:200]))
        # Encodings: bodies and paths that do not decode, and paths that climb.
        for path in ('/static/../module.py', '/static/..%2f..%2fmodule.py', '/%ff%fe',
                     '/runs/..%2f..%2f', '/runs/%00.json', '/' + 'a' * 60000, '/static/%c0%ae'):
            found = answered(lambda: client.request('GET', path))
            if found is None:
                # A request line of 60 KiB may be closed on unanswered, even while it
                # is still being sent (Tentacle's server does).
                misses.check(len(path) > 8192, (path[:60], 'closed without an answer'))
                continue
            status, body, _ = found
            misses.check(400 <= status < 500, (path[:60], status))
            misses.check(not TRACEBACK.search(body) and 'import ' not in body, body[:500])
        for content_type, data in (('application/json', b'\xff\xfe{"profile": 1}'),
                                   ('application/json', b'[' * 100000),
                                   ('application/json', b'{"profile": {"a": 1}}'),
                                   ('application/x-www-form-urlencoded', b'%ff%fe=%00&&&=='),
                                   ('multipart/form-data; boundary=x', b'--x\r\n\r\n'),
                                   ('text/plain; charset=utf-7', b'+ADw-script+AD4-')):
            answer = raw(url, ('POST /api/runs HTTP/1.1\r\nHost: p\r\nCookie: %s\r\n'
                               'X-CSRF-Token: %s\r\nContent-Type: %s\r\nContent-Length: %d'
                               '\r\n\r\n' % (session, csrf, content_type, len(data))).encode()
                         + data)
            misses.check(400 <= status_of(answer) < 500, (content_type, data[:20], answer[:300]))
            misses.check(not TRACEBACK.search(answer.decode('latin-1')), answer[:2000])
        assert cluster.ceph_json('rgwbench', 'status')['active_run'] is None
    # The operator's session still works.
    assert client.request('GET', '/api/status')[0] == 200


# -- the agents' endpoint ---------------------------------------------------------------
def agent_channel(cluster: Cluster, folders: Sequence[str]) -> Tuple[str, str]:
    """The agents' endpoint of the load in progress, from its local agent's config."""
    deadline = time.monotonic() + 60
    while True:
        for folder in agent_folders(cluster):
            if folder in folders:
                continue
            try:
                with open(os.path.join(folder, 'agent.json')) as f:
                    config = json.load(f)
                return str(config['server']), str(config['fingerprint'])
            except (OSError, ValueError):
                pass
        assert time.monotonic() < deadline, 'no local agent config'
        time.sleep(0.5)


def agent_call(server: str, headers: Dict[str, str], request_line: str,
               body: bytes = b'') -> int:
    head = ''.join('%s: %s\r\n' % kv for kv in headers.items())
    answer = raw(server, ('%s HTTP/1.1\r\nHost: a\r\n%s\r\n' % (request_line, head)).encode()
                 + body)
    assert not TRACEBACK.search(answer.decode('latin-1')), answer[:2000]
    return status_of(answer)


def test_the_agents_endpoint_refuses_wrong_tokens_and_bodies_and_its_agent_goes_on(
        cluster: Cluster, hostile: Panel) -> None:
    before, folders = buckets(cluster), agent_folders(cluster)
    with unchanged(cluster):
        # The endpoint is there while the load is: 120 s, for eleven tries that may each
        # wait 15 s for an answer twice (on a loaded CI machine the tries of a 15 s load
        # outlasted it, and those of a 45 s one did on Tentacle). At 20 PUTs a second
        # the load costs the machine little while it waits.
        started = time.monotonic()
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--rate', '20', '--duration', '120',
                               '--warmup', '1', '--placement', 'mgr').stdout.strip()
        server, _ = agent_channel(cluster, folders)
        agent = socket.gethostname()
        tries: List[Tuple[Dict[str, str], str, bytes]] = [
            ({}, 'GET /agent/v1/job', b''),
            ({'Authorization': 'Bearer wrong', 'X-Agent-Id': agent}, 'GET /agent/v1/job', b''),
            ({'Authorization': 'Basic d3Jvbmc=', 'X-Agent-Id': agent}, 'GET /agent/v1/start',
             b''),
            ({'Authorization': 'Bearer ' + 'x' * 60000}, 'GET /agent/v1/alive', b''),
            ({'Authorization': 'Bearer \u00e9'.encode('utf-8').decode('latin-1'),
              'X-Agent-Id': '../' * 100}, 'POST /agent/v1/enrol', b''),
            ({'Authorization': 'Bearer wrong', 'X-Agent-Id': agent, 'Content-Length': '-1'},
             'POST /agent/v1/result', b'{}'),
            ({'Authorization': 'Bearer wrong', 'X-Agent-Id': agent,
              'Content-Length': str(1 << 40)}, 'POST /agent/v1/result', b'{"ok": true'),
            ({'Authorization': 'Bearer wrong', 'X-Agent-Id': agent, 'Content-Length': '5'},
             'POST /agent/v1/progress', b'\xff\xfe\x00[['),
            ({'Authorization': 'Bearer wrong', 'X-Agent-Id': agent,
              'Transfer-Encoding': 'chunked'}, 'POST /agent/v1/ready', b'0\r\n\r\n'),
            ({}, 'DELETE /agent/v1/job', b''),
            ({}, 'GET /../../etc/passwd', b''),
        ]
        for headers, line, body in tries:
            try:
                status = agent_call(server, headers, line, body)
            except ConnectionRefusedError:
                raise AssertionError('%s: the endpoint is gone %.0f s after the load began: %s'
                                     % (line, time.monotonic() - started, cluster.ceph_json(
                                         'rgwbench', 'load', 'show', load_id)))
            # 0: closed at once (a method the endpoint has no handler for answers 501)
            assert status in (0, 400, 401, 404, 411, 413, 429, 431, 501), (line, status)
        # The right agent is never locked out by the wrong tokens of its source.
        record = wait_load(cluster, load_id, timeout=300)
        assert record['state'] == 'complete', record.get('error')
        assert record['result']['ops'] > 0
        assert buckets(cluster) == before


# -- a read-only `ceph` user ----------------------------------------------------------------
def test_a_read_only_ceph_user_sees_but_starts_nothing_and_reads_no_secret(
        cluster: Cluster, hostile: Panel) -> None:
    keyring = os.path.join(cluster.dir, 'rgwbench-ro.keyring')
    cluster.ceph('auth', 'get-or-create', 'client.rgwbench-ro', 'mon', 'allow r', 'mgr',
                 'allow r', '-o', keyring)
    argv = json.loads(cluster.tool('info').stdout)['tools']['ceph'] + [
        '--name', 'client.rgwbench-ro', '--keyring', keyring]
    secret = cluster.s3()['secret_key']
    # A secret an operator gives through `config` (an option it widened the study to):
    # stored in a profile, shown to nobody.
    config_secret = 'Ro-user-never-sees-%d' % random.randrange(10 ** 12)
    cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/config_allow',
                 'client.rgw/rgw_keystone_admin_password')
    stored = cluster.ceph_input(json.dumps({
        'name': 'with-a-secret', 'workloads': [{'name': 'w', 'op': 'put', 'duration': 5}],
        'variants': [{'name': 'as-is', 'settings': {}}, {'name': 'keystone', 'settings': {
            'config': {'client.rgw/rgw_keystone_admin_password': config_secret}}}]}),
        'rgwbench', 'profile', 'set')
    assert stored.returncode == 0, stored.stderr

    def as_reader(*args: str) -> 'subprocess.CompletedProcess[str]':
        return subprocess.run(argv + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
    try:
        with unchanged(cluster):
            for args in (['status'], ['credentials', 'show'], ['profile', 'ls'],
                         ['results', 'ls'], ['load', 'ls'], ['panel', 'show'],
                         ['settings', 'show'], ['certificate', 'show'],
                         ['plan', '--profile', 'quick'], ['profile', 'show', 'with-a-secret'],
                         ['plan', '--profile', 'with-a-secret'],
                         ['settings', 'plan', 'config=client.rgw/rgw_keystone_admin_password:'
                          + config_secret]):
                for fmt in ('json', 'plain'):
                    proc = as_reader('rgwbench', *args, '-f', fmt)
                    # (settings show: ENOENT, nothing applied)
                    assert proc.returncode in (0, errno.ENOENT), (args, proc.stderr)
                    assert secret not in proc.stdout + proc.stderr, args
                    assert config_secret not in proc.stdout + proc.stderr, args
            for args in (['load', '--duration', '5'], ['run', '--profile', 'quick',
                                                       '--yes-i-really-mean-it'],
                         ['abort'], ['credentials', 'rm'], ['panel', 'password', 'generate'],
                         ['profile', 'rm', 'quick'], ['results', 'rm', 'x'],
                         ['settings', 'revert']):
                proc = as_reader('rgwbench', *args)
                assert proc.returncode == errno.EACCES, (args, proc.returncode, proc.stderr)
            for args in (['config-key', 'get', 'mgr/rgwbench/credentials/s3'],
                         ['config-key', 'get', 'mgr/rgwbench/panel/password'],
                         ['config-key', 'dump', 'mgr/rgwbench/']):
                proc = as_reader(*args)
                assert proc.returncode == errno.EACCES, (args, proc.returncode)
                assert secret not in proc.stdout + proc.stderr
    finally:
        cluster.ceph('auth', 'rm', 'client.rgwbench-ro')
        os.unlink(keyring)
        cluster.ceph('rgwbench', 'profile', 'rm', 'with-a-secret')
        cluster.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/config_allow')
