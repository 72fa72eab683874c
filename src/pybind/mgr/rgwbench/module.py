"""The rgwbench mgr module: options, commands and the serve loop; work is delegated."""
import json
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

import orchestrator
from ceph.deployment.service_spec import ServiceSpec
from mgr_module import HandleCommandResult, MgrModule, Option
from mgr_util import build_url

from .agents.certificate import self_signed_certificate
from .agents.channel import AgentChannel
from .agents.launchers import AgentLauncher, LocalLauncher, OrchestratorLauncher
from .certificates import Certificates, certificate_to_text
from .cli import RGWBenchCLICommand, read_command, write_command
from .credentials import CredentialStore
from .errors import Busy, InvalidInput, NotFound
from .formatting import parse_format, render
from .loads import LoadRequest, LoadService, load_to_text
from .orchestration import orchestrator_state
from .panel.backend import ModuleBackend
from .panel.service import DEFAULT_PORT, Panel, panel_to_text
from .profiles import Profile, ProfileStore, profile_to_text, profiles_to_text, with_overrides
from .results.compare import compare_runs
from .results.report import (comparison_to_text, result_to_csv, result_to_markdown,
                             result_to_text, results_to_text)
from .results.store import ResultStore
from .rgw_daemons import rgw_daemons
from .runs.engine import RunEngine
from .runs.events import ClusterRunEvents
from .settings.applier import SettingsApplier
from .settings.base import SettingContext
from .settings.cluster import ClusterAccess
from .settings.registry import all_settings, describe, parse_assignments
from .settings.session import SettingsSession, settings_to_text
from .settings.sse import MODULE_OPTIONS as SSE_MODULE_OPTIONS
from .status import build_status, ceph_version_number, status_to_text

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
        Option('keep_objects', type='bool', default=False,
               desc='keep the buckets and objects of a run\'s workloads (default: removed '
                    'after each workload)'),
        Option('rgw_ssl_port', type='int', default=0, min=0, max=65535,
               desc='port RGW serves HTTPS on under tls@rgw=on (0: the port its spec '
                    'serves now)'),
        Option('ingress_virtual_ip', type='str', default='',
               desc='virtual IP (with /prefix) of the ingress tls@ingress puts in front of '
                    'RGW (default: that of an existing ingress of the RGW service)'),
        Option('ingress_frontend_port', type='int', default=0, min=0, max=65535,
               desc='port the ingress of tls@ingress serves S3 on (0: an existing '
                    'ingress\'s)'),
        Option('ingress_monitor_port', type='int', default=0, min=0, max=65535,
               desc='HAProxy monitor port of the ingress of tls@ingress (0: an existing '
                    'ingress\'s)'),
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopping = threading.Event()
        self._agent_cert: Optional[Tuple[str, str]] = None
        self.credentials = CredentialStore(self)
        self.loads = LoadService(self, self.credentials, self._rgw_endpoints, self._rgw_pids,
                                 self._agent_launcher, self._agent_channel, self.log)
        self.settings = SettingsSession(self, self._settings_applier, self.log)
        self.profiles = ProfileStore(self, all_settings())
        self.results = ResultStore(self, lambda: int(self.get_module_option('keep_results')
                                                     or 50))
        self.runs = RunEngine(self, self.results, self.credentials, self._settings_applier,
                              self.loads.default_endpoint, self._rgw_pids,
                              self._agent_launcher, self._agent_channel,
                              ClusterRunEvents(self, self.log),
                              lambda: ceph_version_number(self.version), self.log,
                              keep_objects=lambda: bool(self.get_module_option('keep_objects')))
        self.panel = Panel(self, ModuleBackend(
            self._about, self.results, self.runs, self.profiles, self._plan,
            lambda name, changes: self._start_run(self._chosen(name, changes))),
                           self._panel_server, build_url, self.log)

    def serve(self) -> None:
        # Its own thread: waiting for the panel's port must not hold up the recovery.
        self._in_background(self.panel.start, 'rgwbench-panel-start')
        # Whatever a load, a run or settings changed before a failover or crash is put
        # back first.
        # Each clean-up on its own: one that fails must not keep the journals (the
        # settings) from being put back.
        for what, recover in (('load', lambda: self.loads.recover(self._remove_service)),
                              ('run', lambda: self.runs.recover(self._remove_service))):
            try:
                recover()
            except Exception:
                self.log.exception('cleaning up after an interrupted %s failed', what)
        self.settings.recover(self._stopping)
        self._stopping.wait()

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

    def _panel_server(self, app: 'PanelApp') -> 'PanelServer':
        # CherryPy is loaded only where the panel runs: in the mgr, not in unit tests.
        from .panel.server import PanelServer
        return PanelServer(app, self.log)

    def _active_run(self) -> Optional[Dict[str, Any]]:
        return self.runs.active()

    def _rgw_endpoints(self) -> List[str]:
        return [e.url for d in rgw_daemons(self.get('service_map')) for e in d.endpoints]

    def _rgw_pids(self) -> Dict[str, List[int]]:
        pids: Dict[str, List[int]] = {}
        for daemon in rgw_daemons(self.get('service_map')):
            if daemon.pid is not None:
                pids.setdefault(daemon.host, []).append(daemon.pid)
        return pids

    def _agent_launcher(self, placement: Optional[List[str]]) -> AgentLauncher:
        if not placement:
            return LocalLauncher()
        image = str(self.get_module_option('agent_image') or
                    self.get_ceph_option('container_image') or '')
        return OrchestratorLauncher(self, placement, image, orchestrator.raise_if_exception)

    def _remove_service(self, service_name: str) -> None:
        orchestrator.raise_if_exception(self.remove_service(service_name))

    def _cluster_access(self) -> ClusterAccess:
        return ClusterAccess(self, orchestrator.raise_if_exception, ServiceSpec.from_json,
                             timeout_s=float(self.get_module_option('ready_timeout') or 600),
                             log=self.log.info)

    def _rgw_service(self, cluster: ClusterAccess) -> str:
        chosen = str(self.get_module_option('rgw_service') or '')
        names = [ServiceSpec.from_json(s).service_name() for s in cluster.services('rgw')]
        if chosen:
            if chosen not in names:
                raise NotFound('rgw_service %s is not a service of the orchestrator (it has: '
                               '%s)' % (chosen, ', '.join(names) or 'no RGW service'))
            return chosen
        if len(names) != 1:
            raise InvalidInput('%s; set mgr/rgwbench/rgw_service' % (
                'the orchestrator manages no RGW service' if not names else
                'the orchestrator manages several RGW services (%s)' % ', '.join(names)))
        return names[0]

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
        return HandleCommandResult(stdout=render(info, fmt, lambda i: (
            'access key %s%s' % (i['access_key'], ', with a CA bundle' if i['ca_bundle'] else '')
            if i['configured'] else 'no credentials stored')))

    @write_command('rgwbench credentials rm')
    def _cmd_credentials_rm(self) -> HandleCommandResult:
        """Remove the stored S3 credentials"""
        removed = self.credentials.remove()
        return HandleCommandResult(stdout='credentials removed' if removed
                                   else 'no credentials were stored')

    @write_command('rgwbench load')
    def _cmd_load(self, op: str = 'put', size: str = '4KiB', concurrency: int = 16,
                  duration: int = 30, warmup: int = 2, processes: int = 1, buckets: int = 1,
                  placement: Optional[str] = None,
                  endpoint: Optional[str] = None) -> HandleCommandResult:
        """Run one workload now on agents, without changing any setting; returns its id"""
        if duration < 1 or duration > 3600:
            raise InvalidInput('duration must be 1 to 3600 seconds, got %d' % duration)
        if warmup < 0 or warmup >= duration + 600:
            raise InvalidInput('warmup must be 0 or more seconds, got %d' % warmup)
        if self.settings.changing():
            raise Busy('settings are being applied or put back; see `ceph rgwbench settings '
                       'show`')
        active = self.runs.active()
        if active is not None:
            raise Busy('run %s is in progress; a load now would disturb it' % active['run_id'])
        hosts = [h.strip() for h in placement.split(',') if h.strip()] if placement else None
        if hosts is not None:
            known = {h.hostname for h in orchestrator.raise_if_exception(self.get_hosts())}
            unknown = sorted(set(hosts) - known)
            if unknown:
                raise InvalidInput('placement: unknown host %s (see `ceph orch host ls`)'
                                   % ', '.join(unknown))
        load_id = self.loads.start(LoadRequest(
            op=op, size=size, concurrency=concurrency, processes=processes,
            duration_s=float(duration), warmup_s=float(warmup), buckets=buckets,
            placement=hosts, endpoint=endpoint))
        return HandleCommandResult(stdout=load_id,
                                   stderr='load %s started; `ceph rgwbench load show %s`'
                                   % (load_id, load_id))

    @read_command('rgwbench load show')
    def _cmd_load_show(self, load_id: Optional[str] = None,
                       format: str = 'plain') -> HandleCommandResult:
        """Show a load (the latest by default): its agents, figures and state"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(self.loads.show(load_id), fmt, load_to_text))

    @read_command('rgwbench load ls')
    def _cmd_load_ls(self, format: str = 'plain') -> HandleCommandResult:
        """List the loads kept in the module's store"""
        fmt = parse_format(format)
        return HandleCommandResult(stdout=render(self.loads.list(), fmt, lambda loads: '\n'.join(
            '%s  %s  %s' % (r['load_id'], r['state'], r['endpoint']) for r in loads)
            or 'no loads'))

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
        return HandleCommandResult(stdout=render(
            describe(all_settings()), fmt, lambda found: '\n'.join(
                '%-14s %s (%s)' % (s['setting'], s['summary'], s['values']) for s in found)))

    @read_command('rgwbench settings plan')
    def _cmd_settings_plan(self, settings: List[str],
                           format: str = 'plain') -> HandleCommandResult:
        """Show every change applying settings (name=value ...) would make; changes nothing"""
        fmt = parse_format(format)
        plans = self.settings.plan(parse_assignments(settings))
        return HandleCommandResult(stdout=render([p.to_dict() for p in plans], fmt,
                                                 plan_to_text))

    @write_command('rgwbench settings apply')
    def _cmd_settings_apply(self, settings: List[str], force: bool = False,
                            yes_i_really_mean_it: bool = False) -> HandleCommandResult:
        """Apply settings (name=value ...) and keep them until `settings revert`"""
        if not yes_i_really_mean_it:
            raise InvalidInput('this restarts daemons and changes the cluster until '
                               '`ceph rgwbench settings revert`; see `ceph rgwbench settings '
                               'plan` and add --yes-i-really-mean-it')
        active = self.runs.active()
        if active is not None:
            raise Busy('run %s is in progress; it changes settings itself' % active['run_id'])
        journal_id = self.settings.apply(parse_assignments(settings), force=force)
        return HandleCommandResult(stdout=journal_id, stderr='applying; see `ceph rgwbench '
                                   'settings show`, put back with `ceph rgwbench settings '
                                   'revert`')

    @write_command('rgwbench settings revert')
    def _cmd_settings_revert(self) -> HandleCommandResult:
        """Put back everything `settings apply` changed"""
        journal_id = self.settings.revert()
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
    def _profile(self, profile: str, duration: Optional[int], concurrency: Optional[int],
                 sizes: Optional[str], placement: Optional[str], repeats: Optional[int],
                 warmup: Optional[int]) -> Profile:
        hosts = [h.strip() for h in placement.split(',') if h.strip()] if placement else None
        if hosts:
            known = {h.hostname for h in orchestrator.raise_if_exception(self.get_hosts())}
            unknown = sorted(set(hosts) - known)
            if unknown:
                raise InvalidInput('--placement: unknown host %s (see `ceph orch host ls`)'
                                   % ', '.join(unknown))
        return with_overrides(self.profiles.get(profile), duration=duration,
                              concurrency=concurrency, sizes=sizes, placement=hosts,
                              repeats=repeats, warmup=warmup)

    @read_command('rgwbench plan')
    def _cmd_plan(self, profile: str, duration: Optional[int] = None,
                  concurrency: Optional[int] = None, sizes: Optional[str] = None,
                  placement: Optional[str] = None, repeats: Optional[int] = None,
                  warmup: Optional[int] = None, format: str = 'plain') -> HandleCommandResult:
        """Show every step and change a run of a profile would make; changes nothing"""
        fmt = parse_format(format)
        chosen = self._profile(profile, duration, concurrency, sizes, placement, repeats,
                               warmup)
        return HandleCommandResult(stdout=render(self.runs.plan(chosen), fmt, run_plan_to_text))

    @write_command('rgwbench run')
    def _cmd_run(self, profile: str, duration: Optional[int] = None,
                 concurrency: Optional[int] = None, sizes: Optional[str] = None,
                 placement: Optional[str] = None, repeats: Optional[int] = None,
                 warmup: Optional[int] = None, force: bool = False,
                 yes_i_really_mean_it: bool = False) -> HandleCommandResult:
        """Run a profile: apply each variant, measure, put everything back; returns the run id"""
        chosen = self._profile(profile, duration, concurrency, sizes, placement, repeats,
                               warmup)
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
        if self.settings.in_place() is not None:
            raise Busy('settings applied with `ceph rgwbench settings apply` are in place; '
                       '`ceph rgwbench settings revert` first')
        if self.loads.active() is not None:
            raise Busy('a load is in progress; wait for it')
        return self.runs.start(chosen, force=force)

    def _chosen(self, profile: str, changes: Dict[str, int]) -> Profile:
        """A profile with the panel's overrides (duration, warmup, repeats)."""
        return self._profile(profile, changes.get('duration'), None, None, None,
                             changes.get('repeats'), changes.get('warmup'))

    def _plan(self, profile: str, changes: Dict[str, int]) -> Tuple[Dict[str, Any], str]:
        """A profile's run plan, as data and as the text `ceph rgwbench plan` prints."""
        plan = self.runs.plan(self._chosen(profile, changes))
        return plan, run_plan_to_text(plan)

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
        return HandleCommandResult(stdout=render(self.results.ls(), fmt, results_to_text))

    @read_command('rgwbench results show')
    def _cmd_results_show(self, run_id: str, table: str = 'plain',
                          format: str = 'plain') -> HandleCommandResult:
        """Show a run against its baseline (--table plain|markdown|csv; -f json)"""
        fmt = parse_format(format)
        renderers = {'plain': result_to_text, 'markdown': result_to_markdown,
                     'csv': result_to_csv}
        if table not in renderers:
            raise InvalidInput('--table must be one of plain, markdown, csv, got %r' % table)
        record = self.results.load(run_id)
        return HandleCommandResult(stdout=render(without_histograms(record), fmt,
                                                 lambda _: renderers[table](record)))

    @read_command('rgwbench results compare')
    def _cmd_results_compare(self, run_a: str, run_b: str,
                             format: str = 'plain') -> HandleCommandResult:
        """Compare two runs workload by workload (the second against the first)"""
        fmt = parse_format(format)
        rows = compare_runs(self.results.load(run_a), self.results.load(run_b))
        return HandleCommandResult(stdout=render(rows, fmt, comparison_to_text))

    @read_command('rgwbench results export')
    def _cmd_results_export(self, run_id: str) -> HandleCommandResult:
        """Print the whole result of a run as JSON, histograms included"""
        return HandleCommandResult(stdout=json.dumps(self.results.load(run_id), indent=1))

    @write_command('rgwbench results rm')
    def _cmd_results_rm(self, run_id: str) -> HandleCommandResult:
        """Remove a run's result"""
        active = self.runs.active()
        if active is not None and active['run_id'] == run_id:
            raise Busy('run %s is in progress' % run_id)
        self.results.rm(run_id)
        return HandleCommandResult(stdout='result %s removed' % run_id)


def plan_to_text(plans: List[Dict[str, Any]]) -> str:
    lines = []
    for plan in plans:
        lines.append('%s = %s' % (plan['setting'], plan['value']))
        lines += ['  - %s' % c['summary'] for c in plan['changes']] or ['  (already in place)']
        lines += ['  note: %s' % n for n in plan['notes']]
    return '\n'.join(lines)


def without_histograms(record: Dict[str, Any]) -> Dict[str, Any]:
    """The result as `-f json` shows it: everything but histograms and series."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items()
                    if k not in ('histogram', 'ttfb_histogram', 'per_second')}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    stripped: Dict[str, Any] = strip(record)
    return stripped


def run_plan_to_text(plan: Dict[str, Any]) -> str:
    lines = ['profile %s: %d variant(s) x %d workload(s) x %d repeat(s), about %d min' % (
        plan['profile'], len(plan['variants']), len(plan['workloads']), plan['repeats'],
        round(plan['estimated_s'] / 60.0 + 0.5))]
    lines.append('agents: %s' % (', '.join(plan['placement']) or
                                 'one, on the active mgr\'s host'))
    lines.append('workloads: %s' % ', '.join(w['name'] for w in plan['workloads']))
    for variant in plan['variants']:
        lines.append('variant %s%s:' % (variant['name'],
                                        ' (baseline)' if variant['baseline'] else ''))
        changes = [c['summary'] for p in variant['changes'] for c in p['changes']]
        lines += ['  - %s' % c for c in changes] or ['  (the cluster as it is)']
        lines.append('  - run every workload, then put every change back')
    for problem in plan['problems']:
        lines.append('refused now: %s' % problem)
    return '\n'.join(lines)
