"""Exception types of the load engine.

Each carries the process exit code the command line uses for it, so a
caller (the CLI, or the mgr module driving the engine) can tell a usage
mistake from an endpoint that is down or refuses the credentials.
"""


class LoadgenError(Exception):
    """Base class: a one-line, user-facing message."""

    exit_code = 1


class UsageError(LoadgenError):
    """Bad arguments or job settings (exit code 2)."""

    exit_code = 2


class EndpointError(LoadgenError):
    """The endpoint cannot be reached or refuses the request (exit code 1)."""

    exit_code = 1


class AuthError(EndpointError):
    """The endpoint rejected the credentials (403 InvalidAccessKeyId, ...)."""


class ProtocolError(EndpointError):
    """The server sent something that is not valid HTTP/1.1."""
