"""A load agent: the engine run on a cluster host under the mgr module's control.

    python3 engine.pyz-on-sys.path -m loadgen.agent --config agent.json

The config names the module's agent endpoint (HTTPS), the SHA-256
fingerprint of its certificate (the agent trusts that certificate and no
other) and a one-time code for each agent of the run. The agent then

0. enrols with its code (POST /agent/v1/enrol; a placed agent has none) and is
   given a token of its own, sent as a bearer token from then on (the code is spent),
1. fetches its job (GET /agent/v1/job; 425 until its enrolment is settled),
2. creates the buckets and prefills what it will read, and says so
   (POST /agent/v1/ready),
3. waits for the common start time every agent gets (GET /agent/v1/start),
4. runs the load, posting its live figures every few seconds
   (POST /agent/v1/progress; an answer {"stop": why} ends the load early,
   keeping what it measured), and posts its result (POST /agent/v1/result).

Any failure is posted as an error result, so that the module reports it
instead of waiting for the agent.

A dead-man switch asks the module (GET /agent/v1/alive) every few seconds
from the enrolment on: once the module has not answered for `deadman_s`
(from the config, 60 s by default) the agent stops its load and exits, so
that a mgr that died leaves no load running on RGW for long.
"""
import argparse
import hashlib
import http.client
import json
import os
import signal
import socket
import ssl
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import prepare
from .clock import MGR_CLOCK, AgentClock
from .errors import LoadgenError
from .runner import run_load
from .workload import Job

API = '/agent/v1/'
DEADMAN_S = 60.0
# How long an agent waits for its job to be handed over (ENROL_WAIT_S of the module, and
# more).
JOB_WAIT_S = 120.0


class AgentError(Exception):
    pass


def agent_id() -> str:
    # cephadm sets NODE_NAME in every container to the host's name.
    return os.environ.get('NODE_NAME') or socket.gethostname()


def machine_id() -> str:
    """Which machine this is: agents on one machine share its /proc figures."""
    for path in ('/proc/sys/kernel/random/boot_id', '/etc/machine-id'):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            continue
    return socket.gethostname()


class ModuleChannel:
    """Requests to the module's agent endpoint, over TLS pinned to one certificate."""

    def __init__(self, server: str, fingerprint: str, token: str, agent: str,
                 timeout: float = 30.0, clock: Optional[AgentClock] = None) -> None:
        if not server.startswith('https://'):
            raise AgentError('the agent endpoint must be https, got %r' % server)
        host, _, port = server[len('https://'):].rstrip('/').rpartition(':')
        self.host, self.port = host.strip('[]'), int(port)
        self.fingerprint = fingerprint.replace(':', '').lower()
        self.headers = {'Authorization': 'Bearer ' + token, 'X-Agent-Id': agent,
                        'Content-Type': 'application/json'}
        self.timeout = timeout
        # Stamps every request with this agent's clock, for the module to compare with its own.
        self.clock = clock or AgentClock()
        # When the module last answered (see `DeadMan`), and why it is taken for dead.
        self.last_answer = time.monotonic()
        self.dead: Optional[str] = None
        # Trust comes from the pinned fingerprint, checked on every connection.
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE

    def silent_for(self) -> float:
        return time.monotonic() - self.last_answer

    def call(self, method: str, what: str, body: Optional[Dict[str, Any]] = None,
             timeout: Optional[float] = None) -> Tuple[int, Dict[str, Any]]:
        if self.dead is not None:
            raise AgentError(self.dead)
        conn = http.client.HTTPSConnection(self.host, self.port,
                                           timeout=timeout or self.timeout,
                                           context=self.context)
        try:
            conn.connect()
            assert conn.sock is not None
            cert = conn.sock.getpeercert(binary_form=True)
            if not cert or hashlib.sha256(cert).hexdigest() != self.fingerprint:
                raise AgentError('the agent endpoint %s:%d has an unexpected certificate'
                                 % (self.host, self.port))
            payload = json.dumps(body).encode() if body is not None else None
            # Stamped once connected: the TLS handshake is no part of the round trip.
            conn.request(method, API + what, body=payload,
                         headers=dict(self.headers, **self.clock.headers()))
            resp = conn.getresponse()
            self.clock.received(resp.getheader(MGR_CLOCK))
            data = resp.read()
        finally:
            conn.close()
        if resp.status < 500 and resp.status not in (401, 429):
            # It knows this agent's token: the module of this agent's run answered.
            self.last_answer = time.monotonic()
        try:
            return resp.status, json.loads(data or b'{}')
        except ValueError:
            return resp.status, {}


def enrolled_channel(config: Dict[str, Any], agent: str,
                     clock: Optional[AgentClock] = None) -> ModuleChannel:
    """The channel with this agent's own token, for the one-time code in its config (a
    placed agent has none: its config is its spec, which read-only users read; the
    module takes it from its host's addresses only)."""
    code = (config.get('codes') or {}).get(agent) or ''
    server, fingerprint = config['server'], config['fingerprint']
    clock = clock or AgentClock()
    answer = _expect(ModuleChannel(server, fingerprint, str(code), agent, clock=clock).call(
        'POST', 'enrol', {}), 'enrolling')
    return ModuleChannel(server, fingerprint, str(answer['token']), agent, clock=clock)


def _expect(answer: Tuple[int, Dict[str, Any]], what: str) -> Dict[str, Any]:
    status, body = answer
    if status != 200:
        raise AgentError('%s: HTTP %d %s' % (what, status, body.get('error', '')))
    return body


class DeadMan:
    """Ends the agent once the module has not answered it for `limit_s`.

    A thread asks the module every `every_s` whether it is there; any answer
    of the module to this agent counts. Once it has been silent for longer
    than the limit, the channel is taken for dead (every later call fails at
    once), `stop` is called (the load ends as on SIGINT), and if the agent is
    still there `grace_s` later, `leave` ends the process: its worker
    processes end when they see their parent gone. The agent is gone at most
    about limit + 2 * every + grace seconds after the module's last answer.
    """

    def __init__(self, channel: ModuleChannel, limit_s: float, *, stop: Callable[[str], None],
                 leave: Callable[[int], None] = os._exit, every_s: Optional[float] = None,
                 grace_s: float = 10.0) -> None:
        self.channel = channel
        self.limit_s = limit_s
        self.stop = stop
        self.leave = leave
        self.every_s = every_s if every_s is not None else min(5.0, limit_s / 4)
        self.grace_s = grace_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name='rgwbench-deadman',
                                        daemon=True)

    def __enter__(self) -> 'DeadMan':
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()

    def _watch(self) -> None:
        while not self._done.wait(self.every_s):
            try:
                self.channel.call('GET', 'alive', timeout=self.every_s)
            except (OSError, AgentError):
                pass  # counted by how long the module has been silent
            if self.channel.silent_for() <= self.limit_s or self._done.is_set():
                continue
            why = 'the mgr has not answered for %d s (more than the agent_deadman_timeout ' \
                  'of %d s)' % (self.channel.silent_for(), self.limit_s)
            self.channel.dead = why
            self.stop(why)
            if not self._done.wait(self.grace_s):
                self.leave(3)
            return


class LivePoster:
    """Posts the engine's latest live figures to the module, from a thread of its own.

    The engine only hands over a dict about twice a second; the post (one
    HTTPS request every few seconds) never holds up the load.
    """

    def __init__(self, channel: ModuleChannel, every_s: float = 3.0,
                 stop: Optional[Callable[[], None]] = None) -> None:
        self.channel = channel
        self.every_s = every_s
        # Called once when the module answers that the load must end now (the
        # capacity guard): the load ends as on SIGINT, with what it measured.
        self.stop = stop
        self.stop_asked: Optional[str] = None
        self.latest: Optional[Dict[str, Any]] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._post, name='rgwbench-live', daemon=True)

    def __enter__(self) -> 'LivePoster':
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(self.every_s + self.channel.timeout)

    def update(self, figures: Dict[str, Any]) -> None:
        self.latest = figures

    def _post(self) -> None:
        sent = None
        while not self._stop.wait(self.every_s):
            latest = self.latest
            if latest is not None and latest is not sent:
                try:
                    _, answer = self.channel.call('POST', 'progress', latest)
                except (OSError, AgentError):
                    answer = {}  # live figures are a courtesy; the result is what counts
                sent = latest
                if answer.get('stop') and self.stop_asked is None:
                    self.stop_asked = str(answer['stop'])
                    if self.stop is not None:
                        self.stop()


def with_processes(fields: Dict[str, Any]) -> Job:
    """The job the module sent, its processes 0 made a number for this host: one engine
    process per core, at most the module's `processes_max` and the job's concurrency."""
    fields = dict(fields)
    cap = int(fields.pop('processes_max', 0) or 0)
    return Job.from_dict(fields).with_process_count(cap)


def fetch_job(channel: ModuleChannel, poll_s: float, wait_s: float = JOB_WAIT_S
              ) -> Dict[str, Any]:
    """The job, once the module hands it over (425 until this agent's enrolment is
    complete and unique)."""
    deadline = time.time() + wait_s
    while True:
        status, body = channel.call('GET', 'job')
        if status != 425 or time.time() > deadline:
            return _expect((status, body), 'fetching the job')
        time.sleep(poll_s)


def run_agent(channel: ModuleChannel, poll_s: float = 0.5) -> Dict[str, Any]:
    """One job from the module, start to end; returns the result it posted."""
    job_doc = fetch_job(channel, poll_s)
    job = with_processes(job_doc['job'])
    job.host_label = machine_id()
    if not job_doc.get('ca_bundle_pem'):
        return _run_job(channel, job, job_doc, poll_s)
    fd, job.ca_bundle = tempfile.mkstemp(prefix='rgwbench-ca-', suffix='.pem')
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(job_doc['ca_bundle_pem'])
        return _run_job(channel, job, job_doc, poll_s)
    finally:
        os.unlink(job.ca_bundle)


def _run_job(channel: ModuleChannel, job: Job, job_doc: Dict[str, Any],
             poll_s: float) -> Dict[str, Any]:
    job.validate()
    if not job.sample_only:
        prepare.preflight(job)
        prepare.ensure_buckets(job)
        if job.reads_prefilled and job.prefill:
            # A prefill cut short by its time: the load reads what it wrote.
            job.objects = prefill_watched(channel, job)
        elif job.reads_prefilled:
            prepare.check_prefilled(job)   # an earlier workload's, reused
    _expect(channel.call('POST', 'ready', {}), 'reporting ready')
    deadline = time.time() + float(job_doc.get('start_timeout_s', 300))
    while True:
        status, body = channel.call('GET', 'start')
        if status == 200 and body.get('start_at'):
            break
        if status not in (200, 425) or time.time() > deadline:
            raise AgentError('no start time from the module (HTTP %d %s)'
                             % (status, body.get('error', '')))
        time.sleep(poll_s)
    # The common start is on the mgr's clock; this agent starts when its own clock reads
    # it (so a shifted clock starts it that much early, as a host's wrong clock would).
    job.start_at = float(body['start_at']) - channel.clock.offset_s
    # The module may answer a progress post with "stop" (its capacity guard): the
    # load then ends as on SIGINT, with what it measured. Only the main thread
    # has the load's signal handler (an agent run in a thread just goes on).
    in_main = threading.current_thread() is threading.main_thread()
    # A load that writes posts every second: a stop by the capacity guard, the answer to
    # a post, reaches it that much sooner.
    with LivePoster(channel, every_s=1.0 if job.weights.get('put') else 3.0,
                    stop=_interrupt_self if in_main else None) as live:
        result = run_load(job, live=live.update)
    _expect(channel.call('POST', 'result', {'ok': True, 'result': result}),
            'posting the result')
    return result


def prefill_watched(channel: ModuleChannel, job: Job) -> int:
    """The prefill, telling the module how far it is: the module's answer may stop it (its
    capacity guard), as it may stop the load. Returns the objects it wrote."""
    halt = threading.Event()
    with LivePoster(channel, stop=halt.set) as live:
        return prepare.prefill(job, stop=halt, tick=lambda done, count: live.update(
            {'phase': 'prefill', 'done': done, 'of': count}))


def _interrupt_self() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def _give_up(why: str) -> None:
    sys.stderr.write('agent: %s; stopping\n' % why)
    sys.stderr.flush()
    _interrupt_self()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog='loadgen.agent')
    parser.add_argument('--config', required=True,
                        help='JSON with server, fingerprint and each agent\'s one-time code')
    args = parser.parse_args(argv)
    try:
        with open(args.config) as f:
            config = json.load(f)
        channel = enrolled_channel(config, agent_id())
    except (OSError, ValueError, KeyError, AgentError) as e:
        sys.stderr.write('agent: bad config %s: %s\n' % (args.config, e))
        return 2
    try:
        with DeadMan(channel, float(config.get('deadman_s') or DEADMAN_S), stop=_give_up):
            run_agent(channel)
    except (LoadgenError, AgentError, OSError, ValueError, KeyboardInterrupt) as e:
        message = str(e) or type(e).__name__
        sys.stderr.write('agent: %s\n' % message)
        try:
            channel.call('POST', 'result', {'ok': False, 'error': message})
        except (OSError, AgentError):
            pass
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
