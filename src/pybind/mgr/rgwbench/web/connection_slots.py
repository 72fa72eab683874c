"""Places for a server's connections: bounded in all and per source, each with a deadline.

A server with a thread per connection can be filled by clients that open
connections and then send slowly or nothing at all (slowloris). Here:

* a source (see brake.source_of) holds at most `per_source` connections, and
  all sources together at most `total`; a connection over its source's bound
  is closed at once;
* a connection must send its TLS handshake, request line and headers within
  `head_s` of being accepted, and a body it announces within `body_s` plus
  a second for each BODY_RATE bytes once its headers are in: a socket's
  timeout bounds each read, not a request, and a client that sends a byte
  now and then would keep its connection for ever;
* when every place is taken, a new connection takes the place of the one
  that has waited longest for its headers: slow connections cannot keep out
  a client that sends its request at once, such as an agent.

A connection past its deadline, or whose place was taken, is cut
(``shutdown``) from outside its thread, which then ends. Shared by the
agents' endpoint; the server calls `cut_overdue` between its accepts.
"""
import socket
import threading
import time
from typing import Callable, Dict, Optional

from .brake import source_of
from .handshake import plain_shutdown

HEAD_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
BODY_RATE = 1024 * 1024      # bytes a second a body must at least come at, past BODY_TIMEOUT_S


class _Place:
    def __init__(self, source: str, opened: float, deadline: Optional[float]) -> None:
        self.source = source
        self.opened = opened
        self.deadline = deadline     # None: nothing more to wait for from the client
        self.head_read = False


class ConnectionSlots:
    def __init__(self, *, total: int, per_source: int, head_s: float = HEAD_TIMEOUT_S,
                 body_s: float = BODY_TIMEOUT_S, clock: Callable[[], float] = time.monotonic,
                 cut: Callable[[socket.socket], None] = plain_shutdown) -> None:
        self.total = total
        self.per_source = per_source
        self.head_s = head_s
        self.body_s = body_s
        self.clock = clock
        self.cut = cut
        self._lock = threading.Lock()
        self._places: Dict[socket.socket, _Place] = {}

    def take(self, conn: socket.socket, address: str) -> bool:
        """A place for a new connection; False when its source holds all it may (close it)."""
        source = source_of(address)
        pushed_out = None
        with self._lock:
            if sum(1 for p in self._places.values() if p.source == source) >= self.per_source:
                return False
            if len(self._places) >= self.total:
                waiting = [(p.opened, c) for c, p in self._places.items() if not p.head_read]
                if not waiting:
                    return False
                pushed_out = min(waiting, key=lambda found: found[0])[1]
                del self._places[pushed_out]
            now = self.clock()
            self._places[conn] = _Place(source, now, now + self.head_s)
        if pushed_out is not None:
            self.cut(pushed_out)
        return True

    def headers_read(self, conn: socket.socket, body_bytes: int) -> None:
        """The request's headers are in; it has its time for the body it announced."""
        with self._lock:
            place = self._places.get(conn)
            if place is not None:
                place.head_read = True
                place.deadline = self.clock() + self.body_s + body_bytes / BODY_RATE \
                    if body_bytes else None

    def body_read(self, conn: socket.socket) -> None:
        with self._lock:
            place = self._places.get(conn)
            if place is not None:
                place.deadline = None

    def give_back(self, conn: socket.socket) -> None:
        with self._lock:
            self._places.pop(conn, None)

    def cut_overdue(self) -> int:
        """Cut the connections past their deadline; how many."""
        now = self.clock()
        with self._lock:
            overdue = [c for c, p in self._places.items()
                       if p.deadline is not None and p.deadline <= now]
            for conn in overdue:
                del self._places[conn]
        for conn in overdue:
            self.cut(conn)
        return len(overdue)

    def count(self) -> int:
        with self._lock:
            return len(self._places)
