"""Faults the random loop (test_fault_loop.py) does not make, each at a chosen moment.

* a mgr hung (SIGSTOP) in the middle of an apply, another taking over, the hung one
  resumed (SIGCONT): it must not change anything after it resumed;
* the mons losing quorum (the one mon of the cluster stopped) between two journal
  writes of a run: nothing changes that is not journaled, and all is put back;
* an OSD down when an undo comes to restart the OSDs: the restart is not made (nor
  tried again and again), what is left is said, and `settings revert` finishes it
  once the OSD is back;
* an operator's `config set` and `orch apply` on targets of a run, mid-run: both
  kept, each a finding shown, everything else put back.

Each ends with the cluster as before it (`fault_snapshot`), or as before but for
what the operator changed. On the `two_osds` cluster (two mgrs, two OSDs).
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from conftest import Cluster, pg_states, wait_for, wait_settings
from localcluster.processes import ProcessTable, osd_stop_grace
from helpers import (differences, fault_snapshot, run_state, wait_clean, wait_idle, wait_run,
                     wait_unchanged)

MODULE = 'mgr/rgwbench/'
JOURNAL = MODULE + 'journal/'
# A workload's agents: their service, and the record written before it is made.
AGENTS_SERVICE = 'container.rgwbench-agent'
LEFTOVERS = MODULE + 'running/leftovers/'
ACTIVE_JOURNAL = JOURNAL + 'active'
HISTORY = JOURNAL + 'history/'
# Options a variant changes and puts back; what an operator raises mid-run.
POOL, POOL_BY_RUN, POOL_BY_OPERATOR = 'rgw_thread_pool_size', 96, 300
REQUESTS, REQUESTS_BY_RUN = 'rgw_max_concurrent_requests', 512
SETTINGS = ['config=client.rgw/%s:%d,client.rgw/%s:%d' % (
    POOL, POOL_BY_RUN, REQUESTS, REQUESTS_BY_RUN), 'tls@rgw=on']
PROFILE_NAME = 'fault-cases'
# One variant with a config option pair and the RGW spec (TLS at RGW), one short load.
PROFILE: Dict[str, Any] = {
    'name': PROFILE_NAME, 'baseline': 'two-kinds',
    'variants': [{'name': 'two-kinds', 'settings': {
        'config': {'client.rgw/' + POOL: POOL_BY_RUN, 'client.rgw/' + REQUESTS: REQUESTS_BY_RUN},
        'tls@rgw': 'on'}}],
    'workloads': [{'name': 'get-4KiB', 'op': 'get', 'size': '4KiB', 'duration': 4,
                   'warmup': 0, 'concurrency': 2, 'objects': 20}]}
# Commands by which a mgr changes the cluster through the mons (as the mons' audit
# channel writes them in their log).
CHANGING = re.compile(r'"prefix": ?"(config set|config rm|config-key set|config-key rm|'
                      r'config-key del|osd )')
# The mons stay stopped this long: under the 30 s after which the mons fail a mgr
# that sent no beacon (mon_mgr_beacon_grace), so what is tested is the quorum's loss.
QUORUM_LOST_S = 20


@pytest.fixture
def profile(two_osds: Cluster) -> Iterator[str]:
    proc = two_osds.ceph_input(json.dumps(PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    # Planning stores the self-signed certificate the TLS settings use (kept after):
    # made before the test's first snapshot, it is part of it.
    two_osds.ceph('rgwbench', 'plan', '--profile', PROFILE_NAME)
    yield PROFILE_NAME
    two_osds.ceph('rgwbench', 'profile', 'rm', PROFILE_NAME, check=False)


@pytest.fixture(autouse=True)
def nothing_left_for_the_next(two_osds: Cluster) -> Iterator[None]:
    """A case that failed midway leaves no daemon stopped and nothing in place for the
    next: seen in CI, a case that failed with its settings applied made each later
    case wait 600 s for the module to be idle, and again in its rerun."""
    yield
    c = two_osds
    procs = ProcessTable(c.dir)
    for name in procs.names():
        pid = procs.pid(name)
        if pid is not None:
            os.kill(pid, signal.SIGCONT)
    c.start()
    shown = wait_for('the module to answer', lambda: c.try_ceph_json('rgwbench', 'status'))
    if shown['active_run'] is not None:
        c.ceph('rgwbench', 'abort', check=False)
    for force in ([], ['--force']):
        shown = c.try_ceph_json('rgwbench', 'status') or shown
        if shown['settings_in_place'] is None:
            break
        c.ceph('rgwbench', 'settings', 'revert', *force, check=False)
        try:
            wait_idle(c, timeout=300)
        except AssertionError:
            if force:
                raise


def journal_keys(c: Cluster) -> Dict[str, str]:
    """The open journal's keys (its `active` record and its steps), as the mons hold them."""
    dump: Dict[str, str] = c.ceph_json('config-key', 'dump', JOURNAL)
    return {k: v for k, v in dump.items() if not k.startswith(HISTORY)}


def journal_steps(c: Cluster) -> List[Dict[str, Any]]:
    keys = journal_keys(c)
    return [json.loads(keys[k]) for k in sorted(keys) if '/step/' in k]


def journal_owner(keys: Dict[str, str]) -> Optional[str]:
    active = keys.get(ACTIVE_JOURNAL)
    owner = json.loads(active).get('owner') if active else None
    return str(owner['name']) if owner else None


def mgr_pid(c: Cluster, name: str) -> int:
    pid = ProcessTable(c.dir).pid('mgr.' + name)
    assert pid, 'no pid for mgr.%s' % name
    return pid


def daemon_pids(c: Cluster) -> Dict[str, Optional[int]]:
    """The pid of each OSD and radosgw: a restart changes it."""
    procs = ProcessTable(c.dir)
    return {n: procs.pid(n) for n in procs.names() if n.startswith(('osd.', 'rgw.'))}


def log_path(c: Cluster, daemon: str) -> str:
    return os.path.join(c.dir, 'log', daemon + '.log')


def log_size(c: Cluster, daemon: str) -> int:
    return os.path.getsize(log_path(c, daemon))


def log_since(c: Cluster, daemon: str, offset: int) -> List[str]:
    with open(log_path(c, daemon), 'rb') as f:
        f.seek(offset)
        return f.read().decode('utf-8', 'replace').splitlines()


def changes_by(c: Cluster, mgr: str, mon_log_offset: int) -> List[str]:
    """Commands changing the cluster the mons took from `mgr` since the offset of their log."""
    entity = "entity='mgr.%s'" % mgr
    return [line for line in log_since(c, 'mon.a', mon_log_offset)
            if 'log_channel(audit)' in line and entity in line and
            CHANGING.search(line)]


def settings_state(c: Cluster) -> str:
    """The settings' state as the module last wrote it (read from the mons)."""
    return str(json.loads(c.ceph('config-key', 'get', MODULE + 'settings/state').stdout)[
        'state'])


def stopped_mid_apply(c: Cluster, tries: int = 3) -> Tuple[str, str, int]:
    """Apply SETTINGS and SIGSTOP the active mgr at its first change: (journal, mgr, pid).

    The mgr is stopped the moment the journal shows a change made, and the settings'
    state, which the mons hold, then shows whether the apply was still going. In
    CI's busiest minutes a check through the mgr came after the whole apply had
    ended; should the stop still come after it, the mgr is resumed, the settings
    put back, and the apply tried again."""
    for _ in range(tries):
        journal_id = c.ceph('rgwbench', 'settings', 'apply', *SETTINGS,
                            '--yes-i-really-mean-it').stdout.strip()
        stopped: Dict[str, Any] = {}

        def stop_at_a_change() -> bool:
            keys = journal_keys(c)
            owner = journal_owner(keys)
            if owner and any(json.loads(v)['state'] == 'made'
                             for k, v in keys.items() if '/step/' in k):
                stopped['pid'] = mgr_pid(c, owner)
                os.kill(stopped['pid'], signal.SIGSTOP)
                stopped['mgr'] = owner
                return True
            return False
        wait_for('a change made', stop_at_a_change, timeout=120)
        if settings_state(c) == 'applying':
            return journal_id, stopped['mgr'], stopped['pid']
        os.kill(stopped['pid'], signal.SIGCONT)
        assert wait_settings(c, ['applied', 'failed'], 600)['state'] == 'applied'
        c.ceph('rgwbench', 'settings', 'revert')
        wait_settings(c, ['reverted'], 600)
        wait_idle(c)
    raise AssertionError('each of %d applies had made every change before its mgr was '
                         'stopped' % tries)


def test_a_hung_mgr_resumed_after_a_failover_changes_nothing(two_osds: Cluster) -> None:
    """SIGSTOP of the active mgr mid-apply, `mgr fail` of it, SIGCONT once the new
    active mgr has put everything back.

    `ceph mgr fail` of the stopped mgr is what the mons do themselves once its beacons
    stop for mon_mgr_beacon_grace (30 s): the same drop of the active mgr, without the
    wait, whose moment on a loaded machine depends on the mons' tick. The stopped mgr is
    resumed once the undo is over, so that anything it did after (a change, a restart,
    a journal write) shows as a difference rather than hiding in the new mgr's undo."""
    c = two_osds
    wait_clean(c)
    wait_idle(c)
    before = fault_snapshot(c)
    journal_id, hung, pid = stopped_mid_apply(c)
    try:
        made = [s['target'] for s in journal_steps(c) if s['state'] == 'made']
        failed_over_at = log_size(c, 'mon.a')
        c.ceph('mgr', 'fail', hung)
        wait_for('another mgr active', lambda: c.ceph_json('mgr', 'stat').get(
            'available') and c.ceph_json('mgr', 'stat')['active_name'] != hung)
        new_active = c.ceph_json('mgr', 'stat')['active_name']
        # The new active mgr claims the journal (or has closed it already: only its
        # owner may), then puts everything back.
        claimed = wait_for('the journal claimed', lambda: (
            lambda keys: journal_owner(keys) if keys else 'closed')(journal_keys(c)) != hung)
        assert claimed
        wait_for('the new active mgr to put the settings back', lambda: (
            lambda shown: shown and shown['state'] == 'failed' and shown['finished'])(
                c.try_ceph_json('rgwbench', 'settings', 'show')), timeout=600)
        ended = c.ceph_json('rgwbench', 'settings', 'show')
        assert 'mgr restarted' in ended['error'], ended
        assert not journal_keys(c), 'journal %s is still open' % journal_id
        assert wait_unchanged(c, before) == []
        # The mons' log names the changes of the mgr that made them (what shows the
        # resumed mgr's below): here, those of the new active mgr's undo.
        assert changes_by(c, new_active, failed_over_at)
        pids = daemon_pids(c)
        mon_offset, mgr_offset = log_size(c, 'mon.a'), log_size(c, 'mgr.' + hung)
    finally:
        os.kill(pid, signal.SIGCONT)
    # It learns it is no longer active from the mgr map, and starts again as a standby.
    wait_for('mgr.%s to be a standby' % hung, lambda: hung in [
        s['name'] for s in c.ceph_json('mgr', 'dump')['standbys']], timeout=180)
    time.sleep(5)  # what it would do after it resumed, given time to show
    resumed_log = '\n'.join(log_since(c, 'mgr.' + hung, mgr_offset)[-40:])
    assert changes_by(c, hung, mon_offset) == [], resumed_log
    assert daemon_pids(c) == pids, resumed_log
    assert differences(before, fault_snapshot(c)) == [], resumed_log
    assert not journal_keys(c)
    history = json.loads(c.ceph('config-key', 'get', HISTORY + journal_id).stdout)
    assert {s['state'] for s in history['steps']} == {'undone'}, (history, made)


def unjournaled(c: Cluster, before: Dict[str, Any]) -> Optional[List[str]]:
    """Config options and specs that differ from `before` with nothing the module wrote
    down before making them naming them (None: no journal is open, nothing to compare).

    What the module writes down: a journal step per change; a workload's agents'
    service in its leftovers record. The orchestrator sets `rgw_frontends` of each RGW
    daemon it deploys from a spec: that follows a journaled spec. The cluster is read
    before the records, so that a change made after its record was written is always
    found in the records read after it."""
    config = {'%s/%s' % (o['section'], o['name']): o['value']
              for o in c.ceph_json('config', 'dump')}
    specs = {s['service_name']: s for s in c.ceph_json('orch', 'ls', '--export')}
    records: Dict[str, str] = c.ceph_json('config-key', 'dump', MODULE)
    if ACTIVE_JOURNAL not in records:
        return None
    targets = {(s['kind'], s['target']) for s in
               (json.loads(v) for k, v in records.items()
                if k.startswith(JOURNAL) and '/step/' in k)}
    services = [t for kind, t in targets if kind == 'service']
    agents_recorded = any(k.startswith(LEFTOVERS) for k in records)
    old_config = {'%s/%s' % (o['section'], o['name']): o['value'] for o in before['config']}
    old_specs = {s['service_name']: s for s in before['specs']}

    def journaled_config(name: str) -> bool:
        section, option = name.split('/', 1)
        return ('config', name) in targets or (option == 'rgw_frontends' and any(
            section.startswith('client.%s.' % service) for service in services))

    def journaled_spec(name: str) -> bool:
        return ('service', name) in targets or (
            name.startswith(AGENTS_SERVICE) and agents_recorded)
    found = ['config %s' % k for k in sorted(set(config) | set(old_config))
             if config.get(k) != old_config.get(k) and not journaled_config(k)]
    found += ['spec %s' % k for k in sorted(set(specs) | set(old_specs))
              if specs.get(k) != old_specs.get(k) and not journaled_spec(k)]
    return found


def test_mons_without_quorum_between_two_journal_writes_change_nothing_unjournaled(
        two_osds: Cluster, profile: str) -> None:
    """The cluster's one mon stopped (SIGSTOP) once a run has journaled and made a
    change, restarted (SIGCONT) after QUORUM_LOST_S; the cluster tool makes one mon."""
    c = two_osds
    wait_clean(c)
    wait_idle(c)
    before = fault_snapshot(c)
    run_id = c.ceph('rgwbench', 'run', '--profile', profile,
                    '--yes-i-really-mean-it').stdout.strip()
    wait_for('a change made', lambda: any(
        s['state'] == 'made' and s['kind'] != 'user' for s in journal_steps(c)), timeout=180)
    mon = ProcessTable(c.dir).pid('mon.a')
    assert mon, 'no pid for mon.a'
    os.kill(mon, signal.SIGSTOP)
    try:
        time.sleep(QUORUM_LOST_S)
    finally:
        os.kill(mon, signal.SIGCONT)
    checked, problems = 0, []  # type: int, List[str]

    def check() -> None:
        nonlocal checked
        found = unjournaled(c, before)
        if found is not None:
            checked += 1
            problems.extend(p for p in found if p not in problems)
    record = wait_run(c, run_id, timeout=600, meanwhile=check, every_s=1)
    assert checked, 'the run ended before any check'
    assert not problems, problems
    assert record['state'] in ('complete', 'failed'), record
    wait_idle(c)
    assert wait_unchanged(c, before) == []


def test_an_osd_down_when_the_undo_restarts_the_osds(two_osds: Cluster) -> None:
    """msgr2 secure mode in place, an OSD stopped (cleanly: memstore keeps its objects
    only across a clean stop), `settings revert`: the options are put back, the OSD
    restart is not made while PGs are not active+clean, and the OSD once back, a second
    `settings revert` makes it."""
    c = two_osds
    wait_clean(c)
    wait_idle(c)
    before = fault_snapshot(c)
    c.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on', '--yes-i-really-mean-it')
    assert wait_settings(c, ['applied', 'failed'], 600)['state'] == 'applied'
    procs = ProcessTable(c.dir)
    assert procs.stop(['osd.1'], timeout=osd_stop_grace('memstore')) == ['osd.1']
    try:
        wait_for('PGs degraded', lambda: set(pg_states(c)) - {'active+clean'}, timeout=120)
        osd0 = procs.pid('osd.0')
        c.ceph('rgwbench', 'settings', 'revert')
        shown = wait_for('the undo to stop short', lambda: (
            lambda s: s if s['state'] == 'reverting' and s.get('error') else None)(
                c.ceph_json('rgwbench', 'settings', 'show')), timeout=300)
        # The options put back; no daemon restarted (the OSDs', RGW's restart refused).
        states = {(ch['kind'], ch['target']): ch for ch in shown['changes']}
        restarts = {target for kind, target in states if kind == 'restart'}
        assert 'osd' in restarts, shown
        for (kind, target), change in states.items():
            if kind == 'restart':
                assert change['state'] == 'undo-failed', shown
                assert 'not every PG is active+clean' in change['error'], change
                assert 'restart %s: ' % target in shown['error'], shown
            else:
                assert change['state'] == 'undone', shown
        assert 'revert --force' in shown['error'], shown
        assert c.ceph_json('rgwbench', 'status')['settings_in_place']['state'] == 'reverting'
        # Not tried again: past the recovery loop's first wait (15 s), no OSD restarted.
        time.sleep(20)
        assert procs.pid('osd.0') == osd0
        again = c.ceph_json('rgwbench', 'settings', 'show')
        assert again['changes'] == shown['changes'], again
    finally:
        c.start()  # the OSD back, as its unit would start it
        wait_clean(c)
        c.ceph('rgwbench', 'settings', 'revert', check=False)
        reverted = wait_settings(c, ['reverted'], 600)
    assert {ch['state'] for ch in reverted['changes']} == {'undone'}, reverted
    assert c.ceph_json('rgwbench', 'status')['settings_in_place'] is None
    assert wait_unchanged(c, before) == []
    wait_clean(c)


def operators_certificate() -> str:
    """A certificate and key of the operator's own (PEM), not the module's.

    In a folder of its own: pytest's shared temporary folder is cleaned by whichever
    session on the machine starts next."""
    with tempfile.TemporaryDirectory(prefix='rgwbench-operator-') as folder:
        key, cert = os.path.join(folder, 'op.key'), os.path.join(folder, 'op.crt')
        made = subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
                               '-days', '2', '-keyout', key, '-out', cert, '-subj',
                               '/CN=operator', '-addext', 'subjectAltName=IP:127.0.0.1'],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        assert made.returncode == 0, made.stdout
        with open(cert) as c, open(key) as k:
            return c.read() + k.read()


def rgw_spec(c: Cluster) -> Dict[str, Any]:
    (spec,) = [s for s in c.ceph_json('orch', 'ls', '--export') if s['service_type'] == 'rgw']
    return dict(spec)


def test_an_operators_config_set_and_orch_apply_mid_run_are_kept(
        two_osds: Cluster, profile: str) -> None:
    c = two_osds
    wait_clean(c)
    wait_idle(c)
    before = fault_snapshot(c)
    original = rgw_spec(c)
    service = str(original['service_name'])
    cert_key = 'rgw/cert/' + service
    pem = operators_certificate()
    run_id = c.ceph('rgwbench', 'run', '--profile', profile,
                    '--yes-i-really-mean-it').stdout.strip()
    try:
        # Once the variant's settings are in place and its workload runs.
        wait_for('the workload', lambda: ', workload ' in (
            c.ceph_json('rgwbench', 'status')['active_run'] or {}).get('progress', '') or
            run_state(c, run_id) != 'running', timeout=300)
        assert run_state(c, run_id) == 'running'
        changed = rgw_spec(c)
        assert changed['spec'].get('ssl'), changed  # the run's TLS
        changed['spec']['rgw_frontend_ssl_certificate'] = pem
        proc = c.ceph_input(json.dumps(changed), 'orch', 'apply')
        assert proc.returncode == 0, proc.stderr
        c.ceph('config', 'set', 'client.rgw', POOL, str(POOL_BY_OPERATOR))
        record = wait_run(c, run_id, timeout=600)
        wait_idle(c)
        assert record['state'] in ('complete', 'failed'), record
        # Kept as the operator made them, and said so: in the result, in the findings,
        # in the health.
        assert c.ceph('config', 'get', 'client.rgw', POOL).stdout.strip() == \
            str(POOL_BY_OPERATOR)
        kept = rgw_spec(c)['spec']
        certificate = kept.get('rgw_frontend_ssl_certificate') or ''
        if isinstance(certificate, list):
            certificate = '\n'.join(certificate)
        assert kept.get('ssl') and pem.split('-----END')[0] in certificate, kept.keys()
        (told,) = [f for f in record['findings'] if f['id'] == 'changed-during-run']
        assert any('client.rgw/%s' % POOL in e for e in told['evidence']), told
        assert any('rgw.' in e and 'spec' in e for e in told['evidence']), told
        listed = c.ceph_json('rgwbench', 'settings', 'findings')
        findings = {(f['kind'], f['target']) for f in listed if f['run_id'] == run_id}
        # The orchestrator keeps a spec's certificate in the config-key store too, where
        # the run put its own: the operator's spec changed it as well.
        told_by_module = {('config', 'client.rgw/' + POOL), ('service', service)}
        assert told_by_module <= findings, findings
        assert findings - told_by_module <= {('config-key', cert_key)}, findings
        wait_for('the health warning', lambda: 'RGWBENCH_CHANGED_DURING_RUN' in c.ceph_json(
            'health', 'detail')['checks'], timeout=60)
        # Everything else put back: the other option, the run's user and buckets.
        after = fault_snapshot(c)
        config = {(o['section'], o['name']) for o in after['config']}
        assert ('client.rgw', REQUESTS) not in config
        assert (after['users'], after['buckets']) == (before['users'], before['buckets'])
    finally:
        # The operator puts back their own changes, and acknowledges the findings.
        wait_run(c, run_id, timeout=600)
        wait_idle(c)
        c.ceph('config', 'rm', 'client.rgw', POOL)
        proc = c.ceph_input(json.dumps(original), 'orch', 'apply')
        assert proc.returncode == 0, proc.stderr
        if cert_key not in before['config_keys']:
            c.ceph('config-key', 'rm', cert_key)
        c.ceph('rgwbench', 'settings', 'acknowledge')
    # The mons learn the mgr's health checks with its next report.
    wait_for('the warning gone', lambda: 'RGWBENCH_CHANGED_DURING_RUN' not in c.ceph_json(
        'health', 'detail')['checks'], timeout=60)
    assert wait_unchanged(c, before) == []
