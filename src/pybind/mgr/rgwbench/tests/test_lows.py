"""The lows of issue 33's safety review, each shown failing before its fix."""
import errno
import json
import os
import tempfile
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from fixtures import MemoryStore
from mgr_module import HandleCommandResult
from rgwbench.tests.module_harness import ModuleUnderTest, registered  # noqa: F401 (a fixture)

from rgwbench.agents.launchers import LocalLauncher, NotOurs, remove_leftovers
from rgwbench.checks.capacity_guard import STATS_PERIOD_S, CapacityGuard
from rgwbench.errors import InvalidInput
from rgwbench.loadgen.errors import UsageError
from rgwbench.loadgen.workload import Job
from rgwbench.panel.auth import PASSWORD_KEY, PasswordStore
from rgwbench.profiles import parse_profile
from rgwbench.profiles.field_checks import FieldError, check_placement
from rgwbench.profiles.placement import count_of
from rgwbench.results.model import Run
from rgwbench.results.store import check_run_id
from rgwbench.settings.registry import all_settings

PROFILE: Dict[str, Any] = {
    'name': 'tiny', 'variants': [{'name': 'as-is', 'settings': {}}],
    'workloads': [{'name': 'w', 'op': 'put', 'duration': 5}]}


# -- names: `$` also matches before a trailing newline ------------------------------------
@pytest.mark.parametrize('changes', [
    {'name': 'tiny\n'},
    {'variants': [{'name': 'as-is\n', 'settings': {}}]},
    {'workloads': [{'name': 'w\n', 'op': 'put', 'duration': 5}]}])
def test_a_name_with_a_trailing_newline_is_refused(changes: Dict[str, Any]) -> None:
    with pytest.raises((InvalidInput, FieldError)):
        parse_profile(json.dumps(dict(PROFILE, **changes)), all_settings())


def test_a_count_with_a_trailing_newline_is_no_count() -> None:
    # (a placement's words are stripped before they are looked at: `host1\n` is host1)
    assert count_of('count:2\n') is None
    assert check_placement(['host1\n'], 'placement') == ['host1']


def test_a_run_id_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(InvalidInput):
        check_run_id('run-1\n')


def test_a_key_prefix_with_a_trailing_newline_is_refused() -> None:
    job = Job(endpoint='http://10.0.0.1:80', access_key='AK', secret_key='SK',
              key_prefix='k/\n')
    with pytest.raises(UsageError):
        job.validate()


# -- credentials are not changed while a run or a load holds them --------------------------
class MonRecording(ModuleUnderTest):
    def __init__(self) -> None:
        super().__init__({('orchestrator', '_select_orchestrator'): None})
        self.sent: List[Dict[str, Any]] = []

    def mon_command(self, cmd: Dict[str, Any], inbuf: Optional[str] = None
                    ) -> Tuple[int, str, str]:
        self.sent.append(cmd)
        return (-errno.ENOENT, '', '') if cmd['prefix'] == 'config-key get' else (0, '', '')


CREDENTIALS = json.dumps({'access_key': 'AK2', 'secret_key': 'SK2-never-in-an-error'})


@pytest.mark.usefixtures('registered')
@pytest.mark.parametrize('going', ['run', 'load'])
def test_credentials_are_not_changed_during_a_run_or_a_load(going: str) -> None:
    mod = MonRecording()
    if going == 'run':
        mod.services.runs._record = Run(run_id='r-1', profile='quick', state='running',
                                        started=1.0)
    else:
        mod.services.loads._active = {'load_id': 'r-1', 'state': 'running'}
    for prefix, inbuf in (('rgwbench credentials set', CREDENTIALS),
                          ('rgwbench credentials rm', None)):
        res = HandleCommandResult(*mod._handle_command(inbuf, {'prefix': prefix}))  # type: ignore
        assert res.retval == -errno.EBUSY, (prefix, res)
        assert '%s r-1 is in progress' % going in res.stderr and '\n' not in res.stderr
        assert 'SK2' not in res.stderr
    assert not [c for c in mod.sent if c['prefix'] != 'config-key get']   # nothing changed
    mod.services.runs._record = None
    mod.services.loads._active = None
    res = HandleCommandResult(*mod._handle_command(CREDENTIALS,
                                                   {'prefix': 'rgwbench credentials set'}))
    assert res.retval == 0, res
    assert [c['prefix'] for c in mod.sent if c['prefix'] != 'config-key get'] == [
        'config-key set']


# -- the panel's password -----------------------------------------------------------------
@pytest.mark.parametrize('password', ['8chars!!', 'eleven-char'])
def test_a_panel_password_under_12_characters_is_refused(password: str) -> None:
    store = MemoryStore()
    with pytest.raises(InvalidInput, match='at least 12 characters'):
        PasswordStore(store).set(password)
    assert store.get_store(PASSWORD_KEY) is None
    PasswordStore(store, iterations=1000).set('twelve-chars')
    assert store.get_store(PASSWORD_KEY) is not None


# -- the capacity guard fails closed ------------------------------------------------------
class NoReports:
    """The mgr's maps while no OSD has reported its store (after a failover, say)."""

    def __init__(self) -> None:
        self.stats: Dict[str, Any] = {'osd_stats': []}

    def get(self, data_name: str) -> Any:
        return {'osd_stats': self.stats, 'osd_map': {'nearfull_ratio': 0.85}}[data_name]


def test_a_writer_does_not_start_while_no_osd_reports_how_full_it_is() -> None:
    check = CapacityGuard(NoReports(), lambda: 0.05).new_check()
    assert check.before_start() is not None
    assert 'no OSD reports how full its store is' in str(check.before_start())


def test_a_writer_stops_once_no_osd_has_reported_for_two_report_periods() -> None:
    maps, now = NoReports(), [100.0]
    check = CapacityGuard(maps, lambda: 0.05).new_check()
    check.clock = lambda: now[0]
    maps.stats = {'osd_stats': [{'osd': 0, 'statfs': {'total': 100, 'available': 90}}]}
    assert check.problem() is None
    maps.stats = {'osd_stats': []}
    assert check.problem() is None            # one missed reading is no reason
    now[0] += 2 * STATS_PERIOD_S
    stop = check.problem()
    assert stop is not None and stop.startswith('no OSD reports how full its store is')


# -- leftovers: only what a launcher made is removed ----------------------------------------
# Never a real path here: a removal that is not refused deletes what it is given.
@pytest.fixture
def victim() -> Iterator[str]:
    """A folder of this test that no launcher made, with a file in it."""
    with tempfile.TemporaryDirectory(prefix='not-an-agent-') as folder:
        with open(os.path.join(folder, 'keep'), 'w') as f:
            f.write('kept')
        yield folder


@pytest.mark.parametrize('named', ['service', 'folder', 'dotdot', 'nested'])
def test_leftovers_not_made_by_a_launcher_are_refused_and_left(victim: str,
                                                               named: str) -> None:
    leftovers: Dict[str, Any] = {
        'service': {'service': 'rgw.default'},                    # someone else's service
        'folder': {'folder': victim},                             # any folder
        'dotdot': {'folder': os.path.join(tempfile.gettempdir(), 'rgwbench-agent-0123456789ab',
                                          '..', os.path.basename(victim))},
        'nested': {'folder': os.path.join(victim, 'rgwbench-agent-0123456789ab')},
    }[named]
    if named == 'nested':
        os.mkdir(leftovers['folder'])
    removed: List[str] = []
    with pytest.raises(NotOurs, match='not removed'):
        remove_leftovers(leftovers, removed.append, timeout=0.1)
    assert removed == [] and os.path.exists(os.path.join(victim, 'keep'))


def test_a_local_agents_folder_and_the_agents_service_are_removed() -> None:
    removed: List[str] = []
    folder = LocalLauncher().folder
    os.mkdir(folder)
    remove_leftovers({'service': 'container.rgwbench-agent', 'folder': folder},
                     removed.append, timeout=0.1)
    assert removed == ['container.rgwbench-agent'] and not os.path.exists(folder)
