"""msgr2 secure mode at scale: OSDs restarted a host at a time, and a setting two
variants of a run share applied once.

A cluster of its own: three hosts, four OSDs placed in CRUSH on two hosts of two,
every pool keeping its two copies on two hosts, so that `osd ok-to-stop` allows a
host's OSDs together.
"""
import json
import os
import re
import threading
import time
from typing import Any, Dict, Iterator, List, Set, Tuple

import pytest
from conftest import RELEASES, Cluster, own_cluster, wait_pgs_clean
from helpers import running_modes, snapshot, wait_run

OSD_HOSTS = {'osdhost-a': [0, 1], 'osdhost-b': [2, 3]}
PROFILE_NAME = 'msgr2-shared'
PROFILE: Dict[str, Any] = {
    'name': PROFILE_NAME, 'baseline': 'as-is',
    'variants': [{'name': 'as-is', 'settings': {}},
                 {'name': 'secure', 'settings': {'msgr2-secure': 'on'}},
                 {'name': 'secure-threads', 'settings': {
                     'msgr2-secure': 'on',
                     'config': {'client.rgw/rgw_thread_pool_size': 256}}}],
    'workloads': [{'name': 'put-4KiB', 'op': 'put', 'size': '4KiB', 'duration': 3,
                   'warmup': 1, 'concurrency': 2, 'rate': 20}]}


@pytest.fixture(scope='module', params=RELEASES)
def osd_hosts(request: Any) -> Iterator[Cluster]:
    with own_cluster(request.param, 'osd-hosts-%s' % request.param, '--hosts', '3',
                     '--osds', '4', '--objectstore', 'memstore') as c:
        for host, osds in OSD_HOSTS.items():
            for osd in osds:
                # where it is now and where it puts itself when it starts again
                c.ceph('config', 'set', 'osd.%d' % osd, 'crush_location',
                       'root=default host=%s' % host)
                c.ceph('osd', 'crush', 'create-or-move', 'osd.%d' % osd, '0.01',
                       'root=default', 'host=%s' % host)
        c.ceph('osd', 'crush', 'rule', 'create-replicated', 'by-host', 'default', 'host')
        for pool in c.ceph_json('osd', 'pool', 'ls'):
            c.ceph('osd', 'pool', 'set', pool, 'crush_rule', 'by-host')
        # and the pools RGW makes as the run writes (its data pool, at the first PUT)
        rule = c.ceph_json('osd', 'crush', 'rule', 'dump', 'by-host')['rule_id']
        c.ceph('config', 'set', 'global', 'osd_pool_default_crush_rule', str(rule))
        assert wait_pgs_clean(c, 300) is None, c.unclean_pgs_report()
        yield c


class UpFromWatch(threading.Thread):
    """Each OSD's `up_from` epochs seen while it runs: one more per restart."""

    def __init__(self, c: Cluster) -> None:
        super().__init__(daemon=True)
        self.c = c
        self.seen: Dict[int, Set[int]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            dump = self.c.try_ceph_json('osd', 'dump')
            for osd in (dump or {}).get('osds', []):
                if osd.get('up'):
                    self.seen.setdefault(int(osd['osd']), set()).add(int(osd['up_from']))
            self.stop.wait(0.5)

    def restarts(self) -> Dict[int, int]:
        return {osd: len(epochs) - 1 for osd, epochs in sorted(self.seen.items())}


def mgr_logs(c: Cluster) -> Dict[str, str]:
    folder = os.path.join(c.dir, 'log')
    found = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith('mgr.') and name.endswith('.log'):
            with open(os.path.join(folder, name), errors='replace') as f:
                found[name] = f.read()
    return found


def logged_since(c: Cluster, logged: Dict[str, int], pattern: str) -> List[str]:
    found: List[str] = []
    for name, text in mgr_logs(c).items():
        found += re.findall(pattern, text[logged.get(name, 0):])
    return found


def watched_run(c: Cluster, args: List[str], timeout: float
                ) -> Tuple[Dict[str, Any], UpFromWatch, Dict[str, int]]:
    """A run of `rgwbench run ARGS` to its end, complete, with each OSD's up_from
    watched meanwhile; its record, the watch, and how far each mgr's log was before."""
    logged = {name: len(text) for name, text in mgr_logs(c).items()}
    watch = UpFromWatch(c)
    watch.start()
    try:
        run_id = c.ceph('rgwbench', 'run', *args, '--yes-i-really-mean-it').stdout.strip()
        record = wait_run(c, run_id, timeout=timeout)
        time.sleep(2)
    finally:
        watch.stop.set()
        watch.join(30)
    assert record['state'] == 'complete', (record.get('error'), c.mgr_logs_tail())
    return record, watch, logged


# Quiet as the test below is, whose check does not hold in CI's busiest minutes: so that
# the file's one cluster serves both.
@pytest.mark.quiet
def test_variants_sharing_msgr2_restart_the_osds_by_host_once_each_way(
        osd_hosts: Cluster) -> None:
    c = osd_hosts
    proc = c.ceph_input(json.dumps(PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    plan = c.ceph_json('rgwbench', 'plan', '--profile', PROFILE_NAME)
    # applied for `secure`, kept for `secure-threads`, put back at the end: each of the
    # four OSDs twice (one at a time for each variant, as before, was four times)
    assert plan['osd_restarts'] == 8, plan
    assert plan['variants'][2]['kept'] == ['msgr2-secure']
    text = c.ceph('rgwbench', 'plan', '--profile', PROFILE_NAME).stdout
    assert 'OSD restarts: 8' in text and 'keeps msgr2-secure' in text, text
    before, modes = snapshot(c), running_modes(c)
    record, watch, logged = watched_run(c, ['--profile', PROFILE_NAME], timeout=1500)
    assert record['osd_restarts'] == 8, record['osd_restarts']
    assert watch.restarts() == {0: 2, 1: 2, 2: 2, 3: 2}, watch.seen
    lines = logged_since(c, logged, r'restarted (osd\.[0-9]+(?:, osd\.[0-9]+)* of host \S+'
                                    r'(?: together)?)')
    refused = logged_since(c, logged, r'host \S+: `osd ok-to-stop` refuses .*')
    assert lines == ['osd.0, osd.1 of host osdhost-a together',
                     'osd.2, osd.3 of host osdhost-b together'] * 2, (lines, refused)
    secure = {(ch['kind'], ch['target'], ch['state'])
              for ch in record['variants'][1]['changes']}
    assert ('config', 'osd/ms_cluster_mode', 'undone') in secure
    assert not any(ch['target'].startswith('osd/')
                   for ch in record['variants'][2]['changes']), record['variants'][2]
    # everything put back: the options and the modes the OSDs run with
    assert snapshot(c)['config'] == before['config']
    assert running_modes(c) == modes
    c.ceph('rgwbench', 'profile', 'rm', PROFILE_NAME)


# Built-ins as `plan` and `run` take them, shortened by their own overrides: one size,
# 4 s measured after 1 s of warm-up, an open loop a loaded machine keeps, a working set
# of a given size (prefilled at once, not for prefill_time).
BUILTIN_RUNS = {
    'msgr2': ['--sizes', '1MiB', '--duration', '4', '--warmup', '1', '--concurrency', '3',
              '--rate', '10', '--objects', '20'],
    'quick': ['--duration', '4', '--warmup', '1', '--concurrency', '3', '--rate', '20',
              '--objects', '50'],
}
#: how far a plan's estimate may be from the run's own duration (issue 35): each step at
#: the time such steps took in the runs before on this cluster, the kinds not timed yet
#: at its release's defaults
ESTIMATE_WITHIN = 0.25


# A run's duration is the machine's as much as the cluster's: the estimate's times were
# measured at a load average of 2 to 9, and CI's busiest minutes run at 30 to 70
# (releases_in_parallel.py). So this runs once most shards have ended.
@pytest.mark.quiet
@pytest.mark.parametrize('profile', ['msgr2', 'quick'])
def test_builtin_runs_as_planned_and_about_as_long(osd_hosts: Cluster, profile: str) -> None:
    """The plan's estimate against the run's duration (its record's start and end); the
    msgr2 built-in restarts the OSDs a host at a time, as often as its plan says, and
    keeps TLS at RGW, which both its variants have, in place between them."""
    c = osd_hosts
    args = BUILTIN_RUNS[profile]
    plan = c.ceph_json('rgwbench', 'plan', '--profile', profile, *args)
    text = c.ceph('rgwbench', 'plan', '--profile', profile, *args).stdout
    assert 'estimate: ' in text, text
    record, watch, logged = watched_run(c, ['--profile', profile, *args], timeout=900)
    took = record['finished'] - record['started']
    print('%s: planned %.0f s %s at %s (measured here: %s), took %.0f s, load average %s; '
          'OSD restarts planned %d, made %d, each OSD %s'
          % (profile, plan['estimated_s'], plan['estimate'], plan['step_seconds'],
             plan['estimate_measured'], took, os.getloadavg(), plan['osd_restarts'],
             record['osd_restarts'], watch.restarts()))
    assert abs(plan['estimated_s'] - took) <= ESTIMATE_WITHIN * took, (
        plan['estimate'], plan['step_seconds'], took)
    assert plan['osd_restarts'] == record['osd_restarts']
    if profile == 'quick':
        assert record['osd_restarts'] == 0 and set(watch.restarts().values()) == {0}
        return
    # secure mode applied once (the second variant) and put back once (the run's end)
    assert record['osd_restarts'] == 8
    assert watch.restarts() == {0: 2, 1: 2, 2: 2, 3: 2}, watch.seen
    assert logged_since(c, logged, r'restarted (osd\.[0-9]+(?:, osd\.[0-9]+)* of host \S+'
                                   r'(?: together)?)') == [
        'osd.0, osd.1 of host osdhost-a together',
        'osd.2, osd.3 of host osdhost-b together'] * 2
    # TLS at RGW kept: its spec applied before the first variant, put back after the last
    assert plan['variants'][1]['kept'] == ['tls@rgw', 'tls@ingress']
    assert len(logged_since(c, logged, r'applied service rgw\.default')) == 2
    assert not any(ch['kind'] == 'service' for ch in record['variants'][1]['changes'])
