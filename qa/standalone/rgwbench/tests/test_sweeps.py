"""A concurrency sweep run end to end on a real cluster: its plan, its curve and knee in
`results show` (text and JSON) and on the panel's run page.

On the `two_osds` cluster, as test_runs.py: one RGW, one variant, the cluster as it is, four
4 KiB PUT workloads. What is asserted of the knee is what such a cluster shows, not
tuned for: one request in flight leaves RGW and the OSDs idle while the client waits,
so a later point beats the first beyond the noise (at 16 or 64 in flight each of the
seven sweeps measured for this served 2 to 4 times the ops/s of 1), and the knee is not
the first point: a later one, or not reached (the curve still rising at 64, as a
two-core machine often leaves it). A knee at the first point means no rise stood out of
the noise: too noisy to tell, which is what this test used to find, for two reasons:

* RGW creates its data pool at the first object written to it. On a fresh cluster that
  was the sweep's first PUT: it took 2 s, the 1 s warm-up did not hold it, and the first
  measured second of concurrency 1 had no request at all (its seconds 0, 443, 417, 448,
  421, 436: ±300 ops/s about 361). The test writes an object before the run (and waits
  for the new pool's PGs), so that no point pays for the pool.
* A point's noise comes from its per-second series by batch means
  (results.significance): 6 s are 3 batches of 2 s, 2 degrees of freedom, t = 4.30,
  and the seconds of a machine shared with other clusters dip by a third now and then.
  Measured on one Pacific cluster, pool made: 6 s points had ±47, ±172, ±269, ±208 ops/s
  about 285, 421, 489, 748; 20 s points (5 batches of 4 s, 4 degrees of freedom, t =
  2.78) ±18, ±25, ±57, ±75 about 242, 450, 540, 808. 20 s is the shortest window with
  4 degrees of freedom (16 s is 4 batches of 4), so the points are 20 s each: every
  point's df is asserted, so a shorter window cannot come back unseen. The price: the
  test's call took 199-214 s in four runs (Pacific and Tentacle, two each), 78 s with
  6 s points: 56 s of it the longer loads, the rest the run's work around each point
  (not timed apart; deleting what a point wrote grows with it).
"""
import json
from typing import Any, Dict

import pytest
from conftest import Cluster
from helpers import s3_client, wait_clean, wait_run
from panel_client import HTTPS, Panel

SWEEP_NAME = 'sweep-test'
CONCURRENCIES = [1, 4, 16, 64]
#: the seconds of each point and the degrees of freedom of their batch means (5 batches of 4)
POINT_S, POINT_DF = 20, 4.0
SWEEP_PROFILE: Dict[str, Any] = {
    'name': SWEEP_NAME, 'baseline': 'as-is',
    'variants': [{'name': 'as-is', 'settings': {}}],
    'workloads': [{'op': 'put', 'size': '4KiB', 'duration': POINT_S, 'warmup': 1,
                   'concurrency': CONCURRENCIES}]}
POINTS = ['put-4KiB-c%d' % c for c in CONCURRENCIES]


def make_data_pool(c: Cluster) -> None:
    """RGW's data pool made, as the first object written makes it, and its PGs clean."""
    s3 = s3_client(c)
    s3.create_bucket(Bucket='sweep-test-pool')
    s3.put_object(Bucket='sweep-test-pool', Key='first', Body=b'x')
    s3.delete_object(Bucket='sweep-test-pool', Key='first')
    s3.delete_bucket(Bucket='sweep-test-pool')
    wait_clean(c)


def test_a_concurrency_sweep_is_a_curve_with_its_knee(runs: Cluster, panel: Panel) -> None:
    proc = runs.ceph_input(json.dumps(SWEEP_PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    try:
        make_data_pool(runs)
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
        # each point's noise measured (a point without one would count as exact)
        assert all(p['ops_per_s_df'] == POINT_DF and p['ops_per_s_noise'] > 0
                   for p in curve['points']), curve
        knee = curve['knee']
        # one request in flight is beaten beyond the noise by a later point: the first
        # point is not the knee (the knee a later point, or not reached)
        assert knee['point'] != 0, curve
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
