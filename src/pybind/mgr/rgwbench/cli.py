"""Command registration from Pacific to Tentacle, and error handling for commands.

Tentacle removed the global `CLICommand`/`CLIReadCommand`/`CLIWriteCommand`:
each module gets a registry of its own from `CLICommandBase` and names it as
its class attribute `CLICommand`. Pacific has only the globals (each module
lives in a sub-interpreter there, so the global registry is the module's own).
"""
import functools
import inspect
import logging
from typing import Any, Callable, TypeVar

import mgr_module
from mgr_module import HandleCommandResult

from .errors import RGWBenchError

log = logging.getLogger(__name__)

F = TypeVar('F', bound=Callable[..., Any])

if hasattr(mgr_module, 'CLICommandBase'):
    RGWBenchCLICommand: Any = mgr_module.CLICommandBase.make_registry_subtype(
        'RGWBenchCLICommand')
    _read: Callable[[str], Any] = RGWBenchCLICommand.Read
    _write: Callable[[str], Any] = RGWBenchCLICommand.Write
else:  # Pacific to Squid
    RGWBenchCLICommand = mgr_module.CLICommand
    _read = mgr_module.CLIReadCommand
    _write = mgr_module.CLIWriteCommand


def _errors_as_results(func: F) -> F:
    """Turn RGWBenchError into one line on stderr and its errno."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RGWBenchError as e:
            return HandleCommandResult(retval=e.errno, stderr=str(e))
    # The registry reads arguments from the signature, not through __wrapped__.
    wrapper.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def read_command(prefix: str) -> Callable[[F], F]:
    """Register a command that only reads; it answers with one-line errors."""
    def register(func: F) -> F:
        registered: F = _read(prefix)(_errors_as_results(func))
        return registered
    return register


def write_command(prefix: str) -> Callable[[F], F]:
    """Register a command that changes something; it answers with one-line errors."""
    def register(func: F) -> F:
        registered: F = _write(prefix)(_errors_as_results(func))
        return registered
    return register
