"""The panel's HTML pages. Every figure and name from the cluster is escaped here."""
import base64
import hashlib
import html
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..results.compare import comparison
from ..results.report import (COLUMNS, TESTED, cell_values, changed_settings, noise_text,
                              table_rows, when)
from .charts import bar_chart, line_chart

#: the bar charts of a run: (row field of the comparison, title)
CHART_METRICS: Tuple[Tuple[str, str], ...] = (
    ('throughput_pct', 'Throughput'),
    ('latency_p50_pct', 'Latency p50'),
    ('latency_p99_pct', 'Latency p99'),
    ('rgw_cpu_pct', 'RGW CPU'),
    ('rgw_rss_pct', 'RGW memory'),
)

LOGIN_STYLE = (
    'body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;'
    'min-height:100vh;align-items:center;justify-content:center}'
    'form{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;'
    'width:min(22rem,90vw)}h1{font-size:1.3rem;margin-top:0}'
    'label,input,button{display:block;width:100%;box-sizing:border-box;font-size:1rem}'
    'input{padding:.5rem;margin:.4rem 0 1rem}button{padding:.6rem;background:#1f5fa8;'
    'color:#fff;border:0;border-radius:4px;cursor:pointer}'
    '.error{color:#b00020}.hint{color:#555;font-size:.9rem}')
#: the login page has no stylesheet to fetch before a session: its style is
#: inline and allowed by its hash alone
LOGIN_STYLE_CSP = "'sha256-%s'" % base64.b64encode(
    hashlib.sha256(LOGIN_STYLE.encode('utf-8')).digest()).decode('ascii')


def e(value: Any) -> str:
    return html.escape('-' if value is None else str(value), quote=True)


def login_page(login_token: str, next_path: str, error: Optional[str],
               password_set: bool) -> str:
    hint = '' if password_set else (
        '<p class="hint">No password is set yet: run <code>ceph rgwbench panel password '
        'generate</code> on a host with the admin keyring.</p>')
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>rgwbench: log in</title><style>%s</style></head><body>'
        '<form id="login" method="post" action="/login">'
        '<h1>rgwbench</h1>%s%s'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" autocomplete="current-password"'
        ' required autofocus>'
        '<input type="hidden" name="login_token" value="%s">'
        '<input type="hidden" name="next" value="%s">'
        '<button id="login-button" type="submit">Log in</button></form></body></html>'
        % (LOGIN_STYLE, '<p class="error" id="login-error">%s</p>' % e(error) if error else '',
           hint, e(login_token), e(next_path)))


def _layout(title: str, about: Dict[str, Any], csrf: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="csrf-token" content="%s">'
        '<title>%s</title><link rel="stylesheet" href="/static/panel.css">'
        '<script src="/static/panel.js" defer></script></head><body>'
        '<header><a class="brand" href="/">rgwbench</a>'
        '<span class="about">Ceph %s (%s)</span>'
        '<form method="post" action="/logout" class="logout">'
        '<input type="hidden" name="csrf_token" value="%s">'
        '<button id="logout" type="submit">Log out</button></form></header>'
        '<main>%s</main></body></html>'
        % (e(csrf), e(title), e(about.get('ceph_version')), e(about.get('ceph_release')),
           e(csrf), body))


def _live_section(active: Optional[Dict[str, Any]]) -> str:
    """The run in progress; panel.js keeps it up to date from /api/status."""
    run_id = (active or {}).get('run_id')
    return (
        '<section id="live" class="live"%s>'
        '<h2>Run in progress: <a id="live-run" href="%s">%s</a></h2>'
        '<progress id="live-progress" max="1" value="%s"></progress>'
        '<p id="live-message">%s</p>'
        '<p>Now: <span id="live-throughput">%s</span></p>'
        '<svg id="live-chart" class="spark" viewBox="0 0 300 60" role="img" '
        'aria-label="live throughput"></svg>'
        '<p><button id="abort" type="button">Abort run</button> '
        '<button id="abort-confirm" type="button" class="danger" hidden>'
        'Abort now: stop the load and put every setting back</button></p>'
        '<p id="abort-error" class="error"></p></section>'
        % ('' if active else ' hidden', '/runs/%s' % e(run_id) if run_id else '#', e(run_id),
           e((active or {}).get('fraction') or 0), e((active or {}).get('progress') or ''),
           e(live_text((active or {}).get('live')))))


def live_text(live: Optional[Dict[str, Any]]) -> str:
    if not live:
        return 'no figures yet'
    return '%.1f ops/s, %.2f MiB/s (%s)' % (
        float(live.get('ops_per_s') or 0), float(live.get('mib_per_s') or 0),
        live.get('phase') or '')


def runs_page(about: Dict[str, Any], runs: Sequence[Dict[str, Any]],
              profiles: Sequence[Dict[str, Any]], active: Optional[Dict[str, Any]],
              csrf: str) -> str:
    rows = ''.join(
        '<tr data-run-id="%s"><td><a class="run-link" href="/runs/%s">%s</a></td><td>%s</td>'
        '<td class="state state-%s">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
        % (e(r.get('run_id')), e(r.get('run_id')), e(r.get('run_id')), e(r.get('profile')),
           e(r.get('state')), e(r.get('state')), e(when(r.get('started'))),
           e(when(r.get('finished'))), e(', '.join(str(v) for v in r.get('variants') or [])))
        for r in runs)
    table = ('<table id="runs"><thead><tr><th>Run</th><th>Profile</th><th>State</th>'
             '<th>Started</th><th>Finished</th><th>Variants</th></tr></thead><tbody>%s'
             '</tbody></table>' % rows) if runs else '<p id="no-runs">No runs yet.</p>'
    options = ''.join(
        '<option value="%s">%s (%s, about %d min)</option>'
        % (e(p.get('name')), e(p.get('name')), 'built-in' if p.get('builtin') else 'custom',
           max(1, math.ceil(float(p.get('estimated_s') or 0) / 60.0)))
        for p in profiles)
    start = (
        '<section id="start"><h2>Start a run</h2>'
        '<p><label for="profile">Profile</label> <select id="profile">%s</select> '
        '<button id="show-plan" type="button">Show its plan</button></p>'
        '<details id="overrides"><summary>Change durations or repeats for this run</summary>'
        '<p class="overrides"><label>Duration of each workload (s) <input id="duration" '
        'type="number" min="1" max="86400" inputmode="numeric"></label> '
        '<label>Warm-up (s) <input id="warmup" type="number" min="0" max="3600" '
        'inputmode="numeric"></label> '
        '<label>Repeats <input id="repeats" type="number" min="1" max="100" '
        'inputmode="numeric"></label></p>'
        '<p class="legend">Empty: as the profile says.</p></details>'
        '<pre id="plan" hidden></pre>'
        '<p id="confirm-line" hidden><label><input id="confirm" type="checkbox"> '
        'I understand that this run changes settings and restarts daemons of this cluster '
        'while it lasts.</label></p>'
        '<p><button id="start-run" type="button" disabled>Start the run</button></p>'
        '<p id="start-error" class="error"></p></section>' % options)
    body = ('%s<section><h2>Runs</h2>%s</section>%s'
            % (_live_section(active), table, start))
    return _layout('rgwbench: runs', about, csrf, body)


def not_found_page(about: Dict[str, Any], csrf: str) -> str:
    return _layout('rgwbench: not found', about, csrf,
                   '<h1>Not found</h1><p><a href="/">Back to the runs</a></p>')


# -- a run -------------------------------------------------------------------------
def _summary(record: Dict[str, Any]) -> str:
    items = [('Profile', record.get('profile')), ('Baseline', record.get('baseline')),
             ('Ceph', record.get('ceph_version')), ('Started', when(record.get('started'))),
             ('Finished', when(record.get('finished')))]
    text = ''.join('<dt>%s</dt><dd>%s</dd>' % (e(k), e(v)) for k, v in items)
    text = ('<dt>State</dt><dd id="run-state" class="state state-%s">%s</dd>'
            % (e(record.get('state')), e(record.get('state')))) + text
    if record.get('error'):
        text += '<dt>Error</dt><dd id="run-error" class="error">%s</dd>' % e(record['error'])
    return '<dl id="run-summary">%s</dl>' % text


def comparison_table(record: Dict[str, Any]) -> str:
    head = ''.join('<th>%s</th>' % e(c[1]) for c in COLUMNS)
    body = []
    last = None
    for item in table_rows(record):
        workload = '' if item['workload'] == last else (item['workload'] or '-')
        last = item['workload']
        cells = ''.join(
            '<td class="num%s">%s</td>' % (' significant' if significant else '',
                                           '<strong>%s</strong>' % e(text) if significant
                                           else e(text))
            for text, significant in cell_values(item))
        note = ' title="%s"' % e(item['note']) if item['note'] else ''
        body.append('<tr class="%s"%s><th scope="row">%s</th><td>%s%s</td>%s<td class="num">'
                    '%s</td></tr>' % (
                        'baseline' if item['baseline'] else 'variant', note, e(workload),
                        e(item['variant']), ' (baseline)' if item['baseline'] else '', cells,
                        '' if item['baseline'] else e(noise_text(item['row']))))
    return ('<div class="scroll"><table id="comparison"><thead><tr><th>Workload</th>'
            '<th>Variant</th>%s<th>Noise</th></tr></thead><tbody>%s</tbody></table></div>'
            '<p class="legend">Baseline rows: absolute figures. Other rows: %% change vs %s; '
            'in bold, a change of throughput (of latency for an open-loop workload) outside '
            'the noise the run measured. Noise: the smallest change that is not noise.</p>'
            % (head, ''.join(body), e(record.get('baseline'))))


def chart_data(rows: List[Dict[str, Any]], metric: str) -> Tuple[
        List[str], List[Tuple[str, List[Optional[float]]]],
        Optional[Dict[Tuple[str, str], bool]]]:
    """Workloads, (variant, % change per workload) and which bars are significant.

    Significance is tested on one figure (throughput, or latency in open loop):
    the charts of the others carry none (None), rather than "not significant".
    """
    workloads: List[str] = []
    variants: List[str] = []
    for row in rows:
        if row['workload'] not in workloads:
            workloads.append(row['workload'])
        if row['variant'] not in variants:
            variants.append(row['variant'])
    by = {(r['variant'], r['workload']): r for r in rows}
    series = [(v, [by[(v, w)].get(metric) if (v, w) in by else None for w in workloads])
              for v in variants]
    if not any(metric in TESTED.get(row.get('tested') or '', ()) for row in rows):
        return workloads, series, None
    marked = {key: bool(row.get('significant')) and
              metric in TESTED.get(row.get('tested') or '', ()) for key, row in by.items()}
    return workloads, series, marked


def per_second(entry: Dict[str, Any]) -> List[Tuple[float, float]]:
    """(second, ops) of a workload entry: its own series, else its first repeat's."""
    series = entry.get('per_second')
    if not series:
        repeats = entry.get('repeats') or []
        series = repeats[0].get('per_second') if repeats else None
    return [(float(p.get('t', 0)), float(p.get('ops') or 0)) for p in series or []]


def _charts(record: Dict[str, Any]) -> str:
    figures = []
    rows = comparison(record)
    for metric, title in CHART_METRICS:
        workloads, series, marked = chart_data(rows, metric)
        if not series:
            continue
        figures.append('<figure class="chart-box" data-metric="%s">%s</figure>' % (
            e(metric), bar_chart('%s: %% change vs %s' % (title, record.get('baseline')),
                                 workloads, series, unit='%', marked=marked)))
    if not figures:
        return '<p id="no-charts">No variant to compare with the baseline yet.</p>'
    return '<div class="charts">%s</div>' % ''.join(figures)


def _time_charts(record: Dict[str, Any]) -> str:
    workloads: List[str] = []
    for variant in record.get('variants') or []:
        for entry in variant.get('workloads') or []:
            if entry.get('name') not in workloads:
                workloads.append(entry.get('name'))
    figures = []
    for name in workloads:
        series = []
        for variant in record.get('variants') or []:
            entry = next((w for w in variant.get('workloads') or []
                          if w.get('name') == name and not w.get('error')), None)
            if entry is not None:
                series.append((str(variant.get('name')), per_second(entry)))
        figures.append('<figure class="chart-box" data-workload="%s">%s</figure>' % (
            e(name), line_chart('%s: operations per second' % name, series,
                                x_label='seconds', y_label='ops/s')))
    return '<div class="charts">%s</div>' % ''.join(figures) if figures else ''


def _settings(record: Dict[str, Any]) -> str:
    made = {str(v.get('name')): v.get('changes') or [] for v in record.get('variants') or []}
    rows = []
    for variant, text in changed_settings(record):
        changes = ''.join('<li>%s %s: %s%s</li>' % (
            e(c.get('kind')), e(c.get('target')), e(c.get('state')),
            ' (%s)' % e(c['error']) if c.get('error') else '') for c in made.get(variant, []))
        rows.append('<tr><th scope="row">%s</th><td>%s</td><td>%s</td></tr>' % (
            e(variant), e(text), '<ul>%s</ul>' % changes if changes else '-'))
    return ('<div class="scroll"><table id="settings-table"><thead><tr><th>Variant</th>'
            '<th>Settings vs the baseline</th><th>Changes made and put back</th></tr></thead>'
            '<tbody>%s</tbody></table></div>' % ''.join(rows))


def run_page(about: Dict[str, Any], record: Dict[str, Any], active: Optional[Dict[str, Any]],
             csrf: str) -> str:
    run_id = str(record.get('run_id'))
    running = active is not None and active.get('run_id') == run_id
    body = (
        '<h1 id="run-title" data-run-id="%s">Run %s</h1>%s'
        '<p class="downloads"><a id="download-json" href="/runs/%s.json" download>JSON</a> '
        '<a id="download-csv" href="/runs/%s.csv" download>CSV</a></p>%s'
        '<section><h2>%% change vs baseline</h2>%s</section>'
        '<section id="bar-charts"><h2>Charts</h2>%s</section>'
        '<section id="per-second"><h2>Throughput over time</h2>%s</section>'
        '<section id="settings"><h2>Settings of each variant</h2>%s</section>'
        % (e(run_id), e(run_id), _summary(record), e(run_id), e(run_id),
           _live_section(active) if running else '', comparison_table(record),
           _charts(record), _time_charts(record), _settings(record)))
    return _layout('rgwbench: run %s' % run_id, about, csrf, body)
