"""The undo journal: every change written down before it is made, undone after.

A run opens a journal, records each change (with the state it replaces)
*before* making it, marks it made, and at the end reverts the changes in
reverse order. The journal lives in the module's key/value store, one value
per step (each value stays far below the store's 64 KiB limit), so a new
active mgr finds an unfinished journal after a failover and reverts it
without anyone asking. Reverting is idempotent: a step is set back to its
recorded state whether or not its change was ever made, so a crash between
"recorded" and "made" is safe too.
"""
import json
import time
from dataclasses import dataclass
from typing import (AbstractSet, Any, Callable, Dict, List, NamedTuple, Optional, Sequence,
                    Tuple)

from ..errors import RGWBenchError
from ..serial import dump
from ..cluster.fencing import Fenced, Owner, check_active, identity, owner_from
from ..cluster.kvstore import SecretStore, check_size, set_kept

# Every write is checked (kvstore.set_kept): a change is made only once the mon kept its step.
PREFIX = 'journal/'
ACTIVE = PREFIX + 'active'
HISTORY = PREFIX + 'history/'
KEEP_HISTORY = 20
# A recorded change is made (or not); its undo has run, or failed.
RECORDED, MADE, UNDONE, UNDO_FAILED = 'recorded', 'made', 'undone', 'undo-failed'
# Someone else changed the target during the run: left as they made it, a finding.
LEFT = 'left'
FINISHED = (UNDONE, LEFT)
# An undo's error is cut to this, so that a step that fit when it was recorded
# still fits with its error: an undo is never refused for its size.
MAX_ERROR = 2000
MAX_STEP_BYTES = 50000


class Step(NamedTuple):
    number: int
    kind: str          # which undoer sets it back, e.g. 'config', 'service'
    target: str        # what it changes, e.g. 'client.rgw/rgw_crypt_require_ssl'
    before: Any        # the state to put back (None: it did not exist)
    after: Any         # the state the change makes, for plans and reports
    state: str = RECORDED
    error: Optional[str] = None

    def to_json(self) -> str:
        return json.dumps(self._asdict(), sort_keys=True)


@dataclass(frozen=True)
class StepShown:
    """A step as `settings show` has it: not the states, which may hold a secret."""
    kind: str
    target: str
    state: str
    error: Optional[str]


# An undoer sets a target back to a recorded state; it must be idempotent.
Undoer = Callable[[Step], None]
# Given the step to undo (the target's oldest not undone) and the states the run
# left the target in, why the target holds neither those nor its `before` (someone
# else changed it meanwhile: it is left as it is), or None to put it back.
ChangedMeanwhile = Callable[[Step, List[Any]], Optional[str]]


class JournalError(Exception):
    pass


def _active(store: SecretStore) -> Optional[Dict[str, Any]]:
    raw = store.get_store(ACTIVE)
    return dict(json.loads(raw)) if raw else None


class Journal:
    """The journal of one run, or of one `settings apply`.

    `owner` is the mgr this object writes as; every write and every change
    first checks that this mgr is still active and still the journal's owner
    (a new active mgr takes an unfinished journal over with `claim`).
    """

    def __init__(self, store: SecretStore, journal_id: str, owner: Optional[Owner] = None) -> None:
        self.store = store
        self.journal_id = journal_id
        self.owner = owner

    def _step_key(self, number: int) -> str:
        return '%s%s/step/%06d' % (PREFIX, self.journal_id, number)

    @classmethod
    def open(cls, store: SecretStore, journal_id: str, clock: Callable[[], float] = time.time,
             about: Optional[Dict[str, Any]] = None) -> 'Journal':
        """Start a new journal; refused while another one is unfinished.

        `about` says what the changes are for (shown while they are in place).
        """
        check_active(store, 'open a journal')
        active = _active(store)
        if active:
            raise JournalError('run %s has changes that are not undone yet' % active['run_id'])
        owner = identity(store)
        # 'run_id' is the journal's id; the stored name stays for journals already stored.
        value = json.dumps({'run_id': journal_id, 'opened': clock(), 'about': about or {},
                            'owner': dump(owner) if owner else None})
        set_kept(store, ACTIVE, value)   # refused (ValueTooLarge) when over the store's limit
        return cls(store, journal_id, owner)

    def info(self) -> Dict[str, Any]:
        """When the journal was opened and what for."""
        found = _active(self.store) or {}
        return found if found.get('run_id') == self.journal_id else {}

    @classmethod
    def unfinished(cls, store: SecretStore) -> Optional['Journal']:
        """The open journal, as its owner left it: `claim` it before writing to it."""
        active = _active(store)
        if not active:
            return None
        return cls(store, active['run_id'], owner_from(active.get('owner')))

    def claim(self) -> None:
        """Make this mgr the owner (a new active mgr taking over an unfinished journal)."""
        check_active(self.store, 'take over journal %s' % self.journal_id)
        me = identity(self.store)
        active = _active(self.store)
        if active is None or active.get('run_id') != self.journal_id:
            raise JournalError('journal %s is closed already' % self.journal_id)
        if me is None:
            return
        stored = owner_from(active.get('owner'))
        if stored is not None and stored.epoch > me.epoch:
            raise Fenced('mgr %s knows mgr map %d only; journal %s was taken in %d'
                         % (me.name, me.epoch, self.journal_id, stored.epoch))
        active['owner'] = dump(me)
        set_kept(self.store, ACTIVE, json.dumps(active))
        self.owner = me

    def check_owner(self, what: str = 'change the cluster') -> None:
        """Raise Fenced unless this mgr is active and still owns the journal."""
        check_active(self.store, what)
        me = identity(self.store)
        if me is None:
            return
        active = _active(self.store)
        if active is None or active.get('run_id') != self.journal_id:
            raise Fenced('journal %s was closed (by another mgr?): mgr %s does not %s'
                         % (self.journal_id, me.name, what))
        stored = owner_from(active.get('owner'))
        if stored is None or stored != self.owner or stored.name != me.name:
            raise Fenced('journal %s belongs to mgr %s (mgr map %s): mgr %s does not %s' % (
                self.journal_id, stored.name if stored else 'unknown',
                stored.epoch if stored else '?', me.name, what))

    def _write_step(self, step: Step) -> None:
        self.check_owner('write journal %s' % self.journal_id)
        set_kept(self.store, self._step_key(step.number), step.to_json())

    def steps(self) -> List[Step]:
        stored = self.store.get_store_prefix('%s%s/step/' % (PREFIX, self.journal_id))
        return [Step(**json.loads(stored[k])) for k in sorted(stored)]

    def record(self, kind: str, target: str, before: Any, after: Any) -> Step:
        """Write a change down; call before making it.

        Refused (and so the change is not made) when the step is too large for
        the store, which would otherwise drop it and leave the change unjournaled.
        """
        step = Step(len(self.steps()), kind, target, before, after)
        check_size(self._step_key(step.number), step.to_json(), MAX_STEP_BYTES)
        self._write_step(step)
        return step

    def made(self, step: Step) -> Step:
        done = step._replace(state=MADE)
        self._write_step(done)
        return done

    def undone(self, step: Step) -> Step:
        """Mark a step put back that was recorded during an undo (`undo` marks its own)."""
        done = step._replace(state=UNDONE)
        self._write_step(done)
        return done

    def undo(self, undoers: Dict[str, Undoer],
             log: Optional[Callable[[str], None]] = None,
             last: Sequence[str] = (), keep: Sequence[str] = (),
             changed_meanwhile: Optional[ChangedMeanwhile] = None,
             only: Optional[AbstractSet[Tuple[str, str]]] = None) -> List[Step]:
        """Set every changed target back to its state before the run's changes that are
        not undone yet; returns the steps.

        Each target (kind and name) is put back once, to the `before` of its
        oldest step not undone, whichever of those an earlier try undid: two
        changes of one spec (S0 to S1, S1 to S2) end at S0 even when a try put
        S1 back and failed its check; a change after an earlier revert (the next
        variant of a run) ends at what was there when it was made, not at the
        first variant's `before` (an operator's change in between is kept).
        With `changed_meanwhile`, a target that holds neither what the run made
        nor its `before` was changed by someone else: it is left as it is, its
        steps marked LEFT with the finding (see `findings`). Targets go newest
        change first; those of the kinds in `last` after all the others (daemon
        restarts, which must see the settings already put back). A target whose
        undo fails keeps its steps failed and the others still run; the journal
        stays open (and is tried again at the next start) while any step is not
        finished. Targets of the kinds in `keep` stay as they are (a run's own S3
        user outlives each variant's settings; the run's last undo puts it back).
        With `only`, just the targets (kind, name) it names are put back: those a run's
        next variant does not keep (the others stay as they are, still journaled).
        """
        steps = self.steps()
        groups: Dict[Tuple[str, str], List[Step]] = {}
        for step in reversed(steps):
            if step.kind not in keep and step.state not in FINISHED and \
                    (only is None or (step.kind, step.target) in only):
                groups.setdefault((step.kind, step.target), []).append(step)
        ordered = ([g for key, g in groups.items() if key[0] not in last] +
                   [g for key, g in groups.items() if key[0] in last])
        for group in ordered:
            first, newest = group[-1], group[0]
            self.check_owner('undo %s %s' % (first.kind, first.target))
            # A step recorded but not marked made may or may not have been made.
            left_in = [newest.after] + ([newest.before] if newest.state == RECORDED else [])
            try:
                finding = changed_meanwhile(first, left_in) if changed_meanwhile else None
                if finding is None:
                    undoers[first.kind](first)
                    state, error = UNDONE, None
                else:
                    state, error = LEFT, finding[:MAX_ERROR]
                    if log:
                        log('not putting back %s %s: %s' % (first.kind, first.target, finding))
            except Fenced:
                raise
            except Exception as e:
                state, error = UNDO_FAILED, ('%s: %s' % (type(e).__name__, e))[:MAX_ERROR]
                if log:
                    log('undo of %s %s failed: %s' % (first.kind, first.target, error))
            for step in group:
                try:
                    self._write_step(step._replace(state=state, error=error))
                except Fenced:
                    raise
                except RGWBenchError as e:
                    # Put back, but not marked so: the journal stays open and the next
                    # try puts it back again (undoers are idempotent); the other targets
                    # are still put back now.
                    if log:
                        log('marking %s %s %s failed: %s' % (step.kind, step.target, state, e))
        return self.steps()

    def close(self, clock: Callable[[], float] = time.time) -> Dict[str, Any]:
        """End the journal once every step is undone; keeps a summary in the history."""
        steps = self.steps()
        pending = [s for s in steps if s.state not in FINISHED]
        if pending:
            raise JournalError('%d change(s) of run %s are not undone: %s' % (
                len(pending), self.journal_id,
                ', '.join('%s %s' % (s.kind, s.target) for s in pending)))
        self.check_owner('close journal %s' % self.journal_id)
        listed = [{'kind': s.kind, 'target': s.target, 'state': s.state} for s in steps]
        left = {(s.kind, s.target): s.error or '' for s in steps if s.state == LEFT}
        summary: Dict[str, Any] = {'run_id': self.journal_id, 'closed': clock(),
                                   'steps': listed,
                                   'findings': [{'kind': k, 'target': t, 'finding': f}
                                                for (k, t), f in sorted(left.items())]}
        # A step's kind and target are short; a summary of many still has to fit.
        text = json.dumps(summary)
        if len(text.encode('utf-8')) > MAX_STEP_BYTES:
            summary.update(steps=listed[:50], steps_left_out=len(listed) - 50,
                           findings=summary['findings'][:20])
            text = json.dumps(summary)
        set_kept(self.store, HISTORY + self.journal_id, text)
        for key in self.store.get_store_prefix('%s%s/' % (PREFIX, self.journal_id)):
            set_kept(self.store, key, None)
        set_kept(self.store, ACTIVE, None)
        history = sorted(self.store.get_store_prefix(HISTORY))
        for key in history[:-KEEP_HISTORY]:
            set_kept(self.store, key, None)
        return summary


# -- targets someone else changed during a run ------------------------------------------
HEALTH_CHANGED = 'RGWBENCH_CHANGED_DURING_RUN'


@dataclass(frozen=True)
class Finding:
    run_id: str
    kind: str
    target: str
    finding: str


def findings(store: SecretStore) -> List[Finding]:
    """Targets left as someone else made them, by closed runs, not yet acknowledged."""
    found = []
    for key, raw in sorted(store.get_store_prefix(HISTORY).items()):
        try:
            summary = json.loads(raw)
        except ValueError:
            continue
        if summary.get('acknowledged'):
            continue
        for item in summary.get('findings') or []:
            found.append(Finding(str(summary.get('run_id')), str(item.get('kind')),
                                 str(item.get('target')), str(item.get('finding'))))
    return found


def acknowledge(store: SecretStore) -> int:
    """Mark every finding seen (the health warning ends); how many there were."""
    count = 0
    for key, raw in sorted(store.get_store_prefix(HISTORY).items()):
        summary = json.loads(raw)
        if summary.get('findings') and not summary.get('acknowledged'):
            count += len(summary['findings'])
            set_kept(store, key, json.dumps(dict(summary, acknowledged=True)))
    return count


def health_checks(store: SecretStore) -> Dict[str, Dict[str, Any]]:
    """The health warning while findings are not acknowledged (for set_health_checks)."""
    found = findings(store)
    if not found:
        return {}
    return {HEALTH_CHANGED: {
        'severity': 'warning',
        'summary': '%d target(s) changed by someone else during an rgwbench run were left as '
                   'they were made; see `ceph rgwbench settings findings`, then '
                   '`ceph rgwbench settings acknowledge`' % len(found),
        'count': len(found),
        'detail': ['run %s: %s %s: %s' % (f.run_id, f.kind, f.target, f.finding) for f in found]}}


def findings_to_text(found: List[Dict[str, str]]) -> str:
    """For `ceph rgwbench settings findings` (the findings dumped)."""
    if not found:
        return 'no target was changed by someone else during a run'
    return '\n'.join('run %(run_id)s: %(kind)s %(target)s: %(finding)s' % f for f in found)
