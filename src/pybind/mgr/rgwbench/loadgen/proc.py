"""Server-side figures on this host: CPU cores and RSS of named processes.

Reads ``/proc/<pid>/comm``, ``/proc/<pid>/stat`` (utime + stime, in clock
ticks) and ``/proc/<pid>/status`` (VmRSS).  ``cpu_cores`` is the CPU time
the processes used during the window divided by the window's wall time;
``rss_mib`` is the mean of the per-second samples of their summed RSS,
``rss_mib_max`` the largest.  A process that started during the window
counts with all its CPU time; one that ended during it with what was seen
until its last sample.
"""

import os
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

DEFAULT_NAMES = ("radosgw", "haproxy")


def _read(path: str) -> Optional[str]:
    try:
        with open(path, "r") as f:
            return f.read()
    except OSError:
        return None


def cpu_ticks(pid: int, root: str = "/proc") -> Optional[int]:
    """utime + stime of a process in clock ticks, or None if it is gone."""
    text = _read("%s/%d/stat" % (root, pid))
    if text is None:
        return None
    # the command name (field 2) may hold spaces and parentheses: the
    # remaining fields start after the last ')'
    rest = text[text.rfind(")") + 2:].split()
    try:
        return int(rest[11]) + int(rest[12])
    except (IndexError, ValueError):
        return None


def rss_kib(pid: int, root: str = "/proc") -> Optional[int]:
    text = _read("%s/%d/status" % (root, pid))
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return 0  # kernel threads and zombies have no VmRSS line


def find_pids(names: Sequence[str], root: str = "/proc") -> Dict[str, List[int]]:
    """PIDs per process name (``comm``), for the given names."""
    wanted = set(names)
    found: Dict[str, List[int]] = {name: [] for name in names}
    try:
        entries = os.listdir(root)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        comm = _read("%s/%s/comm" % (root, entry))
        if comm is None:
            continue
        comm = comm.strip()
        if comm in wanted:
            found[comm].append(int(entry))
    for pids in found.values():
        pids.sort()
    return found


class ProcSampler:
    """Samples named processes over a measured window."""

    def __init__(self, names: Sequence[str] = DEFAULT_NAMES, root: str = "/proc",
                 clock_ticks: Optional[int] = None,
                 only: Optional[Mapping[str, Sequence[int]]] = None) -> None:
        self.names = tuple(names)
        # Per name, the pids of the cluster under test: other processes of
        # that name on this host (another cluster's) are left out. A name
        # none of whose pids is found falls back to every process so named.
        self.only = {name: set(pids) for name, pids in (only or {}).items() if pids}
        self.by_name_only: List[str] = []
        self.root = root
        self.hz = clock_ticks or os.sysconf("SC_CLK_TCK")
        self._start_wall = 0.0
        self._end_wall = 0.0
        self._first: Dict[int, int] = {}
        self._last: Dict[int, int] = {}
        self._owner: Dict[int, str] = {}
        self._rss: Dict[str, List[float]] = {name: [] for name in self.names}
        self._rss_pid: Dict[int, List[float]] = {}
        self._started = False

    def _scan(self) -> Dict[int, Tuple[str, int]]:
        out: Dict[int, Tuple[str, int]] = {}
        for name, pids in find_pids(self.names, self.root).items():
            wanted = self.only.get(name)
            if wanted is not None:
                chosen = [p for p in pids if p in wanted]
                if chosen:
                    pids = chosen
                elif name not in self.by_name_only:
                    self.by_name_only.append(name)
            for pid in pids:
                ticks = cpu_ticks(pid, self.root)
                if ticks is not None:
                    out[pid] = (name, ticks)
        return out

    def start(self, now: Optional[float] = None) -> None:
        self._start_wall = time.time() if now is None else now
        self._first = {}
        self._last = {}
        self._owner = {}
        for pid, (name, ticks) in self._scan().items():
            self._first[pid] = ticks
            self._last[pid] = ticks
            self._owner[pid] = name
        self._rss = {name: [] for name in self.names}
        self._rss_pid = {}
        self._started = True
        self.sample()

    def sample(self) -> None:
        """Take an RSS sample and refresh CPU counters (call about once a second)."""
        if not self._started:
            return
        rss: Dict[str, float] = {name: 0.0 for name in self.names}
        for pid, (name, ticks) in self._scan().items():
            if pid not in self._first:
                self._first[pid] = 0  # started inside the window
                self._owner[pid] = name
            self._last[pid] = ticks
            kib = rss_kib(pid, self.root)
            if kib:
                rss[name] += kib / 1024.0
                self._rss_pid.setdefault(pid, []).append(kib / 1024.0)
        for name, value in rss.items():
            self._rss[name].append(value)

    def _one(self, pid: int, wall: float) -> Dict[str, float]:
        ticks = self._last[pid] - self._first[pid]
        samples = self._rss_pid.get(pid) or [0.0]
        return {"cpu_cores": round(ticks / float(self.hz) / wall, 4),
                "rss_mib": round(sum(samples) / len(samples), 2),
                "rss_mib_max": round(max(samples), 2)}

    def stop(self, now: Optional[float] = None) -> Dict[str, Dict[str, Any]]:
        """Final sample; per name: daemons, cpu_cores, rss_mib, rss_mib_max,
        pids, and the same figures for each process under ``processes``."""
        self.sample()
        self._end_wall = time.time() if now is None else now
        wall = max(self._end_wall - self._start_wall, 1e-9)
        out: Dict[str, Dict[str, Any]] = {}
        for name in self.names:
            pids = sorted(p for p, owner in self._owner.items() if owner == name)
            if not pids:
                continue
            ticks = sum(self._last[p] - self._first[p] for p in pids)
            samples = self._rss[name] or [0.0]
            out[name] = {
                "daemons": len(pids),
                "pids": pids,
                "cpu_s": round(ticks / float(self.hz), 3),
                "cpu_cores": round(ticks / float(self.hz) / wall, 4),
                "rss_mib": round(sum(samples) / len(samples), 2),
                "rss_mib_max": round(max(samples), 2),
                "window_s": round(wall, 3),
                # "pids": only the given processes; "name": every one so named.
                "counted_by": ("pids" if name in self.only and name not in self.by_name_only
                               else "name"),
                "processes": {str(p): self._one(p, wall) for p in pids},
            }
        self._started = False
        return out
