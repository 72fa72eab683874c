"""The cluster as settings see it: config values, service specs, restarts, readiness.

Every wait polls with a deadline and fails with a message that says what
was still missing; nothing sleeps a fixed time in the hope it is enough.
"""
import contextlib
import errno
import json
import socket
import ssl
import time
from typing import (Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Protocol, Set,
                    Tuple)

from ..errors import RGWBenchError
from .fencing import check_active
from .orchestration import orchestrator_backend
from . import storage
from .rgw_admin import S3Keys, UserAdmin, ZoneAdmin, ZonePlacement
from .rgw_daemons import RGWDaemon, rgw_daemons
from .secret_options import masked, secret_parts, shown
from .spec_fields import holds, same_spec
from .step_times import DAEMON_RESTART, OSD_BATCH, spec_kind

POLL_S = 1.0
# Applies of a spec the orchestrator overwrote with an older one, before giving up.
APPLY_TRIES = 3
# What the orchestrator holds after an apply (ClusterAccess._spec_held).
HELD, PUT_BACK, CHANGED_BY_OTHERS = 'held', 'put back', 'changed by others'


class NotReady(RGWBenchError):
    """The cluster did not reach a state in time."""


class GaveUp(RGWBenchError):
    """A wait ended early because the one who waited gave up (a run was aborted)."""


class SpecReplaced(Protocol):
    """What is done once a spec replaced another (cephadm: certs/cephadm_store.py removes
    the certificate a replaced TLS spec left in its store); what it removed."""

    def __call__(self, old: Optional[Dict[str, Any]], new: Optional[Dict[str, Any]],
                 service_name: str, orch: Callable[[Any], Any], mgr: Any,
                 log: Callable[[str], None]) -> List[str]: ...


class Mgr(Protocol):
    """The parts of the mgr (and its orchestrator client) settings use."""

    def mon_command(self, cmd: Dict[str, Any], inbuf: str = '') -> Tuple[int, str, str]: ...

    def get(self, data_name: str) -> Any: ...

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any: ...

    def list_daemons(self, service_name: Optional[str] = None,
                     daemon_type: Optional[str] = None, daemon_id: Optional[str] = None,
                     host: Optional[str] = None, refresh: bool = False) -> Any: ...

    def apply(self, specs: Any, no_overwrite: bool = False) -> Any: ...

    def remove_service(self, service_name: str, force: bool = False) -> Any: ...

    def service_action(self, action: str, service_name: str) -> Any: ...

    def daemon_action(self, action: str, daemon_name: str, image: Optional[str] = None) -> Any: ...

    def remote(self, module: str, method: str, *args: Any, **kwargs: Any) -> Any: ...


class Daemon(NamedTuple):
    name: str           # e.g. rgw.default.host1.abcdef
    daemon_type: str
    daemon_id: str
    host: str
    running: bool
    ports: List[int]
    ip: Optional[str]


class OsdGroups(NamedTuple):
    """The OSDs a restart goes through: (host, OSDs) in order, and those it leaves out."""
    hosts: List[Tuple[str, List[int]]]
    skipped: List[int]


def group_by_host(tree: Dict[str, Any], osds: List[int], skipped: List[int]) -> OsdGroups:
    """`osds` but `skipped`, grouped by the host `osd tree` puts each under (an OSD under
    none is a group of its own), hosts in name order."""
    by_host: Dict[str, List[int]] = {}
    placed: Set[int] = set()
    for node in (tree or {}).get('nodes') or []:
        if node.get('type') != 'host':
            continue
        children = sorted(int(c) for c in node.get('children') or []
                          if int(c) >= 0 and int(c) in osds and int(c) not in skipped)
        placed |= set(int(c) for c in node.get('children') or [])
        if children:
            by_host[str(node.get('name'))] = children
    groups = sorted(by_host.items())
    groups += [('osd.%d' % o, [o]) for o in sorted(osds) if o not in placed and o not in skipped]
    return OsdGroups(hosts=groups, skipped=sorted(skipped))


def _without_args(spec: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return {k: v for k, v in (spec or {}).items() if k != 'extra_container_args'}


class ClusterAccess:
    """Reads and changes the cluster through `ceph config` and the orchestrator."""

    def __init__(self, mgr: Mgr, raise_if_exception: Callable[[Any], Any],
                 spec_from_json: Callable[[Dict[str, Any]], Any],
                 timeout_s: float = 600.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 log: Optional[Callable[[str], None]] = None,
                 users: Optional[UserAdmin] = None,
                 zones: Optional[ZoneAdmin] = None,
                 spec_replaced: Optional[SpecReplaced] = None,
                 step_took: Optional[Callable[[str, float], None]] = None) -> None:
        self.mgr = mgr
        # told how long each restart, spec and OSD batch took (cluster/step_times.py)
        self.step_took = step_took or (lambda kind, seconds: None)
        self.spec_replaced = spec_replaced
        self.users = users
        self.zones = zones
        self.orch = raise_if_exception
        self.spec_from_json = spec_from_json
        self.timeout_s = timeout_s
        self.clock = clock
        self.sleep = sleep
        self.log = log or (lambda msg: None)
        self._given_up: Callable[[], bool] = lambda: False
        # OSD daemons restarted so far (a run counts its own from the difference).
        self.osd_restarted = 0

    def _took(self, kind: str, started: float) -> None:
        # The step is made: its timing failing to be kept must not fail it.
        try:
            self.step_took(kind, self.clock() - started)
        except Exception as e:
            self.log('the time of a step (%s) was not kept: %s' % (kind, e))

    # -- commands ---------------------------------------------------------------------
    def command(self, **cmd: Any) -> str:
        ret, out, err = self.mgr.mon_command(dict(cmd, format='json'))
        if ret != 0:
            # The monitor may quote the value it refused: a secret one stays hidden.
            secrets = secret_parts(str(cmd.get('name') or cmd.get('key') or ''),
                                   cmd.get('value'))
            raise RGWBenchError('`%s` failed: %s' % (
                cmd['prefix'], masked(err.strip(), secrets) or ret), ret)
        return out

    def command_json(self, **cmd: Any) -> Any:
        out = self.command(**cmd)
        return json.loads(out) if out.strip() else None

    @contextlib.contextmanager
    def giving_up_when(self, given_up: Callable[[], bool]) -> Iterator[None]:
        """Inside, a wait ends with GaveUp as soon as given_up() is true (an abort)."""
        before = self._given_up
        self._given_up = given_up
        try:
            yield
        finally:
            self._given_up = before

    def wait_for(self, what: str, check: Callable[[], Optional[str]],
                 timeout_s: Optional[float] = None) -> None:
        """Poll `check` (None: done; else what is still missing) until done or time-out."""
        deadline = self.clock() + (timeout_s or self.timeout_s)
        while True:
            if self._given_up():
                raise GaveUp('stopped waiting for %s: the run was aborted' % what)
            # A mgr failed over while it waited (hung, then resumed) stops here: the
            # new active mgr has taken the journal, and what this one would do next
            # (the next restart, the next spec) would change the cluster under it.
            check_active(self.mgr, 'wait for %s' % what)
            try:
                missing = check()
            except RGWBenchError as e:
                missing = str(e)
            if missing is None:
                return
            if self.clock() >= deadline:
                raise NotReady('timed out waiting for %s: %s' % (what, missing))
            self.sleep(POLL_S)

    # -- config ---------------------------------------------------------------------
    def config_dump(self) -> List[Dict[str, Any]]:
        return list(self.command_json(prefix='config dump') or [])

    def config_value(self, who: str, option: str) -> Optional[str]:
        """The value set for exactly this section (None when it is not set there)."""
        for entry in self.config_dump():
            if entry.get('section') == who and entry.get('name') == option \
                    and not entry.get('location_type'):
                return str(entry.get('value'))
        return None

    def put_config(self, who: str, option: str, value: Optional[str]) -> None:
        if value is None:
            self.command(prefix='config rm', who=who, name=option)
        else:
            self.command(prefix='config set', who=who, name=option, value=str(value))
        self.log('config %s %s = %s' % (who, option, shown(option, value)))

    def config_key(self, key: str) -> Optional[str]:
        """A value of the config-key store (None when there is none)."""
        ret, out, err = self.mgr.mon_command({'prefix': 'config-key get', 'key': key})
        if ret == -errno.ENOENT:
            return None
        if ret != 0:
            raise RGWBenchError('`config-key get %s` failed: %s' % (key, err.strip() or ret),
                                ret)
        return out

    def put_config_key(self, key: str, value: Optional[str]) -> None:
        if value is None:
            self.command(prefix='config-key rm', key=key)
        else:
            # The value as the command's input: never an argument, which the mon
            # logs and quotes (a private key, an S3 secret).
            ret, _, err = self.mgr.mon_command({'prefix': 'config-key set', 'key': key},
                                               inbuf=value)
            if ret != 0:
                raise RGWBenchError('`config-key set %s` failed: %s' % (
                    key, masked(err.strip(), [value]) or ret), ret)
        self.log('config-key %s %s' % (key, 'removed' if value is None else 'set'))

    def running_config(self, daemon: str, option: str) -> Optional[str]:
        """The value a running daemon reports for an option (`ceph config show`)."""
        # With a key, the answer is the bare value whatever the format asked for.
        out = self.command(prefix='config show', who=daemon, key=option).strip()
        try:
            found = json.loads(out)
        except ValueError:
            return out
        if isinstance(found, dict):
            found = found.get('value')
        return None if found is None else str(found).strip()

    # -- services -------------------------------------------------------------------
    def backend(self) -> Optional[str]:
        """The orchestrator's backend module (cephadm, rook, ...), None when there is none."""
        return orchestrator_backend(self.mgr)

    def services(self, service_type: Optional[str] = None) -> List[Dict[str, Any]]:
        """Specs of the services the orchestrator manages, as `ceph orch ls --export`."""
        found = self.orch(self.mgr.describe_service(service_type=service_type))
        return [s.spec.to_json() for s in found]

    def service_spec(self, service_name: str) -> Optional[Dict[str, Any]]:
        for spec in self.services():
            if self.spec_from_json(spec).service_name() == service_name:
                return spec
        return None

    def daemons(self, service_name: Optional[str] = None,
                daemon_type: Optional[str] = None) -> List[Daemon]:
        found = self.orch(self.mgr.list_daemons(service_name=service_name,
                                                daemon_type=daemon_type, refresh=True))
        return [Daemon(name=d.name(), daemon_type=d.daemon_type, daemon_id=d.daemon_id,
                       host=d.hostname, running=str(d.status_desc) == 'running' or
                       int(getattr(d.status, 'value', d.status) or 0) == 1,
                       ports=list(d.ports or []), ip=d.ip)
                for d in found]

    def put_service(self, service_name: str, spec: Optional[Dict[str, Any]],
                    replaced: Optional[Dict[str, Any]] = None) -> None:
        """Apply a spec (or remove the service) and wait until its daemons match.

        Under cephadm, what the spec it replaces left in cephadm's certificate store
        goes: the spec there now, and `replaced` (an undo's: the spec a run made, which
        may no longer be there if a crash came after it was put back)."""
        started = self.clock()
        self._put_service(service_name, spec, replaced)
        self._took(spec_kind(service_name), started)

    def _put_service(self, service_name: str, spec: Optional[Dict[str, Any]],
                     replaced: Optional[Dict[str, Any]]) -> None:
        if spec is None:
            if self.service_spec(service_name) is not None:
                self.orch(self.mgr.remove_service(service_name))
                self.log('removed service %s' % service_name)
            self.wait_for('the daemons of %s to go' % service_name,
                          lambda: self._gone(service_name))
            return
        before = self.service_spec(service_name)
        for attempt in range(1, APPLY_TRIES + 1):
            if self._apply_held(service_name, before, spec):
                break
            self.log('the orchestrator put back an older spec of %s after the apply (try %d '
                     'of %d): applying it again' % (service_name, attempt, APPLY_TRIES))
        else:
            raise NotReady('the orchestrator kept putting back an older spec of %s than the '
                           'one applied, %d times' % (service_name, APPLY_TRIES))
        olds = [old for old in (before, replaced) if old is not None]
        if replaced == before:
            olds = olds[:1]
        if olds and self.spec_replaced and self.backend() == 'cephadm':
            for old in olds:
                self.spec_replaced(old, spec, service_name, self.orch, self.mgr, self.log)

    def _apply_held(self, service_name: str, before: Optional[Dict[str, Any]],
                    spec: Dict[str, Any]) -> bool:
        """Apply a spec and wait for its daemons; False when the orchestrator no longer
        holds it (see cluster/spec_fields.py), the wait then cut short."""
        changed = spec.get('service_type') == 'rgw' and before is not None and before != spec
        # cephadm redeploys a daemon by itself when its container arguments change, and
        # writes its frontend (port, TLS, certificate) only when it deploys it: for any
        # other change the operator's next step, `ceph orch redeploy`, is the setting's
        # too. Not both: a redeploy asked for as cephadm made its own was seen to leave
        # the RGW running with the arguments it had before.
        redeploy = changed and _without_args(before) != _without_args(spec)
        # Read before asking: an orchestrator may redeploy as it applies.
        identities = self.rgw_identities() if changed else {}
        self.orch(self.mgr.apply([self.spec_from_json(spec)]))
        self.log('applied service %s' % service_name)
        if redeploy:
            self.orch(self.mgr.service_action('redeploy', service_name))
            self.log('redeploying the daemons of %s' % service_name)
        if not changed:
            self.wait_service(service_name)
            return True
        found: List[str] = []

        def restarted() -> Optional[str]:
            found[:] = [self._spec_held(service_name, before, spec)]
            if found[0] != HELD:
                return None
            return self._restarted_rgw(service_name, identities)
        # cephadm redeploys in its serve loop: until then the old daemons run and
        # serve as before, and would pass for the new.
        self.wait_for('%s to redeploy' % service_name, restarted)
        if found[0] == HELD:
            self.wait_service(service_name)
            found[:] = [self._spec_held(service_name, before, spec)]
        if found[0] == CHANGED_BY_OTHERS:
            raise NotReady('service %s: its spec was changed by someone else during the '
                           'apply; it is left as it is' % service_name)
        return found[0] == HELD

    def _spec_held(self, service_name: str, before: Optional[Dict[str, Any]],
                   spec: Dict[str, Any]) -> str:
        """HELD: the orchestrator holds the spec applied; PUT_BACK: it holds the one before
        again (cephadm's overwrite); CHANGED_BY_OTHERS: neither, someone else's change,
        which is not applied over."""
        stored = self.service_spec(service_name)
        if holds(stored, before, spec):
            return HELD
        if before is not None and same_spec(stored, before):
            return PUT_BACK
        return CHANGED_BY_OTHERS

    def _gone(self, service_name: str) -> Optional[str]:
        left = [d.name for d in self.daemons(service_name)]
        return 'still running: %s' % ', '.join(left) if left else None

    def wait_service(self, service_name: str) -> None:
        """Until the service runs every daemon it should, and RGWs serve what it says."""
        self.wait_for('service %s' % service_name, lambda: self._service_missing(service_name))

    def _service_missing(self, service_name: str) -> Optional[str]:
        described = self.orch(self.mgr.describe_service(service_name=service_name))
        if not described:
            return 'the orchestrator does not know %s' % service_name
        size = int(getattr(described[0], 'size', 0) or 0)
        daemons = self.daemons(service_name)
        running = [d for d in daemons if d.running]
        if len(running) < max(size, 1) or len(running) != len(daemons):
            return '%d of %d daemons running' % (len(running), max(size, len(daemons)))
        if described[0].spec.service_type == 'rgw':
            return self._rgw_missing(described[0].spec, running)
        return None

    def rgw_daemons(self) -> List[RGWDaemon]:
        return rgw_daemons(self.mgr.get('service_map'))

    def _rgw_missing(self, spec: Any, running: List[Daemon]) -> Optional[str]:
        """Every daemon is in the service map with the frontend its spec asks for, and answers."""
        listed = {d.name: d for d in self.rgw_daemons()}
        scheme = 'https' if getattr(spec, 'ssl', False) else 'http'
        for daemon in running:
            found = listed.get(daemon.daemon_id)
            if found is None:
                return '%s is not in the service map yet' % daemon.name
            urls = [e for e in found.endpoints if e.scheme == scheme]
            if not urls:
                return '%s serves %s, not %s yet' % (
                    daemon.name, ', '.join(found.frontends), scheme)
            if daemon.ports and urls[0].port not in daemon.ports:
                return '%s still serves port %d' % (daemon.name, urls[0].port)
            problem = answers(urls[0].url)
            if problem:
                return '%s: %s' % (urls[0].url, problem)
        return None

    # -- restarts -------------------------------------------------------------------
    def restart(self, daemons: str) -> None:
        """Restart OSDs (`osd`: one at a time, safely) or every daemon of a service."""
        if daemons == 'osd':
            self.restart_osds()
            return
        started = self.clock()
        # Read before asking: daemons that restart at once must look restarted.
        before = self.rgw_identities() if daemons.startswith('rgw.') else {}
        check_active(self.mgr, 'restart %s' % daemons)
        self.orch(self.mgr.service_action('restart', daemons))
        self.log('restarted %s' % daemons)
        if daemons.startswith('rgw.'):
            self.wait_for('%s to restart' % daemons,
                          lambda: self._restarted_rgw(daemons, before))
        self.wait_service(daemons)
        self._took(DAEMON_RESTART, started)

    def rgw_identities(self) -> Dict[str, Tuple[Optional[str], Optional[int]]]:
        """Each RGW daemon's registration (service-map gid) and pid, by daemon name.

        Either changes when a daemon restarts; the gid also where the pid does
        not (a daemon in a PID namespace of its own has the same pid each time).
        """
        return {d.name: (d.key, d.pid) for d in self.rgw_daemons()}

    def _restarted_rgw(self, service_name: str,
                       before: Dict[str, Tuple[Optional[str], Optional[int]]]
                       ) -> Optional[str]:
        now = self.rgw_identities()
        for daemon in self.daemons(service_name):
            if daemon.daemon_id in before and now.get(daemon.daemon_id) == \
                    before[daemon.daemon_id]:
                return '%s has not restarted yet' % daemon.name
        return None

    def osd_ids(self) -> List[int]:
        dump = self.command_json(prefix='osd dump')
        return sorted(int(o['osd']) for o in dump['osds'])

    def running_osd_ids(self) -> List[int]:
        """The OSDs up and in: those a restart restarts and a check asks."""
        return sorted(int(o['osd']) for o in self.command_json(prefix='osd dump')['osds']
                      if o.get('up') and o.get('in'))

    def osd_groups(self) -> OsdGroups:
        """The OSDs to restart, a group per host (`osd tree`), and those left out (down or
        out: they read the config database when they come back)."""
        osds = self.command_json(prefix='osd dump')['osds']
        skipped = sorted(int(o['osd']) for o in osds if not (o.get('up') and o.get('in')))
        return group_by_host(self.command_json(prefix='osd tree') or {},
                             [int(o['osd']) for o in osds], skipped)

    def wait_ready_to_restart(self, daemons: str) -> None:
        """Until the first daemon of a restart may stop (an OSD: `osd ok-to-stop`).

        Waited for before the restart is journaled: one that could never begin
        (a PG went offline-prone after the checks) leaves no restart to put back.
        """
        if daemons == 'osd':
            groups = self.osd_groups().hosts
            for osd in groups[0][1][:1] if groups else []:
                self.wait_for('osd.%d to be ok to stop' % osd,
                              lambda: self._not_ok_to_stop([osd]))

    def restart_osds(self) -> None:
        """Every OSD up and in, a host at a time where `osd ok-to-stop` allows the host's
        OSDs together, else one at a time; PGs active+clean before the next group."""
        groups = self.osd_groups()
        if groups.skipped:
            self.log('not restarting %s: down or out (they take the config database as it '
                     'is when they start)' % ', '.join('osd.%d' % o for o in groups.skipped))
        for host, batch in self._osd_batches(groups, log=True):
            self._restart_osd_batch(host, batch)

    def osd_restart_batches(self) -> int:
        """How many batches a restart of the OSDs would go through now (a host's OSDs
        together where `osd ok-to-stop` allows it, else each alone)."""
        return len(list(self._osd_batches(self.osd_groups())))

    def _osd_batches(self, groups: OsdGroups,
                     log: bool = False) -> Iterator[Tuple[str, List[int]]]:
        # A host's `ok-to-stop` is asked when its turn comes: after the host before is back.
        for host, osds in groups.hosts:
            together = len(osds) > 1 and self._not_ok_to_stop(osds) is None
            if len(osds) > 1 and not together and log:
                self.log('host %s: `osd ok-to-stop` refuses its %d OSDs together; one at a '
                         'time' % (host, len(osds)))
            for batch in [osds] if together or len(osds) == 1 else [[o] for o in osds]:
                yield host, batch

    def _restart_osd_batch(self, host: str, osds: List[int]) -> None:
        started = self.clock()
        named = ', '.join('osd.%d' % o for o in osds)
        self.wait_for('%s to be ok to stop' % named, lambda: self._not_ok_to_stop(osds))
        up_from = {osd: self._osd_up_from(osd) for osd in osds}
        for osd in osds:
            # Each OSD's restart is a change of its own: a mgr that hung mid-way and
            # resumed after another took over must not go on to the next OSD.
            check_active(self.mgr, 'restart osd.%d' % osd)
            self.orch(self.mgr.daemon_action('restart', 'osd.%d' % osd))
            self.osd_restarted += 1
            self.log('restarting osd.%d' % osd)

        def not_back() -> Optional[str]:
            return next(filter(None, (self._osd_not_back(o, up_from[o]) for o in osds)), None)
        self.wait_for('%s to be up again' % named, not_back)
        back_from = {osd: self._osd_up_from(osd) for osd in osds}

        def not_clean() -> Optional[str]:
            return next(filter(None, (pgs_not_reported_since(self.mgr.get('pg_stats'), o,
                                                             back_from[o]) for o in osds)),
                        None) or self.pgs_not_clean()
        self.wait_for('PGs to be active+clean after %s' % named, not_clean)
        self.log('restarted %s of host %s%s'
                 % (named, host, ' together' if len(osds) > 1 else ''))
        self._took(OSD_BATCH, started)

    def osd_restart_blocker(self) -> Optional[str]:
        """Why the OSDs cannot be restarted now (None: they can): cephadm's refusal to act
        on an unmanaged service, or stopping some OSD would take PGs offline."""
        unmanaged = self._unmanaged_osd_services()
        if unmanaged:
            return ('cephadm restarts no daemon of an unmanaged service (%s); make it managed '
                    '(its spec applied without unmanaged, where it adds no OSD you do not want) '
                    'or leave out the settings that restart OSDs' % ', '.join(unmanaged))
        for osd in self.running_osd_ids():
            why = self._not_ok_to_stop([osd])
            if why:
                return ('stopping osd.%d would take PGs offline (%s); run them where every pool '
                        'keeps its PGs active with one OSD down' % (osd, why))
        return None

    def _unmanaged_osd_services(self) -> List[str]:
        # cephadm carries out a daemon action in its serve loop, which passes over every
        # daemon of an unmanaged service: `ceph orch daemon restart osd.N` is accepted
        # and never done (seen on Tentacle; OSDs added by `orch daemon add osd` are so).
        if self.backend() != 'cephadm':
            return []
        return sorted(self.spec_from_json(s).service_name() for s in self.services('osd')
                      if s.get('unmanaged'))

    def _not_ok_to_stop(self, osds: List[int]) -> Optional[str]:
        ret, out, err = self.mgr.mon_command({'prefix': 'osd ok-to-stop',
                                              'ids': [str(o) for o in osds], 'format': 'json'})
        return None if ret == 0 else (err.strip() or 'not ok to stop (%d)' % ret)

    def _osd_up_from(self, osd: int) -> int:
        for info in self.command_json(prefix='osd dump')['osds']:
            if int(info['osd']) == osd:
                return int(info.get('up_from', 0))
        raise RGWBenchError('osd.%d is not in the OSD map' % osd)

    def _osd_not_back(self, osd: int, up_from: int) -> Optional[str]:
        for info in self.command_json(prefix='osd dump')['osds']:
            if int(info['osd']) == osd:
                if not info.get('up') or int(info.get('up_from', 0)) <= up_from:
                    return 'osd.%d is not up again yet' % osd
                return None
        return 'osd.%d is not in the OSD map' % osd

    # -- S3 users (a run's own, see s3user.py) --------------------------------------
    def _user_admin(self) -> UserAdmin:
        if self.users is None:
            raise RGWBenchError('no radosgw-admin to manage S3 users with')
        return self.users

    def user_exists(self, uid: str) -> bool:
        return self._user_admin().user_exists(uid)

    def create_user(self, uid: str, display_name: str) -> S3Keys:
        keys = self._user_admin().create_user(uid, display_name)
        self.log('S3 user %s created' % uid)
        return keys

    def remove_user(self, uid: str) -> None:
        self._user_admin().remove_user(uid)
        self.log('S3 user %s removed with its data' % uid)

    # -- pools and placement targets (settings/data_pool.py) ------------------------
    def _zone_admin(self) -> ZoneAdmin:
        if self.zones is None:
            raise RGWBenchError('no radosgw-admin to manage placement targets with')
        return self.zones

    def storage_state(self, kind: str, name: str) -> storage.State:
        if kind == storage.PLACEMENT:
            return storage.placement(self._zone_admin(), name)
        read = {storage.EC_PROFILE: storage.ec_profile, storage.CRUSH_RULE: storage.crush_rule,
                storage.POOL: storage.pool}[kind]
        return read(self, name)

    def put_storage(self, kind: str, name: str, state: storage.State,
                    allowing_delete: storage.AllowingDelete) -> None:
        if kind == storage.PLACEMENT:
            storage.put_placement(self._zone_admin(), name, state)
        elif kind == storage.POOL:
            storage.put_pool(self, name, state, allowing_delete)
        elif kind == storage.CRUSH_RULE:
            storage.put_crush_rule(self, name, state)
        else:
            storage.put_ec_profile(self, name, state)
        self.log('%s %s %s' % (kind, name, 'removed' if state is None else 'in place'))

    def zone_placement(self) -> ZonePlacement:
        return self._zone_admin().zone_placement()

    def up_osds_by_host(self) -> Dict[str, int]:
        return storage.up_osds_by_host(self.command_json(prefix='osd tree') or {})

    # -- health ---------------------------------------------------------------------
    def pgs_not_clean(self) -> Optional[str]:
        return described(self._unclean_pgs())

    def pgs_settling(self) -> Optional[str]:
        """The PGs not yet active+clean while each is only on its way there (a pool made a
        moment ago, PGs peering): None once all are clean, or once some PG misses a copy
        (an OSD down), which no wait mends."""
        unclean = self._unclean_pgs()
        if all(set(state.split('+')) <= SETTLING for state in unclean):
            return described(unclean)
        return None

    def _unclean_pgs(self) -> Dict[str, int]:
        states = pg_states(self.mgr.get('pg_summary'))
        return {s: n for s, n in states.items() if n and not is_clean(s)}

    def health(self) -> Tuple[str, List[str]]:
        """The health status and the names of its checks."""
        report = json.loads(self.mgr.get('health')['json'])
        return str(report.get('status', 'HEALTH_OK')), sorted(report.get('checks', {}))


# What an active+clean PG may be doing besides, with all its copies in place: a
# restart waits for none of it (a cluster scrubs on its own schedule, seen in CI).
CLEAN_MEANWHILE = frozenset(('scrubbing', 'deep', 'snaptrim', 'snaptrim_wait'))


# What PGs a moment ago made, or peering again, pass through on their way to
# active+clean with every copy in place.
SETTLING = frozenset(('unknown', 'creating', 'peering', 'activating', 'active',
                      'clean')) | CLEAN_MEANWHILE


class PgWaits(Protocol):
    """What waiting for PGs to settle reads (ClusterAccess, a test's fake cluster)."""

    def wait_for(self, what: str, check: Callable[[], Optional[str]],
                 timeout_s: Optional[float] = None) -> None: ...

    def pgs_settling(self) -> Optional[str]: ...

    def pgs_not_clean(self) -> Optional[str]: ...


def pgs_not_clean_once_settled(cluster: PgWaits, before: str,
                               log: Callable[[str], None]) -> Optional[str]:
    """The PGs not active+clean (None: every PG is), once those only on their way there
    (pgs_settling: a pool made a moment ago, PGs peering) have had their wait
    (ready_timeout) `before` something (`restarting rgw.default`). PGs a moment ago
    made settle within seconds; PGs missing a copy (an OSD down) are returned at the
    first look: no wait mends them."""
    settling = cluster.pgs_settling()
    if settling is None:
        return cluster.pgs_not_clean()
    log('waiting (at most ready_timeout) for %s, made or peering a moment ago, to be '
        'active+clean before %s' % (settling, before))
    try:
        cluster.wait_for('PGs made or peering a moment ago to settle before %s' % before,
                         cluster.pgs_settling)
    except NotReady:
        pass
    unclean = cluster.pgs_not_clean()
    log('%s before %s' % ('still %s' % unclean if unclean else 'every PG is active+clean',
                          before))
    return unclean


def described(unclean: Dict[str, int]) -> Optional[str]:
    """`PGs 8 creating+peering, ...` (None: no PG)."""
    if not unclean:
        return None
    return 'PGs %s' % ', '.join('%d %s' % (n, s) for s, n in sorted(unclean.items()))


def is_clean(state: str) -> bool:
    """Whether PGs in `state` (e.g. active+clean+scrubbing) have every copy and serve."""
    words = set(state.split('+'))
    return {'active', 'clean'} <= words and words - {'active', 'clean'} <= CLEAN_MEANWHILE


def pg_states(pg_summary: Dict[str, Any]) -> Dict[str, int]:
    """PG counts by state, summed over pools."""
    found: Dict[str, int] = {}
    for pool in (pg_summary or {}).get('by_pool', {}).values():
        for state, count in pool.items():
            found[state] = found.get(state, 0) + int(count)
    return found


def pgs_not_reported_since(pg_stats: Dict[str, Any], osd: int, epoch: int) -> Optional[str]:
    """Why the PGs of `osd` are not yet known as they are since `epoch` (None: they are).

    The mgr shows each PG as its primary last reported it. For seconds after an OSD
    came back (at `epoch`), PGs it serves may still show the active+clean of before it
    stopped, while they peer again: the next OSD must not stop on that word.
    """
    behind = sorted(str(pg.get('pgid')) for pg in (pg_stats or {}).get('pg_stats', [])
                    if osd in list(pg.get('up') or []) + list(pg.get('acting') or [])
                    and int(pg.get('reported_epoch') or 0) < epoch)
    if behind:
        return '%d PGs of osd.%d not reported since it came back at epoch %d (%s%s)' % (
            len(behind), osd, epoch, ', '.join(behind[:5]), ', ...' if len(behind) > 5 else '')
    return None


def answers(url: str, timeout_s: float = 5.0) -> Optional[str]:
    """None when an HTTP(S) endpoint answers a request at all, else why not.

    This asks only whether the daemon serves; whether its certificate is the
    right one is checked by the setting that put it there.
    """
    scheme, _, rest = url.partition('://')
    hostport = rest.split('/')[0]
    host, _, port = hostport.rpartition(':')
    host = host.strip('[]')
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s) as raw:
            sock: socket.socket = raw
            if scheme == 'https':
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                sock = context.wrap_socket(raw, server_hostname=host)
            sock.sendall(b'HEAD / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n'
                         % hostport.encode())
            head = sock.recv(16)
            return None if head.startswith(b'HTTP/') else 'answered %r' % head
    except (OSError, ValueError) as e:
        return '%s' % e
