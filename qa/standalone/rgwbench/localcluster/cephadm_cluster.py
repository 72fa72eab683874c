"""A real cephadm cluster on this machine: the release's own cephadm and image.

`cluster start --orchestrator cephadm` bootstraps a cluster with the release's
`cephadm` program and an image built from the release's chroot (images.py):
mon and mgrs, OSDs in raw mode on loop devices (no device-mapper here), one
RGW, every daemon a cephadm daemon in podman. The mgr's cephadm module reaches
this machine over SSH, as it reaches any host: an sshd of the cluster's own
listens on the cluster's bridge only, and the host programs cephadm expects
come from cephadm_host.py.

The rgwbench module is installed as an operator installs it (see "Install on
cephadm" in doc/mgr/rgwbench.rst): its folder bind-mounted read-only into the
mgr containers through the mgr service spec, then `ceph mgr module enable`.

The mgr listens on fixed ports (8765, 9283): one cephadm cluster per machine.
`stop` removes the cluster and cephadm's marks on the machine (its units,
/var/lib/ceph/<fsid>, /var/log/ceph/<fsid>, the key it added to root's
authorized_keys, loop devices, sshd, bridge, and the kernel settings cephadm
sets for ingress daemons put back); only the folder stays, for its
logs, until `destroy`. A stopped cephadm cluster is not started again: `start`
makes a new one.
"""
import contextlib
import json
import os
import secrets
import shutil
import signal
import string
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from . import cephadm_host, hostpackages, images, releases
from .cephadm_host import INGRESS_SYSCTLS
from .cluster import REPO_ROOT, SESSION_SCRIPT, TEST_USER, ClusterError, rgw_not_registered
from .netns import PREFIX
from .processes import ProcessTable, free_port

ORCHESTRATOR = 'cephadm'
# A TEST-NET range netns.py (10.77.0.0/16) never uses, and a bridge name that starts as
# every link of a local cluster does (a check of what a cluster leaves behind passes over
# the others' links) but is never one of netns.py's (PREFIX and six hex digits).
BRIDGE = PREFIX + '-cadm'
HOST_ADDR = '198.51.100.1'
NETWORK = '198.51.100.0/24'
# The one cephadm cluster of the machine: its folder.
OWNER_FILE = '/run/rgwbench-cephadm-cluster'
MGR_PORTS = (8765, 9283)
MODULE_DIR = os.path.join(REPO_ROOT, 'src', 'pybind', 'mgr', 'rgwbench')
# Where the mgr image keeps its modules.
MGR_MODULE_PATH = '/usr/share/ceph/mgr'
RGW_SERVICE = 'rgw.default'
OSD_SIZE = '10G'
ROOT_KEYS = '/root/.ssh/authorized_keys'
BOOTSTRAP_TRIES = 3
OSD_TRIES = 2
# A device model no device has: the OSDs' spec makes no new OSD.
NO_NEW_OSDS = 'rgwbench-no-such-device'


def _descendants(root: int) -> List[int]:
    """Every process below `root`, from /proc."""
    children: Dict[int, List[int]] = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                # the name in parentheses may hold spaces: the fields after it
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found: List[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _without_cgroups_split(cephadm: str) -> List[str]:
    """The flag that keeps a cephadm from asking podman for split cgroups (systemd's
    manager, which this machine lacks), where it has one: Pacific's has none, and the
    podman shim drops what it asks for (cephadm_host.podman_argv)."""
    with open(cephadm, 'rb') as f:
        return ['--no-cgroups-split'] if b'--no-cgroups-split' in f.read() else []


def installed_module_spec(spec: Dict[str, Any], module_dir: str) -> Dict[str, Any]:
    """The mgr service spec with the module folder mounted read-only in its containers."""
    mount = '--volume=%s:%s/rgwbench:ro' % (module_dir, MGR_MODULE_PATH)
    args = [a for a in spec.get('extra_container_args') or []
            if not (isinstance(a, str) and a.endswith('/rgwbench:ro'))]
    return dict(spec, extra_container_args=args + [mount])


class CephadmCluster:
    def __init__(self, directory: str, state: Dict[str, Any],
                 log: Callable[[str], None] = releases.stderr_log) -> None:
        self.dir = os.path.abspath(directory)
        self.state = state
        self.log = log
        self.etc = os.path.join(self.dir, 'etc')
        # bootstrap's minimal ceph.conf with the admin keyring named in it: for the
        # tools and for a session (ceph_session.py), which take a conf file only.
        self.conf = os.path.join(self.dir, 'ceph.conf')
        self.keyring = os.path.join(self.etc, 'ceph.client.admin.keyring')
        self.bin = os.path.join(self.dir, 'bin')

    # -- state -----------------------------------------------------------------
    def _save(self) -> None:
        tmp = os.path.join(self.dir, 'cluster.json.tmp')
        with open(tmp, 'w') as f:
            json.dump(self.state, f, indent=2, sort_keys=True)
        os.rename(tmp, os.path.join(self.dir, 'cluster.json'))

    @property
    def release(self) -> releases.Release:
        return releases.get(self.state['release'])

    @property
    def exists(self) -> bool:
        return bool(self.state)

    def _env(self) -> Dict[str, str]:
        return dict(os.environ, PATH='%s:/usr/sbin:/usr/bin:/sbin:/bin' % self.bin)

    def cephadm_argv(self, args: Sequence[str]) -> List[str]:
        return (['python3', self.state['cephadm'], '--image', self.state['image']] +
                _without_cgroups_split(self.state['cephadm']) + list(args))

    def _cephadm(self, args: Sequence[str],
                 timeout: float = 600) -> 'subprocess.CompletedProcess[str]':
        return subprocess.run(self.cephadm_argv(args), env=self._env(), timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)

    # -- the release's tools, from its chroot ------------------------------------
    def _write_tools_conf(self) -> None:
        with open(os.path.join(self.etc, 'ceph.conf')) as f:
            minimal = f.read()
        with open(self.conf + '.tmp', 'w') as f:
            f.write(minimal.replace('[global]\n', '[global]\n\tkeyring = %s\n'
                                    % self.keyring, 1))
        os.rename(self.conf + '.tmp', self.conf)

    def tool_argv(self, program: str, args: Sequence[str]) -> List[str]:
        if not os.path.exists(self.conf):
            self._write_tools_conf()
        return self.release.argv([program, '-c', self.conf] + list(args))

    def ceph_session_argv(self) -> List[str]:
        if not os.path.exists(self.conf):
            self._write_tools_conf()
        return self.release.argv(['/usr/bin/python3', SESSION_SCRIPT, self.conf])

    def ceph(self, args: Sequence[str], timeout: float = 120,
             stdin: Optional[str] = None) -> str:
        try:
            proc = subprocess.run(self.tool_argv('ceph', ['--connect-timeout', '15'] + list(args)),
                                  input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ClusterError('ceph %s did not answer within %ds' % (' '.join(args), timeout))
        if proc.returncode != 0:
            raise ClusterError('ceph %s: %s' % (' '.join(args), proc.stderr.strip()))
        return proc.stdout

    def ceph_json(self, args: Sequence[str], timeout: float = 120) -> Any:
        return json.loads(self.ceph(list(args) + ['-f', 'json'], timeout=timeout))

    def _answers(self, args: Sequence[str]) -> Optional[str]:
        try:
            return self.ceph(args, timeout=30)
        except ClusterError:
            return None

    def _wait(self, what: str, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(2)
        raise ClusterError('timed out after %ds waiting for %s' % (timeout, what))

    # -- start -----------------------------------------------------------------------
    def start(self, release_name: str, osds: int) -> None:
        if self.exists and self.state.get('fsid') and self.state.get('running'):
            if self._answers(['status']) is not None:
                self.log('the cephadm cluster in %s is running' % self.dir)
                return
            raise ClusterError('the cephadm cluster in %s does not answer: run `cluster stop '
                               '--dir %s`, then start a new one' % (self.dir, self.dir))
        self._claim_machine()
        self.state['sysctls_before'] = {name: _read_sysctl(name) for name in INGRESS_SYSCTLS}
        release = releases.get(release_name)
        hostpackages.ensure(hostpackages.CEPHADM, self.log)
        release.ensure_installed(self.log)
        try:
            image = images.ensure_image(release_name, self.log)
        except images.ImageError as e:
            raise ClusterError(str(e))
        os.makedirs(self.etc, exist_ok=True)
        self.state.update(orchestrator=ORCHESTRATOR, release=release_name, image=image.name,
                          cephadm=image.cephadm, running=True, addr=HOST_ADDR,
                          rgw_port=free_port(owner=self.dir))
        self._save()
        started = time.monotonic()
        try:
            cephadm_host.write_programs(self.bin, self.dir)
            release.mount([self.dir], [REPO_ROOT])
            self._network_up()
            self._sshd_up()
            with self._stage('bootstrap'):
                self._bootstrap()
            self._settings()
            with self._stage('OSDs'):
                self._osds(osds)
            with self._stage('module install'):
                self._install_module()
            with self._stage('RGW'):
                self._rgw()
            self._test_user()
        except Exception:
            self.log('start failed; the cluster is left as it is for `cluster stop`')
            raise
        self.log('cephadm cluster ready in %.0f s: %s, fsid %s'
                 % (time.monotonic() - started, self.dir, self.state['fsid']))

    @contextlib.contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        """Each stage's length in the log: on a loaded machine, which of them was slow."""
        began = time.monotonic()
        try:
            yield
        finally:
            self.log('%s: %.0f s' % (name, time.monotonic() - began))

    def _claim_machine(self) -> None:
        try:
            with open(OWNER_FILE) as f:
                owner = f.read().strip()
        except FileNotFoundError:
            owner = ''
        if owner and owner != self.dir and os.path.exists(os.path.join(owner, 'cluster.json')):
            raise ClusterError('a cephadm cluster already runs on this machine (%s): one at a '
                               'time (its mgr ports %s); stop it first'
                               % (owner, ', '.join(map(str, MGR_PORTS))))
        taken = subprocess.run(['ss', '-Hltn'], stdout=subprocess.PIPE,
                               universal_newlines=True).stdout
        busy = [p for p in MGR_PORTS if ':%d ' % p in taken]
        if busy:
            raise ClusterError('port(s) %s taken: a cephadm mgr needs them'
                               % ', '.join(map(str, busy)))
        with open(OWNER_FILE, 'w') as f:
            f.write(self.dir + '\n')

    def _network_up(self) -> None:
        links = subprocess.run(['ip', '-o', 'link', 'show', BRIDGE], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL).returncode == 0
        if not links:
            for cmd in (['ip', 'link', 'add', BRIDGE, 'type', 'bridge'],
                        ['ip', 'addr', 'add', HOST_ADDR + '/24', 'dev', BRIDGE],
                        ['ip', 'link', 'set', BRIDGE, 'up']):
                self._checked(cmd, 'network')
        self.state['bridge'] = BRIDGE
        self._save()

    def _checked(self, argv: List[str], what: str, timeout: float = 120) -> str:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout, env=self._env())
        if proc.returncode != 0:
            raise ClusterError('%s: %s failed:\n%s' % (what, ' '.join(argv), proc.stdout[-2000:]))
        return proc.stdout

    def _sshd_up(self) -> None:
        ssh = os.path.join(self.dir, 'ssh')
        os.makedirs(ssh, exist_ok=True)
        key = os.path.join(ssh, 'host_ed25519_key')
        if not os.path.exists(key):
            self._checked(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', key], 'sshd')
        config = os.path.join(ssh, 'sshd_config')
        with open(config, 'w') as f:
            f.write('ListenAddress %s\nHostKey %s\nPidFile %s\nPermitRootLogin prohibit-password\n'
                    'PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n'
                    'AuthorizedKeysFile %s\nSubsystem sftp internal-sftp\nSetEnv PATH=%s\n'
                    % (HOST_ADDR, key, os.path.join(ssh, 'sshd.pid'), ROOT_KEYS,
                       self._env()['PATH']))
        if not os.path.isdir('/run/sshd'):
            os.makedirs('/run/sshd', mode=0o755)
            self.state['made_run_sshd'] = True
        # What root's authorized_keys held before: bootstrap adds cephadm's key there.
        if 'root_keys_before' not in self.state:
            self.state['root_keys_before'] = (open(ROOT_KEYS).read()
                                              if os.path.exists(ROOT_KEYS) else None)
        self._save()
        self._checked(['/usr/sbin/sshd', '-f', config, '-E', os.path.join(ssh, 'sshd.log')],
                      'sshd')

    def _bootstrap(self) -> None:
        for attempt in range(1, BOOTSTRAP_TRIES + 1):
            self.log('cephadm bootstrap (try %d)' % attempt)
            proc = self._cephadm(
                ['bootstrap', '--skip-pull', '--skip-monitoring-stack', '--skip-dashboard',
                 '--skip-firewalld', '--single-host-defaults', '--skip-admin-label',
                 '--mon-ip', HOST_ADDR, '--output-dir', self.etc, '--allow-overwrite'],
                timeout=900)
            with open(os.path.join(self.dir, 'bootstrap.log'), 'a') as f:
                f.write(proc.stdout)
            for line in proc.stdout.splitlines():
                if line.startswith('Cluster fsid:'):
                    self.state['fsid'] = line.split(':', 1)[1].strip()
                    self._save()
            if proc.returncode == 0:
                self._write_tools_conf()
                return
            # On 2 cores its `orch set backend` can come before the module loaded.
            last = [line for line in proc.stdout.splitlines() if 'Error' in line][-1:]
            self.log('bootstrap failed: %s' % (last[0] if last else proc.stdout[-300:]))
            # Tentacle's bootstrap removes what it made when it fails; Pacific's leaves
            # its mon and mgr running, which the next try's mon would find on its port.
            if self.state.get('fsid'):
                self._cephadm(['rm-cluster', '--fsid', self.state['fsid'], '--force'])
        raise ClusterError('cephadm bootstrap failed %d times; see %s/bootstrap.log'
                           % (BOOTSTRAP_TRIES, self.dir))

    def _settings(self) -> None:
        # The image is local; with digests the mgr would ask a registry for it.
        self.ceph(['config', 'set', 'mgr', 'mgr/cephadm/use_repo_digest', 'false'])
        for daemon in images.INGRESS_DAEMONS:
            self.ceph(['config', 'set', 'mgr', 'mgr/cephadm/container_image_' + daemon,
                       self.state['image']])
        self.ceph(['config', 'set', 'osd', 'osd_memory_target', '939524096'])
        # cephadm would size each host's OSDs from the memory it sees free, again after
        # each failover: a value of its own would come and go under the tests' snapshots.
        self.ceph(['config', 'set', 'osd', 'osd_memory_target_autotune', 'false'])
        self.ceph(['config', 'set', 'global', 'mon_max_pg_per_osd', '500'])

    def _osds(self, count: int) -> None:
        loops: List[str] = self.state.setdefault('loops', [])
        for n in range(count):
            image = os.path.join(self.dir, 'osd-%d.img' % n)
            self._checked(['truncate', '-s', OSD_SIZE, image], 'OSD file')
            loops.append(self._checked(['losetup', '-f', '--show', image], 'loop').strip())
            self._save()
        devices = '%s:%s' % (self._hostname(), ','.join(loops))

        def up() -> bool:
            try:
                return int(self.ceph_json(['osd', 'stat']).get('num_up_osds', 0)) >= count
            except (ClusterError, ValueError):
                return False
        for attempt in range(1, OSD_TRIES + 1):
            self.log('adding %d raw OSD(s) on %s (try %d)' % (count, ', '.join(loops), attempt))
            added = self.ceph(['orch', 'daemon', 'add', 'osd', devices, 'raw'], timeout=600)
            self.log('orch daemon add osd: %s' % (added.strip()[-300:] or 'no answer'))
            # Tentacle's `daemon add osd` leaves a managed spec (osd.default) without
            # the raw method: cephadm applies it again in LVM mode (no device-mapper
            # here), which fails, and its rollback can take the id of an OSD the raw
            # add is making. Pacific's leaves an unmanaged one (osd).
            spec = self._osd_spec()
            if not spec.get('unmanaged'):
                self.ceph(['orch', 'set-unmanaged', str(spec['service_name'])])
            try:
                self._wait('%d OSD(s) up' % count, up, 300)
                break
            except ClusterError:
                self.log('OSDs after try %d: %s; %s' % (
                    attempt, (self._answers(['osd', 'stat']) or 'no answer').strip(),
                    (self._answers(['orch', 'ps', '--daemon_type', 'osd']) or '').strip()))
                if attempt == OSD_TRIES or self.ceph_json(['osd', 'ls']):
                    raise
        self._manage_osds()

    def _manage_osds(self) -> None:
        """The OSDs' service managed again: cephadm passes over the daemons of an
        unmanaged service, so `orch daemon restart osd.N` would be accepted and never
        done. Its devices are those of a model no device has: with the loop devices
        named in it, cephadm ran `ceph-volume raw prepare` on them again in every pass
        of its loop (refused, as they hold OSDs), four containers a pass."""
        spec = self._osd_spec()
        spec.pop('unmanaged', None)
        # Pacific's unmanaged spec has no placement, which an apply needs.
        spec.setdefault('placement', {'host_pattern': '*'})
        spec.setdefault('spec', {})['method'] = 'raw'
        spec['spec']['data_devices'] = {'model': NO_NEW_OSDS}
        self.ceph(['orch', 'apply', '-i', '-'], stdin=json.dumps(spec))

    def _osd_spec(self) -> Dict[str, Any]:
        spec: Dict[str, Any] = self.ceph_json(['orch', 'ls', '--service_type', 'osd',
                                               '--export'])[0]
        return spec

    def _hostname(self) -> str:
        hosts = self.ceph_json(['orch', 'host', 'ls'])
        return str(hosts[0]['hostname'])

    def _install_module(self) -> None:
        """The documented install: the mgr spec mounts the module, then it is enabled."""
        exported = self.ceph_json(['orch', 'ls', '--service_type', 'mgr', '--export'])
        spec = installed_module_spec(exported[0], MODULE_DIR)
        self.log('mounting the rgwbench module into the mgr containers (mgr spec)')
        self.ceph(['orch', 'apply', '-i', '-'], stdin=json.dumps(spec))

        def every_mgr_has_it() -> bool:
            # The mon enables a module only once every mgr, standbys too, lists it.
            dumped = self._answers(['mgr', 'dump', '-f', 'json'])
            if dumped is None:
                return False
            mgr_map = json.loads(dumped)
            listings = [mgr_map.get('available_modules', [])] + [
                s.get('available_modules', []) for s in mgr_map.get('standbys', [])]
            return all('rgwbench' in [m['name'] for m in listing] for listing in listings)
        self._wait('the mgr containers to be redeployed with the module', every_mgr_has_it, 600)
        self.ceph(['mgr', 'module', 'enable', 'rgwbench'])
        self._wait('the rgwbench module to answer',
                   lambda: self._answers(['rgwbench', 'status']) is not None, 300)

    def rgw_urls(self) -> List[str]:
        return ['http://%s:%d' % (HOST_ADDR, self.state['rgw_port'])]

    def rgw_spec(self) -> str:
        return ('service_type: rgw\nservice_id: default\nplacement:\n  count: 1\n'
                'networks:\n  - %s\nspec:\n  rgw_frontend_port: %d\n'
                % (NETWORK, self.state['rgw_port']))

    def _rgw(self) -> None:
        self.log('deploying %s through cephadm' % RGW_SERVICE)
        self.ceph(['orch', 'apply', '-i', '-'], stdin=self.rgw_spec())

        def answers() -> bool:
            try:
                with urllib.request.urlopen(self.rgw_urls()[0] + '/', timeout=5) as resp:
                    return bool(resp.status == 200)
            except (urllib.error.URLError, OSError):
                return False
        self._wait('radosgw to answer S3 requests', answers, 300)

        def registered() -> bool:
            status = self._answers(['rgwbench', 'status', '-f', 'json'])
            ps = self._answers(['orch', 'ps', '--daemon_type', 'rgw', '-f', 'json'])
            return bool(status and ps) and rgw_not_registered(
                json.loads(ps or '[]'), json.loads(status or '{}')) is None
        self._wait('the mgr to list the radosgw', registered, 180)

    def _test_user(self) -> None:
        if 's3' in self.state:
            return
        access = ''.join(secrets.choice(string.ascii_uppercase + string.digits)
                         for _ in range(20))
        secret = secrets.token_urlsafe(30)
        proc = subprocess.run(self.tool_argv('radosgw-admin', [
            'user', 'create', '--uid', TEST_USER, '--display-name', 'rgwbench tests',
            '--access-key', access, '--secret', secret]), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        if proc.returncode != 0:
            raise ClusterError('radosgw-admin user create: %s' % proc.stderr.strip())
        self.state['s3'] = {'uid': TEST_USER, 'access_key': access, 'secret_key': secret}
        self._save()

    def s3_endpoints(self) -> Dict[str, Any]:
        if 's3' not in self.state:
            raise ClusterError('the cluster in %s has no S3 user yet' % self.dir)
        urls = self.rgw_urls() if self.state.get('running') else []
        return {'url': urls[0] if urls else None, 'endpoints': urls,
                'access_key': self.state['s3']['access_key'],
                'secret_key': self.state['s3']['secret_key'], 'uid': self.state['s3']['uid']}

    def info(self) -> Dict[str, Any]:
        return dict(self.state, dir=self.dir, conf=self.conf, keyring=self.keyring,
                    root=self.release.root,
                    tools={t: self.tool_argv(t, []) for t in ('ceph', 'radosgw-admin', 'rados')},
                    ceph_session=self.ceph_session_argv(),
                    cephadm_argv=self.cephadm_argv([]))

    # -- stop ---------------------------------------------------------------------
    def stop(self) -> List[str]:
        """Remove the cluster and its marks on the machine; what was removed."""
        removed: List[str] = []
        # First the cluster's sshd and every command the mgr runs through it: a deploy
        # still going (a start killed mid-way) wrote an OSD's keyring into
        # /var/lib/ceph/<fsid> after rm-cluster had removed it, and it stayed.
        removed += self._end_sshd()
        # The test servers of its folder (KMIP, OpenBao), which RGW reached from its container.
        servers = ProcessTable(self.dir)
        removed += ['process %s' % n for n in servers.stop(servers.names())]
        fsid = self.state.get('fsid')
        if fsid:
            proc = self._cephadm(['rm-cluster', '--force', '--zap-osds', '--fsid', fsid])
            with open(os.path.join(self.dir, 'rm-cluster.log'), 'a') as f:
                f.write(proc.stdout)
            removed.append('cluster %s' % fsid)
            # rm-cluster stopped every unit, which ends their supervisors; any left ends here.
            units = os.path.join(self.dir, 'systemd')
            for pid in (cephadm_host.Systemctl(units).supervisors()
                        if os.path.isdir(units) else []):
                os.kill(pid, signal.SIGTERM)
                removed.append('supervisor %d' % pid)
            left = subprocess.run(
                ['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs', 'ps', '-a',
                 '-q', '--filter', 'name=ceph-%s' % fsid], stdout=subprocess.PIPE,
                universal_newlines=True).stdout.split()
            if left:
                subprocess.run(['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs',
                                'rm', '-f'] + left, stdout=subprocess.DEVNULL)
                removed.append('%d container(s)' % len(left))
            for path in _fsid_paths(fsid):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                elif os.path.lexists(path):
                    os.unlink(path)
                removed.append(path)
        for empty in ('/run/cephadm',):
            if os.path.isdir(empty) and not os.listdir(empty):
                os.rmdir(empty)
                removed.append(empty)
        for loop in self.state.get('loops', []):
            subprocess.run(['losetup', '-d', loop], stderr=subprocess.DEVNULL)
            removed.append(loop)
        for image in [f for f in os.listdir(self.dir) if f.startswith('osd-')]:
            os.unlink(os.path.join(self.dir, image))
        self.state['loops'] = []
        if self.state.pop('made_run_sshd', False) and os.path.isdir('/run/sshd'):
            os.rmdir('/run/sshd')
        self._restore_root_keys()
        for name, value in self.state.pop('sysctls_before', {}).items():
            if _read_sysctl(name) != value:
                with open('/proc/sys/' + name, 'w') as f:
                    f.write(value)
                removed.append('%s=%s' % (name.replace('/', '.'), value))
        if self.state.pop('bridge', None):
            subprocess.run(['ip', 'link', 'del', BRIDGE], stderr=subprocess.DEVNULL)
            removed.append(BRIDGE)
        if self.state.get('release'):
            self.release.unmount([self.dir], [REPO_ROOT])
        try:
            with open(OWNER_FILE) as f:
                if f.read().strip() == self.dir:
                    os.unlink(OWNER_FILE)
        except FileNotFoundError:
            pass
        self.state['running'] = False
        self.state.pop('fsid', None)
        self._save()
        return removed

    def _end_sshd(self) -> List[str]:
        pid_file = os.path.join(self.dir, 'ssh', 'sshd.pid')
        try:
            with open(pid_file) as f:
                sshd = int(f.read().strip())
        except (OSError, ValueError):
            return []
        pids = [sshd] + _descendants(sshd)
        for signum in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signum)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(cephadm_host.alive(p) for p in pids):
                time.sleep(0.2)
        # sshd removes its own pid file as it ends
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pid_file)
        return ['sshd and %d process(es) of its sessions' % (len(pids) - 1)]

    def _restore_root_keys(self) -> None:
        if 'root_keys_before' not in self.state:
            return
        before = self.state.pop('root_keys_before')
        if before is None:
            if os.path.exists(ROOT_KEYS):
                os.unlink(ROOT_KEYS)
        else:
            with open(ROOT_KEYS, 'w') as f:
                f.write(before)

    def destroy(self) -> None:
        if self.state.get('running') or self.state.get('fsid'):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.state = {}


def _fsid_paths(fsid: str) -> List[str]:
    """What cephadm leaves on the machine for a cluster, if rm-cluster left any of it."""
    candidates = ['/var/lib/ceph/' + fsid, '/var/log/ceph/' + fsid,
                  '/etc/logrotate.d/ceph-' + fsid, '/run/ceph/' + fsid,
                  '/run/cephadm/%s.lock' % fsid]
    for directory in ('/etc/systemd/system', '/etc/sysctl.d'):
        if os.path.isdir(directory):
            candidates += [os.path.join(directory, n) for n in os.listdir(directory)
                           if fsid in n]
    return [p for p in candidates if os.path.lexists(p)]


def _read_sysctl(name: str) -> str:
    with open('/proc/sys/' + name) as f:
        return f.read().strip()
