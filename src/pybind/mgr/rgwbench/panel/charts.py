"""SVG charts of the web panel, drawn on the server as strings.

`bar_chart` draws signed values (the % change of each variant against the
baseline, per workload) as grouped bars around a zero line; `line_chart` draws
values over time (the per-second throughput of each variant). The SVGs are
meant to be inlined into an HTML page: they have a viewBox and no fixed size,
their text is drawn in the page's colour (`currentColor`), every text taken
from the data is escaped, and series colours come from the colour-blind-friendly
Okabe-Ito palette. Only the standard library is used.
"""
import html
import math
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

# Okabe-Ito without its black, which would vanish on a dark page; yellow last,
# as it has the least contrast on a light one.
PALETTE: Tuple[str, ...] = (
    '#0072B2',
    '#E69F00',
    '#009E73',
    '#D55E00',
    '#CC79A7',
    '#56B4E9',
    '#F0E442',
)

WIDTH = 640.0
MARGIN = 12.0
TITLE_FONT = 15
LEGEND_FONT = 12
GROUP_FONT = 12
SMALL_FONT = 11
# Average advance of a sans-serif character, as a fraction of the font size.
CHAR_WIDTH = 0.6
ELLIPSIS = '\u2026'
SIGNIFICANT_NOTE = "solid: outside the run's noise"
NOT_SIGNIFICANT_NOTE = 'light, dashed: within it'
BAR_PLOT_HEIGHT = 220.0
LINE_PLOT_HEIGHT = 240.0
LIGHT_OPACITY = '0.45'
DASHES = '3 2'

_NOT_XML = re.compile('[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]')

# Attribute values: str (escaped) or a number (rounded to 1 decimal).
Attr = Tuple[str, object]
Attrs = Sequence[Attr]


def colour_for(index: int) -> str:
    """The palette's colour for the index-th series (the palette repeats)."""
    return PALETTE[index % len(PALETTE)]


def nice_ticks(low: float, high: float, count: int = 5) -> List[float]:
    """About `count` evenly spaced round values (steps of 1, 2 or 5 x 10^k) covering [low, high].

    The first tick is <= low and the last >= high; 0 is a tick whenever the
    range includes it. Of the round steps, the one giving the number of ticks
    closest to `count` is taken, the tighter fit on a tie: 4 to 6 ticks for the
    default 5, or 3 where no round step gives 4 to 6 (-45000..49000 gets
    -50000, 0, 50000). An empty range (low == high) is widened around its value
    (0 becomes -1..1).
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError('ticks need a finite range, not %r..%r' % (low, high))
    if count < 2:
        raise ValueError('at least 2 ticks are needed, not %d' % count)
    if low > high:
        low, high = high, low
    if low == high:
        pad = abs(low) / 2 if low else 1.0
        low, high = low - pad, high + pad
    exponent = math.floor(math.log10((high - low) / (count - 1)))
    best: Optional[Tuple[Tuple[int, float], int, int, float]] = None
    for power in (exponent - 1, exponent, exponent + 1):
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0 ** power
            first = math.floor(low / step + 1e-9)
            last = math.ceil(high / step - 1e-9)
            rank = (abs(last - first + 1 - count), (last - first) * step)
            if best is None or rank < best[0]:
                best = (rank, first, last, step)
    assert best is not None
    _, first, last, step = best
    return [float('%.12g' % (i * step)) for i in range(first, last + 1)]


def bar_chart(title: str,
              groups: Sequence[str],
              series: Sequence[Tuple[str, Sequence[Optional[float]]]],
              unit: str = '%',
              marked: Optional[Dict[Tuple[str, str], bool]] = None,
              ) -> str:
    """Grouped bar chart of signed values (typically % change vs baseline) around a zero line.

    `series` holds one value per group for each series (None, NaN or an
    infinity: missing, drawn as "n/a"). With `marked`, bars whose (series,
    group) is marked True are solid and the others light with a dashed
    outline; without it, every bar is solid. Each bar is labelled with its
    value unless the bars are too narrow (under 11 units) to hold a readable
    label; its tooltip always has it. A series with a number of values other
    than the number of groups is a ValueError.
    """
    for name, values in series:
        if len(values) != len(groups):
            raise ValueError('series %r has %d values for %d groups'
                             % (name, len(values), len(groups)))
    rows = [[_finite(v) for v in values] for _, values in series]
    present = [v for row in rows for v in row if v is not None]
    if not groups or not present:
        return _no_data(title)

    ticks = nice_ticks(min(0.0, min(present)), max(0.0, max(present)))
    decimals = _decimals(ticks[1] - ticks[0])
    tick_labels = [_signed(t, decimals, unit) if t else _signed(0, 0, unit) for t in ticks]
    value_labels = [[None if v is None else _signed(v, 1, unit) for v in row] for row in rows]
    colours = _colours([name for name, _ in series])

    left = MARGIN + max(_width(t, SMALL_FONT) for t in tick_labels) + 8
    right = WIDTH - MARGIN
    group_width = (right - left) / len(groups)
    fitting_chars = int((group_width - 6) / (GROUP_FONT * CHAR_WIDTH))
    horizontal_groups = fitting_chars >= 10 or all(len(g) <= fitting_chars for g in groups)
    if horizontal_groups:
        group_labels = [_fit(g, max(2, fitting_chars)) for g in groups]
        groups_height = GROUP_FONT + 12.0
    else:
        group_labels = [_fit(g, 18) for g in groups]
        reach = max(_width(g, GROUP_FONT) for g in group_labels) * math.sqrt(0.5)
        groups_height = reach + GROUP_FONT + 8
        first_reach = _width(group_labels[0], GROUP_FONT) * math.sqrt(0.5)
        left = max(left, MARGIN + first_reach - group_width / 2 + 4)
        group_width = (right - left) / len(groups)
    slot = group_width * 0.8 / len(series)
    bar_width = min(slot * 0.85, 56.0)
    with_values = slot >= SMALL_FONT
    longest_value = max(_width(t, SMALL_FONT) for row in value_labels for t in row if t)
    vertical_values = slot < longest_value + 4
    if not with_values:
        label_room = 8.0
    elif vertical_values:
        label_room = longest_value + 8
    else:
        label_room = SMALL_FONT + 6.0
    vertical_na = slot < _width('n/a', SMALL_FONT) + 4
    na_room = _width('n/a', SMALL_FONT) + 8 if vertical_na else SMALL_FONT + 6.0
    room_above = max(8.0, label_room if max(present) > 0 else 0.0,
                     na_room if len(present) < len(groups) * len(series) else 0.0)
    room_below = label_room if min(present) < 0 else 8.0

    body = [_title_text(title)]
    entries = [_LegendEntry(name, [('fill', colour)], [('data-series', name)])
               for name, colour in colours.items()]
    if marked is not None:
        entries.append(_LegendEntry(SIGNIFICANT_NOTE, [('fill', 'currentColor')],
                                    [('data-note', 'significant')]))
        entries.append(_LegendEntry(
            NOT_SIGNIFICANT_NOTE,
            [('fill', 'currentColor'), ('fill-opacity', LIGHT_OPACITY), ('stroke', 'currentColor'),
             ('stroke-dasharray', DASHES)],
            [('data-note', 'not-significant')]))
    legend, legend_bottom = _legend(entries, 34.0)
    body.extend(legend)

    top = legend_bottom + 6 + room_above
    bottom = top + BAR_PLOT_HEIGHT
    low, high = ticks[0], ticks[-1]

    def y_of(value: float) -> float:
        return round(top + (high - value) / (high - low) * BAR_PLOT_HEIGHT, 1)

    zero = y_of(0.0)
    for tick, label in zip(ticks, tick_labels):
        y = y_of(tick)
        if tick != 0:
            body.append(_element('line', [('class', 'grid'), ('x1', left), ('y1', y),
                                          ('x2', right), ('y2', y), ('stroke', 'currentColor'),
                                          ('stroke-opacity', '0.15')]))
        body.append(_text(label, left - 6, y + 4, SMALL_FONT,
                          [('class', 'tick'), ('text-anchor', 'end')]))

    for s, (name, _) in enumerate(series):
        colour = colours[name]
        for g, group in enumerate(groups):
            centre = left + group_width * (g + 0.1) + slot * (s + 0.5)
            value = rows[s][g]
            where: List[Attr] = [('data-series', name), ('data-group', group)]
            if value is None:
                body.append(_slot_text('n/a', centre, zero - 4, vertical=vertical_na,
                                       upwards=True, attrs=[('class', 'na')] + where,
                                       tooltip='%s / %s: n/a' % (name, group)))
                continue
            label = value_labels[s][g] or ''
            end = y_of(value)
            bar: List[Attr] = [('class', 'bar')] + where
            solid = True
            if marked is not None:
                solid = bool(marked.get((name, group), False))
                bar.append(('data-significant', 'yes' if solid else 'no'))
            bar += [('x', centre - bar_width / 2), ('y', min(zero, end)),
                    ('width', bar_width), ('height', abs(zero - end)), ('fill', colour)]
            if not solid:
                bar += [('fill-opacity', LIGHT_OPACITY), ('stroke', colour),
                        ('stroke-width', 1), ('stroke-dasharray', DASHES)]
            body.append(_element('rect', bar, _tooltip('%s / %s: %s' % (name, group, label))))
            upwards = value >= 0
            if with_values:
                body.append(_slot_text(label, centre, end - 4 if upwards else end + 4,
                                       vertical=vertical_values, upwards=upwards,
                                       attrs=[('class', 'value')] + where))

    body.append(_element('line', [('class', 'zero'), ('x1', left), ('y1', zero), ('x2', right),
                                  ('y2', zero), ('stroke', 'currentColor'),
                                  ('stroke-width', 1.5)]))

    labels_top = bottom + room_below + 4
    for g, (group, label) in enumerate(zip(groups, group_labels)):
        centre = left + group_width * (g + 0.5)
        attrs: List[Attr] = [('class', 'group'), ('data-group', group)]
        if horizontal_groups:
            body.append(_text(label, centre, labels_top + GROUP_FONT, GROUP_FONT,
                              attrs + [('text-anchor', 'middle')], tooltip=group))
        else:
            x, y = centre + 4, labels_top + 4
            body.append(_text(label, x, y, GROUP_FONT,
                              attrs + [('text-anchor', 'end'),
                                       ('transform', 'rotate(-45 %s %s)' % (_num(x), _num(y)))],
                              tooltip=group))
    return _svg(title, labels_top + groups_height, body)


class Mark(NamedTuple):
    """A point a line chart marks: a ring around it and a label beside it."""
    x: float
    y: float
    label: str


def line_chart(title: str,
               series: Sequence[Tuple[str, Sequence[Tuple[float, float]]]],
               x_label: str = 's', y_label: str = 'ops/s', *,
               in_order: bool = False, dots: bool = False,
               marks: Sequence[Mark] = ()) -> str:
    """Lines over time (per-second throughput of each variant), or a curve.

    Points with a NaN or infinite coordinate are left out, and so are series
    left without points. Both axes start at 0 (or below, for negative data);
    the x axis ends at the largest x, the y axis at a round value above the
    largest y. The points are joined by x, or as given (`in_order`: latency
    against throughput, whose throughput may fall back); `dots` draws each point,
    `marks` rings the points they name (a sweep's knee).
    """
    colours = _colours([name for name, _ in series])
    lines: List[Tuple[str, List[Tuple[float, float]]]] = []
    for name, points in series:
        finite = [(float(x), float(y)) for x, y in points
                  if math.isfinite(x) and math.isfinite(y)]
        kept = finite if in_order else sorted(finite, key=lambda p: p[0])
        if kept:
            lines.append((name, kept))
    if not lines:
        return _no_data(title)

    xs = [x for _, points in lines for x, _ in points]
    ys = [y for _, points in lines for _, y in points]
    x_low, x_high = min(0.0, min(xs)), max(0.0, max(xs))
    if x_high == x_low:
        x_high = x_low + 1
    margin = (x_high - x_low) * 1e-9
    x_ticks = [t for t in nice_ticks(x_low, x_high, 6) if x_low - margin <= t <= x_high + margin]
    y_low, y_high = min(0.0, min(ys)), max(0.0, max(ys))
    if y_high == y_low:
        y_high = y_low + 1
    y_ticks = nice_ticks(y_low, y_high)
    y_low, y_high = y_ticks[0], y_ticks[-1]
    x_texts = _plain_labels(x_ticks)
    y_texts = _plain_labels(y_ticks)

    left = max(44.0, MARGIN + max(_width(t, SMALL_FONT) for t in y_texts) + 8)
    right = WIDTH - MARGIN - 8
    body = [_title_text(title)]
    drawn = {name for name, _ in lines}
    legend, legend_bottom = _legend(
        [_LegendEntry(name, [('fill', colour)], [('data-series', name)])
         for name, colour in colours.items() if name in drawn], 34.0)
    body.extend(legend)
    top = legend_bottom + 24
    bottom = top + LINE_PLOT_HEIGHT

    def x_of(value: float) -> float:
        return round(left + (value - x_low) / (x_high - x_low) * (right - left), 1)

    def y_of(value: float) -> float:
        return round(top + (y_high - value) / (y_high - y_low) * LINE_PLOT_HEIGHT, 1)

    for tick, label in zip(y_ticks, y_texts):
        y = y_of(tick)
        if tick != y_low:
            body.append(_element('line', [('class', 'grid'), ('x1', left), ('y1', y),
                                          ('x2', right), ('y2', y), ('stroke', 'currentColor'),
                                          ('stroke-opacity', '0.15')]))
        body.append(_text(label, left - 6, y + 4, SMALL_FONT,
                          [('class', 'tick'), ('text-anchor', 'end')]))
    for tick, label in zip(x_ticks, x_texts):
        body.append(_text(label, x_of(tick), bottom + 16, SMALL_FONT,
                          [('class', 'tick'), ('text-anchor', 'middle')]))
    axis: List[Attr] = [('stroke', 'currentColor'), ('stroke-width', 1)]
    body.append(_element('line', [('class', 'axis'), ('data-axis', 'x'), ('x1', left),
                                  ('y1', bottom), ('x2', right), ('y2', bottom)] + axis))
    body.append(_element('line', [('class', 'axis'), ('data-axis', 'y'), ('x1', left),
                                  ('y1', top), ('x2', left), ('y2', bottom)] + axis))
    if y_low < 0:
        body.append(_element('line', [('class', 'zero'), ('x1', left), ('y1', y_of(0.0)),
                                      ('x2', right), ('y2', y_of(0.0))] + axis))
    body.append(_text(y_label, MARGIN, top - 10, SMALL_FONT, [('class', 'axis-label')]))
    body.append(_text(x_label, right, bottom + 32, SMALL_FONT,
                      [('class', 'axis-label'), ('text-anchor', 'end')]))

    for name, points in lines:
        colour = colours[name]
        coordinates = ' '.join('%s,%s' % (_num(x_of(x)), _num(y_of(y))) for x, y in points)
        body.append(_element('polyline', [('class', 'line'), ('data-series', name),
                                          ('points', coordinates), ('fill', 'none'),
                                          ('stroke', colour), ('stroke-width', 2),
                                          ('stroke-linejoin', 'round')], _tooltip(name)))
        for x, y in points if dots or len(points) == 1 else []:
            body.append(_element('circle', [('class', 'point'), ('data-series', name),
                                            ('cx', x_of(x)), ('cy', y_of(y)), ('r', 3),
                                            ('fill', colour)]))
    for mark in marks:
        if not (math.isfinite(mark.x) and math.isfinite(mark.y)):
            continue
        body.append(_element('circle', [('class', 'mark'), ('cx', x_of(mark.x)),
                                        ('cy', y_of(mark.y)), ('r', 7), ('fill', 'none'),
                                        ('stroke', 'currentColor'), ('stroke-width', 2)],
                             _tooltip(mark.label)))
        body.append(_text(mark.label, x_of(mark.x), y_of(mark.y) - 12, SMALL_FONT,
                          [('class', 'mark-label'), ('text-anchor', 'middle')]))
    return _svg(title, bottom + 42, body)


class _LegendEntry(NamedTuple):
    label: str
    swatch: Attrs
    item: Attrs


def _finite(value: Optional[float]) -> Optional[float]:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _colours(names: Sequence[str]) -> Dict[str, str]:
    """Each distinct name's colour, in order of first appearance."""
    colours: Dict[str, str] = {}
    for name in names:
        if name not in colours:
            colours[name] = colour_for(len(colours))
    return colours


def _clean(text: str) -> str:
    """Text XML 1.0 can hold: control characters and lone surrogates become U+FFFD."""
    return _NOT_XML.sub('\ufffd', text)


def _escape(text: str) -> str:
    return html.escape(_clean(text), quote=True)


def _num(value: float) -> str:
    text = '%.1f' % value
    if text.endswith('.0'):
        text = text[:-2]
    return '0' if text == '-0' else text


def _width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _fit(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    return text[:max(1, chars - 1)] + ELLIPSIS


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def _signed(value: float, decimals: int, unit: str) -> str:
    text = '%.*f' % (decimals, value)
    if float(text) == 0:
        text = '%.*f' % (decimals, 0.0)
    elif value > 0:
        text = '+' + text
    return text + ' ' + unit if unit else text


def _plain_labels(ticks: Sequence[float]) -> List[str]:
    """Tick labels, in thousands (k), millions (M) or billions (G) when the ticks are large."""
    largest = max(abs(t) for t in ticks)
    scale, suffix = 1.0, ''
    for threshold, divisor, letter in ((1e9, 1e9, 'G'), (1e6, 1e6, 'M'), (1e4, 1e3, 'k')):
        if largest >= threshold:
            scale, suffix = divisor, letter
            break
    decimals = _decimals((ticks[1] - ticks[0]) / scale) if len(ticks) > 1 else 0
    labels = []
    for tick in ticks:
        text = '%.*f' % (decimals, tick / scale)
        labels.append('0' if float(text) == 0 else text + suffix)
    return labels


def _attrs(attrs: Attrs) -> str:
    parts = []
    for key, value in attrs:
        if isinstance(value, str):
            parts.append(' %s="%s"' % (key, _escape(value)))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(' %s="%s"' % (key, _num(value)))
        else:
            raise TypeError('attribute %s: %r is neither a text nor a number' % (key, value))
    return ''.join(parts)


def _element(tag: str, attrs: Attrs, content: str = '') -> str:
    """One element; `content` is markup, already escaped."""
    if content:
        return '<%s%s>%s</%s>' % (tag, _attrs(attrs), content, tag)
    return '<%s%s/>' % (tag, _attrs(attrs))


def _tooltip(text: str) -> str:
    return '<title>%s</title>' % _escape(text)


def _text(text: str, x: float, y: float, size: int, attrs: Attrs = (),
          tooltip: Optional[str] = None) -> str:
    content = _escape(text) + (_tooltip(tooltip) if tooltip is not None else '')
    return _element('text', [('x', x), ('y', y), ('font-size', size), ('fill', 'currentColor')]
                    + list(attrs), content)


def _slot_text(text: str, x: float, y: float, vertical: bool, upwards: bool, attrs: Attrs,
               tooltip: Optional[str] = None) -> str:
    """A small text starting at (x, y) and running away from a bar's end, up or down."""
    if not vertical:
        return _text(text, x, y if upwards else y + SMALL_FONT - 2, SMALL_FONT,
                     list(attrs) + [('text-anchor', 'middle')], tooltip)
    x += SMALL_FONT * 0.35
    return _text(text, x, y, SMALL_FONT,
                 list(attrs) + [('text-anchor', 'start' if upwards else 'end'),
                                ('transform', 'rotate(-90 %s %s)' % (_num(x), _num(y)))],
                 tooltip)


def _title_text(title: str) -> str:
    chars = int((WIDTH - 2 * MARGIN) / (TITLE_FONT * CHAR_WIDTH))
    return _text(_fit(title, chars), MARGIN, 22, TITLE_FONT,
                 [('class', 'chart-title'), ('font-weight', 'bold')])


def _legend(entries: Sequence[_LegendEntry], top: float) -> Tuple[List[str], float]:
    """The entries in rows that wrap at the chart's width; the markup and the bottom of the rows."""
    markup: List[str] = []
    x, y = MARGIN, top
    for entry in entries:
        label = _fit(entry.label, 32)
        width = 16 + _width(label, LEGEND_FONT) + 14
        if x > MARGIN and x + width > WIDTH - MARGIN:
            x, y = MARGIN, y + 18
        swatch = _element('rect', [('x', x), ('y', y + 1), ('width', 12), ('height', 12)]
                          + list(entry.swatch))
        text = _text(label, x + 16, y + 11, LEGEND_FONT,
                     tooltip=entry.label if label != entry.label else None)
        markup.append(_element('g', [('class', 'legend')] + list(entry.item), swatch + text))
        x += width
    return markup, (y + 18 if entries else top)


def _no_data(title: str) -> str:
    return _svg(title, 110.0, [
        _title_text(title),
        _text('no data', WIDTH / 2, 70, 13, [('class', 'no-data'), ('text-anchor', 'middle')]),
    ])


def _svg(title: str, height: float, body: Sequence[str]) -> str:
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" role="img"'
            ' aria-label="%s" class="chart" font-family="sans-serif">%s%s</svg>'
            % (_num(WIDTH), _num(math.ceil(height)), _escape(title), _tooltip(title),
               ''.join(body)))
