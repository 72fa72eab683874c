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
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

import mgr_module
import orchestrator
from mgr_module import HandleCommandResult

from .errors import RGWBenchError
from .formatting import parse_format, render
from .serial import dump

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
    return _with_signature(wrapper, inspect.signature(func))


def _with_signature(wrapper: Any, signature: inspect.Signature) -> Any:
    """The registry reads a command's arguments from the signature of the function at the
    end of its `__wrapped__` chain: the wrapper's own signature is made the one read."""
    wrapper.__dict__.pop('__wrapped__', None)
    wrapper.__signature__ = signature
    return wrapper


def _rendered(func: F, text: Callable[[Any], str]) -> F:
    """A command that returns data, printed as `-f` asks: plain text by `text`, or
    JSON/YAML. It gains the `format` argument."""
    @functools.wraps(func)
    def wrapper(*args: Any, format: str = 'plain', **kwargs: Any) -> Any:
        fmt = parse_format(format)
        data = func(*args, **kwargs)
        if isinstance(data, HandleCommandResult):
            return data
        return HandleCommandResult(stdout=render(dump(data), fmt, lambda _: text(data)))
    signature = inspect.signature(func)
    params = list(signature.parameters.values()) + [
        inspect.Parameter('format', inspect.Parameter.POSITIONAL_OR_KEYWORD, default='plain',
                          annotation=str)]
    return _with_signature(wrapper, signature.replace(parameters=params))


#: a command's argument: its name, its type and its default
Word = Tuple[str, Any, Any]


def with_words(words: Sequence[Word], into: str) -> Callable[[F], F]:
    """Gives a command the arguments `words` in place of its parameter `into`, which
    receives them as one dict."""
    def add(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name, default) for name, _, default in words}
            return func(*args, **{into: given}, **kwargs)
        signature = inspect.signature(func)
        params: List[inspect.Parameter] = []
        for param in signature.parameters.values():
            if param.name == into:
                params.extend(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=default, annotation=kind)
                              for name, kind, default in words)
            else:
                params.append(param)
        return _with_signature(wrapper, signature.replace(parameters=params))
    return add


def read_command(prefix: str, text: Optional[Callable[[Any], str]] = None
                 ) -> Callable[[F], F]:
    """Register a command that only reads; it answers with one-line errors. With `text`,
    the command returns data, printed as `-f` asks (`text` makes the plain form)."""
    def register(func: F) -> F:
        handler = func if text is None else _rendered(func, text)
        registered: F = _read(prefix)(_errors_as_results(handler, prefix))
        return registered
    return register


def write_command(prefix: str) -> Callable[[F], F]:
    """Register a command that changes something; it answers with one-line errors."""
    def register(func: F) -> F:
        registered: F = _write(prefix)(_errors_as_results(func, prefix))
        return registered
    return register
