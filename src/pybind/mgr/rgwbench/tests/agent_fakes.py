"""Agents for tests: agents as threads of the test's process, launchers that start none,
and the job, run and enrolment the agent tests share."""
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from rgwbench.agents.channel import AgentChannel
from rgwbench.agents.coordinator import AgentRun, AgentRunSummary
from rgwbench.loadgen.agent import ModuleChannel, enrolled_channel, run_agent
from rgwbench.loadgen.clock import AgentClock
from rgwbench.loadgen.workload import Job
from rgwbench.tests.s3stub import StubS3


class ThreadLauncher:
    """Agents as threads; `behaviour` decides what each does (`clock:S`: works, its clock
    S seconds off)."""
    started_by = 'mgr-process'
    samplers: Sequence[str] = ()

    def __init__(self, agents: List[str], behaviour: Optional[Dict[str, str]] = None) -> None:
        self.ids = agents
        self.behaviour = behaviour or {}
        self.threads: List[threading.Thread] = []
        self.dead: Dict[str, str] = {}
        self.removed = False

    def agent_ids(self) -> List[str]:
        return list(self.ids)

    def launch(self, config: Dict[str, Any]) -> None:
        for agent in self.ids:
            what = self.behaviour.get(agent, 'work')
            if what == 'absent':
                continue
            thread = threading.Thread(target=self._agent, args=(agent, what, config), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _agent(self, agent: str, what: str, config: Dict[str, Any]) -> None:
        clock = AgentClock(offset_s=float(what[len('clock:'):])) \
            if what.startswith('clock:') else AgentClock(offset_s=0.0)
        channel = enrolled_channel(config, agent, clock=clock)
        if what == 'die-after-fetch':
            channel.call('GET', 'job')
            self.dead[agent] = 'killed by the test'
            return
        try:
            run_agent(channel, poll_s=0.05)
        except Exception as e:
            channel.call('POST', 'result', {'ok': False, 'error': str(e)})

    def problem(self, agent: str) -> Optional[str]:
        return self.dead.get(agent)

    def remove(self) -> None:
        self.removed = True

    def leftovers(self) -> Dict[str, Any]:
        return {}


def job(stub: StubS3, **kw: Any) -> Job:
    settings: Dict[str, Any] = dict(endpoint=stub.url, access_key='AK', secret_key='SK',
                                    op='put', size='4KiB', concurrency=2, duration_s=1.0,
                                    warmup_s=0.2, proc_stats=False)
    settings.update(kw)
    return Job(**settings)


def run(stub: StubS3, certificate: Tuple[str, str], launcher: ThreadLauncher,
        **kw: Any) -> Tuple[AgentRun, AgentRunSummary]:
    timeouts = {k: kw.pop(k) for k in ('ready_timeout_s', 'result_grace_s', 'enrol_wait_s')
                if k in kw}
    agent_run = AgentRun(job(stub, **kw), launcher, start_delay_s=0.3, check_every_s=0.2,
                         **timeouts)
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    return agent_run, agent_run.run(channel)


def enrol(channel: AgentChannel, code: str, agent: str) -> Tuple[int, Dict[str, Any]]:
    return ModuleChannel(channel.url, channel.fingerprint, code, agent).call('POST', 'enrol', {})


class Mgr:
    """The mgr's maps, as the agents' sources read them."""

    def __init__(self, maps: Dict[str, Any]) -> None:
        self.maps = maps

    def get(self, name: str) -> Any:
        return self.maps.get(name)


class Launcher:
    """The orchestrator's launcher of one agent, on node1, that launches nothing."""
    started_by = 'orchestrator'
    samplers: List[str] = []

    def agent_ids(self) -> List[str]:
        return ['node1']

    def problem(self, agent: str) -> None:
        return None
