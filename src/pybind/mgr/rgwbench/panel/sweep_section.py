"""A run's sweeps in the panel: a table and charts per curve (results.curves), the knee of
a concurrency sweep or of a rate curve marked."""
import html
from typing import Any, List, Optional, Sequence, Tuple

from ..formatting import number
from ..results.curve_report import knee_text
from ..results.curves import run_curves
from ..results.knee import KNEE_SWEEPS, RATE, SIZE, Curve
from ..results.model import Run
from .charts import Mark, line_chart


def _escaped(value: Any) -> str:
    return html.escape('-' if value is None else str(value), quote=True)


def _xs(curve: Curve) -> List[float]:
    """Each point's x: its number, or its place when the swept values are not all numbers."""
    if all(p.x is not None for p in curve.points):
        return [float(p.x or 0.0) for p in curve.points]
    return [float(i + 1) for i in range(len(curve.points))]


def _axis(curve: Curve) -> str:
    if curve.swept in KNEE_SWEEPS:
        return 'requests in flight'
    if curve.swept == RATE:
        return 'offered rate (ops/s)'
    return 'object size (bytes)' if curve.swept == SIZE else curve.swept


def curve_table(curve: Curve) -> str:
    knee = curve.knee_point()
    rows = ''.join(
        '<tr%s><th scope="row">%s</th><td>%s</td><td class="num">%s</td><td class="num">%s</td>'
        '<td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td>'
        '</tr>' % (
            ' class="knee"' if p is knee else '', _escaped(p.value),
            _escaped(p.workload if curve.of_workloads else p.variant),
            _escaped(number(p.ops_per_s)),
            '-' if p.ops_per_s_noise is None else '±' + _escaped(number(p.ops_per_s_noise)),
            _escaped(number(p.throughput_mib_s)), _escaped(number(p.p50_ms)),
            _escaped(number(p.p99_ms)), 'knee' if p is knee else '')
        for p in curve.points)
    legend = ('<p class="legend">%s</p>' % _escaped(knee_text(curve, curve.knee))
              if curve.knee is not None else '')
    return ('<div class="scroll"><table class="curve"><thead><tr><th>%s</th><th>%s</th>'
            '<th>Ops/s</th><th>Noise</th><th>MiB/s</th><th>P50 ms</th><th>P99 ms</th><th></th>'
            '</tr></thead>'
            '<tbody>%s</tbody></table></div>%s' % (
                _escaped(_axis(curve)), 'Workload' if curve.of_workloads
                else 'Variant', rows, legend))


def _series(points: Sequence[Tuple[Optional[float], Optional[float]]]
            ) -> List[Tuple[float, float]]:
    return [(float(x), float(y)) for x, y in points if x is not None and y is not None]


def curve_charts(curve: Curve) -> List[str]:
    """Throughput and p99 against the swept value; for concurrency, p99 against throughput
    instead, the knee ringed in both of its charts; for a rate, the offered rate drawn
    beside the achieved, the knee ringed in both charts."""
    xs = _xs(curve)
    knee = curve.knee_point()
    knee_x = xs[curve.points.index(knee)] if knee is not None else None
    series = [(curve.name, _series([(x, p.ops_per_s) for x, p in zip(xs, curve.points)]))]
    if curve.swept == RATE:
        series.append(('offered', _series([(p.x, p.x) for p in curve.points])))
    charts = [line_chart(
        '%s: ops/s against %s' % (curve.name, _axis(curve)), series,
        x_label=_axis(curve), y_label='ops/s', dots=True,
        marks=[Mark(float(knee_x), float(knee.ops_per_s), 'knee')]
        if knee is not None and knee_x is not None and knee.ops_per_s is not None else [])]
    if curve.swept in KNEE_SWEEPS:
        charts.append(line_chart(
            '%s: p99 latency against throughput' % curve.name,
            [(curve.name, _series([(p.ops_per_s, p.p99_ms) for p in curve.points]))],
            x_label='ops/s', y_label='p99 ms', in_order=True, dots=True,
            marks=[Mark(float(knee.ops_per_s), float(knee.p99_ms), 'knee at %s' % knee.value)]
            if knee is not None and knee.ops_per_s is not None and knee.p99_ms is not None
            else []))
    else:
        charts.append(line_chart(
            '%s: p99 latency against %s' % (curve.name, _axis(curve)),
            [(curve.name, _series([(x, p.p99_ms) for x, p in zip(xs, curve.points)]))],
            x_label=_axis(curve), y_label='p99 ms', dots=True,
            marks=[Mark(float(knee_x), float(knee.p99_ms), 'knee at %s' % knee.value)]
            if knee is not None and knee_x is not None and knee.p99_ms is not None else []))
    return charts


def sweeps_section(run: Run) -> str:
    """The section of a run's page with its curves; empty for a run without a sweep."""
    curves = run_curves(run)
    if not curves:
        return ''
    parts = []
    for curve in curves:
        parts.append('<div class="sweep" data-curve="%s" data-swept="%s"><h3>%s</h3>%s'
                     '<div class="charts">%s</div></div>' % (
                         _escaped(curve.name), _escaped(curve.swept), _escaped(curve.name),
                         curve_table(curve),
                         ''.join('<figure class="chart-box">%s</figure>' % chart
                                 for chart in curve_charts(curve))))
    return '<section id="sweeps"><h2>Sweeps</h2>%s</section>' % ''.join(parts)
