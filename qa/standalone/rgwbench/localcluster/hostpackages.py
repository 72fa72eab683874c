"""Every program the project's tools and tests run, and the Debian package of each.

`cluster install` installs the host's packages with apt before anything else,
so a fresh machine needs nothing by hand. The programs a Ceph release brings
(run from the host for Pacific, from the release's chroot otherwise) are
listed apart: the release's own install provides them. A unit test reads the
code's command lines and fails when one names a program missing here.
"""
import os
import shutil
import subprocess
from typing import Callable, Dict, List

Logger = Callable[[str], None]

# Run on the host by the cluster tool, its orchestrator backend and the demo.
HOST: Dict[str, str] = {
    'apt-get': 'apt',
    'cat': 'coreutils',
    'chroot': 'coreutils',
    'rm': 'coreutils',
    'sleep': 'coreutils',
    'debootstrap': 'debootstrap',
    'dpkg': 'dpkg',
    'dpkg-deb': 'dpkg',
    'dpkg-query': 'dpkg',
    'ip': 'iproute2',
    'ss': 'iproute2',
    'mount': 'mount',
    'umount': 'mount',
    'nsenter': 'util-linux',
    'unshare': 'util-linux',
    'openssl': 'openssl',
    'python3': 'python3',
    'sh': 'dash',
    'sudo': 'sudo',
}

# Run for a cluster started with --containers (and so by the tests).
CONTAINERS: Dict[str, str] = {
    'podman': 'podman',
    'runc': 'runc',
}

# Run for a cluster started with --orchestrator cephadm: cephadm runs every daemon
# in podman with `--init`, and its mgr module reaches each host over SSH.
CEPHADM: Dict[str, str] = {
    **CONTAINERS,
    'catatonit': 'catatonit',
    'sshd': 'openssh-server',
    'ssh-keygen': 'openssh-client',
    'losetup': 'mount',
    'truncate': 'coreutils',
    'tar': 'tar',
    'cp': 'coreutils',
}

# Run by the tests only: the web panel's are driven in headless Chromium.
TESTS: Dict[str, str] = {
    'chromium': 'chromium',
    'chromedriver': 'chromium-driver',
    'ps': 'procps',
    # bench/engine_cost.py takes the engine as it was from the repository
    'git': 'git',
    **CEPHADM,
}

# Run by `cluster dashboard`: the patch applied to the release's dashboard, its
# frontend built with Node (Tentacle's Angular 18 needs Node 18.19.1 or newer).
DASHBOARD: Dict[str, str] = {
    'patch': 'patch',
    'node': 'nodejs',
    'npm': 'npm',
    'npx': 'npm',
}

# Brought by a Ceph release's packages (releases.PACKAGES), host or chroot.
RELEASE: Dict[str, str] = {
    'ceph': 'ceph-common',
    'rados': 'ceph-common',
    'radosgw-admin': 'radosgw',
    'ceph-authtool': 'ceph-common',
    'monmaptool': 'ceph-common',
    'ceph-mon': 'ceph-mon',
    'ceph-mgr': 'ceph-mgr',
    'ceph-osd': 'ceph-osd',
    'radosgw': 'radosgw',
    'haproxy': 'haproxy',
}

# Where a program may be found though it is not on root's PATH in every shell.
_SBIN = ('/usr/sbin', '/sbin', '/usr/bin', '/bin')


def missing_packages(programs: Dict[str, str]) -> List[str]:
    """The packages whose program is not installed, each once, in a stable order."""
    wanted: List[str] = []
    for program, package in programs.items():
        found = shutil.which(program) or any(
            os.access(os.path.join(d, program), os.X_OK) for d in _SBIN)
        if not found and package not in wanted:
            wanted.append(package)
    return wanted


def ensure(programs: Dict[str, str], log: Logger) -> None:
    """Install with apt the packages of the programs that are missing."""
    wanted = missing_packages(programs)
    if not wanted:
        return
    log('installing %s with apt' % ' '.join(wanted))
    apt_install(wanted)
    still = missing_packages(programs)
    if still:
        raise InstallError('installed, yet programs of %s are still missing'
                           % ', '.join(still))


def apt_install(packages: List[str]) -> None:
    """apt-get update, then install the packages (no recommends), as root."""
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    for cmd in (['apt-get', 'update', '-qq'],
                ['apt-get', 'install', '-y', '-qq', '--no-install-recommends'] + packages):
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            raise InstallError('%s failed:\n%s' % (' '.join(cmd), proc.stdout[-2000:]))


class InstallError(Exception):
    pass
