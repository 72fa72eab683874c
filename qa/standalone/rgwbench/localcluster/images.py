"""The container image a cephadm cluster runs, built from a release's chroot.

There is no registry: the image is the release's cached chroot (chroot.py) with
cephadm and its mgr module added by apt, imported into podman. The same image
serves cephadm's ingress daemons (their images are settings of cephadm's): it
holds the distribution's HAProxy and keepalived, and an entrypoint that starts
them as the images cephadm is made for do (Ceph's daemons name their own). The chroot is
copied, never changed. The image and the release's own `cephadm` program are
cached under the cache folder, keyed by the release, the chroot's Ceph version
and this file's build steps, so a fresh machine builds once (about a minute).
"""
import glob
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import List

from . import chroot, releases
from .cluster import ClusterError
from .containers import RUNTIME
from .venvs import cached_venv, run_step

# Added to the chroot's packages: cephadm itself, its mgr module, what
# ceph-volume calls to list block devices, and the ingress daemons.
PACKAGES = ['cephadm', 'ceph-mgr-cephadm', 'udev', 'gdisk', 'haproxy', 'keepalived']
# Pacific's cephadm module reaches hosts through remoto, which Debian does not ship
# (bookworm's ceph-mgr-cephadm 16.2.15 imports it and declares no dependency: as
# packaged it cannot run). Upstream's Pacific images carry it; this one gets execnet,
# which it runs on, from Debian, and remoto itself (pure Python) from PyPI, through
# a cached virtualenv of the host's, whose package folder is copied into the image.
RELEASE_EXTRAS = {'pacific': (['python3-execnet'], ['remoto==1.2.1'])}
# cephadm starts HAProxy as `haproxy -f <its config>`, a config that says `daemon`:
# in the foreground under a master process, as the HAProxy image's own entrypoint
# does, else the container ends as HAProxy forks. keepalived it starts with no
# command, the one in $KEEPALIVED_CMD, as the keepalived image it is made for does.
ENTRYPOINT = '/usr/local/bin/rgwbench-entrypoint'
ENTRYPOINT_SCRIPT = '''#!/bin/sh
if [ "$1" = haproxy ]; then
    shift
    exec haproxy -W -db "$@"
fi
if [ $# -eq 0 ] && [ -n "$KEEPALIVED_CMD" ]; then
    exec $KEEPALIVED_CMD
fi
[ $# -eq 0 ] && exec /bin/bash
exec "$@"
'''
IMAGE_CHANGES = ['ENTRYPOINT ["%s"]' % ENTRYPOINT, 'CMD []']
# cephadm's settings `mgr/cephadm/container_image_<daemon>` this image is given for.
INGRESS_DAEMONS = ('haproxy', 'keepalived')

# Inside ceph-mgr, an embedded Python, `sys.executable` is ceph-mgr itself, so
# multiprocessing (cephadm's module starts a ThreadPool, whose resource tracker
# is a new interpreter) runs the wrong program and the module fails at start.
SITECUSTOMIZE = '''
# rgwbench image: multiprocessing in an embedded interpreter needs a real python
import sys as _rgwbench_sys
if not _rgwbench_sys.executable.rsplit('/', 1)[-1].startswith('python'):
    import multiprocessing as _rgwbench_mp
    _rgwbench_mp.set_executable('/usr/bin/python3')
'''

# Runs in a private mount namespace (so every mount ends with it), as root.
_INSTALL_SCRIPT = '''set -e
root=$1; shift
mount --bind "$SOURCE" "$SOURCE_VIEW"
cp -a "$SOURCE_VIEW/." "$root/"
umount "$SOURCE_VIEW"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
chroot "$root" apt-get -o Acquire::Check-Valid-Until=false update -qq
chroot "$root" apt-get install -y -qq --no-install-recommends "$@"
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/*
'''


class ImageError(Exception):
    pass


@dataclass(frozen=True)
class CephImage:
    """A built image and the cephadm program of the same packages."""
    name: str
    cephadm: str


def _ceph_version(root: str) -> str:
    """The version of ceph-common in a Debian root, from dpkg's status file."""
    package = ''
    with open(os.path.join(root, 'var/lib/dpkg/status')) as f:
        for line in f:
            if line.startswith('Package: '):
                package = line.split(':', 1)[1].strip()
            elif line.startswith('Version: ') and package == 'ceph-common':
                return line.split(':', 1)[1].strip()
    raise ImageError('no ceph-common in %s' % root)


def _key(release: str, root: str) -> str:
    with open(os.path.abspath(__file__), 'rb') as f:
        steps = f.read()
    digest = hashlib.sha256(steps + _ceph_version(root).encode()).hexdigest()
    return '%s-%s' % (release, digest[:12])


def _image_exists(name: str) -> bool:
    return subprocess.run(RUNTIME + ['image', 'exists', name],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def ensure_image(release: str, log: chroot.Logger) -> CephImage:
    """The release's image, built once from its chroot. A release that runs natively
    (Pacific, bookworm's own Ceph) gets a chroot of its suite for the image alone: the
    host's root is not copied into an image."""
    source = chroot.chroot_dir(release)
    if not os.path.exists(os.path.join(source, chroot.READY_MARK)):
        found = releases.get(release)
        if not found.native:
            raise ImageError('no chroot of %s: run `cluster install --release %s` first'
                             % (release, release))
        try:
            chroot.ensure_chroot(release, found.suite, releases.PACKAGES, log)
        except chroot.ChrootError as e:
            raise ImageError(str(e))
    key = _key(release, source)
    folder = os.path.join(chroot.cache_dir(), 'cephadm-' + key)
    image = CephImage(name='localhost/rgwbench-ceph:' + key,
                      cephadm=os.path.join(folder, 'cephadm'))
    if os.path.exists(image.cephadm) and _image_exists(image.name):
        return image
    log('building the container image %s from the %s chroot (once)' % (image.name, release))
    os.makedirs(folder, exist_ok=True)
    staging = folder + '.building'
    view = folder + '.source'
    for path in (staging, view):
        if os.path.isdir(path):
            subprocess.run(['umount', '-l', path], stderr=subprocess.DEVNULL)
            shutil.rmtree(path)
        os.makedirs(path)
    packages, requirements = RELEASE_EXTRAS.get(release, ([], []))
    try:
        proc = subprocess.run(
            ['unshare', '-m', '--propagation', 'private', 'sh', '-c', _INSTALL_SCRIPT,
             'install', staging] + PACKAGES + packages,
            env=dict(os.environ, SOURCE=source, SOURCE_VIEW=view,
                     DEBIAN_FRONTEND='noninteractive', LC_ALL='C'),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            raise ImageError('installing %s into a copy of the %s chroot failed:\n%s'
                             % (' '.join(PACKAGES + packages + requirements), release,
                                proc.stdout[-3000:]))
        if requirements:
            _add_python_packages(staging, requirements, log)
        _add_sitecustomize(staging)
        script = os.path.join(staging, ENTRYPOINT.lstrip('/'))
        with open(script, 'w') as f:
            f.write(ENTRYPOINT_SCRIPT)
        os.chmod(script, 0o755)
        tar = subprocess.Popen(['tar', '-C', staging, '--numeric-owner', '-cf', '-', '.'],
                               stdout=subprocess.PIPE)
        changes = [word for change in IMAGE_CHANGES for word in ('--change', change)]
        imported = subprocess.run(RUNTIME + ['import'] + changes + ['-', image.name],
                                  stdin=tar.stdout, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True)
        if tar.stdout is not None:
            tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise ImageError('podman import of %s failed:\n%s'
                             % (image.name, imported.stdout[-2000:]))
        shutil.copy(os.path.join(staging, 'usr/sbin/cephadm'), image.cephadm + '.new')
        os.rename(image.cephadm + '.new', image.cephadm)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(view, ignore_errors=True)
    log('image %s ready' % image.name)
    return image


def _add_python_packages(root: str, requirements: List[str], log: chroot.Logger) -> None:
    """Pure-Python packages from PyPI, copied into the image's system Python."""
    names = [requirement.split('==')[0] for requirement in requirements]

    def check(venv: str) -> None:
        run_step([os.path.join(venv, 'bin', 'python'), '-c', 'import ' + ', '.join(names)],
                 'import ' + ', '.join(names), ClusterError)
    try:
        venv = cached_venv('image-python', requirements, check, log, ClusterError)
    except ClusterError as e:
        raise ImageError(str(e))
    found = glob.glob(os.path.join(venv, 'lib', 'python3*', 'site-packages'))
    target = os.path.join(root, 'usr', 'lib', 'python3', 'dist-packages')
    for name in names:
        shutil.copytree(os.path.join(found[0], name), os.path.join(target, name))


def _add_sitecustomize(root: str) -> None:
    python_dirs = [d for d in os.listdir(os.path.join(root, 'etc'))
                   if d.startswith('python3')]
    if not python_dirs:
        raise ImageError('no /etc/python3.* in the image to hold sitecustomize.py')
    for name in python_dirs:
        with open(os.path.join(root, 'etc', name, 'sitecustomize.py'), 'a') as f:
            f.write(SITECUSTOMIZE)
