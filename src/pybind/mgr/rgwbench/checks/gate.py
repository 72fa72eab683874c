"""The checks a run and a load go through: before they start, between workloads, during each.

Before: every finding, for the profile (or the load's one workload); a
`refuse` finding refuses it before anything is made, as one line with its
errno. `--force` goes on past a HEALTH_ERR, never past the capacity estimate:
what the operator may judge is the cluster's state, not whether it fills up.

Between workloads: the cluster's findings again (no estimate: the run is
under way), kept when the run did not see them before it started; a
HEALTH_ERR without --force ends the run there. During a workload: PGs that
scrub or recover, second by second (during.py).
"""
import errno
from dataclasses import replace
from typing import Any, Callable, List, Optional, Sequence, Tuple

from ..errors import RGWBenchError
from ..profiles import Profile, Variant, Workload
from . import findings, sized_workload, workload_findings
from .cache_checks import cache_findings
from .during import PgWatch
from .facts import read_facts
from .finding import Finding, Level
from .view import ClusterView

#: the most a working set sized from the caches takes to prefill (module option prefill_time)
DEFAULT_PREFILL_S = 300.0
#: refusals --force goes on past
FORCEABLE = frozenset({'health-err'})
#: the errno of a refusal, by finding; others are EBUSY (the cluster is not fit now)
REFUSAL_ERRNO = {'capacity-exceeded': errno.ENOSPC}


class Refused(RGWBenchError):
    """A run or a load refused for what the checks found."""


def refusal(found: Sequence[Finding], what: str, force: bool) -> Optional[Refused]:
    """The refusal of `what` (e.g. 'the run') for `found`, or None if it may go on.

    One line: each refusing finding, its summary and fix; the errno is that of
    the first one --force cannot pass, else EBUSY.
    """
    blocking = sorted((f for f in found if f.level == Level.refuse
                       and not (force and f.id in FORCEABLE)),
                      key=lambda f: f.id in FORCEABLE)
    if not blocking:
        return None
    reasons = ['%s: %s (fix: %s%s)' % (
        f.id, f.summary, f.fix or '-', '; or --force' if f.id in FORCEABLE else '')
        for f in blocking]
    return Refused('refusing %s: %s' % (what, '; '.join(reasons)),
                   REFUSAL_ERRNO.get(blocking[0].id, errno.EBUSY))


def load_profile(workload: Workload, placement: Optional[List[str]]) -> Profile:
    """A load as the capacity estimate reads it: one variant, its one workload."""
    return Profile(name='load', description='', baseline='as-is',
                   variants=[Variant(name='as-is')], workloads=[workload],
                   placement=list(placement or []))


class RunChecks:
    """The checks of a run or a load, over one ClusterView (the mgr's)."""

    def __init__(self, *, view: ClusterView, keep_objects: Callable[[], bool] = lambda: False,
                 log: Optional[Any] = None,
                 new_pg_watch: Optional[Callable[[], PgWatch]] = None,
                 prefill_time: Callable[[], float] = lambda: 0.0) -> None:
        self.view = view
        self.keep_objects = keep_objects
        # The most a sized working set's prefill may take (0: working sets are not sized).
        self.prefill_time = prefill_time
        self.log = log
        self._new_pg_watch = new_pg_watch or (
            lambda: PgWatch(self.view.pg_summary, log=self.log))

    def now(self, profile: Optional[Profile], load: bool = False) -> List[Finding]:
        """What `check` would say: for a plan (read only, refuses nothing)."""
        return findings(self.view, profile, keep_objects=self.keep_objects(), load=load,
                        size_working_sets=self.prefill_time() > 0, rgw_required=not load)

    def sized(self, workload: Workload, agents: int, held: int = 1) -> Workload:
        """`workload` as it runs: a GET workload that names no `objects` gets a working
        set sized from the caches (within its share of the room with the `held`
        prefills its run keeps at once), when the prefill time allows sizing. The
        cluster unreadable now: the workload as it is (logged)."""
        if workload.objects is not None or self.prefill_time() <= 0:
            return workload
        try:
            return sized_workload(self.view, workload, agents, held)
        except Exception as e:
            if self.log:
                self.log.warning('the working set of %s was not sized: %s', workload.name, e)
            return workload

    def as_run(self, workload: Workload, agents: int,
               held: int = 1) -> Tuple[Workload, float]:
        """`workload` as it runs (see `sized`) and how long its prefill may take: the
        prefill time for a working set sized here, 0 (no bound) for one the workload
        names itself or one not sized."""
        sized = self.sized(workload, agents, held)
        if workload.objects is not None or sized.objects is None:
            return sized, 0.0
        return sized, self.prefill_time()

    def before(self, profile: Profile, *, force: bool, load: bool = False) -> List[Finding]:
        """Every finding before a run (or a load) starts; Refused if it must not."""
        found = self.now(profile, load=load)
        refused = refusal(found, 'the load' if load else 'the run', force)
        if refused is not None:
            raise refused
        return found

    def between(self, kept: List[Finding], *, variant: str, workload: str,
                force: bool, planned: Optional[Workload] = None, agents: int = 1,
                targets: int = 0) -> None:
        """Adds to `kept` (a run's findings) the cluster's findings before a workload.

        With `planned` (the workload as it runs now, on `agents` agents, over the
        variant's `targets`), also those about the workload itself: its requests
        against what RGW admits, their spread over the targets (a variant can have
        other targets than the cluster had before the run: an ingress, more RGWs),
        its working set against the caches. Each is tagged with the workload;
        those the run saw before it started (same id and evidence, for every
        workload or this one) are left out: they hold already. Refused (after
        adding them) on a HEALTH_ERR without --force. A check that cannot read
        the cluster now is logged and skipped.
        """
        known = {(f.id, f.evidence) for f in kept
                 if f.variant is None and f.workload in (None, workload)}
        try:
            now = findings(self.view) if planned is None else \
                workload_findings(self.view, planned, agents, targets)
        except Exception as e:
            if self.log:
                self.log.warning('the checks before workload %s of variant %s failed: %s',
                                 workload, variant, e)
            return
        found = [replace(f, variant=variant, workload=workload)
                 for f in now if (f.id, f.evidence) not in known]
        kept.extend(found)
        refused = refusal(found, 'to go on with workload %s of variant %s' % (
            workload, variant), force)
        if refused is not None:
            raise refused

    def working_set(self, workload: Workload, agents: int) -> List[Finding]:
        """Whether `workload`'s working set (as its prefill wrote it) fits in the caches;
        [] when the cluster cannot be read now (logged)."""
        try:
            return cache_findings(read_facts(self.view), [workload], agents)
        except Exception as e:
            if self.log:
                self.log.warning('the working set of %s was not checked: %s', workload.name, e)
            return []

    def pg_watch(self) -> PgWatch:
        """A watch of PG states for one workload (enter it while the workload runs)."""
        return self._new_pg_watch()
