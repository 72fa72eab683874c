"""Compare-and-set undo: a target someone else changed during a run is left, and said so."""
from typing import Optional

from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster
from rgwbench.tests.settings_fakes import applier, session

from rgwbench.settings.changes import CONFIG_KEY, config_key_change, put_state
from rgwbench.settings.journal import (HEALTH_CHANGED, LEFT, UNDONE, Journal, acknowledge,
                                       findings, health_checks)

THREADS = {'config': {'client.rgw/rgw_thread_pool_size': 128}}


def test_a_config_value_changed_mid_run_is_left_with_a_finding_and_a_health_warning() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan(dict(THREADS, **{'msgr2-secure': 'on'})))
    # the operator raises the thread pool while the run goes on
    cluster.config[('client.rgw', 'rgw_thread_pool_size')] = '300'
    steps = a.revert(journal)
    assert cluster.config[('client.rgw', 'rgw_thread_pool_size')] == '300'
    # the other targets are put back
    assert ('osd', 'ms_cluster_mode') not in cluster.config
    (left,) = [s for s in steps if s.state == LEFT]
    assert left.target == 'client.rgw/rgw_thread_pool_size'
    assert "now 300, not the run's 128" in (left.error or '')
    assert all(s.state == UNDONE for s in steps if s is not left)
    assert Journal.unfinished(store) is None      # closed: nothing is left to do
    (finding,) = findings(store)
    assert (finding.run_id, finding.target) == ('run1', 'client.rgw/rgw_thread_pool_size')
    check = health_checks(store)[HEALTH_CHANGED]
    assert check['severity'] == 'warning' and check['count'] == 1
    assert 'client.rgw/rgw_thread_pool_size' in check['detail'][0]
    assert acknowledge(store) == 1
    assert findings(store) == [] and health_checks(store) == {}


def test_a_change_between_two_variants_is_kept_not_the_first_variants_before() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan(THREADS))
    a.revert(journal, close=False)
    assert ('client.rgw', 'rgw_thread_pool_size') not in cluster.config
    cluster.config[('client.rgw', 'rgw_thread_pool_size')] = '200'   # between the variants
    a.apply(journal, a.plan(THREADS))
    a.revert(journal)
    assert cluster.config[('client.rgw', 'rgw_thread_pool_size')] == '200'
    assert findings(store) == []


def test_a_spec_changed_mid_run_is_left() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan({'rgw-per-host': '2'}))
    cluster.specs['rgw.default']['placement']['count_per_host'] = 3
    # fields the orchestrator adds to what it stores are not someone else's change
    cluster.specs['rgw.default']['spec']['rgw_frontend_type'] = 'beast'
    a.revert(journal)
    assert cluster.specs['rgw.default']['placement']['count_per_host'] == 3
    assert [f.target for f in findings(store)] == ['rgw.default']


def test_a_spec_only_normalised_by_the_orchestrator_is_put_back() -> None:
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan({'rgw-per-host': '2'}))
    cluster.specs['rgw.default']['spec']['rgw_frontend_type'] = 'beast'
    a.revert(journal)
    assert cluster.specs['rgw.default']['placement']['count_per_host'] == 1
    assert findings(store) == []


class KeyStore(FakeCluster):
    def __init__(self) -> None:
        super().__init__()
        self.keys = {'rgw/cert/rgw.default': 'operator-pem'}

    def put_config_key(self, key: str, value: Optional[str]) -> None:
        self._call('config-key %s' % key)
        self.keys[key] = str(value)


def test_a_certificate_replaced_mid_run_is_left() -> None:
    cluster, store = KeyStore(), MemoryStore()
    journal = Journal.open(store, 'run1')
    change = config_key_change('rgw/cert/rgw.default', 'run-pem', 'the run\'s certificate')
    step = journal.record(CONFIG_KEY, change.target, 'operator-pem', change.after)
    put_state(cluster, CONFIG_KEY, change.target, change.after)
    journal.made(step)
    cluster.keys['rgw/cert/rgw.default'] = 'renewed-pem'   # the operator renews it
    applier(cluster).revert(journal)
    assert cluster.keys['rgw/cert/rgw.default'] == 'renewed-pem'
    (finding,) = findings(store)
    assert 'renewed-pem' not in finding.finding and 'config-key' in finding.finding


def test_settings_show_says_what_was_left_and_is_not_failed() -> None:
    from rgwbench.serial import dump
    from rgwbench.settings.journal import findings_to_text
    from rgwbench.settings.session import put_back_progress
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan(THREADS))
    cluster.config[('client.rgw', 'rgw_thread_pool_size')] = '300'
    steps = a.revert(journal)
    assert put_back_progress(steps).startswith('put back but 1 target(s) someone else changed')
    assert findings_to_text(dump(findings(store))).startswith(
        'run run1: config client.rgw/rgw_thread_pool_size: ceph config client.rgw')


def test_the_session_gives_every_standing_health_check_and_acknowledges() -> None:
    from rgwbench.settings.session import HEALTH_GAVE_UP
    cluster, store = FakeCluster(), MemoryStore()
    a = applier(cluster)
    journal = Journal.open(store, 'run1')
    a.apply(journal, a.plan(THREADS))
    cluster.config[('client.rgw', 'rgw_thread_pool_size')] = '300'
    a.revert(journal)
    s = session(cluster, store)
    assert set(s.standing_health_checks()) == {HEALTH_CHANGED}
    assert [f.target for f in s.findings()] == ['client.rgw/rgw_thread_pool_size']
    assert s.acknowledge() == 1 and s.standing_health_checks() == {}
    assert HEALTH_GAVE_UP not in s.standing_health_checks()
