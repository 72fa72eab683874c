"""One workload run by a set of agents: jobs out, one common start, results in.

An agent that fails, never fetches its job, misses the start or never posts
its result is reported as such; the run goes on with the others and never
waits past its deadlines.
"""
import secrets
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..loadgen.result import merge_results
from .channel import AgentChannel
from .launchers import AgentLauncher

# Agent states, in the order an agent goes through them.
WAITING, FETCHED, READY, STARTED, DONE, FAILED = (
    'waiting', 'fetched', 'ready', 'started', 'done', 'failed')


class AgentRun:
    """Implements the channel's session for one workload."""

    def __init__(self, job: Dict[str, Any], launcher: AgentLauncher,
                 ca_bundle: Optional[str] = None,
                 rgw_pids: Optional[Dict[str, List[int]]] = None,
                 ready_timeout_s: float = 180.0,
                 start_delay_s: float = 2.0, result_grace_s: float = 60.0,
                 check_every_s: float = 3.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.job = job
        self.ca_bundle = ca_bundle
        # Per host, the cluster's radosgw pids: what an agent there counts.
        self.rgw_pids = rgw_pids or {}
        self.launcher = launcher
        self.secret = secrets.token_urlsafe(32)
        self.ready_timeout_s = ready_timeout_s
        self.start_delay_s = start_delay_s
        self.result_grace_s = result_grace_s
        self.check_every_s = check_every_s
        self.clock = clock
        self.start_at: Optional[float] = None
        self.agents: Dict[str, Dict[str, Any]] = {
            a: {'state': WAITING, 'error': None} for a in launcher.agent_ids()}
        self.results: Dict[str, Dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._aborted = False
        # Per agent, its latest live figures and when they came.
        self.live: Dict[str, Tuple[float, Dict[str, Any]]] = {}

    def abort(self) -> None:
        """Stop waiting: agents that have not posted a result are failed and removed."""
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    # -- the channel's session ----------------------------------------------
    def knows(self, agent: str) -> bool:
        return agent in self.agents

    def job_for(self, agent: str) -> Dict[str, Any]:
        with self._cond:
            self._set(agent, FETCHED)
        job = dict(self.job)
        # Each agent its own key space in the shared buckets.
        job['key_prefix'] = '%s%s/' % (self.job.get('key_prefix', 'rgwbench/'), agent)
        job['cleanup'] = False
        job['proc_pids'] = {'radosgw': list(self.rgw_pids.get(agent, []))}
        return {'job': job, 'start_timeout_s': self.ready_timeout_s,
                'ca_bundle_pem': self.ca_bundle}

    def ready(self, agent: str) -> None:
        with self._cond:
            self._set(agent, READY)

    def start_for(self, agent: str) -> Tuple[int, Dict[str, Any]]:
        with self._cond:
            if self.start_at is None:
                return 425, {'error': 'not all agents are ready yet'}
            if self.agents[agent]['state'] != READY:
                return 410, {'error': 'this agent missed the start'}
            self._set(agent, STARTED)
            return 200, {'start_at': self.start_at}

    def result(self, agent: str, body: Dict[str, Any]) -> None:
        with self._cond:
            if self.agents[agent]['state'] in (DONE, FAILED):
                return  # the first word of an agent stands
            if body.get('ok') and isinstance(body.get('result'), dict):
                self.results[agent] = body['result']
                self._set(agent, DONE)
            else:
                self.agents[agent]['error'] = str(body.get('error') or 'agent failed')
                self._set(agent, FAILED)

    def progress(self, agent: str, body: Dict[str, Any]) -> None:
        figures = {k: body.get(k) for k in ('elapsed_s', 'phase', 'ops_per_s', 'mib_per_s',
                                            'mean_ms', 'errors')}
        with self._cond:
            if self.agents[agent]['state'] == STARTED:
                self.live[agent] = (self.clock(), figures)

    def live_figures(self, max_age_s: float = 10.0) -> Optional[Dict[str, Any]]:
        """Throughput of the agents right now (their latest figures, added), if any."""
        with self._cond:
            recent = [f for agent, (at, f) in self.live.items()
                      if self.clock() - at <= max_age_s and
                      self.agents[agent]['state'] == STARTED]
        if not recent:
            return None
        return {'agents': len(recent),
                'phase': 'measuring' if any(f['phase'] == 'measuring' for f in recent)
                else 'warm-up',
                'ops_per_s': round(sum(float(f['ops_per_s'] or 0) for f in recent), 1),
                'mib_per_s': round(sum(float(f['mib_per_s'] or 0) for f in recent), 3),
                'errors': sum(int(f['errors'] or 0) for f in recent)}

    def _set(self, agent: str, state: str) -> None:
        if self.agents[agent]['state'] not in (DONE, FAILED):
            self.agents[agent]['state'] = state
        self._cond.notify_all()

    # -- running ---------------------------------------------------------------
    def _wait(self, done: Callable[[], bool], until: float) -> None:
        """Wait for `done`, and fail agents whose launcher reports them dead."""
        last_check = self.clock()
        with self._cond:
            while not done() and not self._aborted and self.clock() < until:
                self._cond.wait(min(1.0, max(0.0, until - self.clock())))
                if self.clock() - last_check >= self.check_every_s:
                    last_check = self.clock()
                    self._fail_dead_agents()

    def _fail_dead_agents(self) -> None:
        for agent, state in self.agents.items():
            if state['state'] in (DONE, FAILED):
                continue
            try:
                problem = self.launcher.problem(agent)
            except Exception:  # the orchestrator may not answer now; ask again later
                continue
            if problem:
                state['error'] = 'died while %s (%s)' % (state['state'], problem)
                state['state'] = FAILED
                self._cond.notify_all()

    def _settled(self, states: Tuple[str, ...]) -> Callable[[], bool]:
        return lambda: all(a['state'] in states for a in self.agents.values())

    def run(self, channel: AgentChannel) -> Dict[str, Any]:
        channel.open(self)
        try:
            self.launcher.launch({'server': channel.url, 'fingerprint': channel.fingerprint,
                                  'secret': self.secret})
            self._wait(self._settled((READY, DONE, FAILED)),
                       self.clock() + self.ready_timeout_s)
            with self._cond:
                ready = [a for a, s in self.agents.items() if s['state'] == READY]
                if ready and not self._aborted:
                    self.start_at = self.clock() + self.start_delay_s
                for agent, state in self.agents.items():
                    if state['state'] in (WAITING, FETCHED) or (
                            self._aborted and state['state'] == READY):
                        state['error'] = 'aborted' if self._aborted else (
                            ('never fetched its job' if state['state'] == WAITING
                             else 'not ready in time') + self._problem(agent))
                        state['state'] = FAILED
            if self.start_at is not None:
                length = float(self.job.get('warmup_s') or 0) + float(
                    self.job.get('duration_s') or 0)
                self._wait(self._settled((DONE, FAILED)),
                           self.start_at + length + self.result_grace_s)
            with self._cond:
                for agent, state in self.agents.items():
                    if state['state'] not in (DONE, FAILED):
                        state['state'] = FAILED
                        state['error'] = 'aborted' if self._aborted else \
                            'no result' + self._problem(agent)
        finally:
            channel.close()
            self.launcher.remove()
        return self.summary()

    def _problem(self, agent: str) -> str:
        try:
            problem = self.launcher.problem(agent)
        except Exception as e:  # a report, not a reason to fail the run
            problem = str(e)
        return ' (%s)' % problem if problem else ''

    def summary(self) -> Dict[str, Any]:
        merged: Optional[Dict[str, Any]] = None
        if self.results:
            merged = merge_results(list(self.results.values()))
        return {'start_at': self.start_at,
                'agents': {a: dict(s) for a, s in sorted(self.agents.items())},
                'result': merged}


def agents_failed(summary: Dict[str, Any]) -> List[str]:
    return ['%s: %s' % (a, s['error']) for a, s in summary['agents'].items()
            if s['state'] == FAILED]
