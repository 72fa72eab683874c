"""The rgwbench mgr module: options, commands, serve loop (services: wiring.py, api.py)."""
import json
import threading
from typing import Any, Callable, Dict, List, Optional

import orchestrator
from mgr_module import HandleCommandResult, MgrModule, Option

from .api import BenchAPI, RemoteAPI
from .certs.store import certificate_to_text
from .checks import Finding, findings_to_text
from .cli import RGWBenchCLICommand, read_command, with_words, write_command
from .cluster.credentials import credentials_to_text
from .errors import InvalidInput
from .formatting import parse_format
from .options import OPTIONS
from .panel.service import panel_to_text
from .profiles import RUN_WORDS, profile_to_text, profiles_to_text
from .results.model import Comparison, LoadRecord, LoadSummary, RunSummary
from .results.report import comparison_to_text, results_to_text
from .results.seeds import show
from .runs.loads import LOAD_WORDS, load_to_text, loads_to_text
from .runs.plan_text import run_plan_to_text
from .serial import dump
from .settings.registry import (all_settings, describe, parse_assignments, settings_list_to_text,
                                settings_plan_to_text)
from .settings.journal import findings_to_text as journal_findings_text
from .settings.session import settings_to_text
from .status import status_to_text
from .wiring import Services


class Module(RemoteAPI, orchestrator.OrchestratorClientMixin, MgrModule):
    CLICommand = RGWBenchCLICommand
    COMMANDS: List[Any] = []
    NOTIFY_TYPES: List[Any] = []
    MODULE_OPTIONS: List[Option] = OPTIONS

    leftovers_retry_s = 60.0
    backend_wait_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopping = threading.Event()
        self.services = Services(self, panel_backend=BenchAPI)
        self.api = BenchAPI(self.services)

    def serve(self) -> None:
        # Its own thread: waiting for the panel's port must not hold up the recovery.
        self._in_background(self.services.panel.start, 'rgwbench-panel-start')
        self.services.recover(self._stopping, self.backend_wait_s)
        while not self._stopping.wait(self.leftovers_retry_s):
            self.services.remove_leftovers()

    def shutdown(self) -> None:
        self._stopping.set()
        self.services.panel.stop()

    def config_notify(self) -> None:
        if self._stopping.is_set():
            return
        # Waiting for a port must not hold up the mgr's thread that delivers notifications.
        self._in_background(self.services.panel.restart_if_changed, 'rgwbench-panel-restart')

    @staticmethod
    def _in_background(work: Callable[[], None], name: str) -> None:
        threading.Thread(target=work, name=name, daemon=True).start()

    @read_command('rgwbench status', text=status_to_text)
    def _cmd_status(self) -> Dict[str, Any]:
        """Show the module version, the Ceph release, the orchestrator, RGW daemons and runs"""
        return self.api.status()

    @write_command('rgwbench credentials set')
    def _cmd_credentials_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Store the S3 credentials loads use (-i file: access_key, secret_key, ca_bundle)"""
        if not inbuf or not inbuf.strip():
            raise InvalidInput('give the credentials with -i <file> '
                               '(access_key, secret_key, optional ca_bundle)')
        creds = self.api.set_credentials(inbuf)
        return HandleCommandResult(stdout='credentials for access key %s stored'
                                   % creds['access_key'])

    @read_command('rgwbench credentials show', text=credentials_to_text)
    def _cmd_credentials_show(self) -> Dict[str, Any]:
        """Show which S3 credentials are stored (never the secret key)"""
        return self.services.credentials.describe()

    @write_command('rgwbench credentials rm')
    def _cmd_credentials_rm(self) -> HandleCommandResult:
        """Remove the stored S3 credentials"""
        removed = self.api.remove_credentials()
        return HandleCommandResult(stdout='credentials removed' if removed
                                   else 'no credentials were stored')

    @write_command('rgwbench load')
    @with_words(LOAD_WORDS, into='words')
    def _cmd_load(self, words: Dict[str, Any], force: bool = False) -> HandleCommandResult:
        """Run one workload now on agents, without changing any setting; returns its id"""
        load_id = self.api.start_load(words, force=force)
        return HandleCommandResult(stdout=load_id,
                                   stderr='load %s started; `ceph rgwbench load show %s`'
                                   % (load_id, load_id))

    @read_command('rgwbench load show', text=load_to_text)
    def _cmd_load_show(self, load_id: Optional[str] = None) -> LoadRecord:
        """Show a load (the latest by default): its agents, figures and state"""
        return self.services.loads.show(load_id)

    @read_command('rgwbench load ls', text=loads_to_text)
    def _cmd_load_ls(self) -> List[LoadSummary]:
        """List the loads kept in the module's store"""
        return self.services.loads.list()

    # -- the certificate of TLS settings -------------------------------------------
    @write_command('rgwbench certificate set')
    def _cmd_certificate_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Store the certificate TLS settings serve (-i PEM: certificate, key, CA chain)"""
        info = self.api.certificates().set(inbuf or '')
        return HandleCommandResult(stdout='certificate %s stored (sha256 %s)' % (
            info['subject'], info['fingerprint_sha256']))

    @read_command('rgwbench certificate show', text=certificate_to_text)
    def _cmd_certificate_show(self) -> Dict[str, Any]:
        """Show the certificate TLS settings serve and its CA bundle (never the key)"""
        return self.api.certificates().show()

    @write_command('rgwbench certificate rm')
    def _cmd_certificate_rm(self) -> HandleCommandResult:
        """Remove the operator's certificate; TLS settings then use a self-signed one"""
        removed = self.api.certificates().remove()
        return HandleCommandResult(stdout='certificate removed' if removed
                                   else 'no certificate was set')

    # -- the web panel --------------------------------------------------------------
    @read_command('rgwbench panel show', text=panel_to_text)
    def _cmd_panel_show(self) -> Dict[str, Any]:
        """Show the web panel's URL, how it listens, its certificate, if a password is set"""
        return self.services.panel.describe()

    @write_command('rgwbench panel password set')
    def _cmd_panel_password_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Set the web panel's password (-i file; at least 12 characters); ends every session"""
        if not inbuf or not inbuf.strip('\r\n'):
            raise InvalidInput('give the password with -i <file>')
        self.services.panel.passwords.set(inbuf)
        self.services.panel.password_changed()
        return HandleCommandResult(stdout='panel password set')

    @write_command('rgwbench panel password generate')
    def _cmd_panel_password_generate(self) -> HandleCommandResult:
        """Make a new random web panel password and print it once; ends every session"""
        password = self.services.panel.passwords.generate()
        self.services.panel.password_changed()
        return HandleCommandResult(stdout=password, stderr='the panel password is set; it is '
                                   'shown this once')

    @write_command('rgwbench panel password rm')
    def _cmd_panel_password_rm(self) -> HandleCommandResult:
        """Remove the web panel's password: nobody can log in until one is set"""
        removed = self.services.panel.passwords.remove()
        self.services.panel.password_changed()
        return HandleCommandResult(stdout='panel password removed' if removed
                                   else 'no panel password was set')

    @write_command('rgwbench panel certificate set')
    def _cmd_panel_certificate_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Set the web panel's certificate (-i PEM: certificate, key, CA chain); restarts it"""
        info = self.services.panel.certificates().set(inbuf or '')
        self.services.panel.restart()
        return HandleCommandResult(stdout='panel certificate %s stored (sha256 %s)' % (
            info['subject'], info['fingerprint_sha256']))

    @write_command('rgwbench panel certificate rm')
    def _cmd_panel_certificate_rm(self) -> HandleCommandResult:
        """Remove the web panel's certificate: it serves a self-signed one; restarts it"""
        removed = self.services.panel.certificates().remove()
        if removed:
            self.services.panel.restart()
        return HandleCommandResult(stdout='panel certificate removed' if removed
                                   else 'no panel certificate was set')

    # -- settings under test ------------------------------------------------------
    @read_command('rgwbench settings ls', text=settings_list_to_text)
    def _cmd_settings_ls(self) -> List[Dict[str, Any]]:
        """List the settings rgwbench can apply and put back"""
        return describe(all_settings())

    @read_command('rgwbench settings plan', text=settings_plan_to_text)
    def _cmd_settings_plan(self, settings: List[str]) -> List[Dict[str, Any]]:
        """Show every change applying settings (name=value ...) would make; changes nothing"""
        return dump(self.services.settings.plan(parse_assignments(settings)))

    @write_command('rgwbench settings apply')
    def _cmd_settings_apply(self, settings: List[str], force: bool = False,
                            yes_i_really_mean_it: bool = False) -> HandleCommandResult:
        """Apply settings (name=value ...) and keep them until `settings revert`"""
        journal_id = self.api.apply_settings(settings, confirmed=yes_i_really_mean_it,
                                             force=force)
        return HandleCommandResult(stdout=journal_id, stderr='applying; see `ceph rgwbench '
                                   'settings show`, put back with `ceph rgwbench settings '
                                   'revert`')

    @write_command('rgwbench settings revert')
    def _cmd_settings_revert(self, force: bool = False) -> HandleCommandResult:
        """Put back everything `settings apply` changed (--force: restarts on a degraded
        cluster too)"""
        return HandleCommandResult(stdout=self.api.revert_settings(force=force),
                                   stderr='putting back; see `ceph rgwbench settings show`')

    @read_command('rgwbench settings findings', text=journal_findings_text)
    def _cmd_settings_findings(self) -> List[Dict[str, str]]:
        """Show the targets someone else changed during a run, left as they made them"""
        return dump(self.services.settings.findings())

    @write_command('rgwbench settings acknowledge')
    def _cmd_settings_acknowledge(self) -> HandleCommandResult:
        """Mark those findings seen: their health warning ends"""
        return HandleCommandResult(stdout='%d finding(s) acknowledged'
                                   % self.services.settings.acknowledge())

    @read_command('rgwbench settings show', text=settings_to_text)
    def _cmd_settings_show(self) -> Dict[str, Any]:
        """Show the settings in place (or last put back) and every change made"""
        return self.services.settings.show()

    # -- profiles -------------------------------------------------------------------
    @read_command('rgwbench profile ls', text=profiles_to_text)
    def _cmd_profile_ls(self) -> List[Dict[str, Any]]:
        """List the built-in and custom profiles"""
        return self.api.profiles()

    @read_command('rgwbench profile show', text=profile_to_text)
    def _cmd_profile_show(self, profile: str) -> Dict[str, Any]:
        """Show a profile: its variants, workloads, placement and repeats"""
        return self.api.profile(profile)

    @write_command('rgwbench profile set')
    def _cmd_profile_set(self, inbuf: Optional[str] = None) -> HandleCommandResult:
        """Add or replace a custom profile (-i file, YAML or JSON)"""
        if not inbuf or not inbuf.strip():
            raise InvalidInput('give the profile with -i <file> (YAML or JSON)')
        stored = self.services.profiles.set(inbuf)
        return HandleCommandResult(stdout='profile %s stored' % stored.name)

    @write_command('rgwbench profile rm')
    def _cmd_profile_rm(self, profile: str) -> HandleCommandResult:
        """Remove a custom profile"""
        self.services.profiles.rm(profile)
        return HandleCommandResult(stdout='profile %s removed' % profile)

    # -- runs -----------------------------------------------------------------------
    @read_command('rgwbench plan', text=run_plan_to_text)
    @with_words(RUN_WORDS, into='overrides')
    def _cmd_plan(self, profile: str, overrides: Dict[str, Any]) -> Dict[str, Any]:
        """Show every step and change a run of a profile would make; changes nothing"""
        plan, _ = self.api.plan(profile, overrides)
        return plan

    @write_command('rgwbench run')
    @with_words(RUN_WORDS, into='overrides')
    def _cmd_run(self, profile: str, overrides: Dict[str, Any], force: bool = False,
                 yes_i_really_mean_it: bool = False) -> HandleCommandResult:
        """Run a profile: apply each variant, measure, put everything back; returns the run id"""
        run_id = self.api.start_run(profile, overrides, confirmed=yes_i_really_mean_it,
                                    force=force)
        return HandleCommandResult(stdout=run_id, stderr='run %s started; `ceph rgwbench '
                                   'status` follows it, `ceph rgwbench results show %s` '
                                   'shows it' % (run_id, run_id))

    @read_command('rgwbench check', text=findings_to_text)
    def _cmd_check(self, profile: Optional[str] = None) -> List[Finding]:
        """Show what would skew or endanger a run now (and a run of --profile); changes nothing"""
        return self.api.findings(profile)

    @write_command('rgwbench abort')
    def _cmd_abort(self) -> HandleCommandResult:
        """Stop the run in progress and put everything back at once"""
        run_id = self.api.abort_run()
        return HandleCommandResult(stdout=run_id, stderr='aborting run %s' % run_id)

    # -- results --------------------------------------------------------------------
    @read_command('rgwbench results ls', text=results_to_text)
    def _cmd_results_ls(self) -> List[RunSummary]:
        """List the runs kept in the config-key store"""
        return self.api.runs()

    @read_command('rgwbench results show')
    def _cmd_results_show(self, run_id: str, table: str = 'plain', layout: str = 'wide',
                          format: str = 'plain') -> HandleCommandResult:
        """Show a run against its baseline (--table plain|markdown|csv, --layout wide|seeds)"""
        return HandleCommandResult(stdout=show(lambda: self.api.run(run_id), layout, table,
                                               parse_format(format)))

    @read_command('rgwbench results compare', text=comparison_to_text)
    def _cmd_results_compare(self, run_a: str, run_b: str) -> List[Comparison]:
        """Compare two runs workload by workload (the second against the first)"""
        return self.api.compare(run_a, run_b)

    @read_command('rgwbench results export')
    def _cmd_results_export(self, run_id: str) -> HandleCommandResult:
        """Print the whole result of a run as JSON, histograms included"""
        return HandleCommandResult(stdout=json.dumps(dump(self.api.run(run_id)), indent=1,
                                                     sort_keys=True))

    @write_command('rgwbench results rm')
    def _cmd_results_rm(self, run_id: str) -> HandleCommandResult:
        """Remove a run's result"""
        self.api.remove_run(run_id)
        return HandleCommandResult(stdout='result %s removed' % run_id)
