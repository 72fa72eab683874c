"""Plan, apply, verify and revert settings, every change journaled before it is made."""
from dataclasses import dataclass, field, replace
from typing import AbstractSet, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..errors import Busy, InvalidInput, RGWBenchError
from ..cluster.fencing import Fenced
from .journal import FINISHED, Journal, JournalError, Step
from .targets import Target
from .base import ClientSide, PlanView, Setting, SettingContext
from .changes import (CONFIG, RESTART, SERVICE, UNDO_LAST, Change, changed_meanwhile,
                      config_change, current_state, put_state)
from ..cluster.storage import ALLOW_POOL_DELETE
from ..cluster.access import GaveUp, pgs_not_clean_once_settled
from .daemon_settings import OSD_RESTART_TARGET, RGWRestart
from ..cluster.secret_options import masked_settings
from ..serial import HIDDEN, OMIT_NONE, derived
from .tls import client_targets

Log = Callable[[str], None]
RGW_RESTART = RGWRestart.name


def _masked_value(plan: 'SettingPlan') -> Any:
    return masked_settings({plan.setting: plan.value})[plan.setting]


@dataclass(frozen=True)
class SettingPlan:
    setting: str
    # Plans are shown and stored: a secret option's value never in clear.
    value: Any = field(metadata=derived(_masked_value))
    notes: List[str]
    changes: List[Change]
    # a value chosen from the cluster (`sse=auto`): the value above, and why
    chosen: Optional[str] = field(default=None, metadata=OMIT_NONE)
    # The restarts its own changes need, before each restart is kept once (where it is
    # last asked for): what putting it back alone must restart again.
    restarts: Tuple[str, ...] = field(default=(), metadata=HIDDEN)


JournalTarget = Tuple[str, str]   # a journaled target: (kind, name)


@dataclass(frozen=True)
class Carry:
    """Between two variants of a run: the settings the next keeps as they are, and the
    targets put back first (those of the settings leaving or changing)."""
    kept: Tuple[str, ...]
    put_back: AbstractSet[JournalTarget]
    # Restarts the put-back does that a kept setting needs again when it goes in turn:
    # the journal's step of it is used up by this put-back.
    owed: Tuple[str, ...] = ()


class HealthRefusal(RGWBenchError):
    pass


class SettingsApplier:
    """Turns settings into journaled changes on the cluster, and puts them back."""

    def __init__(self, ctx: SettingContext, settings: List[Setting],
                 log: Optional[Log] = None) -> None:
        self.ctx = ctx
        self.settings = {s.name: s for s in settings}
        self.order = [s.name for s in settings]
        self.log = log or (lambda msg: None)

    # -- reading and planning ---------------------------------------------------------
    def parse(self, settings: Dict[str, Any]) -> Dict[str, Any]:
        unknown = sorted(set(settings) - set(self.settings))
        if unknown:
            raise InvalidInput('unknown setting %s (known: %s)' % (
                ', '.join(unknown), ', '.join(self.order)))
        return {name: self.settings[name].parse(settings[name])
                for name in self.order if name in settings}

    def plan(self, settings: Dict[str, Any], restart_rgw: bool = False,
             force: bool = False) -> List[SettingPlan]:
        """Every change the settings would make, in the order they would be made.

        With `restart_rgw`, the RGW service restarts at the end if nothing else
        restarts it (see `alike_restarts`). `force`: what a setting refuses
        without it (SettingContext.force) is planned.
        """
        plans = self._plan(settings, force)
        if restart_rgw and RGW_RESTART not in settings and not self._restarts_rgw(plans):
            plans = self._plan(dict(settings, **{RGW_RESTART: 'on'}), force)
        return plans

    def alike_restarts(self, variants: Sequence[Dict[str, Any]]) -> bool:
        """Whether a run of these variants must restart RGW for each one: when some
        restart or redeploy it. A restarted RGW holds less memory and colder caches
        than a long-running one; without this, that would read as the settings' effect.

        Every variant is planned, so that wrong settings in any of them refuse the run
        before it changes anything."""
        return self.restarts(variants)[0]

    def restart_osds(self, variants: Sequence[Dict[str, Any]]) -> bool:
        """Whether applying any of these settings restarts the OSDs."""
        return self.restarts(variants)[1]

    def restarts(self, variants: Sequence[Dict[str, Any]]) -> Tuple[bool, bool]:
        """(`alike_restarts`, `restart_osds`) of these variants, each planned once."""
        service = self.ctx.rgw_service()
        planned = [self._plan(settings) for settings in variants]
        alike = len(planned) > 1 and any(
            c.target == service and c.kind in (RESTART, SERVICE)
            for plans in planned for p in plans for c in p.changes)
        return alike, any(restarts_osds(plans) for plans in planned)

    def _restarts_rgw(self, plans: List[SettingPlan]) -> bool:
        service = self.ctx.rgw_service()
        return any(c.kind == RESTART and c.target == service for p in plans for c in p.changes)

    def _plan(self, settings: Dict[str, Any], force: bool = False,
              view: Optional[PlanView] = None) -> List[SettingPlan]:
        parsed = self.parse(settings)
        view = view or PlanView(self.ctx.cluster)
        ctx = self.ctx._replace(force=force) if force else self.ctx
        plans = []
        for name, value in parsed.items():
            setting = self.settings[name]
            chosen = setting.choose(ctx, value)
            if chosen is not None:
                value = chosen.value
            changes = setting.plan(ctx, view, value)
            view.add(changes)
            plans.append(SettingPlan(name, value, notes=setting.notes(self.ctx, value),
                                     changes=changes,
                                     chosen=chosen.why if chosen is not None else None,
                                     restarts=tuple(c.target for c in changes
                                                    if c.kind == RESTART)))
        return without_early_restarts(plans)

    def plan_after(self, settings: Dict[str, Any], in_place: Sequence[SettingPlan],
                   restart_rgw: bool = False) -> List[SettingPlan]:
        """As `plan`, with the changes of `in_place` (settings a run keeps from its
        variant before) taken as made: what a dry run shows of a later variant."""
        def view() -> PlanView:
            found = PlanView(self.ctx.cluster)
            found.add([c for p in in_place for c in p.changes])
            return found
        plans = self._plan(settings, view=view())
        if restart_rgw and RGW_RESTART not in settings and not self._restarts_rgw(plans):
            plans = self._plan(dict(settings, **{RGW_RESTART: 'on'}), view=view())
        return plans

    def carry(self, in_place: Sequence[SettingPlan], following: Dict[str, Any]) -> Carry:
        """What the next variant (`following`, its settings) keeps of the settings in
        place (each setting's plan when it was put in place) and what is put back first.

        A setting the next variant gives the same value stays as it is, unless a setting
        leaving or changing shares a target with it (a spec both changed): that target
        goes back to its state before the run, and the next variant plans the setting
        again. A restart one of the settings put back needed is done again after them
        (the daemons read the settings put back); a setting that only restarts
        (rgw-restart) leaves nothing to restart. A value chosen from the cluster
        (`sse=auto`) is compared as chosen."""
        wanted = {name: self._chosen(name, value)
                  for name, value in self.parse(following).items()}

        def targets(plan: SettingPlan) -> Set[JournalTarget]:
            return {(c.kind, c.target) for c in plan.changes if c.kind != RESTART}
        leaving = [p for p in in_place
                   if p.setting not in wanted or wanted[p.setting] != p.value]
        staying = [p for p in in_place if p not in leaving]
        while True:
            touched: Set[JournalTarget] = set()
            for plan in leaving:
                touched |= targets(plan)
            moved = [p for p in staying if targets(p) & touched]
            if not moved:
                break
            leaving += moved
            staying = [p for p in staying if p not in moved]
        put_back = set(touched)
        for plan in leaving:
            if targets(plan):
                put_back |= {(RESTART, r) for r in plan.restarts}
        owed = sorted({r for p in staying if targets(p) for r in p.restarts
                       if (RESTART, r) in put_back})
        return Carry(kept=tuple(p.setting for p in staying), put_back=frozenset(put_back),
                     owed=tuple(owed))

    def _chosen(self, name: str, value: Any) -> Any:
        chosen = self.settings[name].choose(self.ctx, value)
        return value if chosen is None else chosen.value

    def put_back_leaving(self, journal: Journal, carry: Carry,
                         keep: Sequence[str] = ()) -> List[Step]:
        """Put back what `carry` says goes before the next variant; the journal stays
        open. A restart a kept setting still needs when it goes is journaled again
        (as made: the put-back just did it, with the kept setting in place)."""
        steps = self.revert(journal, keep=keep, close=False, only=carry.put_back)
        for daemons in carry.owed:
            if not any(s.kind == RESTART and s.target == daemons and s.state not in FINISHED
                       for s in steps):
                step = journal.record(RESTART, daemons, None, None)
                journal.made(step)
        return journal.steps() if carry.owed else steps

    def osd_restarts(self) -> int:
        """OSD daemons this applier's cluster restarted so far."""
        return int(getattr(self.ctx.cluster, 'osd_restarted', 0))

    def precheck(self, force: bool = False, restart_osds: bool = False,
                 settle: bool = False) -> List[str]:
        """Why the cluster is not fit to be changed now (empty: it is).

        `restart_osds`: the changes restart the OSDs a host at a time, each only once
        `osd ok-to-stop` allows it. Where it never does (a pool without a replica
        on another OSD: the demo's one-OSD cluster), the change would wait for it
        in vain and so would putting it back; refused before anything changes,
        even with --force, since it would take PGs offline.

        `settle` (a change about to be made, not a plan): when PGs not active+clean
        are all that keeps the cluster from being fit and each is only on its way
        there (a pool the test or run before made a moment ago: `creating+peering`
        for seconds), they have their wait (ready_timeout) first, as before a
        restart. PGs missing a copy, or any other problem, are refused at once."""
        cluster = self.ctx.cluster
        problems = []
        if restart_osds:
            blocker = cluster.osd_restart_blocker()
            if blocker:
                problems.append(
                    'these settings restart every OSD, which cannot be done now: %s' % blocker)
        status, checks = cluster.health()
        if status == 'HEALTH_ERR' and not force:
            problems.append('the cluster is HEALTH_ERR (%s); --force to go on anyway'
                            % ', '.join(checks))
        no_rgw = not cluster.rgw_daemons()
        if not force:
            unclean = pgs_not_clean_once_settled(cluster, 'changing the cluster', self.log) \
                if settle and not problems and not no_rgw else cluster.pgs_not_clean()
            if unclean:
                problems.append('not every PG is active+clean (%s); --force to go on anyway'
                                % unclean)
        if no_rgw:
            problems.append('no RGW daemon is in the service map')
        return problems

    # -- changing -----------------------------------------------------------------------
    def apply(self, journal: Journal, plans: List[SettingPlan],
              progress: Optional[Log] = None,
              given_up: Callable[[], bool] = lambda: False) -> ClientSide:
        """Make every change (journaled first), then check each setting is in effect.

        When given_up() turns true (an abort), no further change is made and a
        wait in progress (an OSD restart, say) ends at once with GaveUp: what
        was made is in the journal, for the revert that follows.
        """
        with self.ctx.cluster.giving_up_when(given_up):
            for plan in plans:
                for change in plan.changes:
                    if given_up():
                        raise GaveUp('stopped before %s: the run was aborted' % change.summary)
                    if progress:
                        progress(change.summary)
                    if change.kind == RESTART:
                        self.ctx.cluster.wait_ready_to_restart(change.target)
                    before = current_state(self.ctx.cluster, change)
                    step = journal.record(change.kind, change.target, before, change.after)
                    journal.check_owner('make the change %s' % change.summary)
                    put_state(self.ctx.cluster, change.kind, change.target, change.after)
                    journal.made(step)
            for plan in plans:
                if progress:
                    progress('checking that %s is in effect' % plan.setting)
                self.settings[plan.setting].verify(self.ctx, plan.value)
        return self.client(plans)

    def client(self, plans: List[SettingPlan]) -> ClientSide:
        client = ClientSide()
        for plan in plans:
            client = self.settings[plan.setting].client(self.ctx, plan.value, client)
        return client

    def targets(self, target: Target, client: ClientSide) -> ClientSide:
        """`client` with where a load goes under it, from the cluster as it is now."""
        return client_targets(self.ctx, target, client)

    def revert(self, journal: Journal, keep: Sequence[str] = (),
               close: bool = True, force: bool = False,
               only: Optional[AbstractSet[JournalTarget]] = None) -> List[Step]:
        """Put back everything the journal recorded but the targets of the kinds in
        `keep`; closes the journal when all is undone (unless `close` is False: a
        run's journal stays open for its next variant). Daemons are restarted only
        while every PG is active+clean, unless `force`: restarting daemons of a
        degraded cluster can take data offline; the restart stays to be done."""
        def allowing_delete(remove: Callable[[], None]) -> None:
            self.allowing_pool_delete(journal, remove)

        def undo(step: Step) -> None:
            self.log('putting back %s %s' % (step.kind, step.target))
            if step.kind == RESTART:
                unclean = None if force else pgs_not_clean_once_settled(
                    self.ctx.cluster, 'restarting %s' % step.target, self.log)
                if unclean:
                    raise HealthRefusal(
                        'not restarting %s: not every PG is active+clean (%s) within '
                        'ready_timeout; `ceph rgwbench settings revert --force` restarts it '
                        'anyway' % (step.target, unclean))
                # Once: a restart is an action, not a state to insist on.
                put_state(self.ctx.cluster, step.kind, step.target, step.before)
                return
            try:
                put_state(self.ctx.cluster, step.kind, step.target, step.before,
                          allowing_delete, replaced=step.after)
            except Fenced:
                raise
            except Exception as e:
                # One failed call (the orchestrator's, the mon's) would otherwise leave
                # the journal open until the mgr restarts. Putting back is idempotent.
                self.log('putting back %s %s failed (%s): trying once more'
                         % (step.kind, step.target, e))
                put_state(self.ctx.cluster, step.kind, step.target, step.before,
                          allowing_delete, replaced=step.after)

        def changed(step: Step, left_in: List[Any]) -> Optional[str]:
            return changed_meanwhile(self.ctx.cluster, step.kind, step.target, step.before,
                                     left_in)
        kinds = {step.kind for step in journal.steps()}
        steps = journal.undo({kind: undo for kind in kinds}, log=self.log, last=UNDO_LAST,
                             keep=keep, changed_meanwhile=changed, only=only)
        if close and all(s.state in FINISHED for s in steps):
            journal.close()
        return steps

    def allowing_pool_delete(self, journal: Journal, remove: Callable[[], None]) -> None:
        """Run `remove` (a pool's removal) with `mon_allow_pool_delete` true, journaled like
        any change and put back as it was right after: a crash in between leaves a step
        that the next revert puts back first (it is the newest)."""
        change = _allow_delete()
        before = current_state(self.ctx.cluster, change)
        step = journal.record(CONFIG, change.target, before, change.after)
        journal.check_owner('make the change %s' % change.summary)
        put_state(self.ctx.cluster, CONFIG, change.target, change.after)
        step = journal.made(step)
        try:
            remove()
        finally:
            put_state(self.ctx.cluster, CONFIG, change.target, before)
            journal.undone(step)


def _allow_delete() -> Change:
    return config_change(ALLOW_POOL_DELETE[0], ALLOW_POOL_DELETE[1], 'true')


def as_put_in_place(settings: Dict[str, Any], plans: List[SettingPlan]) -> Dict[str, Any]:
    """`settings` with each value chosen from the cluster (`sse=auto`) as the plans chose
    it: what a run's record says its variant ran with."""
    return dict(settings, **{p.setting: p.value for p in plans if p.chosen is not None})


def without_early_restarts(plans: List[SettingPlan]) -> List[SettingPlan]:
    """Each restart once, where it is last asked for: after every change before it."""
    last: Dict[str, int] = {}
    for index, plan in enumerate(plans):
        for change in plan.changes:
            if change.kind == RESTART:
                last[change.target] = index
    return [replace(plan, changes=[c for c in plan.changes
                                   if c.kind != RESTART or last[c.target] == index])
            for index, plan in enumerate(plans)]


def open_journal(store: Any, journal_id: str, about: Dict[str, Any]) -> Journal:
    try:
        return Journal.open(store, journal_id, about=about)
    except JournalError as e:
        raise Busy(str(e))


def restarts_osds(plans: Sequence[SettingPlan]) -> bool:
    return any(c.kind == RESTART and c.target == OSD_RESTART_TARGET
               for p in plans for c in p.changes)
