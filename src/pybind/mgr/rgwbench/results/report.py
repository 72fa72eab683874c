"""Results as text, Markdown and CSV: the "% change vs baseline" tables.

One row per workload and variant: the baseline's absolute figures, then for
each other variant its % change vs the baseline's same workload, marked
``*`` (bold in Markdown) when the change is outside the run's own noise.
"""
import csv
import io
import json
import time
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from ..formatting import number, table
from .curve_report import CSV_COLUMNS, curves_markdown, curves_text, point_columns
from .curves import run_curves
from .finding_rows import MARK, findings_lines, marked
from .host_report import hosts_markdown, hosts_text
from .model import (COLUMNS, FIGURES, LEVEL, UNTESTED_FLOOR_PCT, Comparison, Figure, Run,
                    RunSummary, WorkloadResult, all_workloads, columns, compared_columns,
                    present, untested)


def when(value: Any) -> str:
    """A time of the record (Unix seconds or already a string) as UTC text."""
    if value is None:
        return '-'
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return time.strftime('%Y-%m-%d %H:%M:%SZ', time.gmtime(value))
    return str(value)


def pct(value: Optional[float]) -> str:
    if value is None:
        return '-'
    text = '%+.1f%%' % value
    return '0.0%' if text in ('+0.0%', '-0.0%') else text


def _setting(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(',', ':'))


def changed_settings(run: Run) -> List[Tuple[str, str]]:
    """(variant, "key=value, ...") for each variant: the settings it changes vs the baseline."""
    base = run.baseline_variant()
    base_settings = (base.settings if base is not None else None) or {}
    out = []
    for variant in run.variants:
        name = str(variant.name)
        settings = variant.settings or {}
        if variant is base:
            text = ', '.join('%s=%s' % (k, _setting(v)) for k, v in sorted(settings.items()))
            out.append((name, text or 'as the cluster is'))
            continue
        diff = ['%s=%s' % (k, _setting(v)) for k, v in sorted(settings.items())
                if k not in base_settings or base_settings[k] != v]
        diff += ['%s=(as before)' % k for k in sorted(base_settings) if k not in settings]
        out.append((name, ', '.join(diff) or 'nothing'))
    return out


class TableRow(NamedTuple):
    """A row of the tables: a workload of a variant, its comparison row, or why it has none."""
    workload: Optional[str]
    variant: Optional[str]
    baseline: bool
    entry: Optional[WorkloadResult]
    note: Optional[str]
    row: Optional[Comparison]


def table_rows(run: Run) -> List[TableRow]:
    """Per workload, then per variant (the baseline first): entry, comparison row, note."""
    variants = sorted(run.variants, key=lambda v: v.name != run.baseline)
    rows_by = {(r.variant, r.workload): r for r in (run.comparison)}
    out = []
    for name in run.workload_names():
        for variant in variants:
            entry = variant.workload(name)
            note = None
            if variant.error and entry is None:
                note = 'variant failed: %s' % variant.error
            elif entry is None:
                note = 'not run'
            elif entry.error:
                note = 'error: %s' % entry.error
            out.append(TableRow(name, variant.name, variant.name == run.baseline,
                                None if note else entry, note,
                                rows_by.get((variant.name, name))))
    for variant in variants if not out else []:  # no workload ran at all
        if variant.error:
            out.append(TableRow(None, variant.name, variant.name == run.baseline, None,
                                'variant failed: %s' % variant.error, None))
    return out


def cell_values(item: TableRow,
                shown: Sequence[Figure] = COLUMNS) -> List[Tuple[str, bool]]:
    """The figure cells of a row and whether each is a significant change.

    Absolute figures for the baseline, % change for the others; an optional
    figure (HAProxy's) the baseline lacks (no ingress there) is absolute too.
    """
    if item.entry is None:
        return [('-', False)] * len(shown)
    entry = item.entry
    if item.baseline:
        return [(number(f.of(entry)), False) for f in shown]
    row = item.row or Comparison()
    cells = []
    for figure in shown:
        if figure.optional and row.change(figure) is None and figure.of(entry) is not None:
            cells.append((number(figure.of(entry)), False))
        else:
            text, significant = change_cell(row, figure)
            cells.append((with_interval(row, figure, text), significant))
    return cells


def change_cell(row: Comparison, figure: Figure) -> Tuple[str, bool]:
    """A figure's % change in a comparison row, and whether it is outside the noise.

    Rows stored before each figure had its interval mark only the figure
    their single test was about.
    """
    text = pct(row.change(figure))
    found = row.interval(figure)
    if found is not None:
        return text, found.significant and text != '-'
    marked = row.noise.significant and figure.tested is not None \
        and figure.tested == row.noise.tested
    return text, marked and text != '-'


def with_interval(row: Comparison, figure: Figure, text: str) -> str:
    """A change with the half-width of its interval: ``-12.3% ±2.8``."""
    found = row.interval(figure)
    half = None if found is None else found.half_width()
    return text if half is None or text == '-' else '%s ±%.1f' % (text, half)


def _cells(item: TableRow, mark: str, shown: Sequence[Figure]) -> List[str]:
    return [mark % text if significant else text
            for text, significant in cell_values(item, shown)]


def optional_legend(shown: Sequence[Figure]) -> Optional[str]:
    """What the optional columns shown hold, if any is shown."""
    names = [str(f.column) for f in shown if f.optional]
    if not names:
        return None
    return ('%s: HAProxy\'s CPU cores and RSS MiB (absolute where the baseline had no '
            'ingress).' % ', '.join(names))


#: after an open-loop workload's name in the tables
OPEN_LOOP_MARK = ' (open)'
OPEN_LOOP_LEGEND = ('(open): open loop at a fixed rate; latency counts from each request\'s '
                    'intended start\n(time waiting for a free connection included: no '
                    'coordinated omission).')


def _shape(run: Run, name: Optional[str]) -> Optional[WorkloadResult]:
    """The first entry of a workload that says what it was (rate, working set)."""
    for variant in sorted(run.variants, key=lambda v: v.name != run.baseline):
        entry = variant.workload(name)
        if entry is not None and entry.mode is not None:
            return entry
    return None


def workload_label(run: Run, name: Optional[str]) -> str:
    """A workload's name as the tables show it: marked when it ran in open loop."""
    entry = _shape(run, name)
    return (name or '-') + (OPEN_LOOP_MARK if entry is not None and entry.open_loop else '')


def shape_parts(entry: WorkloadResult) -> List[str]:
    """What a workload was beyond its name: its asked rate, working set, range."""
    parts = []
    if entry.open_loop:
        parts.append('open loop at %g ops/s asked, %s achieved' % (
            entry.rate or 0, number(entry.figures.ops_per_s)))
    if entry.working_set_bytes is not None:
        parts.append('working set %s objects, %s' % (
            number(entry.objects), _bytes(entry.working_set_bytes)))
    if entry.range:
        parts.append('ranged GET of bytes %s' % entry.range)
    return parts


def _bytes(value: float) -> str:
    for unit, size in (('TiB', 1 << 40), ('GiB', 1 << 30), ('MiB', 1 << 20), ('KiB', 1 << 10)):
        if value >= size:
            return '%s %s' % (number(value / size), unit)
    return '%s B' % number(value)


def shapes(run: Run) -> List[Tuple[str, List[str]]]:
    """(workload, what it was) for workloads with a rate, a working set or a range."""
    out = []
    for name in run.workload_names():
        entry = _shape(run, name)
        parts = shape_parts(entry) if entry is not None else []
        if parts:
            out.append((name or '-', parts))
    return out


def _header(run: Run) -> List[str]:
    lines = ['run %s  profile %s  state %s  ceph %s' % (
        run.run_id, run.profile, run.state, run.ceph_version or '-'),
        'started %s  finished %s  baseline %s' % (
        when(run.started), when(run.finished), run.baseline)]
    if run.error:
        lines.append('error: %s' % run.error)
    return lines


def noise_text(row: Optional[Comparison]) -> str:
    if row is None or row.noise.noise_pct is None:
        return '-'
    return '±%.1f%%' % row.noise.noise_pct


def result_to_text(run: Run) -> str:
    """A run as the seeds show it: figures of the baseline, % change for the others."""
    shown = columns(run)
    lines = _header(run)
    body = []
    notes = []
    last = None
    items = table_rows(run)
    # Rows stored before each figure had its own interval show the one noise they had.
    legacy = any(item.row is not None and not item.row.intervals for item in items)
    for item in items:
        workload = '' if item.workload == last else workload_label(run, item.workload)
        last = item.workload
        if item.note:
            notes.append('%s / %s: %s' % (item.variant, item.workload or '-', item.note))
        elif item.entry is not None and item.entry.stopped:
            notes.append('%s / %s: stopped early (%s); its figures cover the time it ran'
                         % (item.variant, item.workload or '-', item.entry.stopped))
        variant = str(item.variant) + (' ' + MARK if marked(run, item.variant, item.workload)
                                       else '')
        body.append([workload, variant] + _cells(item, '%s*', shown)
                    + (['' if item.baseline else noise_text(item.row)] if legacy else []))
    lines.append('')
    if body:
        lines.append(table(['WORKLOAD', 'VARIANT'] + [str(f.column) for f in shown]
                           + (['NOISE'] if legacy else []), body))
        lines.append('')
    lines.append('%s: absolute figures; other variants: %% change vs %s.' % (
        run.baseline, run.baseline))
    if legacy:
        lines.append('* a change of throughput (or of latency, open loop) outside the noise '
                     'the run measured;')
        lines.append('NOISE: the smallest change that is not noise.')
    else:
        lines.extend(interval_legend([item.row for item in items if item.row is not None],
                                     shown))
    lines.extend(calibration_lines(run))
    legend = optional_legend(shown)
    if legend:
        lines.append(legend)
    described = shapes(run)
    if any(OPEN_LOOP_MARK in workload_label(run, name) for name, _ in described):
        lines += OPEN_LOOP_LEGEND.split('\n')
    if described:
        lines.append('')
        lines.append('workloads:')
        width = max(len(name) for name, _ in described)
        for name, parts in described:
            lines += ['  %s  %s' % ((name if i == 0 else '').ljust(width), part)
                      for i, part in enumerate(parts)]
    settings = changed_settings(run)
    if settings:
        lines.append('')
        lines.append('settings:')
        width = max(len(v) for v, _ in settings)
        for variant, text in settings:
            lines.append('  %s  %s' % (variant.ljust(width), text))
    if notes:
        lines.append('')
        lines.extend(notes)
    lines.extend(curves_text(run_curves(run)))
    lines.extend(hosts_text(run))
    found = findings_lines(run)
    if found:
        lines.append('')
        lines.extend(found)
    return '\n'.join(lines)


def floors_text(rows: Sequence[Comparison], shown: Sequence[Figure]) -> Optional[str]:
    """The floor each shown figure was held to (the largest of the rows'), if any was."""
    parts = []
    for figure in shown:
        found = [i.floor_pct for i in (r.interval(figure) for r in rows)
                 if i is not None and i.floor_pct is not None]
        if found:
            parts.append((str(figure.column or figure.label), max(found)))
    if not parts:
        return None
    if len({value for _, value in parts}) == 1:
        return '%.1f%% for each figure' % parts[0][1]
    return ', '.join('%s %.1f%%' % part for part in parts)


def level_text(rows: Sequence[Comparison]) -> str:
    """The confidence level of the rows' intervals, as a table's legend says it."""
    found = [i.level for r in rows for i in r.intervals.values() if i.level is not None]
    return '%g %%' % round((min(found) if found else LEVEL) * 100.0, 2)


def interval_legend(rows: Sequence[Comparison], shown: Sequence[Figure]) -> List[str]:
    lines = ['±: half the %s interval of the change: the larger of the noise measured in the'
             % level_text(rows),
             '   workloads and the floor; * the interval leaves out 0 (a change beyond both).',
             '   The level is that of all the figures of the table taken together: when none',
             '   changed, the chance that any is marked is at most 5 %.']
    floors = floors_text(rows, shown)
    if floors:
        lines.append('floor (the noise between two applications of the same settings; '
                     'see the calibrate')
        lines.append('   profile): %s.' % floors)
    return lines + untested_note(rows)


def untested_note(rows: Sequence[Comparison]) -> List[str]:
    """What a table whose marks are untested against restart noise says of them."""
    if not any(untested(row) for row in rows):
        return []
    return ['untested against restart noise: each variant ran in one application and this',
            '   cluster was never calibrated, so the noise between two applications of the',
            '   same settings (an RGW restart, drift) is unknown: no change is marked, not',
            '   even where its interval leaves out 0 (the ± includes a floor of %.0f%%, a '
            'guess).' % UNTESTED_FLOOR_PCT,
            '   To test the changes, run the calibrate profile once (ceph rgwbench run',
            '   --profile calibrate), or give the profile repeats of 2 or more with',
            '   order: interleaved.']


def calibration_lines(run: Run) -> List[str]:
    """What a calibrate run found: the floor per figure that later comparisons use."""
    if not run.calibration:
        return []
    floors = run.calibration.floors
    if not floors:
        return []
    by_change = {f.change: f for f in FIGURES if f.change}
    rows = [[by_change[k].label if k in by_change else k, '%.1f%%' % v]
            for k, v in floors.items()]
    return ['', 'smallest change this cluster can show (the floor of later comparisons):',
            table(['FIGURE', 'FLOOR'], rows)]


def _md(text: Any) -> str:
    return ('-' if text is None else str(text)).replace('|', '\\|')


def result_to_markdown(run: Run) -> str:
    """The same table in Markdown; significant changes in bold."""
    lines = ['## rgwbench run %s' % _md(run.run_id), '']
    for label, value in (('Profile', run.profile), ('State', run.state),
                         ('Ceph version', run.ceph_version), ('Baseline', run.baseline)):
        lines.append('* %s: %s' % (label, _md(value)))
    lines.append('* Started: %s, finished: %s' % (when(run.started), when(run.finished)))
    if run.error:
        lines.append('* Error: %s' % _md(run.error))
    lines.append('')
    shown = columns(run)
    items = table_rows(run)
    legacy = any(item.row is not None and not item.row.intervals for item in items)
    headers = ['Workload', 'Variant'] + [f.label for f in shown] + (['Noise'] if legacy else [])
    lines.append('| ' + ' | '.join(headers) + ' |')
    lines.append('|' + '|'.join([' --- '] * 2 + [' ---: '] * (len(headers) - 2)) + '|')
    notes = []
    for item in items:
        variant = _md(item.variant) + (' (baseline)' if item.baseline else '') + (
            ' ' + MARK if marked(run, item.variant, item.workload) else '')
        if item.note:
            notes.append('* %s / %s: %s' % (_md(item.variant), _md(item.workload),
                                            _md(item.note)))
        cells = [_md(workload_label(run, item.workload)), variant] + _cells(
            item, '**%s**', shown) + (
            ['' if item.baseline else noise_text(item.row)] if legacy else [])
        lines.append('| ' + ' | '.join(cells) + ' |')
    lines.append('')
    if legacy:
        lines.append('Baseline rows: absolute figures. Other rows: %% change vs %s. In bold: '
                     'a change of throughput (of latency for an open-loop workload) outside '
                     'the noise the run measured; Noise: the smallest change that is not '
                     'noise.' % _md(run.baseline))
    else:
        lines.append('Baseline rows: absolute figures. Other rows: %% change vs %s. ' %
                     _md(run.baseline) + ' '.join(line.strip() for line in interval_legend(
                         [item.row for item in items if item.row is not None], shown)))
    legend = optional_legend(shown)
    if legend:
        lines.append(legend)
    described = shapes(run)
    if any(OPEN_LOOP_MARK in workload_label(run, name) for name, _ in described):
        lines.append(_md(OPEN_LOOP_LEGEND.replace('\n', ' ')))
    if described:
        lines.append('')
        lines.append('Workloads:')
        lines.append('')
        for name, parts in described:
            lines.append('* %s: %s' % (_md(name), _md('; '.join(parts))))
    settings = changed_settings(run)
    if settings:
        lines.append('')
        lines.append('Settings:')
        lines.append('')
        for variant, text in settings:
            lines.append('* %s: %s' % (_md(variant), _md(text)))
    if notes:
        lines.append('')
        lines.extend(notes)
    lines.extend(curves_markdown(run_curves(run), _md))
    lines.extend(hosts_markdown(run))
    found = findings_lines(run)
    if found:
        lines += ['', '```'] + found + ['```']
    return '\n'.join(lines) + '\n'


def result_to_csv(run: Run) -> str:
    """One row per variant and workload: absolute figures and % columns, a header row; in a
    run with a sweep, each row's place on its curves last (curve_report.CSV_COLUMNS)."""
    figures, shown = present(all_workloads(run)), columns(run)
    curves = run_curves(run)
    points = point_columns(curves)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\n')
    writer.writerow(['run_id', 'variant', 'baseline', 'workload', 'op', 'object_size',
                     'concurrency', 'duration_s'] + list(WorkloadResult.SHAPE)
                    + [f.name for f in figures]
                    + [str(f.change) for f in shown] + ['significant', 'noise_pct', 'error']
                    + ['%s_%s' % (f.change, end) for f in shown
                       for end in ('low', 'high', 'significant')]
                    + (list(CSV_COLUMNS) if curves else []))

    def cell(value: Any) -> Any:
        return '' if value is None else value

    for item in table_rows(run):
        entry = item.entry or WorkloadResult()
        row = item.row
        changes = row.changes if row is not None else {}
        writer.writerow(
            [run.run_id, item.variant, 'yes' if item.baseline else 'no', cell(item.workload)]
            + [cell(v) for v in (entry.op, entry.object_size, entry.concurrency,
                                 entry.duration_s)]
            + [cell(getattr(entry, key)) for key in WorkloadResult.SHAPE]
            + [cell(f.of(entry)) for f in figures]
            + [cell(changes.get(str(f.change))) for f in shown]
            + ['' if item.baseline or row is None else ('yes' if row.noise.significant
                                                        else 'no'),
               cell(row.noise.noise_pct if row is not None else None), cell(item.note)]
            + [value for f in shown for value in _interval_cells(row, f)]
            + (points.get((str(item.variant), str(item.workload)), [''] * len(CSV_COLUMNS))
               if curves else []))
    return out.getvalue()


def _interval_cells(row: Optional[Comparison], figure: Figure) -> List[Any]:
    found = None if row is None else row.interval(figure)
    if found is None:
        return ['', '', '']
    return ['' if found.low is None else found.low, '' if found.high is None else found.high,
            'yes' if found.significant else 'no']


def results_to_text(summaries: Sequence[RunSummary]) -> str:
    """The stored runs (ResultStore.summaries), one a line."""
    if not summaries:
        return 'no results yet'
    rows = [[s.run_id, s.profile, s.state, when(s.started), when(s.finished), s.baseline,
             len(s.variants)] for s in summaries]
    return table(['RUN', 'PROFILE', 'STATE', 'STARTED', 'FINISHED', 'BASELINE',
                  'VARIANTS'], rows)


def comparison_to_text(rows: Sequence[Comparison],
                       title: Optional[str] = None) -> str:
    """Comparison rows (results.compare) as a table of % changes."""
    lines = [title] if title else []
    if not rows:
        lines.append('nothing to compare: no variant and workload in common')
        return '\n'.join(lines)
    body = []
    compared = list(rows)
    shown = compared_columns(compared)
    legacy = any(not row.intervals for row in compared)
    for row in compared:
        cells = []
        for figure in shown:
            text, significant = change_cell(row, figure)
            text = with_interval(row, figure, text)
            cells.append(text + '*' if significant and not legacy else text)
        body.append([row.variant, row.workload] + cells + (
            [noise_text(row), '*' if row.noise.significant else ''] if legacy else []))
    lines.append(table(['VARIANT', 'WORKLOAD'] + [str(f.column) for f in shown]
                       + (['NOISE', 'SIG'] if legacy else []), body))
    if legacy:
        lines.append('% change; SIG *: throughput (open loop: latency) changed by more than '
                     'the measured NOISE')
    else:
        lines.append('% change of the second run vs the first.')
        lines.extend(interval_legend(compared, shown))
    return '\n'.join(lines)
