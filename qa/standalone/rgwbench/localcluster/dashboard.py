"""The Ceph Dashboard with rgwbench's tab: the release's source, the patch, the build.

The dashboard cannot be extended at runtime, so the tab is a patch to it, as
upstream would merge it (src/pybind/mgr/dashboard in this repository: new files
as files, changes to Ceph's own files as one unified diff). Each step is cached
under RGWBENCH_CACHE (default /var/cache/rgwbench)/dashboard, keyed by what it is
made from, and done again only when that changed:

- src-<tarball>-<sha256>: the release's dashboard (and the mgr's test helpers),
  extracted from Debian's source tarball, fetched from the mirror the host's apt uses;
- npm-<release>-<hash of package.json and lock>: node_modules, from `npm ci`;
- tree-<release>-<hash of source, patch and lock>: the patched dashboard, its
  frontend built for one locale;
- dist-<release>-<hash of source, the patch's frontend files and diff, and lock>:
  that build, copied into every tree of the same frontend (a change to the
  controller alone builds nothing).
"""
import difflib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
import urllib.request
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from . import chroot, hostpackages

Logger = Callable[[str], None]

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
PATCH_ROOT = os.path.join(REPO_ROOT, 'src', 'pybind', 'mgr', 'dashboard')
# Changes to Ceph's own files: applied with `patch -p1` in the dashboard folder.
UPSTREAM_PATCH = 'upstream.patch'
# The same changes to Pacific's backend (the controller's backport; no frontend).
PACIFIC_PATCH = 'pacific.patch'
# Files of the patch folder that are not part of the dashboard.
NOT_OVERLAID = (UPSTREAM_PATCH, PACIFIC_PATCH, 'README.rst')
READY_MARK = '.rgwbench-ready'
LOCALE = 'en-US'
NPM_ENV = {'CYPRESS_INSTALL_BINARY': '0', 'IBM_TELEMETRY_DISABLED': 'true'}
# The Python packages the dashboard and its unit tests import (Debian's
# ceph-mgr-dashboard depends on the first ones; the others are its tests').
PYTHON_PACKAGES = ['python3-bcrypt', 'python3-cherrypy3', 'python3-jwt',
                   'python3-more-itertools', 'python3-openssl', 'python3-prettytable',
                   'python3-requests', 'python3-routes', 'python3-werkzeug', 'python3-yaml',
                   'python3-pytest', 'python3-jsonpatch', 'python3-jsonschema',
                   'python3-natsort', 'python3-jmespath', 'python3-xmltodict',
                   'python3-pyfakefs']


# What Debian's ceph-mgr-dashboard depends on, for its backend on the host.
PACKAGED_PYTHON_PACKAGES = ['python3-bcrypt', 'python3-cherrypy3', 'python3-jwt',
                            'python3-openssl', 'python3-routes', 'python3-werkzeug']


class DashboardError(Exception):
    pass


class Source(NamedTuple):
    """Where a release's dashboard source is: a Debian source package's tarball."""
    package_dir: str      # in the mirror's pool
    tarball: str
    dsc: str              # whose Checksums-Sha256 the tarball must match
    top: str              # the tarball's top folder


class Package(NamedTuple):
    """A release whose dashboard is served as its Debian binary package has it
    (frontend built, without the tab), its backend patched: the REST API only."""
    name: str
    patch: str            # in the patch folder, applied to the package's dashboard
    version_of: str       # the installed package whose version it must have


class LockPin(NamedTuple):
    """A package of the release's lock that the npm registry no longer serves, and
    the nearest version it does (same API; checked by the build and the specs)."""
    name: str
    locked: str
    version: str
    integrity: str


SOURCES: Dict[str, Source] = {
    'tentacle': Source('pool/main/c/ceph', 'ceph_20.2.4+ds.orig.tar.xz',
                       'ceph_20.2.4+ds-1.dsc', 'ceph-20.2.4+ds'),
}
# Pacific's frontend (Angular 12) shares no code with the tab's; it gets the REST API.
PACKAGES: Dict[str, Package] = {
    'pacific': Package('ceph-mgr-dashboard', PACIFIC_PATCH, 'ceph-mgr'),
}
RELEASES = sorted(list(SOURCES) + list(PACKAGES))

# Tentacle's lock names @carbon/charts-angular 1.23.9, which the registry does not
# serve (404); 1.23.6 is the newest 1.23 it has, and wants @carbon/charts 1.23.6.
LOCK_PINS: Dict[str, Sequence[LockPin]] = {
    'tentacle': (
        LockPin('@carbon/charts-angular', '1.23.9', '1.23.6',
                'sha512-xVz8i3l8vGpJUnxc+EjrwBDHrLuv/ggsYosp6oeETG/iAIYzbIDxCgdS/p44ulf6nkf7'
                'BIQZIMKF1HOLtodsMw=='),
        LockPin('@carbon/charts', '1.23.9', '1.23.6',
                'sha512-6bSt8rtVGKxFwOtDAuzX7JHp1uDA9NmAAYh9IQzyK/ybpGWSTKbhp+9L1uX+RmcuEKL+'
                'HQcDIsstb13fVlyhrg=='),
    ),
}


def cache_root() -> str:
    return os.path.join(chroot.cache_dir(), 'dashboard')


def source(release: str) -> Source:
    try:
        return SOURCES[release]
    except KeyError:
        raise DashboardError('the dashboard tab is built for %s only, not %s'
                             % (', '.join(SOURCES), release))


# -- the release's source ---------------------------------------------------------------

def _download(url: str, to: str) -> None:
    with urllib.request.urlopen(url, timeout=60) as answer, open(to + '.part', 'wb') as f:
        shutil.copyfileobj(answer, f, 1 << 20)
    os.rename(to + '.part', to)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def _dsc_sha256(dsc_text: str, tarball: str) -> str:
    found = re.search(r'^Checksums-Sha256:\n((?: .*\n)+)', dsc_text, re.M)
    for line in (found.group(1).splitlines() if found else []):
        fields = line.split()
        if len(fields) == 3 and fields[2] == tarball:
            return fields[0]
    raise DashboardError('%s has no checksum for %s' % ('the .dsc', tarball))


def ensure_source(release: str, log: Logger) -> str:
    """The release's pristine `dashboard` and mgr `tests` folders; their parent (a
    packaged release: its `dashboard` only)."""
    if release in PACKAGES:
        return _ensure_package(PACKAGES[release], log)
    src = source(release)
    downloads = os.path.join(cache_root(), 'downloads')
    os.makedirs(downloads, exist_ok=True)
    with _locked('source-' + release):
        tarball = os.path.join(downloads, src.tarball)
        dsc = os.path.join(downloads, src.dsc)
        mirror = chroot.host_mirror()
        if not os.path.exists(dsc):
            _download('%s/%s/%s' % (mirror, src.package_dir, src.dsc), dsc)
        with open(dsc) as f:
            wanted = _dsc_sha256(f.read(), src.tarball)
        done = os.path.join(cache_root(), 'src-%s-%s' % (src.tarball, wanted[:12]))
        if os.path.exists(os.path.join(done, READY_MARK)):
            return done
        if not os.path.exists(tarball):
            log('downloading %s from the Debian mirror (once; about 245 MB)' % src.tarball)
            _download('%s/%s/%s' % (mirror, src.package_dir, src.tarball), tarball)
        got = _sha256(tarball)
        if got != wanted:
            os.unlink(tarball)
            raise DashboardError('%s: sha256 %s, its .dsc says %s (removed; try again)'
                                 % (src.tarball, got, wanted))
        log('extracting the dashboard from %s' % src.tarball)
        staging = done + '.building'
        shutil.rmtree(staging, ignore_errors=True)
        prefixes = tuple('%s/src/pybind/mgr/%s/' % (src.top, d) for d in ('dashboard', 'tests'))
        with tarfile.open(tarball, 'r:xz') as tar:
            members = [m for m in _members(tar) if m.name.startswith(prefixes)]
            for member in members:
                member.name = member.name[len('%s/src/pybind/mgr/' % src.top):]
            tar.extractall(staging, members=members, filter='data')
        _mark(staging)
        os.rename(staging, done)
        return done


def _ensure_package(package: Package, log: Logger) -> str:
    """The binary package's dashboard, of the version of the installed Ceph."""
    version = subprocess.run(['dpkg-query', '-W', '-f', '${Version}', package.version_of],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    if not version:
        raise DashboardError('%s is not installed: no %s to match' % (package.version_of,
                                                                      package.name))
    downloads = os.path.join(cache_root(), 'downloads')
    os.makedirs(downloads, exist_ok=True)
    with _locked('package-' + package.name):
        done = os.path.join(cache_root(), 'pkg-%s-%s' % (package.name, version))
        if os.path.exists(os.path.join(done, READY_MARK)):
            return done
        log('downloading %s %s (apt checks its signature)' % (package.name, version))
        proc = subprocess.run(['apt-get', 'download', '%s=%s' % (package.name, version)],
                              cwd=downloads, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        if proc.returncode != 0:
            raise DashboardError('apt-get download %s failed:\n%s'
                                 % (package.name, proc.stdout[-2000:]))
        deb = os.path.join(downloads, '%s_%s_all.deb' % (package.name,
                                                         version.split(':')[-1]))
        staging = done + '.building'
        shutil.rmtree(staging, ignore_errors=True)
        extracted = staging + '.x'
        shutil.rmtree(extracted, ignore_errors=True)
        subprocess.run(['dpkg-deb', '-x', deb, extracted], check=True)
        os.makedirs(staging)
        os.rename(os.path.join(extracted, 'usr', 'share', 'ceph', 'mgr', 'dashboard'),
                  os.path.join(staging, 'dashboard'))
        shutil.rmtree(extracted)
        _mark(staging)
        os.rename(staging, done)
        return done


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    for member in tar:
        if member.isfile() or member.isdir():
            yield member


# -- the patch ---------------------------------------------------------------------------

def overlay_files(frontend: bool = True) -> List[str]:
    """The patch's new files, relative to the dashboard folder (`frontend` False:
    the backend's only)."""
    found = []
    for folder, dirs, files in os.walk(PATCH_ROOT):
        dirs[:] = sorted(d for d in dirs if d not in ('__pycache__', 'node_modules'))
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(folder, name), PATCH_ROOT)
            if rel not in NOT_OVERLAID and not name.endswith('.pyc') and (
                    frontend or not rel.startswith('frontend/')):
                found.append(rel)
    return found


def patch_hash(frontend_only: bool = False) -> str:
    """The patch's content; `frontend_only`: of what the frontend build reads (the
    frontend's files and the diff), so a change to the controller rebuilds nothing."""
    digest = hashlib.sha256()
    files = [rel for rel in overlay_files() if rel.startswith('frontend/') or not frontend_only]
    for rel in files + [UPSTREAM_PATCH] + ([] if frontend_only else [PACIFIC_PATCH]):
        digest.update(rel.encode() + b'\0')
        with open(os.path.join(PATCH_ROOT, rel), 'rb') as f:
            digest.update(f.read() + b'\0')
    return digest.hexdigest()[:12]


def pin_lock(release: str, package_json: str, package_lock: str) -> None:
    """Rewrite the copies of package.json and its lock with the release's pins."""
    for path, rewrite in ((package_json, _pin_package_json), (package_lock, _pin_lock)):
        with open(path) as f:
            data = json.load(f)
        for pin in LOCK_PINS.get(release, ()):
            rewrite(data, pin)
        with open(path, 'w') as f:
            json.dump(data, f, indent=2)
            f.write('\n')


def _pin_package_json(data: Dict, pin: LockPin) -> None:
    for section in ('dependencies', 'devDependencies'):
        if data.get(section, {}).get(pin.name) == pin.locked:
            data[section][pin.name] = pin.version


def _pin_lock(data: Dict, pin: LockPin) -> None:
    packages = data['packages']
    _pin_package_json(packages[''], pin)
    entry = packages.get('node_modules/' + pin.name)
    if entry is None or entry['version'] != pin.locked:
        raise DashboardError('the lock has no %s %s to pin' % (pin.name, pin.locked))
    entry['version'] = pin.version
    entry['resolved'] = entry['resolved'].replace(pin.locked, pin.version)
    entry['integrity'] = pin.integrity
    for other in packages.values():
        deps = other.get('dependencies', {})
        if deps.get(pin.name) == pin.locked:
            deps[pin.name] = pin.version


# -- the build ---------------------------------------------------------------------------

class Build(NamedTuple):
    release: str
    tree: str            # holds `dashboard` (patched, built) and the mgr's `tests`

    @property
    def dashboard(self) -> str:
        return os.path.join(self.tree, 'dashboard')

    @property
    def frontend(self) -> str:
        return os.path.join(self.dashboard, 'frontend')


def ensure_built(release: str, log: Logger, frontend: bool = True) -> Build:
    """The patched dashboard of the release, its frontend built (unless `frontend`
    is False: then only the patched tree and node_modules, for the unit tests)."""
    pristine = ensure_source(release, log)
    key = hashlib.sha256(('%s %s %s' % (pristine, patch_hash(), LOCK_PINS.get(release)))
                         .encode()).hexdigest()[:12]
    build = Build(release, os.path.join(cache_root(), 'tree-%s-%s' % (release, key)))
    if release in PACKAGES:
        with _locked('tree-' + release):
            if not os.path.exists(os.path.join(build.tree, READY_MARK)):
                _make_backend_tree(release, PACKAGES[release], pristine, build, log)
        return build
    with _locked('tree-' + release):
        if not os.path.exists(os.path.join(build.tree, READY_MARK)):
            _make_tree(release, pristine, build, log)
        _link_node_modules(release, build, log)
        environment = os.path.join(build.frontend, 'src', 'environments', 'environment.ts')
        if not os.path.exists(environment):
            # The environment files the build and the specs import, from their templates.
            _timed(['npm', 'run', 'env_build'], build.frontend, 'env_build', log)
        built = os.path.join(build.frontend, 'dist', LOCALE, 'index.html')
        if frontend and not os.path.exists(built):
            _ensure_dist(release, pristine, build, log)
    return build


def _ensure_dist(release: str, pristine: str, build: Build, log: Logger) -> None:
    """The built frontend in the tree: from the cache of builds of the same frontend
    source, else built and put there."""
    made_from = '%s %s %s' % (pristine, patch_hash(frontend_only=True), LOCK_PINS.get(release))
    key = hashlib.sha256(made_from.encode()).hexdigest()[:12]
    cached = os.path.join(cache_root(), 'dist-%s-%s' % (release, key))
    target = os.path.join(build.frontend, 'dist', LOCALE)
    if not os.path.exists(os.path.join(cached, READY_MARK)):
        _build_frontend(build, log)
        staging = cached + '.building'
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(target, staging, symlinks=True)
        _mark(staging)
        shutil.rmtree(cached, ignore_errors=True)
        os.rename(staging, cached)
        return
    log('the frontend of this source is built already: %s' % cached)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(cached, target, symlinks=True,
                    ignore=lambda folder, names: [READY_MARK] if folder == cached else [])


def _make_tree(release: str, pristine: str, build: Build, log: Logger) -> None:
    log('patching the %s dashboard into %s' % (release, build.tree))
    staging = build.tree + '.building'
    shutil.rmtree(staging, ignore_errors=True)
    # The tarball's prebuilt frontend (every locale) is replaced by the build.
    shutil.copytree(pristine, staging, symlinks=True,
                    ignore=lambda folder, names: (
                        ['dist'] if folder.endswith('/frontend') else []))
    target = os.path.join(staging, 'dashboard')
    _overlay(release, target, overlay_files(), UPSTREAM_PATCH)
    frontend = os.path.join(target, 'frontend')
    pin_lock(release, os.path.join(frontend, 'package.json'),
             os.path.join(frontend, 'package-lock.json'))
    _mark(staging)
    shutil.rmtree(build.tree, ignore_errors=True)
    os.rename(staging, build.tree)


def _make_backend_tree(release: str, package: Package, pristine: str, build: Build,
                       log: Logger) -> None:
    log('patching the %s dashboard\'s backend into %s' % (release, build.tree))
    staging = build.tree + '.building'
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(pristine, staging, symlinks=True)
    _overlay(release, os.path.join(staging, 'dashboard'), overlay_files(frontend=False),
             package.patch)
    _mark(staging)
    shutil.rmtree(build.tree, ignore_errors=True)
    os.rename(staging, build.tree)


def _overlay(release: str, target: str, files: Sequence[str], patch: str) -> None:
    """The patch's new files copied into the dashboard folder, its diff applied."""
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(target, rel)), exist_ok=True)
        shutil.copy(os.path.join(PATCH_ROOT, rel), os.path.join(target, rel))
    proc = subprocess.run(['patch', '-p1', '--forward', '--no-backup-if-mismatch', '-d', target,
                           '-i', os.path.join(PATCH_ROOT, patch)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise DashboardError('%s does not apply to the %s dashboard:\n%s'
                             % (patch, release, proc.stdout[-3000:]))


def _link_node_modules(release: str, build: Build, log: Logger) -> None:
    files = [os.path.join(build.frontend, name)
             for name in ('package.json', 'package-lock.json', '.npmrc')]
    digest = hashlib.sha256()
    for path in files:
        with open(path, 'rb') as f:
            digest.update(f.read())
    npm_dir = os.path.join(cache_root(), 'npm-%s-%s' % (release, digest.hexdigest()[:12]))
    with _locked('npm-' + release):
        if not os.path.exists(os.path.join(npm_dir, READY_MARK)):
            staging = npm_dir + '.building'
            shutil.rmtree(staging, ignore_errors=True)
            os.makedirs(staging)
            for path in files:
                shutil.copy(path, staging)
            log('npm ci for the %s dashboard (once per lock; about %d packages)'
                % (release, _lock_size(files[1])))
            _timed(['npm', 'ci', '--no-audit', '--no-fund'], staging, 'npm ci', log)
            _mark(staging)
            shutil.rmtree(npm_dir, ignore_errors=True)
            os.rename(staging, npm_dir)
    link = os.path.join(build.frontend, 'node_modules')
    if os.path.islink(link) and os.readlink(link) == os.path.join(npm_dir, 'node_modules'):
        return
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.path.join(npm_dir, 'node_modules'), link)


def _lock_size(lock: str) -> int:
    with open(lock) as f:
        return len(json.load(f).get('packages', {}))


def _build_frontend(build: Build, log: Logger) -> None:
    log('building the dashboard frontend (%s only; 10-20 minutes on 2 cores)' % LOCALE)
    _timed(['npm', 'run', 'build'], build.frontend, 'the frontend build', log,
           env={'npm_package_config_locale': LOCALE})


def run_jest(build: Build, specs: Sequence[str], log: Logger) -> None:
    """The given spec files (relative to the frontend), with jest in CI mode."""
    _timed(['npx', 'jest', '--ci', '--silent'] + list(specs), build.frontend, 'jest', log)


def backend_test_argv(build: Build, tests: Sequence[str]) -> Tuple[List[str], Dict[str, str]]:
    """pytest on the patched dashboard's controller tests, as upstream's tox runs them:
    the command (run in the release's root) and its environment."""
    env = {'UNITTEST': 'true', 'WEBTEST_INTERACTIVE': 'false',
           'PYTHONDONTWRITEBYTECODE': '1',
           'PYTHONPATH': '%s:/usr/share/ceph/mgr' % build.tree}
    # -c /dev/null: upstream's tox.ini adds coverage options whose plugins are not installed.
    argv = ['sh', '-c', 'cd "$0" && exec pytest -q -p no:cacheprovider -c /dev/null '
            '--rootdir . "$@"', build.dashboard] + list(tests)
    return argv, env


def _timed(argv: Sequence[str], cwd: str, what: str, log: Logger,
           env: Optional[Dict[str, str]] = None) -> None:
    """Run a long build step, logging its wall time and peak memory (of the largest
    process: what the machine must have free)."""
    started = time.monotonic()
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(os.environ, **NPM_ENV, **(env or {})),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    assert proc.stdout is not None
    tail: List[str] = []
    for line in proc.stdout:
        tail = (tail + [line])[-60:]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise DashboardError('%s failed (exit %d):\n%s' % (what, proc.returncode, ''.join(tail)))
    log('%s: %.0f s, peak memory %.0f MiB' % (what, time.monotonic() - started,
                                              usage.ru_maxrss / 1024.0))


def _mark(folder: str) -> None:
    with open(os.path.join(folder, READY_MARK), 'w') as f:
        f.write(time.strftime('%Y-%m-%dT%H:%M:%SZ\n', time.gmtime()))


class _locked:
    """One builder of a cache entry at a time (two shards may ask at once)."""

    def __init__(self, name: str) -> None:
        self.path = os.path.join(cache_root(), '%s.lock' % name)

    def __enter__(self) -> None:
        os.makedirs(cache_root(), exist_ok=True)
        self.file = open(self.path, 'w')
        fcntl.flock(self.file, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        self.file.close()


# -- checks --------------------------------------------------------------------------

# The patch's controller tests (its jest specs: spec_files()).
BACKEND_TESTS = ['tests/test_rgw_benchmark.py']


def spec_files() -> List[str]:
    """The patch's jest specs, relative to the frontend folder."""
    return [rel[len('frontend/'):] for rel in overlay_files()
            if rel.startswith('frontend/') and rel.endswith('.spec.ts')]


def ensure_python_packages(release: str, log: Logger) -> None:
    """The dashboard's Python dependencies in the release's root, once (a packaged
    release runs on the host: the package's own dependencies there)."""
    if release in PACKAGES:
        installed = subprocess.run(['dpkg-query', '-W', '-f', '${Status}\n']
                                   + PACKAGED_PYTHON_PACKAGES, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        if installed.count('install ok installed') < len(PACKAGED_PYTHON_PACKAGES):
            log('installing the dashboard\'s Python packages on the host')
            hostpackages.apt_install(PACKAGED_PYTHON_PACKAGES)
        return
    root = chroot.chroot_dir(release)
    mark = os.path.join(root, '.rgwbench-dashboard-packages')
    wanted = ' '.join(PYTHON_PACKAGES) + '\n'
    if os.path.exists(mark) and open(mark).read() == wanted:
        return
    log('installing the dashboard\'s Python packages in the %s root' % release)
    chroot.mount_into(root, [])
    proc = subprocess.run(['chroot', root, 'apt-get', '-o', 'Acquire::Check-Valid-Until=false',
                           'install', '-y', '-qq', '--no-install-recommends'] + PYTHON_PACKAGES,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True,
                          env=dict(os.environ, DEBIAN_FRONTEND='noninteractive', LC_ALL='C'))
    if proc.returncode != 0:
        raise DashboardError('apt-get install in the %s root failed:\n%s'
                             % (release, proc.stdout[-2000:]))
    with open(mark, 'w') as f:
        f.write(wanted)


def _in_root(release: str, argv: Sequence[str], env: Dict[str, str],
             paths: Sequence[str]) -> 'subprocess.CompletedProcess[str]':
    root = chroot.chroot_dir(release)
    chroot.mount_into(root, list(paths))
    try:
        return subprocess.run(['chroot', root, 'env'] + ['%s=%s' % kv for kv in sorted(env.items())]
                              + list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
    finally:
        chroot.unmount_from(root, list(paths))


def run_backend_tests(build: Build, log: Logger) -> None:
    argv, env = backend_test_argv(build, BACKEND_TESTS)
    started = time.monotonic()
    proc = _in_root(build.release, argv, env, [build.tree])
    if proc.returncode != 0:
        raise DashboardError('the controller tests failed:\n%s' % proc.stdout[-4000:])
    log('controller tests: %s (%.0f s)' % (proc.stdout.strip().splitlines()[-1],
                                           time.monotonic() - started))


def _generated_openapi(release: str, tree: str, out: str) -> List[str]:
    """The OpenAPI document the dashboard in `tree` generates (as upstream's
    `tox -e openapi-fix` does), its lines."""
    env = {'UNITTEST': 'true', 'PYTHONDONTWRITEBYTECODE': '1',
           'PYTHONPATH': '%s:/usr/share/ceph/mgr' % tree}
    argv = ['sh', '-c', 'cd "$0" && exec python3 -m dashboard.controllers.docs "$1"',
            os.path.join(tree, 'dashboard'), out]
    proc = _in_root(release, argv, env, [tree])
    if proc.returncode != 0:
        raise DashboardError('generating the OpenAPI document failed:\n%s'
                             % proc.stdout[-3000:])
    with open(chroot.chroot_dir(release) + out) as f:
        return f.read().splitlines()


def _changed_lines(before: List[str], after: List[str]) -> List[str]:
    return [line for line in difflib.unified_diff(before, after, n=0, lineterm='')
            if line[:1] in '+-' and not line.startswith(('+++', '---'))]


def check_openapi(build: Build, log: Logger) -> None:
    """upstream's `tox -e openapi-check` for the patch: what the patch changes in
    openapi.yaml is what the patched controllers change in the generated document.

    The whole document is not compared: Python 3.13 strips docstrings' indentation,
    so Tentacle's own descriptions come out differently from its committed file.
    """
    pristine = ensure_source(build.release, log)
    generated_before = _generated_openapi(build.release, pristine, '/tmp/openapi-pristine.yaml')
    generated_after = _generated_openapi(build.release, build.tree, '/tmp/openapi-patched.yaml')
    with open(os.path.join(pristine, 'dashboard', 'openapi.yaml')) as f:
        committed_before = f.read().splitlines()
    with open(os.path.join(build.dashboard, 'openapi.yaml')) as f:
        committed_after = f.read().splitlines()
    wanted = _changed_lines(generated_before, generated_after)
    got = _changed_lines(committed_before, committed_after)
    if wanted != got:
        raise DashboardError('openapi.yaml in %s does not match the controllers; what they '
                             'generate changes:\n%s' % (UPSTREAM_PATCH, '\n'.join(
                                 difflib.unified_diff(got, wanted, 'patch', 'generated',
                                                      lineterm=''))))
    log('openapi check: the patch adds the %d lines the controllers generate' % len(wanted))


def check(release: str, log: Logger) -> Build:
    """The patch's controller tests, its openapi.yaml and its jest specs."""
    source(release)  # the tab's release: a packaged one gets no frontend to check
    ensure_python_packages(release, log)
    build = ensure_built(release, log, frontend=False)
    run_backend_tests(build, log)
    check_openapi(build, log)
    run_jest(build, spec_files(), log)
    return build
