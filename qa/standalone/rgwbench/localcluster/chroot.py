"""A cached Debian chroot holding a newer Ceph release than the host's.

Built once with debootstrap from the mirror the host's own apt uses, then
apt-get inside it. The cache lives outside any repository (RGWBENCH_CACHE,
default /var/cache/rgwbench) and is shared by every cluster of that release.
"""
import contextlib
import fcntl
import glob
import os
import re
import shutil
import subprocess
from typing import Callable, Iterator, List, Sequence

Logger = Callable[[str], None]

READY_MARK = '.rgwbench-ready'
# Mounted for every cluster that runs in the chroot; removed with the last one.
# The host's cgroups too, as a host shows them: an agent reads its CPU quota's count.
SYSTEM_MOUNTS = (('proc', 'proc', '/proc'), ('sysfs', 'sysfs', '/sys'),
                 ('rbind', '/sys/fs/cgroup', '/sys/fs/cgroup'),
                 ('bind', '/dev', '/dev'), ('tmpfs', 'tmpfs', '/dev/shm'))
# Where `ip netns` keeps named network namespaces (/var/run is a link to /run).
NETNS_DIR = '/run/netns'


class ChrootError(Exception):
    pass


def cache_dir() -> str:
    return os.environ.get('RGWBENCH_CACHE', '/var/cache/rgwbench')


def chroot_dir(release: str) -> str:
    return os.path.join(cache_dir(), 'chroot-' + release)


def host_mirror() -> str:
    """The Debian mirror the host's apt is configured with."""
    texts: List[str] = []
    for path in ['/etc/apt/sources.list'] + sorted(glob.glob('/etc/apt/sources.list.d/*')):
        try:
            with open(path) as f:
                texts.append(f.read())
        except OSError:
            continue
    uris: List[str] = []
    for text in texts:
        # one-line style: deb [opts] URI suite components
        uris += re.findall(r'^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+\S+\s+main', text, re.M)
        # deb822 style: a URIs: field
        uris += re.findall(r'^URIs:\s*(\S+)', text, re.M)
    for uri in uris:
        if uri.rstrip('/').endswith('/debian'):
            return uri.rstrip('/')
    raise ChrootError('no Debian mirror found in the host apt sources')


def _run(cmd: Sequence[str], what: str) -> None:
    proc = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True,
                          env=dict(os.environ, DEBIAN_FRONTEND='noninteractive',
                                   LC_ALL='C'))
    if proc.returncode != 0:
        raise ChrootError('%s failed (%s):\n%s' % (what, ' '.join(cmd), proc.stdout[-3000:]))


def ensure_chroot(release: str, suite: str, packages: Sequence[str], log: Logger) -> None:
    root = chroot_dir(release)
    if os.path.exists(os.path.join(root, READY_MARK)):
        return
    os.makedirs(cache_dir(), exist_ok=True)
    with open(os.path.join(cache_dir(), 'build-%s.lock' % release), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(root, READY_MARK)):
            return
        _build(root, suite, packages, log)


def _build(root: str, suite: str, packages: Sequence[str], log: Logger) -> None:
    staging = root + '.building'
    if os.path.exists(staging):
        _unmount_all_under(staging)
        shutil.rmtree(staging)
    mirror = host_mirror()
    log('building a Debian %s chroot for this release in %s (once; a few minutes)'
        % (suite, root))
    _run(['debootstrap', '--variant=minbase', suite, staging, mirror], 'debootstrap')
    with open(os.path.join(staging, 'etc/apt/sources.list'), 'w') as f:
        f.write('deb %s %s main\n' % (mirror, suite))
    # Keep package scripts from starting services inside the chroot.
    policy = os.path.join(staging, 'usr/sbin/policy-rc.d')
    with open(policy, 'w') as f:
        f.write('#!/bin/sh\nexit 101\n')
    os.chmod(policy, 0o755)
    for name in ('hosts', 'hostname'):
        if os.path.exists('/etc/' + name):
            shutil.copy('/etc/' + name, os.path.join(staging, 'etc', name))
    _mount_system(staging)
    try:
        apt = ['chroot', staging, 'apt-get', '-o', 'Acquire::Check-Valid-Until=false',
               '-o', 'Dpkg::Options::=--force-confdef']
        _run(apt + ['update', '-qq'], 'apt-get update in the chroot')
        # Some postinst scripts (ceph-mon's on sid) fail without systemd; the
        # programs themselves are unpacked and work, so a failed configure is
        # tolerated and checked by looking for the programs afterwards.
        proc = subprocess.run(apt + ['install', '-y', '-qq', '--no-install-recommends']
                              + list(packages),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True,
                              env=dict(os.environ, DEBIAN_FRONTEND='noninteractive',
                                       LC_ALL='C'))
        if proc.returncode != 0:
            log('apt-get install in the chroot reported errors; checking what was unpacked')
            subprocess.run(['chroot', staging, 'dpkg', '--configure', '-a'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        missing = [p for p in ('usr/bin/ceph', 'usr/bin/ceph-mon', 'usr/bin/ceph-mgr',
                               'usr/bin/ceph-osd', 'usr/bin/radosgw', 'usr/sbin/haproxy')
                   if not os.path.exists(os.path.join(staging, p))]
        if missing:
            raise ChrootError('chroot install is missing %s:\n%s'
                              % (', '.join(missing), proc.stdout[-3000:]))
        subprocess.run(['chroot', staging, 'apt-get', 'clean'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        _unmount_all_under(staging)
    with open(os.path.join(staging, READY_MARK), 'w') as f:
        f.write(suite + '\n')
    os.rename(staging, root)
    log('chroot ready')


def _mountpoints() -> List[str]:
    points = []
    with open('/proc/self/mountinfo') as f:
        for line in f:
            # octal escapes (\040 for a space) are how mountinfo writes odd names
            points.append(line.split()[4].encode().decode('unicode_escape'))
    return points


def _is_mounted(path: str) -> bool:
    return os.path.realpath(path) in _mountpoints()


def _mount_system(root: str) -> None:
    # The root a mount point of its own, and private: programs in the chroot
    # that make mount namespaces (unshare, ip netns) need `/` to be a mount.
    if not _is_mounted(root):
        _run(['mount', '--rbind', root, root], 'mount')
        _run(['mount', '--make-rprivate', root], 'mount')
    for fstype, source, target in SYSTEM_MOUNTS:
        where = os.path.join(root, target.lstrip('/'))
        if _is_mounted(where):
            continue
        os.makedirs(where, exist_ok=True)
        if fstype == 'bind':
            _run(['mount', '--bind', source, where], 'mount')
        elif fstype == 'rbind':
            # A slave: an unmount in the root never reaches the host's own mounts.
            _run(['mount', '--rbind', source, where], 'mount')
            _run(['mount', '--make-rslave', where], 'mount')
        else:
            _run(['mount', '-t', fstype, source, where], 'mount')


def _unmount_all_under(root: str) -> None:
    """Everything mounted at or under `root`, including mounts that an
    unmount on top of them brings back into view."""
    real = os.path.realpath(root)
    for _ in range(10):
        points = [p for p in _mountpoints() if p == real or p.startswith(real + '/')]
        if not points:
            return
        for point in sorted(set(points), key=len, reverse=True):
            subprocess.run(['umount', '-l', point], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)


def _mount_netns(root: str) -> None:
    """The host's named network namespaces at /run/netns (and /var/run/netns).

    A recursive bind brings the namespaces there now; as a slave mount it also
    gets the ones added or deleted later, and an unmount inside the root never
    reaches the host's own /run/netns. Unmounted with the system mounts.
    """
    if not os.path.isdir(NETNS_DIR):
        return
    where = os.path.realpath(os.path.join(root, NETNS_DIR.lstrip('/')))
    points = set(_mountpoints())
    if where in points:
        # Stale if the host's /run/netns was mounted anew since: then
        # namespaces made there are missing here.
        missing = [n for n in os.listdir(NETNS_DIR)
                   if os.path.join(NETNS_DIR, n) in points
                   and os.path.join(where, n) not in points]
        if not missing:
            return
        _run(['umount', '-l', where], 'umount')
    os.makedirs(where, exist_ok=True)
    _run(['mount', '--rbind', NETNS_DIR, where], 'mount')
    _run(['mount', '--make-rslave', where], 'mount')


@contextlib.contextmanager
def _mounts_locked(root: str) -> Iterator[None]:
    """One cluster at a time mounts into or unmounts from a root that several share:
    a cluster that stops must not take the system mounts from under one that starts."""
    with open(os.path.realpath(root) + '.mounts.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _inside(root: str, path: str) -> str:
    return os.path.join(os.path.realpath(root), os.path.realpath(path).lstrip('/'))


def mount_into(root: str, own: Sequence[str], shared: Sequence[str] = (),
               netns: bool = False) -> None:
    """A cluster's own paths and those every cluster of the root uses (`shared`)."""
    with _mounts_locked(root):
        _mount_system(root)
        if netns:
            _mount_netns(root)
        for path in list(own) + list(shared):
            where = _inside(root, path)
            if _is_mounted(where):
                if _same_folder(path, where):
                    continue
                # A folder removed and made again at the same path (a new clone of the
                # repository) left its old mount here, which shows the removed folder.
                _run(['umount', '-l', where], 'umount')
            os.makedirs(where, exist_ok=True)
            _run(['mount', '--bind', path, where], 'mount')


def _same_folder(path: str, where: str) -> bool:
    try:
        a, b = os.stat(path), os.stat(where)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def other_clusters_paths(root: str, shared: Sequence[str]) -> List[str]:
    """Paths still mounted in the root that are neither its system mounts nor `shared`:
    another cluster's, which may have no process running yet. A path whose folder is
    gone from the host is a cluster removed without a stop: not counted."""
    real = os.path.realpath(root)
    # Recursive mounts: what is under them is theirs. A shared path is bound alone,
    # so a cluster's folder inside it is a mount of its own.
    recursive = [_inside(root, target) for _, _, target in SYSTEM_MOUNTS]
    recursive.append(_inside(root, NETNS_DIR))
    alone = {_inside(root, path) for path in shared}
    return sorted(p for p in set(_mountpoints()) if p.startswith(real + '/')
                  and p not in alone and os.path.isdir(p[len(real):])
                  and not any(p == c or p.startswith(c + '/') for c in recursive))


def unmount_from(root: str, own: Sequence[str], shared: Sequence[str] = ()) -> None:
    """Unmount a cluster's own paths; the rest goes with the last cluster: once no
    process runs in the root and no other cluster's path is mounted there."""
    with _mounts_locked(root):
        for path in own:
            where = _inside(root, path)
            if _is_mounted(where):
                _run(['umount', '-l', where], 'umount')
        if not processes_in(root) and not other_clusters_paths(root, shared):
            _unmount_all_under(root)


def processes_in(root: str) -> List[int]:
    real = os.path.realpath(root)
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            if os.readlink('/proc/%s/root' % entry) == real:
                pids.append(int(entry))
        except OSError:
            continue
    return pids
