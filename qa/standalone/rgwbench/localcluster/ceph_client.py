"""The client side of ceph_session.py: `ceph` commands over one connection.

Used where `ceph` would be run over and over (the cluster tool's waits, the
tests' polling): each `ceph` run starts Python and connects anew, about a
quarter of a CPU second, and a busy test machine had 100 of them a minute.
"""
import json
import select
import subprocess
import threading
from typing import List, Optional, Tuple


def split_format(args: List[str]) -> Tuple[List[str], Optional[str]]:
    """The words without `-f X` / `--format X` / `--format=X`, and X."""
    words, fmt = [], None
    rest = iter(args)
    for word in rest:
        if word in ('-f', '--format'):
            fmt = next(rest, None)
        elif word.startswith('--format='):
            fmt = word.split('=', 1)[1]
        else:
            words.append(word)
    return words, fmt


class SessionEnded(RuntimeError):
    """The session process ended twice without answering (its connection failed)."""


class CephSession:
    """`ceph` commands over one connection (localcluster/ceph_session.py), one at a time."""

    def __init__(self, argv: List[str]) -> None:
        self.argv = argv
        self.proc: Optional['subprocess.Popen[str]'] = None
        self.lock = threading.Lock()

    def call(self, args: List[str], timeout: float) -> Tuple[int, str, str]:
        """(return code, what it printed, what it said on stderr)."""
        request = json.dumps({'args': args, 'timeout': int(timeout)}) + '\n'
        with self.lock:
            for attempt in (1, 2):
                if self.proc is None or self.proc.poll() is not None:
                    self.proc = subprocess.Popen(
                        self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, universal_newlines=True)
                stdin, stdout = self.proc.stdin, self.proc.stdout
                assert stdin is not None and stdout is not None
                try:
                    stdin.write(request)
                    stdin.flush()
                except BrokenPipeError:
                    self._end()
                    continue
                ready, _, _ = select.select([stdout], [], [], timeout + 30)
                if not ready:
                    self._end()
                    raise subprocess.TimeoutExpired(self.argv, timeout)
                line = stdout.readline()
                if line:
                    found = json.loads(line)
                    return int(found['ret']), str(found['out']), str(found['outs'])
                self._end()  # it ended (its connection could not be made): once more
            raise SessionEnded('%s ended without an answer to %s' % (
                ' '.join(self.argv), ' '.join(args)))

    def _end(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def close(self) -> None:
        with self.lock:
            if self.proc is not None and self.proc.stdin is not None:
                self.proc.stdin.close()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass
            self._end()
