"""How long the steps that change the cluster took here: each restart of a service, spec
applied or put back and batch of OSDs restarted, timed where ClusterAccess makes it (by
runs, `settings apply` and `revert`, and undos alike), the last few of each kind kept in
the module's store for `plan` to estimate with (profiles/estimates.py)."""
import json
import statistics
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .kvstore import Store

#: an `orch restart` of a service (RGW), until its daemons are back and registered anew
DAEMON_RESTART = 'daemon_restart'
#: a spec of the RGW service applied or removed, until its daemons match it (each one
#: redeployed)
RGW_SPEC = 'rgw_spec'
#: another service's spec (an ingress) applied or removed, until its daemons match it
SPEC = 'spec'
#: a batch of OSDs restarted, until they are up again and the PGs active+clean
OSD_BATCH = 'osd_batch'
KINDS = (DAEMON_RESTART, RGW_SPEC, SPEC, OSD_BATCH)

STEP_TIMES_KEY = 'step_times'
#: the measurements kept of each kind: the estimate takes their median, so one step slow
#: by chance (a daemon that failed to start once) does not move it
KEPT = 9


def spec_kind(service_name: str) -> str:
    """The kind of step a spec of `service_name` applied or removed is."""
    return RGW_SPEC if service_name.startswith('rgw.') else SPEC


@dataclass(frozen=True)
class StepTimes:
    """The last `KEPT` durations in seconds of each kind of step, oldest first."""
    taken: Dict[str, List[float]] = field(default_factory=dict)

    def medians(self) -> Dict[str, float]:
        """Each kind measured: the median of its durations kept."""
        return {kind: float(statistics.median(times))
                for kind, times in self.taken.items() if times}

    def adding(self, kind: str, seconds: float) -> 'StepTimes':
        kept = (self.taken.get(kind, []) + [round(seconds, 2)])[-KEPT:]
        return StepTimes(dict(self.taken, **{kind: kept}))


def parse_step_times(raw: Optional[str]) -> StepTimes:
    """The stored form; what is not a list of non-negative numbers of a known kind (a
    hand-edited key, a kind of a later version) is left out."""
    try:
        loaded = json.loads(raw) if raw else {}
    except ValueError:
        return StepTimes()
    if not isinstance(loaded, dict):
        return StepTimes()
    taken = {}
    for kind in KINDS:
        times = loaded.get(kind)
        if isinstance(times, list):
            kept = [float(t) for t in times if isinstance(t, (int, float))
                    and not isinstance(t, bool) and t >= 0]
            if kept:
                taken[kind] = kept[-KEPT:]
    return StepTimes(taken)


class StepTimeStore:
    """The step times in the module's store (not a secret: durations only). A write
    lost with a failover loses one measurement, so set_store is enough."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()

    def read(self) -> StepTimes:
        return parse_step_times(self.store.get_store(STEP_TIMES_KEY))

    def medians(self) -> Dict[str, float]:
        return self.read().medians()

    def took(self, kind: str, seconds: float) -> None:
        """A step of `kind` took `seconds`."""
        if kind not in KINDS:
            raise ValueError('unknown kind of step %r' % kind)
        with self._lock:
            times = self.read().adding(kind, max(0.0, seconds))
            self.store.set_store(STEP_TIMES_KEY, json.dumps(times.taken, sort_keys=True))
