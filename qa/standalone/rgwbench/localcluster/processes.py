"""Daemons started as plain processes, each recorded by a pid file of ours."""
import contextlib
import fcntl
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import ContextManager, Dict, Iterator, List, Optional, Sequence, Tuple


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(('127.0.0.1', port))
        except OSError:
            return False
    return True


# Ports handed to clusters, machine-wide: clusters started side by side (the
# releases' test shards) choose theirs before their daemons bind them.
PORT_CLAIMS = '/run/lock/rgwbench-ports.json'


@contextlib.contextmanager
def _claims() -> Iterator[Dict[str, str]]:
    os.makedirs(os.path.dirname(PORT_CLAIMS), exist_ok=True)
    with open(PORT_CLAIMS + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(PORT_CLAIMS) as f:
                claims = {str(k): str(v) for k, v in json.load(f).items()}
        except (OSError, ValueError, AttributeError):
            claims = {}
        # A claim lasts as long as its cluster's folder.
        claims = {port: owner for port, owner in claims.items() if os.path.isdir(owner)}
        yield claims
        with open(PORT_CLAIMS + '.tmp', 'w') as f:
            json.dump(claims, f)
        os.rename(PORT_CLAIMS + '.tmp', PORT_CLAIMS)


def free_port(taken: Sequence[int] = (), count: int = 1, owner: str = '') -> int:
    """The first of `count` free TCP ports in a row on loopback.

    They are taken below the kernel's ephemeral range: ports from that range
    could be taken by an outgoing connection while a daemon restarts. With an
    owner (a cluster's folder), the ports are claimed for it: no other cluster
    is given them while that folder exists, even before a daemon binds them.
    """
    claimed: ContextManager[Dict[str, str]] = _claims() if owner else contextlib.nullcontext({})
    with claimed as claims:
        for _ in range(200):
            port = random.randint(20000, 30000)
            ports = range(port, port + count)
            if any(p in taken or claims.get(str(p), owner) != owner for p in ports):
                continue
            if all(_bindable(p) for p in ports):
                claims.update({str(p): owner for p in ports})
                return port
    raise RuntimeError('no free TCP port found on 127.0.0.1')


def stat_fields(pid: int) -> Optional[List[str]]:
    """The fields of /proc/PID/stat after the command name (state first); None when gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            text = f.read()
    except OSError:
        return None
    # The command name, in parentheses, may hold spaces: the fields follow its last ')'.
    return text.rsplit(')', 1)[1].split()


def _start_time(pid: int) -> Optional[str]:
    """The kernel's start time of a live process, None for a dead or zombie one."""
    fields = stat_fields(pid)
    return None if fields is None or fields[0] == 'Z' else fields[19]


# What `podman stop` gives a cephadm container: SIGTERM, then SIGKILL after 10 s.
# (Tentacle's radosgw takes up to 30 s to exit; the registration of a killed one
# stays in the service map for the mgr's beacon grace.)
STOP_GRACE_S = 10.0
# A memstore OSD writes all it holds to its folder as it stops, and reads it back as
# it starts: killed while writing, it can never start again (a collection it cannot
# decode). Saving a GiB took more than 10 s on a machine at load 25.
MEMSTORE_OSD_STOP_GRACE_S = 300.0


def osd_stop_grace(objectstore: Optional[str]) -> float:
    """How long an OSD of this object store may take to stop (None: the default,
    BlueStore, as in a cluster made before the tool had the option)."""
    return MEMSTORE_OSD_STOP_GRACE_S if objectstore == 'memstore' else STOP_GRACE_S


class ProcessTable:
    """The processes of one cluster: started detached, found again by pid file.

    A pid file holds the pid and the process's start time, so that a recycled
    pid is never taken for one of ours. The mgr-side test orchestrator keeps its
    daemons in the same table, so `cluster stop` ends those too.
    """

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self.pid_dir = os.path.join(run_dir, 'pids')
        self.out_dir = os.path.join(run_dir, 'out')

    def start(self, name: str, argv: List[str], env: Optional[Dict[str, str]] = None,
              cwd: Optional[str] = None) -> int:
        """Start `name`, or leave it be when it runs already (its pid), as systemd
        starts a unit: a mgr that hung between the stop and the start of a restart,
        and resumed after another mgr restarted the daemon, would start a second one."""
        with self._daemon_lock(name):
            return self._start(name, argv, env, cwd)

    def _start(self, name: str, argv: List[str], env: Optional[Dict[str, str]],
               cwd: Optional[str]) -> int:
        running = self.pid(name)
        if running is not None:
            return running
        os.makedirs(self.out_dir, exist_ok=True)
        with open(os.path.join(self.out_dir, name + '.out'), 'ab') as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    env=dict(os.environ, **(env or {})), cwd=cwd)
        started = _start_time(proc.pid) or ''
        tmp = self._pid_file(name) + '.tmp'
        with open(tmp, 'w') as f:
            f.write('%d %s\n' % (proc.pid, started))
        os.rename(tmp, self._pid_file(name))
        return proc.pid

    @contextlib.contextmanager
    def _daemon_lock(self, name: str) -> Iterator[None]:
        """One start, or one restart, of a daemon at a time, as systemd runs one job
        per unit: two mgrs restarting the same radosgw side by side (one failed over
        while the other took over) each started one, and the pid file named only the
        one that lost the port."""
        os.makedirs(self.pid_dir, exist_ok=True)
        with open(os.path.join(self.pid_dir, name + '.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def restart(self, name: str, argv: List[str], timeout: float = STOP_GRACE_S,
                env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> None:
        """Stop and start `name` in a process of its own, and wait for it.

        As `systemctl restart` hands both halves to systemd: the caller, the mgr's
        test orchestrator, may be failed over between the stop and the start (seen in
        CI: an OSD left stopped by a mgr failed over mid-restart) or hung there
        (SIGSTOP) while another mgr restarts the daemon; the restart ends all the same,
        and no lock is held by a hung caller."""
        python = shutil.which('python3') or sys.executable
        proc = subprocess.run(
            [python, os.path.abspath(__file__), 'restart', self.run_dir, name, str(timeout),
             cwd or '', '--'] + argv,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, universal_newlines=True,
            env=dict(os.environ, **(env or {})))
        if proc.returncode != 0:
            raise RuntimeError('restart of %s failed: %s' % (name, proc.stdout.strip()))

    def _restart(self, name: str, argv: List[str], timeout: float, cwd: Optional[str]) -> None:
        with self._daemon_lock(name):
            self.stop([name], timeout)
            self._start(name, argv, None, cwd)

    def _pid_file(self, name: str) -> str:
        return os.path.join(self.pid_dir, name + '.pid')

    def _record(self, name: str) -> Optional[Tuple[int, str]]:
        try:
            with open(self._pid_file(name)) as f:
                pid, started = f.read().split()
            return int(pid), started
        except (OSError, ValueError):
            return None

    def pid(self, name: str) -> Optional[int]:
        record = self._record(name)
        if record is None or _start_time(record[0]) != record[1]:
            return None
        return record[0]

    def running(self, name: str) -> bool:
        return self.pid(name) is not None

    def names(self) -> List[str]:
        if not os.path.isdir(self.pid_dir):
            return []
        return sorted(f[:-4] for f in os.listdir(self.pid_dir) if f.endswith('.pid'))

    def output_tail(self, name: str, lines: int = 15) -> str:
        try:
            with open(os.path.join(self.out_dir, name + '.out'), errors='replace') as f:
                return ''.join(f.readlines()[-lines:])
        except OSError:
            return ''

    def stop(self, names: Sequence[str], timeout: float = STOP_GRACE_S) -> List[str]:
        """SIGTERM, then SIGKILL whatever is left; returns the names stopped."""
        live: Dict[str, Tuple[int, str]] = {}
        for name in names:
            record = self._record(name)
            if record is not None and self.pid(name) is not None:
                live[name] = record
        for pid, _ in live.values():
            _signal(pid, signal.SIGTERM)

        def alive() -> List[int]:
            return [p for p, started in live.values() if _start_time(p) == started]

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and alive():
            time.sleep(0.1)
        for pid in alive():
            _signal(pid, signal.SIGKILL)
        for pid, _ in live.values():
            _reap(pid)
        for n in names:
            # Only the record of what this stop ended (or of nothing alive): a stop
            # that hung and resumed after another started the daemon again keeps
            # the new one's record.
            record = self._record(n)
            if record is not None and record != live.get(n) and self.pid(n) is not None:
                continue
            try:
                os.unlink(self._pid_file(n))
            except OSError:
                pass
        return sorted(live)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    """Wait until the process is gone; collect it if it is our own child."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        if _start_time(pid) is None:
            return
        time.sleep(0.05)


def main(argv: List[str]) -> int:
    """`processes.py restart RUN_DIR NAME GRACE CWD -- ARGV...`: ProcessTable.restart's
    own process (the daemon's environment is this process's)."""
    if len(argv) < 7 or argv[0] != 'restart' or argv[5] != '--':
        sys.stderr.write(main.__doc__ or '')
        return 2
    run_dir, name, grace, cwd, command = argv[1], argv[2], float(argv[3]), argv[4], argv[6:]
    ProcessTable(run_dir)._restart(name, command, grace, cwd or None)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
