"""`ceph rgwbench run`: every variant of a profile applied, measured and put back.

For each variant, in the profile's order: its settings are applied through
a journal of their own (see settings/), every workload runs on the agents
(each repeat a fresh set of agents), and the settings are put back before
the next variant, so that each variant starts from the cluster as it was.
The result is saved after every workload, so that an abort, a failure or a
mgr failover keeps what was measured.
"""
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Protocol

from ..agents.channel import AgentChannel
from ..agents.coordinator import AgentRun, agents_failed
from ..agents.launchers import AgentLauncher
from ..credentials import CredentialStore
from ..errors import Busy, InvalidInput, NotFound
from ..journal import Journal, Store
from ..loadgen.errors import LoadgenError
from ..loadgen.workload import Job
from ..loads import Leftovers, remove_buckets
from ..profiles import Profile, Workload, estimate_seconds
from ..results.compare import comparison, merge_repeats
from ..results.store import ResultStore
from ..settings.applier import SettingsApplier, open_journal
from ..settings.base import ClientSide
from ..settings.session import steps_to_dicts

LEFTOVERS_KEY = 'running/leftovers'
RUNNING, COMPLETE, FAILED, ABORTED = 'running', 'complete', 'failed', 'aborted'
# What a workload entry keeps of the engine's merged result.
FIGURES = ('ops', 'bytes', 'errors', 'throughput_mib_s', 'ops_per_s', 'latency_ms', 'rgw',
           'ttfb_ms', 'client_cpu_s', 'elapsed_s', 'per_second', 'histogram', 'error_samples')


class RunEvents(Protocol):
    """What the cluster is told while a run goes (progress in `ceph -s`, a health check)."""

    def started(self, run_id: str, profile: str) -> None: ...

    def update(self, run_id: str, message: str, fraction: float,
               changed: List[str]) -> None: ...

    def finished(self, run_id: str, state: str, message: str) -> None: ...


class RunEngine:
    def __init__(self, store: Store, results: ResultStore, credentials: CredentialStore,
                 make_applier: Callable[[], SettingsApplier],
                 default_endpoint: Callable[[], str],
                 rgw_pids: Callable[[], Dict[str, List[int]]],
                 make_launcher: Callable[[Optional[List[str]]], AgentLauncher],
                 make_channel: Callable[[], AgentChannel],
                 events: RunEvents, ceph_version: Callable[[], str], log: Any,
                 keep_objects: Callable[[], bool] = lambda: False,
                 clock: Callable[[], float] = time.time,
                 settle_after_abort_s: float = 3.0) -> None:
        self.store = store
        self.results = results
        self.credentials = credentials
        self.make_applier = make_applier
        self.default_endpoint = default_endpoint
        self.rgw_pids = rgw_pids
        self.make_launcher = make_launcher
        self.make_channel = make_channel
        self.events = events
        self.ceph_version = ceph_version
        self.log = log
        self.keep_objects = keep_objects
        self.clock = clock
        self.settle_after_abort_s = settle_after_abort_s
        self.leftovers = Leftovers(store, LEFTOVERS_KEY)
        self._lock = threading.Lock()
        self._record: Optional[Dict[str, Any]] = None
        self._abort = threading.Event()
        self._agent_run: Optional[AgentRun] = None
        self._thread: Optional[threading.Thread] = None

    # -- planning -------------------------------------------------------------------
    def plan(self, profile: Profile) -> Dict[str, Any]:
        """Every step and every change a run would make; changes nothing."""
        applier = self.make_applier()
        variants = []
        for variant in profile.variants:
            plans = applier.plan(variant.settings)
            variants.append({'name': variant.name, 'baseline': variant.name == profile.baseline,
                             'settings': variant.settings,
                             'changes': [p.to_dict() for p in plans]})
        return {'profile': profile.name, 'baseline': profile.baseline,
                'estimated_s': estimate_seconds(profile), 'repeats': profile.repeats,
                'placement': profile.placement or [],
                'workloads': [w.to_dict() for w in profile.workloads],
                'variants': variants, 'problems': applier.precheck()}

    # -- running --------------------------------------------------------------------
    def active(self) -> Optional[Dict[str, Any]]:
        with self._lock:
            if self._record is None:
                return None
            active = {k: self._record.get(k) for k in (
                'run_id', 'profile', 'state', 'started', 'progress', 'fraction', 'current')}
            agent_run = self._agent_run
        active['live'] = agent_run.live_figures() if agent_run is not None else None
        return active

    def start(self, profile: Profile, force: bool = False) -> str:
        creds = self.credentials.require()
        with self._lock:
            if self._record is not None:
                raise Busy('run %s is in progress (`ceph rgwbench abort` stops it)'
                           % self._record['run_id'])
            unfinished = Journal.unfinished(self.store)
            if unfinished is not None:
                raise Busy('changes of %s are not put back yet; see `ceph rgwbench settings '
                           'show`' % unfinished.run_id)
            applier = self.make_applier()
            for variant in profile.variants:  # every variant's settings check out first
                applier.plan(variant.settings)
            problems = applier.precheck(force)
            if problems:
                raise Busy('refusing to run: %s' % '; '.join(problems))
            endpoint = self.default_endpoint()
            run_id = time.strftime('%Y%m%d-%H%M%S-') + uuid.uuid4().hex[:6]
            for workload in profile.workloads:  # and every workload makes a valid job
                self._job(workload, creds, endpoint, ClientSide(), run_id, 0)
            record: Dict[str, Any] = {
                'run_id': run_id, 'profile': profile.name, 'state': RUNNING,
                'ceph_version': self.ceph_version(), 'started': self.clock(),
                'finished': None, 'baseline': profile.baseline, 'error': None,
                'definition': profile.to_dict(), 'variants': [], 'comparison': [],
                'progress': 'starting', 'fraction': 0.0, 'current': None}
            self._record = record
            self._abort.clear()
            self.results.save(record)
        self._thread = threading.Thread(target=self._run, args=(record, profile, creds),
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
            return str(self._record['run_id'])

    def wait(self, timeout: Optional[float] = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _progress(self, record: Dict[str, Any], message: str, done_s: float,
                  total_s: float, changed: List[str]) -> None:
        record['progress'] = message
        record['fraction'] = round(min(0.99, done_s / max(total_s, 1.0)), 3)
        self.events.update(record['run_id'], message, record['fraction'], changed)

    def _run(self, record: Dict[str, Any], profile: Profile, creds: Dict[str, str]) -> None:
        run_id = record['run_id']
        total_s, done_s = estimate_seconds(profile), 0.0
        self.events.started(run_id, profile.name)
        try:
            for index, variant in enumerate(profile.variants):
                if self._abort.is_set():
                    break
                entry: Dict[str, Any] = {'name': variant.name, 'settings': variant.settings,
                                         'error': None, 'workloads': [], 'changes': [],
                                         'client': None}
                record['variants'].append(entry)
                applier = self.make_applier()
                journal = open_journal(self.store, '%s-v%d' % (run_id, index), {
                    'what': 'run', 'run_id': run_id, 'variant': variant.name})
                changed: List[str] = []
                try:
                    record['current'] = {'variant': variant.name, 'workload': None}
                    self._progress(record, 'variant %s: applying its settings' % variant.name,
                                   done_s, total_s, changed)
                    plans = applier.plan(variant.settings)
                    changed = [c.summary for p in plans for c in p.changes]
                    client = applier.apply(journal, plans, progress=lambda line: None)
                    entry['client'] = client.to_dict()
                    for workload in profile.workloads:
                        if self._abort.is_set():
                            break
                        record['current'] = {'variant': variant.name,
                                             'workload': workload.name}
                        self._progress(record, 'variant %s, workload %s' % (
                            variant.name, workload.name), done_s, total_s, changed)
                        entry['workloads'].append(self._workload(
                            run_id, index, workload, profile, creds, client))
                        done_s += (workload.duration_s + workload.warmup_s) * profile.repeats
                        self.results.save(record)
                except Exception as e:
                    self.log.exception('run %s: variant %s failed', run_id, variant.name)
                    entry['error'] = '%s: %s' % (type(e).__name__, e)
                finally:
                    self._progress(record, 'variant %s: putting its settings back'
                                   % variant.name, done_s, total_s, changed)
                    steps = applier.revert(journal)
                    entry['changes'] = steps_to_dicts(steps)
                    self.results.save(record)
                    if any(s.error for s in steps):
                        raise RuntimeError('the settings of variant %s could not all be put '
                                           'back; the module tries again when it starts'
                                           % variant.name)
            record['state'] = ABORTED if self._abort.is_set() else (
                FAILED if any(v['error'] for v in record['variants']) else COMPLETE)
            if record['state'] == FAILED:
                record['error'] = '; '.join('variant %s: %s' % (v['name'], v['error'])
                                            for v in record['variants'] if v['error'])
        except Exception as e:
            self.log.exception('run %s failed', run_id)
            record['state'], record['error'] = FAILED, '%s: %s' % (type(e).__name__, e)
        finally:
            record['comparison'] = comparison(record)
            record['finished'] = self.clock()
            record['progress'], record['current'] = record['state'], None
            record['fraction'] = 1.0
            self.results.save(record)
            self.events.finished(run_id, record['state'], record.get('error') or '')
            with self._lock:
                self._record = None
                self._agent_run = None

    def _job(self, workload: Workload, creds: Dict[str, str], endpoint: str,
             client: ClientSide, run_id: str, variant: int) -> Dict[str, Any]:
        fields: Dict[str, Any] = dict(
            endpoint=client.endpoint or endpoint, access_key=creds['access_key'],
            secret_key=creds['secret_key'],
            op=workload.op, mix=dict(workload.mix or {}), size=workload.size,
            concurrency=workload.concurrency, processes=workload.processes,
            duration_s=float(workload.duration_s), warmup_s=float(workload.warmup_s),
            buckets=workload.buckets, bucket_prefix='rgwbench-%s-%d' % (run_id, variant),
            key_prefix='rgwbench/', run_tag='%s-%d' % (run_id, variant))
        fields.update(client.sse)
        job = Job(**fields)
        try:
            job.validate()
        except LoadgenError as e:
            raise InvalidInput('workload %s: %s' % (workload.name, e))
        return job.to_dict()

    def _workload(self, run_id: str, variant: int, workload: Workload, profile: Profile,
                  creds: Dict[str, str], client: ClientSide) -> Dict[str, Any]:
        job = self._job(workload, creds, self.default_endpoint(), client, run_id, variant)
        ca_pem = client.ca_bundle or creds.get('ca_bundle')
        repeats: List[Dict[str, Any]] = []
        problems: List[str] = []
        for _ in range(profile.repeats):
            if self._abort.is_set():
                break
            launcher = self.make_launcher(profile.placement or None)
            self.leftovers.write({'run_id': run_id}, launcher, job, ca_pem)
            try:
                agent_run = AgentRun(job, launcher, ca_bundle=ca_pem,
                                     rgw_pids=self.rgw_pids())
                with self._lock:
                    self._agent_run = agent_run
                summary = agent_run.run(self.make_channel())
            finally:
                with self._lock:
                    self._agent_run = None
                if self.keep_objects():
                    self.log.info('run %s: keeping buckets %s*', run_id, job['bucket_prefix'])
                else:
                    if self._abort.is_set():
                        # Requests the agents sent before they were stopped (a bucket
                        # created, an object written) land first.
                        time.sleep(self.settle_after_abort_s)
                    self._cleanup(job, ca_pem)
                self.leftovers.clear()
            problems += agents_failed(summary)
            if summary['result'] is not None:
                repeats.append({k: summary['result'][k] for k in FIGURES
                                if k in summary['result']})
        entry: Dict[str, Any] = {
            'name': workload.name, 'op': workload.op, 'object_size': workload.size,
            'concurrency': workload.concurrency * max(1, len(profile.placement or [])),
            'duration_s': workload.duration_s}
        if repeats:
            entry.update(merge_repeats(repeats))
        entry['error'] = '; '.join(problems) or (None if repeats else 'no result')
        return entry

    def _cleanup(self, job: Dict[str, Any], ca_pem: Optional[str]) -> None:
        try:
            done = remove_buckets(job, ca_pem)
        except Exception as e:
            self.log.warning('clean-up of %s failed: %s', job['bucket_prefix'], e)
            return
        if done.get('buckets_left'):
            self.log.warning('clean-up: buckets %s are not empty and stay',
                             ', '.join(done['buckets_left']))

    # -- after a failover -----------------------------------------------------------
    def recover(self, remove_service: Callable[[str], Any]) -> None:
        """At module start: end what a run cut off by a mgr restart left, keep it as failed.

        Its settings are put back by the settings' own recovery (the journals).
        """
        self.leftovers.remove(remove_service, self.credentials.get(), self.log)
        for summary in self.results.ls():
            if summary['state'] != RUNNING:
                continue
            try:
                record = self.results.load(summary['run_id'])
            except NotFound:
                continue
            record['state'] = FAILED
            record['error'] = 'the mgr restarted during the run; what was measured is kept ' \
                              'and its settings were put back'
            record['finished'] = self.clock()
            record['progress'], record['current'] = FAILED, None
            record['comparison'] = comparison(record)
            self.results.save(record)
            self.events.finished(record['run_id'], FAILED, record['error'])
