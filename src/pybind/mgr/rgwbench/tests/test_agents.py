"""Agents and the module's agent channel, over real sockets on 127.0.0.1.

Agents run in threads here (the engine's own code, one process each in real
use); S3 is the engine's stub server.
"""
import hashlib
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from rgwbench.agents.channel import AgentChannel
from rgwbench.brake import AuthBrake
from rgwbench.agents.coordinator import DONE, FAILED, AgentRun, agents_failed
from rgwbench.loadgen.agent import AgentError, ModuleChannel, run_agent
from rgwbench.loadgen.s3stub import StubS3
from rgwbench.loadgen.workload import Job


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key='AK', secret_key='SK').start()
    yield s
    s.stop()


class ThreadLauncher:
    """Agents as threads; `behaviour` decides what each does."""

    def __init__(self, agents: List[str], behaviour: Optional[Dict[str, str]] = None) -> None:
        self.ids = agents
        self.behaviour = behaviour or {}
        self.threads: List[threading.Thread] = []
        self.dead: Dict[str, str] = {}
        self.removed = False

    def agent_ids(self) -> List[str]:
        return list(self.ids)

    def launch(self, config: Dict[str, str]) -> None:
        for agent in self.ids:
            what = self.behaviour.get(agent, 'work')
            if what == 'absent':
                continue
            thread = threading.Thread(target=self._agent, args=(agent, what, config), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _agent(self, agent: str, what: str, config: Dict[str, str]) -> None:
        channel = ModuleChannel(config['server'], config['fingerprint'], config['secret'], agent)
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


def job(stub: StubS3, **kw: Any) -> Dict[str, Any]:
    settings: Dict[str, Any] = dict(endpoint=stub.url, access_key='AK', secret_key='SK',
                                    op='put', size='4KiB', concurrency=2, duration_s=1.0,
                                    warmup_s=0.2, proc_stats=False)
    settings.update(kw)
    return Job(**settings).to_dict()


def run(stub: StubS3, certificate: Tuple[str, str], launcher: ThreadLauncher,
        **kw: Any) -> Tuple[AgentRun, Dict[str, Any]]:
    timeouts = {k: kw.pop(k) for k in ('ready_timeout_s', 'result_grace_s') if k in kw}
    agent_run = AgentRun(job(stub, **kw), launcher, start_delay_s=0.3, check_every_s=0.2,
                         **timeouts)
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    return agent_run, agent_run.run(channel)


def test_two_agents_one_start_results_merged(stub: StubS3,
                                             certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'])
    agent_run, summary = run(stub, certificate, launcher)
    assert {a: s['state'] for a, s in summary['agents'].items()} == {
        'host-a': DONE, 'host-b': DONE}
    merged = summary['result']
    parts = list(agent_run.results.values())
    assert merged['ops'] == sum(p['ops'] for p in parts) > 0
    assert merged['errors'] == 0
    assert merged['concurrency'] == 4
    # One common start for both agents.
    assert {p['start_at'] for p in parts} == {summary['start_at']}
    # Each agent wrote its own keys.
    keys = [k for objects in stub.buckets.values() for k in objects]
    assert any('/host-a/' in k for k in keys) and any('/host-b/' in k for k in keys)
    assert launcher.removed and agents_failed(summary) == []


def test_an_agent_that_never_comes_is_reported_not_awaited(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'], {'host-b': 'absent'})
    began = time.monotonic()
    _, summary = run(stub, certificate, launcher, ready_timeout_s=2.0)
    assert time.monotonic() - began < 15
    assert summary['agents']['host-a']['state'] == DONE
    assert summary['agents']['host-b'] == {'state': FAILED,
                                           'error': 'never fetched its job'}
    assert summary['result']['ops'] > 0


def test_an_agent_that_dies_is_reported_at_once(stub: StubS3,
                                                certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'], {'host-b': 'die-after-fetch'})
    began = time.monotonic()
    _, summary = run(stub, certificate, launcher, ready_timeout_s=60.0, result_grace_s=60.0)
    assert time.monotonic() - began < 20, 'the dead agent was waited for'
    assert summary['agents']['host-b']['state'] == FAILED
    assert 'killed by the test' in summary['agents']['host-b']['error']
    assert summary['agents']['host-a']['state'] == DONE


def test_an_agent_error_is_reported(stub: StubS3, certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a'])
    agent_run = AgentRun(job(stub, secret_key='WRONG'), launcher, check_every_s=0.2)
    summary = agent_run.run(AgentChannel('127.0.0.1', 0, *certificate))
    assert summary['result'] is None
    assert summary['agents']['host-a']['state'] == FAILED
    assert 'refused the credentials' in summary['agents']['host-a']['error']


def test_channel_refuses_strangers(stub: StubS3, certificate: Tuple[str, str]) -> None:
    agent_run = AgentRun(job(stub), ThreadLauncher(['host-a']))
    waited: List[float] = []
    channel = AgentChannel('127.0.0.1', 0, *certificate, brake=AuthBrake(sleep=waited.append))
    channel.open(agent_run)
    try:
        fp = channel.fingerprint
        for _ in range(2):
            assert ModuleChannel(channel.url, fp, 'not-the-secret', 'host-a').call(
                'GET', 'job')[0] == 401
        assert waited == [1.0, 2.0]  # each wrong secret from an address waits longer
        assert ModuleChannel(channel.url, fp, agent_run.secret, 'host-z').call(
            'GET', 'job')[0] == 403
        status, doc = ModuleChannel(channel.url, fp, agent_run.secret, 'host-a').call(
            'GET', 'job')
        assert status == 200 and doc['job']['key_prefix'].endswith('host-a/')
        assert waited == [1.0, 2.0]  # the right secret is never slowed down
        # Not every agent is ready: no start time yet.
        assert ModuleChannel(channel.url, fp, agent_run.secret, 'host-a').call(
            'GET', 'start')[0] == 425
        # An agent checks the endpoint's certificate against its fingerprint.
        other = hashlib.sha256(b'something else').hexdigest()
        with pytest.raises(AgentError, match='unexpected certificate'):
            ModuleChannel(channel.url, other, agent_run.secret, 'host-a').call('GET', 'job')
    finally:
        channel.close()


def test_an_aborted_run_stops_waiting_and_removes_its_agents(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a'])
    agent_run = AgentRun(job(stub, duration_s=6.0), launcher, start_delay_s=0.3,
                         check_every_s=0.2)
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    threading.Timer(1.5, agent_run.abort).start()
    began = time.monotonic()
    summary = agent_run.run(channel)
    assert time.monotonic() - began < 5  # not the 6 s the load would last
    assert summary['agents']['host-a'] == {'state': FAILED, 'error': 'aborted'}
    assert launcher.removed and summary['result'] is None
    for thread in launcher.threads:  # the agent (a thread here) ends on its own
        thread.join(30)


def test_agents_post_live_figures_while_they_run(stub: StubS3,
                                                 certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a'])
    agent_run = AgentRun(job(stub, duration_s=5.0, warmup_s=0.0), launcher,
                         start_delay_s=0.3, check_every_s=0.2)
    seen: List[Dict[str, Any]] = []

    def watch() -> None:
        while agent_run.start_at is None or time.time() < agent_run.start_at + 5.0:
            figures = agent_run.live_figures()
            if figures:
                seen.append(figures)
            time.sleep(0.2)
    watcher = threading.Thread(target=watch)
    watcher.start()
    summary = agent_run.run(AgentChannel('127.0.0.1', 0, *certificate))
    watcher.join(30)
    assert summary['agents']['host-a']['state'] == DONE
    assert seen and seen[-1]['agents'] == 1 and seen[-1]['ops_per_s'] > 0
    assert seen[-1]['phase'] == 'measuring'
    assert agent_run.live_figures() is None  # once the result is in, nothing is live
