"""A run's curves (results.curves) as `results show` prints them: a table per curve, the
knee's row marked; and each point's place on its curves as the wide CSV's columns."""
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..formatting import number, table
from .knee import KNEE_SWEEPS, PER_RGW, RATE, SIZE, Curve, Knee

KNEE_MARK = '<- knee'
#: what the wide CSV adds to each row of a run with a sweep: the workload sweep the row is
#: a point of (its curve, what it sweeps, the row's value there, ``yes`` at the knee and
#: ``no`` elsewhere on a concurrency or rate curve; a point of a sweep and of a rate curve
#: too, the sweep's), then the setting sweep's
CSV_COLUMNS = ('curve', 'swept', 'swept_value', 'knee', 'setting_curve', 'setting_swept',
               'setting_value')
#: a curve's columns after the swept value, in Markdown and the seeds layout's CSV
COLUMNS = ['Ops/s', 'Noise', 'MiB/s', 'P50 ms', 'P99 ms']


@dataclass(frozen=True)
class CurveTable:
    """A curve's table as each form prints it: a row per point (its swept value, its
    workload or variant, ops/s, their noise, MiB/s, p50 and p99 latency), and the row of
    the knee (None: the curve has no knee, or did not reach it)."""
    rows: List[List[str]]
    knee: Optional[int]


def _axis(curve: Curve) -> str:
    if curve.swept in KNEE_SWEEPS:
        return 'CONCURRENCY'
    if curve.swept == RATE:
        return 'RATE'
    return 'SIZE' if curve.swept == SIZE else curve.swept.upper()


def curve_table(curve: Curve) -> CurveTable:
    rows = [[p.value, p.workload if curve.of_workloads else p.variant, number(p.ops_per_s),
             '-' if p.ops_per_s_noise is None else '±%s' % number(p.ops_per_s_noise),
             number(p.throughput_mib_s), number(p.p50_ms), number(p.p99_ms)]
            for p in curve.points]
    return CurveTable(rows, None if curve.knee is None else curve.knee.point)


def _saturation_text(curve: Curve, knee: Knee) -> str:
    at = curve.knee_point()
    if not knee.reached or at is None:
        return ('knee: not reached: the achieved ops/s kept every offered rate within the '
                'noise, up to %s/s' % curve.points[-1].value)
    return ('knee: at %s/s (%s): the first rate not kept: its achieved ops/s falls short of '
            'it by more than the noise (%+.0f ops/s against ±%.0f)' % (
                at.value, at.workload, knee.rise or 0.0, knee.noise or 0.0))


def knee_text(curve: Curve, knee: Knee) -> str:
    if curve.swept == RATE:
        return _saturation_text(curve, knee)
    at = curve.knee_point()
    if not knee.reached or at is None:
        return ('knee: not reached: each point but the last is beaten by a later one beyond '
                'the noise; throughput still rises at %s' % curve.points[-1].value)
    return ('knee: at %s (%s): no later point beats its ops/s by more than the noise (at '
            'most %+.0f ops/s against ±%.0f)' % (at.value, at.workload, knee.rise or 0.0,
                                                 knee.noise or 0.0))


def curve_lines(curve: Curve) -> List[str]:
    what = ('concurrency per RGW' if curve.swept == PER_RGW
            else 'open-loop rate' if curve.swept == RATE else curve.swept)
    found = curve_table(curve)
    lines = ['curve %s (%s swept):' % (curve.name, what),
             table([_axis(curve), 'WORKLOAD' if curve.of_workloads else 'VARIANT', 'OPS/s',
                    'NOISE', 'MiB/s', 'P50 ms', 'P99 ms', ''],
                   [row + [KNEE_MARK if i == found.knee else '']
                    for i, row in enumerate(found.rows)], '  ')]
    if curve.knee is not None:
        lines.append('  ' + knee_text(curve, curve.knee))
    return lines


def curves_markdown(curves: Sequence[Curve], escape: Callable[[Any], str]) -> List[str]:
    """The curves as Markdown tables, the knee's row in bold; `escape` makes a text safe."""
    lines: List[str] = []
    for curve in curves:
        found = curve_table(curve)
        lines += ['', 'Curve %s (%s swept):' % (escape(curve.name), escape(curve.swept)), '',
                  '| %s |' % ' | '.join([_axis(curve).title(), 'Point'] + COLUMNS),
                  '| --- | --- |' + ' ---: |' * len(COLUMNS)]
        for i, row in enumerate(found.rows):
            cells = [escape(c) for c in row]
            if i == found.knee:
                cells = ['**%s**' % c for c in cells]
            lines.append('| ' + ' | '.join(cells) + ' |')
        if curve.knee is not None:
            lines += ['', escape(knee_text(curve, curve.knee))]
    return lines


def curves_text(curves: Sequence[Curve]) -> List[str]:
    """The curves' tables, each after an empty line; none without curves."""
    lines: List[str] = []
    for curve in curves:
        lines.append('')
        lines.extend(curve_lines(curve))
    if curves:
        lines.append('NOISE: half the 95 % interval of a point\'s ops/s' + (
            '; the knee: the first point no later point beats by more than their noise '
            'together.' if any(c.of_concurrency for c in curves) else '.'))
        if any(c.swept == RATE for c in curves):
            lines.append('RATE: the ops/s offered (open loop), OPS/s what was achieved; its '
                         'knee: the first rate whose achieved ops/s falls short of it by more '
                         'than its noise.')
    return lines


def curves_csv_rows(curves: Sequence[Curve]) -> List[List[str]]:
    """The curves as the seeds layout's CSV tables, each after an empty row: a row naming
    the curve and what it sweeps, the headers, a row per point (``knee`` last in the
    knee's)."""
    rows: List[List[str]] = []
    for curve in curves:
        found = curve_table(curve)
        rows += [[], ['curve', curve.name, curve.swept],
                 [_axis(curve).title(), 'Workload' if curve.of_workloads else 'Variant']
                 + COLUMNS + ['Knee']]
        rows += [row + ['knee' if i == found.knee else ''] for i, row in enumerate(found.rows)]
    return rows


def point_columns(curves: Sequence[Curve]) -> Dict[Tuple[str, str], List[str]]:
    """The CSV_COLUMNS of each point of the curves, by its variant and workload."""
    found: Dict[Tuple[str, str], List[str]] = {}
    for curve in curves:
        knee = curve.knee_point()
        for point in curve.points:
            cells = found.setdefault((point.variant, point.workload), [''] * len(CSV_COLUMNS))
            if curve.of_workloads and not (curve.swept == RATE and cells[0]):
                cells[:4] = [curve.name, curve.swept, point.value,
                             '' if curve.knee is None else 'yes' if point is knee else 'no']
            else:
                cells[4:] = [curve.name, curve.swept, point.value]
    return found
