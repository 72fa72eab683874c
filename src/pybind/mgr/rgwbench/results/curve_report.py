"""A run's curves (results.curves) as `results show` prints them: a table per curve, the
knee's row marked."""
from typing import Any, Callable, List, Sequence

from ..formatting import number, table
from .knee import KNEE_SWEEPS, PER_RGW, SIZE, Curve, Knee

KNEE_MARK = '<- knee'


def _axis(curve: Curve) -> str:
    if curve.swept in KNEE_SWEEPS:
        return 'CONCURRENCY'
    return 'SIZE' if curve.swept == SIZE else curve.swept.upper()


def knee_text(curve: Curve, knee: Knee) -> str:
    if not knee.reached:
        return ('knee: not reached: each point but the last is beaten by a later one beyond '
                'the noise; throughput still rises at %s' % curve.points[-1].value)
    return ('knee: at %s (%s): no later point beats its ops/s by more than the noise (at '
            'most %+.0f ops/s against ±%.0f)' % (knee.value, knee.workload, knee.rise or 0.0,
                                                 knee.noise or 0.0))


def curve_lines(curve: Curve) -> List[str]:
    what = 'concurrency per RGW' if curve.swept == PER_RGW else curve.swept
    knee = curve.knee.point if curve.knee is not None and curve.knee.reached else None
    rows = [[p.value, p.workload if curve.swept in KNEE_SWEEPS + (SIZE,) else p.variant,
             number(p.ops_per_s), '-' if p.ops_per_s_noise is None
             else '±%s' % number(p.ops_per_s_noise), number(p.throughput_mib_s),
             number(p.p99_ms), KNEE_MARK if i == knee else '']
            for i, p in enumerate(curve.points)]
    lines = ['curve %s (%s swept):' % (curve.name, what),
             table([_axis(curve), 'WORKLOAD' if curve.swept in KNEE_SWEEPS + (SIZE,)
                    else 'VARIANT', 'OPS/s', 'NOISE', 'MiB/s', 'P99 ms', ''], rows, '  ')]
    if curve.knee is not None:
        lines.append('  ' + knee_text(curve, curve.knee))
    return lines


def curves_markdown(curves: Sequence[Curve], escape: Callable[[Any], str]) -> List[str]:
    """The curves as Markdown tables, the knee's row in bold; `escape` makes a text safe."""
    lines: List[str] = []
    for curve in curves:
        knee = curve.knee.point if curve.knee is not None and curve.knee.reached else None
        lines += ['', 'Curve %s (%s swept):' % (escape(curve.name), escape(curve.swept)), '',
                  '| %s | Point | Ops/s | Noise | MiB/s | P99 ms |' % _axis(curve).title(),
                  '| --- | --- | ---: | ---: | ---: | ---: |']
        for i, p in enumerate(curve.points):
            cells = [escape(p.value), escape(p.workload if curve.swept in KNEE_SWEEPS + (SIZE,)
                                             else p.variant),
                     number(p.ops_per_s), '-' if p.ops_per_s_noise is None
                     else '±' + number(p.ops_per_s_noise), number(p.throughput_mib_s),
                     number(p.p99_ms)]
            if i == knee:
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
        lines.append('NOISE: half the 95 % interval of a point\'s ops/s; the knee: the first '
                     'point no later point beats by more than their noise together.')
    return lines
