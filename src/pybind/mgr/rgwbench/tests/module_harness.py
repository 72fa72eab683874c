"""The module as ceph-mgr drives it, for tests: the module with its remote calls answered,
its commands registered (a module-scoped autouse fixture: a file imports it to take it),
and a command called with a cmd dict."""
from typing import Any, Dict, Iterator, Tuple

import pytest
from mgr_module import HandleCommandResult

from rgwbench.module import Module

from fixtures import rgw_service_map


class ModuleUnderTest(Module):
    def __init__(self, remotes: Dict[Tuple[str, str], Any]) -> None:
        super().__init__('rgwbench', None, None)
        self.remotes = remotes
        self._fake_data['service_map'] = rgw_service_map(
            **{'default.vm.a': 'beast port=25598 tcp_nodelay=1'})

    def remote(self, module: str, method: str, *args: Any, **kwargs: Any) -> Any:
        answer = self.remotes[(module, method)]
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture(scope='module', autouse=True)
def registered() -> Iterator[None]:
    """As the mgr does once. _register_commands adds to the class's list, and several test
    files take this fixture: each gets the lists back as they were."""
    commands, options = list(Module.COMMANDS), list(Module.MODULE_OPTIONS)
    Module._register_options('rgwbench')
    Module._register_commands('rgwbench')
    yield
    Module.COMMANDS[:], Module.MODULE_OPTIONS[:] = commands, options


def call(mod: Module, prefix: str, **args: Any) -> HandleCommandResult:
    result = mod._handle_command('', dict(args, prefix=prefix))
    return HandleCommandResult(*result)
