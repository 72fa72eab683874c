"""The panel's SVG charts, parsed back as XML and measured."""
import math
import random
import re
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

from rgwbench.panel.charts import PALETTE, bar_chart, colour_for, line_chart, nice_ticks

NS = '{http://www.w3.org/2000/svg}'
NASTY = '<script>&"\'x'


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == NS + 'svg'
    return root


def elements(root: ET.Element, tag: str, cls: str) -> List[ET.Element]:
    return [e for e in root.iter(NS + tag) if e.get('class') == cls]


def texts(root: ET.Element, cls: Optional[str] = None) -> List[str]:
    """The visible text of the <text> elements (a <title> child is a tooltip, left out)."""
    return [e.text or '' for e in root.iter(NS + 'text') if cls is None or e.get('class') == cls]


def tooltip(element: ET.Element) -> Optional[str]:
    title = element.find(NS + 'title')
    return None if title is None else title.text


def bars(root: ET.Element) -> Dict[Tuple[str, str], ET.Element]:
    found = {}
    for rect in elements(root, 'rect', 'bar'):
        key = (rect.get('data-series', ''), rect.get('data-group', ''))
        assert key not in found
        found[key] = rect
    return found


def number(element: ET.Element, name: str) -> float:
    return float(element.get(name, 'nan'))


def zero_y(root: ET.Element) -> float:
    [line] = elements(root, 'line', 'zero')
    assert number(line, 'y1') == number(line, 'y2')
    return number(line, 'y1')


def points(polyline: ET.Element) -> List[Tuple[float, float]]:
    pairs = [p.split(',') for p in polyline.get('points', '').split()]
    return [(float(x), float(y)) for x, y in pairs]


def legend(root: ET.Element) -> List[Tuple[str, str]]:
    """(series name, swatch colour) of each series' legend entry, in order."""
    entries = []
    for group in elements(root, 'g', 'legend'):
        if group.get('data-series') is not None:
            swatch = group.find(NS + 'rect')
            assert swatch is not None
            entries.append((group.get('data-series', ''), swatch.get('fill', '')))
    return entries


def check_markup(svg: str, title: str) -> ET.Element:
    """What every chart has: a scalable, titled, readable and compact <svg>."""
    root = parse(svg)
    assert root.get('viewBox', '').startswith('0 0 640 ')
    assert float(root.get('viewBox', '').split()[3]) > 100
    assert root.get('width') is None and root.get('height') is None
    assert root.get('role') == 'img'
    assert root.get('aria-label') == title
    assert root.get('class') == 'chart'
    assert root[0].tag == NS + 'title' and root[0].text == title
    for text in root.iter(NS + 'text'):
        assert float(text.get('font-size', '0')) >= 11
    for element in root.iter():
        for key, value in element.attrib.items():
            if not key.startswith('data-') and not key.endswith('opacity') \
                    and key != 'aria-label':
                assert not re.search(r'\d\.\d\d', value), (element.tag, key, value)
    return root


SERIES: List[Tuple[str, Sequence[Optional[float]]]] = [
    ('tls-rgw', [-12.3, 3.1, None, 40.0]),
    ('sse-s3', [-30.5, -2.0, -8.0, 0.5]),
    ('plain', [1.0, None, 3.0, 4.0]),
]
GROUPS = ['put-4KiB', 'get-4KiB', 'put-1MiB', 'list']


@pytest.mark.parametrize('low,high,expected', [
    (0, 12.3, [0, 5, 10, 15]),
    (-7, 12, [-10, -5, 0, 5, 10, 15]),
    (12, -7, [-10, -5, 0, 5, 10, 15]),
    (0, 0, [-1, -0.5, 0, 0.5, 1]),
    (0.3, 0.7, [0.3, 0.4, 0.5, 0.6, 0.7]),
    (0, 25000, [0, 5000, 10000, 15000, 20000, 25000]),
    (-45028.5, 49929.8, [-50000, 0, 50000]),
])
def test_nice_ticks_examples(low: float, high: float, expected: List[float]) -> None:
    assert nice_ticks(low, high) == expected


def _ranges() -> List[Tuple[float, float]]:
    rng = random.Random(20240611)
    fixed = [(0.0, 1.0), (-0.003, 0.0071), (-250.0, 3.0), (1e6, 1.3e6), (-99.9, -0.1),
             (0.1, 0.2), (5.0, 5.0), (-42.0, -42.0), (0.0, 123456.0), (-1e-5, 1e-5)]
    drawn = []
    for _ in range(300):
        scale = 10 ** rng.uniform(-4, 7)
        a, b = rng.uniform(-scale, scale), rng.uniform(-scale, scale)
        drawn.append((min(a, b), max(a, b)))
    return fixed + drawn


@pytest.mark.parametrize('low,high', _ranges())
def test_nice_ticks_cover_the_range_in_round_steps(low: float, high: float) -> None:
    ticks = nice_ticks(low, high)
    assert 3 <= len(ticks) <= 6
    assert ticks[0] <= low and ticks[-1] >= high
    step = ticks[1] - ticks[0]
    for a, b in zip(ticks, ticks[1:]):
        assert math.isclose(b - a, step, rel_tol=1e-6)
    power = 10 ** math.floor(math.log10(step) + 1e-9)
    mantissa = round(step / power, 6)
    assert mantissa in (1, 2, 5), step
    if len(ticks) == 3:
        # Only when the next smaller round step would give 7 ticks or more.
        smaller = {1: 0.5, 2: 1, 5: 2}[int(mantissa)] * power
        assert math.ceil(high / smaller) - math.floor(low / smaller) + 1 >= 7
    if low <= 0 <= high:
        assert 0 in ticks
    # Tight: dropping either end tick would leave part of the range out.
    assert ticks[1] > low or low == high
    assert ticks[-2] < high or low == high


def test_nice_ticks_count_is_a_target() -> None:
    assert len(nice_ticks(0, 100, count=11)) == 11
    assert len(nice_ticks(0, 100, count=3)) == 3


@pytest.mark.parametrize('low,high,count', [
    (float('nan'), 1, 5), (0, float('inf'), 5), (0, 1, 1),
])
def test_nice_ticks_rejects(low: float, high: float, count: int) -> None:
    with pytest.raises(ValueError):
        nice_ticks(low, high, count)


def test_palette() -> None:
    assert len(set(PALETTE)) == len(PALETTE) >= 6
    assert all(re.fullmatch('#[0-9A-Fa-f]{6}', c) for c in PALETTE)
    assert [colour_for(i) for i in range(len(PALETTE))] == list(PALETTE)
    assert colour_for(len(PALETTE) + 2) == PALETTE[2]


def test_bar_chart_markup() -> None:
    check_markup(bar_chart('Change vs baseline', GROUPS, SERIES), 'Change vs baseline')
    many = [('v%d' % i, [(g - 5) * 7.77 + i for g in range(12)]) for i in range(9)]
    check_markup(bar_chart('Many', ['workload %d of many' % g for g in range(12)], many),
                 'Many')


def test_bars_are_proportional_and_on_the_right_side_of_zero() -> None:
    root = parse(bar_chart('t', GROUPS, SERIES))
    zero = zero_y(root)
    found = bars(root)
    scale = number(found['tls-rgw', 'list'], 'height') / 40.0
    assert scale > 2
    for name, values in SERIES:
        for group, value in zip(GROUPS, values):
            if value is None:
                continue
            rect = found[name, group]
            top, height = number(rect, 'y'), number(rect, 'height')
            assert height == pytest.approx(abs(value) * scale, abs=0.15)
            if value > 0:
                assert top < zero and top + height == pytest.approx(zero, abs=0.1)
            else:
                assert top == pytest.approx(zero, abs=0.1) and top + height > zero


def test_bars_sit_in_their_groups_in_series_order() -> None:
    root = parse(bar_chart('t', GROUPS, SERIES))
    found = bars(root)
    xs = [number(found['sse-s3', g], 'x') for g in GROUPS]
    assert xs == sorted(xs)
    within = [number(found[name, 'put-4KiB'], 'x') for name, _ in SERIES]
    assert within == sorted(within)
    # Every bar of the first group is left of every bar of the second.
    assert max(within) < min(number(found[name, 'get-4KiB'], 'x')
                             for name in ('tls-rgw', 'sse-s3'))


def test_missing_values_have_no_bar_but_an_na_text() -> None:
    series = SERIES + [('nan', [float('nan'), float('inf'), 2.0, None])]
    root = parse(bar_chart('t', GROUPS, series))
    expected = {(name, g) for name, values in series for g, v in zip(GROUPS, values)
                if v is not None and math.isfinite(v)}
    assert set(bars(root)) == expected
    assert len(bars(root)) == 11
    nas = elements(root, 'text', 'na')
    assert {(t.get('data-series'), t.get('data-group')) for t in nas} == {
        ('tls-rgw', 'put-1MiB'), ('plain', 'get-4KiB'), ('nan', 'put-4KiB'),
        ('nan', 'get-4KiB'), ('nan', 'list')}
    assert all(t.text == 'n/a' for t in nas)


def test_value_labels_tooltips_and_ticks() -> None:
    root = parse(bar_chart('t', GROUPS, SERIES))
    values = texts(root, 'value')
    assert '-12.3 %' in values and '+40.0 %' in values and '+0.5 %' in values
    assert len(values) == len(bars(root))
    assert tooltip(bars(root)['tls-rgw', 'put-4KiB']) == 'tls-rgw / put-4KiB: -12.3 %'
    assert tooltip(bars(root)['sse-s3', 'list']) == 'sse-s3 / list: +0.5 %'
    ticks = [t for t in root.iter(NS + 'text') if t.get('class') == 'tick']
    top_down = [t.text for t in sorted(ticks, key=lambda t: number(t, 'y'))]
    assert top_down == ['+40 %', '+20 %', '0 %', '-20 %', '-40 %']
    # The tick at 0 is on the zero line, the highest tick above it.
    by_text = {t.text: number(t, 'y') for t in ticks}
    assert by_text['0 %'] - 4 == pytest.approx(zero_y(root), abs=0.1)


def test_other_unit() -> None:
    root = parse(bar_chart('t', ['a', 'b'], [('x', [4.0, -2.0])], unit='ms'))
    assert '+4.0 ms' in texts(root, 'value') and '-2.0 ms' in texts(root, 'value')
    assert '0 ms' in texts(root, 'tick')


def test_names_are_escaped() -> None:
    title = 'A < B & "C"'
    svg = bar_chart(title, [NASTY, 'g\x01'], [(NASTY, [1.0, -1.0]), ('b', [None, 2.0])],
                    marked={(NASTY, NASTY): True})
    assert '<script>' not in svg
    root = check_markup(svg, title)
    found = bars(root)
    assert (NASTY, NASTY) in found and ('b', 'g\ufffd') in found
    assert found[NASTY, NASTY].get('data-significant') == 'yes'
    assert tooltip(found[NASTY, NASTY]) == NASTY + ' / ' + NASTY + ': +1.0 %'
    assert legend(root)[0][0] == NASTY
    assert NASTY in texts(root)
    assert title in texts(root)

    svg = line_chart(title, [(NASTY, [(0, 1), (1, 2)])], x_label='<s>', y_label='a&b')
    assert '<script>' not in svg
    root = check_markup(svg, title)
    assert [p.get('data-series') for p in elements(root, 'polyline', 'line')] == [NASTY]
    assert {'<s>', 'a&b'} <= set(texts(root, 'axis-label'))


def test_marked_bars_are_solid_and_the_others_light_and_dashed() -> None:
    marked = {('tls-rgw', 'put-4KiB'): True, ('sse-s3', 'put-4KiB'): False,
              ('plain', 'list'): True}
    root = parse(bar_chart('t', GROUPS, SERIES, marked=marked))
    found = bars(root)
    for key, rect in found.items():
        if marked.get(key):
            assert rect.get('data-significant') == 'yes'
            assert rect.get('fill-opacity') is None
            assert rect.get('stroke-dasharray') is None
        else:
            assert rect.get('data-significant') == 'no'
            assert rect.get('fill-opacity') == '0.45'
            assert rect.get('stroke-dasharray')
            assert rect.get('stroke') == rect.get('fill')
    assert "solid: outside the run's noise" in texts(root)

    unmarked = parse(bar_chart('t', GROUPS, SERIES))
    for rect in bars(unmarked).values():
        assert rect.get('fill-opacity') is None and rect.get('stroke-dasharray') is None
        assert rect.get('data-significant') is None
    assert not any('noise' in t for t in texts(unmarked))


def test_legend_and_colours_follow_the_series_names() -> None:
    series: List[Tuple[str, Sequence[Optional[float]]]] = [
        ('a', [1.0, 2.0]), ('b', [3.0, None]), ('a', [-1.0, 5.0]), ('c', [2.0, 2.0])]
    svg = bar_chart('t', ['g1', 'g2'], series)
    root = parse(svg)
    assert legend(root) == [('a', PALETTE[0]), ('b', PALETTE[1]), ('c', PALETTE[2])]
    for rect in elements(root, 'rect', 'bar'):
        assert rect.get('fill') == dict(legend(root))[rect.get('data-series', '')]
    assert len(elements(root, 'rect', 'bar')) == 7


def test_long_group_names_are_cut_with_the_full_name_in_a_tooltip() -> None:
    long = 'a-workload-with-a-name-far-too-long-to-fit-under-its-bars'
    groups = [long + str(i) for i in range(8)] + ['short']
    root = parse(bar_chart('t', groups, [('x', [1.0] * 9), ('y', [2.0] * 9)]))
    labels = elements(root, 'text', 'group')
    assert [t.get('data-group') for t in labels] == groups
    for label, group in zip(labels, groups):
        assert tooltip(label) == group
        shown = label.text or ''
        if group == 'short':
            assert shown == 'short'
        else:
            assert shown.endswith('\u2026') and len(shown) < len(group)
            assert group.startswith(shown[:-1])

    few = parse(bar_chart('t', ['put-4KiB', 'get-4KiB'], [('x', [1.0, 2.0])]))
    assert texts(few, 'group') == ['put-4KiB', 'get-4KiB']


@pytest.mark.parametrize('groups,series', [
    ([], []),
    ([], [('a', [])]),
    (['g'], []),
    (['g', 'h'], [('a', [None, None]), ('b', [None, None])]),
    (['g'], [('a', [float('nan')])]),
])
def test_bar_chart_without_data(groups: List[str],
                                series: List[Tuple[str, List[Optional[float]]]]) -> None:
    root = check_markup(bar_chart('Nothing & more', groups, series), 'Nothing & more')
    assert 'no data' in texts(root)
    assert not bars(root)


def test_all_zero_values_span_minus_one_to_one() -> None:
    root = parse(bar_chart('t', ['a', 'b'], [('x', [0.0, 0.0])]))
    ticks = elements(root, 'text', 'tick')
    top_down = [t.text for t in sorted(ticks, key=lambda t: number(t, 'y'))]
    assert top_down[0] == '+1.0 %' and top_down[-1] == '-1.0 %' and '0 %' in top_down
    for rect in bars(root).values():
        assert number(rect, 'height') == 0 and number(rect, 'y') == zero_y(root)


def test_values_and_groups_must_match() -> None:
    with pytest.raises(ValueError):
        bar_chart('t', ['a', 'b'], [('x', [1.0])])


def test_line_chart_points_and_scale() -> None:
    series = [('a', [(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)]),
              ('gone', []),
              ('b', [(0.0, 5.0), (3.0, 5.0)])]
    root = check_markup(line_chart('Throughput', series), 'Throughput')
    lines = elements(root, 'polyline', 'line')
    assert [p.get('data-series') for p in lines] == ['a', 'b']
    assert [p.get('stroke') for p in lines] == [PALETTE[0], PALETTE[2]]
    assert legend(root) == [('a', PALETTE[0]), ('b', PALETTE[2])]
    a, b = points(lines[0]), points(lines[1])
    assert len(a) == 3 and len(b) == 2
    assert a[0][0] < a[1][0] < a[2][0]
    assert a[1][1] < a[2][1] < a[0][1]
    assert b[0][1] == b[1][1] and b[0][1] > a[0][1]

    x_axis = [e for e in elements(root, 'line', 'axis') if e.get('data-axis') == 'x'][0]
    y_axis = [e for e in elements(root, 'line', 'axis') if e.get('data-axis') == 'y'][0]
    left, right, base = number(x_axis, 'x1'), number(x_axis, 'x2'), number(x_axis, 'y1')
    assert a[0][0] == left and b[1][0] == right
    top = number(y_axis, 'y1')
    # y: 0 at the axis, linear, and the top of the axis is a round value >= 20.
    per_unit = (base - a[0][1]) / 10.0
    assert base - a[1][1] == pytest.approx(20 * per_unit, abs=0.15)
    assert base - b[0][1] == pytest.approx(5 * per_unit, abs=0.15)
    assert (base - top) / per_unit == pytest.approx(20, abs=0.1)
    assert {'0', '5', '10', '15', '20'} <= set(texts(root, 'tick'))
    assert {'s', 'ops/s'} == set(texts(root, 'axis-label'))


def test_line_chart_sorts_by_time_and_abbreviates_large_values() -> None:
    root = parse(line_chart('t', [('a', [(2.0, 25000.0), (0.0, 1.0), (1.0, 12000.0)])],
                            x_label='seconds', y_label='bytes/s'))
    [line] = elements(root, 'polyline', 'line')
    xs = [x for x, _ in points(line)]
    assert xs == sorted(xs)
    assert {'5k', '10k', '25k'} <= set(texts(root, 'tick'))
    assert {'seconds', 'bytes/s'} == set(texts(root, 'axis-label'))


def test_line_chart_ignores_non_finite_numbers() -> None:
    nan, inf = float('nan'), float('inf')
    series = [('a', [(0.0, 1.0), (1.0, nan), (nan, 2.0), (2.0, inf), (3.0, 4.0)]),
              ('only-nan', [(nan, nan), (1.0, -inf)])]
    svg = line_chart('t', series)
    root = check_markup(svg, 't')
    lines = elements(root, 'polyline', 'line')
    assert [p.get('data-series') for p in lines] == ['a']
    assert len(points(lines[0])) == 2
    assert 'nan' not in svg.lower() and 'inf' not in svg.lower()


def test_line_chart_single_point_gets_a_marker() -> None:
    root = parse(line_chart('t', [('a', [(5.0, 3.0)])]))
    assert len(points(elements(root, 'polyline', 'line')[0])) == 1
    assert [c.get('data-series') for c in elements(root, 'circle', 'point')] == ['a']


@pytest.mark.parametrize('series', [
    [],
    [('a', [])],
    [('a', [(float('nan'), 1.0)]), ('b', [(1.0, float('inf'))])],
])
def test_line_chart_without_data(series: List[Tuple[str, List[Tuple[float, float]]]]) -> None:
    root = check_markup(line_chart('Nothing', series), 'Nothing')
    assert 'no data' in texts(root)
    assert not elements(root, 'polyline', 'line')
