"""The panel's cheroot server with bounded connections, each with its deadlines.

cheroot hands every connection to a worker thread (its queue of them has no
bound), and its socket timeout bounds each read, not a request: ten clients
that send their headers a byte at a time held all the panel's workers. Here
a connection takes a place in a ConnectionSlots (web/connection_slots.py)
each time it is handed to a worker, for a new request on it, and gives it
back when the worker is done with it; idle kept-alive connections hold
none (cheroot closes them after its timeout). The TLS handshake happens in
the worker (see tls_worker.py) and counts within the deadline for the
request's headers.
"""
import ssl
import threading
from typing import Any

from cheroot.server import HTTPConnection, HTTPRequest
from cheroot.wsgi import Server

from ..web.connection_slots import ConnectionSlots
from ..web.handshake import finish_handshake

CUT_EVERY_S = 0.25


def announced_length(request: HTTPRequest) -> int:
    try:
        return max(0, int(request.inheaders.get(b'Content-Length', 0)))
    except ValueError:
        return 0        # the app refuses the request unread


class PanelRequest(HTTPRequest):
    def parse_request(self) -> None:
        super().parse_request()
        if self.ready:
            self.server.slots.headers_read(self.conn.socket, announced_length(self))

    def send_headers(self) -> None:
        # The answer begins: the app has read the body, or refused it.
        self.server.slots.body_read(self.conn.socket)
        super().send_headers()


class PanelConnection(HTTPConnection):
    RequestHandlerClass = PanelRequest
    handshaken = False

    def communicate(self) -> bool:
        try:
            if not self.handshaken:
                if not self._handshake():
                    return False       # the worker closes the connection
                self.handshaken = True
            return bool(super().communicate())
        finally:
            self.server.slots.give_back(self.socket)

    def _handshake(self) -> bool:
        if self.server.ssl_adapter is None:
            return True
        # Bounded by itself, and cut with the connection at the deadline for the headers.
        return isinstance(self.socket, ssl.SSLSocket) and finish_handshake(self.socket)

    def close(self) -> None:
        self.server.slots.give_back(self.socket)
        super().close()


def cut_overdue_until(slots: ConnectionSlots, stop: threading.Event) -> None:
    while not stop.wait(CUT_EVERY_S):
        slots.cut_overdue()


class PanelHttpServer(Server):
    ConnectionClass = PanelConnection

    def __init__(self, *args: Any, slots: ConnectionSlots, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slots = slots

    def process_conn(self, conn: PanelConnection) -> None:
        # Called for a new connection, and for a kept one with a new request.
        if not self.slots.take(conn.socket, str(conn.remote_addr or '')):
            conn.close()            # its source holds all it may: no worker for it
            return
        super().process_conn(conn)

    def serve(self) -> None:
        stop = threading.Event()
        cutter = threading.Thread(
            target=cut_overdue_until, args=(self.slots, stop),
            name='rgwbench-panel-deadlines', daemon=True)
        cutter.start()
        try:
            super().serve()
        finally:
            stop.set()
            cutter.join()
