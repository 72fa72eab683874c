"""Daemons started as plain processes, each recorded by a pid file of ours."""
import os
import random
import signal
import socket
import subprocess
import time
from typing import Dict, List, Optional, Sequence


def free_port(taken: Sequence[int] = ()) -> int:
    """A free TCP port on loopback below the kernel's ephemeral range.

    Ports from the ephemeral range could be taken again by an outgoing
    connection while a daemon restarts, so they are avoided.
    """
    for _ in range(200):
        port = random.randint(20000, 30000)
        if port in taken:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(('127.0.0.1', port))
            except OSError:
                continue
        return port
    raise RuntimeError('no free TCP port found on 127.0.0.1')


class ProcessTable:
    """The processes of one cluster: started detached, found again by pid file."""

    def __init__(self, run_dir: str, marker: str) -> None:
        self.pid_dir = os.path.join(run_dir, 'pids')
        self.out_dir = os.path.join(run_dir, 'out')
        # A string every command line of ours holds (the cluster's conf path),
        # so that a recycled pid is never taken for one of ours.
        self.marker = marker

    def start(self, name: str, argv: List[str], env: Optional[Dict[str, str]] = None) -> int:
        os.makedirs(self.pid_dir, exist_ok=True)
        os.makedirs(self.out_dir, exist_ok=True)
        with open(os.path.join(self.out_dir, name + '.out'), 'ab') as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    env=dict(os.environ, **(env or {})))
        with open(self._pid_file(name), 'w') as f:
            f.write('%d\n' % proc.pid)
        return proc.pid

    def _pid_file(self, name: str) -> str:
        return os.path.join(self.pid_dir, name + '.pid')

    def pid(self, name: str) -> Optional[int]:
        try:
            with open(self._pid_file(name)) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if self._is_ours(pid) else None

    def _is_ours(self, pid: int) -> bool:
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                cmdline = f.read().decode(errors='replace')
            with open('/proc/%d/stat' % pid) as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
        except OSError:
            return False
        return self.marker in cmdline and state != 'Z'

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

    def stop(self, names: Sequence[str], timeout: float = 30.0) -> List[str]:
        """SIGTERM, then SIGKILL whatever is left; returns the names stopped."""
        pids = {n: self.pid(n) for n in names}
        live = {n: p for n, p in pids.items() if p is not None}
        for pid in live.values():
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(self._is_ours(p) for p in live.values()):
            time.sleep(0.2)
        for pid in live.values():
            if self._is_ours(pid):
                _signal(pid, signal.SIGKILL)
        for pid in live.values():
            _reap(pid)
        for n in names:
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
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not os.path.exists('/proc/%d' % pid):
            return
        time.sleep(0.05)
