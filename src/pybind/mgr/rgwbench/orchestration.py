"""What the module can learn of the cluster's orchestrator backend."""
from typing import Any, Dict, List, NamedTuple, Optional, Protocol

import orchestrator

from .errors import InvalidInput, NotFound


class OrchestratorState(NamedTuple):
    backend: Optional[str]
    available: bool
    message: str

    def to_dict(self) -> Dict[str, Any]:
        return {'backend': self.backend, 'available': self.available,
                'message': self.message}


class Remote(Protocol):
    def remote(self, module: str, method: str, *args: Any, **kwargs: Any) -> Any: ...


def orchestrator_state(mgr: Remote) -> OrchestratorState:
    """Which backend is set and whether it answers, without raising."""
    try:
        backend = mgr.remote('orchestrator', '_select_orchestrator')
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
