"""One workload run by a set of agents: jobs out, one common start, results in.

An agent that fails, never fetches its job, misses the start or never posts
its result is reported as such; the run goes on with the others and never
waits past its deadlines.
"""
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from ..checks.clock_skew import clock_skew
from ..checks.finding import Finding, Level
from ..checks.gate import refusal
from ..loadgen.result import merge_results
from ..loadgen.schedule import share
from ..loadgen.workload import Job
from ..cluster.sampled_daemons import ServerDaemons
from .channel import AgentChannel
from ..checks.clock_skew import AgentClocks, ClockSample
from .launchers import ORCHESTRATOR, AgentLauncher
from .sources import bare_ip
from ..serial import dump

# An agent stops its load and exits once the module's endpoint has not answered it
# for this long (its dead-man switch, see loadgen/agent.py): a dead mgr leaves no
# load on RGW for long.
DEADMAN_S = 60.0
# What an agent's prefill is given on top of the ready timeout, for a working set it
# writes at no less than these (slow, on purpose: a timeout, not an estimate).
PREFILL_OBJECTS_S = 100.0
PREFILL_BYTES_S = 50.0 * (1 << 20)

# An agent's job (S3 keys, SSE-C key) is handed over only this long after its enrolment,
# with no second enrolment for it meanwhile: one that comes is caught before any job goes.
ENROL_SETTLE_S = 2.0
# ... and only once every agent has enrolled (or failed), or this long after the launch.
ENROL_WAIT_S = 60.0

# Agent states, in the order an agent goes through them.
WAITING, FETCHED, READY, STARTED, DONE, AGENT_FAILED = (
    'waiting', 'fetched', 'ready', 'started', 'done', 'failed')


def agent_share(job: Job, index: int, agents: int) -> Dict[str, Any]:
    """What agent `index` of `agents` runs of a job whose concurrency, rate, op count and
    working set are totals: its part of each, and where its workers start in the
    round-robin over the targets, which the agents' workers continue from one to the next.

    Parts differ by one at most; an agent is given at least one worker (a profile's
    checks keep the concurrency at least the number of agents).
    """
    total = max(1, job.concurrency)
    first, count = share(total, agents, index)
    count = max(1, count)
    processes = job.processes
    part: Dict[str, Any] = {'concurrency': count, 'target_offset': first,
                            # 0: as many as the agent's host has cores (the agent decides)
                            'processes': min(processes, count) if processes else 0}
    if job.rate:
        part['rate'] = job.rate * count / total
    if job.ops:
        part['ops'] = max(1, job.ops * (first + count) // total - job.ops * first // total)
    if job.objects:
        part['objects'] = max(1, share(job.objects, agents, index)[1])
    return part


class AgentRun:
    """Implements the channel's session for one workload."""

    def __init__(self, job: Job, launcher: AgentLauncher,
                 ca_bundle: Optional[str] = None,
                 server_daemons: Optional[ServerDaemons] = None,
                 ready_timeout_s: Optional[float] = None,
                 start_delay_s: float = 2.0, result_grace_s: float = 60.0,
                 check_every_s: float = 3.0, processes_max: int = 0,
                 deadman_s: float = DEADMAN_S,
                 clock: Callable[[], float] = time.time,
                 sources: Optional[Mapping[str, FrozenSet[str]]] = None,
                 enrol_settle_s: float = ENROL_SETTLE_S,
                 enrol_wait_s: float = ENROL_WAIT_S) -> None:
        self.job = job
        self.enrol_settle_s = enrol_settle_s
        self.enrol_wait_s = enrol_wait_s
        # When each agent enrolled, and when the agents were launched (None: not yet).
        self._enrolled_at: Dict[str, float] = {}
        self._launched_at: Optional[float] = None
        # Where each agent may enrol from (agents/sources.py); None: from anywhere.
        self.sources = sources
        # An enrolment with an agent's right code from elsewhere: refused, and said
        # if the agent never comes.
        self._foreign: Dict[str, str] = {}
        # With a job's processes 0, an agent runs one per core, at most this many (0: no cap).
        self.processes_max = processes_max
        self.ca_bundle = ca_bundle
        # The cluster's daemons: an agent counts those of its host.
        self.server_daemons = server_daemons or ServerDaemons()
        self.launcher = launcher
        # Each agent enrols once and is given a token of its own, so that no agent can
        # speak as another. An agent the mgr starts itself enrols with a one-time code of
        # its launch config (a file only the mgr's user reads). A placed agent's launch
        # config is its orchestrator spec, which read-only users read: it holds no code,
        # and the agent is taken from an address of its host only, once (agents/sources.py).
        self.placed = frozenset(launcher.agent_ids() if launcher.started_by == ORCHESTRATOR
                                else launcher.samplers)
        self._codes = {a: secrets.token_urlsafe(24) for a in launcher.agent_ids()
                       if a not in self.placed}
        self._tokens: Dict[str, str] = {}
        self._spent: Dict[str, str] = {}
        self.ready_timeout_s = ready_timeout_s if ready_timeout_s is not None else \
            180.0 + prefill_allowance_s(job)
        self.start_delay_s = start_delay_s
        self.result_grace_s = result_grace_s
        self.check_every_s = check_every_s
        self.deadman_s = deadman_s
        self.clock = clock
        self.start_at: Optional[float] = None
        self.agents: Dict[str, Dict[str, Any]] = {
            a: {'state': WAITING, 'error': None} for a in launcher.agent_ids()}
        # Agents that only sample their host's daemons; the others share the load.
        self.samplers = set(launcher.samplers) & set(self.agents)
        self.loaders = sorted(a for a in self.agents if a not in self.samplers)
        self.results: Dict[str, Dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._aborted = False
        # Why the agents were told to stop early, keeping what they measured.
        self.stopped: Optional[str] = None
        # Per agent, its latest live figures and when they came.
        self.live: Dict[str, Tuple[float, Dict[str, Any]]] = {}
        # Each agent's clock against the mgr's, from every request it makes; judged
        # once all are ready, before the start.
        self.clocks = AgentClocks()
        self.clock_finding: Optional[Finding] = None
        # Why the load was not started (a refusing finding), if it was not.
        self.refused: Optional[str] = None
        # Launched (or tried) and not removed since: agents may be left behind.
        self._out = False

    def abort(self) -> None:
        """Stop waiting: agents that have not posted a result are failed and removed."""
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    def stop_early(self, reason: str) -> None:
        """Tell the agents (in their next progress answer) to end the load and post it."""
        with self._cond:
            if self.stopped is None:
                self.stopped = reason

    # -- the channel's session ----------------------------------------------
    def enrol(self, agent: str, code: str, source: Optional[str] = None) -> Optional[str]:
        """The agent's own token, once, for its launch code (None: wrong or spent code,
        or a source that is not an address of the agent's host: the code stays unspent)."""
        with self._cond:
            if agent in self.placed:
                # No code: whoever enrols for it from its host's addresses, once.
                right, used = agent in self._placed_not_enrolled(), agent in self._spent
            else:
                spent = self._spent.get(agent)
                used = spent is not None and hmac.compare_digest(code.encode(),
                                                                 spent.encode())
                expected = self._codes.get(agent)
                right = expected is not None and hmac.compare_digest(code.encode(),
                                                                     expected.encode())
            allowed = None if self.sources is None else self.sources.get(agent, frozenset())
            seen = bare_ip(source or '')
            if allowed is not None and seen not in allowed:
                # From elsewhere, a code read from the spec is worth nothing: neither
                # spent nor, spent already, a reason to revoke the agent's token.
                if right or used:
                    self._foreign[agent] = '%s (the host\'s: %s)' % (
                        seen or source, ', '.join(sorted(allowed)) or 'none known')
                return None
            if used:
                self._code_used_twice(agent)
                return None
            if not right:
                return None
            self._spent[agent] = self._codes.pop(agent, '')
            self._enrolled_at[agent] = self.clock()
            token = self._tokens[agent] = secrets.token_urlsafe(32)
            return token

    def _placed_not_enrolled(self) -> FrozenSet[str]:
        """The placed agents that have not enrolled yet."""
        return frozenset(a for a in self.placed if a not in self._spent)

    def _settled_enrolment(self, agent: str) -> Optional[str]:
        """Why an agent's job is not handed over yet (None: it may be): its enrolment is
        complete and unique only once no second one came for a while, and every agent
        had its chance to enrol (a second enrolment fails the agent and the workload)."""
        now = self.clock()
        enrolled = self._enrolled_at.get(agent)
        if enrolled is None or now < enrolled + self.enrol_settle_s:
            return 'this agent\'s enrolment is not settled yet'
        waiting = [a for a, s in self.agents.items()
                   if a not in self._enrolled_at and s['state'] != AGENT_FAILED]
        launched = self._launched_at if self._launched_at is not None else now
        if waiting and now < launched + self.enrol_wait_s:
            return 'not every agent has enrolled yet'
        return None

    def _code_used_twice(self, agent: str) -> None:
        # Either someone read the code (or, for a placed agent, reached the endpoint from
        # its host) and enrolled before the agent, or the agent enrolled twice: whoever
        # holds the token may not be the agent, so it is revoked, no job is handed to
        # either, and the workload does not go on.
        self._tokens.pop(agent, None)
        why = ('agent %s enrolled twice; its token is revoked' % agent
               if agent in self.placed else
               'the one-time code of agent %s was used twice; its token is revoked' % agent)
        self._fail(agent, why)
        if self.start_at is None:
            self.refused = self.refused or why
        elif self.stopped is None:
            self.stopped = why
        self._cond.notify_all()

    def authorized(self, agent: str, token: str) -> bool:
        with self._cond:
            expected = self._tokens.get(agent)
        return expected is not None and hmac.compare_digest(token.encode(), expected.encode())

    def knows(self, agent: str) -> bool:
        return agent in self.agents

    def job_for(self, agent: str) -> Tuple[int, Dict[str, Any]]:
        """The agent's job once its enrolment is complete and unique (425 until then, 409
        when the workload will not start)."""
        with self._cond:
            if self.refused is not None:
                return 409, {'error': self.refused}
            if self.agents[agent]['state'] == AGENT_FAILED:
                return 410, {'error': self.agents[agent]['error'] or 'this agent failed'}
            unsettled = self._settled_enrolment(agent)
            if unsettled is not None:
                return 425, {'error': unsettled}
            self._set(agent, FETCHED)
        return 200, self.job_doc(agent)

    def job_doc(self, agent: str) -> Dict[str, Any]:
        # Each agent its own key space in the shared buckets.
        job = replace(self.job, key_prefix='%s%s/' % (self.job.key_prefix, agent),
                      cleanup=False, **self.server_daemons.job_fields(agent))
        if agent in self.samplers:
            # It reads /proc only: no S3 keys, no SSE-C key.
            job = replace(job, concurrency=0, processes=1, sample_only=True, target_offset=0,
                          ops=None, objects=0, rate=None, access_key='', secret_key='',
                          sse_c_key=None)
        else:
            job = replace(job, **agent_share(self.job, self.loaders.index(agent),
                                             len(self.loaders)))
        # JSON from here on: the agent channel's answer, which the agent parses once.
        fields = job.to_dict()
        if not job.processes and self.processes_max:
            fields['processes_max'] = self.processes_max
        return {'job': fields, 'start_timeout_s': self.ready_timeout_s,
                'ca_bundle_pem': self.ca_bundle}

    def ready(self, agent: str) -> None:
        with self._cond:
            self._set(agent, READY)

    def clock_sample(self, agent: str, found: ClockSample) -> None:
        if agent in self.agents:
            self.clocks.add(agent, found)

    def start_for(self, agent: str) -> Tuple[int, Dict[str, Any]]:
        with self._cond:
            if self.refused is not None:
                return 409, {'error': self.refused}
            if self.start_at is None:
                return 425, {'error': 'not all agents are ready yet'}
            if self.agents[agent]['state'] != READY:
                return 410, {'error': 'this agent missed the start'}
            self._set(agent, STARTED)
            return 200, {'start_at': self.start_at}

    def result(self, agent: str, body: Dict[str, Any]) -> None:
        with self._cond:
            if self.agents[agent]['state'] in (DONE, AGENT_FAILED):
                return  # the first word of an agent stands
            if body.get('ok') and isinstance(body.get('result'), dict):
                self.results[agent] = body['result']
                self._set(agent, DONE)
            else:
                self._fail(agent, str(body.get('error') or 'agent failed'))

    def progress(self, agent: str, body: Dict[str, Any]) -> Dict[str, Any]:
        """Keeps an agent's live figures; the answer asks it to stop when it must."""
        figures = {k: body.get(k) for k in ('elapsed_s', 'phase', 'ops_per_s', 'mib_per_s',
                                            'mean_ms', 'errors')}
        with self._cond:
            if self.agents[agent]['state'] == STARTED and agent not in self.samplers:
                self.live[agent] = (self.clock(), figures)
            return {'stop': self.stopped} if self.stopped else {}

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

    def _fail(self, agent: str, why: str) -> None:
        """Agent failed for `why`, unless it had ended already (its first end stands)."""
        state = self.agents[agent]
        if state['state'] not in (DONE, AGENT_FAILED):
            state['error'] = why
            state['state'] = AGENT_FAILED
        self._cond.notify_all()

    def _set(self, agent: str, state: str) -> None:
        if self.agents[agent]['state'] not in (DONE, AGENT_FAILED):
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
            if state['state'] in (DONE, AGENT_FAILED):
                continue
            try:
                problem = self.launcher.problem(agent)
            except Exception:  # the orchestrator may not answer now; ask again later
                continue
            if problem:
                self._fail(agent, 'died while %s (%s)' % (state['state'], problem))

    def _settled(self, states: Tuple[str, ...]) -> Callable[[], bool]:
        return lambda: all(a['state'] in states for a in self.agents.values())

    def run(self, channel: AgentChannel) -> 'AgentRunSummary':
        channel.open(self)
        try:
            with self._cond:
                codes = dict(self._codes)
            self._out = True
            with self._cond:
                self._launched_at = self.clock()
            self.launcher.launch({'server': channel.url, 'fingerprint': channel.fingerprint,
                                  'codes': codes, 'deadman_s': self.deadman_s})
            self._wait(self._settled((READY, DONE, AGENT_FAILED)),
                       self.clock() + self.ready_timeout_s)
            with self._cond:
                ready = [a for a, s in self.agents.items() if s['state'] == READY]
                self._judge_clocks(ready)
                if ready and not self._aborted and self.refused is None:
                    self.start_at = self.clock() + self.start_delay_s
                for agent, state in self.agents.items():
                    if state['state'] in (WAITING, FETCHED) or (
                            (self._aborted or self.refused) and state['state'] == READY):
                        self._fail(agent, 'aborted' if self._aborted else (
                            'not started: %s' % self.refused if self.refused else
                            ('never fetched its job' if state['state'] == WAITING
                             else 'not ready in time') + self._problem(agent)))
            if self.start_at is not None:
                length = self.job.warmup_s + float(self.job.duration_s or 0)
                self._wait(self._settled((DONE, AGENT_FAILED)),
                           self.start_at + length + self.result_grace_s)
            with self._cond:
                for agent, state in self.agents.items():
                    if state['state'] not in (DONE, AGENT_FAILED):
                        self._fail(agent, 'aborted' if self._aborted else
                                   'no result' + self._problem(agent))
        finally:
            channel.close()
            self.launcher.remove()
            self._out = False
        return self.summary()

    def agents_left(self) -> bool:
        """Whether agents may be left: launched (or tried) and not removed since."""
        return self._out

    def _judge_clocks(self, ready: List[str]) -> None:
        """The clocks of the agents that are ready, against the mgr's: a finding, and the
        reason not to start if it refuses."""
        best = self.clocks.best()
        self.clock_finding = clock_skew({a: s for a, s in best.items() if a in ready})
        if self.clock_finding is not None and self.clock_finding.level == Level.refuse:
            refused = refusal([self.clock_finding], 'to start the workload', force=False)
            self.refused = str(refused)

    def findings(self) -> List[Finding]:
        """What the agents' run found about itself (their clocks)."""
        return [self.clock_finding] if self.clock_finding is not None else []

    def _problem(self, agent: str) -> str:
        try:
            problem = self.launcher.problem(agent)
        except Exception as e:  # a report, not a reason to fail the run
            problem = str(e)
        if agent in self._foreign:
            problem = '; '.join(filter(None, [
                problem, 'it enrolled from %s, not an address of its host; an agent '
                'host reached from other addresses: ceph config set mgr '
                'mgr/rgwbench/agent_source_check false' % self._foreign[agent]]))
        return ' (%s)' % problem if problem else ''

    def summary(self) -> 'AgentRunSummary':
        merged: Optional[Dict[str, Any]] = None
        if self.results:
            merged = merge_results(list(self.results.values()))
        return AgentRunSummary(
            start_at=self.start_at, agents={a: dict(s) for a, s in sorted(self.agents.items())},
            result=merged, stopped=self.stopped, refused=self.refused,
            clocks={a: dump(s) for a, s in sorted(self.clocks.best().items())})


@dataclass
class AgentRunSummary:
    """What the agents of one workload did, as the mgr saw it."""
    agents: Dict[str, Dict[str, Any]]     # each agent's state, and its error if it failed
    result: Optional[Dict[str, Any]]      # the engines' results merged; None: no agent's
    start_at: Optional[float] = None      # the common start (the mgr's clock); None: none
    stopped: Optional[str] = None         # why the load was stopped early
    refused: Optional[str] = None         # why it was not started at all
    clocks: Dict[str, Dict[str, float]] = field(default_factory=dict)
    # the agents' clocks, PGs and figures found wanting (workload_runs.py)
    findings: List[Finding] = field(default_factory=list)


def prefill_allowance_s(job: Job) -> float:
    """How long the agents may take to prefill what the job reads, beyond the ready timeout."""
    if not (job.reads_prefilled and job.prefill):
        return 0.0
    allowance = job.object_count() / PREFILL_OBJECTS_S + \
        (job.working_set_bytes() or 0) / PREFILL_BYTES_S
    # A prefill bounded in time ends then (the requests under way within the ready timeout).
    return min(allowance, job.prefill_s) if job.prefill_s else allowance


def agents_failed(summary: AgentRunSummary) -> List[str]:
    return ['%s: %s' % (a, s['error']) for a, s in summary.agents.items()
            if s['state'] == AGENT_FAILED]
