"""`ceph rgwbench load`: one workload, run now by agents, against the cluster as it is.

Nothing on the cluster changes but the buckets and objects of the load,
which are removed at its end. The result is kept in the module's store.
"""
import json
import os
import tempfile
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from .agents.channel import AgentChannel
from .agents.coordinator import AgentRun, agents_failed
from .agents.launchers import AgentLauncher, remove_leftovers
from .credentials import CredentialStore
from .errors import Busy, InvalidInput, NotFound
from .loadgen import prepare
from .loadgen.errors import LoadgenError
from .loadgen.workload import Job
from .kvstore import Store

PREFIX = 'load/'
LEFTOVERS_KEY = 'loading/leftovers'
KEEP = 10
# Values in the config-key store are limited to 64 KiB.
MAX_STORED = 60000


class LoadRequest(NamedTuple):
    op: str = 'put'
    size: str = '4KiB'
    concurrency: int = 16
    processes: int = 1
    duration_s: float = 30.0
    warmup_s: float = 2.0
    buckets: int = 1
    placement: Optional[List[str]] = None
    endpoint: Optional[str] = None


def compact(record: Dict[str, Any], limit: int = MAX_STORED) -> Dict[str, Any]:
    """The record, without histograms and then per-second series if it is too big."""
    if len(json.dumps(record)) <= limit:
        return record
    trimmed = json.loads(json.dumps(record))

    def drop(node: Any, keys: List[str]) -> None:
        if isinstance(node, dict):
            for key in keys:
                node.pop(key, None)
            for value in node.values():
                drop(value, keys)
        elif isinstance(node, list):
            for value in node:
                drop(value, keys)

    drop(trimmed, ['histogram', 'ttfb_histogram'])
    if len(json.dumps(trimmed)) > limit:
        drop(trimmed, ['per_second', 'error_samples'])
    trimmed['trimmed'] = True
    return trimmed


def remove_buckets(job: Dict[str, Any], ca_pem: Optional[str] = None) -> Dict[str, Any]:
    """Delete a load's objects and buckets from the mgr; the CA comes as PEM text.

    A job carries the path of a CA file (as agents write it); the module has
    the PEM, so it is written to a private temporary file for the clean-up.
    """
    if not ca_pem:
        return dict(prepare.cleanup(Job.from_dict(dict(job, ca_bundle=None))))
    fd, path = tempfile.mkstemp(prefix='rgwbench-ca-', suffix='.pem')
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(ca_pem)
        return dict(prepare.cleanup(Job.from_dict(dict(job, ca_bundle=path))))
    finally:
        os.unlink(path)


class Leftovers:
    """What a load on agents would leave if the mgr vanished: written down before it starts.

    Its agents (a local process's folder, or the agents' service) and its
    buckets; removed again when the load ends, or by `remove` when the
    module starts and finds them (a failover or crash cut the load off).
    """

    def __init__(self, store: Store, key: str) -> None:
        self.store = store
        self.key = key

    def write(self, record: Dict[str, Any], launcher: AgentLauncher,
              job: Dict[str, Any], ca_pem: Optional[str] = None) -> None:
        # No keys: the stored credentials are read again when cleaning up.
        self.store.set_store(self.key, json.dumps({
            'record': record, 'agents': launcher.leftovers(), 'endpoint': job['endpoint'],
            'ca_pem': ca_pem, 'bucket_prefix': job['bucket_prefix'],
            'buckets': job['buckets'], 'key_prefix': job['key_prefix']}))

    def clear(self) -> None:
        self.store.set_store(self.key, None)

    def remove(self, remove_service: Callable[[str], Any], creds: Optional[Dict[str, str]],
               log: Any) -> Optional[Tuple[Dict[str, Any], List[str]]]:
        """Remove what is written down, if anything: (its record, what could not be done)."""
        stored = self.store.get_store(self.key)
        if not stored:
            return None
        left = json.loads(stored)
        log.warning('removing what an agents\' load left when the mgr restarted: %s',
                    left['bucket_prefix'])
        errors = []
        try:
            remove_leftovers(left['agents'], remove_service)
        except Exception as e:
            errors.append('agents: %s' % e)
        if creds:
            job = Job(endpoint=left['endpoint'], access_key=creds['access_key'],
                      secret_key=creds['secret_key'], bucket_prefix=left['bucket_prefix'],
                      buckets=left['buckets'], key_prefix=left['key_prefix'])
            try:
                left['record']['cleanup'] = remove_buckets(
                    job.to_dict(), left.get('ca_pem') or creds.get('ca_bundle'))
            except Exception as e:
                errors.append('buckets: %s' % e)
        else:
            errors.append('no stored credentials to remove buckets %s* with'
                          % left['bucket_prefix'])
        self.clear()
        return left['record'], errors


class LoadService:
    def __init__(self, store: Store, credentials: CredentialStore,
                 endpoints: Callable[[], List[str]],
                 rgw_pids: Callable[[], Dict[str, List[int]]],
                 make_launcher: Callable[[Optional[List[str]]], AgentLauncher],
                 make_channel: Callable[[], AgentChannel],
                 log: Any) -> None:
        self.store = store
        self.credentials = credentials
        self.endpoints = endpoints
        self.rgw_pids = rgw_pids
        self.make_launcher = make_launcher
        self.make_channel = make_channel
        self.log = log
        self._lock = threading.Lock()
        self._active: Optional[Dict[str, Any]] = None
        self.leftovers = Leftovers(store, LEFTOVERS_KEY)
        self._agent_run: Optional[AgentRun] = None

    def job(self, request: LoadRequest, creds: Dict[str, str], endpoint: str,
            load_id: str) -> Dict[str, Any]:
        job = Job(endpoint=endpoint, access_key=creds['access_key'],
                  secret_key=creds['secret_key'], op=request.op, size=request.size,
                  concurrency=request.concurrency, processes=request.processes,
                  duration_s=request.duration_s, warmup_s=request.warmup_s,
                  buckets=request.buckets, bucket_prefix='rgwbench-%s' % load_id,
                  key_prefix='rgwbench/', run_tag=load_id)
        try:
            job.validate()
        except LoadgenError as e:
            raise InvalidInput(str(e))
        return job.to_dict()

    def _endpoint(self, request: LoadRequest) -> str:
        if request.endpoint:
            if not request.endpoint.startswith(('http://', 'https://')):
                raise InvalidInput('endpoint must be an http:// or https:// URL, got %r'
                                   % request.endpoint)
            return request.endpoint.rstrip('/')
        return self.default_endpoint()

    def default_endpoint(self) -> str:
        """The first plain-HTTP endpoint of the RGW daemons (or the first HTTPS one)."""
        found = self.endpoints()
        if not found:
            raise NotFound('no RGW endpoint in the service map; give --endpoint')
        plain = [e for e in found if e.startswith('http://')]
        return (plain or found)[0]

    def start(self, request: LoadRequest) -> str:
        """Check everything, then run in a thread of its own; returns the load id."""
        creds = self.credentials.require()
        endpoint = self._endpoint(request)
        load_id = time.strftime('%Y%m%d-%H%M%S-') + uuid.uuid4().hex[:6]
        job = self.job(request, creds, endpoint, load_id)
        with self._lock:
            if self._active is not None:
                raise Busy('load %s is in progress; wait for it or try later'
                           % self._active['load_id'])
            launcher = self.make_launcher(request.placement)
            record = {'load_id': load_id, 'state': 'running', 'endpoint': endpoint,
                      'request': request._asdict(), 'started': time.time(),
                      'finished': None, 'agents': {a: {'state': 'waiting', 'error': None}
                                                   for a in launcher.agent_ids()},
                      'result': None, 'error': None}
            self._active = record
            # Written down before anything is made: what a vanished mgr leaves behind.
            self.leftovers.write(record, launcher, job, creds.get('ca_bundle'))
        thread = threading.Thread(target=self._run, args=(record, job, launcher, creds),
                                  name='rgwbench-load', daemon=True)
        thread.start()
        return load_id

    def _run(self, record: Dict[str, Any], job: Dict[str, Any], launcher: AgentLauncher,
             creds: Dict[str, str]) -> None:
        state, error = 'failed', None
        try:
            channel = self.make_channel()
            agent_run = AgentRun(job, launcher, ca_bundle=creds.get('ca_bundle'),
                                 rgw_pids=self.rgw_pids())
            self._agent_run = agent_run
            summary = agent_run.run(channel)
            record['agents'] = summary['agents']
            record['result'] = summary['result']
            failed = agents_failed(summary)
            if summary['result'] is None:
                error = '; '.join(failed) or 'no agent reported a result'
            else:
                state, error = 'complete', '; '.join(failed) or None
        except Exception as e:
            self.log.exception('load %s failed', record['load_id'])
            error = '%s: %s' % (type(e).__name__, e)
        finally:
            record['cleanup'] = self._cleanup(job, creds.get('ca_bundle'))
            record['finished'] = time.time()
            # Only now is the load over, for anyone who looks.
            record['error'] = error
            record['state'] = state
            self._save(record)
            self.leftovers.clear()
            with self._lock:
                self._active = None
                self._agent_run = None

    def _cleanup(self, job: Dict[str, Any], ca_pem: Optional[str]) -> Dict[str, Any]:
        try:
            return remove_buckets(job, ca_pem)
        except Exception as e:
            self.log.warning('clean-up of %s failed: %s', job['bucket_prefix'], e)
            return {'error': str(e)}

    def recover(self, remove_service: Callable[[str], Any]) -> Optional[str]:
        """At module start: remove what a load left when the mgr vanished during it.

        Its agents (a local process or the agents' service), its buckets and
        objects; the load is kept as failed. Returns its id, if there was one.
        """
        found = self.leftovers.remove(remove_service, self.credentials.get(), self.log)
        if found is None:
            return None
        record, errors = found
        record.update(state='failed', finished=time.time(), error=(
            'the mgr restarted during the load; its agents, buckets and objects were removed'
            + ('' if not errors else ' (but: %s)' % '; '.join(errors))))
        self._save(record)
        return str(record['load_id'])

    def _save(self, record: Dict[str, Any]) -> None:
        self.store.set_store(PREFIX + record['load_id'], json.dumps(compact(record)))
        stored = sorted(self.store.get_store_prefix(PREFIX))
        for key in stored[:-KEEP]:
            self.store.set_store(key, None)

    def active(self) -> Optional[Dict[str, Any]]:
        with self._lock:
            if self._active is None:
                return None
            record = dict(self._active)
            if self._agent_run is not None:
                record['agents'] = {a: dict(s) for a, s in self._agent_run.agents.items()}
                record['live'] = self._agent_run.live_figures()
            return record

    def show(self, load_id: Optional[str] = None) -> Dict[str, Any]:
        active = self.active()
        if active is not None and load_id in (None, active['load_id']):
            return active
        stored = self.store.get_store_prefix(PREFIX)
        if load_id is None:
            if not stored:
                raise NotFound('no load has run yet')
            return dict(json.loads(stored[max(stored)]))
        if PREFIX + load_id not in stored:
            raise NotFound('no load %r (see `ceph rgwbench load ls`)' % load_id)
        return dict(json.loads(stored[PREFIX + load_id]))

    def list(self) -> List[Dict[str, Any]]:
        found = [json.loads(v) for _, v in sorted(self.store.get_store_prefix(PREFIX).items())]
        active = self.active()
        if active is not None:
            found.append(active)
        return [{k: r.get(k) for k in ('load_id', 'state', 'started', 'finished', 'endpoint',
                                       'error')} for r in found]


def load_to_text(record: Dict[str, Any]) -> str:
    req = record['request']
    lines = ['load %s: %s' % (record['load_id'], record['state']),
             '%s %s x%d on %s' % (req['op'].upper(), req['size'], req['concurrency'],
                                  record['endpoint'])]
    for agent, state in sorted(record['agents'].items()):
        lines.append('agent %s: %s%s' % (agent, state['state'],
                                         ' (%s)' % state['error'] if state['error'] else ''))
    result = record.get('result')
    if result:
        lat = result['latency_ms']
        lines.append('ops %d  errors %d  %.1f ops/s  %.2f MiB/s' % (
            result['ops'], result['errors'], result['ops_per_s'], result['throughput_mib_s']))
        lines.append('latency ms: mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f'
                     % (lat['mean'], lat['p50'], lat['p90'], lat['p99'], lat['p999'],
                        lat['max']))
        rgw = result.get('rgw')
        if rgw:
            lines.append('rgw: %d daemons, %.2f CPU cores, %.1f MiB RSS' % (
                rgw['daemons'], rgw['cpu_cores'], rgw['rss_mib']))
    if record.get('error'):
        lines.append('error: %s' % record['error'])
    return '\n'.join(lines)
