"""Where each Ceph release comes from, and how to run its programs.

Pacific is Debian bookworm's own Ceph, run natively. Newer releases come from a
newer Debian suite, installed once into a cached chroot and run inside it.
"""
import os
import sys
from typing import Dict, List, Optional, Sequence

from . import chroot, hostpackages

# Everything a local cluster runs: the daemons, the CLI tools and HAProxy.
PACKAGES = ['ceph-mon', 'ceph-mgr', 'ceph-osd', 'radosgw', 'ceph-common',
            'haproxy', 'python3-yaml', 'uuid-runtime', 'iproute2', 'openssl']

# The programs whose presence says a release is installed.
PROGRAMS = ['ceph', 'ceph-mon', 'ceph-mgr', 'ceph-osd', 'radosgw',
            'radosgw-admin', 'ceph-authtool', 'monmaptool', 'haproxy']


class ReleaseError(Exception):
    pass


class Release:
    """A Ceph release and the root file system its programs run from."""

    def __init__(self, name: str, suite: str, native: bool) -> None:
        self.name = name
        self.suite = suite
        self.native = native

    @property
    def root(self) -> str:
        return '/' if self.native else chroot.chroot_dir(self.name)

    def path(self, inside: str) -> str:
        """The host path of a file that the release's programs see at `inside`."""
        return os.path.join(self.root, inside.lstrip('/'))

    def argv(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None) -> List[str]:
        """A command line that runs `argv` with this release's programs."""
        prefix: List[str] = []
        if not self.native:
            prefix = ['chroot', self.root]
        if env:
            prefix += ['env'] + ['%s=%s' % kv for kv in sorted(env.items())]
        return prefix + list(argv)

    def installed(self) -> bool:
        return all(os.path.exists(self.path('/usr/bin/' + p)) or
                   os.path.exists(self.path('/usr/sbin/' + p)) for p in PROGRAMS)

    def ensure_installed(self, log: 'Logger') -> None:
        if self.native:
            self._install_native(log)
        else:
            chroot.ensure_chroot(self.name, self.suite, PACKAGES, log)
        if not self.installed():
            raise ReleaseError('%s: packages installed but programs missing in %s'
                               % (self.name, self.root))

    def _install_native(self, log: 'Logger') -> None:
        if self.installed() and _host_suite() == self.suite:
            return
        if _host_suite() != self.suite:
            raise ReleaseError(
                'release %s runs natively only on Debian %s; this host is %s'
                % (self.name, self.suite, _host_suite() or 'unknown'))
        log('installing %s packages with apt' % self.name)
        try:
            hostpackages.apt_install(PACKAGES)
        except hostpackages.InstallError as e:
            raise ReleaseError(str(e))

    def mount(self, own: Sequence[str], shared: Sequence[str] = (),
              netns: bool = False) -> None:
        """Make host paths visible at the same place inside the release's root: a
        cluster's `own`, and those `shared` with every other cluster of the root.

        `netns` adds the host's named network namespaces, for
        `nsenter --net=/run/netns/...` inside the root (`ip netns exec` and
        `ip -n` do not work in a chroot: they need `/` to be a mount point).
        """
        if not self.native:
            chroot.mount_into(self.root, own, shared, netns)

    def unmount(self, own: Sequence[str], shared: Sequence[str] = ()) -> None:
        if not self.native:
            chroot.unmount_from(self.root, own, shared)


Logger = chroot.Logger

RELEASES = {
    'pacific': Release('pacific', 'bookworm', native=True),
    'reef': Release('reef', 'trixie', native=False),
    'tentacle': Release('tentacle', 'sid', native=False),
}


def get(name: str) -> Release:
    try:
        return RELEASES[name]
    except KeyError:
        raise ReleaseError('unknown release %r (choose from %s)'
                           % (name, ', '.join(RELEASES)))


def _host_suite() -> str:
    try:
        with open('/etc/os-release') as f:
            for line in f:
                if line.startswith('VERSION_CODENAME='):
                    return line.split('=', 1)[1].strip().strip('"')
    except OSError:
        pass
    return ''


def stderr_log(msg: str) -> None:
    sys.stderr.write('cluster: %s\n' % msg)
    sys.stderr.flush()
