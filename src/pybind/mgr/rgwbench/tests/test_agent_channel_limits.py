"""The agents' endpoint under slow clients: real sockets on 127.0.0.1 (the session is fake).

Slow connections come from eight sources, 127.0.0.2 to 127.0.0.9 (all of
127.0.0.0/8 is this host), the agent from 127.0.0.1.
"""
import select
import socket
import ssl
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from fixtures import Clock

from rgwbench.agents.channel import MAX_CONNECTIONS, MAX_PER_SOURCE, AgentChannel
from rgwbench.checks.clock_skew import ClockSample
from rgwbench.loadgen.agent import ModuleChannel
from rgwbench.web import connection_slots
from rgwbench.web.connection_slots import ConnectionSlots

TOKEN = 'the-agents-token'


class Session:
    """The run in progress, as the endpoint asks it: one agent, host-a, with TOKEN."""

    def __init__(self) -> None:
        self.progress_bodies: List[Dict[str, Any]] = []

    def enrol(self, agent: str, code: str, source: Optional[str] = None) -> Optional[str]:
        return None

    def authorized(self, agent: str, token: str) -> bool:
        return agent == 'host-a' and token == TOKEN

    def job_for(self, agent: str) -> Tuple[int, Dict[str, Any]]:
        return 200, {'job': {'agent': agent}}

    def ready(self, agent: str) -> None:
        pass

    def start_for(self, agent: str) -> Tuple[int, Dict[str, Any]]:
        return 425, {}

    def result(self, agent: str, body: Dict[str, Any]) -> None:
        pass

    def progress(self, agent: str, body: Dict[str, Any]) -> Dict[str, Any]:
        self.progress_bodies.append(body)
        return {}

    def clock_sample(self, agent: str, found: ClockSample) -> None:
        pass


def open_channel(certificate: Tuple[str, str]) -> AgentChannel:
    channel = AgentChannel('127.0.0.1', 0, *certificate)
    channel.open(Session())
    return channel


def tls_from(channel: AgentChannel, source: str) -> ssl.SSLSocket:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    port = int(channel.url.rsplit(':', 1)[1])
    raw = socket.create_connection(('127.0.0.1', port), timeout=30, source_address=(source, 0))
    return context.wrap_socket(raw)


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed `sock` (a TLS session ticket alone leaves it open)."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    before = sock.gettimeout()
    sock.settimeout(0)
    try:
        return sock.recv(1) == b''
    except (ssl.SSLWantReadError, BlockingIOError):
        return False
    except OSError:
        return True
    finally:
        sock.settimeout(before)


def cut_within(sock: ssl.SSLSocket, seconds: float, drip: bytes) -> Optional[float]:
    """Send `drip` a byte every 0.3 s until the server closes; how long that took (None:
    still open after `seconds`)."""
    began = time.monotonic()
    for byte in drip:
        if closed_by_server(sock):
            return time.monotonic() - began
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return time.monotonic() - began
        if time.monotonic() - began > seconds:
            return None
        time.sleep(0.3)
    return None


@pytest.fixture
def slow_clients() -> Iterator[List[ssl.SSLSocket]]:
    made: List[ssl.SSLSocket] = []
    yield made
    for sock in made:
        sock.close()


def test_slow_connections_from_eight_sources_keep_no_agent_out(
        certificate: Tuple[str, str], slow_clients: List[ssl.SSLSocket],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Their headers would have two minutes: long enough to hold every place for the test.
    monkeypatch.setattr(connection_slots, 'HEAD_TIMEOUT_S', 120.0)
    assert 8 * MAX_PER_SOURCE >= MAX_CONNECTIONS
    channel = open_channel(certificate)
    try:
        for n in range(8):
            for _ in range(MAX_PER_SOURCE):
                sock = tls_from(channel, '127.0.0.%d' % (n + 2))
                sock.sendall(b'GET /agent/v1/job HTTP/1.1\r\nHost: x\r\n')   # no end
                slow_clients.append(sock)
        time.sleep(0.5)
        assert not any(closed_by_server(sock) for sock in slow_clients)
        began = time.monotonic()
        status, answer = ModuleChannel(channel.url, channel.fingerprint, TOKEN,
                                       'host-a').call('GET', 'job', timeout=30)
        assert (status, answer) == (200, {'job': {'agent': 'host-a'}})
        assert time.monotonic() - began < 10
        # The agent took the place of one slow connection; the others are still held.
        assert sum(closed_by_server(sock) for sock in slow_clients) <= 1
    finally:
        channel.close()


SLOW_HEADERS = (b'', b'GET /agent/v1/job HTTP/1.1\r\nX-Slow: ' + b'a' * 100)
SLOW_BODY = (('POST /agent/v1/progress HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n'
              'X-Agent-Id: host-a\r\nContent-Length: 200\r\n\r\n' % TOKEN).encode(),
             b'{"a": "' + b'a' * 190 + b'"}')


@pytest.mark.parametrize('deadline, sent, drip', [('HEAD_TIMEOUT_S', *SLOW_HEADERS),
                                                  ('BODY_TIMEOUT_S', *SLOW_BODY)])
def test_headers_or_a_body_that_come_slowly_are_cut_off(
        certificate: Tuple[str, str], monkeypatch: pytest.MonkeyPatch, deadline: str,
        sent: bytes, drip: bytes) -> None:
    # Each byte within the read timeout (30 s): before, the connection was kept as
    # long as the bytes kept coming.
    monkeypatch.setattr(connection_slots, deadline, 2.0)
    channel = open_channel(certificate)
    try:
        with tls_from(channel, '127.0.0.2') as sock:
            sock.sendall(sent)
            took = cut_within(sock, 15, drip)
        assert took is not None and took < 10, took
    finally:
        channel.close()


# -- the places, over a fake clock ------------------------------------------------------
class Conns:
    """Stand-ins for sockets, and the ones cut."""

    def __init__(self) -> None:
        self.cut: List[Any] = []

    def new(self) -> Any:
        return object()


def slots(clock: Clock, conns: Conns, total: int = 3, per_source: int = 2) -> ConnectionSlots:
    return ConnectionSlots(total=total, per_source=per_source, head_s=10.0, body_s=30.0,
                           clock=clock, cut=conns.cut.append)


def test_a_source_over_its_bound_is_refused_and_a_place_given_back_is_free() -> None:
    clock, conns = Clock(), Conns()
    places = slots(clock, conns)
    a, b, c = conns.new(), conns.new(), conns.new()
    assert places.take(a, '192.0.2.1') and places.take(b, '192.0.2.1')
    assert not places.take(c, '192.0.2.1')
    assert not places.take(c, '::ffff:192.0.2.1')          # the same source
    places.give_back(a)
    assert places.take(c, '192.0.2.1') and conns.cut == []


def test_when_full_the_connection_waiting_longest_for_its_headers_makes_way() -> None:
    clock, conns = Clock(), Conns()
    places = slots(clock, conns)
    first, second, third = conns.new(), conns.new(), conns.new()
    places.take(first, '192.0.2.1')
    clock.now += 1
    places.take(second, '192.0.2.2')
    clock.now += 1
    places.take(third, '192.0.2.3')
    places.headers_read(first, 0)                 # being served: never pushed out
    newcomer = conns.new()
    assert places.take(newcomer, '192.0.2.4')
    assert conns.cut == [second] and places.count() == 3
    places.give_back(second)                      # its thread ends: nothing more to free
    assert places.count() == 3
    for conn in (third, newcomer):
        places.headers_read(conn, 0)
    assert not places.take(conns.new(), '192.0.2.5')   # all served: refused


def test_deadlines_for_the_headers_and_for_the_body() -> None:
    clock, conns = Clock(), Conns()
    places = slots(clock, conns, total=10, per_source=10)
    silent, agent, poster = conns.new(), conns.new(), conns.new()
    for conn in (silent, agent, poster):
        places.take(conn, '192.0.2.1')
    places.headers_read(agent, 0)
    clock.now += 5
    places.headers_read(poster, 2 * connection_slots.BODY_RATE)
    clock.now += 5
    assert places.cut_overdue() == 1 and conns.cut == [silent]    # 10 s for its headers
    clock.now += 26                               # 30 s and a second for each BODY_RATE
    assert places.cut_overdue() == 0
    clock.now += 1
    assert places.cut_overdue() == 1 and conns.cut == [silent, poster]
    places.body_read(agent)
    clock.now += 3600                             # served: no deadline while it is handled
    assert places.cut_overdue() == 0 and places.count() == 1
