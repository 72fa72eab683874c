"""Server-side figures on this host: CPU cores and RSS of the cluster's daemons.

Daemons are found by their NAME, never by a pid someone else saw (the
service map's pid of a containerized daemon is the one inside the
container's own PID namespace):

* radosgw ``rgw.<id>``: a process whose ``comm`` is ``radosgw`` and whose
  command line (``/proc/<pid>/cmdline``) names ``client.rgw.<id>`` with
  ``-n``/``--name`` (or ``rgw.<id>`` with ``-i``/``--id``); the service map
  drops a leading ``rgw.`` from a name, so ``client.<id>`` counts too;
* haproxy ``haproxy.<id>``: a process whose ``comm`` is ``haproxy`` and one of
  whose ``-f`` paths has a part named ``haproxy.<id>`` (the daemon's folder);
* either, in a cephadm container: a process in the cgroup of the daemon's
  systemd unit ``ceph-<fsid>@<daemon>.service``, or one whose mounts
  (``/proc/<pid>/mountinfo``) bind the daemon's folder
  ``/var/lib/ceph/<fsid>/<daemon>``, which cephadm mounts into each daemon's
  container whatever cgroups the host's container runtime gives it (HAProxy's
  command line names only the config's path inside the container).

A process whose command line says ``--fsid`` of another cluster, or that
runs in another cluster's cephadm unit, is not counted. Pids are found once
when sampling starts, and again only when one of them ends, at every sample
until the daemon is back (a restart), and every ``RESCAN_S`` for a daemon
not found at all. A sample reads
``/proc/<pid>/stat`` (utime + stime, in clock ticks) and
``/proc/<pid>/status`` (VmRSS) of the known pids only. A process is known by
its pid and its start time: a pid the kernel gave to a new process (a busy
host reuses pids within a second) is a process that ended, never a counter
that went back.

``cpu_cores`` is the CPU time the processes used during the window divided
by the window's wall time; ``rss_mib`` is the mean of the per-second samples
of their summed RSS, ``rss_mib_max`` the largest. A process that started
during the window counts with all its CPU time; one that ended during it
with what was seen until its last sample.

Without daemon names (the command line's ``--proc-names``), every process of
the given ``comm`` on this host counts.
"""

import os
import re
import time
from typing import (Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional,
                    Sequence, Set, Tuple)

DEFAULT_NAMES = ("radosgw", "haproxy")
#: the program (``comm``) of each daemon type
PROGRAMS = {"rgw": "radosgw", "haproxy": "haproxy"}
#: how often daemons without a process are looked for again, at most
RESCAN_S = 5.0


def read_text(path: str) -> Optional[str]:
    """A file's text; None when it cannot be read (a process gone, a file absent)."""
    try:
        with open(path, "r") as f:
            return f.read()
    except OSError:
        return None


class Ticks(NamedTuple):
    """A process's CPU time so far, and when it started (both in clock ticks)."""
    cpu: int
    started: int


def process_ticks(pid: int, root: str = "/proc") -> Optional[Ticks]:
    """The CPU ticks and start time of a process, or None if it is gone."""
    text = read_text("%s/%d/stat" % (root, pid))
    if text is None:
        return None
    # the command name (field 2) may hold spaces and parentheses: the
    # remaining fields start after the last ')'
    rest = text[text.rfind(")") + 2:].split()
    try:
        return Ticks(int(rest[11]) + int(rest[12]), int(rest[19]))
    except (IndexError, ValueError):
        return None


def rss_kib(pid: int, root: str = "/proc") -> Optional[int]:
    text = read_text("%s/%d/status" % (root, pid))
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return 0  # kernel threads and zombies have no VmRSS line


def command_line(pid: int, root: str = "/proc") -> List[str]:
    """A process's arguments (``cmdline`` is NUL-separated); [] if gone or a kernel thread."""
    try:
        with open("%s/%d/cmdline" % (root, pid), "rb") as f:
            raw = f.read()
    except OSError:
        return []
    args = raw.split(b"\0")
    if args[-1] == b"":
        args.pop()
    return [arg.decode("utf-8", "replace") for arg in args]


def processes(programs: Iterable[str], root: str = "/proc") -> Dict[int, str]:
    """Pid -> ``comm`` of every process running one of the programs."""
    wanted = set(programs)
    found: Dict[int, str] = {}
    try:
        entries = os.listdir(root)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        comm = read_text("%s/%s/comm" % (root, entry))
        if comm is not None and comm.strip() in wanted:
            found[int(entry)] = comm.strip()
    return found


def find_pids(names: Sequence[str], root: str = "/proc") -> Dict[str, List[int]]:
    """PIDs per process name (``comm``), for the given names."""
    found: Dict[str, List[int]] = {name: [] for name in names}
    for pid, comm in processes(names, root).items():
        found[comm].append(pid)
    for pids in found.values():
        pids.sort()
    return found


def option_values(argv: Sequence[str], *flags: str) -> List[str]:
    """Values of options given as ``FLAG VALUE`` or ``--flag=VALUE``."""
    values = []
    for i, arg in enumerate(argv):
        if arg in flags and i + 1 < len(argv):
            values.append(argv[i + 1])
        else:
            for flag in flags:
                if flag.startswith("--") and arg.startswith(flag + "="):
                    values.append(arg[len(flag) + 1:])
    return values


def ceph_entities(argv: Sequence[str]) -> Set[str]:
    """The Ceph entity names a command line runs as (``-n client.x`` or ``-i x``)."""
    names = set(option_values(argv, "-n", "--name"))
    names.update("client." + i for i in option_values(argv, "-i", "--id"))
    return names


class Daemon(NamedTuple):
    """A daemon to look for: its name as the cluster knows it, and its host."""
    name: str
    host: str

    @property
    def program(self) -> Optional[str]:
        return PROGRAMS.get(self.name.partition(".")[0])

    def named_by(self, argv: Sequence[str]) -> bool:
        """Whether a command line of the daemon's program is the daemon's own."""
        kind, _, ident = self.name.partition(".")
        if kind == "rgw":
            return bool(ceph_entities(argv) & {"client.rgw." + ident, "client." + ident})
        if kind == "haproxy":
            return any(self.name in path.split("/") for path in option_values(argv, "-f"))
        return False

    def in_folder(self, mountinfo: str, fsid: str) -> bool:
        """Whether a process's mounts (``/proc/<pid>/mountinfo``) bind the daemon's
        cephadm folder: a mount whose root is ``.../<fsid>/<daemon>`` or below it."""
        if not fsid:
            return False
        folder = "/%s/%s" % (fsid, self.name)
        for line in mountinfo.splitlines():
            fields = line.split(" ", 4)
            if len(fields) > 3:
                root = fields[3]
                if root.endswith(folder) or folder + "/" in root:
                    return True
        return False

    def in_unit(self, cgroup: str, fsid: str) -> bool:
        """Whether a cgroup (``/proc/<pid>/cgroup``) is that of the daemon's cephadm unit."""
        unit = "@%s.service" % self.name
        if fsid:
            unit = "ceph-%s%s" % (fsid, unit)
        return unit in cgroup


_UNIT_FSID = re.compile(r"ceph-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@")


def other_cluster(argv: Sequence[str], cgroup: str, fsid: str) -> bool:
    """Whether a process says it belongs to another cluster than ``fsid``: its
    ``--fsid``, or the cephadm unit whose cgroup it is in."""
    if not fsid:
        return False
    return any(value != fsid for value in option_values(argv, "--fsid")) or \
        any(found != fsid for found in _UNIT_FSID.findall(cgroup))


def find_daemons(daemons: Sequence[Daemon], fsid: str = "",
                 root: str = "/proc") -> Dict[str, List[int]]:
    """Daemon name -> its pids on this host (empty when it runs no process here)."""
    found: Dict[str, List[int]] = {d.name: [] for d in daemons}
    by_program: Dict[str, List[Daemon]] = {}
    for daemon in daemons:
        if daemon.program:
            by_program.setdefault(daemon.program, []).append(daemon)
    for pid, comm in sorted(processes(by_program, root).items()):
        argv = command_line(pid, root)
        cgroup = read_text("%s/%d/cgroup" % (root, pid)) or ""
        if other_cluster(argv, cgroup, fsid):
            continue
        mounts: Optional[str] = None
        for daemon in by_program[comm]:
            if daemon.named_by(argv) or daemon.in_unit(cgroup, fsid):
                found[daemon.name].append(pid)
                break
            if fsid:
                if mounts is None:
                    mounts = read_text("%s/%d/mountinfo" % (root, pid)) or ""
                if daemon.in_folder(mounts, fsid):
                    found[daemon.name].append(pid)
                    break
    return found


class _Counted(NamedTuple):
    """What a pid is counted as: its program, and its daemon (None: counted by program)."""
    program: str
    daemon: Optional[Daemon]


class _Process(NamedTuple):
    """One process: its pid and its start time (a pid alone may be reused)."""
    pid: int
    started: int


class ProcSampler:
    """Samples the cluster's daemons (or every process of some programs) over a window."""

    def __init__(self, names: Sequence[str] = DEFAULT_NAMES, root: str = "/proc",
                 clock_ticks: Optional[int] = None,
                 daemons: Optional[Mapping[str, str]] = None, fsid: str = "",
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        """``daemons``: daemon name -> host, to count those daemons only; else
        every process whose ``comm`` is one of ``names``."""
        self.daemons = [Daemon(name, host) for name, host in sorted((daemons or {}).items())
                        if Daemon(name, host).program]
        self.by_daemon = daemons is not None
        self.names = (tuple(sorted({str(d.program) for d in self.daemons}))
                      if self.by_daemon else tuple(names))
        self.fsid = fsid
        self.root = root
        self.hz = clock_ticks or os.sysconf("SC_CLK_TCK")
        self.monotonic = monotonic
        self._start_wall = 0.0
        self._first: Dict[_Process, int] = {}
        self._last: Dict[_Process, int] = {}
        self._counted: Dict[_Process, _Counted] = {}
        self._live: Dict[int, _Process] = {}   # pid -> its process being counted
        self._last_scan = 0.0
        self._rss: Dict[str, List[float]] = {}
        self._rss_pid: Dict[int, List[float]] = {}
        self._started = False

    # -- finding processes ------------------------------------------------------------
    def _scan(self) -> Dict[int, _Counted]:
        self._last_scan = self.monotonic()
        if not self.by_daemon:
            return {pid: _Counted(comm, None)
                    for pid, comm in processes(self.names, self.root).items()}
        by_name = {d.name: d for d in self.daemons}
        return {pid: _Counted(str(by_name[name].program), by_name[name])
                for name, pids in find_daemons(self.daemons, self.fsid, self.root).items()
                for pid in pids}

    def _without_process(self, ever: bool) -> bool:
        """Whether a daemon has no process now (``ever``: of those that had one)."""
        if not self.by_daemon:
            return not ever  # a new process of a program may come at any time
        live = [self._counted[p] for p in self._live.values()]
        having = {c.daemon.name for c in live if c.daemon is not None}
        had = {c.daemon.name for c in self._counted.values() if c.daemon is not None}
        return any(d.name not in having and (d.name in had or not ever)
                   for d in self.daemons)

    def _add(self, found: Mapping[int, _Counted], in_window: bool) -> None:
        for pid, counted in found.items():
            if pid in self._live:
                continue
            ticks = process_ticks(pid, self.root)
            if ticks is None:
                continue
            process = _Process(pid, ticks.started)
            if process not in self._counted:
                self._first[process] = 0 if in_window else ticks.cpu
            self._last[process] = ticks.cpu
            self._counted[process] = counted
            self._live[pid] = process

    # -- sampling -----------------------------------------------------------------------
    def start(self, now: Optional[float] = None) -> None:
        self._start_wall = time.time() if now is None else now
        self._first, self._last, self._counted, self._live = {}, {}, {}, {}
        self._add(self._scan(), in_window=False)
        self._rss = {}
        self._rss_pid = {}
        self._started = True
        self.sample()

    def sample(self) -> None:
        """Take an RSS sample and refresh CPU counters (call about once a second)."""
        if not self._started:
            return
        ended = False
        for pid, process in sorted(self._live.items()):
            ticks = process_ticks(pid, self.root)
            if ticks is None or ticks.started != process.started:
                del self._live[pid]
                ended = True
                continue
            self._last[process] = ticks.cpu
        # A restarting daemon is looked for at every sample until it is back.
        if ended or self._without_process(ever=True) or (
                self._without_process(ever=False)
                and self.monotonic() - self._last_scan >= RESCAN_S):
            self._add(self._scan(), in_window=True)
        totals: Dict[str, float] = {}
        for pid, process in sorted(self._live.items()):
            kib = rss_kib(pid, self.root)
            if kib is None:
                continue
            key = self._key(self._counted[process])
            totals[key] = totals.get(key, 0.0) + kib / 1024.0
            self._rss_pid.setdefault(pid, []).append(kib / 1024.0)
        for key in self._keys():
            self._rss.setdefault(key, []).append(totals.get(key, 0.0))

    @staticmethod
    def _key(counted: _Counted) -> str:
        return counted.daemon.name if counted.daemon is not None else counted.program

    def _keys(self) -> List[str]:
        return [d.name for d in self.daemons] if self.by_daemon else list(self.names)

    # -- figures ------------------------------------------------------------------------
    def _figures(self, processes: List[_Process], rss: List[float],
                 wall: float) -> Dict[str, Any]:
        ticks = sum(self._last[p] - self._first[p] for p in processes)
        samples = rss or [0.0]
        return {"cpu_s": round(ticks / float(self.hz), 3),
                "cpu_cores": round(ticks / float(self.hz) / wall, 4),
                "rss_mib": round(sum(samples) / len(samples), 2),
                "rss_mib_max": round(max(samples), 2)}

    def _one(self, pid: int, processes: List[_Process], wall: float) -> Dict[str, float]:
        """The figures of a pid: of each process that had it in the window, together."""
        figures = self._figures([p for p in processes if p.pid == pid],
                                self._rss_pid.get(pid) or [], wall)
        del figures["cpu_s"]
        return figures

    @staticmethod
    def _pids(processes: Iterable[_Process]) -> List[int]:
        return sorted({p.pid for p in processes})

    def _per_daemon(self, program: str, wall: float) -> Tuple[List[Dict[str, Any]], List[str]]:
        found, missing = [], []
        for daemon in self.daemons:
            if daemon.program != program:
                continue
            processes = [p for p, c in self._counted.items() if c.daemon == daemon]
            if not processes:
                missing.append(daemon.name)
                continue
            entry: Dict[str, Any] = {"daemon": daemon.name, "host": daemon.host}
            entry.update(self._figures(processes, self._rss.get(daemon.name, []), wall))
            entry["pids"] = self._pids(processes)
            found.append(entry)
        return found, missing

    def stop(self, now: Optional[float] = None) -> Dict[str, Dict[str, Any]]:
        """Final sample; per program (radosgw, haproxy): daemons, cpu_s, cpu_cores,
        rss_mib, rss_mib_max, pids, each process's figures under ``processes``,
        and when counted by daemon name each daemon's under ``per_daemon`` (and
        the daemons of this host without a process under ``missing``)."""
        self.sample()
        end_wall = time.time() if now is None else now
        wall = max(end_wall - self._start_wall, 1e-9)
        out: Dict[str, Dict[str, Any]] = {}
        for program in self.names:
            processes = [p for p, c in self._counted.items() if c.program == program]
            pids = self._pids(processes)
            if self.by_daemon:
                per_daemon, missing = self._per_daemon(program, wall)
                rss = [sum(values) for values in zip(*(self._rss.get(d["daemon"], [])
                                                       for d in per_daemon))]
                if not per_daemon and not missing:
                    continue
            elif not pids:
                continue
            else:
                rss = self._rss.get(program, [])
            entry: Dict[str, Any] = {
                "daemons": len(per_daemon) if self.by_daemon else len(pids),
                "pids": pids}
            entry.update(self._figures(processes, rss, wall))
            entry["window_s"] = round(wall, 3)
            # "daemon": the named daemons only; "name": every process of the program.
            entry["counted_by"] = "daemon" if self.by_daemon else "name"
            entry["processes"] = {str(p): self._one(p, processes, wall) for p in pids}
            if self.by_daemon:
                entry["per_daemon"] = per_daemon
                entry["missing"] = missing
            out[program] = entry
        self._started = False
        return out
