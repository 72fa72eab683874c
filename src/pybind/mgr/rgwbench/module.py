"""The rgwbench mgr module: options, commands and the serve loop; work is delegated."""
import json
import socket
import threading
from typing import Any, Dict, List, Optional, Tuple

import orchestrator
from ceph.deployment.service_spec import ServiceSpec
from mgr_module import HandleCommandResult, MgrModule, Option

from .agents.certificate import self_signed_certificate
from .agents.channel import AgentChannel
from .agents.launchers import AgentLauncher, LocalLauncher, OrchestratorLauncher
from .cli import RGWBenchCLICommand, read_command, write_command
from .credentials import CredentialStore
from .errors import Busy, InvalidInput, NotFound
from .formatting import parse_format, render
from .loads import LoadRequest, LoadService, load_to_text
from .orchestration import orchestrator_state
from .rgw_daemons import rgw_daemons
from .settings.applier import SettingsApplier
from .settings.base import SettingContext
from .settings.cluster import ClusterAccess
from .settings.registry import all_settings, describe, parse_assignments
from .settings.session import SettingsSession, settings_to_text
from .settings.sse import MODULE_OPTIONS as SSE_MODULE_OPTIONS
from .settings.tls import Certificates, certificate_to_text
from .status import build_status, ceph_version_number, status_to_text

ACTIVE_RUN_KEY = 'run/active'


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

    def serve(self) -> None:
        # Whatever a load, a run or settings changed before a failover or crash is put
        # back first.
        self.loads.recover(self._remove_service)
        self.settings.recover(self._stopping)
        self._stopping.wait()

    def shutdown(self) -> None:
        self._stopping.set()

    # -- collaborators ------------------------------------------------------------
    def _active_run(self) -> Optional[Dict[str, Any]]:
        stored = self.get_store(ACTIVE_RUN_KEY)
        return json.loads(stored) if stored else None

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
        if not inbuf or not inbuf.strip():
            raise InvalidInput('give the certificate with -i <pem> (certificate, private key '
                               'and optional CA chain in one PEM file)')
        info = Certificates(self).set(inbuf)
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


def plan_to_text(plans: List[Dict[str, Any]]) -> str:
    lines = []
    for plan in plans:
        lines.append('%s = %s' % (plan['setting'], plan['value']))
        lines += ['  - %s' % c['summary'] for c in plan['changes']] or ['  (already in place)']
        lines += ['  note: %s' % n for n in plan['notes']]
    return '\n'.join(lines)
