"""Settings applied, verified on the running daemons, and put back exactly.

On the `two_osds` cluster (two OSDs, so that one can restart at a time, and
two mgrs, for failovers), so that restarts and failovers disturb no other test.
"""
import json
import time
from typing import List

from conftest import Cluster, one_line, pg_states, wait_settings
from helpers import running_modes, settings_snapshot, wait_clean, wait_settled


def rgw_keys(c: Cluster) -> List[str]:
    return [d['key'] for d in c.ceph_json('rgwbench', 'status')['rgw_daemons']]


def test_plan_shows_the_changes_and_changes_nothing(two_osds: Cluster) -> None:
    before = settings_snapshot(two_osds)
    plan = two_osds.ceph_json('rgwbench', 'settings', 'plan', 'msgr2-secure=on',
                              'config=client.rgw/rgw_thread_pool_size:128')
    changes = [c['summary'] for p in plan for c in p['changes']]
    assert 'ceph config set osd ms_cluster_mode secure' in changes
    assert 'ceph config set client.rgw rgw_thread_pool_size 128' in changes
    # RGW is restarted once, after every change that needs it
    assert sum(1 for c in changes if c.startswith('ceph orch restart rgw.')) == 1
    assert changes[-1].startswith('ceph orch restart rgw.')
    text = two_osds.ceph('rgwbench', 'settings', 'plan', 'msgr2-secure=on').stdout
    assert 'restart every OSD up and in, a host at a time' in text
    assert settings_snapshot(two_osds) == before


BAD_SETTINGS = [
    (['bogus=1'], 'unknown setting bogus'),
    (['msgr2-secure=maybe'], "msgr2-secure: 'maybe' is not valid"),
    (['rgw-per-host=0'], "rgw-per-host: '0' is not valid"),
    (['config=client.rgw/no_such_option:1'], 'Ceph does not know this option'),
    (['config=nobody/rgw_thread_pool_size:1'], "config: 'nobody/rgw_thread_pool_size'"),
    (['msgr2-secure'], 'write settings as name=value'),
    # outside the study: authentication, where RGW fetches its keys
    (['config=global/auth_cluster_required:none'],
     'config: global/auth_cluster_required is outside what rgwbench changes'),
    (['config=client.rgw/rgw_thread_pool_size:128,client.rgw/rgw_crypt_vault_addr:http://x:8200'],
     'config: client.rgw/rgw_crypt_vault_addr is outside what rgwbench changes'),
]


def test_bad_settings_are_refused_with_one_line_and_nothing_changes(two_osds: Cluster) -> None:
    # One snapshot for all of them: a snapshot is a dozen commands.
    before = settings_snapshot(two_osds)
    for words, message in BAD_SETTINGS:
        for verb in (['plan'], ['apply', '--yes-i-really-mean-it']):
            proc = two_osds.ceph('rgwbench', 'settings', *verb, *words, check=False)
            assert proc.returncode == 22, (words, verb, proc.stderr)
            assert message in one_line(proc.stderr), (words, verb, proc.stderr)
    assert settings_snapshot(two_osds) == before


def test_apply_asks_for_confirmation(two_osds: Cluster) -> None:
    before = settings_snapshot(two_osds)
    proc = two_osds.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on', check=False)
    assert proc.returncode == 22 and '--yes-i-really-mean-it' in one_line(proc.stderr)
    proc = two_osds.ceph('rgwbench', 'settings', 'revert', check=False)
    assert proc.returncode == 2 and 'no settings are in place' in one_line(proc.stderr)
    assert settings_snapshot(two_osds) == before


def test_a_journal_the_mon_will_not_keep_changes_nothing(two_osds: Cluster) -> None:
    # Pacific's mgr takes a module-store write the mon refuses as done: the journal would
    # live in its memory only, and a failover would leave the changes in place.
    before = settings_snapshot(two_osds)
    two_osds.ceph('config', 'set', 'mon', 'mon_config_key_max_entry_size', '100')
    try:
        proc = two_osds.ceph('rgwbench', 'settings', 'apply',
                             'config=client.rgw/rgw_thread_pool_size:128',
                             '--yes-i-really-mean-it', check=False)
        # Refused with the mon's errno (EFBIG) before the first change.
        assert proc.returncode == 27, (proc.returncode, proc.stderr)
        assert 'storing journal/active failed' in one_line(proc.stderr), proc.stderr
        assert 'no settings have been applied' in two_osds.ceph(
            'rgwbench', 'settings', 'show', check=False).stderr
    finally:
        two_osds.ceph('config', 'rm', 'mon', 'mon_config_key_max_entry_size')
    assert settings_snapshot(two_osds) == before


def test_msgr2_secure_and_an_rgw_option_run_on_the_daemons_and_are_put_back(
        two_osds: Cluster) -> None:
    before = settings_snapshot(two_osds)
    assert set(before['osd_modes'].values()) == {'crc secure'}
    two_osds.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on',
                  'config=client.rgw/rgw_thread_pool_size:128', '--yes-i-really-mean-it')
    applied = wait_settings(two_osds, ['applied', 'failed'], 600)
    assert applied['state'] == 'applied', applied
    assert [c['state'] for c in applied['changes']] == ['made'] * len(applied['changes'])
    in_place = two_osds.ceph_json('rgwbench', 'status')['settings_in_place']
    assert in_place['state'] == 'applied' and in_place['settings']['msgr2-secure'] == 'on'
    assert 'settings: ' in two_osds.ceph('rgwbench', 'status').stdout
    # seen on the running daemons, not only in the config database
    assert set(running_modes(two_osds).values()) == {'secure'}
    for key in rgw_keys(two_osds):
        assert two_osds.ceph('config', 'show', 'rgw.%s' % key,
                             'ms_client_mode').stdout.strip() == 'secure'
        assert two_osds.ceph('config', 'show', 'rgw.%s' % key,
                             'rgw_thread_pool_size').stdout.strip() == '128'
    two_osds.ceph('rgwbench', 'settings', 'revert')
    reverted = wait_settings(two_osds, ['reverted'], 600)
    assert two_osds.ceph_json('rgwbench', 'status')['settings_in_place'] is None
    assert [c['state'] for c in reverted['changes']] == ['undone'] * len(reverted['changes'])
    wait_settled(two_osds, before)
    assert settings_snapshot(two_osds) == before
    wait_clean(two_osds)  # the OSDs restarted twice: their PGs peer again


def test_an_operators_change_during_the_settings_is_kept_and_the_rest_put_back(
        two_osds: Cluster) -> None:
    before = settings_snapshot(two_osds)
    two_osds.ceph('rgwbench', 'settings', 'apply', 'config=client.rgw/rgw_thread_pool_size:128,'
                  'client.rgw/rgw_max_concurrent_requests:512', '--yes-i-really-mean-it')
    assert wait_settings(two_osds, ['applied', 'failed'], 600)['state'] == 'applied'
    # the operator raises the thread pool while the settings are in place
    two_osds.ceph('config', 'set', 'client.rgw', 'rgw_thread_pool_size', '300')
    try:
        two_osds.ceph('rgwbench', 'settings', 'revert')
        reverted = wait_settings(two_osds, ['reverted'], 600)
        states = {c['target']: c['state'] for c in reverted['changes']}
        assert states['client.rgw/rgw_thread_pool_size'] == 'left', reverted
        assert states['client.rgw/rgw_max_concurrent_requests'] == 'undone', reverted
        assert 'someone else changed meanwhile' in reverted['progress']
        assert two_osds.ceph('config', 'get', 'client.rgw',
                             'rgw_thread_pool_size').stdout.strip() == '300'
        assert two_osds.ceph_json('rgwbench', 'status')['settings_in_place'] is None
    finally:
        two_osds.ceph('config', 'rm', 'client.rgw', 'rgw_thread_pool_size')
    wait_settled(two_osds, before)
    after = settings_snapshot(two_osds)
    assert after['config'] == before['config'] and after['specs'] == before['specs']


def test_rgw_daemons_per_host_are_changed_and_put_back(two_osds: Cluster) -> None:
    before = settings_snapshot(two_osds)
    two_osds.ceph('rgwbench', 'settings', 'apply', 'rgw-per-host=2', '--yes-i-really-mean-it')
    applied = wait_settings(two_osds, ['applied', 'failed'], 600)
    assert applied['state'] == 'applied', applied
    rgws = [d for d in two_osds.ceph_json('orch', 'ps', '--daemon_type', 'rgw')
            if d.get('status_desc') == 'running']
    assert len(rgws) == 2
    two_osds.ceph('rgwbench', 'settings', 'revert')
    wait_settings(two_osds, ['reverted'], 600)
    wait_settled(two_osds, before)
    assert settings_snapshot(two_osds) == before


def test_an_unclean_cluster_is_refused(two_osds: Cluster) -> None:
    pool = two_osds.ceph_json('osd', 'pool', 'ls')[0]
    two_osds.ceph('osd', 'pool', 'set', pool, 'size', '3')
    try:
        deadline = time.monotonic() + 60
        while 'undersized' not in json.dumps(pg_states(two_osds)) and \
                time.monotonic() < deadline:
            time.sleep(1)
        proc = two_osds.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on',
                             '--yes-i-really-mean-it', check=False)
        assert proc.returncode == 16, proc.stderr
        assert 'not every PG is active+clean' in one_line(proc.stderr)
        assert '--force' in proc.stderr
    finally:
        two_osds.ceph('osd', 'pool', 'set', pool, 'size', '2')
        wait_clean(two_osds)


def test_a_mgr_failover_in_the_middle_of_an_apply_puts_everything_back(
        two_osds: Cluster) -> None:
    wait_clean(two_osds)
    before = settings_snapshot(two_osds)
    two_osds.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on', '--yes-i-really-mean-it')
    deadline = time.monotonic() + 300
    while True:  # fail the mgr once the OSDs are being restarted
        shown = two_osds.ceph_json('rgwbench', 'settings', 'show')
        if shown['progress'].startswith('restart every OSD') or shown['state'] != 'applying':
            break
        assert time.monotonic() < deadline, shown
        time.sleep(0.5)
    assert shown['state'] == 'applying', shown
    active = two_osds.fail_over_mgr()
    # nobody runs a command: the new active mgr puts the cluster back by itself
    ended = wait_settings(two_osds, ['failed'], 600)
    assert 'mgr restarted' in ended['error'], ended
    assert two_osds.ceph_json('mgr', 'stat')['active_name'] != active
    wait_settled(two_osds, before)
    assert settings_snapshot(two_osds) == before
    wait_clean(two_osds)
