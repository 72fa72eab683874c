"""Real local clusters for the integration tests, through the `cluster` entry point.

RGWBENCH_RELEASES (default "pacific,tentacle") lists the releases to test;
each gets one cluster for the whole session, stopped and removed at the end
(RGWBENCH_KEEP_CLUSTERS=1 keeps them for a look afterwards).
"""
import contextlib
import errno
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(os.path.dirname(HERE), 'cluster')
# The cluster tool's package (localcluster), for tests that read it directly.
sys.path.insert(0, os.path.dirname(HERE))
from localcluster.ceph_client import CephSession, split_format  # noqa: E402
from localcluster.cluster import rgw_not_registered  # noqa: E402
from localcluster.keeper import unexpected_crashes  # noqa: E402
from cputime import Ledger  # noqa: E402
from panel_client import Panel, free_port  # noqa: E402

RELEASES = [r for r in os.environ.get('RGWBENCH_RELEASES', 'pacific,tentacle').split(',') if r]
# Words the `ceph` tool acts on itself (files, identities, daemons it talks to
# directly): a command with one of them runs the tool.
CEPH_TOOL_WORDS = frozenset(('-o', '--output-file', '-i', '--in-file', '-n', '--name', '--id',
                             '-k', '--keyring', '-c', '--conf', '-s', '-w', '--watch',
                             '--connect-timeout', 'tell', 'daemon'))


def needs_the_tool(args: Sequence[str]) -> bool:
    """Whether `ceph ARGS` acts on something only the `ceph` tool reaches (a file,
    another identity, a daemon directly) rather than sending a command over the
    test's connection."""
    return bool(CEPH_TOOL_WORDS.intersection(args))


# The overrides of a test run that only needs a load to happen: an open loop at a
# rate a starved machine keeps (a closed loop takes every CPU a dozen clusters
# sharing two cores leave), over a working set of 100 objects (the default
# prefill, 1000 objects a GET workload, cost a `quick` run more than its loads).
SMALL_LOAD: Dict[str, int] = {'concurrency': 4, 'rate': 40, 'objects': 100}
SMALL_LOAD_ARGS = [word for key, value in SMALL_LOAD.items() for word in ('--' + key, str(value))]


class Cluster:
    """One local cluster, driven as a user drives it."""

    def __init__(self, release: str, directory: str) -> None:
        self.release = release
        self.dir = directory
        self._argv: Dict[str, List[str]] = {}  # what `cluster info` says runs the tools
        # One session per thread: a command that blocks (a settings apply that restarts
        # OSDs) must not hold up another thread's (the mgr failover meant to cut it).
        self._sessions: Dict[int, CephSession] = {}
        self._sessions_lock = threading.Lock()

    def tool(self, *args: str, check: bool = True, timeout: float = 900,
             env: Optional[Dict[str, str]] = None) -> 'subprocess.CompletedProcess[str]':
        """`env`: added to the tool's environment (the daemons it starts inherit it)."""
        command, rest = args[0], list(args[1:])
        if command in ('stop', 'destroy'):
            self.close_session()  # a client of the cluster is one of its processes
        return run([CLUSTER, command, '--dir', self.dir] + rest, check, timeout, env)

    def close_session(self) -> None:
        with self._sessions_lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()

    def ceph(self, *args: str, check: bool = True) -> 'subprocess.CompletedProcess[str]':
        """`ceph ARGS` as the `ceph` tool answers it.

        A command expected to succeed goes over the test's connection to the
        cluster (see `_session_call`), with the tool's exit status, output and
        `Error E...:` line: a `ceph` tool run costs about 0.4 CPU seconds, and
        the tests' 2000 of them were a seventh of CI's CPU. A command that may
        fail runs the tool itself: its refusal is what an operator sees.
        """
        if check and not needs_the_tool(args):
            proc = self.ceph_reply(*args)
            if proc.returncode != 0:
                unclean = ('not every PG is active+clean' in proc.stderr and
                           '\n' + self.unclean_pgs_report() or '')
                raise AssertionError('ceph %s failed (%d):\n%s\n%s%s' % (
                    ' '.join(args), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:],
                    unclean))
            return proc
        try:
            return run(self.tool_argv('ceph') + list(args), check, timeout=120)
        except subprocess.TimeoutExpired as e:
            # A mgr that does not answer: say what the mgrs last wrote.
            raise AssertionError('ceph %s: no answer in 120 s; the mgr logs end:\n%s' % (
                ' '.join(args), self.mgr_logs_tail())) from e

    def ceph_reply(self, *args: str) -> 'subprocess.CompletedProcess[str]':
        """`ceph ARGS` as the tool would answer it (exit status, output, `Error E...:`
        line), over the test's connection, whatever the answer: for the polls and reads
        a test repeats every second, not for a refusal a test shows as an operator sees
        it (see `ceph`)."""
        ret, out, outs = self._session_call(args, json_format=False)
        _, fmt = split_format(list(args))
        stdout = ('\n' if fmt and fmt.startswith('json') else '') + out
        if ret < 0:
            stderr = 'Error %s: %s\n' % (errno.errorcode.get(-ret, 'Unknown'), outs)
        else:
            stderr = outs + '\n' if outs else ''
        return subprocess.CompletedProcess(['ceph'] + list(args), abs(ret), stdout, stderr)

    def ceph_input(self, data: Union[str, bytes], *args: str,
                   timeout: float = 120) -> 'subprocess.CompletedProcess[str]':
        """`ceph ARGS -i -` with `data` on its standard input, as an operator sends a file."""
        proc = subprocess.run(self.tool_argv('ceph') + list(args) + ['-i', '-'],
                              input=data.encode('utf-8') if isinstance(data, str) else data,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode,
                                           proc.stdout.decode('utf-8', 'replace'),
                                           proc.stderr.decode('utf-8', 'replace'))

    def tool_argv(self, tool: str) -> List[str]:
        """The command line of `ceph` or `radosgw-admin` that `cluster TOOL` would run,
        or of the `ceph` session (`ceph_session`)."""
        if tool not in self._argv:
            info = json.loads(self.tool('info').stdout)
            self._argv = dict(info['tools'], ceph_session=info['ceph_session'])
        return list(self._argv[tool])

    def mgr_logs_tail(self, lines: int = 25) -> str:
        found = []
        folder = os.path.join(self.dir, 'log')
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if name.startswith('mgr.') and name.endswith('.log'):
                with open(os.path.join(folder, name), errors='replace') as f:
                    tail = f.read()[-20000:].splitlines()[-lines:]
                found.append('== %s\n%s' % (name, '\n'.join(tail)))
        return '\n'.join(found) or '(no mgr log in %s)' % folder

    def unclean_pgs_report(self) -> str:
        """What to read when PGs stay unclean: each such PG with its OSDs and when it
        last peered, each OSD's blocked ops, and what the OSD logs last said of
        heartbeats, slow ops, faults and resets."""
        parts = []
        for pg in pgs_listed(self):
            if pg.get('state') != 'active+clean':
                parts.append('pg %s %s up %s acting %s last_peered %s reported_epoch %s' % (
                    pg.get('pgid'), pg.get('state'), pg.get('up'), pg.get('acting'),
                    pg.get('last_peered'), pg.get('reported_epoch')))
        for osd in self.try_ceph_json('osd', 'ls') or []:
            try:
                blocked = run(self.tool_argv('ceph') + [
                    'daemon', 'osd.%d' % osd, 'dump_blocked_ops'], False, timeout=30)
                parts.append('osd.%d dump_blocked_ops: %s' % (
                    osd, ' '.join((blocked.stdout + blocked.stderr).split())[:1500]))
            except subprocess.TimeoutExpired:
                parts.append('osd.%d: its admin socket did not answer in 30 s' % osd)
            log = os.path.join(self.dir, 'log', 'osd.%d.log' % osd)
            if os.path.exists(log):
                with open(log, errors='replace') as f:
                    said = [line for line in f.read()[-400000:].splitlines()
                            if any(w in line for w in ('heartbeat', 'slow', 'fault ', 'laggy',
                                                       'wrongly', 'reset', 'error'))]
                parts.append('== osd.%d log, last of %d such lines:\n%s' % (
                    osd, len(said), '\n'.join(said[-15:])))
        return '\n'.join(parts)

    def ceph_json(self, *args: str) -> Any:
        """What `ceph ARGS -f json` prints, parsed; over one connection for all calls."""
        ret, out, outs = self._session_call(args)
        if ret != 0:
            raise AssertionError('ceph %s -f json failed (%d): %s' % (' '.join(args), ret, outs))
        return json.loads(out)

    def try_ceph_json(self, *args: str) -> Any:
        """As `ceph_json`, or None when the command fails (a mgr failing over, say)."""
        ret, out, _ = self._session_call(args)
        return json.loads(out) if ret == 0 else None

    def _thread_session(self) -> CephSession:
        me = threading.get_ident()
        with self._sessions_lock:
            session = self._sessions.get(me)
        if session is None:
            session = CephSession(self.tool_argv('ceph_session'))
            with self._sessions_lock:
                self._sessions[me] = session
        return session

    def _session_call(self, args: Sequence[str],
                      json_format: bool = True) -> Tuple[int, str, str]:
        session = self._thread_session()
        try:
            ret, out, outs = session.call(list(args) + (['-f', 'json'] if json_format else []),
                                          timeout=120)
        except subprocess.TimeoutExpired as e:
            self.close_session()
            raise AssertionError('ceph %s: no answer in 120 s; the mgr logs end:\n%s' % (
                ' '.join(args), self.mgr_logs_tail())) from e
        if ret == -errno.ETIMEDOUT:
            raise AssertionError('ceph %s: no answer in 120 s; the mgr logs end:\n%s' % (
                ' '.join(args), self.mgr_logs_tail()))
        return ret, out, outs

    def fail_over_mgr(self, timeout: float = 300) -> str:
        """Fail the active mgr once a standby is there to take over; the failed one's name.

        A mgr failed in an earlier test may not be a standby again yet (it starts
        again as one): failing the active mgr then only restarts it.
        """
        deadline = time.monotonic() + timeout
        while True:
            shown = self.ceph_json('mgr', 'dump')
            if shown.get('available') and shown.get('standbys'):
                break
            assert time.monotonic() < deadline, 'no standby mgr: %s' % shown.get('standbys')
            time.sleep(1)
        active = str(shown['active_name'])
        self.ceph('mgr', 'fail', active)
        return active

    def s3(self) -> Any:
        return json.loads(self.tool('s3-endpoints').stdout)

    def wait_rgw_registered(self, timeout: float = 120) -> None:
        """Until every RGW daemon the orchestrator runs is in the service map.

        A restarted radosgw answers S3 a moment before it is back in the map.
        """
        deadline = time.monotonic() + timeout
        while True:
            missing = rgw_not_registered(self.ceph_json('orch', 'ps', '--daemon_type', 'rgw'),
                                         self.ceph_json('rgwbench', 'status'))
            if missing is None:
                return
            if time.monotonic() > deadline:
                raise AssertionError(missing)
            time.sleep(1)

    def start(self, *extra: str, env: Optional[Dict[str, str]] = None,
              timeout: float = 900) -> 'subprocess.CompletedProcess[str]':
        return self.tool('start', '--release', self.release, *extra, env=env, timeout=timeout)

    def destroy(self) -> None:
        # A crash the keeper undid is kept from view unless it is Pacific's known one.
        crashes = unexpected_crashes(os.path.join(self.dir, 'out', 'keeper.out'))
        self.tool('destroy', check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
        assert not crashes, 'a mgr of %s crashed:\n%s' % (self.dir, '\n'.join(crashes))


def run(argv: List[str], check: bool, timeout: float,
        env: Optional[Dict[str, str]] = None) -> 'subprocess.CompletedProcess[str]':
    """`argv`'s answer; past `timeout`, it is killed with every process it started.

    Killing the `cluster` tool alone left the `radosgw-admin` it ran going (CI: one hung
    for half an hour), holding client.admin's admin socket: every `ceph` run after it
    said so on stderr, and five refusals were no longer one line.
    """
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, start_new_session=True,
                          env=dict(os.environ, **env) if env else None) as popen:
        try:
            stdout, stderr = popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(popen.pid, signal.SIGKILL)
            popen.communicate()
            raise
    proc = subprocess.CompletedProcess(argv, popen.returncode, stdout, stderr)
    if check and proc.returncode != 0:
        raise AssertionError('%s failed (%d):\n%s\n%s' % (
            ' '.join(argv), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc


def pytest_configure(config: Any) -> None:
    config.addinivalue_line('markers', 'releases(*names): a test of what only these '
                            'releases have (the Dashboard tab: Tentacle); not collected '
                            'for the others')
    config.addinivalue_line('markers', 'quiet: a test whose check holds only where the '
                            'machine\'s own noise is below what it measures; CI runs it '
                            'once most shards have ended (releases_in_parallel.py)')


def release_of(item: Any) -> Optional[str]:
    """The release of the cluster a test runs on, if its fixtures take one."""
    params = getattr(getattr(item, 'callspec', None), 'params', {})
    found = [v for v in params.values() if v in RELEASES]
    return found[0] if found else None


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    """Test files named on the command line narrow the run to them, and a test
    marked for some releases exists for those only.

    tox always passes the whole test folder; a file given besides it (as in
    `tox -e integration -- tests/test_x.py`) means "only this one".
    """
    files = {os.path.abspath(a.split('::')[0]) for a in config.args
             if a.split('::')[0].endswith('.py')}
    if files:
        items[:] = [i for i in items if os.path.abspath(str(i.fspath)) in files]
    kept, other_releases = [], []
    for item in items:
        marker = item.get_closest_marker('releases')
        release = release_of(item)
        if marker is not None and release is not None and release not in marker.args:
            other_releases.append(item)
        else:
            kept.append(item)
    if other_releases:
        config.hook.pytest_deselected(items=other_releases)
        items[:] = kept


# The CPU each test costs, printed at the session's end (CI is CPU-bound: cputime).
CPU_LEDGER = Ledger()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    CPU_LEDGER.test_starts(item.nodeid)
    yield
    CPU_LEDGER.test_ends(item.nodeid)


def pytest_runtest_logreport(report: Any) -> None:
    """A test failed and asked again (`--reruns`, see releases_in_parallel.py) is
    named in the file RGWBENCH_RERUNS names, for CI's last lines (junit_total.py):
    a test passed the second time still shows that it failed once, and why."""
    where = os.environ.get('RGWBENCH_RERUNS')
    if report.outcome != 'rerun' or not where:
        return
    lines = str(report.longrepr or '').strip().splitlines()
    # pytest marks the error's own lines with 'E '; the last line says where it was.
    said = [line[1:].strip() for line in lines if line.startswith('E ')] or lines[-1:]
    with open(where, 'a') as f:
        f.write('%s (%s): %s\n' % (report.nodeid, report.when, ' '.join(said)[:300]))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = CPU_LEDGER.report()
    if lines:
        terminalreporter.write_sep('=', 'CPU seconds per test (its clusters, the test process)')
        for line in lines:
            terminalreporter.write_line(line)
    CPU_LEDGER.stop()


def new_cluster_dir(tag: str) -> str:
    directory = tempfile.mkdtemp(prefix='rgwbench-%s-' % tag)
    CPU_LEDGER.add_folder(directory)
    return directory


@contextlib.contextmanager
def own_cluster(release: str, tag: str, *start_args: str,
                kind: Callable[[str, str], Cluster] = Cluster,
                env: Optional[Dict[str, str]] = None) -> Iterator[Any]:
    """A cluster of its own (`cluster start START_ARGS`), destroyed when done with, or when
    what is done with it first fails (RGWBENCH_KEEP_CLUSTERS=1 keeps it)."""
    if os.geteuid() != 0:
        pytest.fail('the integration tests need root (they start a real cluster)')
    directory = new_cluster_dir(tag)
    os.rmdir(directory)  # `start` wants a new or empty folder
    c = kind(release, directory)
    try:
        # returns once the mgr lists its radosgw: a first test needs it listed
        c.start(*start_args, env=env)
        yield c
    finally:
        if os.environ.get('RGWBENCH_KEEP_CLUSTERS') != '1':
            c.destroy()


@pytest.fixture(scope='session', params=RELEASES)
def cluster(request: Any) -> Iterator[Cluster]:
    with own_cluster(request.param, request.param) as c:
        yield c


@pytest.fixture(scope='session', params=RELEASES)
def two_osds(request: Any) -> Iterator[Cluster]:
    """A cluster of two OSDs (one can restart at a time) and two mgrs (for failovers).

    Settings and runs restart daemons and fail mgrs over: on a cluster of their
    own, they disturb no other test. Its OSDs keep objects in memory (memstore, saved
    at each clean stop): no test of theirs fills or kills an OSD, and a BlueStore
    write cost an OSD twice the CPU.
    """
    with own_cluster(request.param, 'two-osds-%s' % request.param, '--osds', '2', '--mgrs', '2',
                     '--objectstore', 'memstore') as c:
        yield c


# How long a test on the two-OSD cluster waits, before it starts, for the PGs an
# earlier test's restarts left peering; and for them after OSDs are marked down.
PGS_CLEAN_BEFORE_A_TEST_S = 120
PGS_CLEAN_AFTER_MARK_DOWN_S = 180
# Cluster folder to the test before which marking the OSDs down did not make the PGs
# clean: later tests on it fail at once unless they are clean again by then, rather
# than each wait and mark them down again (minutes a test, past CI's time).
PGS_LEFT_UNCLEAN: Dict[str, str] = {}


def pg_states(c: Cluster) -> Dict[str, int]:
    summary = c.ceph_json('pg', 'stat')['pg_summary']
    return {s['name']: s['num'] for s in summary['num_pg_by_state']}


def pgs_listed(c: Cluster) -> List[Dict[str, Any]]:
    listed = c.ceph_json('pg', 'ls')
    return list(listed.get('pg_stats', []) if isinstance(listed, dict) else listed)


def wait_pgs_clean(c: Cluster, timeout: float,
                   since_epoch: int = 0) -> Optional[Dict[str, int]]:
    """None once every PG is active+clean, else the PG states at the deadline.

    since_epoch: a PG counts only once reported at that epoch or later. The mgr shows
    a PG's last report, which for seconds after an OSD went down is from before."""
    deadline = time.monotonic() + timeout
    while True:
        states: Dict[str, int] = {}
        for pg in pgs_listed(c):
            state = (pg['state'] if int(pg.get('reported_epoch', 0)) >= since_epoch
                     else 'not reported since epoch %d' % since_epoch)
            states[state] = states.get(state, 0) + 1
        if set(states) == {'active+clean'}:
            return None
        if time.monotonic() > deadline:
            return states
        time.sleep(1)


@pytest.fixture(autouse=True)
def two_osds_pgs_clean(request: Any) -> None:
    """A test on the two-OSD cluster starts with every PG active+clean.

    Seen once in CI on Pacific at load 30-70: after a test's OSD restarts, some PGs
    stayed active+clean+laggy or peering for about fifteen minutes, with no OSD
    marked down, and every later test on the cluster failed for it. Marking an OSD
    down makes it rebind and peer afresh, as an operator would do. That it was
    needed, and why, is written where CI's last lines show the reruns.
    """
    if 'two_osds' not in request.fixturenames:
        return
    c: Cluster = request.getfixturevalue('two_osds')
    since = PGS_LEFT_UNCLEAN.get(c.dir)
    stuck = wait_pgs_clean(c, 5 if since else PGS_CLEAN_BEFORE_A_TEST_S)
    if stuck is None:
        PGS_LEFT_UNCLEAN.pop(c.dir, None)
        return
    if since:
        pytest.fail('PGs %s, unclean since before %s, where marking the OSDs down did '
                    'not help' % (stuck, since))
    report = c.unclean_pgs_report()
    still: Optional[Dict[str, int]] = stuck
    for osd in c.ceph_json('osd', 'ls'):
        c.ceph('osd', 'down', str(osd))
        epoch = int(c.ceph_json('osd', 'dump')['epoch'])
        still = wait_pgs_clean(c, PGS_CLEAN_AFTER_MARK_DOWN_S, since_epoch=epoch)
        if still is None:
            break
    where = os.environ.get('RGWBENCH_RERUNS')
    if where:
        with open(where, 'a') as f:
            f.write('%s (setup): PGs %s for %d s before it; its OSDs marked down: %s\n' % (
                request.node.nodeid, stuck, PGS_CLEAN_BEFORE_A_TEST_S,
                'clean again' if still is None else 'still %s' % still))
    if still is not None:
        PGS_LEFT_UNCLEAN[c.dir] = request.node.nodeid
        pytest.fail('PGs %s for %d s before the test, and %s after its OSDs were marked '
                    'down:\n%s' % (stuck, PGS_CLEAN_BEFORE_A_TEST_S, still, report))


def processes_of(directory: str) -> List[int]:
    """Pids of every process whose command line names the cluster folder."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                if directory.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


# Where RGW stores the objects of the local clusters' default zone.
DATA_POOL = 'default.rgw.buckets.data'


def rados_objects(cluster: Cluster) -> List[str]:
    """The RADOS objects of RGW's data pool: heads and tails of every S3 object (none
    before RGW's first upload makes the pool)."""
    if DATA_POOL not in cluster.ceph_json('osd', 'pool', 'ls'):
        return []
    return cluster.tool('rados', '--', '-p', DATA_POOL, 'ls', timeout=120).stdout.split()


def one_line(text: Optional[str]) -> str:
    lines = [line for line in (text or '').splitlines() if line.strip()]
    assert len(lines) == 1, 'expected one line, got %r' % text
    return lines[0]


def active_mgr_pid(cluster: Cluster) -> int:
    """The pid of the active mgr's process."""
    name = cluster.ceph_json('mgr', 'stat')['active_name']
    for pid in processes_of(cluster.dir):
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                argv = f.read().decode('utf-8', 'replace').split('\0')
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == 'ceph-mgr' and \
                argv[argv.index('-i') + 1:argv.index('-i') + 2] == [name]:
            return pid
    raise AssertionError('no process of the active mgr %s' % name)


def rss_bytes(pid: int) -> int:
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    raise AssertionError('no VmRSS for %d' % pid)


def tls_socket(url: str) -> ssl.SSLSocket:
    parts = urllib.parse.urlsplit(url)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((str(parts.hostname), int(parts.port or 443)), timeout=10)
    return context.wrap_socket(raw)


def stream(sock: ssl.SSLSocket, total: int) -> int:
    """Send up to `total` bytes, until the server closes; returns how many went."""
    chunk, sent = b'x' * (1 << 20), 0
    try:
        while sent < total:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    return sent


def wait_for(what: str, check: Callable[[], Any], timeout: float = 180) -> Any:
    """What `check` returns once it is true; fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %ds waiting for %s' % (timeout, what))
        time.sleep(0.5)


def free_ports(ip: str, count: int) -> List[int]:
    """`count` TCP ports free on `ip` now."""
    found: List[int] = []
    while len(found) < count:
        with socket.socket() as s:
            s.bind((ip, 0))
            port = int(s.getsockname()[1])
        if port not in found:
            found.append(port)
    return found


def wait_settings(c: Cluster, wanted: List[str], timeout: float) -> Dict[str, Any]:
    """Until `settings show` is in a wanted state (a failed one once it is put back); a
    failure not wanted fails at once."""
    deadline = time.monotonic() + timeout
    while True:
        shown: Dict[str, Any] = c.ceph_json('rgwbench', 'settings', 'show')
        if shown['state'] == 'failed' and 'failed' not in wanted:
            raise AssertionError('settings failed: %s' % shown.get('error'))
        if shown['state'] in wanted and (shown['state'] != 'failed' or shown['finished']):
            return shown
        if time.monotonic() > deadline:
            raise AssertionError('settings stayed %s: %s' % (shown['state'], shown))
        time.sleep(1)


def client_rgw_options(cluster: Cluster, names: Sequence[str]) -> Dict[str, str]:
    """The options of the config database's client.rgw section among `names`."""
    return {o['name']: o['value'] for o in cluster.ceph_json('config', 'dump')
            if o.get('section') == 'client.rgw' and o['name'] in names}


def rgw_started(cluster: Cluster, service: str = 'rgw.default') -> Dict[str, str]:
    """name -> start time of the service's RGW daemons."""
    return {d['daemon_name']: str(d.get('started'))
            for d in cluster.ceph_json('orch', 'ps', '--daemon_type', 'rgw')
            if d.get('service_name') == service}


def restart_rgw(cluster: Cluster) -> None:
    """`orch restart rgw.default`; back once new daemons answer S3 and are in the map."""
    before = rgw_started(cluster)
    cluster.ceph('orch', 'restart', 'rgw.default')

    def restarted() -> bool:
        now = rgw_started(cluster)
        return bool(now) and all(before.get(name) != started for name, started in now.items())

    wait_for('rgw.default to restart', restarted)
    url = cluster.s3()['url']
    wait_for('%s to answer S3 again' % url, lambda: answers(url))
    cluster.wait_rgw_registered()


def cluster_service(command: str, cluster_dir: str, args: Sequence[str],
                    check: bool = True) -> 'subprocess.CompletedProcess[str]':
    """`cluster COMMAND ARGS` of the cluster in `cluster_dir` (a test server of its own)."""
    argv = [CLUSTER, command, args[0], '--dir', cluster_dir] + list(args[1:])
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError('%s failed (%d):\n%s\n%s' % (
            ' '.join(argv), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc


def kmip(cluster_dir: str, *args: str, check: bool = True) -> 'subprocess.CompletedProcess[str]':
    """`cluster kmip ARGS` of the cluster in `cluster_dir` (its test KMIP server)."""
    return cluster_service('kmip', cluster_dir, args, check)


@pytest.fixture(scope='module')
def kmip_server(cluster: Cluster) -> Iterator[Dict[str, str]]:
    """The session cluster's KMIP server, for a module's tests."""
    try:
        info: Dict[str, str] = json.loads(kmip(cluster.dir, 'start').stdout)
        yield info
    finally:
        kmip(cluster.dir, 'stop', check=False)


def openbao(cluster_dir: str, *args: str,
            check: bool = True) -> 'subprocess.CompletedProcess[str]':
    """`cluster openbao ARGS` of the cluster in `cluster_dir` (its test OpenBao server)."""
    return cluster_service('openbao', cluster_dir, args, check)


@pytest.fixture(scope='module')
def openbao_server(cluster: Cluster) -> Iterator[Dict[str, str]]:
    """The session cluster's OpenBao server (transit engine), for a module's tests."""
    try:
        info: Dict[str, str] = json.loads(openbao(cluster.dir, 'start').stdout)
        yield info
    finally:
        openbao(cluster.dir, 'stop', check=False)


def answers(url: str, cafile: Optional[str] = None,
            context: Optional[ssl.SSLContext] = None) -> bool:
    """Whether S3 answers an anonymous ListBuckets at `url` (HTTPS trusting `cafile`, or
    as `context` says)."""
    if context is None and url.startswith('https'):
        context = ssl.create_default_context(cafile=cafile)
    try:
        with urllib.request.urlopen(url + '/', timeout=5, context=context) as resp:
            return resp.status == 200 and b'ListAllMyBucketsResult' in resp.read()
    except (urllib.error.URLError, OSError):
        return False


def own_addresses(info: Dict[str, Any], count: int) -> Tuple[List[str], int]:
    """`count` addresses of the test network the cluster tool made for its hosts (`cluster
    info`): its top ones no host has, as an operator gives VIPs of a network they own;
    and the network's prefix length."""
    subnet = ipaddress.ip_network(info['network']['subnet'])
    taken = {h['addr'] for h in info['hosts']}
    free = [a for a in (str(subnet.broadcast_address - n) for n in range(1, count + 5))
            if a not in taken]
    return free[:count], subnet.prefixlen


# -- fixtures the test files share ----------------------------------------------------------

def set_credentials(cluster: Cluster, doc: Dict[str, Any]) -> 'subprocess.CompletedProcess[str]':
    return cluster.ceph_input(json.dumps(doc), 'rgwbench', 'credentials', 'set', timeout=60)


@pytest.fixture
def credentials(cluster: Cluster) -> Iterator[Dict[str, Any]]:
    s3 = cluster.s3()
    proc = set_credentials(cluster, {'access_key': s3['access_key'],
                                     'secret_key': s3['secret_key']})
    assert proc.returncode == 0, proc.stderr
    yield s3
    cluster.ceph('rgwbench', 'credentials', 'rm')


@pytest.fixture(scope='module')
def runs(two_osds: Cluster) -> Iterator[Cluster]:
    """Stored credentials. No ingress option is set: `tls@ingress` variants take the
    address and ports the module chooses from the cluster, as on a user's cluster."""
    for option in OPTIONS:
        assert two_osds.ceph('config', 'get', 'mgr', 'mgr/rgwbench/%s' % option
                             ).stdout.strip() in ('', '0'), option
    s3 = two_osds.s3()
    proc = two_osds.ceph_input(json.dumps({'access_key': s3['access_key'],
                                           'secret_key': s3['secret_key']}),
                               'rgwbench', 'credentials', 'set')
    assert proc.returncode == 0, proc.stderr
    yield two_osds
    two_osds.ceph('rgwbench', 'credentials', 'rm')


OPTIONS = ('ingress_virtual_ip', 'ingress_frontend_port', 'ingress_monitor_port')


@pytest.fixture(scope='module')
def panel(runs: Cluster) -> Iterator[Panel]:
    """The panel of the `runs` cluster on a free port, with a password made for it; the
    port and no password again afterwards."""
    port = free_port()
    first = runs.ceph('config', 'get', 'mgr', 'mgr/rgwbench/panel_port').stdout.strip()
    # An option changed at runtime moves the panel (config_notify).
    runs.ceph('config', 'set', 'mgr', 'mgr/rgwbench/panel_port', str(port))
    password = runs.ceph('rgwbench', 'panel', 'password', 'generate').stdout.strip()
    found = Panel(runs, port, password)
    found.wait_serving()
    yield found
    runs.ceph('rgwbench', 'panel', 'password', 'rm')
    runs.ceph('config', 'set', 'mgr', 'mgr/rgwbench/panel_port', first)
