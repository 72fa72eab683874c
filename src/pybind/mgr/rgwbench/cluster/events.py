"""What the cluster shows while a run goes: a progress event in `ceph -s` and a health warning.

The warning (`RGWBENCH_RUNNING`) says which run it is and what it changed,
so that an operator who sees restarted daemons or a new ingress knows why.
Beside it stand the checks that last until an operator acts (`standing`: an
undo given up, targets someone else changed during a run).
"""
from typing import Any, Callable, Dict, List, Protocol

HEALTH_CHECK = 'RGWBENCH_RUNNING'


class Mgr(Protocol):
    def remote(self, module: str, method: str, *args: Any, **kwargs: Any) -> Any: ...

    def set_health_checks(self, checks: Dict[str, Any]) -> None: ...


Checks = Dict[str, Dict[str, Any]]


class ClusterRunEvents:
    def __init__(self, mgr: Mgr, log: Any, *,
                 standing: Callable[[], Checks] = lambda: {}) -> None:
        self.mgr = mgr
        self.log = log
        self.standing = standing
        self._running: Checks = {}

    def publish(self) -> None:
        """The health checks as they are now: the standing ones and a run's."""
        try:
            standing = self.standing()
        except Exception as e:   # the store unreadable a moment: the run's own still show
            self.log.debug('standing health checks: %s', e)
            standing = {}
        self.mgr.set_health_checks(dict(standing, **self._running))

    @staticmethod
    def event_id(run_id: str) -> str:
        return 'rgwbench-run-%s' % run_id

    def _progress(self, method: str, *args: Any, **kwargs: Any) -> None:
        try:
            self.mgr.remote('progress', method, *args, **kwargs)
        except Exception as e:  # progress is a courtesy: a run never fails for it
            self.log.debug('progress %s: %s', method, e)

    def started(self, run_id: str, profile: str) -> None:
        self.update(run_id, 'starting', 0.0, [])

    def update(self, run_id: str, message: str, fraction: float, changed: List[str]) -> None:
        self._progress('update', self.event_id(run_id),
                       'rgwbench run %s: %s' % (run_id, message), fraction,
                       add_to_ceph_s=True)
        detail = ['%s' % line for line in changed] or ['no setting changed (yet)']
        self._running = {HEALTH_CHECK: {
            'severity': 'warning',
            'summary': 'rgwbench run %s in progress: %s' % (run_id, message),
            'count': len(changed),
            'detail': ['changed until the run ends: %s' % line for line in detail]}}
        self.publish()

    def finished(self, run_id: str, state: str, message: str) -> None:
        if state == 'complete':
            self._progress('complete', self.event_id(run_id))
        else:
            self._progress('fail', self.event_id(run_id), '%s%s' % (
                state, ': %s' % message if message else ''))
        self._running = {}
        self.publish()
