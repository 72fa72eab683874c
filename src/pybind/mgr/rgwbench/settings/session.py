"""`ceph rgwbench settings`: settings applied on request, held, and put back.

One set of settings is in place at a time. Applying runs in a thread of its
own; the state (and the journal of every change) is in the module's store,
so a new active mgr finds it, and puts the cluster back on its own.
"""
import json
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional

from ..errors import Busy, InvalidInput, NotFound, RGWBenchError
from ..cluster.secret_options import masked_settings
from ..serial import dump, view
from .journal import (FINISHED, HEALTH_CHANGED, LEFT, Finding, Journal, Step, StepShown,
                      acknowledge, findings)
from .journal import health_checks as journal_health_checks
from ..cluster.kvstore import MAX_VALUE_BYTES, SecretStore, check_size, set_kept
from .targets import Target
from .applier import SettingPlan, SettingsApplier, open_journal, restarts_osds

STATE_KEY = 'settings/state'
# The recovery loop's tries at an unfinished journal: backing off from RETRY_S to
# MAX_WAIT_S, then it stops, and says so with a health error, until an operator
# finishes it with `ceph rgwbench settings revert` (a restart undo on a degraded
# cluster, an orchestrator that refuses a spec: retrying forever would only repeat them).
GAVE_UP_KEY = 'settings/undo-gave-up'
RETRY_S, MAX_WAIT_S, MAX_TRIES = 15.0, 600.0, 8
HEALTH_GAVE_UP = 'RGWBENCH_UNDO_UNFINISHED'
APPLYING, APPLIED, APPLY_FAILED, REVERTING, REVERTED = (
    'applying', 'applied', 'failed', 'reverting', 'reverted')
# Texts cut to this in the state, so that updates while putting back always fit.
MAX_TEXT = 2000


class SettingsSession:
    def __init__(self, store: SecretStore, make_applier: Callable[[], SettingsApplier],
                 log: Any, clock: Callable[[], float] = time.time, *,
                 changed: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.make_applier = make_applier
        self.log = log
        self.clock = clock
        # Called once what standing_health_checks says may have changed.
        self.changed = changed
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        # Held by whoever puts a journal back: `settings revert` or the recovery loop.
        self._putting_back = threading.Lock()

    # -- state ----------------------------------------------------------------------
    def state(self) -> Optional[Dict[str, Any]]:
        stored = self.store.get_store(STATE_KEY)
        return json.loads(stored) if stored else None

    def _save(self, state: Dict[str, Any]) -> None:
        # An update must not fail for its size (it may report a put-back): shrink it.
        self.store.set_store(STATE_KEY, fit_state(state))

    def _update(self, **fields: Any) -> Dict[str, Any]:
        state = self.state() or {}
        state.update(fields)
        self._save(state)
        return state

    def in_place(self) -> Optional[Dict[str, Any]]:
        """The settings being applied, in place or being put back (None: nothing is)."""
        state = self.state()
        if state is None or state['state'] == REVERTED or \
                (state['state'] == APPLY_FAILED and state.get('finished')):
            return None
        return {k: state[k] for k in ('journal_id', 'state', 'settings', 'progress')}

    def changing(self) -> bool:
        """Whether settings are being applied or put back right now."""
        state = self.in_place()
        return state is not None and state['state'] != APPLIED

    def show(self) -> Dict[str, Any]:
        state = self.state()
        if state is None:
            raise NotFound('no settings have been applied (see `ceph rgwbench settings plan`)')
        journal = Journal.unfinished(self.store)
        if journal is not None and journal.journal_id == state['journal_id']:
            state['changes'] = shown_steps(journal.steps())
        return state

    # -- commands -------------------------------------------------------------------
    def plan(self, settings: Dict[str, Any]) -> List[SettingPlan]:
        return self.make_applier().plan(settings)

    def apply(self, settings: Dict[str, Any], force: bool = False) -> str:
        """Check, journal, then apply in a thread; returns the id of the journal."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                raise Busy('settings are being applied or put back; see '
                           '`ceph rgwbench settings show`')
            applier = self.make_applier()
            plans = applier.plan(settings, force=force)
            if not any(p.changes for p in plans):
                raise InvalidInput('nothing to change: the cluster already runs with %s'
                                   % ', '.join('%s=%s' % (p.setting, dump(p)['value'])
                                               for p in plans))
            problems = applier.precheck(force, restart_osds=restarts_osds(plans), settle=True)
            if problems:
                raise Busy('refusing to change the cluster: %s' % '; '.join(problems))
            journal_id = 'settings-%s-%s' % (time.strftime('%Y%m%d-%H%M%S'),
                                             uuid.uuid4().hex[:6])
            # Shown by `settings show`, `status` and the panel: no secret in clear.
            state = {'journal_id': journal_id, 'state': APPLYING,
                     'settings': masked_settings(settings),
                     'plan': dump(plans), 'started': self.clock(),
                     'finished': None, 'progress': 'starting', 'client': None,
                     'error': None}
            check_size(STATE_KEY, json.dumps(state))   # before anything changes
            journal = open_journal(self.store, journal_id, {
                'what': 'settings', 'settings': masked_settings(settings)})
            self._save(state)
            self._thread = threading.Thread(target=self._apply, args=(applier, journal, plans),
                                            name='rgwbench-settings', daemon=True)
            self._thread.start()
            return journal_id

    def _apply(self, applier: SettingsApplier, journal: Journal,
               plans: List[SettingPlan]) -> None:
        try:
            def progress(line: str) -> None:
                self._update(progress=line)
            client = applier.apply(journal, plans, progress=progress)
            try:  # where a load would go now: shown, never a reason to put back
                client = applier.targets(Target(), client)
            except RGWBenchError as e:
                self.log.warning('no load targets under these settings: %s', e)
            self._update(state=APPLIED, progress='in place', client=dump(client.shown()))
        except Exception as e:
            self.log.exception('applying settings failed; putting everything back')
            self._update(state=APPLY_FAILED, error='%s: %s' % (type(e).__name__, e),
                         progress='putting back what was changed')
            self._revert(applier, journal, APPLY_FAILED)

    def revert(self, force: bool = False) -> str:
        """Put the settings in place back; also finishes any journal the recovery loop
        gave up on (a run's too). `force`: restart daemons of a degraded cluster."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                raise Busy('settings are being applied or put back; wait, or see '
                           '`ceph rgwbench settings show`')
            if self._putting_back.locked():
                raise Busy('the module is putting the settings back already; see '
                           '`ceph rgwbench settings show`')
            journal = Journal.unfinished(self.store)
            state = self.state()
            gave_up = self.gave_up()
            continued = journal is not None and gave_up is not None and \
                gave_up.get('journal_id') == journal.journal_id
            if journal is None or (journal.info().get('about', {}).get('what') != 'settings'
                                   and not continued):
                raise NotFound('no settings are in place')
            if continued and (state or {}).get('journal_id') != journal.journal_id:
                self._save({'journal_id': journal.journal_id, 'state': REVERTING,
                            'settings': {}, 'progress': 'putting back', 'changes': []})
            self._update(state=REVERTING, progress='putting back')
            self._thread = threading.Thread(target=self._revert,
                                            args=(self.make_applier(), journal, REVERTED, True,
                                                  force),
                                            name='rgwbench-settings', daemon=True)
            self._thread.start()
            return str((state or {}).get('journal_id', journal.journal_id))

    def _revert(self, applier: SettingsApplier, journal: Journal, ended: str,
                claim: bool = False, force: bool = False) -> None:
        """Put a journal back; `claim`: take it over first (it may be another mgr's)."""
        with self._putting_back:
            try:
                self._revert_locked(applier, journal, ended, claim, force)
            finally:
                self.changed()

    def _revert_locked(self, applier: SettingsApplier, journal: Journal, ended: str,
                       claim: bool, force: bool = False) -> None:
        try:
            still = Journal.unfinished(self.store)
            if still is None or still.journal_id != journal.journal_id:
                return  # the recovery loop put it back meanwhile
            if claim:
                journal.claim()
            steps = applier.revert(journal, force=force)
            self._update(changes=shown_steps(steps))
            if Journal.unfinished(self.store) is None:
                set_kept(self.store, GAVE_UP_KEY, None)
            failed = ['%s %s: %s' % (s.kind, s.target, s.error) for s in steps
                      if s.state not in FINISHED]
            if failed:
                self._update(progress='not everything could be put back; it is tried again '
                             'when the module starts', error='; '.join(failed))
            else:
                state = self.state() or {}
                self._update(state=ended if state.get('state') != APPLY_FAILED else APPLY_FAILED,
                             progress=put_back_progress(steps), finished=self.clock())
        except Exception as e:
            self.log.exception('putting settings back failed')
            self._update(error='putting back failed: %s: %s' % (type(e).__name__, e))

    def wait(self, timeout: Optional[float] = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def recover(self, stopping: threading.Event, retry_s: float = RETRY_S,
                tries: int = MAX_TRIES, max_wait_s: float = MAX_WAIT_S) -> None:
        """At module start: put back what an unfinished journal holds.

        A journal is unfinished after a mgr failover, restart or crash: its
        changes are put back without anyone asking, tried `tries` times with
        waits doubling from `retry_s` up to `max_wait_s`; then the loop stops
        and `health_checks` reports what is left, and how to finish it.
        """
        try:
            self._recover(stopping, retry_s, tries, max_wait_s)
        finally:
            self.changed()

    def _recover(self, stopping: threading.Event, retry_s: float, tries: int,
                 max_wait_s: float) -> None:
        wait = retry_s
        for attempt in range(1, tries + 1):
            if stopping.is_set():
                return
            with self._putting_back:
                if self._recover_once():
                    set_kept(self.store, GAVE_UP_KEY, None)
                    return
            if attempt == tries or stopping.wait(wait):
                break
            wait = min(wait * 2, max_wait_s)
        journal = Journal.unfinished(self.store)
        if journal is None or stopping.is_set():
            return
        self.give_up(journal, tries)

    def give_up(self, journal: Journal, tries: int) -> None:
        """Nothing tries again to put back what `journal` still holds (after `tries`) until
        the module starts again: a health error says so, and `settings revert` finishes
        it (a run's too)."""
        left = ['%s %s%s' % (s.kind, s.target, ' (%s)' % s.error if s.error else '')
                for s in journal.steps() if s.state not in FINISHED]
        self.log.error('gave up putting back journal %s after %d tries: %s',
                       journal.journal_id, tries, '; '.join(left))
        set_kept(self.store, GAVE_UP_KEY, json.dumps(
            {'journal_id': journal.journal_id, 'tries': tries, 'left': left[:20]}))
        self.changed()

    def gave_up(self) -> Optional[Dict[str, Any]]:
        stored = self.store.get_store(GAVE_UP_KEY)
        return json.loads(stored) if stored else None

    def standing_health_checks(self) -> Dict[str, Dict[str, Any]]:
        """What `ceph -s` shows until an operator acts, besides a run's own warning: an
        undo the recovery loop gave up on, and targets someone else changed during a run
        (left as they made them) until `settings acknowledge`."""
        return dict(journal_health_checks(self.store), **self.health_checks())

    def acknowledge(self) -> int:
        """`ceph rgwbench settings acknowledge`: the findings are seen; how many."""
        try:
            return acknowledge(self.store)
        finally:
            self.changed()

    def findings(self) -> List[Finding]:
        """`ceph rgwbench settings findings`."""
        return findings(self.store)

    def health_checks(self) -> Dict[str, Dict[str, Any]]:
        """A health error while the recovery loop gave up (for set_health_checks)."""
        gave_up = self.gave_up()
        if gave_up is None:
            return {}
        return {HEALTH_GAVE_UP: {
            'severity': 'error',
            'summary': 'rgwbench could not put back %d change(s) of %s after %d tries; '
                       'finish with `ceph rgwbench settings revert` (--force to restart '
                       'daemons of a degraded cluster)' % (
                           len(gave_up['left']), gave_up['journal_id'], gave_up['tries']),
            'count': len(gave_up['left']),
            'detail': list(gave_up['left'])}}

    def _recover_once(self) -> bool:
        """One try at putting back the unfinished journal; True when none is left."""
        journal = Journal.unfinished(self.store)
        if journal is None:
            return True
        self.log.warning('journal %s is unfinished (the mgr restarted); putting back '
                         'its changes', journal.journal_id)
        state = self.state()
        mine = state is not None and state.get('journal_id') == journal.journal_id
        if mine and state is not None and state['state'] in (APPLYING, APPLIED, REVERTING):
            self._update(state=APPLY_FAILED if state['state'] == APPLYING else REVERTING,
                         error=state.get('error') or 'the mgr restarted while the '
                         'settings were %s' % state['state'],
                         progress='the mgr restarted; putting back')
        try:
            journal.claim()
            steps = self.make_applier().revert(journal)
        except Exception:
            self.log.exception('putting back journal %s failed; trying again',
                               journal.journal_id)
            steps = []
        if mine and steps:
            self._update(changes=shown_steps(steps))
        if steps and all(s.state in FINISHED for s in steps) and mine:
            ended = self.state() or {}
            self._update(state=APPLY_FAILED if ended.get('state') == APPLY_FAILED else REVERTED,
                         progress=put_back_progress(steps) + ' after a mgr restart',
                         finished=self.clock())
        return Journal.unfinished(self.store) is None


def put_back_progress(steps: List[Step]) -> str:
    left = [s for s in steps if s.state == LEFT]
    if not left:
        return 'put back'
    return ('put back but %d target(s) someone else changed meanwhile, left as they are '
            '(health warning %s until `ceph rgwbench settings acknowledge`)'
            % (len(left), HEALTH_CHANGED))


def fit_state(state: Dict[str, Any]) -> str:
    """The state as stored, made to fit the store: long texts cut, then details dropped."""
    fitted = dict(state)
    for key in ('error', 'progress'):
        if isinstance(fitted.get(key), str):
            fitted[key] = fitted[key][:MAX_TEXT]
    text = json.dumps(fitted)
    for key in ('plan', 'changes'):
        if len(text.encode('utf-8')) <= MAX_VALUE_BYTES:
            break
        fitted[key] = None
        text = json.dumps(fitted)
    return text


def shown_steps(steps: List[Step]) -> List[Dict[str, Any]]:
    """The steps as `settings show` has them: what was changed and how it went."""
    return dump([view(StepShown, s) for s in steps])


def settings_to_text(state: Dict[str, Any]) -> str:
    lines = ['settings %s: %s (%s)' % (state['journal_id'], state['state'], state['progress'])]
    lines += ['  %s = %s' % kv for kv in sorted(state['settings'].items())]
    for change in state.get('changes', []):
        lines.append('  %-8s %-40s %s%s' % (
            change['kind'], change['target'], change['state'],
            ' (%s)' % change['error'] if change['error'] else ''))
    if state.get('error'):
        lines.append('error: %s' % state['error'])
    return '\n'.join(lines)
