"""Results as text, Markdown and CSV: the "% change vs baseline" tables.

One row per workload and variant: the baseline's absolute figures, then for
each other variant its % change vs the baseline's same workload, marked
``*`` (bold in Markdown) when the change is outside the run's own noise.
"""
import csv
import io
import json
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..formatting import table
from .compare import comparison

#: columns of the tables: (text header, Markdown header, row field, path in an entry)
COLUMNS: Tuple[Tuple[str, str, str, Tuple[str, ...]], ...] = (
    ('MiB/s', 'Throughput MiB/s', 'throughput_pct', ('throughput_mib_s',)),
    ('OPS/s', 'Ops/s', 'ops_pct', ('ops_per_s',)),
    ('MEAN ms', 'Latency mean ms', 'latency_mean_pct', ('latency_ms', 'mean')),
    ('P99 ms', 'Latency p99 ms', 'latency_p99_pct', ('latency_ms', 'p99')),
    ('RGW CPU', 'RGW CPU cores', 'rgw_cpu_pct', ('rgw', 'cpu_cores')),
    ('RGW MiB', 'RGW RSS MiB', 'rgw_rss_pct', ('rgw', 'rss_mib')),
)
#: the columns a significant change is marked in, by the figure the test was made on
TESTED = {'ops_per_s': ('throughput_pct', 'ops_pct'), 'latency_mean': ('latency_mean_pct',)}
CSV_FIGURES: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ('ops', ('ops',)), ('bytes', ('bytes',)), ('errors', ('errors',)),
    ('throughput_mib_s', ('throughput_mib_s',)), ('ops_per_s', ('ops_per_s',)),
    ('latency_mean_ms', ('latency_ms', 'mean')), ('latency_p50_ms', ('latency_ms', 'p50')),
    ('latency_p90_ms', ('latency_ms', 'p90')), ('latency_p99_ms', ('latency_ms', 'p99')),
    ('latency_p999_ms', ('latency_ms', 'p999')), ('latency_max_ms', ('latency_ms', 'max')),
    ('rgw_daemons', ('rgw', 'daemons')), ('rgw_cpu_cores', ('rgw', 'cpu_cores')),
    ('rgw_rss_mib', ('rgw', 'rss_mib')),
)
CSV_PCT = tuple(c[2] for c in COLUMNS)


def when(value: Any) -> str:
    """A time of the record (Unix seconds or already a string) as UTC text."""
    if value is None:
        return '-'
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return time.strftime('%Y-%m-%d %H:%M:%SZ', time.gmtime(value))
    return str(value)


def number(value: Any) -> str:
    """A figure, with as many digits as its size calls for."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return '-'
    if isinstance(value, int):
        return '{:,}'.format(value)
    size = abs(value)
    if size >= 1000:
        return '{:,.0f}'.format(value)
    if size >= 100:
        return '%.1f' % value
    if size >= 1:
        return '%.2f' % value
    return '%.3f' % value


def pct(value: Optional[float]) -> str:
    if value is None:
        return '-'
    text = '%+.1f%%' % value
    return '0.0%' if text in ('+0.0%', '-0.0%') else text


def _get(entry: Dict[str, Any], path: Tuple[str, ...]) -> Any:
    node: Any = entry
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _setting(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(',', ':'))


def changed_settings(record: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(variant, "key=value, ...") for each variant: the settings it changes vs the baseline."""
    variants = record.get('variants') or []
    base = next((v for v in variants if v.get('name') == record.get('baseline')), None)
    base_settings = (base or {}).get('settings') or {}
    out = []
    for variant in variants:
        name = str(variant.get('name'))
        settings = variant.get('settings') or {}
        if variant is base:
            text = ', '.join('%s=%s' % (k, _setting(v)) for k, v in sorted(settings.items()))
            out.append((name, text or 'as the cluster is'))
            continue
        diff = ['%s=%s' % (k, _setting(v)) for k, v in sorted(settings.items())
                if k not in base_settings or base_settings[k] != v]
        diff += ['%s=(as before)' % k for k in sorted(base_settings) if k not in settings]
        out.append((name, ', '.join(diff) or 'nothing'))
    return out


def _workload_names(record: Dict[str, Any]) -> List[str]:
    names: List[str] = []
    for variant in record.get('variants') or []:
        for entry in variant.get('workloads') or []:
            if entry.get('name') not in names:
                names.append(entry.get('name'))
    return names


def table_rows(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Per workload, then per variant (the baseline first): entry, comparison row, note."""
    variants = list(record.get('variants') or [])
    baseline = record.get('baseline')
    variants.sort(key=lambda v: v.get('name') != baseline)
    rows_by = {(r['variant'], r['workload']): r
               for r in (record.get('comparison') or comparison(record))}
    out = []
    for name in _workload_names(record):
        for variant in variants:
            entry = next((w for w in variant.get('workloads') or [] if w.get('name') == name),
                         None)
            note = None
            if variant.get('error') and entry is None:
                note = 'variant failed: %s' % variant['error']
            elif entry is None:
                note = 'not run'
            elif entry.get('error'):
                note = 'error: %s' % entry['error']
            out.append({'workload': name, 'variant': variant.get('name'),
                        'baseline': variant.get('name') == baseline,
                        'entry': None if note else entry, 'note': note,
                        'row': rows_by.get((variant.get('name'), name))})
    for variant in variants if not out else []:  # no workload ran at all
        if variant.get('error'):
            out.append({'workload': None, 'variant': variant.get('name'),
                        'baseline': variant.get('name') == baseline, 'entry': None,
                        'note': 'variant failed: %s' % variant['error'], 'row': None})
    return out


def cell_values(item: Dict[str, Any]) -> List[Tuple[str, bool]]:
    """The figure cells of a row and whether each is a significant change.

    Absolute figures for the baseline, % change for the others.
    """
    if item['entry'] is None:
        return [('-', False)] * len(COLUMNS)
    if item['baseline']:
        return [(number(_get(item['entry'], c[3])), False) for c in COLUMNS]
    row = item['row'] or {}
    marked = TESTED.get(row.get('tested') or '', ()) if row.get('significant') else ()
    cells = []
    for column in COLUMNS:
        text = pct(row.get(column[2]))
        cells.append((text, column[2] in marked and text != '-'))
    return cells


def _cells(item: Dict[str, Any], mark: str) -> List[str]:
    return [mark % text if significant else text for text, significant in cell_values(item)]


def _header(record: Dict[str, Any]) -> List[str]:
    lines = ['run %s  profile %s  state %s  ceph %s' % (
        record.get('run_id'), record.get('profile'), record.get('state'),
        record.get('ceph_version') or '-'),
        'started %s  finished %s  baseline %s' % (
        when(record.get('started')), when(record.get('finished')),
        record.get('baseline'))]
    if record.get('error'):
        lines.append('error: %s' % record['error'])
    return lines


def noise_text(row: Optional[Dict[str, Any]]) -> str:
    if not row or row.get('noise_pct') is None:
        return '-'
    return '±%.1f%%' % row['noise_pct']


def result_to_text(record: Dict[str, Any]) -> str:
    """A run as the seeds show it: figures of the baseline, % change for the others."""
    lines = _header(record)
    body = []
    notes = []
    last = None
    for item in table_rows(record):
        workload = '' if item['workload'] == last else (item['workload'] or '-')
        last = item['workload']
        variant = str(item['variant'])
        if item['note']:
            notes.append('%s / %s: %s' % (item['variant'], item['workload'] or '-',
                                          item['note']))
        body.append([workload, variant] + _cells(item, '%s*')
                    + ['' if item['baseline'] else noise_text(item['row'])])
    lines.append('')
    if body:
        lines.append(table(['WORKLOAD', 'VARIANT'] + [c[0] for c in COLUMNS] + ['NOISE'],
                           body))
        lines.append('')
    lines.append('%s: absolute figures; other variants: %% change vs %s.' % (
        record.get('baseline'), record.get('baseline')))
    lines.append('* a change of throughput (or of latency, open loop) outside the noise the '
                 'run measured;')
    lines.append('NOISE: the smallest change that is not noise.')
    settings = changed_settings(record)
    if settings:
        lines.append('')
        lines.append('settings:')
        width = max(len(v) for v, _ in settings)
        for variant, text in settings:
            lines.append('  %s  %s' % (variant.ljust(width), text))
    if notes:
        lines.append('')
        lines.extend(notes)
    return '\n'.join(lines)


def _md(text: Any) -> str:
    return ('-' if text is None else str(text)).replace('|', '\\|')


def result_to_markdown(record: Dict[str, Any]) -> str:
    """The same table in Markdown; significant changes in bold."""
    lines = ['## rgwbench run %s' % _md(record.get('run_id')), '']
    for label, key in (('Profile', 'profile'), ('State', 'state'),
                       ('Ceph version', 'ceph_version'), ('Baseline', 'baseline')):
        lines.append('* %s: %s' % (label, _md(record.get(key))))
    lines.append('* Started: %s, finished: %s' % (when(record.get('started')),
                                                  when(record.get('finished'))))
    if record.get('error'):
        lines.append('* Error: %s' % _md(record['error']))
    lines.append('')
    headers = ['Workload', 'Variant'] + [c[1] for c in COLUMNS] + ['Noise']
    lines.append('| ' + ' | '.join(headers) + ' |')
    lines.append('|' + '|'.join([' --- '] * 2 + [' ---: '] * (len(headers) - 2)) + '|')
    notes = []
    for item in table_rows(record):
        variant = _md(item['variant']) + (' (baseline)' if item['baseline'] else '')
        if item['note']:
            notes.append('* %s / %s: %s' % (_md(item['variant']), _md(item['workload']),
                                            _md(item['note'])))
        cells = [_md(item['workload']), variant] + _cells(item, '**%s**') + [
            '' if item['baseline'] else noise_text(item['row'])]
        lines.append('| ' + ' | '.join(cells) + ' |')
    lines.append('')
    lines.append('Baseline rows: absolute figures. Other rows: %% change vs %s. In bold: '
                 'a change of throughput (of latency for an open-loop workload) outside '
                 'the noise the run measured; Noise: the smallest change that is not noise.'
                 % _md(record.get('baseline')))
    settings = changed_settings(record)
    if settings:
        lines.append('')
        lines.append('Settings:')
        lines.append('')
        for variant, text in settings:
            lines.append('* %s: %s' % (_md(variant), _md(text)))
    if notes:
        lines.append('')
        lines.extend(notes)
    return '\n'.join(lines) + '\n'


def result_to_csv(record: Dict[str, Any]) -> str:
    """One row per variant and workload: absolute figures and % columns, a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\n')
    writer.writerow(['run_id', 'variant', 'baseline', 'workload', 'op', 'object_size',
                     'concurrency', 'duration_s'] + [f[0] for f in CSV_FIGURES]
                    + list(CSV_PCT) + ['significant', 'noise_pct', 'error'])

    def cell(value: Any) -> Any:
        return '' if value is None else value

    for item in table_rows(record):
        entry = item['entry'] or {}
        row = item['row'] or {}
        writer.writerow(
            [record.get('run_id'), item['variant'], 'yes' if item['baseline'] else 'no',
             cell(item['workload'])]
            + [cell(entry.get(k)) for k in ('op', 'object_size', 'concurrency', 'duration_s')]
            + [cell(_get(entry, path)) for _, path in CSV_FIGURES]
            + [cell(row.get(k)) for k in CSV_PCT]
            + ['' if item['baseline'] or not row else ('yes' if row.get('significant')
                                                       else 'no'),
               cell(row.get('noise_pct')), cell(item['note'])])
    return out.getvalue()


def results_to_text(summaries: Sequence[Dict[str, Any]]) -> str:
    """The stored runs (summaries from ResultStore.ls), one a line."""
    if not summaries:
        return 'no results yet'
    rows = [[s.get('run_id'), s.get('profile'), s.get('state'), when(s.get('started')),
             when(s.get('finished')), s.get('baseline'), len(s.get('variants') or [])]
            for s in summaries]
    return table(['RUN', 'PROFILE', 'STATE', 'STARTED', 'FINISHED', 'BASELINE',
                  'VARIANTS'], rows)


def comparison_to_text(rows: Sequence[Dict[str, Any]], title: Optional[str] = None) -> str:
    """Comparison rows (from `comparison` or `compare_runs`) as a table of % changes."""
    lines = [title] if title else []
    if not rows:
        lines.append('nothing to compare: no variant and workload in common')
        return '\n'.join(lines)
    body = []
    for row in rows:
        significant = bool(row.get('significant'))
        body.append([row.get('variant'), row.get('workload')]
                    + [pct(row.get(c[2])) for c in COLUMNS]
                    + [noise_text(row), '*' if significant else ''])
    lines.append(table(['VARIANT', 'WORKLOAD'] + [c[0] for c in COLUMNS] + ['NOISE', 'SIG'],
                       body))
    lines.append('% change; SIG *: throughput (open loop: latency) changed by more than '
                 'the measured NOISE')
    return '\n'.join(lines)
