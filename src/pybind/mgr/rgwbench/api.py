"""What the CLI, the web panel and other mgr modules (the dashboard) may ask of rgwbench.

One implementation behind the three: every answer typed data (what `-f json`
prints once written with serial.dump), every refusal an `RGWBenchError` with its
errno. Other modules reach it through `mgr.remote('rgwbench', 'api_<method>', ...)`,
which answers plain data and turns the errors into `OSError(errno, message)`:
plain and picklable across interpreters.
"""
from dataclasses import replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .runs.activity import Activity
from .errors import Busy, InvalidInput, RGWBenchError
from .profiles.placement import placement_hosts
from .runs.loads import load_request
from .certs.store import Certificates
from .settings.journal import Journal
from .settings.registry import parse_assignments
from .results.calibration import CalibrationStore
from .checks.finding import Finding
from .results.compare import between
from .results.model import Comparison, Run, RunSummary
from .results.seeds import shown_json
from .serial import dump
from .status import build_status
from .cluster.orchestration import orchestrator_state
from .cluster.secret_options import masked_profile, masked_settings
from .wiring import Services


class BenchAPI:
    def __init__(self, services: Services) -> None:
        self.services = services

    # -- the cluster and what goes on ------------------------------------------------
    def about(self) -> Dict[str, Any]:
        return self.services.about()

    def status(self) -> Dict[str, Any]:
        s = self.services
        status = build_status(s.ceph_version(), s.mgr.release_name, orchestrator_state(s.mgr),
                              s.mgr.get('service_map'), s.runs.active())
        status['active_load'] = s.loads.active()
        status['settings_in_place'] = s.settings.in_place()
        status['leftovers'] = s.loads.leftovers.pending() + s.runs.leftovers.pending()
        return status

    def active_run(self) -> Optional[Dict[str, Any]]:
        """The run in progress: its progress and its live figures; None when none runs."""
        return self.services.runs.active()

    def findings(self, profile: Optional[str] = None) -> List[Finding]:
        chosen = self.services.profiles.get(profile) if profile else None
        return self.services.checks.now(chosen)

    def set_credentials(self, text: str) -> Dict[str, str]:
        """Store the S3 credentials (refused, EBUSY, while a run or load goes)."""
        s = self.services
        return s.activity.start(Activity.CREDENTIALS_CHANGE, lambda: s.credentials.set(text))

    def remove_credentials(self) -> bool:
        s = self.services
        return s.activity.start(Activity.CREDENTIALS_CHANGE, s.credentials.remove)

    def certificates(self) -> Certificates:
        """The certificate TLS settings serve: not changed while changes are in place."""
        def in_place() -> Optional[str]:
            journal = Journal.unfinished(self.services.mgr)
            return None if journal is None else journal.journal_id
        return Certificates(self.services.mgr, changes_in_place=in_place)

    # -- settings kept in place ---------------------------------------------------------
    def apply_settings(self, assignments: List[str], *, confirmed: bool,
                       force: bool = False) -> str:
        """Apply settings (`name=value` each) until reverted; the journal's id."""
        if not confirmed:
            raise InvalidInput('this restarts daemons and changes the cluster until '
                               '`ceph rgwbench settings revert`; see `ceph rgwbench settings '
                               'plan` and add --yes-i-really-mean-it')
        wanted = parse_assignments(assignments)
        s = self.services
        return s.activity.start(Activity.SETTINGS_APPLY,
                                lambda: s.settings.apply(wanted, force=force))

    def revert_settings(self, force: bool = False) -> str:
        s = self.services
        return s.activity.start(Activity.SETTINGS_REVERT, lambda: s.settings.revert(force=force))

    # -- loads ----------------------------------------------------------------------
    def start_load(self, words: Mapping[str, Any], *, force: bool = False) -> str:
        """Run one workload now (the words of `ceph rgwbench load`); its id."""
        s = self.services
        given = dict(words)
        given['placement'] = placement_hosts(given.get('placement'), s.placing.known_hosts)
        request = load_request(given)
        return s.activity.start(Activity.LOAD, lambda: s.loads.start(request, force=force))

    # -- profiles and runs ----------------------------------------------------------
    def profiles(self) -> List[Dict[str, Any]]:
        return dump([info.shown() for info in self.services.profiles.ls()])

    def profile(self, profile: str) -> Dict[str, Any]:
        return dump(self.services.profiles.info(profile).shown())

    def plan(self, profile: str, overrides: Mapping[str, Any]) -> Tuple[Dict[str, Any], str]:
        return self.services.starter.plan(profile, overrides)

    def start_run(self, profile: str, overrides: Mapping[str, Any], *, confirmed: bool,
                  force: bool = False) -> str:
        return self.services.starter.start(profile, overrides, confirmed=confirmed,
                                           force=force)

    def abort_run(self) -> str:
        return self.services.runs.abort()

    # -- results ----------------------------------------------------------------------
    def runs(self) -> List[RunSummary]:
        return self.services.results.summaries()

    def run(self, run_id: str) -> Run:
        """A run's whole record, histograms included (`results export`)."""
        return shown_run(self.services.results.load(run_id))

    def run_shown(self, run_id: str, layout: str = 'wide',
                  series: bool = False) -> Dict[str, Any]:
        """A run as `results show -f json` gives it (`series`: with the per-second series
        of its workloads, which charts draw)."""
        return shown_json(self.run(run_id), layout, series=series)

    def compare(self, run_a: str, run_b: str) -> List[Comparison]:
        return between(self.run(run_a), self.run(run_b),
                       CalibrationStore(self.services.mgr).floors())

    def remove_run(self, run_id: str) -> None:
        active = self.services.runs.active()
        if active is not None and active['run_id'] == run_id:
            raise Busy('run %s is in progress' % run_id)
        self.services.results.rm(run_id)


class RemoteAPI:
    """The methods other mgr modules call, `mgr.remote('rgwbench', 'api_status')` and the
    like (the module's own, by inheritance): plain data in and out."""
    api: BenchAPI

    def api_status(self) -> Dict[str, Any]:
        return _remote(self.api.status)

    def api_profiles(self) -> List[Dict[str, Any]]:
        return _remote(self.api.profiles)

    def api_profile(self, profile: str) -> Dict[str, Any]:
        return _remote(lambda: self.api.profile(profile))

    def api_plan(self, profile: str, overrides: Dict[str, str]) -> Dict[str, Any]:
        plan, text = _remote(lambda: self.api.plan(profile, overrides))
        return {'plan': plan, 'text': text}

    def api_run(self, profile: str, overrides: Dict[str, str], confirm: bool,
                force: bool = False) -> Dict[str, str]:
        return {'run_id': _remote(lambda: self.api.start_run(
            profile, overrides, confirmed=confirm, force=force))}

    def api_abort(self) -> Dict[str, str]:
        return {'run_id': _remote(self.api.abort_run)}

    def api_runs(self) -> List[Dict[str, Any]]:
        return _remote(self.api.runs)

    def api_run_show(self, run_id: str, series: bool = False) -> Dict[str, Any]:
        return _remote(lambda: self.api.run_shown(run_id, series=series))

    def api_compare(self, run_a: str, run_b: str) -> List[Dict[str, Any]]:
        return _remote(lambda: self.api.compare(run_a, run_b))

    def api_export(self, run_id: str) -> Dict[str, Any]:
        return _remote(lambda: self.api.run(run_id))

    def api_run_rm(self, run_id: str) -> Dict[str, Any]:
        _remote(lambda: self.api.remove_run(run_id))
        return {'run_id': run_id}

    def api_live(self) -> Optional[Dict[str, Any]]:
        return _remote(self.api.active_run)

    def api_findings(self, profile: Optional[str] = None) -> List[Dict[str, Any]]:
        return _remote(lambda: self.api.findings(profile))


def _remote(call: Callable[[], Any]) -> Any:
    """An answer to another module: plain data, a refusal an OSError with its errno."""
    try:
        return dump(call())
    except RGWBenchError as e:
        raise OSError(abs(e.errno), str(e))


def shown_run(run: Run) -> Run:
    """A run as it may be shown: a secret option's value of `config` masked (a run recorded
    before the engine masked its settings holds them in clear)."""
    return replace(run, definition=masked_profile(run.definition) if run.definition else
                   run.definition,
                   variants=[replace(v, settings=masked_settings(v.settings))
                             if v.settings else v for v in run.variants])
