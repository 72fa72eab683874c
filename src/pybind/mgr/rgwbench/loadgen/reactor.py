"""One thread that drives every connection of a process, for the common workloads.

A thread per connection costs the engine most of its CPU at high
concurrency: every response wakes a thread, which must then take the
interpreter lock from the others, and a thousand threads waiting for that
lock wake up again and again on their own.  Here one thread waits on all
the connections at once (``epoll``) and, for each that has an answer, reads
it, records it and sends that connection's next request: the same requests,
keys, counters and histograms as the threads would make, per connection
(each connection keeps its own ``Worker`` and ``ThreadStats``), with no
lock handed over and no thread woken.

It serves closed-loop load over plain HTTP, without payload verification,
of objects that go in one request (``suits``); everything else (TLS,
``--rate``, ``--verify``, multipart sizes) runs a thread per connection.

Each connection: a non-blocking socket, the request being sent, and the
response read so far (one receive buffer for all of them; a connection only
keeps the bytes of a header block split over two reads, or of a chunked
body).  A request on a reused connection that the server closed before any
byte of the answer is sent again once on a new connection, as the threaded
client does.  A request unanswered within the job's timeout counts as
``timeout``.
"""

import errno
import select
import socket
import time
from typing import Any, Dict, List, Optional, Tuple

from .errors import ProtocolError
from .http import Response
from .measure import Worker, account
from .ops import Exhausted, Request
from .result import MAX_ERROR_SAMPLES, OpStats
from .schedule import NS, Schedule
from .workload import OPS, Job

_RECV = 256 * 1024
_MAX_HEAD = 64 * 1024
_KEEP = 64 * 1024
_TICK_NS = NS // 10


def suits(job: Job, tls: bool) -> bool:
    """Whether the job's load can run here rather than on a thread per connection."""
    return (not tls and not job.rate and not job.verify
            and job.sizes.max_size <= min(job.multipart_threshold_bytes, 1 << 20)
            and hasattr(select, "epoll"))


class _Conn:
    """One connection's socket and the state of its request in flight."""

    __slots__ = ("worker", "stats", "ops", "host", "port", "sock", "fd", "connecting",
                 "req", "out", "t0", "first_byte", "head", "body_left", "chunked",
                 "to_close", "status", "reason", "close_after", "nbytes", "kept",
                 "responses", "retried", "done", "prepare")

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.stats = worker.stats
        self.ops = worker.ops
        conn = worker.ops.client.conn
        self.host = conn.host
        self.port = conn.port
        self.sock: Optional[socket.socket] = None
        self.fd = -1
        self.connecting = False
        self.req: Optional[Request] = None
        self.out: Optional[memoryview] = None
        self.t0 = 0
        self.first_byte = 0
        self.head = bytearray()      # a header block split over reads
        self.body_left = -1          # -1: reading the header block
        self.chunked: Optional[bytearray] = None
        self.to_close = False
        self.status = 0
        self.reason = ""
        self.close_after = False
        self.nbytes = 0
        self.kept: Optional[bytearray] = None
        self.responses = 0
        self.retried = False
        self.done = False
        ops = worker.ops
        self.prepare = {"put": ops.prepare_put, "get": ops.prepare_get,
                        "head": ops.prepare_head, "delete": ops.prepare_delete,
                        "list": ops.prepare_list}


class _Failed(Exception):
    """A request failed: its error class and the sample text."""

    def __init__(self, kind: str, text: str, retry: bool = False) -> None:
        super().__init__(text)
        self.kind = kind
        self.text = text
        self.retry = retry


class Reactor:
    """Runs the ``workers``' load on one thread; they share one pace."""

    def __init__(self, workers: List[Worker], schedule: Schedule) -> None:
        self.workers = workers
        self.schedule = schedule
        self.pace = workers[0].pace
        self.timeout_ns = int(workers[0].timeout_s * NS)
        self.conns = [_Conn(w) for w in workers]
        self.by_fd: Dict[int, _Conn] = {}
        self.addresses: Dict[Tuple[str, int], Tuple[int, Tuple[Any, ...]]] = {}
        self.poller = select.epoll()
        self.buf = bytearray(_RECV)
        self.view = memoryview(self.buf)
        self.active = len(self.conns)
        chooser = self.pace.chooser
        self.single = chooser.ops[0] if len(chooser.ops) == 1 else None

    # -- connections -------------------------------------------------------

    def _open(self, c: _Conn) -> None:
        """Start a non-blocking connect; the request is sent once it is made."""
        try:
            family, address = self._address(c)
        except OSError as exc:  # a name that does not resolve
            raise _Failed("connection", "connection error: %s" % exc)
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            code = sock.connect_ex(address)
        except OSError as exc:
            sock.close()
            raise _Failed("connection", "connection error: %s" % exc)
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            raise _Failed("connection", "connection error: %s" % OSError(
                code, errno.errorcode.get(code, str(code))))
        c.sock = sock
        c.fd = sock.fileno()
        c.connecting = True
        c.responses = 0
        self.by_fd[c.fd] = c
        self.poller.register(c.fd, select.EPOLLOUT)

    def _address(self, c: _Conn) -> Tuple[int, Tuple[Any, ...]]:
        """The family and socket address of the connection's host (resolved once)."""
        key = (c.host, c.port)
        found = self.addresses.get(key)
        if found is None:
            info = socket.getaddrinfo(c.host, c.port, 0, socket.SOCK_STREAM)[0]
            found = self.addresses[key] = (info[0], info[4])
        return found

    def _close(self, c: _Conn) -> None:
        sock, c.sock = c.sock, None
        if sock is not None:
            self.by_fd.pop(c.fd, None)
            try:
                self.poller.unregister(c.fd)
            except (OSError, ValueError):
                pass
            sock.close()
        c.fd = -1
        c.connecting = False

    # -- the loop ----------------------------------------------------------

    def run(self) -> None:
        pace = self.pace
        for c in self.conns:
            try:
                self._open(c)
            except _Failed:
                pass  # the first request reports it
        Schedule.sleep_until(self.schedule.start_ns, pace.stop)
        for c in self.conns:
            for op in OPS:
                c.stats.by_op[op] = OpStats()
        for c in self.conns:
            self._next(c)
        poll = self.poller.poll
        stop = pace.stop
        clock = time.perf_counter_ns
        next_scan = clock() + _TICK_NS
        try:
            while self.active:
                if stop.is_set():
                    break
                for fd, events in poll(0.1):
                    found = self.by_fd.get(fd)
                    if found is None:
                        continue
                    c = found
                    if c.connecting:
                        self._connected(c)
                    elif events & select.EPOLLOUT and c.out is not None:
                        self._send_more(c)
                    else:
                        self._receive(c)
                now = clock()
                if now >= next_scan:
                    next_scan = now + _TICK_NS
                    self._expire(now)
        finally:
            for c in self.conns:
                if not c.done:
                    c.done = True
                    c.stats.exit_reason = "stopped"
                self._close(c)
            self.poller.close()

    def _finish(self, c: _Conn, reason: str) -> None:
        c.done = True
        c.req = None
        c.stats.exit_reason = reason
        self.active -= 1
        self._close(c)

    def _next(self, c: _Conn) -> None:
        """Start the connection's next request, as the threaded loop would."""
        pace = self.pace
        sched = self.schedule
        ops = c.ops
        while True:
            if pace.quota is not None and next(pace.issued) >= pace.quota:
                self._finish(c, "ops")
                return
            t0 = time.perf_counter_ns()
            if t0 >= sched.end_ns:
                self._finish(c, "time")
                return
            if pace.stop.is_set():
                self._finish(c, "stopped")
                return
            c.t0 = t0
            op = self.single or pace.chooser.choose(ops.rng.random())
            if op == "delete" and ops.mixed and not ops.written:
                op = "put"
            try:
                req = c.prepare[op]()
            except Exhausted:
                self._finish(c, "exhausted")
                return
            except Exception as exc:  # a bug in the engine: count it, keep going
                self._record(c, op, "client", "%s: client error: %r" % (op.upper(), exc))
                continue
            c.req = req
            c.retried = False
            try:
                self._start(c)
                return
            except _Failed as exc:
                if not self._recover(c, exc):
                    continue
                return

    def _start(self, c: _Conn) -> None:
        """Send the current request (connecting first when needed)."""
        c.first_byte = 0
        c.head.clear()
        c.body_left = -1
        c.chunked = None
        c.to_close = False
        c.kept = None
        c.nbytes = 0
        if c.sock is None:
            self._open(c)
        if c.connecting:
            return
        req = c.req
        assert req is not None and c.sock is not None
        body = req.body
        try:
            if body is None:
                sent = c.sock.send(req.head)
                total = len(req.head)
            else:
                sent = c.sock.sendmsg([req.head, body])  # type: ignore
                total = len(req.head) + len(body)  # type: ignore
        except BlockingIOError:
            sent, total = 0, -1
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Failed("connection", "connection error: %s" % exc,
                          retry=c.responses > 0)
        except OSError as exc:
            raise _Failed("connection", "connection error: %s" % exc)
        if sent != total:
            data = req.head if body is None else req.head + bytes(body)  # type: ignore
            c.out = memoryview(data)[sent:]
            self.poller.modify(c.fd, select.EPOLLIN | select.EPOLLOUT)

    def _send_more(self, c: _Conn) -> None:
        assert c.out is not None and c.sock is not None
        try:
            sent = c.sock.send(c.out)
        except BlockingIOError:
            return
        except OSError as exc:
            self._failed(c, _Failed("connection", "connection error: %s" % exc,
                                    retry=c.responses > 0))
            return
        c.out = c.out[sent:]
        if not len(c.out):
            c.out = None
            self.poller.modify(c.fd, select.EPOLLIN)

    def _connected(self, c: _Conn) -> None:
        assert c.sock is not None
        code = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code:
            self._close(c)
            self._failed(c, _Failed("connection", "connection error: %s" % OSError(
                code, errno.errorcode.get(code, str(code)))))
            return
        c.connecting = False
        self.poller.modify(c.fd, select.EPOLLIN)
        if c.req is not None:
            try:
                self._start(c)
            except _Failed as exc:
                self._failed(c, exc)

    # -- answers -----------------------------------------------------------

    def _receive(self, c: _Conn) -> None:
        assert c.sock is not None
        try:
            n = c.sock.recv_into(self.buf)
        except BlockingIOError:
            return
        except ConnectionResetError as exc:
            self._failed(c, _Failed("connection", "connection error: %s" % exc,
                                    retry=c.responses > 0 and not c.first_byte))
            return
        except OSError as exc:
            self._failed(c, _Failed("connection", "connection error: %s" % exc))
            return
        if c.req is None:  # bytes nobody asked for: the connection is unusable
            self._close(c)
            return
        try:
            if not n:
                if c.to_close:
                    self._answered(c)
                    return
                raise _Failed("connection", "connection error: connection closed by server",
                              retry=c.responses > 0 and not c.first_byte)
            if not c.first_byte:
                c.first_byte = time.perf_counter_ns()
            if c.body_left < 0:
                self._head(c, n)
            else:
                self._body(c, 0, n)
        except _Failed as exc:
            self._failed(c, exc)
        except ProtocolError as exc:
            self._failed(c, _Failed("protocol", str(exc)))

    def _head(self, c: _Conn, n: int) -> None:
        """Bytes [0, n) of the buffer, while the header block is being read."""
        buf = self.buf
        if c.head:
            c.head += self.view[:n]
            data = c.head
            end = data.find(b"\r\n\r\n")
        else:
            data = buf
            end = buf.find(b"\r\n\r\n", 0, n)
        size = len(data) if data is c.head else n
        while True:
            if end < 0:
                if size > _MAX_HEAD:
                    raise ProtocolError("response header block too long")
                if data is not c.head:
                    c.head += self.view[:n]
                return
            block = bytes(data[:end])
            if not block.startswith(b"HTTP/1."):
                raise ProtocolError("bad status line %r" % block[:80])
            try:
                status = int(block[9:12])
            except ValueError:
                raise ProtocolError("bad status line %r" % block[:80])
            if 100 <= status < 200:  # interim (100 Continue): the real one follows
                rest = bytes(data[end + 4:size])
                c.head = bytearray(rest)
                data = c.head
                size = len(rest)
                end = data.find(b"\r\n\r\n")
                continue
            break
        line_end = block.find(b"\r\n")
        c.status = status
        c.reason = block[13:line_end if line_end >= 0 else len(block)].decode("latin-1")
        lower = block.lower()
        c.close_after = b"\r\nconnection: close" in lower or block.startswith(b"HTTP/1.0")
        req = c.req
        assert req is not None
        if status >= 300:
            c.kept = bytearray()  # the S3 error's code and message
        start = end + 4
        if data is c.head:
            rest_view: memoryview = memoryview(bytes(data[start:size]))
            c.head = bytearray()
        else:
            rest_view = self.view[start:n]
        at = lower.find(b"\r\ncontent-length:")
        if req.head_only or status in (204, 304):
            length = 0
        elif at >= 0:
            stop = lower.find(b"\r\n", at + 2)
            try:
                length = int(lower[at + 17:stop if stop >= 0 else len(lower)])
            except ValueError:
                raise ProtocolError("bad content-length")
        elif b"\r\ntransfer-encoding:" in lower and b"chunked" in lower:
            c.chunked = bytearray()
            c.body_left = 0
            self._chunks(c, rest_view)
            return
        else:
            c.to_close = True
            c.close_after = True
            c.body_left = 1 << 62
            self._take(c, rest_view)
            return
        c.body_left = length
        self._take(c, rest_view)

    def _body(self, c: _Conn, start: int, n: int) -> None:
        if c.chunked is not None:
            self._chunks(c, self.view[start:n])
        else:
            self._take(c, self.view[start:n])

    def _take(self, c: _Conn, data: memoryview) -> None:
        """Body bytes of a response with a known length (or read to close)."""
        got = len(data)
        if got > c.body_left:
            raise ProtocolError("more bytes than the response's length")
        kept = c.kept
        if kept is not None and len(kept) < _KEEP:
            kept += data[:_KEEP - len(kept)]
        c.nbytes += got
        c.body_left -= got
        if not c.body_left:
            self._answered(c)

    def _chunks(self, c: _Conn, data: memoryview) -> None:
        """A chunked body: kept until its last chunk is in, then counted."""
        body = c.chunked
        assert body is not None
        body += data
        pos = 0
        total = 0
        while True:
            line_end = body.find(b"\r\n", pos)
            if line_end < 0:
                return
            try:
                size = int(bytes(body[pos:line_end]).split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError("bad chunk size line")
            if size == 0:
                if body.find(b"\r\n\r\n", line_end) < 0 and not body.endswith(b"0\r\n\r\n"):
                    return  # trailers still coming
                if c.kept is not None:
                    c.kept += self._dechunk(body)[:_KEEP]
                c.nbytes = total
                self._answered(c)
                return
            if len(body) < line_end + 2 + size + 2:
                return
            total += size
            pos = line_end + 2 + size + 2

    @staticmethod
    def _dechunk(body: bytearray) -> bytes:
        parts: List[bytes] = []
        pos = 0
        while True:
            line_end = body.find(b"\r\n", pos)
            size = int(bytes(body[pos:line_end]).split(b";", 1)[0].strip(), 16)
            if not size:
                return b"".join(parts)
            parts.append(bytes(body[line_end + 2:line_end + 2 + size]))
            pos = line_end + 4 + size

    def _answered(self, c: _Conn) -> None:
        req = c.req
        assert req is not None
        c.responses += 1
        if c.close_after:
            self._close(c)
        if c.status in req.accepted and req.written is None:
            # success, the common case: no Response made
            nbytes = req.counted if req.counted >= 0 else c.nbytes
            self._account(c, req.op, None, nbytes, c.first_byte)
        else:
            kept = bytes(c.kept) if c.kept is not None else b""
            err, nbytes, first_byte = c.ops.finish(req, Response(
                c.status, c.reason, {}, kept, c.nbytes, c.first_byte))
            self._account(c, req.op, err, nbytes, first_byte)
        c.req = None
        self._next(c)

    # -- failures ----------------------------------------------------------

    def _failed(self, c: _Conn, exc: _Failed) -> None:
        if not self._recover(c, exc):
            self._next(c)

    def _recover(self, c: _Conn, exc: _Failed) -> bool:
        """A failed request: sent again once on a new connection when the server
        closed a reused one before answering (True), else counted (False)."""
        self._close(c)
        if exc.retry and not c.retried and c.req is not None:
            c.retried = True
            try:
                self._start(c)
                return True
            except _Failed as again:
                exc = again
        req = c.req
        op = req.op if req is not None else "?"
        self._record(c, op, exc.kind, "%s: %s" % (op.upper(), exc.text))
        return False

    def _expire(self, now: int) -> None:
        limit = self.timeout_ns
        for c in self.conns:
            if c.req is not None and not c.done and now - c.t0 > limit:
                req = c.req
                self._close(c)
                self._record(c, req.op, "timeout", "%s: no answer within %gs" % (
                    req.op.upper(), limit / NS))
                self._next(c)

    def _record(self, c: _Conn, op: str, kind: str, text: str) -> None:
        samples = c.stats.samples
        if len(samples) < MAX_ERROR_SAMPLES:
            samples.append(text)
        c.req = None
        self._account(c, op, kind, 0, 0)

    def _account(self, c: _Conn, op: str, err: Optional[str], nbytes: int,
                 first_byte: int) -> None:
        if self.pace.stop.is_set():  # halted mid-request: the answer means nothing
            return
        sched = self.schedule
        account(c.stats, op, err, nbytes, first_byte, c.t0, time.perf_counter_ns(),
                sched.measure_ns, sched.end_ns)
