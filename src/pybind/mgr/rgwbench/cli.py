"""Command registration from Pacific to Tentacle, and error handling for commands.

Tentacle removed the global `CLICommand`/`CLIReadCommand`/`CLIWriteCommand`:
each module gets a registry of its own from `CLICommandBase` and names it as
its class attribute `CLICommand`. Pacific has only the globals (each module
lives in a sub-interpreter there, so the global registry is the module's own).
"""
import errno
import functools
import inspect
import logging
from typing import Any, Callable, TypeVar

import mgr_module
import orchestrator
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


def one_line(text: str) -> str:
    return ' '.join(text.split())


def error_result(e: Exception, command: str) -> HandleCommandResult:
    """Any failure of a command as one line on stderr and a negative errno, never a traceback.

    The orchestrator's errors keep their errno (negative on Pacific, positive on
    Tentacle); anything unexpected is EIO, with its traceback in the mgr's log.
    """
    if isinstance(e, RGWBenchError):
        return HandleCommandResult(retval=e.errno, stderr=one_line(str(e)))
    if isinstance(e, orchestrator.NoOrchestrator):
        return HandleCommandResult(retval=-errno.ENOENT, stderr=one_line(
            'this needs an orchestrator backend: %s' % (str(e) or type(e).__name__)))
    if isinstance(e, orchestrator.OrchestratorValidationError):
        return HandleCommandResult(retval=-errno.EINVAL,
                                   stderr=one_line('the orchestrator refused: %s' % e))
    if isinstance(e, orchestrator.OrchestratorError):
        code = -abs(int(getattr(e, 'errno', 0) or errno.EIO))
        return HandleCommandResult(retval=code,
                                   stderr=one_line('the orchestrator failed: %s' % e))
    log.exception('rgwbench: %s failed', command)
    return HandleCommandResult(retval=-errno.EIO, stderr=one_line(
        '%s failed: %s: %s (the traceback is in the mgr log)' % (command, type(e).__name__, e)))


def _errors_as_results(func: F, command: str) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as e:
            return error_result(e, command)
    # The registry reads arguments from the signature, not through __wrapped__.
    wrapper.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def read_command(prefix: str) -> Callable[[F], F]:
    """Register a command that only reads; it answers with one-line errors."""
    def register(func: F) -> F:
        registered: F = _read(prefix)(_errors_as_results(func, prefix))
        return registered
    return register


def write_command(prefix: str) -> Callable[[F], F]:
    """Register a command that changes something; it answers with one-line errors."""
    def register(func: F) -> F:
        registered: F = _write(prefix)(_errors_as_results(func, prefix))
        return registered
    return register
