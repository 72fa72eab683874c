"""A load agent: the engine run on a cluster host under the mgr module's control.

    python3 engine.pyz-on-sys.path -m loadgen.agent --config agent.json

The config names the module's agent endpoint (HTTPS), the SHA-256
fingerprint of its certificate (the agent trusts that certificate and no
other) and the run's secret, sent as a bearer token. The agent then

1. fetches its job (GET /agent/v1/job),
2. creates the buckets and prefills what it will read, and says so
   (POST /agent/v1/ready),
3. waits for the common start time every agent gets (GET /agent/v1/start),
4. runs the load, posting its live figures every few seconds
   (POST /agent/v1/progress), and posts its result (POST /agent/v1/result).

Any failure is posted as an error result, so that the module reports it
instead of waiting for the agent.
"""
import argparse
import hashlib
import http.client
import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from . import prepare
from .errors import LoadgenError
from .runner import run_load
from .workload import Job

API = '/agent/v1/'


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

    def __init__(self, server: str, fingerprint: str, secret: str, agent: str,
                 timeout: float = 30.0) -> None:
        if not server.startswith('https://'):
            raise AgentError('the agent endpoint must be https, got %r' % server)
        host, _, port = server[len('https://'):].rstrip('/').rpartition(':')
        self.host, self.port = host.strip('[]'), int(port)
        self.fingerprint = fingerprint.replace(':', '').lower()
        self.headers = {'Authorization': 'Bearer ' + secret, 'X-Agent-Id': agent,
                        'Content-Type': 'application/json'}
        self.timeout = timeout
        # Trust comes from the pinned fingerprint, checked on every connection.
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE

    def call(self, method: str, what: str,
             body: Optional[Dict[str, Any]] = None) -> Tuple[int, Dict[str, Any]]:
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                           context=self.context)
        try:
            conn.connect()
            assert conn.sock is not None
            cert = conn.sock.getpeercert(binary_form=True)
            if not cert or hashlib.sha256(cert).hexdigest() != self.fingerprint:
                raise AgentError('the agent endpoint %s:%d has an unexpected certificate'
                                 % (self.host, self.port))
            payload = json.dumps(body).encode() if body is not None else None
            conn.request(method, API + what, body=payload, headers=self.headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(data or b'{}')
        except ValueError:
            return resp.status, {}


def _expect(answer: Tuple[int, Dict[str, Any]], what: str) -> Dict[str, Any]:
    status, body = answer
    if status != 200:
        raise AgentError('%s: HTTP %d %s' % (what, status, body.get('error', '')))
    return body


class LivePoster:
    """Posts the engine's latest live figures to the module, from a thread of its own.

    The engine only hands over a dict about twice a second; the post (one
    HTTPS request every few seconds) never holds up the load.
    """

    def __init__(self, channel: ModuleChannel, every_s: float = 3.0) -> None:
        self.channel = channel
        self.every_s = every_s
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
                    self.channel.call('POST', 'progress', latest)
                except (OSError, AgentError):
                    pass  # live figures are a courtesy; the result is what counts
                sent = latest


def run_agent(channel: ModuleChannel, poll_s: float = 0.5) -> Dict[str, Any]:
    """One job from the module, start to end; returns the result it posted."""
    job_doc = _expect(channel.call('GET', 'job'), 'fetching the job')
    job = Job.from_dict(job_doc['job'])
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
    prepare.preflight(job)
    prepare.ensure_buckets(job)
    if job.reads_prefilled:
        prepare.prefill(job)
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
    job.start_at = float(body['start_at'])
    with LivePoster(channel) as live:
        result = run_load(job, live=live.update)
    _expect(channel.call('POST', 'result', {'ok': True, 'result': result}),
            'posting the result')
    return result


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog='loadgen.agent')
    parser.add_argument('--config', required=True,
                        help='JSON with server, fingerprint and secret')
    args = parser.parse_args(argv)
    try:
        with open(args.config) as f:
            config = json.load(f)
        channel = ModuleChannel(config['server'], config['fingerprint'], config['secret'],
                                agent_id())
    except (OSError, ValueError, KeyError, AgentError) as e:
        sys.stderr.write('agent: bad config %s: %s\n' % (args.config, e))
        return 2
    try:
        run_agent(channel)
    except (LoadgenError, AgentError, OSError, ValueError) as e:
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
