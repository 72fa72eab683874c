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
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence
from .kvstore import Store

PREFIX = 'journal/'
ACTIVE = PREFIX + 'active'
HISTORY = PREFIX + 'history/'
KEEP_HISTORY = 20
# A recorded change is made (or not); its undo has run, or failed.
RECORDED, MADE, UNDONE, UNDO_FAILED = 'recorded', 'made', 'undone', 'undo-failed'


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


# An undoer sets a target back to a recorded state; it must be idempotent.
Undoer = Callable[[Step], None]


class JournalError(Exception):
    pass


class Journal:
    """The journal of one run."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def _step_key(self, number: int) -> str:
        return '%s%s/step/%06d' % (PREFIX, self.run_id, number)

    @classmethod
    def open(cls, store: Store, run_id: str, clock: Callable[[], float] = time.time,
             about: Optional[Dict[str, Any]] = None) -> 'Journal':
        """Start the journal of a new run; refused while another one is unfinished.

        `about` says what the changes are for (shown while they are in place).
        """
        active = store.get_store(ACTIVE)
        if active:
            raise JournalError('run %s has changes that are not undone yet'
                               % json.loads(active)['run_id'])
        store.set_store(ACTIVE, json.dumps({'run_id': run_id, 'opened': clock(),
                                            'about': about or {}}))
        return cls(store, run_id)

    def info(self) -> Dict[str, Any]:
        """When the journal was opened and what for."""
        active = self.store.get_store(ACTIVE)
        found: Dict[str, Any] = json.loads(active) if active else {}
        return found if found.get('run_id') == self.run_id else {}

    @classmethod
    def unfinished(cls, store: Store) -> Optional['Journal']:
        active = store.get_store(ACTIVE)
        return cls(store, json.loads(active)['run_id']) if active else None

    def steps(self) -> List[Step]:
        stored = self.store.get_store_prefix('%s%s/step/' % (PREFIX, self.run_id))
        return [Step(**json.loads(stored[k])) for k in sorted(stored)]

    def record(self, kind: str, target: str, before: Any, after: Any) -> Step:
        """Write a change down; call before making it."""
        step = Step(len(self.steps()), kind, target, before, after)
        self.store.set_store(self._step_key(step.number), step.to_json())
        return step

    def made(self, step: Step) -> Step:
        done = step._replace(state=MADE)
        self.store.set_store(self._step_key(step.number), done.to_json())
        return done

    def undo(self, undoers: Dict[str, Undoer],
             log: Optional[Callable[[str], None]] = None,
             last: Sequence[str] = ()) -> List[Step]:
        """Set every recorded change back, newest first; returns the steps as they end.

        Steps of the kinds in `last` are undone after all the others (daemon
        restarts, which must see the settings already put back). A step whose
        undo fails is kept as failed and the others still run; the journal
        stays open (and is tried again at the next start) while any step is
        not undone.
        """
        newest_first = list(reversed(self.steps()))
        ordered = ([s for s in newest_first if s.kind not in last] +
                   [s for s in newest_first if s.kind in last])
        for step in ordered:
            if step.state == UNDONE:
                continue
            try:
                undoers[step.kind](step)
                ended = step._replace(state=UNDONE, error=None)
            except Exception as e:
                ended = step._replace(state=UNDO_FAILED, error='%s: %s' % (type(e).__name__, e))
                if log:
                    log('undo of %s %s failed: %s' % (step.kind, step.target, ended.error))
            self.store.set_store(self._step_key(step.number), ended.to_json())
        return self.steps()

    def close(self, clock: Callable[[], float] = time.time) -> Dict[str, Any]:
        """End the journal once every step is undone; keeps a summary in the history."""
        steps = self.steps()
        pending = [s for s in steps if s.state != UNDONE]
        if pending:
            raise JournalError('%d change(s) of run %s are not undone: %s' % (
                len(pending), self.run_id,
                ', '.join('%s %s' % (s.kind, s.target) for s in pending)))
        summary = {'run_id': self.run_id, 'closed': clock(),
                   'steps': [{'kind': s.kind, 'target': s.target, 'state': s.state}
                             for s in steps]}
        self.store.set_store(HISTORY + self.run_id, json.dumps(summary))
        for key in self.store.get_store_prefix('%s%s/' % (PREFIX, self.run_id)):
            self.store.set_store(key, None)
        self.store.set_store(ACTIVE, None)
        history = sorted(self.store.get_store_prefix(HISTORY))
        for key in history[:-KEEP_HISTORY]:
            self.store.set_store(key, None)
        return summary
