"""An orchestrator backend for the local test cluster that really runs daemons.

cephadm needs systemd and a container engine; Ceph's test_orchestrator only
records specs. This backend answers the same orchestrator calls for the local
cluster of `qa/standalone/rgwbench/cluster`, starting radosgw, HAProxy and
custom-container processes on its hosts, so that rgwbench's orchestrator calls
have real effects. Like cephadm, `apply` checks a spec and records it at once;
the serve thread then converges the daemons to it, and restarts a daemon that
died (as systemd would) unless it was stopped on purpose.

Fault injection, for the tests only (a real orchestrator has nothing like it):
while the file `orch/fail-next-call` exists in the cluster folder, the next
orchestrator call (get_hosts, apply*, remove_service, list_daemons,
describe_service, daemon_action, service_action) removes it and fails with an
OrchestratorError, as a backend that loses its hosts for a moment would. The
file may name the calls that may take the failure, one per line (say
`apply`); an empty file means any call. `available()` never fails this way:
it is what `ceph orch status` and the module's status ask.
"""
import datetime
import os
import random
import re
import string
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import mgr_module
import orchestrator
from ceph.deployment.hostspec import HostSpec
from ceph.deployment.service_spec import PlacementSpec, ServiceSpec
from mgr_module import MgrModule, Option
from orchestrator import DaemonDescription, DaemonDescriptionStatus, ServiceDescription

from .container import ContainerKind
from .context import Context, DaemonKind
from .hosts import load_cluster, load_hosts
from .ingress import IngressKind
from .placement import place
from .rgw import RGWKind
from .state import DaemonRecord, OrchestratorState, ServiceRecord, now, parse_time
from .tool import HOST_ROOT_ANCHOR, Containers, CpuQuotas, ProcessTable, osd_stop_grace

# Services whose daemons this backend deploys, in the order they converge
# (an ingress is configured from the RGW daemons behind it).
DEPLOYED_TYPES = ('rgw', 'ingress', 'container')
RESTARTS_PER_MINUTE = 3
# In the cluster folder: its presence makes the next orchestrator call fail (tests only).
FAIL_NEXT_CALL = os.path.join('orch', 'fail-next-call')


class LocalOrchestrator(MgrModule, orchestrator.Orchestrator):
    if hasattr(mgr_module, 'CLICommandBase'):
        CLICommand = mgr_module.CLICommandBase.make_registry_subtype('LocalOrchCLICommand')
    COMMANDS: List[Any] = []
    NOTIFY_TYPES: List[Any] = []
    MODULE_OPTIONS = [
        Option('cluster_dir', type='str', default='',
               desc='folder of the local cluster this backend runs daemons for'),
        Option('rgw_frontend_extra_args', type='str', default='tcp_nodelay=1',
               desc='appended to every rgw_frontends (beast stalls GETs without '
                    'tcp_nodelay)'),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.RLock()
        self._restarts: Dict[str, List[float]] = {}
        self.state = OrchestratorState(self)

    # -- plumbing -------------------------------------------------------------
    @property
    def cluster_dir(self) -> str:
        return str(self.get_module_option('cluster_dir') or '')

    def _context(self) -> Context:
        if not self.cluster_dir:
            raise orchestrator.OrchestratorError(
                'mgr/%s/cluster_dir is not set: run `cluster start`' % self.module_name)
        cluster = load_cluster(self.cluster_dir)
        in_chroot = (cluster.get('containers') or {}).get('rootfs', '/') != '/'
        anchor = self._procs().pid(HOST_ROOT_ANCHOR) if in_chroot else None
        return Context(self.cluster_dir, load_hosts(self.cluster_dir), self, self.state,
                       Containers.of(self.cluster_dir, cluster, anchor),
                       CpuQuotas(str(cluster['fsid'])[:8]))

    def _kinds(self, ctx: Context) -> Dict[str, DaemonKind]:
        return {'rgw': RGWKind(ctx, str(self.get_module_option('rgw_frontend_extra_args'))),
                'ingress': IngressKind(ctx, key_file=self._release() >= 17),
                'container': ContainerKind(ctx)}

    def _release(self) -> int:
        """The major version of `ceph version 16.2.15 (...) pacific (stable)`."""
        found = re.search(r'(\d+)\.\d+', self.version)
        return int(found.group(1)) if found else 0

    def _procs(self) -> Any:
        return ProcessTable(self.cluster_dir)

    def _stop(self, ctx: Context, names: List[str]) -> None:
        """Stop daemons; a container whose `podman run` was killed goes too."""
        self._procs().stop(names)
        if ctx.containers is not None:
            ctx.containers.remove(names)

    def _injected_failure(self, call: str) -> None:
        """Fail this call once if a test asked for it (see FAIL_NEXT_CALL)."""
        if not self.cluster_dir:
            return
        path = os.path.join(self.cluster_dir, FAIL_NEXT_CALL)
        try:
            with open(path) as f:
                calls = f.read().split()
        except FileNotFoundError:
            return
        if calls and call not in calls:
            return
        try:
            os.unlink(path)  # whoever removes it takes the failure: exactly one call fails
        except FileNotFoundError:
            return
        self.log.warning('failing %s on purpose (%s was there)', call, FAIL_NEXT_CALL)
        raise orchestrator.OrchestratorError('%s failed: injected by a test (%s)'
                                             % (call, FAIL_NEXT_CALL))

    def serve(self) -> None:
        while not self._stopping.is_set():
            try:
                if self.cluster_dir:
                    self._converge()
            except Exception as e:
                self.log.exception('converge failed: %s', e)
            self._wake.wait(5)
            self._wake.clear()

    def shutdown(self) -> None:
        self._stopping.set()
        self._wake.set()

    def available(self) -> Tuple[bool, str, Dict[str, Any]]:
        try:
            load_hosts(self._context().dir)
        except orchestrator.OrchestratorError as e:
            return False, str(e), {}
        return True, '', {}

    # -- hosts ------------------------------------------------------------------
    @orchestrator.handle_orch_error
    def get_hosts(self) -> List[HostSpec]:
        self._injected_failure('get_hosts')
        return [HostSpec(h.name, addr=h.addr) for h in self._context().hosts]

    # -- apply ------------------------------------------------------------------
    @orchestrator.handle_orch_error
    def apply(self, specs: Sequence[Any], no_overwrite: bool = False,
              continue_on_error: bool = False) -> List[str]:
        self._injected_failure('apply')
        return [self._apply_spec(spec) for spec in specs]

    @orchestrator.handle_orch_error
    def apply_rgw(self, spec: Any) -> str:
        self._injected_failure('apply_rgw')
        return self._apply_spec(spec)

    @orchestrator.handle_orch_error
    def apply_ingress(self, spec: Any) -> str:
        self._injected_failure('apply_ingress')
        return self._apply_spec(spec)

    @orchestrator.handle_orch_error
    def apply_container(self, spec: Any) -> str:
        self._injected_failure('apply_container')
        return self._apply_spec(spec)

    def _apply_spec(self, spec: ServiceSpec) -> str:
        if spec.service_type not in DEPLOYED_TYPES:
            raise orchestrator.OrchestratorError(
                'this orchestrator cannot apply %s specs (it deploys %s)'
                % (spec.service_type, ', '.join(DEPLOYED_TYPES)))
        spec.validate()
        name = spec.service_name()
        with self._lock:
            ctx = self._context()
            kind = self._kinds(ctx)[spec.service_type]
            kind.validate(spec, place(spec.placement, ctx.hosts, name))
            old = self.state.services().get(name)
            created = old.created if old and not old.deleted else now()
            self.state.set_service(name, ServiceRecord(spec.to_json(), created))
        self._wake.set()
        return 'Scheduled %s update...' % name

    @orchestrator.handle_orch_error
    def remove_service(self, service_name: str, force: bool = False) -> str:
        self._injected_failure('remove_service')
        with self._lock:
            record = self.state.services().get(service_name)
            if record is None or record.deleted:
                raise orchestrator.OrchestratorError(
                    'Invalid service name "%s". View currently running services using '
                    '"ceph orch ls"' % service_name)
            self.state.set_service(service_name, record._replace(deleted=now()))
        self._wake.set()
        return 'Removed service %s' % service_name

    # -- converging -------------------------------------------------------------
    def _converge(self) -> None:
        with self._lock:
            ctx = self._context()
            kinds = self._kinds(ctx)
            services = self.state.services()
            order = sorted(services.items(),
                           key=lambda kv: DEPLOYED_TYPES.index(kv[1].spec['service_type']))
            for name, record in order:
                spec = record.service_spec()
                if record.deleted:
                    self._remove_service_daemons(ctx, kinds, name, spec)
                else:
                    self._converge_service(ctx, kinds[spec.service_type], spec)
            for daemon in self.state.daemons().values():
                if daemon.service_name not in services:
                    self._stop(ctx, [daemon.name])
                    self.state.remove_daemon(daemon.name)

    def _converge_service(self, ctx: Context, kind: DaemonKind, spec: Any) -> None:
        name = spec.service_name()
        try:
            placed = place(spec.placement, ctx.hosts, name)
        except orchestrator.OrchestratorError as e:
            self.log.warning('cannot place %s: %s', name, e)
            return
        # The oldest daemons are kept when a service shrinks, so that scaling up and
        # back down leaves the daemons that ran before.
        existing = sorted(ctx.daemons_of(name), key=lambda d: (d.created, d.name))
        kept: List[str] = []
        for host, rank in placed:
            current = next((d for d in existing if d.host == host.name and d.name not in kept),
                           None)
            if current is None:
                current = DaemonRecord(
                    daemon_type=kind.daemon_type,
                    daemon_id='%s.%s.%s' % (spec.service_id or name, host.name,
                                            ''.join(random.choice(string.ascii_lowercase)
                                                    for _ in range(6))),
                    service_name=name, host=host.name, ports=[], ip=None, created=now(),
                    config_digest='')
            kept.append(current.name)
            wanted = current._replace(ports=kind.ports(spec, rank), ip=host.addr)
            digest = kind.config_digest(spec, wanted)
            if digest != current.config_digest or wanted.ports != current.ports:
                self._deploy(ctx, kind, spec, wanted._replace(config_digest=digest,
                                                              wanted='running'))
            elif (current.wanted == 'running' and kind.restart_when_dead and
                  not self._procs().running(current.name)):
                self._restart_dead(ctx, kind, spec, wanted)
        for daemon in existing:
            if daemon.name not in kept:
                self._remove_daemon(kind, spec, daemon)

    def _restart_dead(self, ctx: Context, kind: DaemonKind, spec: Any,
                      daemon: DaemonRecord) -> None:
        recent = [t for t in self._restarts.get(daemon.name, []) if time.time() - t < 60]
        if len(recent) >= RESTARTS_PER_MINUTE:
            return  # left in error, as systemd gives up on a crash loop
        self._restarts[daemon.name] = recent + [time.time()]
        self.log.info('%s is not running: starting it again', daemon.name)
        self._deploy(ctx, kind, spec, daemon)

    def _deploy(self, ctx: Context, kind: DaemonKind, spec: Any, daemon: DaemonRecord,
                prepare: bool = True) -> None:
        """Start (again) a daemon; `prepare`: write its keyring and config first.

        cephadm writes them when it creates or reconfigures a daemon; a start or
        restart only starts its unit again, keeping what an operator changed.
        """
        procs = self._procs()
        if ctx.containers is not None:
            self._stop(ctx, [daemon.name])
        if prepare:
            kind.prepare(spec, daemon)
        folder = ctx.daemon_dir(daemon.name)
        for fname, content in kind.files(spec, daemon).items():
            path = os.path.join(folder, fname)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(content)
        host = ctx.host(daemon.host)
        # cephadm gives every container its host's name in NODE_NAME.
        env = dict(kind.env(spec, daemon), NODE_NAME=host.name)
        kind.before_start(spec, daemon)
        # Stopped and started again by a process of its own (see ProcessTable.restart).
        procs.restart(daemon.name, host.argv(kind.argv(spec, daemon)), env=env, cwd=folder)
        kind.after_start(spec, daemon)
        self.state.set_daemon(daemon._replace(started=now()))
        self.log.info('deployed %s on %s', daemon.name, daemon.host)

    def _remove_daemon(self, kind: DaemonKind, spec: Any, daemon: DaemonRecord) -> None:
        self._stop(kind.ctx, [daemon.name])
        kind.remove(spec, daemon)
        self.state.remove_daemon(daemon.name)
        self.log.info('removed %s', daemon.name)

    def _remove_service_daemons(self, ctx: Context, kinds: Dict[str, DaemonKind],
                                name: str, spec: Any) -> None:
        kind = kinds[spec.service_type]
        for daemon in ctx.daemons_of(name):
            self._remove_daemon(kind, spec, daemon)
        kind.remove_service(spec)
        self.state.set_service(name, None)

    # -- describing -------------------------------------------------------------
    def _core_daemons(self) -> List[Tuple[str, str, str]]:
        """(type, id, host) of the daemons `cluster start` runs itself."""
        cluster = load_cluster(self.cluster_dir)
        host = cluster['hosts'][0]['name']
        return ([('mon', 'a', host)] + [('mgr', m, host) for m in cluster['mgrs']] +
                [('osd', str(o), host) for o in cluster['osds']])

    def _daemon_status(self, name: str, wanted: str,
                       restarts: bool = True) -> Tuple[DaemonDescriptionStatus, str]:
        if self._procs().running(name):
            return DaemonDescriptionStatus.running, 'running'
        if wanted == 'stopped' or not restarts:
            return DaemonDescriptionStatus.stopped, 'stopped'
        return DaemonDescriptionStatus.error, 'error'

    def _describe_daemons(self) -> List[DaemonDescription]:
        refreshed = datetime.datetime.now(datetime.timezone.utc)
        version = self.version.split()[2] if self.version.startswith('ceph version') \
            else self.version
        found = []
        for daemon_type, daemon_id, host in self._core_daemons():
            name = '%s.%s' % (daemon_type, daemon_id)
            status, desc = self._daemon_status(name, 'running')
            found.append(DaemonDescription(
                daemon_type=daemon_type, daemon_id=daemon_id, hostname=host, status=status,
                status_desc=desc, last_refresh=refreshed, version=version,
                is_active=daemon_type == 'mgr' and daemon_id == self.get_mgr_id(),
                service_name=daemon_type, memory_usage=self._rss(name)))
        restarts = {k.daemon_type: k.restart_when_dead
                    for k in self._kinds(self._context()).values()}
        for daemon in self.state.daemons().values():
            status, desc = self._daemon_status(daemon.name, daemon.wanted,
                                               restarts.get(daemon.daemon_type, True))
            found.append(DaemonDescription(
                daemon_type=daemon.daemon_type, daemon_id=daemon.daemon_id,
                hostname=daemon.host, status=status, status_desc=desc,
                last_refresh=refreshed, created=parse_time(daemon.created),
                started=parse_time(daemon.started), version=version,
                service_name=daemon.service_name, ports=daemon.ports or None,
                ip=daemon.ip, memory_usage=self._rss(daemon.name)))
        return found

    def _rss(self, name: str) -> Optional[int]:
        pid = self._procs().pid(name)
        try:
            with open('/proc/%d/status' % pid) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        return int(line.split()[1]) * 1024
        except (OSError, TypeError):
            pass
        return None

    @orchestrator.handle_orch_error
    def list_daemons(self, service_name: Optional[str] = None,
                     daemon_type: Optional[str] = None, daemon_id: Optional[str] = None,
                     host: Optional[str] = None, refresh: bool = False) -> List[DaemonDescription]:
        self._injected_failure('list_daemons')
        return [d for d in self._describe_daemons()
                if (service_name is None or d.service_name() == service_name) and
                (daemon_type is None or d.daemon_type == daemon_type) and
                (daemon_id is None or d.daemon_id == daemon_id) and
                (host is None or d.hostname == host)]

    @orchestrator.handle_orch_error
    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None,
                         refresh: bool = False) -> List[ServiceDescription]:
        self._injected_failure('describe_service')
        daemons = self._describe_daemons()
        refreshed = datetime.datetime.now(datetime.timezone.utc)
        found = []
        cluster = load_cluster(self.cluster_dir)
        core: List[Tuple[ServiceSpec, Optional[ServiceRecord]]] = [
            (ServiceSpec('mon', placement=PlacementSpec(count=1)), None),
            (ServiceSpec('mgr', placement=PlacementSpec(count=len(cluster['mgrs']))), None)]
        ctx = self._context()
        kinds = self._kinds(ctx)
        for stored in self.state.services().values():
            if not stored.deleted:
                core.append((stored.service_spec(), stored))
        for spec, record in core:
            name = spec.service_name()
            mine = [d for d in daemons if d.service_name() == name]
            ports: List[int] = []
            if spec.service_type in kinds:
                ports = kinds[spec.service_type].ports(spec, 0)
            found.append(ServiceDescription(
                spec=spec, size=len(mine) if record is None else len(
                    place(spec.placement, ctx.hosts, name)),
                running=sum(1 for d in mine if d.status == DaemonDescriptionStatus.running),
                last_refresh=refreshed,
                created=parse_time(record.created) if record else None,
                virtual_ip=getattr(spec, 'virtual_ip', None), ports=ports))
        return [s for s in found
                if (service_type is None or s.spec.service_type == service_type) and
                (service_name is None or s.spec.service_name() == service_name)]

    # -- actions ------------------------------------------------------------------
    @orchestrator.handle_orch_error
    def daemon_action(self, action: str, daemon_name: str, image: Optional[str] = None,
                      force: bool = False) -> str:
        self._injected_failure('daemon_action')
        if action not in ('start', 'stop', 'restart', 'redeploy', 'reconfig'):
            raise orchestrator.OrchestratorError('unknown daemon action %s' % action)
        with self._lock:
            return self._daemon_action(action, daemon_name)

    def _daemon_action(self, action: str, daemon_name: str) -> str:
        ctx = self._context()
        daemon = self.state.daemons().get(daemon_name)
        if daemon is not None:
            host = daemon.host
            spec = ctx.spec_of(daemon.service_name)
            kind = self._kinds(ctx)[spec.service_type] if spec else None
            if action == 'stop':
                self._stop(ctx, [daemon_name])
                self.state.set_daemon(daemon._replace(wanted='stopped'))
            elif spec is not None and kind is not None:
                self._deploy(ctx, kind, spec, daemon._replace(wanted='running'),
                             prepare=action in ('redeploy', 'reconfig'))
        else:
            core = {'%s.%s' % (t, i): (t, i, h) for t, i, h in self._core_daemons()}
            if daemon_name not in core:
                raise orchestrator.OrchestratorError(
                    'Unable to find %s daemon(s)' % daemon_name)
            daemon_type, daemon_id, host = core[daemon_name]
            if daemon_type != 'osd':
                raise orchestrator.OrchestratorError(
                    'this orchestrator does not %s %s daemons' % (action, daemon_type))
            procs = self._procs()
            grace = osd_stop_grace(load_cluster(self.cluster_dir).get('objectstore'))
            if action == 'stop':
                procs.stop([daemon_name], timeout=grace)
            else:
                procs.restart(daemon_name, ctx.host(host).argv(
                    ['ceph-osd', '-f', '-c', ctx.conf, '-i', daemon_id]), timeout=grace)
        return "Scheduled to %s %s on host '%s'" % (action, daemon_name, host)

    @orchestrator.handle_orch_error
    def service_action(self, action: str, service_name: str) -> List[str]:
        self._injected_failure('service_action')
        with self._lock:
            names = [d.name for d in self._context().daemons_of(service_name)]
            if service_name == 'osd' or service_name.startswith('osd.'):
                names = ['osd.%s' % i for t, i, h in self._core_daemons() if t == 'osd']
            if not names:
                raise orchestrator.OrchestratorError(
                    'Invalid service name "%s". View currently running services using '
                    '"ceph orch ls"' % service_name)
            return [self._daemon_action(action, n) for n in names]
