"""On an interpreter older than 3.8 the package gives the mgr a module that cannot run.

The package file is run as the mgr imports it, with sys.version_info set to the
interpreter simulated; the real module, already imported here, is not imported again.
"""
import ast
import sys
from typing import Any, Dict, Tuple
from unittest import mock

from mgr_module import MgrModule

import rgwbench
import rgwbench.module


def _package_on(version: Tuple[Any, ...]) -> Dict[str, Any]:
    with open(rgwbench.__file__) as f:
        code = compile(f.read(), rgwbench.__file__, 'exec')
    namespace: Dict[str, Any] = {'__name__': 'rgwbench', '__package__': 'rgwbench',
                                 '__file__': rgwbench.__file__}
    with mock.patch.object(sys, 'version_info', version):
        exec(code, namespace)
    return namespace


def test_an_old_python_gets_a_module_that_says_why_in_one_line() -> None:
    module = _package_on((3, 6, 8, 'final', 0))['Module']
    assert issubclass(module, MgrModule)
    assert module is not rgwbench.module.Module
    assert module.can_run() == (
        False, 'rgwbench needs Python 3.8 or newer; this mgr runs Python 3.6')


def test_a_new_enough_python_gets_the_real_module() -> None:
    module = _package_on((3, 8, 0, 'final', 0))['Module']
    assert module is rgwbench.module.Module
    assert module.can_run() == (True, '')


def test_the_package_file_parses_as_python_3_6() -> None:
    with open(rgwbench.__file__) as f:
        ast.parse(f.read(), feature_version=(3, 6))
