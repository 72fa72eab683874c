"""One workload on agents: what `ceph rgwbench load` and a run's workloads share.

A profile's `Workload` becomes the engine's job here, in one place. Running
it once goes the same way for a load and for each repeat of a run: what it
would leave behind (its agents, its buckets) is written down before anything
is made, the agents run the job, and its buckets and objects are removed
from the mgr afterwards, however the agents ended.
"""
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from .coordinator import DEADMAN_S, AgentRun, AgentRunSummary
from .launchers import AgentLauncher, remove_leftovers
from ..checks.capacity_guard import (CapacityCheck, CapacityWatch, in_flight_bytes, prefill_bytes,
                                     writes, writes_while_measured)
from ..checks.during import PgWatch
from ..checks.reshard_watch import ReshardWatch
from ..checks.measured import measured_findings
from ..errors import InvalidInput
from ..cluster.kvstore import SecretStore, set_kept
from ..loadgen import prepare
from ..loadgen.errors import LoadgenError
from ..loadgen.workload import Job
from ..certs.memory_files import PemFiles
from ..profiles import Workload
from ..cluster.rgw_admin import BucketAdmin
from ..cluster.sampled_daemons import ServerDaemons

KEY_PREFIX = 'rgwbench/'


def new_id() -> str:
    """An id for a load or a run: when it started, and six hex digits of chance."""
    return time.strftime('%Y%m%d-%H%M%S-') + uuid.uuid4().hex[:6]


def make_job(workload: Workload, *, creds: Dict[str, str], endpoints: Sequence[str],
             bucket_prefix: str, run_tag: str,
             sse: Optional[Dict[str, Any]] = None, prefill_s: float = 0.0,
             placement: Optional[str] = None) -> Job:
    """The engine's job for a workload and its targets, checked by the engine's own rules;
    its prefill takes at most `prefill_s` (0: no bound); its buckets under the placement
    target `placement` (None: the default)."""
    job = workload.job(endpoints=list(endpoints), access_key=creds['access_key'],
                       secret_key=creds['secret_key'], bucket_prefix=bucket_prefix,
                       key_prefix=KEY_PREFIX, run_tag=run_tag, prefill_s=prefill_s,
                       placement=placement, **(sse or {}))
    try:
        job.validate()
    except LoadgenError as e:
        raise InvalidInput('workload %s: %s' % (workload.name, e))
    return job


def remove_buckets(job: Job, ca_pem: Optional[str] = None, *,
                   admin: Optional[BucketAdmin] = None) -> Dict[str, Any]:
    """Delete a job's objects and buckets from the mgr; the CA comes as PEM text.

    With `admin`, each bucket goes with its objects through radosgw-admin,
    their space freed at once (see cluster/rgw_admin.py); what it could not remove is
    deleted over S3 (`admin_error` says why), its space freed by RGW's GC later.

    A job that wrote with SSE-S3 is deleted over S3 first: RGW removes a bucket's key
    from its KMS when it deletes the bucket over S3, `radosgw-admin bucket rm` leaves
    the key there (seen with OpenBao: a transit key per bucket left after each run).
    What S3 leaves (no RGW answers) goes through radosgw-admin, its key left.

    Over S3, each of the job's endpoints is tried in turn: the RGW the load
    went to first may be the one that just died. A job carries the path of a
    CA file (as agents write it); the module has the PEM, so it goes to a
    private temporary file for the clean-up.
    """
    if admin is not None and job.sse_s3:
        try:
            done = remove_over_s3(job, ca_pem)
            if cleanup_problem(done) is None:
                return done
        except (LoadgenError, OSError):
            pass
    by_admin = {'objects_deleted': 0, 'buckets_deleted': 0}
    admin_error: Optional[str] = None
    if admin is not None:
        try:
            for bucket in job.bucket_names:
                objects = admin.remove_bucket(bucket)
                if objects is not None:
                    by_admin['objects_deleted'] += objects
                    by_admin['buckets_deleted'] += 1
            return dict(by_admin, space_freed='at once')
        except Exception as e:
            admin_error = str(e)
    done = remove_over_s3(job, ca_pem)
    if admin_error is not None:
        for figure, count in by_admin.items():
            done[figure] = int(done.get(figure) or 0) + count
        done['admin_error'] = admin_error
    return done


def remove_over_s3(job: Job, ca_pem: Optional[str]) -> Dict[str, Any]:
    """Delete a job's objects and buckets over S3, through the first RGW that answers."""
    endpoints = job.targets
    failed: List[str] = []
    with PemFiles() as pems:
        ca_bundle = pems.path('ca', ca_pem) if ca_pem else None
        for endpoint in endpoints:
            try:
                return dict(prepare.cleanup(replace(
                    job, endpoint=endpoint, endpoints=[endpoint], ca_bundle=ca_bundle)))
            except (LoadgenError, OSError) as e:
                failed.append(str(e))
    raise LoadgenError('; '.join(failed))


# How a job's buckets are removed: (the job, its CA as PEM) -> what the clean-up did.
RemoveBuckets = Callable[[Job, Optional[str]], Dict[str, Any]]


def cleanup_problem(done: Dict[str, Any]) -> Optional[str]:
    """Why a clean-up's result leaves buckets behind, if it does."""
    if done.get('error'):
        return str(done['error'])
    if done.get('buckets_left'):
        return 'buckets not empty: %s' % ', '.join(done['buckets_left'])
    return None


@dataclass
class LeftBehind:
    """One workload's leftovers a module found, and what removing them could not do."""
    record: Dict[str, Any]
    errors: List[str]
    found: float        # when a module first found them (the workload ended then at the latest)
    # The workload ended by itself and only its clean-up was left (not a mgr restart).
    ended: bool = False


class Leftovers:
    """What a workload on agents would leave if the mgr vanished: written down before it starts.

    Its agents (a local process's folder and host, or the agents' service) and
    its buckets, one record per workload under `key`; cleared when the workload
    ends, or removed by `remove` when a module finds them (a failover or crash
    cut the workload off). A record stays until everything in it is removed:
    just after a failover the orchestrator may not answer yet, and a local
    agent on another host cannot be reached from this one (its dead-man switch
    ends it); the module's serve loop calls `remove` again now and then.
    """

    def __init__(self, store: SecretStore, key: str, *,
                 clock: Callable[[], float] = time.time,
                 remove_buckets: RemoveBuckets = remove_buckets) -> None:
        self.store = store
        self.key = key
        self.clock = clock
        self.remove_buckets = remove_buckets
        # This module's own workload in progress, never removed from under it.
        self._current: Optional[str] = None
        # Buckets a run keeps for its later variants (`ended(held=True)`), until
        # `release`: a new mgr has none held, and removes them.
        self._held: Set[str] = set()

    def write(self, record: Dict[str, Any], launcher: AgentLauncher,
              job: Job, ca_pem: Optional[str] = None) -> None:
        key = '%s/%s' % (self.key, job.bucket_prefix)
        self._current = key  # before the store has it: `remove` lists, then skips it
        # No keys: the stored credentials are read again when cleaning up. Checked
        # (kvstore.set_kept): a record the mon refuses stops the workload before its
        # agents and buckets exist. Later updates may go unchecked: a refused one
        # leaves this record, whose clean-up is then only tried again.
        set_kept(self.store, key, json.dumps({
            'record': record, 'agents': launcher.leftovers(), 'endpoint': job.targets[0],
            'endpoints': job.targets, 'ca_pem': ca_pem, 'bucket_prefix': job.bucket_prefix,
            'buckets': job.buckets, 'key_prefix': job.key_prefix}))

    def clear(self) -> None:
        if self._current is not None:
            self.store.set_store(self._current, None)
            self._current = None

    def ended(self, cleaned: Dict[str, Any], agents_removed: bool = False,
              held: bool = False) -> None:
        """The workload ended: its record goes, or stays for `remove` if buckets were left.

        A clean-up that could not reach any RGW (one was just killed) or found a
        bucket still filling is tried again by the serve loop, never forgotten.
        `agents_removed`: the agents' run removed its agents itself, so the record
        that stays is of buckets only (a mgr on another host can finish it).
        `held`: its buckets were kept for later workloads of the run: the record
        stays, and `remove` leaves it until `release`.
        """
        if held and self._current is not None:
            self._held.add(self._current)
            if agents_removed:
                stored = self.store.get_store(self._current)
                if stored:
                    self.store.set_store(self._current, json.dumps(
                        dict(json.loads(stored), agents={})))
            self._current = None
            return
        problem = cleanup_problem(cleaned)
        if self._current is None or (problem is None and agents_removed):
            self.clear()
            return
        stored = self.store.get_store(self._current)
        if stored:
            left = json.loads(stored)
            # Agents whose removal failed (the orchestrator did not answer) stay
            # written down with the record, whatever became of the buckets.
            left.update(ended=True, errors=[problem or 'its agents were not removed'])
            if agents_removed:
                left['agents'] = {}
            if problem is None:
                left['buckets_removed'] = True
            self.store.set_store(self._current, json.dumps(left))
        self._current = None

    def release(self, bucket_prefix: str, cleaned: Dict[str, Any]) -> None:
        """The run is done with held buckets: their record goes once `cleaned` (their
        clean-up) left nothing and no agents of theirs are owed, else it stays for
        `remove` with the reason."""
        key = '%s/%s' % (self.key, bucket_prefix)
        self._held.discard(key)
        problem = cleanup_problem(cleaned)
        stored = self.store.get_store(key)
        left = json.loads(stored) if stored else None
        if left is None or (problem is None and not left.get('agents')):
            self.store.set_store(key, None)
            return
        # Agents whose removal failed while the buckets were held are still owed.
        errors = [problem] if problem else []
        if left.get('agents'):
            errors.append('its agents were not removed')
        if problem is None:
            left['buckets_removed'] = True
        left.update(ended=True, errors=errors)
        self.store.set_store(key, json.dumps(left))

    def _found(self) -> List[Tuple[str, Dict[str, Any]]]:
        stored = self.store.get_store_prefix(self.key)
        current = self._current
        return [(key, json.loads(value)) for key, value in sorted(stored.items())
                if value and key != current and key not in self._held and
                (key == self.key or key.startswith(self.key + '/'))]

    def pending(self) -> List[Dict[str, Any]]:
        """What is written down and not yet removed, other than a workload in progress."""
        return [{'bucket_prefix': left['bucket_prefix'], 'agents': left['agents'],
                 'errors': left.get('errors') or [],
                 # it ended by itself, its clean-up still owed; else a mgr restart cut it off
                 'ended': bool(left.get('ended'))} for _, left in self._found()]

    def remove(self, remove_service: Callable[[str], Any], creds: Optional[Dict[str, str]],
               log: Any) -> List[LeftBehind]:
        """Remove what is written down, if anything; each record with what could not be done."""
        return [self._remove_one(key, left, remove_service, creds, log)
                for key, left in self._found()]

    def _remove_one(self, key: str, left: Dict[str, Any],
                    remove_service: Callable[[str], Any], creds: Optional[Dict[str, str]],
                    log: Any) -> LeftBehind:
        first = 'found' not in left
        left.setdefault('found', self.clock())
        (log.warning if first else log.info)(
            'removing what a workload on agents left when the mgr restarted: %s',
            left['bucket_prefix'])
        errors = []
        if left['agents']:
            try:
                remove_leftovers(left['agents'], remove_service)
                left['agents'] = {}
            except Exception as e:
                errors.append('agents: %s' % e)
        if not left.get('buckets_removed'):
            problem = self._remove_buckets(left, creds, log)
            if problem:
                errors.append(problem)
            else:
                left['buckets_removed'] = True
        if errors:
            left['errors'] = errors
            self.store.set_store(key, json.dumps(left))
            (log.warning if first else log.info)(
                'still left by %s (tried again later): %s', left['bucket_prefix'],
                '; '.join(errors))
        else:
            self.store.set_store(key, None)
        return LeftBehind(left['record'], errors, float(left['found']), bool(left.get('ended')))

    def _remove_buckets(self, left: Dict[str, Any], creds: Optional[Dict[str, str]],
                        log: Any) -> Optional[str]:
        owner = left['record'].get('temporary_user')
        if owner:
            # The journal's undo removes that user with every bucket and object it has.
            log.info('buckets %s* go with the temporary S3 user %s', left['bucket_prefix'],
                     owner)
            return None
        if not creds:
            return 'no stored credentials to remove buckets %s* with' % left['bucket_prefix']
        job = Job(endpoint=left['endpoint'], endpoints=left.get('endpoints') or [],
                  access_key=creds['access_key'],
                  secret_key=creds['secret_key'], bucket_prefix=left['bucket_prefix'],
                  buckets=left['buckets'], key_prefix=left['key_prefix'])
        try:
            left['record']['cleanup'] = self.remove_buckets(
                job, left.get('ca_pem') or creds.get('ca_bundle'))
        except Exception as e:
            return 'buckets: %s' % e
        return None


@dataclass(frozen=True)
class AgentWorkloads:
    """Runs a job once on a set of agents and removes what it wrote, for a load or a run:
    the collaborators both share (a run's keeps its objects when the module says so)."""
    make_channel: Callable[[], Any]
    server_daemons: Callable[[], ServerDaemons]
    log: Any
    keep_objects: Callable[[], bool] = lambda: False
    # A fresh capacity check for each workload that writes (None: unguarded).
    # (Made with the bytes its requests in flight and its prefill can write.)
    # (in_flight_bytes, prefill_bytes, open_ended: whether it writes while measured)
    new_capacity_check: Callable[[int, int, bool], Optional[CapacityCheck]] = \
        lambda in_flight, prefill, open_ended: None
    # The most engine processes an agent runs when a job leaves it to its cores.
    processes_max: Callable[[], int] = lambda: 0
    # A watch of PGs that scrub or recover, for each workload (None: unwatched).
    new_pg_watch: Callable[[], Optional[PgWatch]] = lambda: None
    settle_after_abort_s: float = 3.0
    # How long agents go on without an answer from the mgr (their dead-man switch).
    deadman_s: Callable[[], float] = lambda: DEADMAN_S
    # Where each agent may enrol from (agents/sources.py; None: anywhere).
    agent_sources: Callable[[List[str]], Optional[Mapping[str, FrozenSet[str]]]] = \
        lambda agents: None
    # Removes buckets with their objects at once (None: over S3 only, the space
    # freed by RGW's GC hours later).
    bucket_admin: Optional[BucketAdmin] = None
    # A watch of a writing job's buckets that RGW reshards, by their names (None:
    # unwatched).
    new_reshard_watch: Callable[[List[str]], Optional[ReshardWatch]] = lambda buckets: None

    def remove_buckets(self, job: Job, ca_pem: Optional[str]) -> Dict[str, Any]:
        return remove_buckets(job, ca_pem, admin=self.bucket_admin)

    def run_once(self, job: Job, launcher: AgentLauncher, *,
                 ca_pem: Optional[str], leftovers: Leftovers,
                 watch: Callable[[Optional[AgentRun]], None],
                 aborted: Callable[[], bool] = lambda: False,
                 cleaned: Optional[Dict[str, Any]] = None,
                 keep_buckets: bool = False) -> AgentRunSummary:
        """The agents' summary; leftovers are written down already, and cleared here
        (`keep_buckets`: the job's buckets stay for later workloads, held in leftovers).

        `watch` is told the agents' run while it goes (for live figures and an
        abort), and None once it is over. What the clean-up did goes into
        `cleaned`, also when the agents failed. A job that writes stops early
        when the capacity guard says so (`stopped` in the summary says why).
        `findings` in the summary: the agents' clocks that disagree, PGs seen
        scrubbing or recovering in the measured window, too many errors, agents
        that were busy (Finding objects). `refused` in the summary: why the
        load was not started (the agents' clocks too far apart), if it was not.
        """
        agent_run: Optional[AgentRun] = None
        try:
            agent_run = AgentRun(job, launcher, ca_bundle=ca_pem,
                                 server_daemons=self.server_daemons(),
                                 processes_max=self.processes_max(),
                                 deadman_s=self.deadman_s(),
                                 sources=self.agent_sources(launcher.agent_ids()))
            watch(agent_run)
            measured = writes_while_measured(job)
            check = self.new_capacity_check(in_flight_bytes(job), prefill_bytes(job),
                                            measured) if writes(job) else None
            too_full = check.before_start() if check is not None else None
            if too_full:
                # Its agents are never launched: nothing it would write is begun.
                agent_run.stop_early('capacity: not started: ' + too_full)
                self.log.warning('workload %s not started: capacity: %s',
                                 job.run_tag or job.bucket_prefix, too_full)
                return agent_run.summary()
            pgs = self.new_pg_watch()
            reshards = self.new_reshard_watch(job.bucket_names) if writes(job) else None
            with contextlib.ExitStack() as during:
                if check is not None:
                    # A reading workload writes only its prefill, before the agents start.
                    during.enter_context(CapacityWatch(
                        check.problem, agent_run.stop_early, log=self.log,
                        watching=lambda: measured or agent_run.start_at is None))
                if pgs is not None:
                    during.enter_context(pgs)
                if reshards is not None:
                    during.enter_context(reshards)
                summary = agent_run.run(self.make_channel())
            during_load = [] if pgs is None or summary.start_at is None else \
                pgs.findings(summary.start_at + job.warmup_s, float(job.duration_s or 0))
            summary.findings = agent_run.findings() + during_load + \
                measured_findings(agent_run.results, job) + \
                (reshards.findings(None if summary.start_at is None else
                                   summary.start_at + job.warmup_s, float(job.duration_s or 0))
                 if reshards is not None else [])
            if summary.stopped:
                self.log.warning('workload %s stopped early: %s',
                                 job.run_tag or job.bucket_prefix, summary.stopped)
        finally:
            watch(None)
            done = {'kept': 'for the run'} if keep_buckets else \
                self.clean_up(job, ca_pem, aborted())
            if cleaned is not None:
                cleaned.update(done)
            # Removed by the agents' run itself, or never launched: nothing of them is owed.
            leftovers.ended(done, agents_removed=agent_run is None or not agent_run.agents_left(),
                            held=keep_buckets)
        return summary

    def clean_up(self, job: Job, ca_pem: Optional[str],
                 aborted: bool) -> Dict[str, Any]:
        if self.keep_objects():
            self.log.info('keeping buckets %s*', job.bucket_prefix)
            return {'kept': True}
        if aborted:
            # Requests the agents sent before they were stopped (a bucket created,
            # an object written) land first.
            time.sleep(self.settle_after_abort_s)
        try:
            done = self.remove_buckets(job, ca_pem)
        except Exception as e:
            self.log.warning('clean-up of %s failed: %s', job.bucket_prefix, e)
            return {'error': str(e)}
        if done.get('buckets_left'):
            self.log.warning('clean-up: buckets %s are not empty and stay',
                             ', '.join(done['buckets_left']))
        return done
