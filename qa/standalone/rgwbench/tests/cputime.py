"""The CPU time each test cost: its clusters' processes and the test process's own.

CI runs a dozen shards at once on two cores, so its length is the CPU all of
them spend, not the seconds any test waits; pytest's durations cannot tell
the two apart. A `Ledger` adds up, every `PERIOD_S` seconds, the CPU time
(user and system, `/proc/PID/stat`) of every process whose command line
names a cluster folder this session made and which the test process does
not wait for itself, keeping the last value seen of a process that ended
(so at most a period of a short-lived daemon is missed); to that it adds
the test process's own time and that of the children it waited for (the
`ceph` and `cluster` tools, loaders, browsers). A test's figure is the
ledger's growth from the start of its set-up to the end of its tear-down,
so the set-up of a module's cluster counts for the module's first test.
"""
import os
import resource
import threading
from typing import Dict, List, Optional, Set, Tuple

from localcluster.processes import stat_fields

PERIOD_S = 2.0
# A process this young may not have exec'd its own program yet: it is looked at again.
SETTLED_S = 5.0
CLOCK_TICKS = os.sysconf('SC_CLK_TCK')

# A process is one pid at one start time (a pid can be used again).
ProcessKey = Tuple[int, int]


class Ledger:
    """CPU seconds spent so far by this session's clusters and by the test process."""

    def __init__(self) -> None:
        self.folders: List[bytes] = []
        self.last_seen: Dict[ProcessKey, float] = {}
        # Pids already looked at, as they were: ours (their key), or not ours.
        self.ours: Dict[int, ProcessKey] = {}
        self.others: Set[int] = set()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread: Optional[threading.Thread] = None
        self.by_test: Dict[str, float] = {}
        self._started: Dict[str, float] = {}

    def add_folder(self, folder: str) -> None:
        with self.lock:
            self.folders.append(folder.encode())
            self.others.clear()  # what was not ours may name the new folder
        self._start_sampling()

    def _start_sampling(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._sample_forever, name='cpu-ledger',
                                           daemon=True)
            self.thread.start()

    def _sample_forever(self) -> None:
        while not self.stopping.wait(PERIOD_S):
            self.sample()

    def sample(self) -> None:
        """Each process of ours read again; a pid not seen before looked at once (when
        settled: a process this young may not have exec'd its own program yet).

        Only those: reading every process's stat each period cost a shard 1 % of a core.
        """
        own = os.getpid()
        with open('/proc/uptime') as f:
            uptime = float(f.read().split()[0])
        pids = {int(entry) for entry in os.listdir('/proc') if entry.isdigit()}
        with self.lock:
            self.others &= pids
            for pid in pids - self.others:
                fields = stat_fields(pid)
                if fields is None:
                    continue
                key = (pid, int(fields[19]))
                seconds = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
                if self.ours.get(pid) == key:
                    self.last_seen[key] = seconds
                    continue
                kind = self._kind(pid, own)
                if kind == 'ours':
                    self.ours[pid] = key
                    self.last_seen[key] = seconds
                elif kind == 'stranger' and uptime - key[1] / CLOCK_TICKS > SETTLED_S:
                    self.others.add(pid)

    def _kind(self, pid: int, own: int) -> str:
        """`ours`: a process of our clusters that the test process does not wait for;
        `child`: one it waits for (counted in its children's time when it ends, unless
        it leaves them first, as a daemon does: looked at again); `stranger`: any other."""
        step, seen = pid, 0
        while step > 1 and seen < 64:
            if step == own:
                return 'child'
            fields = stat_fields(step)
            step, seen = (int(fields[1]) if fields else 0), seen + 1
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                cmdline = f.read()
        except OSError:
            return 'stranger'
        return 'ours' if any(folder in cmdline for folder in self.folders) else 'stranger'

    def total(self) -> float:
        self.sample()
        mine = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        with self.lock:
            clusters = sum(self.last_seen.values())
        return (clusters + mine.ru_utime + mine.ru_stime + children.ru_utime
                + children.ru_stime)

    def test_starts(self, name: str) -> None:
        self._started[name] = self.total()

    def test_ends(self, name: str) -> None:
        began = self._started.pop(name, None)
        if began is not None:
            self.by_test[name] = self.by_test.get(name, 0.0) + self.total() - began

    def report(self, most: int = 20) -> List[str]:
        """The tests that cost the most CPU, and the session's total."""
        if not self.by_test:
            return []
        ranked = sorted(self.by_test.items(), key=lambda item: -item[1])
        lines = ['%8.1f s  %s' % (seconds, name) for name, seconds in ranked[:most]]
        lines.append('%8.1f s  all %d tests (%.1f s measured over the session)'
                     % (sum(self.by_test.values()), len(ranked), self.total()))
        return lines

    def stop(self) -> None:
        self.stopping.set()
