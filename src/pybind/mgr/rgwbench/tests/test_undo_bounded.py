"""Bounded undo: restarts once, none on a degraded cluster, a recovery loop that stops."""
import threading
from typing import List, Optional

from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster, SettlingCluster
from rgwbench.tests.settings_fakes import applier, session

from rgwbench.settings.journal import UNDO_FAILED, UNDONE, Journal
from rgwbench.settings.session import HEALTH_GAVE_UP

THREADS = {'config': {'client.rgw/rgw_thread_pool_size': 128}}


def applied(cluster: FakeCluster, store: MemoryStore) -> Journal:
    a = applier(cluster)
    journal = Journal.open(store, 'j1', about={'what': 'settings'})
    a.apply(journal, a.plan(THREADS))
    cluster.calls.clear()
    return journal


def test_no_daemon_is_restarted_on_a_degraded_cluster_without_force() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    journal = applied(cluster, store)
    cluster.unclean = '1 PGs degraded'
    steps = applier(cluster).revert(journal)
    # the config is put back; the restart is owed, and said so
    assert cluster.calls == ['config client.rgw/rgw_thread_pool_size=None']
    (restart,) = [s for s in steps if s.kind == 'restart']
    assert restart.state == UNDO_FAILED
    assert 'not every PG is active+clean (1 PGs degraded)' in (restart.error or '')
    assert 'settings revert --force' in (restart.error or '')
    steps = applier(cluster).revert(journal, force=True)
    assert cluster.calls[-1] == 'restart rgw.default'
    assert all(s.state == UNDONE for s in steps) and Journal.unfinished(store) is None


def test_a_put_back_waits_for_pgs_that_settle_then_restarts() -> None:
    """Seen with sse=auto: the apply's check made RGW's first bucket (and its pools), and
    the put-back right after found their PGs unknown; refused at once, the restart stayed
    owed and `settings show` said `reverting` until the module's next start."""
    cluster, store = SettlingCluster(polls=0), MemoryStore()
    applied(cluster, store)
    cluster.polls = 3
    s = session(cluster, store)
    s.revert()
    s.wait(120)
    assert cluster.calls[-1] == 'restart rgw.default' and cluster.polls == 0
    shown = s.show()
    assert shown['state'] == 'reverted' and shown['progress'] == 'put back', shown
    assert Journal.unfinished(store) is None


def test_a_put_back_with_pgs_missing_a_copy_refuses_the_restart_without_waiting() -> None:
    """An OSD down: no wait mends its PGs, the restart is refused at the first look."""
    cluster, store = SettlingCluster(polls=0), MemoryStore()
    journal = applied(cluster, store)
    cluster.unclean_settles = False
    cluster.unclean = 'PGs 8 active+undersized+degraded'
    looks: List[str] = []
    cluster.pgs_not_clean = lambda: looks.append('look') or cluster.unclean  # type: ignore
    steps = applier(cluster).revert(journal)
    assert [c for c in cluster.calls if c.startswith('restart')] == []
    assert looks == ['look'], looks
    assert any('not every PG is active+clean' in (s.error or '') for s in steps), steps


def test_a_failing_restart_undo_is_made_once_per_try() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    journal = applied(cluster, store)
    cluster.fail_on = 'restart'
    applier(cluster).revert(journal)
    assert [c for c in cluster.calls if c.startswith('restart')] == ['restart rgw.default']


class Waits(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.waited: List[float] = []

    def wait(self, timeout: Optional[float] = None) -> bool:
        self.waited.append(float(timeout or 0))
        return False


def test_the_recovery_loop_backs_off_then_stops_with_a_health_error() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    applied(cluster, store)
    cluster.fail_on = 'restart'
    s = session(cluster, store)
    stopping = Waits()
    s.recover(stopping, retry_s=15, tries=5, max_wait_s=100)
    assert stopping.waited == [15, 30, 60, 100]
    assert [c for c in cluster.calls if c.startswith('restart')] == ['restart rgw.default'] * 5
    check = s.health_checks()[HEALTH_GAVE_UP]
    assert check['severity'] == 'error' and check['count'] == 1
    assert '`ceph rgwbench settings revert`' in check['summary']
    assert check['detail'][0].startswith('restart rgw.default (')
    # the operator finishes it by hand
    cluster.fail_on = None
    s.revert()
    s.wait()
    assert Journal.unfinished(store) is None and s.health_checks() == {}
    assert cluster.calls[-1] == 'restart rgw.default'


def test_a_run_journal_the_loop_gave_up_on_is_finished_by_settings_revert() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run7', about={'what': 'run'})
    a.apply(journal, a.plan(THREADS))
    cluster.unclean = '2 PGs peering'
    s = session(cluster, store)
    s.recover(Waits(), tries=2)
    assert s.gave_up() is not None
    s.revert(force=True)
    s.wait()
    assert Journal.unfinished(store) is None and s.gave_up() is None


def test_settings_show_and_the_journal_never_hold_a_secret_option_in_clear() -> None:
    from rgwbench.settings.base import SettingContext
    from rgwbench.settings.applier import SettingsApplier
    from rgwbench.settings.daemon_settings import ConfigOption, RGWRestart
    from rgwbench.settings.session import SettingsSession
    import logging
    secret = 'c2VjcmV0LWtleS1vZi0zMi1ieXRlcy0xMjM0NTY3OA=='

    class Knows(FakeCluster):
        def command_json(self, **cmd: object) -> object:
            return {'name': cmd['key'], 'can_update_at_runtime': True}

    cluster, store = Knows(), MemoryStore()
    ctx = SettingContext(cluster=cluster,  # type: ignore[arg-type]
                         rgw_service=lambda: 'rgw.default',
                         option={'config_allow': 'client.rgw/rgw_crypt_default_*'}.get,
                         secrets=MemoryStore(), release=16)
    s = SettingsSession(store, lambda: SettingsApplier(ctx, [ConfigOption(), RGWRestart()]),
                        logging.getLogger('test'))
    s.apply({'config': {'client.rgw/rgw_crypt_default_encryption_key': secret}})
    s.wait()
    shown = s.show()
    assert shown['settings'] == {
        'config': {'client.rgw/rgw_crypt_default_encryption_key': '<secret>'}}
    # only the journal's steps hold it, to put it back
    holding = [k for k, v in store.data.items() if secret in str(v)]
    assert holding and all('/step/' in k for k in holding), holding
