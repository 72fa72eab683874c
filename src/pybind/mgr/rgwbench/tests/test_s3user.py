"""A run's own S3 user when no credentials are stored: journaled first, always removed."""
import errno
import json
import logging
import subprocess
import time
from typing import Any, Iterator, List, Optional, Tuple
from unittest import mock

import pytest
from fixtures import MemoryStore
from rgwbench.tests.run_fakes import Setup
from rgwbench.tests.fixtures import FakeCluster
from rgwbench.tests.settings_fakes import applier

from rgwbench.serial import dump
from rgwbench.cluster.credentials import CredentialStore
from rgwbench.errors import Busy, RGWBenchError
from rgwbench.settings.journal import MADE, RECORDED, UNDONE, Journal
from rgwbench.cluster.rgw_admin import RadosgwAdmin, S3Keys
from rgwbench.runs.plan_text import run_plan_to_text
from rgwbench.settings.s3user import create_user
from rgwbench.settings.changes import USER
from rgwbench.tests.s3stub import StubS3

ACCESS, SECRET = 'TMPACCESS0123456789', 'tmp-secret-never-shown-0123456789abcdef'


@pytest.fixture
def stub() -> Iterator[StubS3]:
    """An RGW that knows only the keys radosgw-admin makes for the temporary user."""
    s = StubS3(access_key=ACCESS, secret_key=SECRET).start()
    yield s
    s.stop()


def without_stored_credentials(stub: StubS3, certificate: Tuple[str, str]) -> Setup:
    s = Setup(stub, certificate)
    CredentialStore(s.store).remove()
    s.cluster.user_keys = (ACCESS, SECRET)
    return s


def user_steps(store: MemoryStore) -> List[Any]:
    journal = Journal.unfinished(store)
    return [] if journal is None else [st for st in journal.steps() if st.kind == USER]


# -- the user, journaled --------------------------------------------------------------
class WatchedUsers(FakeCluster):
    """Checks, as the user is made, that the journal holds it already."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__()
        self.store = store
        self.seen_at_create: List[Any] = []

    def create_user(self, uid: str, display_name: str) -> S3Keys:
        self.seen_at_create = [(st.target, st.state) for st in user_steps(self.store)]
        return super().create_user(uid, display_name)


def test_the_user_is_journaled_before_it_is_made_and_its_undo_removes_it() -> None:
    store = MemoryStore()
    users = WatchedUsers(store)
    journal = Journal.open(store, 'r1-v0')
    keys = create_user(journal, users, 'r1')
    assert users.seen_at_create == [('rgwbench-r1-v0', RECORDED)]
    assert keys == S3Keys('rgwbench-r1-v0', 'AK', 'SK')
    assert 'temporary' in users.users['rgwbench-r1-v0']
    (step,) = journal.steps()
    assert step.state == MADE and step.before is None
    assert 'SK' not in json.dumps(step._asdict())   # the journal holds no keys
    applier(users).revert(journal)
    assert users.users == {} and users.calls[-1] == 'user rm rgwbench-r1-v0'
    assert Journal.unfinished(store) is None


def test_a_user_that_exists_already_is_never_journaled_or_taken_over() -> None:
    store = MemoryStore()
    cluster = FakeCluster()
    cluster.users['rgwbench-r1-v0'] = 'someone else'
    journal = Journal.open(store, 'r1-v0')
    with pytest.raises(Busy, match='exists already'):
        create_user(journal, cluster, 'r1')
    assert journal.steps() == [] and cluster.calls == []


def test_a_user_whose_creation_failed_is_removed_only_if_it_was_made() -> None:
    store = MemoryStore()
    cluster = FakeCluster()
    cluster.fail_on = 'user create'
    journal = Journal.open(store, 'r1-v0')
    with pytest.raises(RuntimeError):
        create_user(journal, cluster, 'r1')
    cluster.fail_on = None
    steps = applier(cluster).revert(journal)
    assert [s.state for s in steps] == [UNDONE] and cluster.users == {}
    assert Journal.unfinished(store) is None


# -- runs -----------------------------------------------------------------------------
def test_a_run_without_stored_credentials_makes_one_user_and_removes_it_at_its_end(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = without_stored_credentials(stub, certificate)
    run_id = s.engine.start(s.profile())
    s.engine.wait(60)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    uid = 'rgwbench-%s' % run_id
    for variant in record['variants']:
        workload = variant['workloads'][0]
        assert workload.get('ops', 0) > 0 and workload.get('errors') == 0, workload
        assert all(c['kind'] != 'user' for c in variant['changes']), variant['changes']
    # One user for the whole run: made before the first variant, removed after the last.
    assert record['changes'] == [{'kind': 'user', 'target': uid, 'state': 'undone',
                                  'error': None}]
    users = [c for c in s.cluster.calls if c.startswith('user ')]
    assert users == ['user create %s' % uid, 'user rm %s' % uid], users
    assert s.cluster.users == {} and Journal.unfinished(s.store) is None
    assert SECRET not in json.dumps(s.store.data)   # never stored


def test_stored_credentials_win(certificate: Tuple[str, str]) -> None:
    stub = StubS3(access_key='AK', secret_key='SK').start()
    try:
        s = Setup(stub, certificate)   # credentials AK/SK stored
        s.cluster.user_keys = (ACCESS, SECRET)
        run_id = s.engine.start(s.profile())
        s.engine.wait(60)
        assert dump(s.results.load(run_id))['state'] == 'complete'
        assert not [c for c in s.cluster.calls if c.startswith('user')]
        assert s.engine.plan(s.profile())['s3_user'] == {'temporary': False, 'uid': None}
        assert json.dumps(s.engine.plan(s.profile())['s3_user']) == (
            '{"temporary": false, "uid": null}')
    finally:
        stub.stop()


def test_the_user_is_removed_after_a_failed_workload_and_after_an_abort(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = without_stored_credentials(stub, certificate)
    s.cluster.user_keys = (ACCESS, 'a-wrong-secret')   # every request is refused
    run_id = s.engine.start(s.profile(variants=[{'name': 'as-is', 'settings': {}}]))
    s.engine.wait(60)
    record = dump(s.results.load(run_id))
    assert record['variants'][0]['workloads'][0]['error']
    # A run whose workloads measured nothing failed, and says which (it once said complete).
    assert record['state'] == 'failed', record['state']
    assert record['error'].startswith('variant as-is, workload put-4KiB: '), record['error']
    assert s.cluster.users == {} and 'user rm rgwbench-%s' % run_id in s.cluster.calls

    s = without_stored_credentials(stub, certificate)
    run_id = s.engine.start(s.profile(workloads=[{'op': 'put', 'size': '4KiB',
                                                  'duration': 20, 'warmup': 0}]))
    for _ in range(1200):   # abort while the user's workload runs on its agents
        active = s.engine.active() or {}
        if s.cluster.users and active.get('live') is not None:
            break
        time.sleep(0.05)
    s.engine.abort()
    s.engine.wait(120)
    assert dump(s.results.load(run_id))['state'] == 'aborted'
    assert s.cluster.users == {} and Journal.unfinished(s.store) is None
    for launcher in s.launchers:
        for thread in launcher.threads:
            thread.join(60)


def test_a_new_mgr_removes_the_user_of_a_cut_off_run(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = without_stored_credentials(stub, certificate)
    # What a mgr that vanished mid-workload leaves: a journal with the user made, and
    # the workload's leftovers (written down without keys).
    journal = Journal.open(s.store, 'r9-v0', about={'what': 'run', 'run_id': 'r9'})
    create_user(journal, s.cluster, 'r9')
    s.engine.leftovers.store.set_store(s.engine.leftovers.key, json.dumps({
        'record': {'run_id': 'r9', 'temporary_user': 'rgwbench-r9-v0'}, 'agents': {},
        'endpoint': stub.url, 'ca_pem': None, 'bucket_prefix': 'rgwbench-r9-0',
        'buckets': 1, 'key_prefix': 'rgwbench/'}))
    assert s.cluster.users
    s.engine.recover(lambda name: None)   # the new active mgr's module start
    assert s.cluster.users == {} and s.cluster.calls[-1] == 'user rm rgwbench-r9-v0'
    assert Journal.unfinished(s.store) is None
    assert s.store.get_store(s.engine.leftovers.key) is None   # nothing is retried


def test_plan_says_a_temporary_user_is_made_and_makes_nothing(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = without_stored_credentials(stub, certificate)
    before = dict(s.store.data)
    plan = s.engine.plan(s.profile())
    assert plan['s3_user']['temporary'] and plan['problems'] == []
    assert json.dumps(plan['s3_user']) == '{"temporary": true, "uid": "rgwbench-<run id>"}'
    assert 'temporary' in run_plan_to_text(plan)
    assert s.store.data == before and s.cluster.calls == [] and s.cluster.users == {}


def test_keys_are_in_no_log_line(stub: StubS3, certificate: Tuple[str, str],
                                 caplog: pytest.LogCaptureFixture) -> None:
    s = without_stored_credentials(stub, certificate)
    with caplog.at_level(logging.DEBUG):
        run_id = s.engine.start(s.profile(variants=[{'name': 'as-is', 'settings': {}}]))
        s.engine.wait(60)
    assert dump(s.results.load(run_id))['state'] == 'complete'
    assert caplog.records
    assert SECRET not in caplog.text and ACCESS not in caplog.text


# -- radosgw-admin through the mgr ----------------------------------------------------
class FakeTools:
    """The mgr's tool_exec: logs its argv as the real one does, answers from a script."""

    def __init__(self, answers: List[Tuple[int, str, str]]) -> None:
        self.answers = answers
        self.argvs: List[List[str]] = []
        self.timeouts: List[int] = []
        self.log = logging.getLogger('mgr')

    def get_ceph_conf_path(self) -> str:
        return '/etc/ceph/ceph.conf'

    def tool_exec(self, args: List[str], timeout: int = 10,
                  stdin: Optional[bytes] = None) -> Tuple[int, str, str]:
        self.argvs.append(list(args))
        self.timeouts.append(timeout)
        self.log.debug('exec: %s', ' '.join(args))
        return self.answers.pop(0)


def created(uid: str) -> str:
    return json.dumps({'user_id': uid, 'display_name': 'x', 'keys': [
        {'user': uid, 'access_key': ACCESS, 'secret_key': SECRET}]})


NO_USER = (errno.EINVAL, '', 'could not fetch user info: no user info saved')


def test_radosgw_admin_reads_the_keys_from_its_output_only(
        caplog: pytest.LogCaptureFixture) -> None:
    tools = FakeTools([(0, created('u1'), '')])
    with caplog.at_level(logging.DEBUG):
        keys = RadosgwAdmin(tools).create_user('u1', 'a temporary user')
    assert keys.credentials() == {'access_key': ACCESS, 'secret_key': SECRET}
    assert tools.argvs[0][:3] == ['radosgw-admin', '-c', '/etc/ceph/ceph.conf']
    assert SECRET not in repr(keys) and SECRET not in caplog.text
    assert not any(SECRET in a or ACCESS in a for argv in tools.argvs for a in argv)


def test_radosgw_admin_quotes_no_output_when_it_fails() -> None:
    half = '{"keys": [{"access_key": "%s", "secret_key": "%s"' % (ACCESS, SECRET)
    with pytest.raises(RGWBenchError) as e:
        RadosgwAdmin(FakeTools([(0, half, '')])).create_user('u1', 'x')
    assert SECRET not in str(e.value) and 'printed no S3 keys' in str(e.value)
    with pytest.raises(RGWBenchError, match='could not create user: exists'):
        RadosgwAdmin(FakeTools([(17, '', 'could not create user: exists')])).create_user(
            'u1', 'x')


def test_radosgw_admin_removes_with_the_data_and_a_user_gone_already_is_fine() -> None:
    tools = FakeTools([(0, created('u1'), ''), (0, '', ''), NO_USER])
    RadosgwAdmin(tools).remove_user('u1')
    assert tools.argvs[1][-5:] == ['user', 'rm', '--uid', 'u1', '--purge-data']
    tools = FakeTools([NO_USER])
    RadosgwAdmin(tools).remove_user('u1')
    assert len(tools.argvs) == 1
    with pytest.raises(RGWBenchError, match='Permission denied'):
        RadosgwAdmin(FakeTools([(13, '', 'x\nPermission denied\n')])).user_exists('u1')
    with pytest.raises(RGWBenchError, match='timed out'):
        RadosgwAdmin(FakeTools([(0, '{}', ''), (-errno.ETIMEDOUT, '', 'timed out')])
                     ).remove_user('u1')


class MgrTools:
    """The release's own MgrModule.tool_exec, on the little of the mgr it reads."""
    log = logging.getLogger('mgr')

    def get_ceph_option(self, key: str) -> str:
        return '/k/keyring'

    def get_mgr_id(self) -> str:
        return 'x'

    def get_ceph_conf_path(self) -> str:
        return '/c/ceph.conf'

    def tool_exec(self, args: List[str], timeout: int = 10,
                  stdin: Optional[bytes] = None) -> Tuple[int, str, str]:
        from mgr_module import MgrModule
        return MgrModule.tool_exec(self, args, timeout, stdin)  # type: ignore[arg-type]


def test_the_mgr_tool_exec_logs_no_key(caplog: pytest.LogCaptureFixture) -> None:
    answer = subprocess.CompletedProcess([], 0, created('u1').encode(), b'')
    with caplog.at_level(logging.DEBUG), \
            mock.patch('mgr_module.subprocess.run', return_value=answer) as run:
        keys = RadosgwAdmin(MgrTools()).create_user('u1', 'x')
    assert keys.secret_key == SECRET
    argv = run.call_args[0][0]
    assert argv[:5] == ['radosgw-admin', '-k', '/k/keyring', '-n', 'mgr.x']
    assert argv[5:11] == ['-c', '/c/ceph.conf', '--admin-socket', '', '--log-file', '/dev/null']
    assert 'exec: radosgw-admin' in caplog.text
    assert SECRET not in ' '.join(argv) and SECRET not in caplog.text


def test_radosgw_admin_removes_a_bucket_with_its_objects_bypassing_gc_and_only_its_own(
        ) -> None:
    def stats(objects: int) -> str:
        return json.dumps({'bucket': 'rgwbench-r-0', 'usage': {
            'rgw.main': {'num_objects': objects}, 'rgw.multimeta': {'num_objects': 2}}})
    gone = (2, '', 'failure: (2002) Unknown error 2002:')
    tools = FakeTools([(0, stats(5000), ''), (0, '', ''), gone])
    assert RadosgwAdmin(tools).remove_bucket('rgwbench-r-0') == 5000
    assert tools.argvs[1][-6:] == ['bucket', 'rm', '--bucket', 'rgwbench-r-0',
                                   '--purge-objects', '--bypass-gc']
    # A minute, and more for each object (a hung radosgw-admin holds the clean-up no
    # longer), never more than a user's removal is given.
    assert tools.timeouts == [60, 160, 60]
    tools = FakeTools([(0, stats(10 ** 6), ''), (0, '', ''), gone])
    RadosgwAdmin(tools).remove_bucket('rgwbench-r-0')
    assert tools.timeouts[1] == 1800
    # Removed, yet there (a write landed while it went): an error, the S3 clean-up follows.
    tools = FakeTools([(0, stats(3), ''), (0, '', ''), (0, stats(1), '')])
    with pytest.raises(RGWBenchError, match='left the bucket in place'):
        RadosgwAdmin(tools).remove_bucket('rgwbench-r-0')
    # A bucket the workload never made (as Pacific and Tentacle exit and say it): nothing
    # removed.
    for ret in (210, 2):
        tools = FakeTools([(ret, '', 'failure: (2002) Unknown error 2002:')])
        assert RadosgwAdmin(tools).remove_bucket('rgwbench-r-1') is None
        assert len(tools.argvs) == 1
    # radosgw-admin refuses --bypass-gc in a multisite zonegroup: the caller is told.
    tools = FakeTools([(0, stats(40), ''),
                       (22, '', 'x\nbucket rm: bypass-gc in multisite\n')])
    with pytest.raises(RGWBenchError, match='bypass-gc in multisite') as refused:
        RadosgwAdmin(tools).remove_bucket('rgwbench-r-0')
    assert refused.value.errno == -22
    # Never a bucket rgwbench did not name, whatever a record says.
    tools = FakeTools([])
    with pytest.raises(RGWBenchError, match='not one rgwbench made'):
        RadosgwAdmin(tools).remove_bucket('photos')
    assert tools.argvs == []
