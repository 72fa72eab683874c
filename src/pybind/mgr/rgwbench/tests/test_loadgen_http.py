"""Raw-socket HTTP/1.1 client of the load engine, against scripted servers."""
import socket
import threading
import time
from typing import Callable, List, Optional

import pytest


from rgwbench.loadgen.errors import ProtocolError
from rgwbench.loadgen.http import Connection, ConnectionClosed
from rgwbench.loadgen.payload import Pattern

Script = Callable[[socket.socket, int], bool]


class Scripted:
    """Accepts connections; for each request calls ``script(conn, n)``
    (n counts requests over all connections); False closes the connection."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.n = 0
        self.accepted = 0
        self.heads: List[bytes] = []
        self.bodies: List[int] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._conn, args=(conn,), daemon=True).start()

    def _conn(self, conn: socket.socket) -> None:
        try:
            self._requests(conn)
        except OSError:
            pass  # the client went away (timeouts, resets): not the server's business

    def _requests(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                got = min(len(buf), length)
                buf = buf[got:]
                while got < length:
                    data = conn.recv(min(1 << 20, length - got))
                    if not data:
                        return
                    got += len(data)
                self.heads.append(head)
                self.bodies.append(got)
                self.n += 1
                if not self.script(conn, self.n):
                    return

    def close(self) -> None:
        self.sock.close()


def _conn(server: Scripted, **kw: object) -> Connection:
    return Connection("127.0.0.1", server.port, timeout=5.0, **kw)  # type: ignore[arg-type]


HEAD = b"GET /b/k HTTP/1.1\r\nHost: x\r\n\r\n"


def test_keep_alive_content_length_and_reuse() -> None:
    def script(conn: socket.socket, n: int) -> bool:
        body = b"x" * (1000 * n)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nETag: \"e\"\r\n\r\n%s"
                     % (len(body), body))
        return True

    srv = Scripted(script)
    c = _conn(srv)
    for i in range(1, 6):
        r = c.request(HEAD, keep_body=True)
        assert r.status == 200 and r.nbytes == 1000 * i and r.body == b"x" * (1000 * i)
        assert r.headers["etag"] == '"e"' and r.first_byte_ns > 0
    assert c.connects == 1 and srv.accepted == 1
    c.close()
    srv.close()


def test_chunked_with_extensions_and_trailers_byte_by_byte() -> None:
    payload = b"<ListBucketResult>" + b"k" * 3000 + b"</ListBucketResult>"
    wire = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"10;name=value\r\n" + payload[:16] + b"\r\n"
            + b"%X\r\n" % (len(payload) - 16) + payload[16:] + b"\r\n"
            + b"0\r\nX-Trailer: yes\r\n\r\n")

    def script(conn: socket.socket, n: int) -> bool:
        if n == 1:
            for i in range(0, len(wire), 7):  # dribble it out in small pieces
                conn.sendall(wire[i:i + 7])
                if i < 200:
                    time.sleep(0.001)
        else:
            conn.sendall(wire)
        return True

    srv = Scripted(script)
    c = _conn(srv)
    seen: List[bytes] = []
    r = c.request(HEAD, sink=lambda mv: seen.append(bytes(mv)), keep_body=True)
    assert r.nbytes == len(payload) and r.body == payload and b"".join(seen) == payload
    r2 = c.request(HEAD)  # the connection is still in step
    assert r2.nbytes == len(payload) and r2.body == b""
    assert c.connects == 1
    srv.close()


def test_interim_100_and_read_until_close_and_head() -> None:
    def script(conn: socket.socket, n: int) -> bool:
        if n == 1:
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
            return True
        if n == 2:  # HEAD: a content-length but no body follows
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 12345\r\n\r\n")
            return True
        conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nuntil the end")
        return False

    srv = Scripted(script)
    c = _conn(srv)
    assert c.request(HEAD).status == 204
    r = c.request(b"HEAD /b/k HTTP/1.1\r\nHost: x\r\n\r\n", head_only=True)
    assert r.status == 200 and r.nbytes == 0
    r = c.request(HEAD, keep_body=True)
    assert r.body == b"until the end" and not c.connected
    srv.close()


def test_error_bodies_are_kept_for_the_error_code() -> None:
    def script(conn: socket.socket, n: int) -> bool:
        body = b"<Error><Code>SlowDown</Code></Error>"
        conn.sendall(b"HTTP/1.1 503 Slow Down\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))
        return True

    srv = Scripted(script)
    r = _conn(srv).request(HEAD)  # keep_body not asked for
    assert r.status == 503 and r.reason == "Slow Down" and b"SlowDown" in r.body
    srv.close()


def test_idle_connection_closed_by_server_is_retried_once() -> None:
    def script(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return n != 1  # close after the first answer, like an idle timeout

    srv = Scripted(script)
    c = _conn(srv)
    assert c.request(HEAD).status == 200
    time.sleep(0.05)
    assert c.request(HEAD).status == 200
    assert c.connects == 2 and srv.n == 2
    srv.close()


def test_fresh_connection_closed_without_answer_is_an_error() -> None:
    srv = Scripted(lambda conn, n: False)
    with pytest.raises(ConnectionClosed):
        _conn(srv).request(HEAD)
    srv.close()


def test_garbage_and_oversized_headers() -> None:
    def ssh(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"SSH-2.0-OpenSSH\r\n\r\n")
        return True

    srv = Scripted(ssh)
    with pytest.raises(ProtocolError):
        _conn(srv).request(HEAD)
    srv.close()

    def huge(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + b"X-A: " + b"a" * 300000 + b"\r\n\r\n")
        return True

    srv = Scripted(huge)
    with pytest.raises(ProtocolError):
        _conn(srv).request(HEAD)
    srv.close()


def test_timeout_is_socket_timeout() -> None:
    def slow(conn: socket.socket, n: int) -> bool:
        time.sleep(1.0)
        return True

    srv = Scripted(slow)
    c = Connection("127.0.0.1", srv.port, timeout=0.2)
    with pytest.raises(socket.timeout):
        c.request(HEAD)
    assert not c.connected
    srv.close()


def test_streamed_upload_and_large_download_use_bounded_buffers() -> None:
    size = 20 << 20

    def script(conn: socket.socket, n: int) -> bool:
        if n == 1:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
            block = bytes(1 << 20)
            for _ in range(size >> 20):
                conn.sendall(block)
        return True

    srv = Scripted(script)
    c = _conn(srv, buffer_size=64 * 1024)
    body = Pattern(period=1 << 20).body(size)
    head = b"PUT /b/k HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size
    assert c.request(head, body).status == 200
    assert srv.bodies[0] == size
    sizes: List[int] = []
    r = c.request(HEAD, sink=lambda mv: sizes.append(len(mv)))
    assert r.nbytes == size == sum(sizes)
    assert max(sizes) <= 64 * 1024
    srv.close()


def test_unreachable_port_refuses() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c: Optional[Connection] = Connection("127.0.0.1", port, timeout=2)
    assert c is not None
    with pytest.raises(ConnectionRefusedError):
        c.request(HEAD)
