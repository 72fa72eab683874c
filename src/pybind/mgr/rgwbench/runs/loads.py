"""`ceph rgwbench load`: one workload, run now by agents, against the cluster as it is.

Nothing on the cluster changes but the buckets and objects of the load,
which are removed at its end. The result is kept in the module's store
(results.store.LoadStore).
"""
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ..agents.coordinator import AgentRun, agents_failed
from ..agents.launchers import AgentLauncher, loading_agents
from ..checks.finding import Finding, finding_lines, ordered
from ..checks.gate import RunChecks, load_profile
from ..cluster.credentials import CredentialStore
from ..errors import Busy, InvalidInput, NotFound
from ..cluster.kvstore import SecretStore
from ..profiles import DEFAULT_PROCESSES, FieldError, Workload, parse_workload
from ..results.model import LatencyFigures, LoadRecord, LoadSummary
from ..results.store import LoadStore
from ..serial import dump, load
from ..settings.targets import check_urls, split_urls, unique
from ..agents.workload_runs import AgentWorkloads, Leftovers, make_job, new_id
from ..loadgen.workload import Job

LEFTOVERS_KEY = 'loading/leftovers'


@dataclass(frozen=True)
class LoadRequest:
    """A load: its workload (as a profile's), where its agents go and what they load."""
    workload: Workload
    placement: Optional[List[str]] = None
    endpoint: Optional[str] = None   # URLs as given (comma separated); None: every RGW

    @classmethod
    def of(cls, *, placement: Optional[List[str]] = None, endpoint: Optional[str] = None,
           **fields: Any) -> 'LoadRequest':
        """A load of a workload with these fields, the rest as `ceph rgwbench load`'s."""
        return cls(replace(DEFAULT_WORKLOAD, **fields), placement, endpoint)

    def stored(self) -> Dict[str, Any]:
        """What a load's record keeps of its request."""
        w = self.workload
        return {'op': w.op, 'size': w.size, 'concurrency': w.concurrency,
                'processes': w.processes, 'duration_s': w.duration_s, 'warmup_s': w.warmup_s,
                'buckets': w.buckets, 'placement': self.placement, 'endpoint': self.endpoint,
                'rate': w.rate, 'objects': w.objects,
                'multipart_threshold': w.multipart_threshold, 'part_size': w.part_size,
                'range': w.range}


#: The words of `ceph rgwbench load`: name, type and default.
LOAD_WORDS: Tuple[Tuple[str, Any, Any], ...] = (
    ('op', str, 'put'), ('size', str, '4KiB'), ('concurrency', int, 16),
    ('duration', int, 30), ('warmup', int, 2), ('processes', int, DEFAULT_PROCESSES),
    ('buckets', int, 1), ('placement', Optional[str], None), ('endpoint', Optional[str], None),
    ('rate', Optional[float], None), ('objects', Optional[int], None),
    ('multipart_threshold', Optional[str], None), ('part_size', Optional[str], None),
    ('range', Optional[str], None))


LOAD = 'load'
#: the workload of a load with none of its words given
DEFAULT_WORKLOAD = Workload(name=LOAD, **{
    {'duration': 'duration_s', 'warmup': 'warmup_s'}.get(name, name): default
    for name, _, default in LOAD_WORDS if name not in ('placement', 'endpoint')})


def load_request(words: Mapping[str, Any]) -> LoadRequest:
    """The command's words (LOAD_WORDS, with `placement` resolved to hosts) as a load, with
    the same checks and limits as a profile's workload."""
    given = dict(words)
    placement, endpoint = given.pop('placement', None), given.pop('endpoint', None)
    try:
        workload = parse_workload(dict(given, name=LOAD), lambda field: '--' + field.replace(
            '_', '-') if field else 'load')
    except FieldError as e:
        raise InvalidInput(str(e))
    return LoadRequest(workload, placement, endpoint)


class LoadService:
    """`ceph rgwbench load`: one load at a time, run by `agents` as a run's workloads are."""

    def __init__(self, *, store: SecretStore, credentials: CredentialStore,
                 endpoints: Callable[[], List[str]], agents: AgentWorkloads,
                 make_launcher: Callable[[Optional[List[str]]], AgentLauncher], log: Any,
                 checks: Optional[RunChecks] = None) -> None:
        self.store = store
        self.records = LoadStore(store)
        self.credentials = credentials
        self.endpoints = endpoints
        # A load never keeps its objects (the module's keep_objects is a run's).
        self.agents = replace(agents, keep_objects=lambda: False)
        self.make_launcher = make_launcher
        self.log = log
        # What would skew or endanger a load: checked before it (PGs are watched during
        # it by the agents' new_pg_watch).
        self.checks = checks
        self._lock = threading.Lock()
        self._active: Optional[Dict[str, Any]] = None
        self.leftovers = Leftovers(store, LEFTOVERS_KEY, remove_buckets=self.agents.remove_buckets)
        self._agent_run: Optional[AgentRun] = None

    def _targets(self, request: LoadRequest) -> List[str]:
        if request.endpoint:
            try:
                return check_urls(split_urls(request.endpoint))
            except ValueError as e:
                raise InvalidInput('--endpoint: %s' % e)
        return self.default_targets()

    def default_targets(self) -> List[str]:
        """Every plain-HTTP endpoint of the RGW daemons (or every HTTPS one, if none is plain)."""
        found = unique(self.endpoints())
        if not found:
            raise NotFound('no RGW endpoint in the service map; give --endpoint')
        plain = [e for e in found if e.startswith('http://')]
        return plain or found

    def start(self, request: LoadRequest, force: bool = False) -> str:
        """Check everything, then run in a thread of its own; returns the load id.

        force: go on past a HEALTH_ERR (never past the capacity estimate).
        """
        creds = self.credentials.require()
        targets = self._targets(request)
        load_id = new_id()
        job = make_job(request.workload, creds=creds, endpoints=targets,
                       bucket_prefix='rgwbench-%s' % load_id, run_tag=load_id)
        with self._lock:
            if self._active is not None:
                raise Busy('load %s is in progress; wait for it or try later'
                           % self._active['load_id'])
            found: List[Finding] = [] if self.checks is None else self.checks.before(
                load_profile(request.workload, request.placement), force=force, load=True)
            launcher = self.make_launcher(request.placement)
            job = self._sized(job, request, launcher)
            record = {'load_id': load_id, 'state': 'running', 'endpoint': targets[0],
                      'targets': targets,
                      'request': request.stored(), 'started': time.time(),
                      'finished': None, 'agents': {a: {'state': 'waiting', 'error': None}
                                                   for a in launcher.agent_ids()},
                      'result': None, 'error': None,
                      'findings': dump(found)}
            # Written down before anything is made: what a vanished mgr leaves behind (a
            # write the mon refuses ends the command here, nothing started).
            self.leftovers.write(record, launcher, job, creds.get('ca_bundle'))
            self._active = record
        thread = threading.Thread(target=self._run, args=(record, job, launcher, creds),
                                  name='rgwbench-load', daemon=True)
        thread.start()
        return load_id

    def _sized(self, job: Job, request: LoadRequest, launcher: AgentLauncher) -> Job:
        """The job with a GET working set sized from the caches, when it names none."""
        if self.checks is None:
            return job
        sized, prefill_s = self.checks.as_run(request.workload, len(loading_agents(launcher)))
        if not prefill_s:   # the load names its working set, or it is not sized
            return job
        return replace(job, objects=int(sized.objects or 0), prefill_s=prefill_s)

    def _run(self, record: Dict[str, Any], job: Job, launcher: AgentLauncher,
             creds: Dict[str, str]) -> None:
        state, error = 'failed', None
        record['cleanup'] = {}
        try:
            summary = self.agents.run_once(job, launcher, ca_pem=creds.get('ca_bundle'),
                                           leftovers=self.leftovers, watch=self._watch,
                                           cleaned=record['cleanup'])
            record['agents'] = summary.agents
            record['result'] = summary.result
            record['stopped'] = summary.stopped
            record['clocks'] = summary.clocks
            record['findings'] = record.get('findings', []) + dump(summary.findings)
            failed = agents_failed(summary)
            if summary.refused:
                error = summary.refused   # not started: its agents failed for that
            elif summary.result is None:
                error = '; '.join(failed) or summary.stopped or \
                    'no agent reported a result'
            else:
                state, error = 'complete', '; '.join(failed) or None
        except Exception as e:
            self.log.exception('load %s failed', record['load_id'])
            error = '%s: %s' % (type(e).__name__, e)
        finally:
            record['finished'] = time.time()
            # Only now is the load over, for anyone who looks.
            record['error'] = error
            record['state'] = state
            self._save(record)
            with self._lock:
                self._active = None

    def _watch(self, agent_run: Optional[AgentRun]) -> None:
        with self._lock:
            self._agent_run = agent_run

    def recover(self, remove_service: Callable[[str], Any]) -> List[str]:
        """Remove what loads left when the mgr vanished during them; their ids.

        Their agents (a local process or the agents' service), buckets and
        objects; each load is kept as failed. Called when the module starts and
        again now and then while anything is left (see `Leftovers`).
        """
        found = [left for left in self.leftovers.remove(
            remove_service, self.credentials.get(), self.log) if not left.ended]
        for left in found:  # a load that ended by itself keeps its record as it ended
            left.record.update(state='failed', finished=left.found, error=(
                'the mgr restarted during the load; its agents, buckets and objects '
                + ('were removed' if not left.errors else 'are being removed (so far: %s; '
                   'tried again every minute)' % '; '.join(left.errors))))
            self._save(left.record)
        return [str(left.record['load_id']) for left in found]

    def _save(self, record: Dict[str, Any]) -> None:
        self.records.save(load(LoadRecord, record))

    def active(self) -> Optional[Dict[str, Any]]:
        with self._lock:
            if self._active is None:
                return None
            record = dict(self._active)
            if self._agent_run is not None:
                record['agents'] = {a: dict(s) for a, s in self._agent_run.agents.items()}
                record['live'] = self._agent_run.live_figures()
            return record

    def show(self, load_id: Optional[str] = None) -> LoadRecord:
        active = self.active()
        if active is not None and load_id in (None, active['load_id']):
            return load(LoadRecord, active)
        found = self.records.newest() if load_id is None else self.records.load(load_id)
        if found is None:
            raise NotFound('no load has run yet' if load_id is None else
                           'no load %r (see `ceph rgwbench load ls`)' % load_id)
        return found

    def list(self) -> List[LoadSummary]:
        found = self.records.summaries()
        active = self.active()
        if active is not None:
            found.append(load(LoadRecord, active).summary())
        return found


def _figure(value: Optional[float], form: str) -> str:
    return '-' if value is None else form % value


def load_to_text(record: LoadRecord) -> str:
    req = record.request or {}
    lines = ['load %s: %s' % (record.load_id, record.state),
             '%s %s x%d on %s' % (str(req.get('op')).upper(), req.get('size'),
                                  req.get('concurrency') or 0,
                                  ', '.join(record.targets or [str(record.endpoint)]))]
    for agent, state in sorted(record.agents.items()):
        lines.append('agent %s: %s%s' % (agent, state.state,
                                         ' (%s)' % state.error if state.error else ''))
    result = record.result
    if result:
        figures = result.figures
        lat = figures.latency_ms or LatencyFigures()
        lines.append('ops %d  errors %d  %.1f ops/s  %.2f MiB/s' % (
            figures.ops or 0, figures.errors or 0, figures.ops_per_s or 0,
            figures.throughput_mib_s or 0))
        if result.open_loop:
            lines.append('open loop at %g ops/s asked: latency counts from each request\'s '
                         'intended start' % (result.rate or 0))
        if result.working_set_bytes is not None:
            lines.append('working set %d objects, %.1f MiB%s' % (
                result.objects or 0, result.working_set_bytes / float(1 << 20),
                '; ranged GET of bytes %s' % result.range if result.range else ''))
        # A load that completed no request (a starved agent, a one-second load) has none.
        lines.append('latency ms: mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s'
                     % tuple(_figure(v, '%.2f')
                             for v in (lat.mean, lat.p50, lat.p90, lat.p99, lat.p999, lat.max)))
        if len(result.targets or []) > 1:
            for target in result.targets or []:
                lines.append('  %s: %d connections, %d ops, %d errors' % (
                    target.url, target.workers or 0, target.ops or 0, target.errors or 0))
        for key, server in (('rgw', figures.rgw), ('haproxy', figures.haproxy)):
            if not server:
                continue
            lines.append('%s: %d daemons, %s CPU cores, %s MiB RSS' % (
                key, server.daemons or 0, _figure(server.cpu_cores, '%.2f'),
                _figure(server.rss_mib, '%.1f')))
            for daemon in server.per_daemon or []:
                lines.append('  %s on %s: %s CPU cores, %s MiB RSS' % (
                    daemon.daemon, daemon.host, _figure(daemon.cpu_cores, '%.2f'),
                    _figure(daemon.rss_mib, '%.1f')))
    if record.stopped:
        lines.append('stopped early: %s' % record.stopped)
    if record.error:
        lines.append('error: %s' % record.error)
    found = ordered(record.findings or [])
    if found:
        lines.append('findings (`ceph rgwbench check` describes each):')
        for finding in found:
            lines.extend(finding_lines(finding, indent='  '))
    return '\n'.join(lines)


def loads_to_text(loads: List[LoadSummary]) -> str:
    return '\n'.join('%s  %s  %s' % (r.load_id, r.state, r.endpoint)
                     for r in loads) or 'no loads'
