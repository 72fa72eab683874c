"""Daemons in podman containers, as cephadm runs them, for clusters started with --containers.

cephadm runs every daemon in a container; rgwbench's agents (a custom
container with `--net=host --pid=host`) and its per-daemon figures depend on
what a container sees. On a cluster started with `--containers`, this backend
runs custom containers and radosgw under podman: the agents with the
container arguments of their spec, radosgw in a PID namespace of its own (as
cephadm's do), so the pid it registers in the service map is not its pid on
the host. There is no registry: every container's root is the release's own
root file system (the host's `/`, or the release's chroot), used read-only
under an overlay, so a container writes nothing into it.

The network is the host's (`--net=host` in the host's network namespace,
which the caller has entered) and so is the host name (`--uts=host`).
Environment values are passed by name only, so that no value shows in a
process list. podman needs runc and cgroupfs on this kind of machine (hybrid
cgroups; its default crun refuses), and explicit limits, each at most what
the caller has.
"""
import resource
import subprocess
from typing import Any, Dict, List, Optional, Sequence

LABEL = 'rgwbench.cluster'
RUNTIME = ['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs']
NOFILE = 65536
# The most podman lets a container of root have (its own default); a higher
# one fails in runc's init for want of CAP_SYS_RESOURCE.
NPROC = 32768


def _limit(kind: int, wanted: int) -> int:
    hard = resource.getrlimit(kind)[1]
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


# A process of the cluster that runs on the machine's root, not in the release's
# chroot: the chroot reaches podman, which is installed on the machine, through
# its /proc/<pid>/root (pid 1's cannot be read on every machine).
HOST_ROOT_ANCHOR = 'host-root'
ANCHOR_ARGV = ['sleep', 'infinity']


class Containers:
    """The podman command lines of one cluster's containers, and their removal.

    host_root: the machine's root as seen from where podman is called (a path
    in /proc), or None when that is the machine's root itself.
    """

    def __init__(self, cluster_dir: str, cluster_id: str, rootfs: str,
                 host_root: Optional[str] = None) -> None:
        self.cluster_dir = cluster_dir
        self.cluster_id = cluster_id
        self.rootfs = rootfs
        self.host_root = host_root

    @classmethod
    def of(cls, cluster_dir: str, state: Dict[str, Any],
           anchor_pid: Optional[int] = None) -> Optional['Containers']:
        """The cluster's containers, if it was started with them.

        anchor_pid: given where the caller runs in the release's chroot (the
        mgr of a release newer than the machine's), the pid of the anchor.
        """
        found = state.get('containers')
        if not found:
            return None
        return cls(cluster_dir, str(state['fsid'])[:8], str(found['rootfs']),
                   '/proc/%d/root' % anchor_pid if anchor_pid else None)

    def outside_chroot(self, argv: List[str]) -> List[str]:
        return argv if self.host_root is None else ['chroot', self.host_root] + argv

    def name(self, daemon_name: str) -> str:
        return 'rgwbench-%s-%s' % (self.cluster_id, daemon_name)

    def argv(self, daemon_name: str, command: Sequence[str], *,
             mounts: Sequence[Sequence[str]] = (), env_names: Sequence[str] = (),
             args: Sequence[str] = (), workdir: Optional[str] = None) -> List[str]:
        """`podman run` of `command` in the foreground; podman passes SIGTERM on to it.

        mounts: (host path, container path) pairs; the cluster's folder is
        always mounted at its own path (configuration, keys, logs).
        args: the container runtime's arguments of the spec (`--pid=host`).
        """
        nproc = _limit(resource.RLIMIT_NPROC, NPROC)
        nofile = _limit(resource.RLIMIT_NOFILE, NOFILE)
        argv = RUNTIME + ['run', '--rm', '--replace', '--name', self.name(daemon_name),
                          '--label', '%s=%s' % (LABEL, self.cluster_id),
                          '--net=host', '--uts=host',
                          '--ulimit=nofile=%d:%d' % (nofile, nofile),
                          '--ulimit=nproc=%d:%d' % (nproc, nproc),
                          '--volume', '%s:%s' % (self.cluster_dir, self.cluster_dir)]
        for source, target in mounts:
            argv += ['--volume', '%s:%s' % (source, target)]
        for name in env_names:
            argv += ['--env', name]
        if workdir:
            argv += ['--workdir', workdir]
        argv += [a for a in args if a not in ('--net=host', '--network=host')]
        # --rootfs ends podman's options: what follows is the command.
        argv += ['--rootfs', '%s:O' % self.rootfs] + list(command)
        return self.outside_chroot(argv)

    def remove(self, daemon_names: Sequence[str]) -> None:
        """Remove the containers of these daemons, if any is left (a killed `podman run`)."""
        if daemon_names:
            self._podman(['rm', '--force', '--ignore', '--time', '5'] +
                         [self.name(n) for n in daemon_names])

    def remove_all(self) -> None:
        """Remove every container of this cluster."""
        found = self._podman(['ps', '--all', '--quiet', '--filter',
                              'label=%s=%s' % (LABEL, self.cluster_id)])
        ids = found.split()
        if ids:
            self._podman(['rm', '--force', '--ignore', '--time', '5'] + ids)

    def _podman(self, args: List[str]) -> str:
        try:
            proc = subprocess.run(self.outside_chroot(RUNTIME + args), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  universal_newlines=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return ''
        return proc.stdout
