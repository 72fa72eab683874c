"""Every failure of a command is one line with a negative errno, never a traceback."""
import errno
import logging
from typing import Any, Optional

import orchestrator
import pytest
from mgr_module import HandleCommandResult

from rgwbench.cli import error_result, read_command
from rgwbench.errors import Busy, NotFound


@pytest.mark.parametrize('failure, code, words', [
    (Busy('run r-1 is in progress'), errno.EBUSY, 'run r-1 is in progress'),
    (NotFound('no run r-2\n(see results ls)'), errno.ENOENT, 'no run r-2 (see results ls)'),
    (orchestrator.NoOrchestrator(), errno.ENOENT, 'this needs an orchestrator backend'),
    (orchestrator.OrchestratorValidationError('ssl needs a certificate'), errno.EINVAL,
     'the orchestrator refused: ssl needs a certificate'),
    # the errno sign differs between releases
    (orchestrator.OrchestratorError('host h9 is offline', errno=-errno.EHOSTDOWN),
     errno.EHOSTDOWN, 'the orchestrator failed: host h9 is offline'),
    (orchestrator.OrchestratorError('host h9 is offline', errno=errno.EHOSTDOWN),
     errno.EHOSTDOWN, 'the orchestrator failed: host h9 is offline'),
    (orchestrator.OrchestratorError('no errno'), errno.EINVAL, 'the orchestrator failed'),
    (KeyError('spec'), errno.EIO,
     "rgwbench plan failed: KeyError: 'spec' (the traceback is in the mgr log)"),
])
def test_each_failure_is_one_line_with_its_errno(failure: Exception, code: int,
                                                 words: str) -> None:
    result = error_result(failure, 'rgwbench plan')
    assert result.retval == -code
    assert words in result.stderr
    assert '\n' not in result.stderr and 'Traceback' not in result.stderr
    assert result.stdout == ''


def test_an_unexpected_failure_leaves_its_traceback_in_the_log(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        error_result(ZeroDivisionError('division by zero'), 'rgwbench results show')
    assert "rgwbench: rgwbench results show failed\n" in caplog.text
    assert caplog.records[-1].exc_info is not None


class Commands:
    @read_command('rgwbench-test raise')
    def _cmd(self, what: Optional[str] = None) -> HandleCommandResult:
        """A command that fails"""
        if what == 'orch':
            raise orchestrator.NoOrchestrator()
        raise RuntimeError('boom')


@pytest.mark.parametrize('what, code', [('orch', errno.ENOENT), ('other', errno.EIO)])
def test_a_registered_command_answers_with_the_result_not_an_exception(
        what: str, code: int) -> None:
    result: Any = Commands()._cmd(what=what)
    assert isinstance(result, HandleCommandResult) and result.retval == -code
