"""The rgwbench mgr module: options, commands and the serve loop; work is delegated."""
import json
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

import orchestrator
from ceph.deployment.service_spec import ServiceSpec
from mgr_module import HandleCommandResult, MgrModule, Option
from mgr_util import build_url

from .activity import Activity, ActivityGuard, Going
from .agents.channel import AgentChannel
from .agents.coordinator import DEADMAN_S
from .agents.agent_hosts import AgentPlacing
from .agents.sources import mgr_host_addresses
from .checks.capacity_guard import DEFAULT_MARGIN, CapacityGuard
from .certs.store import Certificates, certificate_to_text
from .checks import MgrClusterView, findings_to_text
from .checks.gate import DEFAULT_PREFILL_S, RunChecks
from .cli import RGWBenchCLICommand, read_command, write_command
from .cluster.credentials import CredentialStore, credentials_to_text
from .errors import Busy, InvalidInput
from .formatting import parse_format, render
from .runs.loads import LoadService, load_request, load_to_text, loads_to_text
from .cluster.orchestration import orchestrator_state, rgw_service_under_test, wait_for_backend
from .panel.backend import ModuleBackend
from .panel.service import DEFAULT_PORT, Panel, panel_to_text
from .certs.pem import self_signed_certificate
from .profiles.placement import placement_hosts
from .profiles import (DEFAULT_PROCESSES, Profile, ProfileStore, profile_to_text, profiles_to_text,
                       with_overrides)
from .results.calibration import CalibrationStore
from .results.compare import between
from .results.model import strip_histograms
from .results.report import (comparison_to_text, result_to_csv, result_to_markdown, result_to_text,
                             results_to_text)
from .results.seeds import seeds_to_csv, seeds_to_json, seeds_to_markdown, seeds_to_text
from .results.store import ResultStore
from .serial import dump
from .cluster.rgw_admin import RadosgwAdmin
from .cluster.rgw_daemons import endpoint_urls
from .runs.engine import RunCluster, RunEngine
from .cluster.events import ClusterRunEvents
from .runs.plan_text import run_plan_to_text
from .cluster.sampled_daemons import ServerDaemon, ServerDaemons, ingress_haproxies, server_daemons
from .settings.applier import SettingsApplier
from .settings.base import SettingContext
from .cluster.access import ClusterAccess
from .settings.registry import (all_settings, describe, parse_assignments, settings_list_to_text,
                                settings_plan_to_text)
from .settings.session import SettingsSession, settings_to_text
from .settings.sse import MODULE_OPTIONS as SSE_MODULE_OPTIONS
from .status import build_status, ceph_version_number, status_to_text
from .agents.workload_runs import AgentWorkloads

if TYPE_CHECKING:
    from .panel.app import PanelApp
    from .panel.server import PanelServer


class Module(orchestrator.OrchestratorClientMixin, MgrModule):
    CLICommand = RGWBenchCLICommand
    COMMANDS: List[Any] = []
    NOTIFY_TYPES: List[Any] = []
    MODULE_OPTIONS: List[Option] = [
        Option('agent_address', type='str', default='',
               desc='address the agent endpoint listens on (default: the mgr\'s own)'),
        Option('agent_port', type='int', default=0, min=0, max=65535,
               desc='TCP port of the agent endpoint while a load runs (0: any free port)'),
        Option('agent_deadman_timeout', type='secs', default=DEADMAN_S, min=10, max=3600,
               desc='an agent stops its load and exits once the agent endpoint has not '
                    'answered it for this long (the mgr died or failed over)'),
        Option('agent_source_check', type='bool', default=True,
               desc='an agent enrols only from an address the cluster knows for its host '
                    '(its code is in the agents\' spec, which `ceph orch ls --export` '
                    'shows); off for agent hosts reached from other addresses'),
        Option('agent_image', type='str', default='',
               desc='container image of placed agents (default: the cluster\'s '
                    'container_image); it needs python3'),
        Option('rgw_service', type='str', default='',
               desc='the RGW service settings change (default: the only one the '
                    'orchestrator manages)'),
        Option('ready_timeout', type='secs', default=600, min=10,
               desc='how long to wait for daemons to be back after a change'),
        Option('keep_results', type='int', default=50, min=1, max=1000,
               desc='how many finished runs to keep in the config-key store'),
        Option('capacity_margin', type='float', default=DEFAULT_MARGIN, min=0.0, max=0.5,
               desc='a workload that writes stops once an OSD is this close to its nearfull '
                    'ratio (0.05: 5 percentage points below it)'),
        Option('prefill_time', type='secs', default=DEFAULT_PREFILL_S, min=0, max=86400,
               desc='a GET workload that names no `objects` reads a working set twice the '
                    'caches in front of the disks, prefilled for at most this long (0: '
                    'the engine\'s default working set, 1000 objects up to 1 GiB per agent)'),
        Option('keep_objects', type='bool', default=False,
               desc='keep the buckets and objects of a run\'s workloads (default: removed '
                    'after each workload)'),
        Option('rgw_ssl_port', type='int', default=0, min=0, max=65535,
               desc='port RGW serves HTTPS on under tls@rgw=on (0: the port its spec '
                    'serves now)'),
        Option('agent_processes_max', type='int', default=8, min=1, max=64,
               desc='the most load engine processes an agent runs when a workload leaves '
                    'it to the cores of its host (processes 0)'),
        Option('ingress_virtual_ip', type='str', default='',
               desc='virtual IP(s) (with /prefix, comma separated: one per RGW host) of the '
                    'ingress tls@ingress puts in front of RGW (default: an existing '
                    'ingress\'s, else unused addresses of the RGW hosts\' networks)'),
        Option('ingress_frontend_port', type='int', default=0, min=0, max=65535,
               desc='port the ingress of tls@ingress serves S3 on (0: an existing '
                    'ingress\'s, else the first free from 443, or 8080 for HTTP)'),
        Option('ingress_monitor_port', type='int', default=0, min=0, max=65535,
               desc='HAProxy monitor port of the ingress of tls@ingress (0: an existing '
                    'ingress\'s, else the first free from 1967)'),
        Option('panel_address', type='str', default='',
               desc='address the web panel listens on (default: every address)'),
        Option('panel_port', type='int', default=DEFAULT_PORT, min=1, max=65535,
               desc='TCP port of the web panel'),
        Option('panel_ssl', type='bool', default=True,
               desc='serve the web panel over HTTPS (with `panel certificate set`, or a '
                    'self-signed certificate)'),
        Option('panel_session_timeout', type='secs', default=28800, min=60,
               desc='how long a login to the web panel lasts'),
    ] + [Option(opt, type='str', default=default, desc=desc)
         for opt, default, desc in SSE_MODULE_OPTIONS]

    leftovers_retry_s = 60.0
    backend_wait_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopping = threading.Event()
        self._agent_cert: Optional[Tuple[str, str]] = None
        self.credentials = CredentialStore(self)
        self.placing = AgentPlacing(
            self, raise_if_exception=orchestrator.raise_if_exception,
            has_backend=lambda: orchestrator_state(self).backend is not None,
            rgw_service_names=lambda: self._rgw_service_names(self._cluster_access()),
            rgw_service=lambda names: self._rgw_service(self._cluster_access(), names),
            server_daemons=self._server_daemons,
            image=lambda: str(self.get_module_option('agent_image') or
                              self.get_ceph_option('container_image') or ''))
        capacity = CapacityGuard(
            self, lambda: float(self.get_module_option('capacity_margin') or 0.0))
        self.checks = RunChecks(view=MgrClusterView(self), keep_objects=self._keep_objects,
                                log=self.log, prefill_time=lambda: float(
                                    self.get_module_option('prefill_time') or 0))
        # How a load and a run's workloads run on agents (a load never keeps its objects).
        agents = AgentWorkloads(
            make_channel=self._agent_channel, server_daemons=self._server_daemons,
            log=self.log, keep_objects=self._keep_objects,
            new_capacity_check=capacity.new_check, deadman_s=self._deadman_s,
            processes_max=self._processes_max, agent_sources=self._agent_sources,
            new_pg_watch=self.checks.pg_watch, bucket_admin=RadosgwAdmin(self))
        self.loads = LoadService(store=self, credentials=self.credentials,
                                 endpoints=self._rgw_endpoints, agents=agents,
                                 make_launcher=self.placing.launcher, log=self.log,
                                 checks=self.checks)
        self.settings = SettingsSession(self, self._settings_applier, self.log)
        self.profiles = ProfileStore(self, all_settings())
        self.results = ResultStore(self, lambda: int(self.get_module_option('keep_results')
                                                     or 50))
        self.runs = RunEngine(
            store=self, results=self.results, credentials=self.credentials,
            cluster=RunCluster(make_applier=self._settings_applier,
                               ceph_version=lambda: ceph_version_number(self.version),
                               checks=self.checks,
                               rgw_daemons=lambda: len(self.placing.rgw_hosts()),
                               agent_hosts=self.placing.hosts),
            agents=agents, make_launcher=self.placing.launcher,
            events=ClusterRunEvents(self, self.log), log=self.log)
        self.activity = ActivityGuard(probes={
            Going.RUN: lambda: _field(self.runs.active(), 'run_id'),
            Going.LOAD: lambda: _field(self.loads.active(), 'load_id'),
            Going.SETTINGS_CHANGING: lambda: (_field(self.settings.in_place(), 'journal_id')
                                              if self.settings.changing() else None),
            Going.SETTINGS_IN_PLACE: lambda: _field(self.settings.in_place(), 'journal_id'),
        })
        self.panel = Panel(self, ModuleBackend(
            self._about, self.results, self.runs, self.profiles, self._plan,
            lambda name, overrides: self._start_run(self._with_panel_overrides(name, overrides))),
                           self._panel_server, build_url, self.log)

    def serve(self) -> None:
        # Its own thread: waiting for the panel's port must not hold up the recovery.
        self._in_background(self.panel.start, 'rgwbench-panel-start')
        # Whatever a load, a run or settings changed before a failover or crash is put
        # back first.
        # Each clean-up on its own: one that fails must not keep the journals (the
        # settings) from being put back.
        if self.loads.leftovers.pending() or self.runs.leftovers.pending():
            # their agents' services are removed through the backend, which may load
            # after this module
            wait_for_backend(self, self._stopping, self.backend_wait_s)
        for what, recover in (('load', lambda: self.loads.recover(self._remove_service)),
                              ('run', lambda: self.runs.recover(self._remove_service))):
            try:
                recover()
            except Exception:
                self.log.exception('cleaning up after an interrupted %s failed', what)
        self.settings.recover(self._stopping)
        # What could not be removed yet (the orchestrator not answering just after a
        # failover, a local agent on another host) is tried again now and then.
        while not self._stopping.wait(self.leftovers_retry_s):
            self._remove_leftovers()

    def _remove_leftovers(self) -> None:
        try:
            if self.loads.leftovers.pending():
                self.loads.recover(self._remove_service)
            if self.runs.leftovers.pending():
                self.runs.leftovers.remove(self._remove_service, self.credentials.get(),
                                           self.log)
        except Exception:
            self.log.exception('removing what an interrupted workload left failed')

    def shutdown(self) -> None:
        self._stopping.set()
        self.panel.stop()

    def config_notify(self) -> None:
        if self._stopping.is_set():
            return
        # Waiting for a port must not hold up the mgr's thread that delivers notifications.
        self._in_background(self.panel.restart_if_changed, 'rgwbench-panel-restart')

    @staticmethod
    def _in_background(work: Callable[[], None], name: str) -> None:
        threading.Thread(target=work, name=name, daemon=True).start()

    # -- collaborators ------------------------------------------------------------
    def _about(self) -> Dict[str, Any]:
        return {'ceph_version': ceph_version_number(self.version),
                'ceph_release': self.release_name}

    def _keep_objects(self) -> bool:
        return bool(self.get_module_option('keep_objects'))

    def _processes_max(self) -> int:
        return int(self.get_module_option('agent_processes_max') or 0)

    def _agent_sources(self, agents: List[str]) -> Optional[Mapping[str, FrozenSet[str]]]:
        if not self.get_module_option('agent_source_check'):
            return None
        try:
            return mgr_host_addresses(self, self._orch_host_addresses).of(agents)
        except Exception as e:   # the maps unreadable now: the codes alone guard the agents
            self.log.warning('agents enrol from any address: %s', e)
            return None

    def _orch_host_addresses(self) -> Dict[str, str]:
        return {h.hostname: str(h.addr or h.hostname)
                for h in orchestrator.raise_if_exception(self.get_hosts())}

    def _panel_server(self, app: 'PanelApp') -> 'PanelServer':
        # cheroot is loaded only where the panel runs: in the mgr, not in unit tests.
        from .panel.server import PanelServer
        return PanelServer(app, self.log)

    def _active_run(self) -> Optional[Dict[str, Any]]:
        return self.runs.active()

    def _rgw_endpoints(self) -> List[str]:
        return endpoint_urls(self.get('service_map'))

    def _server_daemons(self) -> ServerDaemons:
        haproxies: List[ServerDaemon] = []
        try:
            service = self._rgw_service(self._cluster_access())
            haproxies = ingress_haproxies(self, orchestrator.raise_if_exception, service)
        except Exception as e:  # no orchestrator, or no one RGW service: no ingress either
            self.log.debug('no HAProxy daemons to count: %s', e)
        return server_daemons(self.get('service_map'),
                              str((self.get('mon_map') or {}).get('fsid') or ''), haproxies)

    def _deadman_s(self) -> float:
        return float(self.get_module_option('agent_deadman_timeout') or DEADMAN_S)

    def _remove_service(self, service_name: str) -> None:
        orchestrator.raise_if_exception(self.remove_service(service_name))

    def _cluster_access(self) -> ClusterAccess:
        return ClusterAccess(self, orchestrator.raise_if_exception, ServiceSpec.from_json,
                             timeout_s=float(self.get_module_option('ready_timeout') or 600),
                             log=self.log.info, users=RadosgwAdmin(self))

    @staticmethod
    def _rgw_service_names(cluster: ClusterAccess) -> List[str]:
        return [ServiceSpec.from_json(s).service_name() for s in cluster.services('rgw')]

    def _rgw_service(self, cluster: ClusterAccess, names: Optional[List[str]] = None) -> str:
        return rgw_service_under_test(str(self.get_module_option('rgw_service') or ''),
                                      self._rgw_service_names(cluster) if names is None
                                      else names)

    def _settings_applier(self) -> SettingsApplier:
        cluster = self._cluster_access()
        ctx = SettingContext(cluster=cluster, rgw_service=lambda: self._rgw_service(cluster),
                             option=self.get_module_option, secrets=self,
                             release=int(ceph_version_number(self.version).split('.')[0]))
        return SettingsApplier(ctx, all_settings(), log=self.log.info)

    def _agent_channel(self) -> AgentChannel:
        if self._agent_cert is None:
            self._agent_cert = self_signed_certificate('rgwbench-agent-endpoint')
        cert, key = self._agent_cert
        address = str(self.get_module_option('agent_address') or self.get_mgr_ip() or
                      socket.gethostbyname(socket.gethostname()))
        return AgentChannel(address, int(self.get_module_option('agent_port') or 0), cert, key)

    # -- commands -----------------------------------------------------------------
    @read_command('rgwbench status')
    def _cmd_status(self, format: str = 'plain') -> HandleCommandResult:
        """Show the module version, the Ceph release, the orchestrator, RGW daemons and runs"""
        fmt = parse_format(format)
        status = build_status(ceph_version_number(self.version), self.release_name,
                              orchestrator_state(self), self.get('service_map'),
                              self._active_run())
        status['active_load'] = self.loads.active()
        status['settings_in_place'] = self.settings.in_place()
        status['leftovers'] = self.loads.leftovers.pending() + self.runs.leftovers.pending()
        return HandleCommandResult(stdout=render(status, fmt, status_to_text))

    @write_command('rgwbench credentials set')
    def _cmd_credentials_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Store the S3 credentials loads use (-i file: access_key, secret_key, ca_bundle)"""
        if not inbuf or not inbuf.strip():
            raise InvalidInput('give the credentials with -i <file> '
                               '(access_key, secret_key, optional ca_bundle)')
        creds = self.credentials.set(inbuf)
        return HandleCommandResult(stdout='credentials for access key %s stored'
                                   % creds['access_key'])

    @read_command('rgwbench credentials show')
    def _cmd_credentials_show(self, format: str = 'plain') -> HandleCommandResult:
        """Show which S3 credentials are stored (never the secret key)"""
        fmt = parse_format(format)
        info = self.credentials.describe()
        return HandleCommandResult(stdout=render(info, fmt, credentials_to_text))

    @write_command('rgwbench credentials rm')
    def _cmd_credentials_rm(self) -> HandleCommandResult:
        """Remove the stored S3 credentials"""
        removed = self.credentials.remove()
        return HandleCommandResult(stdout='credentials removed' if removed
                                   else 'no credentials were stored')

    @write_command('rgwbench load')
    def _cmd_load(self, op: str = 'put', size: str = '4KiB', concurrency: int = 16,
                  duration: int = 30, warmup: int = 2, processes: int = DEFAULT_PROCESSES,
                  buckets: int = 1,
                  placement: Optional[str] = None,
                  endpoint: Optional[str] = None, rate: Optional[float] = None,
                  objects: Optional[int] = None, multipart_threshold: Optional[str] = None,
                  part_size: Optional[str] = None, range: Optional[str] = None,
                  force: bool = False) -> HandleCommandResult:
        """Run one workload now on agents, without changing any setting; returns its id"""
        request = load_request(op=op, size=size, concurrency=concurrency, processes=processes,
                               duration=duration, warmup=warmup, buckets=buckets,
                               placement=placement_hosts(placement, self.placing.known_hosts),
                               endpoint=endpoint, rate=rate, objects=objects,
                               multipart_threshold=multipart_threshold, part_size=part_size,
                               range=range)
        load_id = self.activity.start(Activity.LOAD,
                                      lambda: self.loads.start(request, force=force))
        return HandleCommandResult(stdout=load_id,
                                   stderr='load %s started; `ceph rgwbench load show %s`'
                                   % (load_id, load_id))

    @read_command('rgwbench load show')
    def _cmd_load_show(self, load_id: Optional[str] = None,
                       format: str = 'plain') -> HandleCommandResult:
        """Show a load (the latest by default): its agents, figures and state"""
        fmt = parse_format(format)
        found = self.loads.show(load_id)
        return HandleCommandResult(stdout=render(dump(found), fmt, lambda _: load_to_text(found)))

    @read_command('rgwbench load ls')
    def _cmd_load_ls(self, format: str = 'plain') -> HandleCommandResult:
        """List the loads kept in the module's store"""
        fmt = parse_format(format)
        loads = self.loads.list()
        return HandleCommandResult(stdout=render(dump(loads), fmt, lambda _: loads_to_text(loads)))

    # -- the certificate of TLS settings -------------------------------------------
    @write_command('rgwbench certificate set')
    def _cmd_certificate_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Store the certificate TLS settings serve (-i PEM: certificate, key, CA chain)"""
        info = Certificates(self).set(inbuf or '')
        return HandleCommandResult(stdout='certificate %s stored (sha256 %s)' % (
            info['subject'], info['fingerprint_sha256']))

    @read_command('rgwbench certificate show')
    def _cmd_certificate_show(self, format: str = 'plain') -> HandleCommandResult:
        """Show the certificate TLS settings serve and its CA bundle (never the key)"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(Certificates(self).show(), fmt,
                                                 certificate_to_text))

    @write_command('rgwbench certificate rm')
    def _cmd_certificate_rm(self) -> HandleCommandResult:
        """Remove the operator's certificate; TLS settings then use a self-signed one"""
        removed = Certificates(self).remove()
        return HandleCommandResult(stdout='certificate removed' if removed
                                   else 'no certificate was set')

    # -- the web panel --------------------------------------------------------------
    @read_command('rgwbench panel show')
    def _cmd_panel_show(self, format: str = 'plain') -> HandleCommandResult:
        """Show the web panel's URL, how it listens, its certificate, if a password is set"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(self.panel.describe(), fmt, panel_to_text))

    @write_command('rgwbench panel password set')
    def _cmd_panel_password_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Set the web panel's password (-i file; at least 8 characters); ends every session"""
        if not inbuf or not inbuf.strip('\r\n'):
            raise InvalidInput('give the password with -i <file>')
        self.panel.passwords.set(inbuf)
        self.panel.password_changed()
        return HandleCommandResult(stdout='panel password set')

    @write_command('rgwbench panel password generate')
    def _cmd_panel_password_generate(self) -> HandleCommandResult:
        """Make a new random web panel password and print it once; ends every session"""
        password = self.panel.passwords.generate()
        self.panel.password_changed()
        return HandleCommandResult(stdout=password, stderr='the panel password is set; it is '
                                   'shown this once')

    @write_command('rgwbench panel password rm')
    def _cmd_panel_password_rm(self) -> HandleCommandResult:
        """Remove the web panel's password: nobody can log in until one is set"""
        removed = self.panel.passwords.remove()
        self.panel.password_changed()
        return HandleCommandResult(stdout='panel password removed' if removed
                                   else 'no panel password was set')

    @write_command('rgwbench panel certificate set')
    def _cmd_panel_certificate_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Set the web panel's certificate (-i PEM: certificate, key, CA chain); restarts it"""
        info = self.panel.certificates().set(inbuf or '')
        self.panel.restart()
        return HandleCommandResult(stdout='panel certificate %s stored (sha256 %s)' % (
            info['subject'], info['fingerprint_sha256']))

    @write_command('rgwbench panel certificate rm')
    def _cmd_panel_certificate_rm(self) -> HandleCommandResult:
        """Remove the web panel's certificate: it serves a self-signed one; restarts it"""
        removed = self.panel.certificates().remove()
        if removed:
            self.panel.restart()
        return HandleCommandResult(stdout='panel certificate removed' if removed
                                   else 'no panel certificate was set')

    # -- settings under test ------------------------------------------------------
    @read_command('rgwbench settings ls')
    def _cmd_settings_ls(self, format: str = 'plain') -> HandleCommandResult:
        """List the settings rgwbench can apply and put back"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(describe(all_settings()), fmt,
                                                 settings_list_to_text))

    @read_command('rgwbench settings plan')
    def _cmd_settings_plan(self, settings: List[str],
                           format: str = 'plain') -> HandleCommandResult:
        """Show every change applying settings (name=value ...) would make; changes nothing"""
        fmt = parse_format(format)
        plans = self.settings.plan(parse_assignments(settings))
        return HandleCommandResult(stdout=render([p.to_dict() for p in plans], fmt,
                                                 settings_plan_to_text))

    @write_command('rgwbench settings apply')
    def _cmd_settings_apply(self, settings: List[str], force: bool = False,
                            yes_i_really_mean_it: bool = False) -> HandleCommandResult:
        """Apply settings (name=value ...) and keep them until `settings revert`"""
        if not yes_i_really_mean_it:
            raise InvalidInput('this restarts daemons and changes the cluster until '
                               '`ceph rgwbench settings revert`; see `ceph rgwbench settings '
                               'plan` and add --yes-i-really-mean-it')
        wanted = parse_assignments(settings)
        journal_id = self.activity.start(Activity.SETTINGS_APPLY,
                                         lambda: self.settings.apply(wanted, force=force))
        return HandleCommandResult(stdout=journal_id, stderr='applying; see `ceph rgwbench '
                                   'settings show`, put back with `ceph rgwbench settings '
                                   'revert`')

    @write_command('rgwbench settings revert')
    def _cmd_settings_revert(self) -> HandleCommandResult:
        """Put back everything `settings apply` changed"""
        journal_id = self.activity.start(Activity.SETTINGS_REVERT, self.settings.revert)
        return HandleCommandResult(stdout=journal_id,
                                   stderr='putting back; see `ceph rgwbench settings show`')

    @read_command('rgwbench settings show')
    def _cmd_settings_show(self, format: str = 'plain') -> HandleCommandResult:
        """Show the settings in place (or last put back) and every change made"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(self.settings.show(), fmt, settings_to_text))

    # -- profiles -------------------------------------------------------------------
    @read_command('rgwbench profile ls')
    def _cmd_profile_ls(self, format: str = 'plain') -> HandleCommandResult:
        """List the built-in and custom profiles"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render([i.to_dict() for i in self.profiles.ls()], fmt,
                                                 profiles_to_text))

    @read_command('rgwbench profile show')
    def _cmd_profile_show(self, profile: str, format: str = 'plain') -> HandleCommandResult:
        """Show a profile: its variants, workloads, placement and repeats"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(self.profiles.info(profile).to_dict(), fmt,
                                                 profile_to_text))

    @write_command('rgwbench profile set')
    def _cmd_profile_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Add or replace a custom profile (-i file, YAML or JSON)"""
        if not inbuf or not inbuf.strip():
            raise InvalidInput('give the profile with -i <file> (YAML or JSON)')
        stored = self.profiles.set(inbuf)
        return HandleCommandResult(stdout='profile %s stored' % stored.name)

    @write_command('rgwbench profile rm')
    def _cmd_profile_rm(self, profile: str) -> HandleCommandResult:
        """Remove a custom profile"""
        self.profiles.rm(profile)
        return HandleCommandResult(stdout='profile %s removed' % profile)

    # -- runs -----------------------------------------------------------------------
    def _profile(self, profile: str, placement: Optional[str],
                 overrides: Dict[str, Any]) -> Profile:
        """The profile with the overrides of `plan`, `run` or the panel, by their names in
        with_overrides (None: not given), checked there and only there."""
        hosts = placement_hosts(placement, self.placing.known_hosts)
        given = {k: v for k, v in overrides.items() if v is not None}
        return with_overrides(self.profiles.get(profile), placement=hosts, **given)

    @read_command('rgwbench plan')
    def _cmd_plan(self, profile: str, duration: Optional[int] = None,
                  concurrency: Optional[int] = None, sizes: Optional[str] = None,
                  placement: Optional[str] = None, repeats: Optional[int] = None,
                  warmup: Optional[int] = None, rate: Optional[float] = None,
                  rates: Optional[str] = None, objects: Optional[int] = None,
                  multipart_threshold: Optional[str] = None, part_size: Optional[str] = None,
                  range: Optional[str] = None, processes: Optional[int] = None,
                  payload_signing: Optional[str] = None,
                  format: str = 'plain') -> HandleCommandResult:
        """Show every step and change a run of a profile would make; changes nothing"""
        fmt = parse_format(format)
        chosen = self._profile(profile, placement, dict(
            duration=duration, concurrency=concurrency, sizes=sizes, repeats=repeats,
            warmup=warmup, rate=rate, rates=rates, objects=objects,
            multipart_threshold=multipart_threshold, part_size=part_size, range=range,
            processes=processes, payload_signing=payload_signing))
        return HandleCommandResult(stdout=render(self.runs.plan(chosen), fmt, run_plan_to_text))

    @write_command('rgwbench run')
    def _cmd_run(self, profile: str, duration: Optional[int] = None,
                 concurrency: Optional[int] = None, sizes: Optional[str] = None,
                 placement: Optional[str] = None, repeats: Optional[int] = None,
                 warmup: Optional[int] = None, rate: Optional[float] = None,
                 rates: Optional[str] = None, objects: Optional[int] = None,
                 multipart_threshold: Optional[str] = None, part_size: Optional[str] = None,
                 range: Optional[str] = None, processes: Optional[int] = None,
                 payload_signing: Optional[str] = None, force: bool = False,
                 yes_i_really_mean_it: bool = False) -> HandleCommandResult:
        """Run a profile: apply each variant, measure, put everything back; returns the run id"""
        chosen = self._profile(profile, placement, dict(
            duration=duration, concurrency=concurrency, sizes=sizes, repeats=repeats,
            warmup=warmup, rate=rate, rates=rates, objects=objects,
            multipart_threshold=multipart_threshold, part_size=part_size, range=range,
            processes=processes, payload_signing=payload_signing))
        if not yes_i_really_mean_it:
            raise InvalidInput('a run changes settings and restarts daemons of this cluster '
                               'while it lasts; see `ceph rgwbench plan --profile %s` and '
                               'add --yes-i-really-mean-it' % chosen.name)
        run_id = self._start_run(chosen, force=force)
        return HandleCommandResult(stdout=run_id, stderr='run %s started; `ceph rgwbench '
                                   'status` follows it, `ceph rgwbench results show %s` '
                                   'shows it' % (run_id, run_id))

    def _start_run(self, chosen: Profile, force: bool = False) -> str:
        """Start a run (the CLI's and the panel's), unless something else changes the cluster."""
        return self.activity.start(Activity.RUN, lambda: self.runs.start(chosen, force=force))

    def _with_panel_overrides(self, profile: str, overrides: Dict[str, str]) -> Profile:
        """A profile with the panel's overrides (panel.app.OVERRIDES, as text): the CLI's,
        checked by the same with_overrides."""
        return self._profile(profile, None, dict(overrides))

    def _plan(self, profile: str, overrides: Dict[str, str]) -> Tuple[Dict[str, Any], str]:
        """A profile's run plan, as data and as the text `ceph rgwbench plan` prints."""
        plan = self.runs.plan(self._with_panel_overrides(profile, overrides))
        return plan, run_plan_to_text(plan)

    @read_command('rgwbench check')
    def _cmd_check(self, profile: Optional[str] = None,
                   format: str = 'plain') -> HandleCommandResult:
        """Show what would skew or endanger a run now (and a run of --profile); changes nothing"""
        fmt = parse_format(format)
        chosen = self.profiles.get(profile) if profile is not None else None
        found = self.checks.now(chosen)
        return HandleCommandResult(stdout=render(dump(found), fmt,
                                                 findings_to_text))

    @write_command('rgwbench abort')
    def _cmd_abort(self) -> HandleCommandResult:
        """Stop the run in progress and put everything back at once"""
        run_id = self.runs.abort()
        return HandleCommandResult(stdout=run_id, stderr='aborting run %s' % run_id)

    # -- results --------------------------------------------------------------------
    @read_command('rgwbench results ls')
    def _cmd_results_ls(self, format: str = 'plain') -> HandleCommandResult:
        """List the runs kept in the config-key store"""
        fmt = parse_format(format)
        summaries = self.results.summaries()
        return HandleCommandResult(stdout=render(dump(summaries), fmt,
                                                 lambda _: results_to_text(summaries)))

    @read_command('rgwbench results show')
    def _cmd_results_show(self, run_id: str, table: str = 'plain', layout: str = 'wide',
                          format: str = 'plain') -> HandleCommandResult:
        """Show a run against its baseline (--table plain|markdown|csv, --layout wide|seeds)"""
        fmt = parse_format(format)
        renderers = {
            'wide': {'plain': result_to_text, 'markdown': result_to_markdown,
                     'csv': result_to_csv},
            'seeds': {'plain': seeds_to_text, 'markdown': seeds_to_markdown,
                      'csv': seeds_to_csv}}
        if layout not in renderers:
            raise InvalidInput('--layout must be one of wide, seeds, got %r' % layout)
        if table not in renderers[layout]:
            raise InvalidInput('--table must be one of plain, markdown, csv, got %r' % table)
        run = self.results.load(run_id)
        data = seeds_to_json(run) if layout == 'seeds' else without_histograms(dump(run))
        return HandleCommandResult(stdout=render(data, fmt,
                                                 lambda _: renderers[layout][table](run)))

    @read_command('rgwbench results compare')
    def _cmd_results_compare(self, run_a: str, run_b: str,
                             format: str = 'plain') -> HandleCommandResult:
        """Compare two runs workload by workload (the second against the first)"""
        fmt = parse_format(format)
        rows = between(self.results.load(run_a), self.results.load(run_b),
                       CalibrationStore(self).floors())
        return HandleCommandResult(stdout=render(dump(rows), fmt,
                                                 lambda _: comparison_to_text(rows)))

    @read_command('rgwbench results export')
    def _cmd_results_export(self, run_id: str) -> HandleCommandResult:
        """Print the whole result of a run as JSON, histograms included"""
        return HandleCommandResult(stdout=json.dumps(dump(self.results.load(run_id)), indent=1,
                                                     sort_keys=True))

    @write_command('rgwbench results rm')
    def _cmd_results_rm(self, run_id: str) -> HandleCommandResult:
        """Remove a run's result"""
        active = self.runs.active()
        if active is not None and active['run_id'] == run_id:
            raise Busy('run %s is in progress' % run_id)
        self.results.rm(run_id)
        return HandleCommandResult(stdout='result %s removed' % run_id)


def without_histograms(record: Dict[str, Any]) -> Dict[str, Any]:
    """The result as `-f json` shows it: everything but histograms and series."""
    stripped: Dict[str, Any] = strip_histograms(record, also=('per_second',))
    return stripped


def _field(state: Optional[Dict[str, Any]], key: str) -> Optional[str]:
    return None if state is None else str(state.get(key) or '?')
