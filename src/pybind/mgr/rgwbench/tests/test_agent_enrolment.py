"""No secret an agent gets is reachable from what a read-only user reads: placed agents'
specs hold no code, a job goes only to an agent whose enrolment is complete and unique,
sampling agents get no keys, and the check of where an agent enrols from fails closed."""
import json
from typing import Any, Dict, List, Optional

from rgwbench.tests.agent_fakes import Launcher, Mgr

from rgwbench.agents.coordinator import AGENT_FAILED, AgentRun
from rgwbench.agents.launchers import (LocalLauncher, LocalWithSamplers, OrchestratorLauncher)
from rgwbench.agents.sources import enrolment_sources
from rgwbench.loadgen.workload import Job

CODE = 'the-one-time-code-of-the-local-agent'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Applied:
    """An orchestrator that keeps the specs it is given."""

    def __init__(self) -> None:
        self.specs: List[Any] = []

    def apply(self, specs: List[Any], no_overwrite: bool = False) -> Any:
        self.specs += specs
        return None

    def remove_service(self, service_name: str, force: bool = False) -> Any:
        return None

    def list_daemons(self, service_name: Optional[str] = None, daemon_type: Optional[str] = None,
                     daemon_id: Optional[str] = None, host: Optional[str] = None,
                     refresh: bool = False) -> Any:
        return []


class FolderLauncher(LocalLauncher):
    """The local agent, its config written as usual, no process started."""
    written: Dict[str, Any] = {}

    def launch(self, config: Dict[str, Any]) -> None:
        FolderLauncher.written = config


def test_no_code_is_in_the_spec_of_placed_agents() -> None:
    orch = Applied()
    sampling = OrchestratorLauncher(orch, [], 'image', lambda r: r, samplers=['h2'])
    both = LocalWithSamplers(FolderLauncher('h1'), sampling)
    run = AgentRun(Job(op='put', concurrency=1), both)
    # the local agent has a code (a file of the mgr's user); the placed sampler none
    assert set(run._codes) == {'h1'} and run.placed == {'h2'}
    both.launch({'server': 'https://10.0.0.1:1', 'fingerprint': 'ab',
                 'codes': dict(run._codes), 'deadman_s': 60})
    assert FolderLauncher.written['codes'] == run._codes
    (spec,) = orch.specs
    exported = json.dumps(spec.to_json())
    assert run._codes['h1'] not in exported and 'codes' not in exported


def enrolled(run: AgentRun, agent: str, code: str = '', source: str = '10.0.0.11') -> str:
    token = run.enrol(agent, code, source)
    assert token is not None
    return token


def test_a_job_waits_until_the_enrolment_is_settled_and_every_agent_had_its_chance() -> None:
    clock = Clock()
    run = AgentRun(Job(op='put', concurrency=1, access_key='AK', secret_key='SK'),
                   Launcher(), clock=clock,  # type: ignore[arg-type]
                   sources={'node1': frozenset({'10.0.0.11'})}, enrol_settle_s=2.0)
    enrolled(run, 'node1')
    status, answer = run.job_for('node1')
    assert status == 425 and 'job' not in answer
    clock.now += 2.0
    status, answer = run.job_for('node1')
    assert status == 200 and answer['job']['secret_key'] == 'SK'


def test_a_second_enrolment_before_the_job_is_handed_over_fails_closed() -> None:
    """Whoever reached the endpoint from the agent's host enrols first: the agent's own
    enrolment follows, and neither is given the job (its S3 and SSE-C keys)."""
    clock = Clock()
    run = AgentRun(Job(op='put', concurrency=1, access_key='AK', secret_key='SK'),
                   Launcher(), clock=clock,  # type: ignore[arg-type]
                   sources={'node1': frozenset({'10.0.0.11'})})
    first = enrolled(run, 'node1')
    clock.now += 0.5
    assert run.enrol('node1', '', '10.0.0.11') is None
    clock.now += 60.0
    assert not run.authorized('node1', first)
    status, answer = run.job_for('node1')
    assert status == 409 and 'enrolled twice' in answer['error']
    assert run.agents['node1']['state'] == AGENT_FAILED
    assert run.refused == 'agent node1 enrolled twice; its token is revoked'


def test_a_sampling_agent_gets_no_keys() -> None:
    orch = Applied()
    launcher = OrchestratorLauncher(orch, ['h1'], 'image', lambda r: r, samplers=['h2'])
    run = AgentRun(Job(endpoint='http://10.0.0.1:80', op='put', concurrency=1,
                       access_key='AK', secret_key='SK', sse_c_key='c' * 44),
                   launcher, enrol_settle_s=0.0, enrol_wait_s=0.0)
    sampler = run.job_doc('h2')['job']
    assert sampler['sample_only'] and not sampler['access_key'] and \
        not sampler['secret_key'] and not sampler['sse_c_key']
    Job.from_dict(sampler).validate()       # an agent takes it as it is
    loader = run.job_doc('h1')['job']
    assert (loader['access_key'], loader['secret_key']) == ('AK', 'SK')


def test_the_source_check_fails_closed_when_the_maps_cannot_be_read() -> None:
    class Unreadable(Mgr):
        def get(self, name: str) -> Any:
            raise RuntimeError('mgr map not available')
    warned: List[str] = []
    sources = enrolment_sources(Unreadable({}), dict, ['node1'], warned.append)
    assert sources == {'node1': frozenset()}
    assert warned and 'no agent can enrol now' in warned[0]
    run = AgentRun(Job(op='put', concurrency=1), Launcher(),  # type: ignore[arg-type]
                   sources=sources)
    assert run.enrol('node1', '', '10.0.0.11') is None
    assert run.enrol('node1', '', '127.0.0.1') is None
