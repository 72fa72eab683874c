"""Data as real clusters report it, for tests."""
import contextlib
import copy
import errno
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from rgwbench.cluster.access import Daemon
from rgwbench.cluster.rgw_admin import S3Keys, ZonePlacement
from rgwbench.cluster.storage import POOL, PLACEMENT, AllowingDelete, State
from rgwbench.cluster.rgw_daemons import RGWDaemon
from rgwbench.errors import NotFound, RGWBenchError

from rgwbench.results.calibration import Floors
from rgwbench.results.compare import comparison
from rgwbench.results.model import Run
from rgwbench.serial import load


def rgw_service_map(**frontends: str) -> Dict[str, Any]:
    """A service map with one RGW daemon per `name=frontend_config` given."""
    daemons: Dict[str, Any] = {'summary': ''}
    for gid, (name, frontend) in enumerate(sorted(frontends.items()), start=4131):
        daemons[str(gid)] = {
            'start_epoch': 2, 'gid': gid, 'addr': '127.0.0.1:0/%d' % (gid * 7),
            'metadata': {
                'ceph_version': 'ceph version 20.2.4 (7f79) tentacle (stable)',
                'frontend_config#0': frontend, 'frontend_type#0': frontend.split()[0],
                'hostname': 'vm', 'id': name, 'zone_name': 'default',
            },
            'task_status': {},
        }
    return {'epoch': 2, 'services': {
        'mgr': {'daemons': {'summary': '', 'x': {'gid': 0, 'metadata': {}}}},
        'rgw': {'daemons': daemons},
    }}


class MemoryStore:
    """The module's key/value store (get_store, set_store, get_store_prefix) in memory."""

    def __init__(self) -> None:
        self.data: Dict[str, str] = {}

    def get_store(self, key: str, default: Optional[str] = None) -> Optional[str]:
        return self.data.get(key, default)

    def set_store(self, key: str, val: Optional[str]) -> None:
        if val is None:
            self.data.pop(key, None)
        else:
            self.data[key] = val

    def get_store_prefix(self, key_prefix: str) -> Dict[str, str]:
        return {k: v for k, v in self.data.items() if k.startswith(key_prefix)}

    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]:
        """The mon's config-key commands on the module's keys (kvstore.SecretStore)."""
        from rgwbench.cluster.kvstore import MODULE_PREFIX
        key = str(cmd_dict['key'])
        assert key.startswith(MODULE_PREFIX), key
        key = key[len(MODULE_PREFIX):]
        if cmd_dict['prefix'] == 'config-key set':
            assert inbuf is not None
            self.data[key] = inbuf
            return 0, '', ''
        if key not in self.data:
            return -errno.ENOENT, '', 'error obtaining \'%s\': (2) No such file or directory' % key
        if cmd_dict['prefix'] == 'config-key get':
            return 0, self.data[key], ''
        assert cmd_dict['prefix'] == 'config-key rm', cmd_dict
        del self.data[key]
        return 0, '', ''


def wait_a_few_polls(what: str, check: Callable[[], Optional[str]], polls: int = 5) -> None:
    """What ClusterAccess.wait_for does, with a few polls in place of a time-out."""
    from rgwbench.cluster.access import NotReady
    from rgwbench.errors import RGWBenchError
    for _ in range(polls):
        try:
            missing = check()
        except RGWBenchError as e:   # as ClusterAccess.wait_for: not there yet
            missing = str(e)
        if missing is None:
            return
    raise NotReady('timed out waiting for %s: %s' % (what, missing))


class MgrStore(MemoryStore):
    """One mgr's view of the module's store: the store (shared with other mgrs when given),
    its own name and the mgr map it last got."""

    def __init__(self, data: Optional[Dict[str, str]] = None, name: str = 'a',
                 active: str = 'a', epoch: int = 9) -> None:
        super().__init__()
        if data is not None:
            self.data = data
        self.name = name
        self.mgr_map = {'epoch': epoch, 'active_name': active}

    @property
    def active(self) -> str:
        return str(self.mgr_map['active_name'])

    @active.setter
    def active(self, name: str) -> None:
        self.mgr_map['active_name'] = name

    def get_mgr_id(self) -> str:
        return self.name

    def get(self, data_name: str) -> Any:
        assert data_name == 'mgr_map'
        return self.mgr_map


class FakeWaits:
    """ClusterAccess's waits for fake clusters: a few polls, and giving up as it does."""

    given_up: Callable[[], bool] = staticmethod(lambda: False)
    # Why stopping an OSD would take PGs offline (`osd ok-to-stop`), if it would.
    osd_blocker: Optional[str] = None

    @contextlib.contextmanager
    def giving_up_when(self, given_up: Callable[[], bool]) -> Iterator[None]:
        before = self.given_up
        self.given_up = given_up
        try:
            yield
        finally:
            self.given_up = before

    def wait_ready_to_restart(self, daemons: str) -> None:
        if daemons == 'osd':
            self.wait_for('osd.0 to be ok to stop', lambda: self.osd_blocker)

    def wait_for(self, what: str, check: Callable[[], Optional[str]],
                 timeout_s: Optional[float] = None) -> None:
        from rgwbench.cluster.access import GaveUp
        if self.given_up():
            raise GaveUp('stopped waiting for %s: the run was aborted' % what)
        wait_a_few_polls(what, check)


#: `config help`'s can_update_at_runtime of the options the fake cluster knows (tests add some)
RUNTIME = {'rgw_thread_pool_size': True, 'ms_cluster_mode': False, 'osd_op_num_shards': False}
#: the RGW service the fake cluster runs unless told otherwise
RGW_SPEC: Dict[str, Any] = {
    'service_type': 'rgw', 'service_id': 'default', 'service_name': 'rgw.default',
    'placement': {'hosts': ['h1'], 'count_per_host': 1}, 'spec': {'rgw_frontend_port': 8000}}
#: the RGW daemon the fake cluster's service map lists unless told otherwise
RGW_DAEMON = RGWDaemon('default.h1.a', 'h1', 'default', version=None, frontends=[],
                       endpoints=[], pid=7, key='4100')


class HostSpecLike:
    def __init__(self, hostname: str, addr: str) -> None:
        self.hostname = hostname
        self.addr = addr


class FakeMgr:
    def get_hosts(self) -> List[HostSpecLike]:
        return [HostSpecLike('host1', '127.0.0.1'), HostSpecLike('other', '127.0.0.9')]


class FakeCluster(FakeWaits):
    """The parts of ClusterAccess settings use, in memory: a config database, service specs,
    config-keys, the RGW daemons and what they run with, OSDs, health, S3 users.

    Every call that changes something is logged in ``calls`` (and specs put in
    ``applied``); one whose log line starts with ``fail_on`` fails, and a spec of the
    service type ``refuse`` is refused as the orchestrator would.
    """

    def __init__(self, specs: Sequence[Dict[str, Any]] = (RGW_SPEC,),
                 rgws: Sequence[RGWDaemon] = (RGW_DAEMON,)) -> None:
        self.specs = {self.spec_from_json(s).service_name(): copy.deepcopy(s) for s in specs}
        self.config: Dict[Tuple[str, str], str] = {('global', 'fsid_like'): 'x'}
        self.keys: Dict[str, str] = {}                     # the config-key store
        self.running: Dict[Tuple[str, str], str] = {}       # (daemon, option): value
        self.rgws = list(rgws)
        self.mgr: Any = FakeMgr()
        self.calls: List[str] = []
        self.applied: List[Any] = []
        self.replaced: List[Any] = []   # what each put_service was told it replaces
        self.fail_on: Optional[str] = None
        self.refuse: Optional[str] = None
        self.health_status = 'HEALTH_OK'
        self.unclean: Optional[str] = None
        self.unclean_settles = False        # whether those PGs are on their way to clean
        self.users: Dict[str, str] = {}     # S3 users by uid: their display names
        self.user_keys = ('AK', 'SK')       # the keys the next user made gets
        self.backend_module: Optional[str] = None   # the orchestrator's: 'cephadm', ...
        # EC profiles, CRUSH rules, pools, placement targets: (kind, name) -> state
        self.storage: Dict[Tuple[str, str], Dict[str, Any]] = {}
        self.up_osds = {'host-a': 1, 'host-b': 1}   # OSDs up on each host
        self.down_osds: List[int] = []      # OSDs down or out: no restart reaches them
        self.osd_restarted = 0              # OSD daemons restarted (as ClusterAccess counts)

    def _call(self, what: str) -> None:
        self.calls.append(what)
        if self.fail_on and what.startswith(self.fail_on):
            raise RuntimeError('%s failed' % what)

    def backend(self) -> Optional[str]:
        return self.backend_module

    @staticmethod
    def spec_from_json(spec: Dict[str, Any]) -> Any:
        from ceph.deployment.service_spec import ServiceSpec
        return ServiceSpec.from_json(copy.deepcopy(spec))

    @staticmethod
    def orch(result: Any) -> Any:
        return result

    # ChangeTarget
    def config_value(self, who: str, option: str) -> Optional[str]:
        return self.config.get((who, option))

    def put_config(self, who: str, option: str, value: Optional[str]) -> None:
        self._call('config %s/%s=%s' % (who, option, value))
        if value is None:
            self.config.pop((who, option), None)
        else:
            self.config[(who, option)] = value

    def services(self, service_type: Optional[str] = None) -> List[Dict[str, Any]]:
        return [copy.deepcopy(s) for s in self.specs.values()
                if service_type is None or s['service_type'] == service_type]

    def service_spec(self, service_name: str) -> Optional[Dict[str, Any]]:
        spec = self.specs.get(service_name)
        return copy.deepcopy(spec) if spec else None

    def put_service(self, service_name: str, spec: Optional[Dict[str, Any]],
                    replaced: Optional[Dict[str, Any]] = None) -> None:
        self._call('service %s' % service_name)
        self.applied.append((service_name, spec))
        self.replaced.append((service_name, replaced))
        if spec is not None and self.refuse and spec['service_type'] == self.refuse:
            raise RuntimeError('the orchestrator refused %s' % service_name)
        if spec is None:
            self.specs.pop(service_name, None)
        else:
            self.specs[service_name] = copy.deepcopy(spec)
            fields = spec.get('spec') or {}
            if spec['service_type'] == 'rgw' and fields.get('ssl'):
                # as cephadm does, and it never removes the key when ssl goes
                self.keys['rgw/cert/%s' % service_name] = fields['rgw_frontend_ssl_certificate']

    def config_key(self, key: str) -> Optional[str]:
        return self.keys.get(key)

    def put_config_key(self, key: str, value: Optional[str]) -> None:
        if value is None:
            self.keys.pop(key, None)
        else:
            self.keys[key] = value

    def restart(self, daemons: str) -> None:
        self._call('restart %s' % daemons)
        # daemons that restart take what the config database says
        for (who, option), value in self.config.items():
            if daemons == 'osd' and who == 'osd':
                for osd in self.osd_ids():
                    self.running[('osd.%d' % osd, option)] = value
            if daemons.startswith('rgw.') and who == 'client.rgw':
                for rgw in self.rgws:
                    self.running[('rgw.%s' % rgw.key, option)] = value
        if daemons == 'osd':
            self.osd_restarted += len(self.running_osd_ids())
            for osd in self.osd_ids():
                for option in ('ms_cluster_mode', 'ms_service_mode'):
                    if ('osd', option) not in self.config:
                        self.running.pop(('osd.%d' % osd, option), None)

    def user_exists(self, uid: str) -> bool:
        return uid in self.users

    def create_user(self, uid: str, display_name: str) -> S3Keys:
        self._call('user create %s' % uid)
        self.users[uid] = display_name
        return S3Keys(uid, *self.user_keys)

    def remove_user(self, uid: str) -> None:
        self._call('user rm %s' % uid)
        self.users.pop(uid, None)

    def storage_state(self, kind: str, name: str) -> State:
        return copy.deepcopy(self.storage.get((kind, name)))

    def put_storage(self, kind: str, name: str, state: State,
                    allowing_delete: AllowingDelete) -> None:
        self._call('%s %s %s' % (kind, name, 'rm' if state is None else 'create'))
        if state is not None:
            self.storage.setdefault((kind, name), copy.deepcopy(state))
        elif kind == POOL and (kind, name) in self.storage:
            allowing_delete(lambda: self._remove_pool(name))
        else:
            self.storage.pop((kind, name), None)

    def _remove_pool(self, name: str) -> None:
        # as the monitors refuse it
        if self.config.get(('mon', 'mon_allow_pool_delete')) != 'true':
            raise RGWBenchError('pool deletion is disabled; you must first set the '
                                'mon_allow_pool_delete config option to true', errno.EPERM)
        self._call('pool %s deleted' % name)
        del self.storage[(POOL, name)]

    def zone_placement(self) -> ZonePlacement:
        ours = sorted(n for k, n in self.storage if k == PLACEMENT)
        return ZonePlacement(
            zonegroup='default', zone='default', realm=False, default_id='default-placement',
            index_pool='default.rgw.buckets.index', data_extra_pool='default.rgw.buckets.non-ec',
            targets=tuple(['default-placement'] + ours),
            data_pools=dict({'default-placement': 'default.rgw.buckets.data'},
                            **{n: self.storage[(PLACEMENT, n)]['data_pool'] for n in ours}))

    def up_osds_by_host(self) -> Dict[str, int]:
        return dict(self.up_osds)

    def osd_restart_batches(self) -> int:
        return len([host for host, up in self.up_osds.items() if up])

    # what settings read
    def command_json(self, **cmd: Any) -> Any:
        assert cmd['prefix'] == 'config help'
        if cmd['key'] not in RUNTIME:
            raise NotFound('`config help` failed: -2')
        return {'name': cmd['key'], 'can_update_at_runtime': RUNTIME[cmd['key']]}

    def running_config(self, daemon: str, option: str) -> Optional[str]:
        return self.running.get((daemon, option), 'crc secure' if option.startswith('ms_')
                                else '512')

    def rgw_daemons(self) -> List[RGWDaemon]:
        return self.rgws

    def osd_ids(self) -> List[int]:
        return [0, 1]

    def running_osd_ids(self) -> List[int]:
        return [o for o in self.osd_ids() if o not in self.down_osds]

    def daemons(self, service_name: Optional[str] = None,
                daemon_type: Optional[str] = None) -> List[Daemon]:
        """The running daemons of each RGW spec: count_per_host on each of its hosts."""
        found = []
        for name, spec in sorted(self.specs.items()):
            if spec['service_type'] != 'rgw' or service_name not in (None, name):
                continue
            placement = spec.get('placement') or {}
            port = (spec.get('spec') or {}).get('rgw_frontend_port')
            for host in placement.get('hosts') or []:
                for i in range(int(placement.get('count_per_host') or 1)):
                    daemon_id = '%s.%s.%s' % (spec['service_id'], host, 'abcdefgh'[i])
                    found.append(Daemon('rgw.' + daemon_id, 'rgw', daemon_id, host, True,
                                        [port] if port else [], '127.0.0.1'))
        return found

    def health(self) -> Tuple[str, List[str]]:
        return self.health_status, ['OSD_FULL'] if self.health_status == 'HEALTH_ERR' else []

    def pgs_not_clean(self) -> Optional[str]:
        return self.unclean

    def pgs_settling(self) -> Optional[str]:
        return self.pgs_not_clean() if self.unclean_settles else None

    def osd_restart_blocker(self) -> Optional[str]:
        return self.osd_blocker


class SettlingCluster(FakeCluster):
    """PGs on their way to active+clean (a pool just made) for the first `polls` looks."""

    def __init__(self, polls: int) -> None:
        super().__init__()
        self.polls = polls
        self.unclean_settles = True

    def pgs_not_clean(self) -> Optional[str]:
        if self.polls > 0:
            self.polls -= 1
            return 'PGs 64 unknown'
        return None


def steady_seconds(ops_per_s: float, bytes_per_op: float, count: int) -> List[Dict[str, Any]]:
    """A workload's per-second series that barely moves (0.2 %): its ops/s have a small noise,
    and the figures that take theirs from the ops/s (RGW and HAProxy CPU) with them."""
    return [{'t': t, 'ops': ops_per_s * (1 + 0.002 * (t % 2)),
             'bytes': ops_per_s * (1 + 0.002 * (t % 2)) * bytes_per_op} for t in range(count)]


def stored_run(record: Any, floors: Optional[Floors] = None) -> Run:
    """A run (or its JSON) as the engine saves it: with the comparison of what it measured
    so far (a renderer computes none), on a cluster of these floors (None: never
    calibrated)."""
    run = record if isinstance(record, Run) else load(Run, record)
    if not run.comparison:
        run.comparison = comparison(run, floors)
    return run


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
