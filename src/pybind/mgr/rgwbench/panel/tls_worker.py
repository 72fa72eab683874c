"""cheroot's TLS with each handshake in the worker that serves the connection.

cheroot's built-in adapter shakes hands in the thread that accepts
connections, with the connection's whole timeout: a client that never sends
its hello held up every other client of the panel that long. Here the
adapter only wraps the socket, and the connection finishes the handshake in
its worker before its first request (see deadlines.py, web/handshake.py).
"""
import ssl
from typing import Any, Dict, Tuple

from cheroot.ssl.builtin import BuiltinSSLAdapter


class WrapOnlyAdapter(BuiltinSSLAdapter):
    def wrap(self, sock: Any) -> Tuple[ssl.SSLSocket, Dict[str, str]]:
        wrapped = self.context.wrap_socket(sock, server_side=True,
                                           do_handshake_on_connect=False)
        return wrapped, {'HTTPS': 'on'}
