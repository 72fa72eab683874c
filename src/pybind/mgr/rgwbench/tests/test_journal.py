import errno
import json
from typing import Any, Dict, List, Optional, Tuple

import pytest
from fixtures import MemoryStore, MgrStore

from rgwbench.cluster.fencing import Fenced
from rgwbench.settings.journal import (MADE, RECORDED, UNDO_FAILED, UNDONE, Journal, JournalError,
                                       Step)
from rgwbench.errors import RGWBenchError
from rgwbench.cluster.kvstore import ValueTooLarge


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
    # each target once, to its first state, newest change first
    assert config.calls == ['global/ms_mode', 'client.rgw/rgw_crypt_require_ssl']
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
    assert found is not None and found.journal_id == 'run-2'
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


class FlakySpec:
    """A service spec whose put lands but whose check fails once for one state."""

    def __init__(self, spec: str, fail_after_putting: str) -> None:
        self.spec = spec
        self.fail_after_putting: Optional[str] = fail_after_putting

    def undo(self, step: Step) -> None:
        self.spec = step.before
        if step.before == self.fail_after_putting:
            self.fail_after_putting = None
            raise RuntimeError('the daemons did not come back in time')


def test_a_retried_undo_puts_back_the_oldest_state_of_a_target() -> None:
    store = MemoryStore()
    journal = Journal.open(store, 'run-7')
    spec = FlakySpec('S0', fail_after_putting='S1')
    for before, after in (('S0', 'S1'), ('S1', 'S2')):   # rgw-per-host, then tls@rgw
        journal.made(journal.record('service', 'rgw.default', before, after))
        spec.spec = after
    journal.undo({'service': spec.undo})
    again = Journal.unfinished(store)
    assert again is not None
    again.undo({'service': spec.undo})
    assert spec.spec == 'S0'
    again.close()


def test_two_config_steps_on_one_option_end_at_the_first_before() -> None:
    store, config = MemoryStore(), FakeConfig()
    config.values['client.rgw/rgw_crypt_require_ssl'] = 'true'
    journal = Journal.open(store, 'run-8')
    change(journal, config, 'client.rgw/rgw_crypt_require_ssl', 'false')   # config:
    change(journal, config, 'client.rgw/rgw_crypt_require_ssl', 'maybe')   # sse
    calls: List[str] = []

    def undo_once_then_fail(step: Step) -> None:
        config.undo(step)
        calls.append(str(step.before))
        if len(calls) == 1:
            raise RuntimeError('not in effect on the daemons')
    journal.undo({'config': undo_once_then_fail})
    journal.undo({'config': undo_once_then_fail})
    assert config.values['client.rgw/rgw_crypt_require_ssl'] == 'true'
    journal.close()


def test_an_old_mgr_that_resumes_after_a_failover_writes_nothing() -> None:
    data: Dict[str, str] = {}
    old = MgrStore(data, 'a', active='a', epoch=5)
    journal = Journal.open(old, 'run-9')
    journal.made(journal.record('config', 'global/ms_mode', 'crc', 'secure'))
    assert json.loads(data['journal/active'])['owner'] == {'name': 'a', 'epoch': 5}
    # mgr a hangs; b becomes active and takes the journal over
    new = MgrStore(data, 'b', active='b', epoch=6)
    taken = Journal.unfinished(new)
    assert taken is not None
    with pytest.raises(Fenced, match='belongs to mgr a'):
        taken.record('config', 'global/x', None, 'y')   # not before it claims the journal
    taken.claim()
    before = dict(data)
    # a resumes with its old mgr map, still thinking it is active
    with pytest.raises(Fenced, match='belongs to mgr b'):
        journal.record('config', 'global/ms_mode', 'secure', 'legacy')
    with pytest.raises(Fenced):
        journal.undo({'config': lambda step: None})
    assert data == before
    taken.undo({'config': lambda step: None})
    taken.close()
    with pytest.raises(Fenced, match='closed'):
        journal.made(Step(0, 'config', 'global/ms_mode', 'crc', 'secure'))
    # and once its mgr map says it is not active, it opens nothing either
    old.mgr_map = {'epoch': 6, 'active_name': 'b'}
    with pytest.raises(Fenced, match='no longer the active mgr'):
        Journal.open(old, 'run-10')
    assert Journal.unfinished(new) is None


def test_a_mgr_with_an_older_mgr_map_cannot_take_a_journal_over() -> None:
    data: Dict[str, str] = {}
    Journal.open(MgrStore(data, 'b', active='b', epoch=8), 'run-11')
    stale = Journal.unfinished(MgrStore(data, 'a', active='a', epoch=5))
    assert stale is not None
    with pytest.raises(Fenced, match='mgr map 5'):
        stale.claim()


def test_a_step_too_large_for_the_store_is_refused_before_the_change() -> None:
    store = MemoryStore()
    journal = Journal.open(store, 'run-12')
    with pytest.raises(ValueTooLarge, match='more than'):
        journal.record('service', 'rgw.default', {'spec': 'x' * 70000}, None)
    assert journal.steps() == []


def test_an_undo_is_never_refused_for_the_size_of_its_error() -> None:
    store = MemoryStore()
    journal = Journal.open(store, 'run-13')
    journal.made(journal.record('config', 'global/ms_mode', 'c' * 40000, 'secure'))

    def fails(step: Step) -> None:
        raise RuntimeError('e' * 100000)
    steps = journal.undo({'config': fails})
    assert steps[0].state == UNDO_FAILED
    assert max(len(v.encode()) for v in store.data.values()) < 64 * 1024


class RefusingMon(MemoryStore):
    """Pacific's mgr over a mon that refuses writes (a full or limited config-key store):
    set_store keeps the value in the mgr's own copy and says nothing; the mon's command
    answers the error."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse = False
        self.mon: Dict[str, str] = {}

    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]:
        if self.refuse and cmd_dict['prefix'] == 'config-key set':
            return -errno.EFBIG, '', 'error: entry size limited to 20 bytes'
        ret = super().mon_command(cmd_dict, inbuf)
        self.mon = dict(self.data)
        return ret


def test_a_step_the_mon_refuses_stops_the_change_before_it_is_made() -> None:
    store, config = RefusingMon(), FakeConfig()
    journal = Journal.open(store, 'run-r')
    change(journal, config, 'global/ms_mode', 'secure')
    store.refuse = True
    with pytest.raises(RGWBenchError) as refused:
        change(journal, config, 'client.rgw/rgw_crypt_require_ssl', False)
    assert abs(refused.value.errno) == errno.EFBIG and 'journal/run-r/step/' in str(refused.value)
    # Not made, and not in the mgr's copy either: a failover would not find it.
    assert 'client.rgw/rgw_crypt_require_ssl' not in config.values
    assert [s.target for s in journal.steps()] == ['global/ms_mode']
    store.refuse = False
    journal.undo({'config': config.undo})
    journal.close()
    assert config.values == {'global/ms_mode': 'crc'} and Journal.unfinished(store) is None


def test_what_the_journal_keeps_is_what_the_mon_keeps() -> None:
    store, config = RefusingMon(), FakeConfig()
    journal = Journal.open(store, 'run-m')
    change(journal, config, 'global/ms_mode', 'secure')
    assert store.mon == store.data and len(store.mon) == 2
    journal.undo({'config': config.undo})
    journal.close()
    assert store.mon == store.data == {k: v for k, v in store.data.items()
                                       if k.startswith('journal/history/')}


def test_an_undo_the_mon_will_not_mark_still_puts_every_target_back() -> None:
    store, config = RefusingMon(), FakeConfig()
    journal = Journal.open(store, 'run-u')
    change(journal, config, 'global/ms_mode', 'secure')
    change(journal, config, 'client.rgw/rgw_crypt_require_ssl', False)
    store.refuse = True
    logged: List[str] = []
    steps = journal.undo({'config': config.undo}, log=logged.append)
    assert config.values == {'global/ms_mode': 'crc'}
    assert [s.state for s in steps] == [MADE, MADE] and len(logged) == 2
    with pytest.raises(JournalError):
        journal.close()
    store.refuse = False
    assert [s.state for s in journal.undo({'config': config.undo})] == [UNDONE, UNDONE]
    journal.close()
    assert Journal.unfinished(store) is None and config.values == {'global/ms_mode': 'crc'}


def test_the_owner_is_stored_as_older_versions_stored_it() -> None:
    data: Dict[str, str] = {}
    Journal.open(MgrStore(data, 'a', active='a', epoch=5), 'run-9', clock=lambda: 100.0)
    assert data['journal/active'] == (
        '{"run_id": "run-9", "opened": 100.0, "about": {}, "owner": {"name": "a", "epoch": 5}}')
    # a journal an older version left is taken over, and its record written back the same way
    data['journal/active'] = (
        '{"run_id": "run-8", "opened": 90.0, "about": {}, "owner": {"name": "a", "epoch": 4}}')
    taken = Journal.unfinished(MgrStore(data, 'b', active='b', epoch=6))
    assert taken is not None and taken.owner is not None
    assert (taken.owner.name, taken.owner.epoch) == ('a', 4)
    taken.claim()
    assert data['journal/active'] == (
        '{"run_id": "run-8", "opened": 90.0, "about": {}, "owner": {"name": "b", "epoch": 6}}')
