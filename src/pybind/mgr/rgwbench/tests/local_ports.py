"""A port of 127.0.0.1 that no one listens on, for servers the tests start."""
import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])
