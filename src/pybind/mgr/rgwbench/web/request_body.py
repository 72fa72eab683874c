"""How much of a request's body a server reads, decided from its headers before any read.

A body is read only when a Content-Length of plain digits announces it, and
only up to the server's limit. Anything else (a negative or malformed length,
a chunked body that announces no length) is refused before a byte is read:
`Content-Length: -1` would otherwise make a read go on until the client
stops sending, and that before any check of who sends it. A body that stops
before its length (the client closed, or sent nothing more within the
server's socket timeout) is refused too, never handed on cut short.
"""
import re
import socket
from typing import Optional, Protocol

_DIGITS = re.compile(r'[0-9]{1,19}')


class BodyRefused(Exception):
    """The request's body is not read; answer with `status` and the message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def body_length(content_length: Optional[str], transfer_encoding: Optional[str],
                limit: int) -> int:
    """The bytes to read (0: no body), or BodyRefused (400 or 413) when it must not be read."""
    if transfer_encoding is not None and transfer_encoding.strip():
        raise BodyRefused(400, 'send the body with a Content-Length, not a Transfer-Encoding')
    if content_length is None or not content_length.strip():
        return 0
    text = content_length.strip()
    if not _DIGITS.fullmatch(text):
        raise BodyRefused(400, 'Content-Length must be a whole number of bytes')
    length = int(text)
    if length > limit:
        raise BodyRefused(413, 'body too large (at most %d bytes)' % limit)
    return length


class Readable(Protocol):
    def read(self, size: int) -> bytes: ...


def read_body(stream: Readable, length: int) -> bytes:
    """The body of `length` bytes, or BodyRefused (408 or 400) when it does not all arrive."""
    if not length:
        return b''
    try:
        body = stream.read(length)
    except socket.timeout:
        raise BodyRefused(408, 'the body did not arrive in time')
    except OSError as e:
        raise BodyRefused(400, 'the body could not be read: %s' % (e.strerror or e))
    if len(body) != length:
        raise BodyRefused(400, 'the body ended after %d of its %d bytes' % (len(body), length))
    return body
