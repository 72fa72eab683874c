import threading
from typing import Any, List

from rgwbench.cluster.orchestration import wait_for_backend


class LoadingBackend:
    """A backend whose module is loaded after `loaded_after` questions."""

    def __init__(self, backend: Any, loaded_after: int) -> None:
        self.backend, self.loaded_after = backend, loaded_after
        self.asked: List[str] = []

    def remote(self, module: str, method: str, *args: Any, **kwargs: Any) -> Any:
        self.asked.append(method)
        if module == 'orchestrator':
            return self.backend
        if self.asked.count('available') <= self.loaded_after:
            raise ImportError('Module not found')
        return True, ''


def test_the_backend_is_waited_for_until_its_module_answers() -> None:
    mgr = LoadingBackend('test_orchestrator', loaded_after=3)
    state = wait_for_backend(mgr, threading.Event(), timeout_s=30, poll_s=0.01)
    assert state.available and mgr.asked.count('available') == 4


def test_no_backend_is_not_waited_for() -> None:
    mgr = LoadingBackend(None, loaded_after=10)
    state = wait_for_backend(mgr, threading.Event(), timeout_s=30, poll_s=0.01)
    assert not state.available and mgr.asked == ['_select_orchestrator']


def test_the_wait_ends_when_time_is_up_or_the_module_stops() -> None:
    mgr = LoadingBackend('cephadm', loaded_after=10 ** 6)
    state = wait_for_backend(mgr, threading.Event(), timeout_s=0.05, poll_s=0.01)
    assert not state.available and 'Module not found' in state.message
    stopping = threading.Event()
    stopping.set()
    mgr.asked.clear()
    assert not wait_for_backend(mgr, stopping, timeout_s=30, poll_s=10).available
    assert mgr.asked.count('available') == 1
