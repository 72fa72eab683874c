#!/usr/bin/env python3
"""An S3-shaped HTTP server that answers at once, for measuring clients' own cost.

    bench/instant_s3.py --port 0 --object-size 4096 --processes 1

It prints its URL on the first line of its output and serves until it is
ended.  It keeps nothing and checks no signature: every PUT or POST is
answered ``200`` with an ETag, every object GET with ``--object-size``
bytes, a bucket GET with an empty listing, HEAD with the object's headers,
DELETE with ``204``.  ``Expect: 100-continue`` is answered with a ``100``
first.  One thread per process on ``epoll``; with ``--processes N`` the
processes share the port (``SO_REUSEPORT``), so that the server is not
what limits a client's rate.  Loopback only.
"""

import argparse
import os
import select
import signal
import socket
import sys
from typing import Dict, List, Optional

ETAG = b'"d41d8cd98f00b204e9800998ecf8427e"'
LISTING = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
           b"<KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>")
DELETED = b'<?xml version="1.0" encoding="UTF-8"?><DeleteResult></DeleteResult>'


def answer(status: str, headers: bytes, body: bytes = b"", length: Optional[int] = None) -> bytes:
    return (b"HTTP/1.1 " + status.encode("ascii") + b"\r\n" + headers
            + b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length)
            + body)


class Answers:
    """The byte strings the server sends, made once."""

    def __init__(self, object_size: int) -> None:
        obj = b"x-amz-request-id: tx0\r\nETag: " + ETAG + b"\r\n" \
            b"Last-Modified: Sat, 28 Nov 2026 00:00:00 GMT\r\n" \
            b"Content-Type: binary/octet-stream\r\n"
        self.put = answer("200 OK", b"x-amz-request-id: tx0\r\nETag: " + ETAG + b"\r\n")
        self.get = answer("200 OK", obj, bytes(object_size))
        self.head = answer("200 OK", obj, length=object_size)
        self.listing = answer("200 OK", b"Content-Type: application/xml\r\n", LISTING)
        self.deleted = answer("200 OK", b"Content-Type: application/xml\r\n", DELETED)
        self.delete = b"HTTP/1.1 204 No Content\r\n\r\n"
        self.proceed = b"HTTP/1.1 100 Continue\r\n\r\n"


class Peer:
    """One client connection: bytes received and not yet answered, bytes to send."""

    __slots__ = ("sock", "inbox", "outbox", "body_left")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.body_left = 0


def respond(peer: Peer, answers: Answers) -> None:
    """Answer every complete request in the peer's inbox."""
    inbox = peer.inbox
    while True:
        if peer.body_left:
            take = min(peer.body_left, len(inbox))
            del inbox[:take]
            peer.body_left -= take
            if peer.body_left:
                return
        end = inbox.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(inbox[:end]).lower()
        del inbox[:end + 4]
        method, _, rest = head.partition(b" ")
        target = rest.partition(b" ")[0]
        at = head.find(b"\r\ncontent-length:")
        length = 0
        if at >= 0:
            line_end = head.find(b"\r\n", at + 2)
            length = int(head[at + 17:line_end if line_end >= 0 else len(head)])
        if length and b"\r\nexpect: 100-continue" in head:
            peer.outbox += answers.proceed
        peer.body_left = length
        path = target.partition(b"?")[0]
        is_bucket = path.count(b"/") <= 1 or path.endswith(b"/")
        if method == b"get":
            peer.outbox += answers.listing if is_bucket else answers.get
        elif method == b"head":
            peer.outbox += answers.head
        elif method == b"delete":
            peer.outbox += answers.delete
        elif method == b"post" and b"?delete" in target:
            peer.outbox += answers.deleted
        else:
            peer.outbox += answers.put


def serve(listener: socket.socket, answers: Answers) -> None:
    poller = select.epoll()
    poller.register(listener.fileno(), select.EPOLLIN)
    peers: Dict[int, Peer] = {}
    lfd = listener.fileno()
    while True:
        for fd, events in poller.poll():
            if fd == lfd:
                while True:
                    try:
                        sock, _ = listener.accept()
                    except BlockingIOError:
                        break
                    sock.setblocking(False)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    peers[sock.fileno()] = Peer(sock)
                    poller.register(sock.fileno(), select.EPOLLIN)
                continue
            peer = peers[fd]
            try:
                if events & select.EPOLLIN:
                    data = peer.sock.recv(1 << 18)
                    if not data:
                        raise ConnectionResetError()
                    peer.inbox += data
                    respond(peer, answers)
                if peer.outbox:
                    sent = peer.sock.send(peer.outbox)
                    del peer.outbox[:sent]
                poller.modify(fd, select.EPOLLIN | (select.EPOLLOUT if peer.outbox else 0))
            except (OSError, ValueError):
                poller.unregister(fd)
                peer.sock.close()
                del peers[fd]


def listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(4096)
    sock.setblocking(False)
    return sock


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=0, help="0: any free port")
    p.add_argument("--object-size", type=int, default=4096, help="bytes a GET returns")
    p.add_argument("--processes", type=int, default=1, help="processes sharing the port")
    args = p.parse_args(argv)
    first = listen(args.port)
    port = first.getsockname()[1]
    answers = Answers(args.object_size)
    children: List[int] = []
    for _ in range(args.processes - 1):
        pid = os.fork()
        if pid == 0:
            first.close()
            serve(listen(port), answers)
            os._exit(0)
        children.append(pid)

    def end(signum: int, frame: object) -> None:
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    print("http://127.0.0.1:%d" % port, flush=True)
    sys.stdout.close()
    serve(first, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
