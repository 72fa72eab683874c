"""The published studies' layout: per workload, a row per metric, a column per variant.

The RGW benchmark studies present each comparison as a small table: the
metric, the baseline's absolute figure, then for each other variant its
absolute figure and its "% change vs baseline". `results show --layout
seeds` prints a run that way, in plain text, Markdown, CSV and JSON.
"""
import csv
import io
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import InvalidInput
from ..formatting import OutputFormat, render, table
from ..serial import dump
from .curve_report import curves_csv_rows, curves_markdown, curves_text
from .curves import run_curves
from .host_report import KEYS, host_rows, hosts_markdown, hosts_text
from .model import FIGURES, Comparison, Figure, Run, WorkloadResult, strip_histograms
from .report import change_cell, number, result_to_csv, result_to_markdown, result_to_text


@dataclass
class SeedsTable:
    """One workload: headers, then a row per metric (its cells as the table shows them).

    ``metrics``: each row's figure, by its name in FIGURES (the rows' labels may change).
    """
    workload: str
    baseline: str
    headers: List[str]
    rows: List[List[str]]
    # per variant, why it has no figures here (it failed, or did not run this workload)
    missing: Dict[str, str]
    metrics: List[str]


#: the rows a table can have; those no variant measured are left out
ROWS: Tuple[Figure, ...] = tuple(f for f in FIGURES if f.column or f.absolute)


def _change(row: Optional[Comparison], figure: Figure) -> str:
    if row is None:
        return '-'
    text, significant = change_cell(row, figure)
    return text + '*' if significant else text


def seeds_tables(run: Run) -> List[SeedsTable]:
    variants = sorted(run.variants, key=lambda v: v.name != run.baseline)
    rows_by = {(r.variant, r.workload): r for r in (run.comparison)}
    others = [v for v in variants if v.name != run.baseline]
    headers = ['Metric', '%s (baseline)' % run.baseline]
    for variant in others:
        headers += [str(variant.name), '%% change vs %s' % run.baseline]
    tables = []
    for name in run.workload_names():
        entries: Dict[str, Optional[WorkloadResult]] = {}
        missing: Dict[str, str] = {}
        for variant in variants:
            entry = variant.workload(name)
            if entry is None or entry.error:
                entries[str(variant.name)] = None
                missing[str(variant.name)] = (
                    entry.error if entry is not None and entry.error
                    else variant.error or 'not run')
            else:
                entries[str(variant.name)] = entry
        rows = []
        metrics = []
        for figure in ROWS:
            values = {v: (None if e is None else figure.of(e)) for v, e in entries.items()}
            if all(value is None for value in values.values()):
                continue  # HAProxy's without an ingress; RGW's where no agent read them
            cells = [figure.label, number(values.get(str(run.baseline)))]
            for variant in others:
                cells += [number(values.get(str(variant.name))),
                          _change(rows_by.get((str(variant.name), name)), figure)
                          if entries.get(str(variant.name)) is not None else '-']
            rows.append(cells)
            metrics.append(figure.name)
        tables.append(SeedsTable(str(name), str(run.baseline), headers, rows, missing, metrics))
    return tables


def _notes(found: SeedsTable) -> List[str]:
    return ['%s: %s' % (variant, why) for variant, why in sorted(found.missing.items())]


def optional_legend(tables: List[SeedsTable]) -> List[str]:
    """What an HAProxy row means, when a table has one."""
    optional = {f.name for f in ROWS if f.optional and f.name.startswith('haproxy')}
    lines = []
    if any(optional.intersection(found.metrics) for found in tables):
        lines.append('HAProxy rows: only where a variant ran behind an ingress; no % change '
                     'where the baseline had none.')
    if any(f.absolute and f.name in found.metrics for found in tables for f in ROWS):
        lines.append('"per daemon" rows: the sum over the daemons counted, divided by their '
                     'number;')
        lines.append('   no % change of their own (that of the sum). OSD rows: the cluster\'s '
                     'OSDs on the sampled hosts.')
    return lines


def seeds_to_text(run: Run) -> str:
    lines = ['run %s  profile %s  state %s' % (run.run_id, run.profile, run.state)]
    tables = seeds_tables(run)
    for found in tables:
        lines += ['', 'workload %s' % found.workload, table(found.headers, found.rows)]
        lines += ['  ' + note for note in _notes(found)]
    lines += ['', '* a change beyond the noise the run measured and the floor.']
    return '\n'.join(lines + optional_legend(tables) + curves_text(run_curves(run))
                     + hosts_text(run, daemons=False))


def _md(text: Any) -> str:
    return str(text).replace('|', '\\|')


def seeds_to_markdown(run: Run) -> str:
    lines = ['## rgwbench run %s (%s)' % (_md(run.run_id), _md(run.profile))]
    tables = seeds_tables(run)
    for found in tables:
        lines += ['', '### %s' % _md(found.workload), '',
                  '| ' + ' | '.join('**%s**' % _md(h) for h in found.headers) + ' |',
                  '|' + '|'.join([' --- '] * len(found.headers)) + '|']
        for row in found.rows:
            cells = ['**%s**' % _md(row[0])] + [
                '**%s**' % c[:-1] if c.endswith('*') else _md(c) for c in row[1:]]
            lines.append('| ' + ' | '.join(cells) + ' |')
        notes = _notes(found)
        if notes:
            lines += [''] + ['* %s' % _md(n) for n in notes]
    lines += ['', 'Bold: a change beyond the noise the run measured and the floor.']
    for line in optional_legend(tables):
        lines += ['', line]
    return '\n'.join(lines + curves_markdown(run_curves(run), _md)
                     + hosts_markdown(run, daemons=False))


def seeds_to_csv(run: Run) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\n')
    for index, found in enumerate(seeds_tables(run)):
        if index:
            writer.writerow([])
        writer.writerow(['workload', found.workload])
        writer.writerow(found.headers)
        writer.writerows(found.rows)
    writer.writerows(curves_csv_rows(run_curves(run)))
    return out.getvalue()


def seeds_to_json(run: Run) -> Dict[str, Any]:
    shown = {'run_id': run.run_id, 'profile': run.profile, 'layout': 'seeds',
             'tables': [asdict(t) for t in seeds_tables(run)],
             'hosts': [dict(zip(KEYS, row)) for row in host_rows(run)]}
    return _with_curves(shown, run)


def _with_curves(shown: Dict[str, Any], run: Run) -> Dict[str, Any]:
    """The JSON with the run's curves under ``curves``, if it has any."""
    curves = run_curves(run)
    if curves:
        shown['curves'] = dump(curves)
    return shown


def show_text(layout: str, form: str) -> Callable[[Run], str]:
    """How `results show` prints a run in `layout` (wide, seeds) as `form` (plain,
    markdown, csv)."""
    renderers: Dict[str, Dict[str, Callable[[Run], str]]] = {
        'wide': {'plain': result_to_text, 'markdown': result_to_markdown,
                 'csv': result_to_csv},
        'seeds': {'plain': seeds_to_text, 'markdown': seeds_to_markdown,
                  'csv': seeds_to_csv}}
    if layout not in renderers:
        raise InvalidInput('--layout must be one of wide, seeds, got %r' % layout)
    if form not in renderers[layout]:
        raise InvalidInput('--table must be one of plain, markdown, csv, got %r' % form)
    return renderers[layout][form]


def shown_json(run: Run, layout: str = 'wide', series: bool = False) -> Dict[str, Any]:
    """A run as `results show -f json` gives it: without histograms and series (`series`:
    with the per-second series), or its tables in the studies' layout."""
    if layout == 'seeds':
        return seeds_to_json(run)
    return _with_curves(strip_histograms(dump(run), also=() if series else ('per_second',)),
                        run)


def show(run: Callable[[], Run], layout: str, form: str, fmt: OutputFormat) -> str:
    """`results show`: the run (read once the words are checked) in `layout` as `form`,
    or as JSON/YAML."""
    text = show_text(layout, form)
    found = run()
    if fmt is OutputFormat.plain:
        return text(found)
    return render(shown_json(found, layout), fmt, str)
