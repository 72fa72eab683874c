"""A real Ceph cluster on this machine: mon, mgrs, OSDs and radosgw as processes.

Everything a cluster owns lives in its directory: ceph.conf, keyrings, daemon
data, logs, pid files and `cluster.json`, the state that later commands read.
One host is the machine itself on loopback; more hosts are network namespaces
on a bridge of the cluster's own (see netns.py), with the mon, mgrs and OSDs
on host 1's bridge address so that daemons on the other hosts reach them.
"""
import json
import os
import secrets
import shutil
import socket
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import hostpackages, keeper, netns, releases
from .ceph_client import CephSession, SessionEnded
from .containers import ANCHOR_ARGV, HOST_ROOT_ANCHOR, Containers
from .cpu_quota import CpuQuotas
from .processes import STOP_GRACE_S, ProcessTable, free_port, osd_stop_grace

STATE_FILE = 'cluster.json'
# How long a daemon may be down before `start` calls it dead: an orchestrator's
# restart of it (a stop of at most STOP_GRACE_S, then a start) takes less.
DOWN_GRACE_S = STOP_GRACE_S + 5
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
MODULE_SOURCES = {
    'rgwbench': os.path.join(REPO_ROOT, 'src', 'pybind', 'mgr', 'rgwbench'),
    # The orchestrator module takes only backends it knows by name; the local
    # backend stands in for Ceph's own test_orchestrator.
    'test_orchestrator': os.path.join(REPO_ROOT, 'qa', 'standalone', 'rgwbench', 'localorch'),
}
ORCH_BACKEND = 'test_orchestrator'
# Modules of the release that no test and no demo enables, left out of the mgr's
# module path: a mgr imports every module it finds when it starts, enabled or not.
# (Always-on modules stay: one missing is a health error.)
UNUSED_MGR_MODULES = frozenset((
    'alerts', 'dashboard', 'diskprediction_local', 'influx', 'insights', 'k8sevents',
    'localpool', 'mds_autoscaler', 'mirroring', 'nfs', 'nvmeof', 'osd_perf_query',
    'osd_support', 'prometheus', 'restful', 'rook', 'selftest', 'smb', 'snap_schedule',
    'stats', 'telegraf', 'zabbix', 'iostat'))
# Modules of the release that the dashboard imports: linked when it is served.
DASHBOARD_IMPORTS = ('nfs', 'smb')
# How long a mgr may take to start and load its modules (also after enabling one
# restarted it): about 10 CPU seconds on Tentacle, which took over 180 s of a
# machine at load 45 (CI26: a shared machine running 12 test shards).
MGR_START_S = 300
# The pool the mgr keeps its own data in, and the application its devicehealth module
# gives it (Pacific's devicehealth pool; `.mgr` from Quincy on).
MGR_POOL_APPLICATIONS = {'.mgr': 'mgr', 'device_health_metrics': 'mgr_devicehealth'}
RGW_SERVICE = 'rgw.default'
TEST_USER = 'rgwbench-test'
MGR_IDS = 'xyzw'
# bluestore on a file survives any stop; memstore keeps data in RAM (written to
# the OSD folder only at a clean shutdown) and costs far less CPU per write.
OBJECTSTORES = ('bluestore', 'memstore')


class ClusterError(Exception):
    pass


def default_dir() -> str:
    return os.environ.get('RGWBENCH_CLUSTER_DIR', '/tmp/rgwbench-cluster')


# The process that starts crashed mgrs again (keeper.py), and the tool it runs.
KEEPER = 'keeper'
SESSION_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ceph_session.py')
TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'cluster')


def rgw_not_registered(orch_ps: List[Dict[str, Any]], status: Dict[str, Any]) -> Optional[str]:
    """None when the mgr (`rgwbench status`) lists the radosgw daemons the orchestrator
    runs (`orch ps --daemon_type rgw`), and no others: after a restart the map may still
    hold the daemons of before the stop. Else what each shows."""
    running = {d['daemon_id'] for d in orch_ps if d.get('status_desc') == 'running'}
    listed = {d['name'] for d in status.get('rgw_daemons') or []}
    if running and running == listed:
        return None
    return 'RGW daemons %s, in the service map %s' % (sorted(running), sorted(listed))


class LocalCluster:
    down_grace_s = DOWN_GRACE_S

    def __init__(self, directory: str, log: Callable[[str], None] = releases.stderr_log) -> None:
        self.dir = os.path.abspath(directory)
        self.conf = os.path.join(self.dir, 'ceph.conf')
        self.log = log
        self.procs = ProcessTable(self.dir)
        self.state: Dict[str, Any] = self._load_state()
        # For the waits' polling, once a monitor answers; ended with the command.
        self._session: Optional[CephSession] = None

    # -- state ---------------------------------------------------------------
    def _load_state(self) -> Dict[str, Any]:
        try:
            with open(os.path.join(self.dir, STATE_FILE)) as f:
                state: Dict[str, Any] = json.load(f)
                return state
        except FileNotFoundError:
            return {}
        except ValueError as e:
            raise ClusterError('%s is damaged (%s); remove %s and start again'
                               % (STATE_FILE, e, self.dir))

    def _save_state(self) -> None:
        tmp = os.path.join(self.dir, STATE_FILE + '.tmp')
        with open(tmp, 'w') as f:
            json.dump(self.state, f, indent=2, sort_keys=True)
        os.rename(tmp, os.path.join(self.dir, STATE_FILE))

    @property
    def exists(self) -> bool:
        return bool(self.state)

    def _require(self) -> None:
        if not self.exists:
            raise ClusterError('no cluster in %s: run `cluster start` first' % self.dir)

    @property
    def release(self) -> releases.Release:
        self._require()
        return releases.get(self.state['release'])

    # -- running the release's programs ---------------------------------------
    def tool_argv(self, program: str, args: Sequence[str]) -> List[str]:
        return self.release.argv([program, '-c', self.conf] + list(args))

    def ceph_session_argv(self) -> List[str]:
        """ceph_session.py for this cluster, on the release's own Python (as `ceph` runs)."""
        return self.release.argv(['/usr/bin/python3', SESSION_SCRIPT, self.conf])

    def run_tool(self, program: str, args: Sequence[str], timeout: float = 60,
                 stdin: Optional[str] = None) -> 'subprocess.CompletedProcess[str]':
        try:
            return subprocess.run(self.tool_argv(program, args), input=stdin,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ClusterError('%s %s did not answer within %ds'
                               % (program, ' '.join(args), timeout))

    def ceph(self, args: Sequence[str], timeout: float = 60,
             stdin: Optional[str] = None) -> str:
        proc = self.run_tool('ceph', ['--connect-timeout', '15'] + list(args),
                             timeout=timeout, stdin=stdin)
        if proc.returncode != 0:
            raise ClusterError('ceph %s: %s' % (' '.join(args), proc.stderr.strip()))
        return proc.stdout

    def ceph_json(self, args: Sequence[str], timeout: float = 60) -> Any:
        return json.loads(self.ceph(list(args) + ['-f', 'json'], timeout=timeout))

    # -- start ---------------------------------------------------------------
    def start(self, release_name: str, hosts: Optional[int], osds: int, rgws: int,
              mgrs: int, objectstore: Optional[str] = None,
              containers: Optional[bool] = None) -> None:
        """Create a cluster, or start a stopped one again; `hosts`, `objectstore` and
        `containers` None keep what the cluster has (a new one: 1 host, bluestore,
        no containers)."""
        release = releases.get(release_name)
        if hosts is not None and not 1 <= hosts <= netns.MAX_HOSTS:
            raise ClusterError('--hosts %d: choose 1 to %d hosts' % (hosts, netns.MAX_HOSTS))
        if objectstore is not None and objectstore not in OBJECTSTORES:
            raise ClusterError('--objectstore %s: choose one of %s'
                               % (objectstore, ', '.join(OBJECTSTORES)))
        if self.exists:
            if self.state['release'] != release_name:
                raise ClusterError('%s already holds a %s cluster; stop it and remove the '
                                   'folder, or use another --dir'
                                   % (self.dir, self.state['release']))
            if objectstore is not None and objectstore != self.objectstore:
                raise ClusterError('%s already holds a cluster on %s; --objectstore cannot '
                                   'change it: destroy it first, or use another --dir'
                                   % (self.dir, self.objectstore))
            if hosts is not None and hosts != len(self.state['hosts']):
                raise ClusterError('%s already holds a cluster of %d host(s); --hosts cannot '
                                   'change it: destroy it first, or use another --dir'
                                   % (self.dir, len(self.state['hosts'])))
            if containers is not None and containers != bool(self.state.get('containers')):
                raise ClusterError('%s already holds a cluster %s containers; --containers '
                                   'cannot change it: destroy it first, or use another --dir'
                                   % (self.dir, 'with' if containers is False else 'without'))
            release.ensure_installed(self.log)
            self._network_up()
            self._mount()
            self._start_daemons()
        else:
            release.ensure_installed(self.log)
            if containers:
                hostpackages.ensure(hostpackages.CONTAINERS, self.log)
            self._create(release, hosts or 1, osds, rgws, mgrs, objectstore or 'bluestore',
                         bool(containers))
            self._start_keeper()
        try:
            self._wait_usable()
        finally:
            self._end_session()
        self._ensure_test_user()
        self.log('cluster ready: %s, %s' % (release_name, self.dir))

    @property
    def objectstore(self) -> str:
        """The OSDs' object store; clusters made before the option are bluestore."""
        return str(self.state.get('objectstore', 'bluestore'))

    def _mount(self) -> None:
        self.release.mount(self._own_mounts(), [REPO_ROOT], netns='network' in self.state)

    def _own_mounts(self) -> List[str]:
        """The cluster's folder, and the patched dashboard it serves (`serve_dashboard`)."""
        served = self.state.get('dashboard')
        return [self.dir] + ([served['tree']] if served else [])

    def serve_dashboard(self, tree: str, port: int) -> str:
        """Load the patched dashboard in `tree` (dashboard.ensure_built) into this
        cluster's mgrs in place of the release's, serving plain HTTP on the cluster's
        address, `port` for the first mgr, the next ports for the others; the active
        one's URL. The mgrs restart: a mgr reads its modules once."""
        self._require()
        self.state['dashboard'] = {'tree': tree, 'port': port}
        self._save_state()
        self._mount()
        folder = os.path.join(self.dir, 'mgr-modules')
        link = os.path.join(folder, 'dashboard')
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.path.join(tree, 'dashboard'), link)
        # Release modules the dashboard imports (its NFS and SMB pages), left out of the
        # module path otherwise.
        for name in DASHBOARD_IMPORTS:
            if not os.path.lexists(os.path.join(folder, name)) and os.path.exists(
                    self.release.path(os.path.join('/usr/share/ceph/mgr', name))):
                os.symlink(os.path.join('/usr/share/ceph/mgr', name), os.path.join(folder, name))
        mgrs = ['mgr.' + m for m in self.state['mgrs']]
        self.procs.stop(mgrs)
        for mgr in self.state['mgrs']:
            self._start_mgr(mgr)
        self._wait('a mgr to be available', self._mgr_available, MGR_START_S)
        # The mons check a module's option against those the mgrs reported, which an
        # available mgr may not have done yet ("unrecognized config option").
        self._wait('the mgrs to report the dashboard\'s options', lambda: self._answer(
            ['config', 'set', 'mgr', 'mgr/dashboard/ssl', 'false']) is not None, MGR_START_S)
        self.ceph(['config', 'set', 'mgr', 'mgr/dashboard/server_addr', self.public_addr])
        # The mgrs share the host's address: each its own port (a standby binds one too).
        for index, mgr in enumerate(self.state['mgrs']):
            self.ceph(['config', 'set', 'mgr', 'mgr/dashboard/%s/server_port' % mgr,
                       str(port + index)])
        self.ceph(['mgr', 'module', 'enable', 'dashboard'])
        found: Dict[str, str] = {}

        def serving() -> bool:
            services = self._answer_json(['mgr', 'services']) or {}
            found['url'] = str(services.get('dashboard') or '')
            return bool(found['url'])
        try:
            self._wait('the dashboard to serve', serving, MGR_START_S)
        finally:
            self._end_session()
        return found['url']

    # -- hosts ---------------------------------------------------------------------
    @property
    def public_addr(self) -> str:
        """Where the mon, mgrs and OSDs listen: host 1's address."""
        return str(self.state['hosts'][0]['addr'])

    def _network_up(self) -> None:
        if 'network' in self.state:
            try:
                with netns.lock():
                    netns.up(self.state['network'], self.state['hosts'])
            except netns.NetworkError as e:
                raise ClusterError(str(e))

    def _network_down(self) -> List[str]:
        if 'network' not in self.state:
            return []
        try:
            return netns.down(self.state['network'], self.state['hosts'])
        except netns.NetworkError as e:
            raise ClusterError(str(e))

    def _create(self, release: releases.Release, hosts: int, osds: int, rgws: int,
                mgrs: int, objectstore: str, containers: bool = False) -> None:
        if os.path.exists(self.dir) and os.listdir(self.dir):
            raise ClusterError('%s exists and is not empty; use an empty or new --dir'
                               % self.dir)
        for sub in ('log', 'asok', 'mgr-modules', 'rgw'):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        host = socket.gethostname().split('.')[0]
        mon_port = free_port(owner=self.dir)
        rgw_port = free_port([mon_port], count=rgws, owner=self.dir)
        panel_port = free_port([mon_port] + list(range(rgw_port, rgw_port + rgws)),
                               owner=self.dir)
        self.state = {
            'release': release.name,
            'fsid': str(uuid.uuid4()),
            'mon_port': mon_port,
            'hosts': [{'name': host, 'addr': '127.0.0.1'}],
            'mgrs': list(MGR_IDS[:mgrs]),
            'osds': list(range(osds)),
            'objectstore': objectstore,
            # radosgw runs as the orchestrator's rgw.default service: ports
            # rgw_port, rgw_port + 1, ... on each host.
            'rgw_port': rgw_port,
            'rgws_per_host': rgws,
            # The rgwbench web panel of each cluster on a port of its own: clusters
            # side by side (tests of two releases) would take turns at the default.
            'panel_port': panel_port,
        }
        if containers:
            # The orchestrator runs custom containers and radosgw under podman, each
            # on the release's own root (localcluster/containers.py).
            self.state['containers'] = {'rootfs': release.root}
        if hosts > 1:
            try:
                with netns.lock():
                    self.state.update(netns.plan(hosts, host))
                    # Recorded before anything is made, so that `stop` can
                    # remove whatever a failed start left.
                    self._save_state()
                    netns.up(self.state['network'], self.state['hosts'])
            except netns.NetworkError as e:
                raise ClusterError(str(e))
        self._save_state()
        self._write_conf()
        self._link_modules()
        self._mount()
        self.log('creating a %s cluster in %s' % (release.name, self.dir))
        self._start_anchor()
        self._create_mon()
        for mgr in self.state['mgrs']:
            self._create_mgr(mgr)
        for osd in self.state['osds']:
            self._create_osd(osd)

    def _write_conf(self) -> None:
        d = self.dir
        lines = [
            '[global]',
            'fsid = %s' % self.state['fsid'],
            'mon host = v2:%s:%d' % (self.public_addr, self.state['mon_port']),
            'public addr = %s' % self.public_addr,
            'auth cluster required = cephx',
            'auth service required = cephx',
            'auth client required = cephx',
            'auth allow insecure global id reclaim = false',
            'keyring = %s/keyring' % d,
            'log file = %s/log/$name.log' % d,
            'admin socket = %s/asok/$name.asok' % d,
            'run dir = %s' % d,
            # Two copies when there are two OSDs, so that one at a time can be
            # stopped (`osd ok-to-stop`) without a PG going inactive.
            'osd pool default size = %d' % min(2, len(self.state['osds'])),
            'osd pool default min size = 1',
            'osd pool default pg num = 8',
            'osd pool default pgp num = 8',
            'osd pool default pg autoscale mode = off',
            'mon allow pool size one = true',
            'mon allow pool delete = true',
            'mon max pg per osd = 1000',
            'mon warn on pool no redundancy = false',
            'mon data avail warn = 2',
            'mon data avail crit = 1',
            'osd crush chooseleaf type = 0',
            '',
            # None of the modules a new cluster enables (iostat, nfs, restful...): the
            # tool enables its own.
            'mgr initial modules = balancer',
            '',
            '[mon.a]',
            'mon data = %s/mon.a' % d,
            '',
            '[mgr]',
            'mgr module path = %s/mgr-modules' % d,
            'mgr data = %s/mgr.$id' % d,
            'keyring = %s/mgr.$id/keyring' % d,
            '',
            '[osd]',
            'osd data = %s/osd.$id' % d,
            'keyring = %s/osd.$id/keyring' % d,
        ] + self._objectstore_conf() + ['']
        with open(self.conf, 'w') as f:
            f.write('\n'.join(lines))

    def _objectstore_conf(self) -> List[str]:
        if self.objectstore == 'memstore':
            return [
                'osd objectstore = memstore',
                # What the OSD reports as its size; RAM is used only for what is stored.
                'memstore device bytes = 8589934592',
                # memstore writes its data to the OSD folder when it unmounts; a
                # fast shutdown exits before that, and a restarted OSD would be empty.
                'osd fast shutdown = false',
            ]
        return [
            'osd objectstore = bluestore',
            'bluestore block create = true',
            'bluestore block size = 8589934592',
            'bluestore fsck on mount = false',
            'osd memory target = 1073741824',
        ]

    def _link_modules(self) -> None:
        """The release's own mgr modules, plus ours, in one mgr_module_path."""
        folder = os.path.join(self.dir, 'mgr-modules')
        distro = '/usr/share/ceph/mgr'
        for entry in sorted(os.listdir(self.release.path(distro))):
            if entry in MODULE_SOURCES or entry in UNUSED_MGR_MODULES or entry == '__pycache__':
                continue
            os.symlink(os.path.join(distro, entry), os.path.join(folder, entry))
        for name, source in MODULE_SOURCES.items():
            os.symlink(source, os.path.join(folder, name))

    def _authtool(self, args: Sequence[str]) -> str:
        proc = subprocess.run(self.release.argv(['ceph-authtool'] + list(args)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        if proc.returncode != 0:
            raise ClusterError('ceph-authtool: %s' % proc.stderr.strip())
        return proc.stdout

    def _run_checked(self, argv: List[str], what: str) -> None:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=300)
        if proc.returncode != 0:
            raise ClusterError('%s failed:\n%s' % (what, proc.stdout[-2000:]))

    def _create_mon(self) -> None:
        d = self.dir
        keyring = os.path.join(d, 'keyring')
        self._authtool(['--create-keyring', keyring, '--gen-key', '-n', 'mon.',
                        '--cap', 'mon', 'allow *'])
        self._authtool([keyring, '--gen-key', '-n', 'client.admin',
                        '--cap', 'mon', 'allow *', '--cap', 'osd', 'allow *',
                        '--cap', 'mds', 'allow *', '--cap', 'mgr', 'allow *'])
        monmap = os.path.join(d, 'monmap')
        self._run_checked(self.release.argv(
            ['monmaptool', '--create', '--clobber', '--addv', 'a',
             '[v2:%s:%d]' % (self.public_addr, self.state['mon_port']),
             '--fsid', self.state['fsid'], monmap]), 'monmaptool')
        os.makedirs(os.path.join(d, 'mon.a'), exist_ok=True)
        self._run_checked(self.release.argv(
            ['ceph-mon', '-c', self.conf, '--mkfs', '-i', 'a', '--monmap', monmap,
             '--keyring', keyring]), 'ceph-mon --mkfs')
        self._start_mon()
        self._wait('the monitor to form a quorum', lambda: self._try_ceph(['mon', 'stat']), 60)

    def _create_mgr(self, mgr: str) -> None:
        os.makedirs(os.path.join(self.dir, 'mgr.' + mgr), exist_ok=True)
        keyring = self.ceph(['auth', 'get-or-create', 'mgr.' + mgr, 'mon', 'allow profile mgr',
                             'osd', 'allow *', 'mds', 'allow *'])
        with open(os.path.join(self.dir, 'mgr.' + mgr, 'keyring'), 'w') as f:
            f.write(keyring)
        self._start_mgr(mgr)

    def _create_osd(self, osd: int) -> None:
        data = os.path.join(self.dir, 'osd.%d' % osd)
        os.makedirs(data, exist_ok=True)
        osd_uuid = str(uuid.uuid4())
        secret = self._authtool(['--gen-print-key']).strip()
        got = self.ceph(['osd', 'new', osd_uuid, '-i', '-'],
                        stdin=json.dumps({'cephx_secret': secret})).strip()
        if got != str(osd):
            raise ClusterError('osd new gave id %s, expected %d' % (got, osd))
        self._run_checked(self.release.argv(
            ['ceph-osd', '-c', self.conf, '-i', str(osd), '--mkfs', '--osd-uuid', osd_uuid,
             '--key', secret]), 'ceph-osd --mkfs')
        self._authtool(['--create-keyring', os.path.join(data, 'keyring'), '--name',
                        'osd.%d' % osd, '--add-key', secret])
        self._start_osd(osd)

    # -- daemons ---------------------------------------------------------------
    def _daemon(self, name: str, argv: List[str], env: Optional[Dict[str, str]] = None) -> None:
        if self.procs.running(name):
            return
        self.procs.start(name, self.release.argv(argv, env))

    def _start_mon(self) -> None:
        self._daemon('mon.a', ['ceph-mon', '-f', '-c', self.conf, '-i', 'a'])

    def _start_mgr(self, mgr: str) -> None:
        # Keep the mgr from writing bytecode into the source tree it loads from.
        # A temporary folder of its own, as a mgr container has: what one cluster's
        # module leaves there is not mistaken for another's on the same machine.
        tmp = self.mgr_tmp(mgr)
        os.makedirs(tmp, mode=0o700, exist_ok=True)
        self._daemon('mgr.' + mgr, ['ceph-mgr', '-f', '-c', self.conf, '-i', mgr],
                     env={'PYTHONDONTWRITEBYTECODE': '1', 'TMPDIR': tmp})

    def mgr_tmp(self, mgr: str) -> str:
        """The mgr's temporary folder (the same path inside a release's chroot)."""
        return os.path.join(self.dir, 'tmp', 'mgr.' + mgr)

    def _start_osd(self, osd: int) -> None:
        self._daemon('osd.%d' % osd, ['ceph-osd', '-f', '-c', self.conf, '-i', str(osd)])

    def _start_anchor(self) -> None:
        # Run on the machine's root, not through the release (containers.py says why).
        if self.state.get('containers') and not self.release.native and \
                not self.procs.running(HOST_ROOT_ANCHOR):
            self.procs.start(HOST_ROOT_ANCHOR, ANCHOR_ARGV)

    def _start_daemons(self) -> None:
        self._start_anchor()
        self._start_mon()
        for mgr in self.state['mgrs']:
            self._start_mgr(mgr)
        for osd in self.state['osds']:
            self._start_osd(osd)
        self._start_keeper()

    def _start_keeper(self) -> None:
        # On the machine's own Python, as the tool runs: it is no daemon of the release.
        if not self.procs.running(KEEPER):
            self.procs.start(KEEPER, [sys.executable, TOOL, 'keep', '--dir', self.dir])

    def crashed_mgrs(self) -> List[Tuple[str, str]]:
        """(mgr, cause) of each mgr whose process ended by a crash (not stopped, not
        killed)."""
        found = []
        for mgr in self.state.get('mgrs', []):
            name = 'mgr.' + mgr
            if name not in self.procs.names() or self.procs.running(name):
                continue
            cause = keeper.crashed_since_start(os.path.join(self.dir, 'log', name + '.log'),
                                               'ceph-mgr')
            if cause:
                found.append((mgr, cause))
        return found

    def keep(self) -> None:
        """Start again each mgr that crashes, until the cluster's folder is gone."""
        keeper.keep(lambda: os.path.isdir(self.dir), self.crashed_mgrs, self._start_mgr,
                    keeper.stderr_log)

    # -- readiness ---------------------------------------------------------------
    def _try_ceph(self, args: Sequence[str]) -> bool:
        try:
            return self.run_tool('ceph', ['--connect-timeout', '5'] + list(args),
                                 timeout=20).returncode == 0
        except ClusterError:
            return False

    def _answer(self, args: Sequence[str], timeout: float = 20) -> Optional[str]:
        """What `ceph ARGS` prints, over one session for all the waits; None if it failed.

        Only once a monitor has answered: before, the session would wait for it
        longer than a wait's tries allow."""
        if self._session is None:
            self._session = CephSession(self.ceph_session_argv())
        try:
            ret, out, _ = self._session.call(list(args), timeout)
        except (SessionEnded, subprocess.TimeoutExpired):
            return None
        return out if ret == 0 else None

    def _answer_json(self, args: Sequence[str]) -> Any:
        out = self._answer(list(args) + ['-f', 'json'])
        try:
            return None if out is None else json.loads(out)
        except ValueError:
            return None

    def _end_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def _wait(self, what: str, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        # When each daemon was first seen not running: the orchestrator of a
        # running cluster restarts daemons (stop, then start) while `start` waits,
        # so a daemon is dead only once it stays down longer than a restart takes.
        down_since: Dict[str, float] = {}
        while time.monotonic() < deadline:
            if ready():
                return
            now = time.monotonic()
            down = {n for n in self.procs.names() if not self.procs.running(n)}
            down_since = {n: down_since.get(n, now) for n in down}
            dead = [n for n in sorted(down) if now - down_since[n] >= self.down_grace_s
                    and not self._kept(n)]
            if dead:
                raise ClusterError('waiting for %s: %s exited: %s' % (
                    what, ', '.join(dead), self.death_cause(dead[0])))
            time.sleep(1)
        raise ClusterError('timed out after %ds waiting for %s' % (timeout, what))

    def death_cause(self, name: str) -> str:
        """Why a daemon ended, in its own words, and how to start afresh.

        The daemon's log names the cause (`bluefs enospc` for a full OSD
        file); the backtrace after it is left in the log, not printed.
        """
        log = next((p for p in (os.path.join(self.dir, 'log', n + '.log')
                                for n in (name, 'client.' + name)) if os.path.exists(p)), '')
        cause = _first_fatal_line(log) if log else ''
        if not cause:
            tail = self.procs.output_tail(name, lines=5).strip()
            cause = tail.splitlines()[-1] if tail else 'no message'
        hint = ('\nits log: %s\nto start afresh (this removes the cluster and its data): '
                'cluster destroy --dir %s, then cluster start' % (log or '(none)', self.dir))
        if 'enospc' in cause.lower() or 'no space left' in cause.lower():
            hint = '\nits disk file is full' + hint
        return cause + hint

    def _kept(self, name: str) -> bool:
        """A mgr that crashed is no reason to give up: the keeper starts it again.

        Pacific's ceph-mgr can abort in cephx_verify_authorizer when clients
        connect while it starts on a loaded machine.
        """
        if not (name.startswith('mgr.') and
                name[len('mgr.'):] in [mgr for mgr, _ in self.crashed_mgrs()]):
            return False
        self._start_keeper()  # a new cluster's keeper starts once its daemons are made
        return True

    def _mgr_available(self) -> bool:
        stat = self._answer_json(['mgr', 'stat'])
        return bool(stat and stat.get('available'))

    def _osds_up(self) -> bool:
        stat = self._answer_json(['osd', 'stat'])
        if not stat:
            return False
        stat = stat.get('osdmap', stat)  # Pacific nests the figures
        return int(stat.get('num_up_osds', 0)) == len(self.state['osds'])

    def _pgs_active(self) -> bool:
        summary = self._answer_json(['pg', 'stat'])
        if not summary:
            return False
        summary = summary.get('pg_summary', summary)
        states = summary.get('num_pg_by_state', [])
        total = summary.get('num_pgs', 0)
        active = sum(s['num'] for s in states if 'active' in s['name'].split('+'))
        return total > 0 and active == total

    def rgw_urls(self) -> List[str]:
        """The endpoints of the rgw.default service as `cluster start` deploys it."""
        return ['http://%s:%d' % (host['addr'], self.state['rgw_port'] + i)
                for host in self.state['hosts'] for i in range(self.state['rgws_per_host'])]

    def _rgw_registered(self) -> bool:
        status = self._answer_json(['rgwbench', 'status'])
        return bool(status) and rgw_not_registered(
            self._answer_json(['orch', 'ps', '--daemon_type', 'rgw']) or [], status) is None

    def _s3_answers(self) -> bool:
        for url in self.rgw_urls():
            try:
                with urllib.request.urlopen(url + '/', timeout=5) as resp:
                    if resp.status != 200:
                        return False
            except (urllib.error.URLError, OSError):
                return False
        return True

    def _wait_usable(self) -> None:
        self._wait('an active mgr', self._mgr_available, MGR_START_S)
        self._wait('all OSDs up', self._osds_up, 180)
        self._ensure_modules()
        self._ensure_rgw()
        self._wait('radosgw to answer S3 requests', self._s3_answers, 240)
        # A radosgw answers S3 a few seconds before the mgr lists it in its service
        # map; a run started in between is refused (no RGW daemon in the map).
        self._wait('the mgr to list every radosgw', self._rgw_registered, 120)
        self._wait('all PGs active', self._pgs_active, 180)

    # -- the S3 user and the modules ---------------------------------------------
    def _ensure_test_user(self) -> None:
        if 's3' in self.state:
            return
        access = ''.join(secrets.choice(string.ascii_uppercase + string.digits)
                         for _ in range(20))
        secret = secrets.token_urlsafe(30)
        proc = self.run_tool('radosgw-admin', ['user', 'create', '--uid', TEST_USER,
                                               '--display-name', 'rgwbench tests',
                                               '--access-key', access, '--secret', secret],
                             timeout=120)
        if proc.returncode != 0:
            raise ClusterError('radosgw-admin user create: %s' % proc.stderr.strip())
        self.state['s3'] = {'uid': TEST_USER, 'access_key': access, 'secret_key': secret}
        self._save_state()

    def _ensure_modules(self) -> None:
        self.ceph(['config', 'set', 'mgr', 'mgr/%s/cluster_dir' % ORCH_BACKEND, self.dir])
        enabled = self.ceph_json(['mgr', 'module', 'ls']).get('enabled_modules', [])
        for name in MODULE_SOURCES:
            if name not in enabled:
                self.log('enabling mgr module %s' % name)
                self.ceph(['mgr', 'module', 'enable', name])
        # Enabling a module restarts the mgr on older releases: wait until the
        # modules answer.
        self._wait('the rgwbench module to answer',
                   lambda: self._answer(['rgwbench', 'status']) is not None, MGR_START_S)
        if 'panel_port' in self.state:
            self.ceph(['config', 'set', 'mgr', 'mgr/rgwbench/panel_port',
                       str(self.state['panel_port'])])
        self._wait('the %s orchestrator backend' % ORCH_BACKEND,
                   lambda: self._answer(['orch', 'set', 'backend', ORCH_BACKEND]) is not None,
                   MGR_START_S)
        self._wait('the orchestrator to answer',
                   lambda: self._answer(['orch', 'status']) is not None, MGR_START_S)
        self._ensure_mgr_pool_application()

    def _ensure_mgr_pool_application(self) -> None:
        """Give the mgr's pool its application where the mgr's own start left none.

        devicehealth creates the pool as soon as the OSDs are up, and names its
        application next; a module enabled in between restarts the mgr, and the new one
        finds the pool made and names nothing. Once the mgr writes to it, the pool raises
        POOL_APP_NOT_ENABLED, and every run on the cluster finds a health warning."""
        for pool in self.ceph_json(['osd', 'pool', 'ls', 'detail']):
            app = MGR_POOL_APPLICATIONS.get(pool.get('pool_name'))
            if app and not pool.get('application_metadata'):
                self.ceph(['osd', 'pool', 'application', 'enable', pool['pool_name'], app])

    def rgw_spec(self) -> str:
        """The spec of the RGW service every local cluster starts with."""
        hosts = ''.join('\n    - %s' % h['name'] for h in self.state['hosts'])
        return ('service_type: rgw\nservice_id: default\nplacement:\n'
                '  count_per_host: %d\n  hosts:%s\nspec:\n  rgw_frontend_port: %d\n'
                % (self.state['rgws_per_host'], hosts, self.state['rgw_port']))

    def _ensure_rgw(self) -> None:
        # With no service to list, `orch ls` prints a sentence, not JSON.
        listed = self.ceph(['orch', 'ls', '--service_name', RGW_SERVICE, '-f', 'json'])
        if RGW_SERVICE not in listed:
            self.log('deploying %s through the orchestrator' % RGW_SERVICE)
            self.ceph(['orch', 'apply', '-i', '-'], stdin=self.rgw_spec())

    def s3_endpoints(self) -> Dict[str, Any]:
        self._require()
        if 's3' not in self.state:
            raise ClusterError('the cluster in %s has no S3 user yet: run `cluster start`'
                               % self.dir)
        urls = self.rgw_urls()
        return {'url': urls[0] if urls else None, 'endpoints': urls,
                'access_key': self.state['s3']['access_key'],
                'secret_key': self.state['s3']['secret_key'],
                'uid': self.state['s3']['uid']}

    # -- stop --------------------------------------------------------------------
    def stop(self) -> List[str]:
        self._require()
        # The mgrs first, so that the orchestrator restarts nothing; the
        # monitor last, so that daemons can still say goodbye.
        # The keeper before all: a mgr that crashes as it stops stays stopped.
        stopped = self.procs.stop([KEEPER])
        names = self.procs.names()
        mgrs = [n for n in names if n.startswith('mgr.')]
        mons = [n for n in names if n.startswith('mon.')]
        osds = [n for n in names if n.startswith('osd.')]
        stopped += self.procs.stop(mgrs)
        stopped += self.procs.stop([n for n in names if n not in mgrs + mons + osds])
        stopped += self.procs.stop(osds, timeout=osd_stop_grace(self.objectstore))
        containers = Containers.of(self.dir, self.state)
        if containers is not None:
            containers.remove_all()
        stopped += self.procs.stop(mons)
        # The daemons' CPU quotas (the test orchestrator's) once none of them runs.
        CpuQuotas(str(self.state['fsid'])[:8]).release_all()
        # Namespaces and the bridge go once nothing of the cluster runs on them.
        removed = self._network_down()
        if removed:
            self.log('removed %s' % ', '.join(removed))
        # The repository mount may serve other clusters; it goes with the last one.
        self.release.unmount(self._own_mounts(), [REPO_ROOT])
        return stopped

    def destroy(self) -> None:
        """Stop, then remove the cluster's folder."""
        if self.exists:
            self.stop()
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        self.state = {}


# What a daemon writes to its log when it gives up, most telling first.
_FATAL = ('enospc', 'no space left', 'ceph_assert', 'abort', 'failed to', 'unable to',
          'error', ' err ')


def _first_fatal_line(path: str, last_bytes: int = 256 * 1024) -> str:
    """The log's most telling line about why the daemon ended, from its last part."""
    try:
        with open(path, 'rb') as f:
            f.seek(max(0, os.path.getsize(path) - last_bytes))
            lines = f.read().decode(errors='replace').splitlines()
    except OSError:
        return ''
    for word in _FATAL:
        for line in reversed(lines):
            if word in line.lower():
                return ' '.join(line.split())[:300]
    return ''
