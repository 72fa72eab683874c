"""`ceph rgwbench check` on a real cluster: clean when fresh, a raised debug level found;
the same checks before a load (refusing one that would fill the cluster) and in its record."""
import errno
import json
import time
from typing import Any, Dict, Iterator, List

import pytest

from conftest import Cluster, one_line
from test_load import buckets, set_credentials, wait_load


def check(cluster: Cluster, *args: str) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = cluster.ceph_json('rgwbench', 'check', *args)
    return found


def test_a_fresh_cluster_has_nothing_that_skews(cluster: Cluster) -> None:
    found = check(cluster)
    assert [f for f in found if f['level'] != 'info'] == [], json.dumps(found, indent=1)


def test_debug_rgw_raised_is_found_with_its_fix(cluster: Cluster) -> None:
    cluster.ceph('config', 'set', 'client.rgw', 'debug_rgw', '20')
    try:
        raised = {f['id']: f for f in check(cluster)}
        finding = raised['debug-rgw-raised']
        assert finding['level'] == 'skews'
        assert finding['fix'] == 'ceph config rm client.rgw debug_rgw'
        assert any('section client.rgw: debug_rgw = 20' in e for e in finding['evidence'])
        text = cluster.ceph('rgwbench', 'check').stdout
        assert 'fix:  ceph config rm client.rgw debug_rgw' in text
    finally:
        cluster.ceph('config', 'rm', 'client.rgw', 'debug_rgw')
    assert 'debug-rgw-raised' not in {f['id'] for f in check(cluster)}


def test_check_of_a_builtin_profile(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'check', '--profile', 'quick', '-f', 'json')
    found = {f['id']: f for f in json.loads(proc.stdout)}
    estimate = found['capacity-estimate']
    assert estimate['level'] == 'info'
    assert any('room before the fullest OSD' in e for e in estimate['evidence'])


def test_check_of_an_unknown_profile_is_enoent(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'check', '--profile', 'nope', check=False)
    assert proc.returncode == errno.ENOENT, proc
    assert "no profile 'nope'" in one_line(proc.stderr)


@pytest.fixture
def stored_credentials(cluster: Cluster) -> Iterator[None]:
    s3 = cluster.s3()
    proc = set_credentials(cluster, {'access_key': s3['access_key'],
                                     'secret_key': s3['secret_key']})
    assert proc.returncode == 0, proc.stderr
    yield
    cluster.ceph('rgwbench', 'credentials', 'rm')


def test_a_load_keeps_the_skew_it_ran_with(cluster: Cluster, stored_credentials: None) -> None:
    cluster.ceph('config', 'set', 'client.rgw', 'debug_rgw', '20')
    try:
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--duration', '5', '--warmup', '1'
                               ).stdout.strip()
        record = wait_load(cluster, load_id)
    finally:
        cluster.ceph('config', 'rm', 'client.rgw', 'debug_rgw')
    assert record['state'] == 'complete', record.get('error')
    found = {f['id']: f for f in record['findings']}
    finding = found['debug-rgw-raised']
    assert finding['level'] == 'skews'
    assert finding['fix'] == 'ceph config rm client.rgw debug_rgw'
    assert any('section client.rgw: debug_rgw = 20' in e for e in finding['evidence'])
    assert found['capacity-estimate']['level'] == 'info'
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert '[skews] debug-rgw-raised' in text, text


def test_a_load_that_would_fill_the_cluster_is_refused_even_forced(
        cluster: Cluster, stored_credentials: None) -> None:
    before = buckets(cluster)
    loads = cluster.ceph_json('rgwbench', 'load', 'ls')
    for force in ([], ['--force']):
        proc = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '64MiB',
                            '--concurrency', '64', '--duration', '3600', *force, check=False)
        assert proc.returncode == errno.ENOSPC, proc
        assert 'refusing the load: capacity-exceeded: the load could write' in \
            one_line(proc.stderr)
    assert cluster.ceph_json('rgwbench', 'status')['active_load'] is None
    assert cluster.ceph_json('rgwbench', 'load', 'ls') == loads
    assert buckets(cluster) == before


# Scrubs that sleep: between chunks of one object (osd_scrub_sleep, which the
# mclock scheduler of later releases overrides to 0) and, where that does not
# hold, before each object a deep scrub reads (a developer option every
# release keeps).
SLOW_SCRUB = {'osd_scrub_sleep': '3', 'osd_debug_deep_scrub_sleep': '1',
              'osd_scrub_chunk_min': '1', 'osd_scrub_chunk_max': '1'}


def scrubbing(cluster: Cluster) -> int:
    states = cluster.ceph_json('pg', 'dump', 'pgs_brief')
    pgs = states['pg_stats'] if isinstance(states, dict) else states
    return sum(1 for pg in pgs if 'scrubbing' in pg['state'])


def scrub_sleeps(cluster: Cluster) -> bool:
    """Whether osd.0 runs with one of the scrub sleeps set (the config reaches it in a moment)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        for option in ('osd_scrub_sleep', 'osd_debug_deep_scrub_sleep'):
            shown = cluster.ceph('config', 'show', 'osd.0', option).stdout.strip()
            if float(shown) >= float(SLOW_SCRUB[option]):
                return True
        time.sleep(1)
    return False


def test_a_scrub_during_a_load_is_kept_with_its_seconds(
        cluster: Cluster, stored_credentials: None) -> None:
    # A deep scrub that sleeps between chunks of one object: it lasts the whole load.
    for option, value in SLOW_SCRUB.items():
        cluster.ceph('config', 'set', 'osd', option, value)
    try:
        assert scrub_sleeps(cluster), 'osd.0 runs with neither scrub sleep set'
        load_id = cluster.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                               '--concurrency', '2', '--duration', '15', '--warmup', '1'
                               ).stdout.strip()
        deadline = time.monotonic() + 120
        while 'started' not in [a['state'] for a in cluster.ceph_json(
                'rgwbench', 'load', 'show', load_id)['agents'].values()]:
            assert time.monotonic() < deadline, 'the load did not start'
            time.sleep(0.5)
        cluster.ceph('osd', 'pool', 'deep-scrub', 'default.rgw.log')
        record = wait_load(cluster, load_id)
    finally:
        for option in SLOW_SCRUB:
            cluster.ceph('config', 'rm', 'osd', option)
        deadline = time.monotonic() + 120
        while scrubbing(cluster) and time.monotonic() < deadline:
            time.sleep(1)
    assert record['state'] == 'complete', record.get('error')
    during = [f for f in record['findings'] if f['id'] == 'pgs-scrubbing' and f.get('seconds')]
    assert len(during) == 1, json.dumps(record['findings'], indent=1)
    assert set(during[0]['seconds']) <= set(range(15)) and len(during[0]['seconds']) >= 3
    assert any('scrubbing+deep' in e for e in during[0]['evidence'])
    text = cluster.ceph('rgwbench', 'load', 'show', load_id).stdout
    assert 'when: seconds ' in text and 'of the measured window' in text, text
