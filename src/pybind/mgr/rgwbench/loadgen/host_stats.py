"""Whole-host figures over a sampling window: CPU, network interfaces, the OSDs' CPU.

* CPU from the ``cpu`` line of ``/proc/stat`` (clock ticks since boot): busy is
  everything but ``idle`` and ``iowait``; guest time is already in ``user``
  and ``nice`` and is not added again. ``cpu_pct_mean`` is the window's busy
  share of all the host's cores, ``cpu_pct_peak`` the largest of the shares
  between consecutive samples (about a second each).
* Interfaces from ``/proc/net/dev`` (bytes received and sent since boot), read
  in the sampler's network namespace; loopback is kept apart (``loopback``):
  traffic between daemons of one machine goes there and no NIC carries it.
  The link speed is ``/sys/class/net/<if>/speed`` in Mb/s, None where the
  kernel does not know it (virtual interfaces say -1 or refuse the read).
* OSDs: the ``ceph-osd`` processes of this cluster on this host, those in a
  cephadm unit of the cluster's fsid or started with the configuration file
  (``-c``) of one of the cluster's RGW daemons found here; OSD ids repeat
  between clusters, so an id alone says nothing.
"""

import os
import time
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Set, Tuple

from .proc import (Daemon, command_line, find_daemons, option_values, other_cluster,
                   process_ticks, processes, read_text, rss_kib)

LOOPBACK = "lo"
OSD_PROGRAM = "ceph-osd"


class CpuTimes(NamedTuple):
    """The host's CPU ticks so far: busy, all of them, and how many cores."""
    busy: int
    total: int
    cpus: int


def cpu_times(text: str) -> Optional[CpuTimes]:
    """The ``cpu`` line of a ``/proc/stat`` text; None when it has none."""
    summed: Optional[List[int]] = None
    cpus = 0
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "cpu":
            try:
                summed = [int(v) for v in fields[1:9]]
            except ValueError:
                return None
        elif fields[0].startswith("cpu") and fields[0][3:].isdigit():
            cpus += 1
    if summed is None or len(summed) < 4:
        return None
    total = sum(summed)
    idle = summed[3] + (summed[4] if len(summed) > 4 else 0)
    return CpuTimes(busy=total - idle, total=total, cpus=cpus or 1)


def net_bytes(text: str) -> Dict[str, Tuple[int, int]]:
    """Interface -> (bytes received, bytes sent) of a ``/proc/net/dev`` text."""
    found: Dict[str, Tuple[int, int]] = {}
    for line in text.splitlines():
        name, colon, rest = line.partition(":")
        if not colon or "|" in line:
            continue
        fields = rest.split()
        try:
            found[name.strip()] = (int(fields[0]), int(fields[8]))
        except (IndexError, ValueError):
            continue
    return found


def link_speed_mbit(interface: str, root: str = "/sys/class/net") -> Optional[int]:
    """An interface's link speed in Mb/s; None when unknown."""
    text = read_text(os.path.join(root, interface, "speed"))
    try:
        speed = int(str(text).strip())
    except ValueError:
        return None
    return speed if speed > 0 else None


class HostSampler:
    """Samples this host's CPU, interfaces and the cluster's OSDs over a window."""

    def __init__(self, daemons: Optional[Mapping[str, str]] = None, fsid: str = "",
                 root: str = "/proc", net_root: str = "/sys/class/net",
                 clock_ticks: Optional[int] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``daemons``: name -> host of the cluster's daemons here (the RGWs whose
        configuration file names the cluster's OSDs)."""
        self.daemons = [Daemon(n, h) for n, h in sorted((daemons or {}).items())
                        if Daemon(n, h).program]
        self.fsid = fsid
        self.root = root
        self.net_root = net_root
        self.hz = clock_ticks or os.sysconf("SC_CLK_TCK")
        self.clock = clock
        self._cpu: List[CpuTimes] = []
        self._net: Optional[Dict[str, Tuple[int, int]]] = None
        self._net_last: Dict[str, Tuple[int, int]] = {}
        self._osds: Dict[Tuple[int, int], List[int]] = {}   # (pid, start) -> first, last
        self._osd_rss: List[float] = []
        self._start = self._end = 0.0

    def _read_cpu(self) -> None:
        found = cpu_times(read_text(os.path.join(self.root, "stat")) or "")
        if found is not None:
            self._cpu.append(found)

    def _read_net(self) -> Dict[str, Tuple[int, int]]:
        return net_bytes(read_text(os.path.join(self.root, "net", "dev")) or "")

    def osd_pids(self) -> List[int]:
        """The pids of this cluster's OSDs on this host."""
        named = find_daemons(self.daemons, self.fsid, self.root) if self.daemons else {}
        configs: Set[str] = {c for pids in named.values() for pid in pids
                             for c in option_values(command_line(pid, self.root), "-c", "--conf")}
        unit = "ceph-%s@osd." % self.fsid if self.fsid else None
        found = []
        for pid in sorted(processes([OSD_PROGRAM], self.root)):
            argv = command_line(pid, self.root)
            cgroup = read_text("%s/%d/cgroup" % (self.root, pid)) or ""
            if other_cluster(argv, cgroup, self.fsid):
                continue
            if (unit and unit in cgroup) or configs & set(option_values(argv, "-c", "--conf")):
                found.append(pid)
        return found

    def start(self) -> None:
        self._start = self.clock()
        self._cpu = []
        self._read_cpu()
        self._net = self._read_net()
        self._net_last = dict(self._net)
        self._osds = {}
        self._osd_rss = []
        for pid in self.osd_pids():
            ticks = process_ticks(pid, self.root)
            if ticks is not None:
                self._osds[(pid, ticks.started)] = [ticks.cpu, ticks.cpu]

    def sample(self) -> None:
        self._read_cpu()
        self._net_last.update(self._read_net())
        rss = 0.0
        for (pid, started), seen in self._osds.items():
            ticks = process_ticks(pid, self.root)
            if ticks is None or ticks.started != started:
                continue   # ended: counted with what was seen until its last sample
            seen[1] = ticks.cpu
            rss += (rss_kib(pid, self.root) or 0) / 1024.0
        self._osd_rss.append(rss)

    def _cpu_figures(self) -> Dict[str, Any]:
        if len(self._cpu) < 2:
            return {}
        first, last = self._cpu[0], self._cpu[-1]
        shares = [100.0 * (b.busy - a.busy) / (b.total - a.total)
                  for a, b in zip(self._cpu, self._cpu[1:]) if b.total > a.total]
        if last.total <= first.total or not shares:
            return {}
        return {"cpus": last.cpus,
                "cpu_pct_mean": round(100.0 * (last.busy - first.busy)
                                      / (last.total - first.total), 2),
                "cpu_pct_peak": round(max(shares), 2)}

    def _interface(self, name: str, wall: float) -> Dict[str, Any]:
        before = (self._net or {}).get(name, (0, 0))
        after = self._net_last.get(name, before)
        # A counter that went back (the interface was recreated) counts from zero.
        rx = after[0] - before[0] if after[0] >= before[0] else after[0]
        tx = after[1] - before[1] if after[1] >= before[1] else after[1]
        return {"name": name, "rx_bytes": rx, "tx_bytes": tx,
                "rx_bytes_s": round(rx / wall, 1), "tx_bytes_s": round(tx / wall, 1),
                "speed_mbit": link_speed_mbit(name, self.net_root)}

    def stop(self) -> Dict[str, Any]:
        """Final sample; the window's figures: cpus, cpu_pct_mean, cpu_pct_peak, nics
        (each interface but loopback), loopback, osd (daemons, cpu_cores, rss_mib)."""
        self.sample()
        wall = max(self.clock() - self._start, 1e-9)
        out: Dict[str, Any] = {"window_s": round(wall, 3)}
        out.update(self._cpu_figures())
        names = sorted(set(self._net_last) | set(self._net or {}))
        out["nics"] = [self._interface(n, wall) for n in names if n != LOOPBACK]
        if LOOPBACK in names:
            out["loopback"] = self._interface(LOOPBACK, wall)
        ticks = sum(last - first for first, last in self._osds.values())
        rss = self._osd_rss or [0.0]
        out["osd"] = {"daemons": len({pid for pid, _ in self._osds}),
                      "cpu_cores": round(ticks / float(self.hz) / wall, 4),
                      "rss_mib": round(sum(rss) / len(rss), 2)}
        return out
