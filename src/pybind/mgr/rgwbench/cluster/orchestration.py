"""What the module can learn of the cluster's orchestrator backend."""
import threading
import time
from dataclasses import dataclass
from typing import Any, List, Optional, Protocol

import orchestrator

from ..errors import InvalidInput, NotFound


@dataclass(frozen=True)
class OrchestratorState:
    backend: Optional[str]
    available: bool
    message: str


class Remote(Protocol):
    def remote(self, module: str, method: str, *args: Any, **kwargs: Any) -> Any: ...


def orchestrator_backend(mgr: Remote) -> Optional[str]:
    """The backend set (`ceph orch set backend`); raises when the orchestrator module is
    missing."""
    backend = mgr.remote('orchestrator', '_select_orchestrator')
    return str(backend) if backend else None


def orchestrator_state(mgr: Remote) -> OrchestratorState:
    """Which backend is set and whether it answers, without raising."""
    try:
        backend = orchestrator_backend(mgr)
    except Exception as e:  # the orchestrator module itself may be missing
        return OrchestratorState(None, False, 'orchestrator module unavailable: %s' % e)
    if not backend:
        return OrchestratorState(None, False,
                                 'no orchestrator backend set (ceph orch set backend)')
    try:
        result = mgr.remote(backend, 'available')
        if hasattr(result, 'exception'):  # an OrchResult on newer releases
            result = orchestrator.raise_if_exception(result)
        ok, message = bool(result[0]), str(result[1] or '')
    except Exception as e:
        return OrchestratorState(backend, False, '%s: %s' % (type(e).__name__, e))
    return OrchestratorState(backend, ok, message)


def wait_for_backend(mgr: Remote, stopping: threading.Event, timeout_s: float,
                     poll_s: float = 1.0) -> OrchestratorState:
    """The backend's state once it answers, none is set, the module stops or time is up.

    Just after a failover the backend's module may still be loading while ours
    starts: what is asked of it then fails with "Module not found".
    """
    deadline = time.monotonic() + timeout_s
    while True:
        state = orchestrator_state(mgr)
        if (state.available or state.backend is None or time.monotonic() >= deadline
                or stopping.wait(poll_s)):
            return state


def rgw_service_under_test(chosen: str, names: List[str]) -> str:
    """The RGW service settings change: the one chosen, or the only one there is."""
    if chosen:
        if chosen not in names:
            raise NotFound('rgw_service %s is not a service of the orchestrator (it has: '
                           '%s)' % (chosen, ', '.join(names) or 'no RGW service'))
        return chosen
    if len(names) != 1:
        raise InvalidInput('%s; set mgr/rgwbench/rgw_service' % (
            'the orchestrator manages no RGW service' if not names else
            'the orchestrator manages several RGW services (%s)' % ', '.join(names)))
    return names[0]
