import json
from typing import Any, Dict, List

import pytest
from fixtures import MemoryStore

from rgwbench.journal import MADE, RECORDED, UNDO_FAILED, UNDONE, Journal, JournalError, Step


class FakeConfig:
    """A config database the journal's undoer sets back."""

    def __init__(self) -> None:
        self.values: Dict[str, Any] = {'global/ms_mode': 'crc'}
        self.calls: List[str] = []
        self.broken = False

    def undo(self, step: Step) -> None:
        self.calls.append(step.target)
        if self.broken:
            raise RuntimeError('mon unreachable')
        if step.before is None:
            self.values.pop(step.target, None)
        else:
            self.values[step.target] = step.before


def change(journal: Journal, config: FakeConfig, target: str, value: Any,
           make: bool = True) -> Step:
    step = journal.record('config', target, config.values.get(target), value)
    if make:
        config.values[target] = value
        step = journal.made(step)
    return step


def test_changes_are_undone_newest_first_and_the_journal_closes() -> None:
    store, config = MemoryStore(), FakeConfig()
    journal = Journal.open(store, 'run-1')
    original = dict(config.values)
    change(journal, config, 'global/ms_mode', 'secure')
    change(journal, config, 'client.rgw/rgw_crypt_require_ssl', False)
    change(journal, config, 'global/ms_mode', 'legacy')   # the same target twice
    assert [s.state for s in journal.steps()] == [MADE, MADE, MADE]
    steps = journal.undo({'config': config.undo})
    assert [s.state for s in steps] == [UNDONE] * 3
    assert config.calls == ['global/ms_mode', 'client.rgw/rgw_crypt_require_ssl',
                            'global/ms_mode']
    assert config.values == original
    summary = journal.close()
    assert summary['run_id'] == 'run-1' and len(summary['steps']) == 3
    assert Journal.unfinished(store) is None
    assert list(store.data) == ['journal/history/run-1']


def test_a_change_recorded_but_not_made_is_undone_too() -> None:
    store, config = MemoryStore(), FakeConfig()
    journal = Journal.open(store, 'run-2')
    step = change(journal, config, 'client.rgw/rgw_frontends', 'beast ssl_port=443',
                  make=False)
    assert step.state == RECORDED
    # As if the mgr died here, after recording and perhaps after changing.
    config.values['client.rgw/rgw_frontends'] = 'beast ssl_port=443'
    found = Journal.unfinished(store)
    assert found is not None and found.run_id == 'run-2'
    found.undo({'config': config.undo})
    assert 'client.rgw/rgw_frontends' not in config.values
    found.close()


def test_a_new_journal_waits_for_the_old_one() -> None:
    store = MemoryStore()
    Journal.open(store, 'run-3')
    with pytest.raises(JournalError, match='run-3'):
        Journal.open(store, 'run-4')


def test_a_failed_undo_keeps_the_journal_open_and_retries() -> None:
    store, config = MemoryStore(), FakeConfig()
    journal = Journal.open(store, 'run-5')
    change(journal, config, 'global/ms_mode', 'secure')
    config.broken = True
    logged: List[str] = []
    steps = journal.undo({'config': config.undo}, logged.append)
    assert steps[0].state == UNDO_FAILED and 'mon unreachable' in (steps[0].error or '')
    assert logged and 'mon unreachable' in logged[0]
    with pytest.raises(JournalError, match='not undone'):
        journal.close()
    config.broken = False
    again = Journal.unfinished(store)
    assert again is not None
    assert [s.state for s in again.undo({'config': config.undo})] == [UNDONE]
    again.close()
    assert config.values == {'global/ms_mode': 'crc'}


def test_each_step_is_a_value_of_its_own() -> None:
    store, config = MemoryStore(), FakeConfig()
    journal = Journal.open(store, 'run-6')
    big = 'x' * 40000
    change(journal, config, 'rgw/cert/a', big)
    change(journal, config, 'rgw/cert/b', big)
    assert max(len(v) for v in store.data.values()) < 64 * 1024
    assert json.loads(store.data['journal/active'])['run_id'] == 'run-6'


def test_kinds_undone_last_come_after_every_other_step() -> None:
    store = MemoryStore()
    journal = Journal.open(store, 'run-3', about={'what': 'settings'})
    assert journal.info()['about'] == {'what': 'settings'}
    order: List[str] = []
    journal.made(journal.record('config', 'osd/ms_cluster_mode', None, 'secure'))
    journal.made(journal.record('restart', 'osd', None, None))
    journal.made(journal.record('config', 'osd/ms_service_mode', None, 'secure'))
    journal.undo({'config': lambda s: order.append(s.target),
                  'restart': lambda s: order.append(s.target)}, last=('restart',))
    assert order == ['osd/ms_service_mode', 'osd/ms_cluster_mode', 'osd']
    journal.close()
    assert Journal.unfinished(store) is None and journal.info() == {}
