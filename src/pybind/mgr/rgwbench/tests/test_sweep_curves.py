"""Sweeps: a profile's lists expanded, their plan, the curves of a run, the knee, and how
`results show` and the panel show them."""
import csv
import io
import json
from typing import Any, Dict, List, Optional, Sequence

import pytest
from fixtures import MemoryStore
from result_records import entry, record, seconds, variant

from rgwbench.errors import InvalidInput
from rgwbench.loadgen import process
from rgwbench.panel.charts import Mark, line_chart
from rgwbench.panel.pages import run_page
from rgwbench.panel.sweep_section import sweeps_section
from rgwbench.profiles import (MAX_CONCURRENCY, Profile, ProfileInfo, ProfileStore,
                               builtin_profiles, estimate_seconds, parse_profile,
                               profile_to_text, with_overrides)
from rgwbench.profiles.sweeps import sweeps_of
from rgwbench.results.curves import run_curves
from rgwbench.results.knee import Curve, CurvePoint, Knee, find_knee, find_saturation
from rgwbench.results.model import Run
from rgwbench.results.curve_report import CSV_COLUMNS
from rgwbench.results.report import result_to_csv, result_to_markdown, result_to_text
from rgwbench.results.seeds import (seeds_to_csv, seeds_to_json, seeds_to_markdown,
                                    seeds_to_text, shown_json)
from rgwbench.runs.plan_text import sweeps_text
from rgwbench.serial import dump, load
from rgwbench.settings.registry import all_settings

SETTINGS = all_settings()


def profile_doc(workloads: List[Dict[str, Any]],
                variants: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    return {'name': 'x', 'variants': variants or [{'name': 'as-is'}], 'workloads': workloads}


def refused(data: Dict[str, Any]) -> str:
    with pytest.raises(InvalidInput) as e:
        parse_profile(data, SETTINGS)
    return str(e.value)


# -- the document -------------------------------------------------------------------------

def test_a_concurrency_list_is_a_workload_per_value_named_after_it() -> None:
    profile = parse_profile(profile_doc([{'op': 'put', 'concurrency': [1, 4, 16, 64],
                                          'duration': 6, 'warmup': 1}]), SETTINGS)
    assert [(w.name, w.concurrency, w.curve, w.swept) for w in profile.workloads] == [
        ('put-4KiB-c1', 1, 'put-4KiB', 'concurrency'),
        ('put-4KiB-c4', 4, 'put-4KiB', 'concurrency'),
        ('put-4KiB-c16', 16, 'put-4KiB', 'concurrency'),
        ('put-4KiB-c64', 64, 'put-4KiB', 'concurrency')]
    assert {(w.duration_s, w.warmup_s) for w in profile.workloads} == {(6.0, 1.0)}


def test_per_rgw_and_size_lists_and_a_named_workload() -> None:
    profile = parse_profile(profile_doc([
        {'name': 'writes', 'op': 'put', 'size': '64KiB', 'concurrency_per_rgw': [4, 256]},
        {'op': 'get', 'size': ['4KiB', '1MiB'], 'concurrency': 8},
        {'name': 'big', 'op': 'put', 'size': ['4MiB', 5 << 20]}]), SETTINGS)
    assert [(w.name, w.concurrency_per_rgw, w.size, w.curve, w.swept)
            for w in profile.workloads] == [
        ('writes-c4/rgw', 4, '64KiB', 'writes', 'concurrency_per_rgw'),
        ('writes-c256/rgw', 256, '64KiB', 'writes', 'concurrency_per_rgw'),
        ('get-4KiB', None, '4KiB', 'get-sizes', 'size'),
        ('get-1MiB', None, '1MiB', 'get-sizes', 'size'),
        ('big-4MiB', None, '4MiB', 'big', 'size'),
        ('big-5MiB', None, '5MiB', 'big', 'size')]


def test_the_expanded_profile_reads_back_as_it_was_stored() -> None:
    profile = parse_profile(profile_doc(
        [{'op': 'put', 'concurrency': [1, 64]}],
        [{'name': 'threads', 'sweep': {'config': [{'client.rgw/rgw_thread_pool_size': 128},
                                                  {'client.rgw/rgw_thread_pool_size': 256}]}}]),
        SETTINGS)
    assert parse_profile(dump(profile), SETTINGS) == profile
    store = ProfileStore(MemoryStore(), SETTINGS)
    store.set(json.dumps(dump(profile)))
    assert store.get('x') == profile


def test_a_setting_sweep_is_a_variant_per_value() -> None:
    profile = parse_profile(profile_doc([{'op': 'put'}], [
        {'name': 'as-is'},
        {'name': 'cpus', 'settings': {'tls@rgw': 'off'}, 'sweep': {'rgw-cpus': [1, 2.5]}},
        {'name': 'threads', 'sweep': {'config': [{'client.rgw/rgw_thread_pool_size': 128}]}},
        {'name': 'tls', 'sweep': {'tls@rgw': [True, False]}}]), SETTINGS)
    assert [(v.name, v.curve, v.swept) for v in profile.variants] == [
        ('as-is', None, None), ('cpus-1', 'cpus', 'rgw-cpus'), ('cpus-2.5', 'cpus', 'rgw-cpus'),
        ('threads-128', 'threads', 'config'), ('tls-on', 'tls', 'tls@rgw'),
        ('tls-off', 'tls', 'tls@rgw')]
    assert profile.variant('cpus-2.5').settings == {'tls@rgw': False, 'rgw-cpus': 2.5}
    assert profile.baseline == 'as-is'


@pytest.mark.parametrize('workload, message', [
    ({'op': 'put', 'concurrency': [1, 2], 'size': ['4KiB', '1MiB']},
     'workloads[0]: sweeps concurrency and size: sweep one field a workload'),
    ({'op': 'get', 'concurrency': [1, 2], 'rates': [10, 20]},
     'workloads[0].concurrency: a workload sweeps rates or concurrency, not both'),
    ({'op': 'put', 'concurrency': [4, 4]}, 'workloads[0].concurrency: gives 4 twice'),
    ({'op': 'put', 'concurrency': []}, 'workloads[0].concurrency: must be a list of values'),
    ({'op': 'put', 'concurrency': list(range(1, 18))},
     'workloads[0].concurrency: has 17 values, at most 16'),
    ({'op': 'put', 'concurrency': [1, 5000]},
     'workloads[0].concurrency: must be a whole number from 1 to 4096, got 5000'),
    ({'op': 'put', 'concurrency': [1, 2], 'curve': 'mine'},
     'workloads[0].curve: is set by the sweep of concurrency'),
    ({'op': 'put', 'curve': 'mine'}, 'workloads[0].curve: a point of a sweep has both curve'),
    ({'concurrency': [1, 2]}, 'workloads[0]: op is missing'),
    ({'name': 'n' * 62, 'op': 'put', 'concurrency': [1, 2]}, "workloads[0].name: 'nnn"),
])
def test_bad_workload_sweeps_are_refused_naming_the_field(workload: Dict[str, Any],
                                                          message: str) -> None:
    assert message in refused(profile_doc([workload]))


@pytest.mark.parametrize('sweep_variant, message', [
    ({'name': 'c', 'sweep': {'rgw-cpus': [1], 'rgw-per-host': [2]}},
     'variants[0].sweep: must be one setting and its values'),
    ({'name': 'c', 'sweep': [1, 2]}, 'variants[0].sweep: must be one setting'),
    ({'name': 'c', 'settings': {'rgw-cpus': 1}, 'sweep': {'rgw-cpus': [2]}},
     'variants[0].sweep: rgw-cpus is both swept and set in settings'),
    ({'name': 'c', 'sweep': {'rgw-cpus': [0]}}, 'variants[0].settings.rgw-cpus:'),
    ({'name': 'c', 'sweep': {'nope': [1]}}, "unknown setting 'nope'"),
    ({'name': 'c', 'sweep': {'rgw-cpus': [1, 1]}}, 'variants[0].sweep.rgw-cpus: gives 1 twice'),
])
def test_bad_setting_sweeps_are_refused_naming_the_field(sweep_variant: Dict[str, Any],
                                                         message: str) -> None:
    assert message in refused(profile_doc([{'op': 'put'}], [sweep_variant]))


def test_the_concurrency_cap_is_what_one_agent_carries() -> None:
    assert MAX_CONCURRENCY == 4096
    (workload,) = parse_profile(profile_doc([{'op': 'put', 'concurrency': 4096}]),
                                SETTINGS).workloads
    assert workload.concurrency == 4096


def test_an_engine_process_raises_its_open_files_to_hold_its_connections(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import resource
    limits = {'now': (1024, 8192)}
    monkeypatch.setattr(resource, 'getrlimit', lambda which: limits['now'])
    monkeypatch.setattr(resource, 'setrlimit',
                        lambda which, value: limits.__setitem__('now', value))
    process.room_for(512)
    assert limits['now'] == (1024, 8192)      # room enough already
    process.room_for(4096)
    assert limits['now'] == (4096 + process.OWN_FILES, 8192)
    process.room_for(10000)
    assert limits['now'] == (8192, 8192)      # as far as the hard limit lets it


def test_overrides_do_not_undo_a_sweep() -> None:
    profile = parse_profile(profile_doc([{'op': 'put', 'concurrency': [1, 4]},
                                         {'op': 'get', 'size': ['4KiB', '1MiB']}]), SETTINGS)
    with pytest.raises(InvalidInput, match='--concurrency: workload put-4KiB-c1 is a point '
                                           'of the sweep put-4KiB'):
        with_overrides(profile, concurrency=8)
    with pytest.raises(InvalidInput, match='--sizes: workload get-4KiB is a point of the '
                                           'sweep get-sizes'):
        with_overrides(profile, sizes='64KiB')
    assert [w.duration_s for w in with_overrides(profile, duration=5).workloads] == [5.0] * 4


# -- plan and profile show ---------------------------------------------------------------

def test_plan_and_profile_show_give_each_sweep_and_its_time() -> None:
    profile = parse_profile(profile_doc(
        [{'op': 'put', 'concurrency': [1, 4, 16, 64], 'duration': 6, 'warmup': 1}],
        [{'name': 'as-is'}, {'name': 'cpus', 'sweep': {'rgw-cpus': [1, 2]}}]), SETTINGS)
    sweeps = sweeps_of(profile)
    # each point: 6 s + 1 s + 7 s, under 3 variants
    assert [(s.curve, s.kind, s.swept, s.values, s.estimated_s) for s in sweeps] == [
        ('put-4KiB', 'workloads', 'concurrency', ['1', '4', '16', '64'], 4 * 14.0 * 3),
        ('cpus', 'variants', 'rgw-cpus', ['1.0', '2.0'], 2 * (4 * 14.0 + 60))]
    assert estimate_seconds(profile) == 4 * 14.0 * 3 + 10 + 2 * 60
    assert sweeps_text(dump(sweeps)) == [
        'sweep put-4KiB: concurrency 1, 4, 16, 64 -> 4 workloads (put-4KiB-c1, put-4KiB-c4, '
        'put-4KiB-c16, put-4KiB-c64), about 2m 48s',
        'sweep cpus: rgw-cpus 1.0, 2.0 -> 2 variants (cpus-1, cpus-2), about 3m 52s']
    text = profile_to_text(ProfileInfo(profile, False))
    assert 'Sweeps:' in text and 'put-4KiB  concurrency of the workloads  1, 4, 16, 64' in text


def test_the_saturation_builtin_sweeps_concurrency_per_rgw() -> None:
    (saturation,) = [p for p in builtin_profiles(SETTINGS) if p.name == 'saturation']
    assert [v.name for v in saturation.variants] == ['as-is']
    assert [(w.name, w.concurrency_per_rgw) for w in saturation.workloads[:4]] == [
        ('put-64KiB-c4/rgw', 4), ('put-64KiB-c16/rgw', 16), ('put-64KiB-c64/rgw', 64),
        ('put-64KiB-c256/rgw', 256)]
    assert {w.swept for w in saturation.workloads} == {'concurrency_per_rgw'}
    assert 'high-water mark' in saturation.description
    assert 'remains flat, or decreases' in saturation.description


# -- the knee -----------------------------------------------------------------------------

def points(ops: Sequence[float], se: Optional[float] = 5.0) -> List[CurvePoint]:
    return [CurvePoint(value=str(4 ** i), workload='w%d' % i, variant='v', x=4.0 ** i,
                       ops_per_s=o, p99_ms=1.0 + i, ops_per_s_se=se,
                       ops_per_s_df=None if se is None else 30.0)
            for i, o in enumerate(ops)]


def test_the_knee_is_where_throughput_stops_rising_beyond_the_noise() -> None:
    found = points([100, 400, 900, 905, 902])
    knee = find_knee(found)
    assert (knee.reached, knee.point) == (True, 2)
    curve = Curve(name='c', swept='concurrency', points=found, knee=knee)
    assert curve.knee_point() is found[2]
    assert knee.rise == 5.0 and knee.noise is not None and knee.noise > 5.0


def test_the_knee_gives_the_largest_later_rise_and_its_noise() -> None:
    knee = find_knee(points([100, 900, 950, 905], se=30.0))
    assert (knee.point, knee.rise) == (1, 50.0)
    assert knee.noise is not None and 50.0 < knee.noise


def test_a_fall_after_the_peak_puts_the_knee_at_the_peak() -> None:
    knee = find_knee(points([100, 800, 600, 500]))
    assert (knee.reached, knee.point) == (True, 1)


def test_a_curve_that_still_rises_has_no_knee() -> None:
    found = points([100, 200, 400, 800])
    knee = find_knee(found)
    assert (knee.reached, knee.point) == (False, None)
    assert Curve(name='c', swept='concurrency', points=found, knee=knee).knee_point() is None


def test_the_noise_decides_what_a_rise_is() -> None:
    ops = [100, 400, 900, 930]
    assert find_knee(points(ops, se=5.0)).reached is False      # +30 beyond ±14
    assert find_knee(points(ops, se=20.0)).point == 2            # +30 within ±58
    assert find_knee(points(ops, se=None)).reached is False      # unknown: any rise counts


def test_a_later_rise_beyond_the_noise_moves_the_knee_on() -> None:
    # flat from 16 to 64, then up again: 16 is no knee
    assert find_knee(points([100, 900, 902, 1500, 1503])).point == 3


def test_points_without_throughput_are_left_out() -> None:
    found = points([100, 900, 0, 901])
    found[2] = CurvePoint(value='16', workload='w2', variant='v')
    assert find_knee(found).point == 1
    assert find_knee(points([100])).reached is False


# -- a run's curves -----------------------------------------------------------------------

def sweep_run(ops: List[float], wobble: float = 0.05) -> Run:
    profile = parse_profile(profile_doc([{'op': 'put', 'concurrency': [1, 4, 16, 64]},
                                         {'op': 'get'}]), SETTINGS)
    entries = [entry(w.name, ops=o, mib=o * 4 / 1024, concurrency=w.concurrency,
                     mean=0.5 + i, p99=1.0 + i,
                     per_second=seconds([o * (1 + wobble * (t % 2)) for t in range(10)]))
               for i, (w, o) in enumerate(zip(profile.workloads, ops + [300]))]
    rec = record([variant('as-is', entries)], baseline='as-is')
    rec['definition'] = dump(profile)
    return load(Run, rec)


def test_a_run_has_a_curve_per_swept_workload_with_each_points_noise() -> None:
    (curve,) = run_curves(sweep_run([100, 380, 900, 905]))
    assert (curve.name, curve.swept) == ('put-4KiB', 'concurrency')
    assert [(p.value, p.workload, p.x, p.ops_per_s, p.p50_ms, p.p99_ms)
            for p in curve.points] == [
        ('1', 'put-4KiB-c1', 1.0, 100, 0.5, 1.0), ('4', 'put-4KiB-c4', 4.0, 380, 1.5, 2.0),
        ('16', 'put-4KiB-c16', 16.0, 900, 2.5, 3.0), ('64', 'put-4KiB-c64', 64.0, 905, 3.5, 4.0)]
    assert all(p.ops_per_s_se and p.ops_per_s_noise for p in curve.points)
    assert curve.knee is not None and curve.knee.reached
    assert curve.knee_point() is curve.points[2]


def test_a_setting_sweep_is_a_curve_per_workload_without_a_knee() -> None:
    profile = parse_profile(profile_doc([{'op': 'put'}], [
        {'name': 'as-is'}, {'name': 'cpus', 'sweep': {'rgw-cpus': [1, 2]}}]), SETTINGS)
    rec = record([variant(v.name, [entry('put-4KiB', ops=100.0 * (i + 1))], **v.settings)
                  for i, v in enumerate(profile.variants)], baseline='as-is')
    rec['definition'] = dump(profile)
    (curve,) = run_curves(load(Run, rec))
    assert (curve.name, curve.swept, curve.knee) == ('cpus / put-4KiB', 'rgw-cpus', None)
    assert [(p.value, p.variant, p.x, p.ops_per_s) for p in curve.points] == [
        ('1.0', 'cpus-1', 1.0, 200.0), ('2.0', 'cpus-2', 2.0, 300.0)]


def test_results_show_has_the_curve_table_with_the_knee_marked() -> None:
    text = result_to_text(sweep_run([100, 380, 900, 905]))
    lines = text.splitlines()
    start = lines.index('curve put-4KiB (concurrency swept):')
    table = lines[start + 1:start + 6]
    assert table[0].split() == ['CONCURRENCY', 'WORKLOAD', 'OPS/s', 'NOISE', 'MiB/s', 'P50',
                                'ms', 'P99', 'ms']
    assert [row.split()[1] for row in table[1:]] == ['put-4KiB-c1', 'put-4KiB-c4',
                                                     'put-4KiB-c16', 'put-4KiB-c64']
    assert [row.endswith('<- knee') for row in table[1:]] == [False, False, True, False]
    assert lines[start + 6].startswith('  knee: at 16 (put-4KiB-c16): no later point beats')


def test_the_markdown_table_has_the_curve_with_the_knee_in_bold() -> None:
    text = result_to_markdown(sweep_run([100, 380, 900, 905]))
    assert 'Curve put-4KiB (concurrency swept):' in text
    (bold,) = [line for line in text.splitlines() if line.startswith('| **')]
    assert bold.startswith('| **16** | **put-4KiB-c16** | **900** | **±')
    assert 'knee: at 16 (put-4KiB-c16)' in text


def test_results_show_says_when_no_knee_was_reached() -> None:
    text = result_to_text(sweep_run([100, 200, 400, 800]))
    assert '<- knee' not in text
    assert 'knee: not reached: each point but the last is beaten by a later one beyond the ' \
        'noise; throughput still rises at 64' in text


def test_results_show_json_has_the_curves() -> None:
    shown = shown_json(sweep_run([100, 380, 900, 905]))
    (curve,) = shown['curves']
    assert [p['workload'] for p in curve['points']] == ['put-4KiB-c1', 'put-4KiB-c4',
                                                        'put-4KiB-c16', 'put-4KiB-c64']
    # the knee names its point's value and workload, as before they came from the point
    assert curve['knee'] == {'reached': True, 'point': 2, 'value': '16',
                             'workload': 'put-4KiB-c16', 'rise': 5.0,
                             'noise': curve['knee']['noise']}
    assert [p['p50_ms'] for p in curve['points']] == [0.5, 1.5, 2.5, 3.5]
    json.dumps(shown)


def test_a_curve_as_shown_reads_back_without_the_knees_copies() -> None:
    (curve,) = run_curves(sweep_run([100, 380, 900, 905]))
    shown = dump(curve)
    assert load(Curve, shown) == curve
    # a curve shown before p50 was in it (older JSON) reads back too
    for point in shown['points']:
        del point['p50_ms']
    older = load(Curve, shown)
    assert older.knee == curve.knee and [p.p50_ms for p in older.points] == [None] * 4
    assert shown_json(sweep_run([100, 200, 400, 800]))['curves'][0]['knee'] == {
        'reached': False, 'point': None, 'value': None, 'workload': None, 'rise': None,
        'noise': None}


def test_a_run_without_a_sweep_shows_no_curve() -> None:
    rec = record([variant('as-is', [entry('put-4KiB')])], baseline='as-is')
    run = load(Run, rec)
    assert run_curves(run) == [] and 'curves' not in shown_json(run)
    assert 'curve ' not in result_to_text(run) and sweeps_section(run) == ''


# -- the CSV and the seeds layout ---------------------------------------------------------

def test_the_wide_csv_gives_each_rows_place_on_its_curve_and_the_knee() -> None:
    rows = list(csv.DictReader(io.StringIO(result_to_csv(sweep_run([100, 380, 900, 905])))))
    assert [(r['workload'], r['curve'], r['swept'], r['swept_value'], r['knee'])
            for r in rows] == [
        ('put-4KiB-c1', 'put-4KiB', 'concurrency', '1', 'no'),
        ('put-4KiB-c4', 'put-4KiB', 'concurrency', '4', 'no'),
        ('put-4KiB-c16', 'put-4KiB', 'concurrency', '16', 'yes'),
        ('put-4KiB-c64', 'put-4KiB', 'concurrency', '64', 'no'),
        ('get-4KiB', '', '', '', '')]
    # the point's throughput and latency are the row's own columns
    assert [(r['ops_per_s'], r['latency_p50_ms'], r['latency_p99_ms']) for r in rows[:2]] == [
        ('100', '0.5', '1.0'), ('380', '1.5', '2.0')]
    assert {r['setting_curve'] for r in rows} == {''}


def test_the_wide_csv_of_a_run_without_a_sweep_has_no_curve_columns() -> None:
    run = load(Run, record([variant('as-is', [entry('put-4KiB')])], baseline='as-is'))
    header = next(csv.reader(io.StringIO(result_to_csv(run))))
    assert not set(CSV_COLUMNS).intersection(header)


def test_a_row_on_a_workload_and_a_setting_sweep_has_both_in_the_csv() -> None:
    profile = parse_profile(profile_doc([{'op': 'put', 'concurrency': [1, 4]}], [
        {'name': 'as-is'}, {'name': 'cpus', 'sweep': {'rgw-cpus': [1, 2]}}]), SETTINGS)
    rec = record([variant(v.name, [entry(w.name, ops=100.0 * (i + 1) * (j + 1),
                                         concurrency=w.concurrency)
                                   for j, w in enumerate(profile.workloads)], **v.settings)
                  for i, v in enumerate(profile.variants)], baseline='as-is')
    rec['definition'] = dump(profile)
    rows = list(csv.DictReader(io.StringIO(result_to_csv(load(Run, rec)))))
    found = {(r['variant'], r['workload']): [r[c] for c in CSV_COLUMNS] for r in rows}
    # no per-second series: no noise, so every rise counts and the curves still rise
    assert found[('cpus-2', 'put-4KiB-c4')] == [
        'put-4KiB / cpus-2', 'concurrency', '4', 'no', 'cpus / put-4KiB-c4', 'rgw-cpus', '2.0']
    assert found[('as-is', 'put-4KiB-c1')] == [
        'put-4KiB / as-is', 'concurrency', '1', 'no', '', '', '']


def test_the_seeds_layout_has_the_curves_in_every_form() -> None:
    run = sweep_run([100, 380, 900, 905])
    text = seeds_to_text(run)
    lines = text.splitlines()
    start = lines.index('curve put-4KiB (concurrency swept):')
    knee_row = lines[start + 4].split()
    assert knee_row[:3] == ['16', 'put-4KiB-c16', '900'] and knee_row[3].startswith('±')
    assert knee_row[4:] == ['3.52', '2.50', '3.00', '<-', 'knee']
    assert lines[start + 6].startswith('  knee: at 16 (put-4KiB-c16)')
    markdown = seeds_to_markdown(run)
    assert '| Concurrency | Point | Ops/s | Noise | MiB/s | P50 ms | P99 ms |' in markdown
    assert '| **16** | **put-4KiB-c16** | **900** |' in markdown
    rows = list(csv.reader(io.StringIO(seeds_to_csv(run))))
    at = rows.index(['curve', 'put-4KiB', 'concurrency'])
    assert rows[at - 1] == [] and rows[at + 1] == [
        'Concurrency', 'Workload', 'Ops/s', 'Noise', 'MiB/s', 'P50 ms', 'P99 ms', 'Knee']
    assert [(r[0], r[1], r[2], r[5], r[6], r[7]) for r in rows[at + 2:]] == [
        ('1', 'put-4KiB-c1', '100', '0.500', '1.00', ''),
        ('4', 'put-4KiB-c4', '380', '1.50', '2.00', ''),
        ('16', 'put-4KiB-c16', '900', '2.50', '3.00', 'knee'),
        ('64', 'put-4KiB-c64', '905', '3.50', '4.00', '')]
    assert seeds_to_json(run)['curves'] == shown_json(run)['curves']


def test_the_seeds_layout_of_a_run_without_a_sweep_has_no_curve() -> None:
    run = load(Run, record([variant('as-is', [entry('put-4KiB')])], baseline='as-is'))
    assert 'curve' not in seeds_to_text(run) + seeds_to_markdown(run) + seeds_to_csv(run)
    assert 'curves' not in seeds_to_json(run)


# -- the panel ----------------------------------------------------------------------------

def test_the_panel_shows_the_curve_and_rings_its_knee() -> None:
    run = sweep_run([100, 380, 900, 905])
    section = sweeps_section(run)
    assert section.startswith('<section id="sweeps">')
    assert section.count('<tr class="knee">') == 1
    assert '<tr class="knee"><th scope="row">16</th><td>put-4KiB-c16</td>' in section
    assert 'put-4KiB: ops/s against requests in flight' in section
    assert 'put-4KiB: p99 latency against throughput' in section
    assert section.count('class="mark"') == 2 and 'knee at 16' in section
    assert section in run_page({}, run, None, 'token')


def test_the_panel_rings_nothing_when_no_knee_was_reached() -> None:
    section = sweeps_section(sweep_run([100, 200, 400, 800]))
    assert 'class="knee"' not in section and 'class="mark"' not in section
    assert 'knee: not reached' in section


def test_a_line_chart_keeps_the_order_given_and_marks_points() -> None:
    series = [('c', [(100.0, 1.0), (900.0, 3.0), (800.0, 9.0)])]
    by_x = line_chart('t', series)
    in_order = line_chart('t', series, in_order=True, dots=True,
                          marks=[Mark(900.0, 3.0, 'knee <16>')])
    assert by_x.count('class="point"') == 0 and in_order.count('class="point"') == 3
    assert in_order.count('class="mark"') == 1 and 'knee &lt;16&gt;' in in_order

    def coordinates(svg: str) -> List[float]:
        found = svg.split('points="')[1].split('"')[0]
        return [float(pair.split(',')[0]) for pair in found.split()]
    assert coordinates(by_x) == sorted(coordinates(by_x))
    assert coordinates(in_order) != sorted(coordinates(in_order))


# -- rate curves --------------------------------------------------------------------------

RATES_DOC = {'op': 'get', 'size': '64KiB', 'concurrency': 32, 'rates': [200, 400, 800]}


def rate_run(ops: List[float], workloads: Optional[List[Dict[str, Any]]] = None,
             wobble: Optional[float] = 0.02, profile: Optional[Profile] = None) -> Run:
    """A run of the workloads (the rate curve of RATES_DOC by default), the open-loop ones
    achieving `ops` in turn; `wobble` None: no per-second series, so no noise."""
    profile = profile or parse_profile(profile_doc(workloads or [RATES_DOC]), SETTINGS)
    entries = []
    for i, (w, o) in enumerate(zip(profile.workloads, ops)):
        extra: Dict[str, Any] = {'concurrency': w.concurrency, 'object_size': w.size}
        if w.rate is not None:
            extra.update(mode='open', rate=w.rate)
        if wobble is not None:
            extra['per_second'] = seconds([o * (1 + wobble * (t % 2 - 0.5))
                                           for t in range(10)])
        entries.append(entry(w.name, ops=o, mib=o / 16, mean=1.0 + i, p99=4.0 + 10 * i,
                             **extra))
    rec = record([variant('as-is', entries)], baseline='as-is')
    rec['definition'] = dump(profile)
    return load(Run, rec)


def test_a_rates_list_is_a_curve_of_the_offered_rate() -> None:
    (curve,) = run_curves(rate_run([199.8, 399.5, 741.2]))
    assert (curve.name, curve.swept) == ('get-64KiB', 'rate')
    assert [(p.value, p.workload, p.x, p.ops_per_s, p.p50_ms, p.p99_ms)
            for p in curve.points] == [
        ('200', 'get-64KiB@200/s', 200.0, 199.8, 1.0, 4.0),
        ('400', 'get-64KiB@400/s', 400.0, 399.5, 2.0, 14.0),
        ('800', 'get-64KiB@800/s', 800.0, 741.2, 3.0, 24.0)]
    assert all(p.ops_per_s_noise for p in curve.points)


def test_rates_given_by_the_override_are_a_curve_too() -> None:
    profile = with_overrides(parse_profile(profile_doc([{'op': 'put', 'concurrency': 8},
                                                        {'op': 'get'}]), SETTINGS),
                             rates='500,100')
    run = rate_run([99.0, 480.0, 100.0, 499.0], profile=profile)
    assert [(c.name, c.swept, [p.workload for p in c.points]) for c in run_curves(run)] == [
        ('put-4KiB', 'rate', ['put-4KiB@100/s', 'put-4KiB@500/s']),
        ('get-4KiB', 'rate', ['get-4KiB@100/s', 'get-4KiB@500/s'])]


def test_a_run_stored_before_rate_curves_has_its_curve() -> None:
    # the definition as an older module wrote it: workloads named after their rate, each
    # with its rate, no curve nor swept
    run = rate_run([199.8, 399.5, 741.2])
    assert run.definition is not None
    for doc in run.definition['workloads']:
        assert 'curve' not in doc and 'swept' not in doc
    stored = load(Run, dump(run))
    assert [c.swept for c in run_curves(stored)] == ['rate']


def test_only_workloads_alike_but_for_their_rate_are_a_curve() -> None:
    run = rate_run([100.0, 200.0, 300.0, 400.0, 500.0], workloads=[
        {'op': 'get', 'rate': 100}, {'op': 'get', 'size': '1MiB', 'rate': 200},
        {'name': 'reads', 'op': 'get', 'rate': 300},
        {'op': 'put', 'rate': 100}, {'op': 'put'}])
    # get-4KiB@100/s and reads (another name, the same load at another rate) are a curve;
    # a GET of 1 MiB is another load; a PUT at one rate, or in closed loop, is no curve
    (curve,) = run_curves(run)
    assert (curve.name, [p.workload for p in curve.points]) == (
        'get-4KiB', ['get-4KiB@100/s', 'reads'])


def test_one_rate_twice_is_no_curve() -> None:
    run = rate_run([100.0, 100.0], workloads=[{'name': 'a', 'op': 'get', 'rate': 100},
                                              {'name': 'b', 'op': 'get', 'rate': 100}])
    assert run_curves(run) == []


def rate_points(ops: Sequence[float], se: Optional[float] = 2.0) -> List[CurvePoint]:
    return [CurvePoint(value='%g' % (100 * 2 ** i), workload='w%d' % i, variant='v',
                       x=100.0 * 2 ** i, ops_per_s=o, ops_per_s_se=se,
                       ops_per_s_df=None if se is None else 30.0)
            for i, o in enumerate(ops)]


def test_a_rate_curves_knee_is_the_first_rate_not_kept_beyond_the_noise() -> None:
    knee = find_saturation(rate_points([99.5, 199.0, 396.0, 700.0, 690.0]))
    # 400 asked, 396 achieved: 4 short, within ±4.1 (2 * t(0.975, 30)); 800: 100 short
    assert knee == Knee(reached=True, point=3, rise=-100.0, noise=4.08)
    assert find_saturation(rate_points([99.5, 199.0, 396.0], se=1.0)) == Knee(
        reached=True, point=2, rise=-4.0, noise=2.04)


def test_a_rate_curve_that_keeps_every_rate_has_no_knee_reached() -> None:
    assert find_saturation(rate_points([100.0, 199.0, 401.0])) == Knee(reached=False)


def test_a_rate_curve_without_noise_has_no_knee() -> None:
    assert find_saturation(rate_points([100.0, 150.0], se=None)) is None
    run = rate_run([199.8, 399.5, 741.2], wobble=None)
    (curve,) = run_curves(run)
    assert curve.knee is None
    text = result_to_text(run)
    assert '<- knee' not in text and '  knee: ' not in text


def test_the_rate_curves_knee_in_a_run() -> None:
    (curve,) = run_curves(rate_run([199.8, 399.5, 741.2]))
    assert curve.knee is not None and curve.knee_point() is curve.points[2]
    assert curve.knee.rise == -58.8
    (kept,) = run_curves(rate_run([199.8, 399.5, 799.0]))
    assert kept.knee == Knee(reached=False)


def test_results_show_has_the_rate_curve_in_every_form() -> None:
    run = rate_run([199.8, 399.5, 741.2])
    lines = result_to_text(run).splitlines()
    start = lines.index('curve get-64KiB (open-loop rate swept):')
    assert lines[start + 1].split() == ['RATE', 'WORKLOAD', 'OPS/s', 'NOISE', 'MiB/s', 'P50',
                                        'ms', 'P99', 'ms']
    assert [row.split()[:3] for row in lines[start + 2:start + 5]] == [
        ['200', 'get-64KiB@200/s', '199.8'], ['400', 'get-64KiB@400/s', '399.5'],
        ['800', 'get-64KiB@800/s', '741.2']]
    assert [row.endswith('<- knee') for row in lines[start + 2:start + 5]] == [
        False, False, True]
    assert lines[start + 5].startswith('  knee: at 800/s (get-64KiB@800/s): the first rate '
                                       'not kept')
    assert any(line.startswith('RATE: the ops/s offered') for line in lines)
    markdown = result_to_markdown(run)
    assert '| Rate | Point | Ops/s | Noise | MiB/s | P50 ms | P99 ms |' in markdown
    assert '| **800** | **get-64KiB@800/s** | **741.2** |' in markdown
    rows = list(csv.DictReader(io.StringIO(result_to_csv(run))))
    assert [(r['workload'], r['curve'], r['swept'], r['swept_value'], r['knee'])
            for r in rows] == [
        ('get-64KiB@200/s', 'get-64KiB', 'rate', '200', 'no'),
        ('get-64KiB@400/s', 'get-64KiB', 'rate', '400', 'no'),
        ('get-64KiB@800/s', 'get-64KiB', 'rate', '800', 'yes')]
    shown = shown_json(run)['curves'][0]
    assert shown['swept'] == 'rate' and [p['x'] for p in shown['points']] == [200, 400, 800]
    assert shown['knee']['value'] == '800' and shown['knee']['rise'] == -58.8
    assert 'curve get-64KiB (open-loop rate swept):' in seeds_to_text(run)
    assert '| Rate | Point |' in seeds_to_markdown(run)
    seeds_rows = list(csv.reader(io.StringIO(seeds_to_csv(run))))
    at = seeds_rows.index(['curve', 'get-64KiB', 'rate'])
    assert seeds_rows[at + 1][0] == 'Rate' and seeds_rows[at + 4][-1] == 'knee'
    assert seeds_to_json(run)['curves'] == shown_json(run)['curves']


def test_the_panel_charts_the_rate_curve_against_the_offered_rate() -> None:
    run = rate_run([199.8, 399.5, 741.2])
    section = sweeps_section(run)
    assert 'get-64KiB: ops/s against offered rate (ops/s)' in section
    assert 'get-64KiB: p99 latency against offered rate (ops/s)' in section
    assert '<th>P50 ms</th><th>P99 ms</th>' in section
    assert '<tr class="knee"><th scope="row">800</th><td>get-64KiB@800/s</td>' in section
    # the knee ringed in both charts; the offered rate drawn beside the achieved
    assert section.count('class="mark"') == 2 and '>offered<' in section
    assert section in run_page({}, run, None, 'token')


def test_a_size_sweep_at_several_rates_is_a_curve_per_rate_and_per_size() -> None:
    profile = with_overrides(parse_profile(profile_doc(
        [{'op': 'get', 'size': ['4KiB', '1MiB']}]), SETTINGS), rates='100,200')
    run = rate_run([100.0, 200.0, 100.0, 150.0], profile=profile)
    assert [(c.name, c.swept, [p.workload for p in c.points]) for c in run_curves(run)] == [
        ('get-sizes@100/s', 'size', ['get-4KiB@100/s', 'get-1MiB@100/s']),
        ('get-sizes@200/s', 'size', ['get-4KiB@200/s', 'get-1MiB@200/s']),
        ('get-4KiB', 'rate', ['get-4KiB@100/s', 'get-4KiB@200/s']),
        ('get-1MiB', 'rate', ['get-1MiB@100/s', 'get-1MiB@200/s'])]
    rows = list(csv.DictReader(io.StringIO(result_to_csv(run))))
    # a row on a sweep and a rate curve: the sweep's in the CSV's one place for it
    assert {r['swept'] for r in rows} == {'size'}


def test_the_legend_explains_the_knees_of_the_curves_shown_only() -> None:
    rates = result_to_text(rate_run([199.8, 399.5, 741.2])).splitlines()
    assert "NOISE: half the 95 % interval of a point's ops/s." in rates
    concurrency = result_to_text(sweep_run([100, 380, 900, 905]))
    assert 'the knee: the first point no later point beats' in concurrency
    assert 'RATE: ' not in concurrency
