"""The TLS handshake of a connection: in the thread that serves it, bounded as a whole.

A server that shakes hands where it accepts connections waits there for each
client, and one that sends its hello slowly, or never, holds up every
connection behind it. The panel and the agents' endpoint accept a connection
without a handshake (``do_handshake_on_connect=False``) and finish it here,
in the connection's own thread. The time is bounded for the whole handshake,
not for each read of it: a client that sends a byte at a time is cut off too.
"""
import socket
import ssl
from typing import Optional

HANDSHAKE_TIMEOUT_S = 10.0


def finish_handshake(sock: ssl.SSLSocket, timeout_s: Optional[float] = None) -> bool:
    """Complete the server's handshake; False (close the connection) when it failed or
    did not complete within `timeout_s` (default HANDSHAKE_TIMEOUT_S)."""
    before = sock.gettimeout()
    sock.settimeout(HANDSHAKE_TIMEOUT_S if timeout_s is None else timeout_s)
    try:
        # The ssl module keeps one deadline for all the reads and writes of a handshake.
        sock.do_handshake()
        return True
    except (OSError, ValueError):        # ssl.SSLError and socket.timeout are OSErrors
        return False
    finally:
        try:
            sock.settimeout(before)
        except OSError:
            pass


def plain_shutdown(sock: socket.socket) -> None:
    """Cut a connection from another thread: its blocked read returns at once."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass
