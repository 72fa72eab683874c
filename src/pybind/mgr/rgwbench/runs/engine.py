"""`ceph rgwbench run`: every variant of a profile applied, measured and put back.

For each variant, in the profile's order: its settings are applied through
the run's journal (see settings/), every workload runs on the agents (each
repeat a fresh set of agents), and the settings the next variant does not
keep are put back before it: a setting the next variant gives the same value
(msgr2-secure on in both, say) stays in place, so its OSD restarts are not
done twice for nothing; every other starts from the cluster as it was. The
journal holds every change until it is put back, so that a failure, an abort
or a mgr failover puts the cluster back as it was before the run. The result
is saved after every workload, so that they keep what was measured.

With ``order: interleaved`` and repeats, the variants run round by round
(A B A B ...): each round applies each variant anew (keeping, as above, what
the next one shares), measures every workload once, so the repeats see the
noise between applications and any drift of the cluster during the run.
"""
import errno
import functools
import threading
import time
from dataclasses import dataclass, field, replace
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Protocol, Set, Tuple

from ..agents.coordinator import AgentRun, agents_failed
from ..agents.launchers import AgentLauncher, loading_agents
from ..checks.finding import Finding, Level
from ..checks.gate import Refused, RunChecks
from ..cluster.credentials import CredentialStore
from ..errors import Busy, InvalidInput, NotFound
from ..settings.journal import FINISHED, LEFT, Journal, Step
from ..cluster.kvstore import SecretStore
from ..cluster.step_times import RGW_SPEC, spec_kind
from ..cluster.secret_options import masked_profile, masked_settings
from ..profiles import MAX_CONCURRENCY, Profile, Workload, estimate_seconds
from ..profiles.estimates import ClusterWork, default_steps, planned_seconds, step_seconds
from ..results.calibration import CALIBRATE, CalibrationStore, calibrate
from ..results.compare import comparison, merge_repeats
from ..results.host_findings import host_findings
from ..results.model import Change, Position, Run, VariantResult, WorkloadResult
from ..results.store import ResultStore
from ..serial import dump
from ..settings.s3user import create_user, user_plan
from ..settings.applier import (JournalTarget, SettingPlan, SettingsApplier, as_put_in_place,
                                open_journal, restarts_osds)
from ..settings.changes import RESTART, SERVICE, USER
from ..settings.daemon_settings import OSD_RESTART_TARGET
from ..settings.base import ClientSide
from ..settings.targets import AUTO, RGW, URLS, Target
from ..agents.workload_runs import AgentWorkloads, Leftovers, make_job, new_id
from ..loadgen.workload import Job
from ..profiles.prefills import (PrefillKey, RunPrefills, held_at_once, read_later, reads_only,
                                 storage_of)

LEFTOVERS_KEY = 'running/leftovers'
RUNNING, COMPLETE, RUN_FAILED, ABORTED = 'running', 'complete', 'failed', 'aborted'
# What jobs are checked with before a run's own S3 user exists.
PLACEHOLDER_KEYS = {'access_key': 'placeholder', 'secret_key': 'placeholder'}


def changes_of(steps: List[Step]) -> List[Change]:
    """Journal steps as the run record keeps them: what was changed, and whether put back."""
    return [Change(kind=s.kind, target=s.target, state=s.state, error=s.error) for s in steps]


def run_failures(record: Run) -> List[str]:
    """Why a run failed: a variant that could not run, or a workload that measured
    nothing (every repeat's agents failed). A workload with figures from some of its
    repeats is kept as measured, with its error; one the capacity guard stopped before
    it measured anything (or did not start) says so in its `stopped`: the guard did
    what it is for, and the run goes on."""
    return ['variant %s: %s' % (v.name, v.error) for v in record.variants if v.error] + [
        'variant %s, workload %s: %s' % (v.name, w.name, w.error)
        for v in record.variants if not v.error for w in v.workloads
        if w.error and w.figures.ops is None and not w.stopped]


class RunEvents(Protocol):
    """What the cluster is told while a run goes (progress in `ceph -s`, a health check)."""

    def started(self, run_id: str, profile: str) -> None: ...

    def update(self, run_id: str, message: str, fraction: float,
               changed: List[str]) -> None: ...

    def finished(self, run_id: str, state: str, message: str) -> None: ...


@dataclass(frozen=True)
class RunCluster:
    """What a run needs of the cluster: its settings (and where a load goes), its version,
    the checks of what would skew or endanger it (None: unchecked)."""
    make_applier: Callable[[], SettingsApplier]
    ceph_version: Callable[[], str]
    checks: Optional[RunChecks] = None
    # How many RGW daemons the service under test has now (a workload may be given
    # its concurrency per RGW daemon).
    rgw_daemons: Callable[[], int] = lambda: 1
    # The hosts a placement puts agents on now ([]: the mgr's); raises when it cannot.
    agent_hosts: Callable[[Optional[List[str]]], List[str]] = lambda placement: []
    # How long each kind of step took on this cluster before, its median by kind
    # (cluster/step_times.py); none: the estimate's fixed times.
    step_times: Callable[[], Mapping[str, float]] = dict
    # Told of a run's journal whose changes its end could not all put back (the settings
    # session reports it and lets `settings revert` finish it); tries is how many times.
    gave_up: Callable[[Journal, int], None] = lambda journal, tries: None


@dataclass
class InPlace:
    """A run's settings in place between its variants: each setting's plan as it was put
    in place (kept settings from the variant that made their changes), and which
    variant made each journal step (its record lists them)."""
    plans: List[SettingPlan] = field(default_factory=list)
    made_by: Dict[int, int] = field(default_factory=dict)

    def now(self, plans: List[SettingPlan]) -> None:
        """The settings in place once `plans` (a variant's) are applied."""
        kept = {p.setting: p for p in self.plans}
        self.plans = [replace(kept[p.setting], changes=kept[p.setting].changes + p.changes,
                              restarts=kept[p.setting].restarts + p.restarts)
                      if p.setting in kept and kept[p.setting].value == p.value else p
                      for p in plans]


@dataclass
class PlannedWork:
    """What a plan counts of a run's changes, each time it is made and put back: the
    applications, the restarts of a service (RGW), the specs applied, and how many
    times every OSD is restarted (`rolling`, counted apart: see _variants_planned)."""
    applications: int = 0
    daemon_restarts: int = 0
    rgw_specs: int = 0
    specs: int = 0
    rolling: int = 0
    #: the services whose journaled restart is not put back yet: putting back restarts
    #: each once, however many variants restarted it
    restarts_open: Set[str] = field(default_factory=set)

    def applied(self, plans: List[SettingPlan]) -> None:
        self.applications += 1
        for change in (c for p in plans for c in p.changes):
            if change.kind == SERVICE:
                self._spec(change.target)
            elif change.kind == RESTART and change.target != OSD_RESTART_TARGET:
                self.daemon_restarts += 1
                self.restarts_open.add(change.target)

    def put_back(self, targets: AbstractSet[JournalTarget]) -> None:
        for kind, target in targets:
            if kind == SERVICE:
                self._spec(target)
            elif kind == RESTART and target in self.restarts_open:
                self.daemon_restarts += 1
                self.restarts_open.discard(target)

    def _spec(self, service: str) -> None:
        if spec_kind(service) == RGW_SPEC:
            self.rgw_specs += 1
        else:
            self.specs += 1

    def put_back_all(self, in_place: List[SettingPlan]) -> None:
        """At the run's end: every change in place, and every restart not put back."""
        self.put_back({(c.kind, c.target) for p in in_place for c in p.changes
                       if c.kind != RESTART} | {(RESTART, r) for r in self.restarts_open})

    def cluster_work(self, osd_batches: int, prefill_s: float) -> ClusterWork:
        return ClusterWork(applications=self.applications,
                           daemon_restarts=self.daemon_restarts,
                           rgw_specs=self.rgw_specs, specs=self.specs,
                           osd_batches=self.rolling * osd_batches, prefill_s=prefill_s)


def prefills_written(profile: Profile, workload: Workload) -> int:
    """How many prefills a run writes for `workload` (a reading one is shared by the
    variants that store alike, see prefills.py; another prefills in every variant)."""
    if reads_only(workload):
        return len({storage_of(v, i) for i, v in enumerate(profile.variants)})
    return len(profile.variants)


def following_settings(order: List[Tuple[int, int]], position: int, profile: Profile,
                       record: Run) -> Optional[Dict[str, Any]]:
    """The settings of the next application in the run's `order` after `position` (a
    variant that failed is not applied again), or None when there is none."""
    for _, index in order[position + 1:]:
        if index < len(record.variants) and record.variants[index].error:
            continue
        return profile.variants[index].settings
    return None


def run_order(profile: Profile) -> List[Tuple[int, int]]:
    """(round, variant index) of each application: a round per repeat when interleaved."""
    rounds = profile.repeats if profile.interleaved() else 1
    return [(r, i) for r in range(rounds) for i in range(len(profile.variants))]


class RunEngine:
    def __init__(self, *, store: SecretStore, results: ResultStore, credentials: CredentialStore,
                 cluster: RunCluster, agents: AgentWorkloads,
                 make_launcher: Callable[[Optional[List[str]]], AgentLauncher],
                 events: RunEvents, log: Any, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.results = results
        self.credentials = credentials
        self.make_applier = cluster.make_applier
        self.ceph_version = cluster.ceph_version
        self.checks = cluster.checks
        self.rgw_daemons = cluster.rgw_daemons
        self.agent_hosts = cluster.agent_hosts
        self.step_times = cluster.step_times
        self.gave_up = cluster.gave_up
        self.agents = agents
        self.make_launcher = make_launcher
        self.events = events
        self.log = log
        self.clock = clock
        self.leftovers = Leftovers(store, LEFTOVERS_KEY, remove_buckets=self.agents.remove_buckets)
        self.calibrations = CalibrationStore(store)
        self._lock = threading.Lock()
        self._record: Optional[Run] = None
        self._abort = threading.Event()
        self._agent_run: Optional[AgentRun] = None
        self._thread: Optional[threading.Thread] = None
        # The run's sized working sets, by workload: the objects its first prefill wrote.
        self._objects_read: Dict[str, int] = {}
        self._prefills = RunPrefills('')
        self._in_place = InPlace()

    # -- planning -------------------------------------------------------------------
    def plan(self, profile: Profile) -> Dict[str, Any]:
        """Every step and every change a run would make; changes nothing."""
        applier = self.make_applier()
        stored = self.credentials.get()
        restart_rgw, restart_osds = applier.restarts([v.settings for v in profile.variants])
        variants, work = self._variants_planned(applier, profile, restart_rgw)
        rolling = work.rolling
        agents = self._agents_planned(profile)
        # As the run sends them: GET working sets sized from the caches now.
        workloads = [self.checks.sized(w, max(1, len(agents['hosts'])), held_at_once(profile))
                     if self.checks is not None else w for w in profile.workloads]
        # a working set sized here is prefilled for at most prefill_time
        prefill_s = sum((self.checks.prefill_time() * prefills_written(profile, w)
                         for w, given in zip(workloads, profile.workloads)
                         if self.checks is not None and w.objects is not None and w != given),
                        0.0)
        steps = step_seconds(self.step_times(),
                             default_steps(applier.ctx.release, self.rgw_daemons()))
        counted = work.cluster_work(
            applier.ctx.cluster.osd_restart_batches() if rolling else 0, prefill_s)
        estimate = planned_seconds(profile, counted, steps)
        return {'profile': profile.name, 'baseline': profile.baseline,
                'estimated_s': estimate['total'],
                'estimate': {part: round(s, 1) for part, s in estimate.items()},
                # the parts counted at the times their steps took on this cluster before
                'estimate_measured': counted.measured_parts(steps),
                'step_seconds': steps.shown(),
                'repeats': profile.repeats,
                'placement': profile.placement or [],
                'agents': agents,
                'target': profile.target.to_value() or AUTO,
                'workloads': [dict(dump(w), prefill_time_s=self.checks.prefill_time())
                              if self.checks is not None and w.objects is not None and
                              w not in profile.workloads else dump(w) for w in workloads],
                'variants': variants, 's3_user': dump(user_plan(stored)),
                # each OSD up and in, restarted this many times (applied, put back)
                'osd_restarts': rolling * len(applier.ctx.cluster.running_osd_ids())
                if rolling else 0,
                'problems': applier.precheck(restart_osds=restart_osds) +
                self._user_problems(stored) + (
                    [agents['error']] if agents.get('error') else []),
                'findings': [] if self.checks is None else
                dump(self.checks.now(profile))}

    @staticmethod
    def _variants_planned(applier: SettingsApplier, profile: Profile,
                          restart_rgw: bool) -> Tuple[List[Dict[str, Any]], PlannedWork]:
        """Each variant's changes as the run makes them at its first application (after
        what the one before keeps), and what the run does to the cluster (how many times
        it restarts every OSD, `rolling`, among it)."""
        variants: Dict[int, Dict[str, Any]] = {}
        in_place = InPlace()
        work = PlannedWork()
        rolling, owed = 0, False   # owed: a journaled OSD restart waits to be put back
        order = run_order(profile)
        for position, (_, index) in enumerate(order):
            variant = profile.variants[index]
            carried = [p.setting for p in in_place.plans]
            plans = applier.plan_after(variant.settings, in_place.plans, restart_rgw)
            if restarts_osds(plans):
                rolling, owed = rolling + 1, True
            work.applied(plans)
            in_place.now(plans)
            variants.setdefault(index, {
                'name': variant.name, 'baseline': variant.name == profile.baseline,
                'settings': masked_settings(variant.settings), 'changes': dump(plans),
                'kept': carried})
            following = profile.variants[order[position + 1][1]].settings \
                if position + 1 < len(order) else None
            if following is None:
                rolling += owed
                work.put_back_all(in_place.plans)
                break
            carry = applier.carry(in_place.plans, following)
            if owed and (RESTART, OSD_RESTART_TARGET) in carry.put_back:
                rolling, owed = rolling + 1, OSD_RESTART_TARGET in carry.owed
            work.put_back(carry.put_back)
            work.restarts_open |= {r for r in carry.owed if r != OSD_RESTART_TARGET}
            in_place.plans = [p for p in in_place.plans if p.setting in carry.kept]
        work.rolling = rolling
        return [variants[i] for i in sorted(variants)], work

    def _agents_planned(self, profile: Profile) -> Dict[str, Any]:
        """Where the placement puts agents now, or why it cannot."""
        try:
            launcher = self.make_launcher(profile.placement or None)
        except Exception as e:  # shown in the plan; the run itself refuses it
            return {'hosts': [], 'samplers': [], 'started_by': None, 'error': str(e)}
        return {'hosts': loading_agents(launcher), 'samplers': list(launcher.samplers),
                'started_by': launcher.started_by}

    def _user_problems(self, stored: Optional[Dict[str, str]]) -> List[str]:
        if stored is None and self.agents.keep_objects():
            return ['keep_objects is set and no S3 credentials are stored: the buckets of '
                    'a run\'s temporary S3 user go with it (store credentials with '
                    '`ceph rgwbench credentials set -i <file>`)']
        return []

    # -- running --------------------------------------------------------------------
    def active(self) -> Optional[Dict[str, Any]]:
        with self._lock:
            run = self._record
            if run is None:
                return None
            active = {'run_id': run.run_id, 'profile': run.profile, 'state': run.state,
                      'started': run.started, 'progress': run.progress,
                      'fraction': run.fraction,
                      'current': dump(run.current)}
            agent_run = self._agent_run
        active['live'] = agent_run.live_figures() if agent_run is not None else None
        return active

    def start(self, profile: Profile, force: bool = False) -> str:
        creds = self.credentials.get()  # None: each variant makes an S3 user of its own
        user_problems = self._user_problems(creds)
        if user_problems:
            raise InvalidInput(user_problems[0])
        with self._lock:
            if self._record is not None:
                raise Busy('run %s is in progress (`ceph rgwbench abort` stops it)'
                           % self._record.run_id)
            unfinished = Journal.unfinished(self.store)
            if unfinished is not None:
                raise Busy('changes of %s are not put back yet; see `ceph rgwbench settings '
                           'show`' % unfinished.journal_id)
            found = None if self.checks is None else self.checks.before(profile, force=force)
            applier = self.make_applier()
            # Every variant's settings check out first.
            restart_rgw, restart_osds = applier.restarts([v.settings for v in profile.variants])
            problems = applier.precheck(force, restart_osds=restart_osds, settle=True)
            if problems:
                raise Busy('refusing to run: %s' % '; '.join(problems))
            # Agents that cannot be placed now (`count:N` past the hosts there are, `rgw`
            # without an RGW daemon) refuse the run before its first change.
            self.agent_hosts(profile.placement or None)
            # Each variant resolves its own targets; a load could go where the cluster is now.
            client = applier.targets(profile.target if profile.target.kind == URLS
                                     else Target(kind=RGW), ClientSide())
            run_id = new_id()
            for workload in profile.workloads:  # and every workload makes a valid job
                self._job(workload, creds or PLACEHOLDER_KEYS, client, run_id, 0, 0.0)
            record = Run(run_id=run_id, profile=profile.name, state=RUNNING,
                         ceph_version=self.ceph_version(), started=self.clock(),
                         baseline=profile.baseline, definition=masked_profile(dump(profile)),
                         progress='starting', fraction=0.0, findings=found)
            self._record = record
            self._objects_read = {}
            self._prefills = RunPrefills(run_id)
            self._abort.clear()
            self.results.save(record)
        self._thread = threading.Thread(target=self._run,
                                        args=(record, profile, creds, force, restart_rgw),
                                        name='rgwbench-run', daemon=True)
        self._thread.start()
        return run_id

    def abort(self) -> str:
        with self._lock:
            if self._record is None:
                raise NotFound('no run is in progress')
            self._abort.set()
            if self._agent_run is not None:
                self._agent_run.abort()
            return str(self._record.run_id)

    def wait(self, timeout: Optional[float] = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _progress(self, record: Run, message: str, done_s: float,
                  total_s: float, changed: List[str]) -> None:
        record.progress = message
        record.fraction = round(min(0.99, done_s / max(total_s, 1.0)), 3)
        self.events.update(str(record.run_id), message, record.fraction, changed)

    def _run(self, record: Run, profile: Profile, stored: Optional[Dict[str, str]],
             force: bool = False, restart_rgw: bool = False) -> None:
        run_id = str(record.run_id)
        total_s, done_s = estimate_seconds(profile), 0.0
        self.events.started(run_id, profile.name)
        journal: Optional[Journal] = None
        creds: Dict[str, str] = {}
        try:
            # The run's one journal: each variant's settings, put back at the variant's
            # end, and the run's own S3 user (when none is stored), removed with its data
            # at the run's end.
            journal = open_journal(self.store, run_id, {'what': 'run', 'run_id': run_id})
            creds = stored or self._own_user(journal, self.make_applier(), run_id)
            # Interleaved: a round per repeat, each variant applied anew in each (A B A B).
            order = run_order(profile)
            kept: Dict[Tuple[int, str], List[WorkloadResult]] = {}
            self._in_place = InPlace()
            record.osd_restarts = 0
            for position, (_, index) in enumerate(order):
                if self._abort.is_set():
                    break
                variant = profile.variants[index]
                if index == len(record.variants):
                    record.variants.append(VariantResult(
                        name=variant.name, settings=masked_settings(variant.settings),
                        changes=[]))
                entry = record.variants[index]
                if entry.error:
                    continue  # it could not be applied or measured: not again
                done_s = self._variant(
                    record, index, profile, journal, creds, kept, done_s, total_s, force,
                    restart_rgw,
                    following=functools.partial(following_settings, order, position, profile,
                                                record))
            failures = run_failures(record)
            record.state = ABORTED if self._abort.is_set() else (
                RUN_FAILED if failures else COMPLETE)
            if record.state == RUN_FAILED:
                record.error = '; '.join(failures)
        except Refused:
            record.state = RUN_FAILED
            record.error = '; '.join(run_failures(record))
        except Exception as e:
            self.log.exception('run %s failed', run_id)
            record.state, record.error = RUN_FAILED, '%s: %s' % (type(e).__name__, e)
        finally:
            try:
                self._release_prefills(creds)
                self._put_back_run(record, journal)
                self._finish(record)
            finally:
                # Whatever finishing the record did, the engine is free again.
                with self._lock:
                    self._record = None
                    self._agent_run = None

    def _variant(self, record: Run, index: int, profile: Profile, journal: Journal,
                 creds: Dict[str, str], kept: Dict[Tuple[int, str], List[WorkloadResult]],
                 done_s: float, total_s: float, force: bool = False,
                 restart_rgw: bool = False,
                 following: Callable[[], Optional[Dict[str, Any]]] = lambda: None) -> float:
        """One application of a variant: its settings put in place (in the run's
        journal; with `restart_rgw`, RGW restarted even if they leave it running), its
        workloads measured (every repeat, or one in a round of an interleaved run), the
        settings the next application (`following`: its settings) does not keep put back;
        all of them after a failure or an abort, or when none follows."""
        run_id = str(record.run_id)
        variant, entry = profile.variants[index], record.variants[index]
        repeats = 1 if profile.interleaved() else profile.repeats
        applier = self.make_applier()
        restarted = applier.osd_restarts()
        changed: List[str] = []
        refused = False
        try:
            record.current = Position(variant=variant.name)
            self._progress(record, 'variant %s: applying its settings' % variant.name,
                           done_s, total_s, changed)
            plans = applier.plan(variant.settings, restart_rgw, force=force)
            entry.settings = masked_settings(as_put_in_place(variant.settings, plans))
            changed = [c.summary for p in plans for c in p.changes]
            first_step = len(journal.steps())   # the steps from here on are this variant's
            try:
                client = applier.targets(profile.target, applier.apply(
                    journal, plans, progress=lambda line: None,
                    given_up=self._abort.is_set))
            finally:
                for step in journal.steps()[first_step:]:
                    self._in_place.made_by[step.number] = index
                self._in_place.now(plans)
            entry.client = dump(client.shown())
            rgw_daemons = self.rgw_daemons() if any(
                w.concurrency_per_rgw for w in profile.workloads) else 1
            for workload in profile.workloads:
                if self._abort.is_set():
                    break
                workload = workload.for_rgws(rgw_daemons, MAX_CONCURRENCY)
                record.current = Position(variant=variant.name, workload=workload.name)
                self._progress(record, 'variant %s, workload %s' % (
                    variant.name, workload.name), done_s, total_s, changed)
                # Placed now: a variant may have added RGW hosts (and so agents).
                launcher = self.make_launcher(profile.placement or None)
                agents = len(loading_agents(launcher))
                workload, prefill_s = self._working_set(workload, agents,
                                                        held_at_once(profile))
                if self.checks is not None and record.findings is not None:
                    self.checks.between(record.findings, variant=variant.name,
                                        workload=workload.name, force=force,
                                        planned=workload, agents=agents,
                                        targets=len(client.targets))
                during: List[Finding] = []
                try:
                    measured = self._workload(run_id, index, workload, profile, creds, client,
                                              repeats,
                                              kept.setdefault((index, workload.name), []),
                                              during, launcher, prefill_s,
                                              storage_of(variant, index))
                    during += host_findings(measured)
                finally:  # also what a workload that was refused found
                    if record.findings is not None:
                        record.findings += [replace(f, variant=variant.name,
                                                    workload=workload.name) for f in during]
                read = self._objects_read.get(workload.name)
                if prefill_s and read is not None and read < (workload.objects or 0) and \
                        self.checks is not None and record.findings is not None:
                    # Its prefill's time ran out: are the objects it wrote out of the caches?
                    record.findings += [
                        replace(f, variant=variant.name, workload=workload.name)
                        for f in self.checks.working_set(replace(workload, objects=read),
                                                         agents)]
                entry.workloads = [w for w in entry.workloads if w.name != workload.name]
                entry.workloads.append(measured)
                done_s += (workload.duration_s + workload.warmup_s) * repeats
                self._compare_so_far(record)
                self.results.save(record)
        except Refused as e:
            # A refusal while the run goes (a HEALTH_ERR before a workload, agents' clocks
            # too far apart) ends the run, once its settings are back.
            entry.error = str(e)
            refused = True
            raise
        except Exception as e:
            self.log.exception('run %s: variant %s failed', run_id, variant.name)
            entry.error = '%s: %s' % (type(e).__name__, e)
        finally:
            self._put_back_variant(record, index, journal, applier, changed, done_s, total_s,
                                   None if refused or entry.error or self._abort.is_set()
                                   else following())
            record.osd_restarts = (record.osd_restarts or 0) + \
                applier.osd_restarts() - restarted
            self.results.save(record)
        return done_s

    def _put_back_variant(self, record: Run, index: int, journal: Journal,
                          applier: SettingsApplier, changed: List[str], done_s: float,
                          total_s: float, following: Optional[Dict[str, Any]]) -> None:
        """After a variant: the settings `following` (the next application's) does not
        keep put back, or every one (None); raises when some could not be."""
        variant = record.variants[index].name
        open_before = {s.number for s in journal.steps() if s.state not in FINISHED}
        if following is None:
            self._progress(record, 'variant %s: putting its settings back' % variant,
                           done_s, total_s, changed)
            steps = applier.revert(journal, keep=(USER,), close=False)
            self._in_place.plans = []
        else:
            carry = applier.carry(self._in_place.plans, following)
            self._progress(record, 'variant %s: putting back what the next variant does not '
                           'keep%s' % (variant, ' (keeping %s)' % ', '.join(carry.kept)
                                       if carry.kept else ''), done_s, total_s, changed)
            steps = applier.put_back_leaving(journal, carry, keep=(USER,))
            self._in_place.plans = [p for p in self._in_place.plans
                                    if p.setting in carry.kept]
        self._changes_by_variant(record, steps, index)
        if any(s.error for s in steps if s.number in open_before):
            raise RuntimeError('the settings of variant %s could not all be put '
                               'back; the module tries again when it starts' % variant)

    def _changes_by_variant(self, record: Run, steps: List[Step], index: int) -> None:
        """Each variant's changes in the record as the journal has them now; a step made
        while putting back (allowing a pool's removal, a restart kept owed) is the
        variant's at whose end it was made."""
        made_by = self._in_place.made_by
        for step in steps:
            if step.kind != USER:
                made_by.setdefault(step.number, index)
        for number, entry in enumerate(record.variants):
            entry.changes = changes_of([s for s in steps if made_by.get(s.number) == number])

    def _release_prefills(self, creds: Dict[str, str], key: Optional[PrefillKey] = None,
                          through: Optional[ClientSide] = None) -> None:
        """The buckets of the prefill of `key`, once its last reader ended, removed
        `through` that reader's endpoints; without a key, of every prefill left (at the
        run's end: after an abort or a failure), through the RGW daemons there are now
        (the ingress or the TLS of the variant that wrote them is gone). With a temporary
        user, what could not be goes with the user (the journal's last undo)."""
        for job in self._prefills.done_with(key):
            cleaned: Dict[str, Any] = {}
            if creds:
                try:
                    now = through or self.make_applier().targets(Target(kind=RGW),
                                                                 ClientSide())
                    cleaned = self.agents.clean_up(
                        replace(job, endpoints=list(now.targets), endpoint=now.targets[0],
                                ca_bundle=None), now.ca_bundle or creds.get('ca_bundle'),
                        aborted=False)
                except Exception as e:
                    self.log.exception('removing buckets %s failed', job.bucket_prefix)
                    cleaned = {'error': '%s: %s' % (type(e).__name__, e)}
            self.leftovers.release(job.bucket_prefix,
                                   {} if creds.get('temporary_user') else cleaned)

    def _put_back_run(self, record: Run, journal: Optional[Journal]) -> None:
        """At the run's end, what its journal still holds (its own S3 user, with its
        buckets; a variant's settings it could not put back) is put back and the journal
        closed; what cannot be is tried again when the module starts."""
        if journal is None:
            return
        try:
            applier = self.make_applier()
            restarted = applier.osd_restarts()
            steps = applier.revert(journal)
            record.osd_restarts = (record.osd_restarts or 0) + \
                applier.osd_restarts() - restarted
            if any(s.kind != USER for s in steps):
                self._changes_by_variant(record, steps, len(record.variants) - 1)
            record.changes = changes_of([s for s in steps if s.kind == USER])
            left = ['%s %s: %s' % (s.kind, s.target, s.error) for s in steps
                    if s.state not in FINISHED]
            kept = ['%s %s: %s' % (s.kind, s.target, s.error) for s in steps
                    if s.state == LEFT]
            if kept and record.findings is not None:
                record.findings.append(Finding(
                    id='changed-during-run', level=Level.info,
                    summary='someone else changed a target of the run while it ran: it was '
                            'left as they made it, not put back',
                    evidence=tuple(kept),
                    fix='ceph rgwbench settings findings; ceph rgwbench settings acknowledge'))
        except Exception as e:
            self.log.exception('run %s: putting its changes back failed', record.run_id)
            left = ['%s: %s' % (type(e).__name__, e)]
        if left:
            record.state = RUN_FAILED
            record.error = '; '.join(filter(None, [
                record.error, 'not put back (the module tries again when it starts, or '
                '`ceph rgwbench settings revert` now): %s' % '; '.join(left)]))
            try:
                self.gave_up(journal, 1)
            except Exception:
                self.log.exception('run %s: reporting what was not put back failed',
                                   record.run_id)

    def _compare_so_far(self, record: Run) -> None:
        """What the tables show of a running run: the comparison of what it measured so far
        (its end computes it again, and says if that fails)."""
        try:
            record.comparison = comparison(record, self.calibrations.floors())
        except Exception:
            self.log.exception('run %s: the comparison so far failed', record.run_id)

    def _finish(self, record: Run) -> None:
        record.finished = self.clock()   # before the calibration, which stores when it ended
        try:
            record.comparison = comparison(record, self.calibrations.floors())
            if record.profile == CALIBRATE and record.state == COMPLETE:
                found = calibrate(record)
                if found is not None:
                    record.calibration = found
                    self.calibrations.save(found)
        except Exception as e:
            self.log.exception('run %s: the comparison failed', record.run_id)
            record.error = '; '.join(filter(None, [record.error, 'the comparison failed: %s: %s'
                                                   % (type(e).__name__, e)]))
        record.progress, record.current = record.state, None
        record.fraction = 1.0
        try:
            self.results.save(record)
        finally:
            self.events.finished(str(record.run_id), str(record.state), record.error or '')

    @staticmethod
    def _own_user(journal: Journal, applier: SettingsApplier, run_id: str) -> Dict[str, str]:
        """A temporary S3 user's keys, in the run's journal (its undo removes the user)."""
        keys = create_user(journal, applier.ctx.cluster, run_id)
        return dict(keys.credentials(), temporary_user=keys.uid)

    def _job(self, workload: Workload, creds: Dict[str, str], client: ClientSide, run_id: str,
             variant: int, prefill_s: float) -> Job:
        return make_job(workload, creds=creds, endpoints=client.targets,
                        bucket_prefix='rgwbench-%s-%d' % (run_id, variant),
                        run_tag='%s-%d' % (run_id, variant), sse=client.sse,
                        prefill_s=prefill_s, placement=client.placement)

    def _working_set(self, workload: Workload, agents: int,
                     held: int = 1) -> Tuple[Workload, float]:
        """The workload as it runs on `agents` agents, and how long its prefill may take
        (0: no bound). A GET workload that names no `objects` reads a working set sized
        from the caches, its prefill bounded in time; once measured, every later repeat
        and variant reads as many objects as that prefill wrote, so that they compare
        like with like."""
        if workload.objects is not None or self.checks is None:
            return workload, 0.0
        read = self._objects_read.get(workload.name)
        if read is not None:
            return replace(workload, objects=read), 0.0
        return self.checks.as_run(workload, agents, held)

    def _workload(self, run_id: str, variant: int, workload: Workload, profile: Profile,
                  creds: Dict[str, str], client: ClientSide, count: int,
                  repeats: List[WorkloadResult], during: List[Finding],
                  first: AgentLauncher, prefill_s: float = 0.0,
                  storage: str = '') -> WorkloadResult:
        """``count`` more repeats of a workload, added to ``repeats`` (those of earlier
        rounds of an interleaved run); the workload's entry from all of them. What its
        repeats saw while they ran goes to ``during``. `first` launches the first repeat's
        agents; each further repeat has launchers of its own. A workload that only reads
        reads the run's prefill for its `storage` (see prefills.py), written once."""
        job = self._job(workload, creds, client, run_id, variant, prefill_s)
        reuse = self._prefills.key(workload, storage, loading_agents(first)) \
            if storage and reads_only(workload) else None
        if reuse is not None:
            job = replace(job, bucket_prefix=self._prefills.bucket_prefix(reuse))
            found = self._prefills.get(reuse)
            if found is not None:
                job = replace(job, objects=int(found.objects or 0), prefill=False, prefill_s=0.0)
        ca_pem = client.ca_bundle or creds.get('ca_bundle')
        problems: List[str] = []
        stopped: Optional[str] = None
        prefilled_by: Optional[str] = None
        try:
            for repeat in range(count):
                if self._abort.is_set():
                    break
                launcher = first if repeat == 0 else \
                    self.make_launcher(profile.placement or None)
                self.leftovers.write({'run_id': run_id, 'temporary_user': creds.get(
                    'temporary_user')}, launcher, job, ca_pem)
                if reuse is not None:
                    prefilled_by = self._prefills.made(reuse, job,
                                                       profile.variants[variant].name)
                summary = self.agents.run_once(job, launcher, ca_pem=ca_pem,
                                               leftovers=self.leftovers, watch=self._watch,
                                               aborted=self._abort.is_set,
                                               keep_buckets=reuse is not None)
                problems += agents_failed(summary)
                during += [replace(f, evidence=('repeat %d of %d' % (repeat + 1, count),)
                                   + f.evidence) if count > 1 else f
                           for f in summary.findings]
                if summary.refused:
                    raise Refused(summary.refused, errno.EBUSY)
                if summary.result is not None:
                    repeats.append(WorkloadResult.from_result(summary.result))
                    written = repeats[-1].objects
                    if prefill_s and written:   # what its time allowed: the working set now
                        self._objects_read[workload.name] = written
                        job = replace(job, objects=written, prefill_s=0.0)
                    if reuse is not None and written and self._prefills.get(reuse) is None:
                        self._prefills.read(reuse, written)   # read from now on, unwritten
                        job = replace(job, objects=written, prefill=False, prefill_s=0.0)
                if summary.stopped:
                    stopped = summary.stopped
                    break  # another repeat would write again what the guard stopped
            return WorkloadResult.measured(
                name=workload.name, op=workload.op, object_size=workload.size,
                concurrency=workload.concurrency,   # the total, split over the agents
                duration_s=workload.duration_s,
                merged=merge_repeats(repeats) if repeats else None,
                error='; '.join(problems) or (None if repeats else 'no result'),
                stopped=stopped, prefilled_by=prefilled_by)
        finally:
            if reuse is not None and not read_later(storage, variant, profile):
                self._release_prefills(creds, reuse, through=client)   # its last reader

    def _watch(self, agent_run: Optional[AgentRun]) -> None:
        with self._lock:
            self._agent_run = agent_run

    # -- after a failover -----------------------------------------------------------
    def recover(self, remove_service: Callable[[str], Any]) -> None:
        """At module start: end what a run cut off by a mgr restart left, keep it as failed.

        Its settings are put back first, so that the record says what is true;
        the settings' own recovery retries what could not be.
        """
        self.leftovers.remove(remove_service, self.credentials.get(), self.log)
        with self._lock:  # a run's first save (in start) is not under way meanwhile
            swept = self.results.sweep()
        for run_id in swept:
            self.log.warning('removed the partial result of %s (its first save was cut off)',
                             run_id)
        put_back = self._put_back_cut_off()
        for summary in self.results.summaries():
            if summary.state != RUNNING:
                continue
            try:
                record = self.results.load(str(summary.run_id))
            except NotFound:
                continue
            record.state = RUN_FAILED
            record.error = 'the mgr restarted during the run; what was measured is kept ' + (
                'and its settings were put back' if put_back else 'and its settings are '
                'being put back (see `ceph rgwbench settings show`)')
            self._finish(record)

    def _put_back_cut_off(self) -> bool:
        """Put back the changes of a run's unfinished journal; False when some are left."""
        journal = Journal.unfinished(self.store)
        if journal is None or journal.info().get('about', {}).get('what') != 'run':
            return True
        try:
            journal.claim()
            steps = self.make_applier().revert(journal)
        except Exception:
            self.log.exception('putting back journal %s failed', journal.journal_id)
            return False
        return not any(s.error for s in steps)
