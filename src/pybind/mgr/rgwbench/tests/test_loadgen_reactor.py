"""The one-thread driver of a process's connections (reactor) against the threads."""
import itertools
import socket
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

from rgwbench.loadgen import api, reactor
from rgwbench.loadgen.workload import Job
from rgwbench.tests.s3stub import StubS3

BODY = bytes(range(256)) * 16  # 4 KiB


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key="AK", secret_key="SK").start()
    yield s
    s.stop()


@pytest.fixture(params=["reactor", "threads"])
def driver(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "threads":
        monkeypatch.setattr(reactor, "suits", lambda job, tls: False)
    return str(request.param)


def job(url: str, **kw: Any) -> Job:
    settings: Dict[str, Any] = dict(endpoint=url, access_key="AK", secret_key="SK",
                                    proc_stats=False, duration_s=None, concurrency=4,
                                    timeout_s=5.0)
    settings.update(kw)
    return Job(**settings)


def test_which_loads_the_reactor_takes() -> None:
    plain = job("http://127.0.0.1:1", op="get")
    assert reactor.suits(plain, tls=False)
    assert not reactor.suits(plain, tls=True)
    assert not reactor.suits(job("http://127.0.0.1:1", rate=100.0), tls=False)
    assert not reactor.suits(job("http://127.0.0.1:1", verify=True), tls=False)
    assert not reactor.suits(job("http://127.0.0.1:1", size="4MiB"), tls=False)
    assert not reactor.suits(job("http://127.0.0.1:1", size="8MiB",
                                 multipart_threshold="4MiB"), tls=False)


def test_mixed_load_counts_alike_on_both_drivers(stub: StubS3, driver: str) -> None:
    res = api.run_job(job(stub.url, op="mixed", ops=400, concurrency=8, objects=50,
                          mix={"put": 3, "get": 3, "head": 2, "delete": 1, "list": 1}))
    assert res["errors"] == 0, res["error_samples"]
    assert res["ops"] == 400
    by_op = {op: res["by_op"][op]["ops"] for op in res["by_op"]}
    assert sum(by_op.values()) == 400 and set(by_op) == {"put", "get", "head", "delete",
                                                         "list"}
    assert stub.counts["put"] >= by_op["put"] and stub.counts["get"] == by_op["get"]
    assert stub.counts["delete"] == by_op["delete"]
    assert res["bytes"] == (by_op["put"] + by_op["get"]) * 4096
    assert stub.auth_failures == []


class ScriptedServer:
    """Answers object GETs in turn: 100 Continue then a chunked body sent in pieces;
    a body with ``Connection: close``; a header block split over two sends; no answer
    at all (the connection closed) on a connection that has answered before.
    Anything else gets an empty 200."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.gets = itertools.count()
        self.seen: List[int] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: socket.socket) -> None:
        data = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                method, path = head.split(b" ")[:2]
                if method != b"GET" or path.count(b"/") < 2:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    continue
                n = next(self.gets)
                self.seen.append(n % 4)
                if n % 4 == 0:
                    chunked = b"".join(b"%x\r\n" % len(part) + part + b"\r\n"
                                       for part in (BODY[:1000], BODY[1000:3000],
                                                    BODY[3000:])) + b"0\r\n\r\n"
                    reply = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n" + chunked)
                    conn.sendall(reply[:40])
                    time.sleep(0.02)
                    conn.sendall(reply[40:])
                elif n % 4 == 1:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n"
                                 b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY)
                    return
                elif n % 4 == 2:
                    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
                    conn.sendall(reply[:20])
                    time.sleep(0.02)
                    conn.sendall(reply[20:])
                else:
                    return  # closed before any byte of the answer

    def stop(self) -> None:
        self.listener.close()


def test_answers_in_every_shape_and_a_dropped_keep_alive(driver: str) -> None:
    server = ScriptedServer()
    try:
        res = api.run_job(job("http://127.0.0.1:%d" % server.port, op="get", prefill=False,
                              objects=4, ops=8, concurrency=1))
    finally:
        server.stop()
    assert res["errors"] == 0, res["error_samples"]
    assert res["ops"] == 8 and res["bytes"] == 8 * len(BODY)
    # two dropped requests, each sent again once on a new connection
    assert server.seen == [0, 1, 2, 3] * 2 + [0, 1]
