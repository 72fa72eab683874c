"""Agents and the module's agent channel, over real sockets on 127.0.0.1.

Agents run in threads here (the engine's own code, one process each in real
use); S3 is the engine's stub server.
"""
import hashlib
import os
import pathlib
import shutil
import socket
import ssl
import subprocess
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import pytest
from rgwbench.tests.agent_fakes import ThreadLauncher, enrol, job, run

from rgwbench.agents import channel as channel_module
from rgwbench.agents.channel import MAX_PER_SOURCE, AgentChannel
from rgwbench.web.brake import AuthBrake
from rgwbench.agents.coordinator import AGENT_FAILED, DONE, AgentRun, agents_failed
from rgwbench.loadgen.agent import AgentError, DeadMan, ModuleChannel
from rgwbench.cluster.sampled_daemons import ServerDaemon, ServerDaemons
from rgwbench.tests.s3stub import StubS3
from rgwbench.loadgen.workload import Job


def test_two_agents_one_start_results_merged(stub: StubS3,
                                             certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'])
    # A count of requests, not a time: on a starved machine (CI, load 36) one of two
    # agents once ended no request in 2 s.
    agent_run, summary = run(stub, certificate, launcher, concurrency=4, duration_s=None,
                             warmup_s=0.0, ops=40)
    assert {a: s['state'] for a, s in summary.agents.items()} == {
        'host-a': DONE, 'host-b': DONE}
    merged = summary.result
    assert merged is not None
    parts = list(agent_run.results.values())
    assert merged['ops'] == sum(p['ops'] for p in parts) == 40
    assert sorted(p['ops'] for p in parts) == [20, 20]
    assert merged['errors'] == 0
    # The job's concurrency is the total: each agent ran its half.
    assert [p['concurrency'] for p in parts] == [2, 2]
    assert merged['concurrency'] == 4
    assert merged['targets'] == [{'url': stub.url, 'workers': 4, 'ops': merged['ops'],
                                  'errors': 0}]
    # One common start for both agents.
    assert {p['start_at'] for p in parts} == {summary.start_at}
    # Each agent wrote its own keys.
    keys = [k for objects in stub.buckets.values() for k in objects]
    assert any('/host-a/' in k for k in keys) and any('/host-b/' in k for k in keys)
    assert launcher.removed and agents_failed(summary) == []


def test_each_agent_continues_the_round_robin_over_the_targets(stub: StubS3) -> None:
    urls = ['http://10.0.0.1:80', 'http://10.0.0.2:80', 'http://10.0.0.3:80']
    # 7 workers in all: host-a runs 3 of them, host-b the next 4.
    agent_run = AgentRun(job(stub, endpoints=urls, concurrency=7, rate=70.0, ops=700),
                         ThreadLauncher(['host-b', 'host-a']))
    jobs = {agent: Job.from_dict(agent_run.job_doc(agent)['job'])
            for agent in ('host-a', 'host-b')}
    assert [jobs[a].concurrency for a in ('host-a', 'host-b')] == [3, 4]
    assert [jobs[a].target_offset for a in ('host-a', 'host-b')] == [0, 3]
    assert [jobs[a].rate for a in ('host-a', 'host-b')] == [30.0, 40.0]
    assert [jobs[a].ops for a in ('host-a', 'host-b')] == [300, 400]
    workers = [jobs[a].target_of(index) for a in jobs for index in range(jobs[a].concurrency)]
    assert [workers.count(url) for url in urls] == [3, 2, 2]


def test_an_agent_runs_one_process_per_core_when_left_to_it(stub: StubS3) -> None:
    from rgwbench.loadgen.agent import with_processes
    from rgwbench.loadgen.workload import host_cores
    agent_run = AgentRun(job(stub, concurrency=64, processes=0), ThreadLauncher(['host-a']),
                         processes_max=3)
    fields = agent_run.job_doc('host-a')['job']
    assert fields['processes'] == 0 and fields['processes_max'] == 3
    assert with_processes(fields).processes == min(3, host_cores())
    # Never more than its concurrency, and a number given is kept.
    assert with_processes(dict(fields, concurrency=1)).processes == 1
    assert with_processes(dict(fields, processes=2)).processes == 2


def test_an_agent_that_never_comes_is_reported_not_awaited(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'], {'host-b': 'absent'})
    began = time.monotonic()
    # 5 s: the agent that does come must fetch its job in time on a starved machine too
    # (CI's saw host-a fail at 2 s, with unit tests running beside two clusters).
    # The others' jobs wait for it 1 s (enrol_wait_s): no longer.
    _, summary = run(stub, certificate, launcher, ready_timeout_s=5.0, enrol_wait_s=1.0)
    assert time.monotonic() - began < 25
    assert summary.agents['host-a']['state'] == DONE
    assert summary.agents['host-b'] == {'state': AGENT_FAILED,
                                        'error': 'never fetched its job'}
    assert summary.result is not None and summary.result['ops'] > 0


def test_an_agent_that_dies_is_reported_at_once(stub: StubS3,
                                                certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'], {'host-b': 'die-after-fetch'})
    began = time.monotonic()
    _, summary = run(stub, certificate, launcher, ready_timeout_s=60.0, result_grace_s=60.0)
    assert time.monotonic() - began < 20, 'the dead agent was waited for'
    assert summary.agents['host-b']['state'] == AGENT_FAILED
    assert 'killed by the test' in summary.agents['host-b']['error']
    assert summary.agents['host-a']['state'] == DONE


def test_an_agent_error_is_reported(stub: StubS3, certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a'])
    agent_run = AgentRun(job(stub, secret_key='WRONG'), launcher, check_every_s=0.2)
    summary = agent_run.run(AgentChannel('127.0.0.1', 0, *certificate))
    assert summary.result is None
    assert summary.agents['host-a']['state'] == AGENT_FAILED
    assert 'refused the credentials' in summary.agents['host-a']['error']


def test_channel_refuses_strangers(stub: StubS3, certificate: Tuple[str, str]) -> None:
    agent_run = AgentRun(job(stub), ThreadLauncher(['host-a', 'host-b']), enrol_settle_s=0.0,
                         enrol_wait_s=0.0)
    codes = dict(agent_run._codes)
    # A first wait of 30 s: a server that slept it would take that long to answer.
    brake = AuthBrake(first_s=30.0)
    channel = AgentChannel('127.0.0.1', 0, *certificate, brake=brake)
    channel.open(agent_run)
    try:
        fp = channel.fingerprint
        began = time.monotonic()
        assert enrol(channel, 'not-the-code', 'host-a')[0] == 401
        # Before its source has waited, a wrong code is refused at once, not counted.
        assert enrol(channel, 'not-the-code', 'host-a')[0] == 429
        assert time.monotonic() - began < 15.0  # nothing sleeps in the server
        assert 0 < brake.locked_for('127.0.0.1') <= 30.0
        # A code serves only its own agent, and only once.
        assert enrol(channel, codes['host-b'], 'host-a')[0] in (401, 429)
        status, given = enrol(channel, codes['host-a'], 'host-a')
        assert status == 200 and given['token'] not in codes.values()
        assert brake.locked_for('127.0.0.1') == 0.0  # the right code always passes
        token = given['token']
        # The code is no token, and a token serves only the agent it was given to.
        assert ModuleChannel(channel.url, fp, codes['host-a'], 'host-a').call(
            'GET', 'job')[0] in (401, 429)
        assert ModuleChannel(channel.url, fp, token, 'host-b').call(
            'GET', 'job')[0] in (401, 429)
        assert ModuleChannel(channel.url, fp, token, 'host-b').call(
            'POST', 'result', {'ok': True, 'result': {}})[0] in (401, 429)
        status, doc = ModuleChannel(channel.url, fp, token, 'host-a').call('GET', 'job')
        assert status == 200 and doc['job']['key_prefix'].endswith('host-a/')
        # Not every agent is ready: no start time yet.
        assert ModuleChannel(channel.url, fp, token, 'host-a').call('GET', 'start')[0] == 425
        # An agent checks the endpoint's certificate against its fingerprint.
        other = hashlib.sha256(b'something else').hexdigest()
        with pytest.raises(AgentError, match='unexpected certificate'):
            ModuleChannel(channel.url, other, token, 'host-a').call('GET', 'job')
        assert agent_run.agents['host-b']['state'] == 'waiting'  # nobody spoke as host-b
    finally:
        channel.close()


def test_a_code_used_twice_revokes_its_token_and_the_workload_does_not_start(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    agent_run = AgentRun(job(stub), ThreadLauncher(['host-a', 'host-b']))
    codes = dict(agent_run._codes)
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    channel.open(agent_run)
    try:
        # Someone who read host-a's code enrols before host-a does: no job yet (the
        # enrolment is not settled), so no S3 key...
        status, stolen = enrol(channel, codes['host-a'], 'host-a')
        assert status == 200
        fp = channel.fingerprint
        status, answer = ModuleChannel(channel.url, fp, stolen['token'], 'host-a').call(
            'GET', 'job')
        assert status == 425 and 'job' not in answer
        # ...then host-a comes with the same code: refused, and the token is revoked.
        assert enrol(channel, codes['host-a'], 'host-a')[0] == 401
        assert ModuleChannel(channel.url, fp, stolen['token'], 'host-a').call(
            'GET', 'job')[0] in (401, 429)
    finally:
        channel.close()
    why = 'the one-time code of agent host-a was used twice; its token is revoked'
    assert agent_run.agents['host-a'] == {'state': AGENT_FAILED, 'error': why}
    assert agent_run.refused == why
    # host-b is untouched, and a wrong code is no reuse.
    assert agent_run.agents['host-b']['state'] == 'waiting'
    assert agent_run.enrol('host-b', 'not-the-code') is None
    assert agent_run.agents['host-b']['state'] == 'waiting'


def token_of(agent_run: AgentRun, agent: str) -> str:
    """The token an agent gets once it enrols (what its code would have brought it)."""
    token = agent_run.enrol(agent, agent_run._codes[agent])
    assert token is not None
    return token


def tls_to(channel: AgentChannel) -> ssl.SSLSocket:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    host, port = channel.url[len('https://'):].rsplit(':', 1)
    return context.wrap_socket(socket.create_connection((host, int(port)), timeout=10))


def progress_post_status(stub: StubS3, certificate: Tuple[str, str], length: str,
                         body: bytes) -> bytes:
    """The status an agent's progress POST of `Content-Length: length` and `body` gets."""
    agent_run = AgentRun(job(stub), ThreadLauncher(['host-a']))
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    channel.open(agent_run)
    try:
        with tls_to(channel) as sock:
            sock.sendall(('POST /agent/v1/progress HTTP/1.1\r\nHost: x\r\nAuthorization: '
                          'Bearer %s\r\nX-Agent-Id: host-a\r\nContent-Length: %s\r\n\r\n'
                          % (token_of(agent_run, 'host-a'), length)).encode() + body)
            head = sock.recv(4096)
        assert head.startswith(b'HTTP/1.'), head
        return head.split(b' ')[1]
    finally:
        channel.close()


@pytest.mark.parametrize('length', ['-1', 'x', '1e3'])
def test_a_body_of_a_bad_length_is_refused_unread(stub: StubS3, certificate: Tuple[str, str],
                                                  length: str) -> None:
    # A server reading to the end would not answer.
    assert progress_post_status(stub, certificate, length, b'{' * 4096) == b'400'


def test_a_body_that_never_arrives_gets_a_timeout_answer(
        stub: StubS3, certificate: Tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Before, the read's timeout ended the request with no answer at all.
    monkeypatch.setattr(channel_module, 'TIMEOUT_S', 1)
    assert progress_post_status(stub, certificate, '10', b'{"a"') == b'408'


def test_connections_are_bounded_per_source(stub: StubS3,
                                            certificate: Tuple[str, str]) -> None:
    agent_run = AgentRun(job(stub), ThreadLauncher(['host-a']))
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    channel.open(agent_run)
    host, port = channel.url[len('https://'):].rsplit(':', 1)
    token = token_of(agent_run, 'host-a')
    idle = [socket.create_connection((host, int(port)), timeout=10)
            for _ in range(MAX_PER_SOURCE)]
    try:
        time.sleep(0.5)  # each has its thread, waiting for a handshake
        with socket.create_connection((host, int(port)), timeout=10) as extra:
            assert extra.recv(1) == b''  # closed at once, no thread taken
    finally:
        for sock in idle:
            sock.close()
    status, deadline = 0, time.monotonic() + 10
    while status != 200 and time.monotonic() < deadline:  # slots come back as idle ones end
        try:
            status = ModuleChannel(channel.url, channel.fingerprint, token,
                                   'host-a').call('GET', 'job')[0]
        except OSError:
            time.sleep(0.2)
    channel.close()
    assert status == 200


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
    assert summary.agents['host-a'] == {'state': AGENT_FAILED, 'error': 'aborted'}
    assert launcher.removed and summary.result is None
    for thread in launcher.threads:  # the agent (a thread here) ends on its own
        thread.join(30)


def test_agents_post_live_figures_while_they_run(stub: StubS3,
                                                 certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a'])
    agent_run = AgentRun(job(stub, duration_s=5.0, warmup_s=0.0), launcher,
                         start_delay_s=0.3, check_every_s=0.2)
    seen: List[Dict[str, Any]] = []
    ended = threading.Event()

    # Watched for the whole run: on a starved machine (Tentacle's CI, load 40) the
    # agent's posts came late, none within the first 5 s after the start.
    def watch() -> None:
        while not ended.is_set():
            figures = agent_run.live_figures()
            if figures:
                seen.append(figures)
            time.sleep(0.2)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        summary = agent_run.run(AgentChannel('127.0.0.1', 0, *certificate))
    finally:
        ended.set()
        watcher.join(30)
    assert summary.agents['host-a']['state'] == DONE
    measuring = [f for f in seen if f['phase'] == 'measuring']
    assert measuring and measuring[-1]['agents'] == 1 and measuring[-1]['ops_per_s'] > 0, seen
    assert agent_run.live_figures() is None  # once the result is in, nothing is live


def test_the_launch_config_carries_the_dead_man_limit(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    configs: List[Dict[str, Any]] = []

    class Recording(ThreadLauncher):
        def launch(self, config: Dict[str, Any]) -> None:
            configs.append(config)
    agent_run = AgentRun(job(stub), Recording(['host-a']), ready_timeout_s=0.2,
                         deadman_s=17.0)
    agent_run.run(AgentChannel('127.0.0.1', 0, *certificate))
    assert configs[0]['deadman_s'] == 17.0


def test_an_agent_counts_only_its_own_modules_answers_as_alive(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    agent_run = AgentRun(job(stub), ThreadLauncher(['host-a']))
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    channel.open(agent_run)
    try:
        token = token_of(agent_run, 'host-a')
        mine = ModuleChannel(channel.url, channel.fingerprint, token, 'host-a')
        stranger = ModuleChannel(channel.url, channel.fingerprint, 'wrong', 'host-a')
        mine.last_answer = stranger.last_answer = time.monotonic() - 100
        assert mine.call('GET', 'alive') == (200, {})
        assert mine.silent_for() < 5
        assert stranger.call('GET', 'alive')[0] in (401, 429)
        assert stranger.silent_for() >= 100   # a module that does not know the token
    finally:
        channel.close()
    # The channel is closed: nothing answers, the silence grows.
    mine.last_answer = time.monotonic() - 100
    with pytest.raises(OSError):
        mine.call('GET', 'alive')
    assert mine.silent_for() >= 100


class Silent:
    """A module that answers until `die` is set."""

    def __init__(self) -> None:
        self.last_answer = time.monotonic()
        self.dead: Optional[str] = None
        self.gone = threading.Event()

    def silent_for(self) -> float:
        return time.monotonic() - self.last_answer

    def call(self, method: str, what: str, body: Optional[Dict[str, Any]] = None,
             timeout: Optional[float] = None) -> Tuple[int, Dict[str, Any]]:
        assert (method, what) == ('GET', 'alive')
        if self.gone.is_set():
            raise ConnectionRefusedError('nobody listens')
        self.last_answer = time.monotonic()
        return 200, {}


def test_the_dead_man_switch_leaves_a_module_that_answers_alone() -> None:
    module, stopped, left = Silent(), [], []  # type: Silent, List[str], List[int]
    with DeadMan(module, 0.5, stop=stopped.append, leave=left.append,  # type: ignore
                 every_s=0.05, grace_s=0.1):
        time.sleep(1.5)
    assert stopped == [] and left == [] and module.dead is None


def test_the_dead_man_switch_stops_the_load_then_leaves_once_the_module_is_silent() -> None:
    module, stopped, left = Silent(), [], []  # type: Silent, List[str], List[int]
    with DeadMan(module, 0.5, stop=stopped.append, leave=left.append,  # type: ignore
                 every_s=0.05, grace_s=0.3):
        time.sleep(0.3)
        module.gone.set()
        deadline = time.monotonic() + 5
        while not left and time.monotonic() < deadline:
            time.sleep(0.02)
        # From the module's last answer (on a starved machine it may come well before
        # the test makes the module go silent).
        took = time.monotonic() - module.last_answer
    assert len(stopped) == 1 and 'has not answered for' in stopped[0]
    assert left == [3]
    assert 0.5 + 0.3 <= took < 0.5 + 2 * 0.05 + 0.3 + 0.5, took
    assert module.dead == stopped[0]


def test_an_agent_taken_for_dead_calls_nothing_more(stub: StubS3,
                                                    certificate: Tuple[str, str]) -> None:
    mine = ModuleChannel('https://127.0.0.1:1', 'ab' * 32, 'token', 'host-a')
    mine.dead = 'the mgr has not answered for 61 s'
    began = time.monotonic()
    with pytest.raises(AgentError, match='has not answered for 61 s'):
        mine.call('POST', 'result', {'ok': True})
    assert time.monotonic() - began < 0.5


def test_each_agent_runs_its_share_of_the_rate_and_the_working_set(stub: StubS3) -> None:
    agent_run = AgentRun(job(stub, op='get', rate=90.0, objects=1000, concurrency=6),
                         ThreadLauncher(['host-c', 'host-a', 'host-b']))
    jobs = [Job.from_dict(agent_run.job_doc(agent)['job'])
            for agent in ('host-a', 'host-b', 'host-c')]
    assert [j.rate for j in jobs] == [30.0, 30.0, 30.0]
    assert [j.objects for j in jobs] == [333, 333, 334]
    # a closed loop and the engine's own prefill size stay as they are
    plain = AgentRun(job(stub, op='get'), ThreadLauncher(['host-a', 'host-b']))
    assert {(j['rate'], j['objects']) for j in (plain.job_doc(a)['job']
                                                for a in ('host-a', 'host-b'))} == {(None, 0)}


def test_a_larger_prefill_is_given_more_time_to_be_ready(stub: StubS3) -> None:
    launcher = ThreadLauncher(['host-a'])
    assert AgentRun(job(stub, op='put'), launcher).ready_timeout_s == 180.0
    small = AgentRun(job(stub, op='get', objects=100), launcher).ready_timeout_s
    large = AgentRun(job(stub, op='get', objects=100000, size='1MiB'), launcher).ready_timeout_s
    assert 180.0 < small < 200.0
    assert large == pytest.approx(180.0 + 100000 / 100.0 + 100000 / 50.0)
    assert AgentRun(job(stub, op='get'), launcher, ready_timeout_s=5.0).ready_timeout_s == 5.0


def test_agents_merge_into_the_whole_rate_and_working_set(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    launcher = ThreadLauncher(['host-a', 'host-b'])
    # A rate the starved test process keeps beside the integration tests (40/s
    # made 25/s there).
    _, summary = run(stub, certificate, launcher, op='get', rate=10.0, objects=20,
                     duration_s=4.0, warmup_s=0.0)
    merged = summary.result
    assert merged is not None
    assert (merged['mode'], merged['rate'], merged['objects']) == ('open', 10.0, 20)
    assert merged['working_set_bytes'] == 20 * 4096
    # 40 at the rate; a closed loop of 2 against the stub makes hundreds. A test process
    # starved beside the integration tests sent 34 (late requests fall out of the window).
    assert 25 <= merged['ops'] <= 45, merged['ops']


class WithSamplers(ThreadLauncher):
    """Agents as threads, of which `samplers` only sample their host's daemons."""

    def __init__(self, loaders: List[str], samplers: List[str]) -> None:
        super().__init__(loaders + samplers)
        self.samplers = list(samplers)


def nice_ahead() -> None:
    try:
        os.nice(-10)
    except OSError:
        pass


def test_a_sampling_agent_sends_no_load_and_adds_nothing_to_the_totals(
        stub: StubS3, certificate: Tuple[str, str], tmp_path: pathlib.Path) -> None:
    launcher = WithSamplers(['host-b', 'host-a'], ['host-s'])
    agent_run = AgentRun(job(stub, op='get', rate=8.0, objects=20, concurrency=4), launcher)
    sampler = Job.from_dict(agent_run.job_doc('host-s')['job'])
    assert (sampler.sample_only, sampler.concurrency, sampler.processes, sampler.rate,
            sampler.objects) == (True, 0, 1, None, 0)
    loaders = [Job.from_dict(agent_run.job_doc(a)['job']) for a in ('host-a', 'host-b')]
    assert [(j.concurrency, j.target_offset, j.rate, j.objects) for j in loaders] == [
        (2, 0, 4.0, 10), (2, 2, 4.0, 10)]

    # A whole run: the sampler samples its host's daemon (a spinning process named and
    # configured as an HAProxy) over the measured window, from the common start, and
    # posts a result with no operation; the totals are the loaders'.
    folder = tmp_path / 'haproxy.test1'
    folder.mkdir()
    program = str(tmp_path / 'haproxy')
    shutil.copy('/usr/bin/yes', program)
    # Ahead of the other processes where it may be (root): on a starved machine (CI, at
    # load 42) a spinner of equal weight got no tick of CPU in the sampled window.
    spinning = subprocess.Popen([program, '--', '-f', str(folder / 'haproxy.cfg')],
                                stdout=subprocess.DEVNULL, preexec_fn=nice_ahead)
    try:
        agent_run = AgentRun(
            job(stub, op='get', rate=8.0, objects=20, concurrency=4, duration_s=2.0,
                warmup_s=0.2, proc_stats=True),
            launcher, start_delay_s=0.3, check_every_s=0.2,
            server_daemons=ServerDaemons((ServerDaemon('haproxy.test1', 'host-s'),)))
        summary = agent_run.run(AgentChannel('127.0.0.1', 0, *certificate))
    finally:
        spinning.kill()
        spinning.wait()
    assert {a: s['state'] for a, s in summary.agents.items()} == {
        'host-a': DONE, 'host-b': DONE, 'host-s': DONE}
    alone = agent_run.results['host-s']
    assert alone['sample_only'] and alone['ops'] == 0
    assert (alone['concurrency'], alone['processes'], alone['rate'], alone['objects']) == (
        0, 0, 0, 0)
    assert alone['start_at'] == summary.start_at
    # (Its window starts and ends at the sampler's ticks, a second apart, each late
    # by as much as the machine starves the sampler: CI measured 1.1 s and 2.9 s of
    # the 2. Its CPU figure is per second of that same window.)
    (sampled,) = alone['server'].values()
    assert 0.5 < sampled['haproxy']['window_s'] <= 4.0
    assert [d['daemon'] for d in sampled['haproxy']['per_daemon']] == ['haproxy.test1'], sampled
    # Read from the process itself: its memory (its CPU in a window of a second or two
    # may be no tick at all on a starved machine: CI at load 80 saw 0.0).
    assert sampled['haproxy']['rss_mib'] > 0 and sampled['haproxy']['cpu_s'] >= 0, sampled
    merged = summary.result
    assert merged is not None
    assert (merged['concurrency'], merged['processes'], merged['rate'], merged['objects']) == (
        4, 2, 8.0, 20)
    shown = ('ops', 'errors', 'error', 'error_samples', 'elapsed_s', 'start_at')
    assert merged['ops'] == sum(agent_run.results[a]['ops'] for a in ('host-a', 'host-b')) > 0, {
        a: {k: agent_run.results[a].get(k) for k in shown} for a in ('host-a', 'host-b')}
    assert merged['targets'] == [{'url': stub.url, 'workers': 4, 'ops': merged['ops'],
                                  'errors': 0}]
    # It made no bucket and wrote nothing of its own.
    keys = [k for objects in stub.buckets.values() for k in objects]
    assert not any('/host-s/' in k for k in keys)
