"""Data as real clusters report it, for tests."""
import contextlib
import errno
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

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
    for _ in range(polls):
        missing = check()
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
