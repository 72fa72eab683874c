"""A CPU quota for each daemon, as a container runtime's `--cpus=N` sets one.

Each held daemon gets a cgroup of its own under its cluster's (`rgwbench-<fsid>`),
with a quota of N cores: `cpu.max` where the cpu controller is on cgroup v2, the CFS
quota of cgroup v1 where it is still there (a hybrid hierarchy, as on this kind of
machine). The daemon joins its cgroup in the shell that execs it, so that every thread
it ever starts is held. `cluster stop` removes the cluster's cgroups.

Standard library only: the test orchestrator loads this file by path (localorch/tool.py).
"""
import os
from typing import List, Optional, Tuple

CGROUP_ROOT = '/sys/fs/cgroup'
# The period `--cpus` uses: N cores is a quota of N periods in each period.
PERIOD_US = 100000
# The kernel takes no quota below 1 ms.
MIN_QUOTA_US = 1000
V1, V2 = 1, 2


class NoCpuController(Exception):
    """No cgroup cpu controller this process can make cgroups in."""


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def _write(path: str, text: str) -> None:
    with open(path, 'w') as f:
        f.write(text)


def cpu_controller(root: str = CGROUP_ROOT) -> Tuple[str, int]:
    """Where the cpu controller is mounted, and its cgroup version."""
    if 'cpu' in _read(os.path.join(root, 'cgroup.controllers')).split():
        return root, V2
    for name in ('cpu,cpuacct', 'cpu'):
        path = os.path.join(root, name)
        if os.path.isfile(os.path.join(path, 'cpu.cfs_quota_us')):
            return path, V1
    unified = os.path.join(root, 'unified')
    if 'cpu' in _read(os.path.join(unified, 'cgroup.controllers')).split():
        return unified, V2
    raise NoCpuController('no cgroup cpu controller is mounted under %s' % root)


def quota_us(cores: float) -> int:
    return max(MIN_QUOTA_US, int(round(cores * PERIOD_US)))


class CpuQuotas:
    """The CPU quotas of one cluster's daemons (`cluster_id`: its fsid's first part)."""

    def __init__(self, cluster_id: str, root: str = CGROUP_ROOT) -> None:
        self.cluster_id = cluster_id
        self.root = root

    def _cluster(self) -> Tuple[str, int]:
        mount, version = cpu_controller(self.root)
        return os.path.join(mount, 'rgwbench-%s' % self.cluster_id), version

    def group(self, daemon_name: str) -> str:
        return os.path.join(self._cluster()[0], daemon_name)

    def cluster_group(self) -> str:
        """The cgroup of the cluster's held daemons (NoCpuController where there is none)."""
        return self._cluster()[0]

    def check(self) -> None:
        """NoCpuController unless a daemon's cgroup can be made and given a quota."""
        cluster, version = self._cluster()
        try:
            os.makedirs(cluster, exist_ok=True)
        except OSError as e:
            raise NoCpuController('cannot make the cgroup %s: %s' % (cluster, e))
        if version == V2 and 'cpu' not in _read(
                os.path.join(os.path.dirname(cluster), 'cgroup.subtree_control')).split():
            raise NoCpuController('the cpu controller is not enabled for the cgroups '
                                  'under %s' % os.path.dirname(cluster))

    def hold(self, daemon_name: str, cores: float) -> None:
        """The daemon's cgroup made (or kept) with a quota of `cores`."""
        self.check()
        cluster, version = self._cluster()
        group = os.path.join(cluster, daemon_name)
        if version == V2:
            # Controllers a child gets are those its parent enables for its children.
            _write(os.path.join(cluster, 'cgroup.subtree_control'), '+cpu')
        os.makedirs(group, exist_ok=True)
        if version == V2:
            _write(os.path.join(group, 'cpu.max'), '%d %d' % (quota_us(cores), PERIOD_US))
        else:
            _write(os.path.join(group, 'cpu.cfs_period_us'), str(PERIOD_US))
            _write(os.path.join(group, 'cpu.cfs_quota_us'), str(quota_us(cores)))

    def join_argv(self, daemon_name: str, command: List[str]) -> List[str]:
        """`command` started in the daemon's cgroup (its pid stays the command's)."""
        procs = os.path.join(self.group(daemon_name), 'cgroup.procs')
        return ['sh', '-c', 'echo $$ > "$0" && exec "$@"', procs] + list(command)

    def cores(self, daemon_name: str) -> Optional[float]:
        """The quota a daemon's cgroup holds, in cores (None: it has no cgroup or no
        quota)."""
        try:
            cluster, version = self._cluster()
        except NoCpuController:
            return None
        group = os.path.join(cluster, daemon_name)
        if version == V2:
            parts = _read(os.path.join(group, 'cpu.max')).split()
            if len(parts) != 2 or parts[0] == 'max':
                return None
            return int(parts[0]) / int(parts[1])
        quota = _read(os.path.join(group, 'cpu.cfs_quota_us')).strip()
        period = _read(os.path.join(group, 'cpu.cfs_period_us')).strip()
        if not quota or not period or int(quota) < 0:
            return None
        return int(quota) / int(period)

    def pids(self, daemon_name: str) -> List[int]:
        try:
            text = _read(os.path.join(self.group(daemon_name), 'cgroup.procs'))
        except NoCpuController:
            return []
        return [int(p) for p in text.split()]

    def release(self, daemon_name: str) -> None:
        """Remove the daemon's cgroup (once its process has stopped; a process still
        in it goes back to the root cgroup first), and the cluster's once it holds no
        other: a cluster without quotas leaves no cgroup behind."""
        try:
            cluster, _ = self._cluster()
        except NoCpuController:
            return
        self._remove(os.path.join(cluster, daemon_name), os.path.dirname(cluster))
        if os.path.isdir(cluster) and not any(
                os.path.isdir(os.path.join(cluster, n)) for n in os.listdir(cluster)):
            self._remove(cluster, os.path.dirname(cluster))

    def release_all(self) -> List[str]:
        """Remove every cgroup of the cluster; the daemons removed."""
        try:
            cluster, _ = self._cluster()
        except NoCpuController:
            return []
        if not os.path.isdir(cluster):
            return []
        names = sorted(n for n in os.listdir(cluster)
                       if os.path.isdir(os.path.join(cluster, n)))
        for name in names:
            self._remove(os.path.join(cluster, name), os.path.dirname(cluster))
        self._remove(cluster, os.path.dirname(cluster))
        return names

    @staticmethod
    def _remove(group: str, root: str) -> None:
        if not os.path.isdir(group):
            return
        for pid in _read(os.path.join(group, 'cgroup.procs')).split():
            try:
                _write(os.path.join(root, 'cgroup.procs'), pid)
            except OSError:
                pass  # it ended meanwhile
        os.rmdir(group)
