"""A concurrency sweep run end to end on a real cluster: its plan, its curve and knee in
`results show` (text and JSON) and on the panel's run page.

On the `two_osds` cluster, as test_runs.py. Short: one variant, the cluster as it is, four
4 KiB PUT workloads of 6 s each. The knee is asserted as it is found, never tuned for: a
knee that names one of the points, or a curve whose throughput still rises at its last.
"""
import json
from typing import Any, Dict

import pytest
from conftest import Cluster
from helpers import wait_run
from panel_client import HTTPS, Panel

SWEEP_NAME = 'sweep-test'
CONCURRENCIES = [1, 4, 16, 64]
SWEEP_PROFILE: Dict[str, Any] = {
    'name': SWEEP_NAME, 'baseline': 'as-is',
    'variants': [{'name': 'as-is', 'settings': {}}],
    'workloads': [{'op': 'put', 'size': '4KiB', 'duration': 6, 'warmup': 1,
                   'concurrency': CONCURRENCIES}]}
POINTS = ['put-4KiB-c%d' % c for c in CONCURRENCIES]


def test_a_concurrency_sweep_is_a_curve_with_its_knee(runs: Cluster, panel: Panel) -> None:
    proc = runs.ceph_input(json.dumps(SWEEP_PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    try:
        shown = runs.ceph_json('rgwbench', 'profile', 'show', SWEEP_NAME)
        assert [w['name'] for w in shown['workloads']] == POINTS
        plan = runs.ceph('rgwbench', 'plan', '--profile', SWEEP_NAME).stdout
        assert 'sweep put-4KiB: concurrency 1, 4, 16, 64 -> 4 workloads' in plan, plan
        run_id = runs.ceph('rgwbench', 'run', '--profile', SWEEP_NAME,
                           '--yes-i-really-mean-it').stdout.strip()
        record = wait_run(runs, run_id)
        assert record['state'] == 'complete', record.get('error')
        shown_run = runs.ceph_json('rgwbench', 'results', 'show', run_id)
        (curve,) = shown_run['curves']
        assert curve['name'] == 'put-4KiB' and curve['swept'] == 'concurrency'
        assert [p['workload'] for p in curve['points']] == POINTS
        assert [p['x'] for p in curve['points']] == CONCURRENCIES
        assert all(p['ops_per_s'] > 0 and p['p99_ms'] > 0 for p in curve['points'])
        knee = curve['knee']
        if knee['reached']:
            assert knee['workload'] in POINTS[:-1], knee
            later = curve['points'][knee['point'] + 1:]
            own = curve['points'][knee['point']]['ops_per_s']
            # the highest later point rose by `rise`, within the noise it was held to
            assert max(p['ops_per_s'] for p in later) - own == pytest.approx(
                knee['rise'], abs=0.01), curve
            assert knee['rise'] <= knee['noise'], knee
        else:
            assert knee['point'] is None, knee
        text = runs.ceph('rgwbench', 'results', 'show', run_id).stdout
        print(text[text.index('curve put-4KiB'):].split('\n\n')[0])  # what the run found
        assert 'curve put-4KiB (concurrency swept):' in text, text
        assert ('<- knee' in text and 'knee: at %s' % knee['value'] in text) if \
            knee['reached'] else 'knee: not reached' in text, text
        client = HTTPS(panel.wait_serving())
        assert client.login(panel.password)[0] == 303
        status, page, _ = client.request('GET', '/runs/%s' % run_id)
        assert status == 200 and 'id="sweeps"' in page
        assert 'p99 latency against throughput' in page
        assert ('class="knee"' in page) == bool(knee['reached'])
    finally:
        runs.ceph('rgwbench', 'profile', 'rm', SWEEP_NAME, check=False)
