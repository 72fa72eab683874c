"""The panel's HTML pages. Every figure and name from the cluster is escaped here."""
import base64
import hashlib
import html
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..checks.finding import ordered
from ..profiles.field_checks import MAX_DURATION_S, MAX_PROCESSES, MAX_REPEATS, PAYLOAD_SIGNING
from ..results.finding_rows import MARK, marked
from ..results.host_report import tables as server_tables
from ..results.model import (CHARTED, Comparison, Figure, Run, RunSummary, WorkloadResult, columns)
from ..results.report import (cell_values, changed_settings, level_text, noise_text, table_rows,
                              when)
from ..results.seeds import SeedsTable, optional_legend, seeds_tables
from .charts import bar_chart, line_chart
from .sweep_section import sweeps_section

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


def escaped(value: Any) -> str:
    """A value as HTML text, quotes included; None as '-'."""
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
        % (LOGIN_STYLE,
           '<p class="error" id="login-error">%s</p>' % escaped(error) if error else '',
           hint, escaped(login_token), escaped(next_path)))


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
        % (escaped(csrf), escaped(title), escaped(about.get('ceph_version')),
           escaped(about.get('ceph_release')), escaped(csrf), body))


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
        % ('' if active else ' hidden', '/runs/%s' % escaped(run_id) if run_id else '#',
           escaped(run_id), escaped((active or {}).get('fraction') or 0),
           escaped((active or {}).get('progress') or ''),
           escaped(live_text((active or {}).get('live')))))


def live_text(live: Optional[Dict[str, Any]]) -> str:
    if not live:
        return 'no figures yet'
    return '%.1f ops/s, %.2f MiB/s (%s)' % (
        float(live.get('ops_per_s') or 0), float(live.get('mib_per_s') or 0),
        live.get('phase') or '')


def runs_page(about: Dict[str, Any], runs: Sequence[RunSummary],
              profiles: Sequence[Dict[str, Any]], active: Optional[Dict[str, Any]],
              csrf: str) -> str:
    rows = ''.join(
        '<tr data-run-id="%s"><td><a class="run-link" href="/runs/%s">%s</a></td><td>%s</td>'
        '<td class="state state-%s">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
        % (escaped(r.run_id), escaped(r.run_id), escaped(r.run_id), escaped(r.profile),
           escaped(r.state), escaped(r.state), escaped(when(r.started)),
           escaped(when(r.finished)), escaped(', '.join(str(v) for v in r.variants)))
        for r in runs)
    table = ('<table id="runs"><thead><tr><th>Run</th><th>Profile</th><th>State</th>'
             '<th>Started</th><th>Finished</th><th>Variants</th></tr></thead><tbody>%s'
             '</tbody></table>' % rows) if runs else '<p id="no-runs">No runs yet.</p>'
    options = ''.join(
        '<option value="%s">%s (%s, about %d min)</option>'
        % (escaped(p.get('name')), escaped(p.get('name')),
           'built-in' if p.get('builtin') else 'custom',
           max(1, math.ceil(float(p.get('estimated_s') or 0) / 60.0)))
        for p in profiles)
    start = (
        '<section id="start"><h2>Start a run</h2>'
        '<p><label for="profile">Profile</label> <select id="profile">%(options)s</select> '
        '<button id="show-plan" type="button">Show its plan</button></p>'
        '<details id="overrides"><summary>Change durations, repeats, rates, working set, '
        'object parts, processes or signing for this run</summary>'
        '<p class="overrides"><label>Duration of each workload (s) <input id="duration" '
        'type="number" min="1" max="%(duration)d" inputmode="numeric"></label> '
        '<label>Warm-up (s) <input id="warmup" type="number" min="0" max="%(duration)d" '
        'inputmode="numeric"></label> '
        '<label>Repeats <input id="repeats" type="number" min="1" max="%(repeats)d" '
        'inputmode="numeric"></label></p>'
        '<p class="overrides"><label>Rate (ops/s over all agents) <input id="rate" '
        'type="number" min="0" step="any" inputmode="decimal"></label> '
        '<label>or rates, one workload each <input id="rates" type="text" '
        'placeholder="100,200,400" spellcheck="false"></label> '
        '<label>Objects read (working set) <input id="objects" type="number" min="1" '
        'inputmode="numeric"></label> '
        '<label>Range of each GET <input id="range" type="text" placeholder="0-1MiB" '
        'spellcheck="false"></label></p>'
        '<p class="overrides"><label>Multipart threshold <input id="multipart_threshold" '
        'type="text" placeholder="16MiB" spellcheck="false"></label> '
        '<label>Part size <input id="part_size" type="text" placeholder="8MiB" '
        'spellcheck="false"></label> '
        '<label>Engine processes per agent <input id="processes" type="number" min="0" '
        'max="%(processes)d" inputmode="numeric"></label> '
        '<label>Payload signing <select id="payload_signing">'
        '<option value="">as the profile says</option>%(signing)s</select></label></p>'
        '<p class="legend">Empty: as the profile says; each field is the option of '
        '<code>ceph rgwbench run</code> of its name, with its limits. A rate runs every '
        'workload in open loop at that rate, its latency counted from each request\'s '
        'intended start; rates (comma separated) run each workload once per rate. '
        'Objects: how many the workloads that read prefill, over all agents; a range '
        'makes each GET read part of its object. Processes 0: one per core of each '
        'agent\'s host. The payload signing is the same for every variant.</p></details>'
        '<pre id="plan" hidden></pre>'
        '<p id="confirm-line" hidden><label><input id="confirm" type="checkbox"> '
        'I understand that this run changes settings and restarts daemons of this cluster '
        'while it lasts.</label></p>'
        '<p><button id="start-run" type="button" disabled>Start the run</button></p>'
        '<p id="start-error" class="error"></p></section>'
        % dict(options=options, duration=MAX_DURATION_S, repeats=MAX_REPEATS,
               processes=MAX_PROCESSES, signing=''.join(
                   '<option value="%s">%s</option>' % (escaped(mode), escaped(mode))
                   for mode in PAYLOAD_SIGNING)))
    body = ('%s<section><h2>Runs</h2>%s</section>%s'
            % (_live_section(active), table, start))
    return _layout('rgwbench: runs', about, csrf, body)


def not_found_page(about: Dict[str, Any], csrf: str) -> str:
    return _layout('rgwbench: not found', about, csrf,
                   '<h1>Not found</h1><p><a href="/">Back to the runs</a></p>')


# -- a run -------------------------------------------------------------------------
def _summary(run: Run) -> str:
    items = [('Profile', run.profile), ('Baseline', run.baseline),
             ('Ceph', run.ceph_version), ('Started', when(run.started)),
             ('Finished', when(run.finished))]
    text = ''.join('<dt>%s</dt><dd>%s</dd>' % (escaped(k), escaped(v)) for k, v in items)
    text = ('<dt>State</dt><dd id="run-state" class="state state-%s">%s</dd>'
            % (escaped(run.state), escaped(run.state))) + text
    if run.error:
        text += '<dt>Error</dt><dd id="run-error" class="error">%s</dd>' % escaped(run.error)
    return '<dl id="run-summary">%s</dl>' % text


def comparison_table(run: Run) -> str:
    shown = columns(run)
    head = ''.join('<th>%s</th>' % escaped(f.label) for f in shown)
    body = []
    last = None
    for item in table_rows(run):
        workload = '' if item.workload == last else (item.workload or '-')
        last = item.workload
        cells = ''.join(
            '<td class="num%s">%s</td>' % (' significant' if significant else '',
                                           '<strong>%s</strong>' % escaped(text) if significant
                                           else escaped(text))
            for text, significant in cell_values(item, shown))
        note = ' title="%s"' % escaped(item.note) if item.note else ''
        skewed = marked(run, item.variant, item.workload)
        body.append('<tr class="%s%s"%s><th scope="row">%s</th><td>%s%s%s</td>%s'
                    '<td class="num">%s</td></tr>' % (
                        'baseline' if item.baseline else 'variant',
                        ' skewed' if skewed else '', note, escaped(workload),
                        escaped(item.variant), ' (baseline)' if item.baseline else '',
                        ' <a class="mark" href="#findings" title="a finding covers this row">'
                        '%s</a>' % MARK if skewed else '', cells,
                        '' if item.baseline else escaped(noise_text(item.row))))
    return ('<div class="scroll"><table id="comparison"><thead><tr><th>Workload</th>'
            '<th>Variant</th>%s<th>Noise</th></tr></thead><tbody>%s</tbody></table></div>'
            '<p class="legend">Baseline rows: absolute figures. Other rows: %% change vs %s '
            'and ± half its %s interval (the larger of the noise measured in the workloads '
            'and the floor, the noise between two applications of the same settings; the '
            'level is that of all the figures of the table taken together); in '
            'bold, a change whose interval leaves out 0. Noise: that of the throughput (of '
            'the latency for an open-loop workload).</p>'
            % (head, ''.join(body), escaped(run.baseline),
               escaped(level_text([i.row for i in table_rows(run) if i.row is not None]))))


def _seeds_cell(text: str, column: int) -> str:
    if column == 0:
        return '<th scope="row">%s</th>' % escaped(text)
    if text.endswith('*'):
        return '<td class="num significant"><strong>%s</strong></td>' % escaped(text[:-1])
    return '<td class="num">%s</td>' % escaped(text)


def _seeds_table(index: int, found: SeedsTable) -> str:
    head = ''.join('<th>%s</th>' % escaped(h) for h in found.headers)
    rows = ''.join('<tr data-metric="%s">%s</tr>' % (
        escaped(metric), ''.join(_seeds_cell(text, i) for i, text in enumerate(row)))
        for metric, row in zip(found.metrics, found.rows))
    notes = ''.join('<li>%s: %s</li>' % (escaped(variant), escaped(why))
                    for variant, why in sorted(found.missing.items()))
    return ('<h3>%s</h3><div class="scroll" data-workload="%s"><table id="seeds-%d">'
            '<thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>%s'
            % (escaped(found.workload), escaped(found.workload), index, head, rows,
               '<ul class="legend">%s</ul>' % notes if notes else ''))


def seeds_section(run: Run) -> str:
    """Per workload, a row per metric and a column per variant, as the published studies
    lay out their tables (`results show --layout seeds`)."""
    tables = seeds_tables(run)
    if not tables:
        return ''
    legend = ['Each variant\'s figure, then its %% change vs %s; in bold, a change beyond '
              'the noise the run measured and the floor.' % run.baseline] + optional_legend(
                  tables)
    return ('<section id="seeds"><h2>Per workload, as the studies show it</h2>%s%s</section>'
            % (''.join(_seeds_table(i, t) for i, t in enumerate(tables)),
               ''.join('<p class="legend">%s</p>' % escaped(line) for line in legend)))


def hosts_section(run: Run) -> str:
    """Per workload and variant: the daemons counted (sums and means per daemon), and
    each sampled host's CPU, interfaces and OSDs."""
    found = server_tables(run)
    if not found:
        return ''
    parts = []
    for title, headers, rows, legend in found:
        head = ''.join('<th>%s</th>' % escaped(h) for h in headers)
        body = ''.join('<tr>%s</tr>' % ''.join(
            '<td%s>%s</td>' % ('' if i < 3 or headers[i] == 'NIC' else ' class="num"',
                               escaped(c)) for i, c in enumerate(row)) for row in rows)
        parts.append('<h3>%s</h3><div class="scroll"><table id="%s-figures"><thead><tr>%s'
                     '</tr></thead><tbody>%s</tbody></table></div><p class="legend">%s</p>'
                     % (escaped(title), title.lower(), head, body, escaped(legend)))
    return '<section id="servers"><h2>Daemons and hosts</h2>%s</section>' % ''.join(parts)


def findings_section(run: Run) -> str:
    """What the checks found before and during the run; empty for a run stored without."""
    found = ordered(run.findings or [])
    if not found:
        return ''
    items = ''.join(
        '<li class="finding level-%s" data-finding="%s"><strong>%s</strong> %s: %s'
        '<br><span class="legend">%s</span>%s%s</li>' % (
            escaped(f.level.value), escaped(f.id), escaped(f.level.value), escaped(f.id),
            escaped(f.summary), escaped(f.where()),
            ''.join('<br>seen: %s' % escaped(e) for e in f.evidence),
            '<br>fix: <code>%s</code>' % escaped(f.fix) if f.fix else '')
        for f in found)
    return ('<section id="findings"><h2>Findings</h2><p class="legend">%s marks the rows a '
            'finding covers.</p><ul>%s</ul></section>' % (MARK, items))


def chart_data(rows: List[Comparison], figure: Figure) -> Tuple[
        List[str], List[Tuple[str, List[Optional[float]]]],
        Optional[Dict[Tuple[str, str], bool]]]:
    """Workloads, (variant, % change per workload) and which bars are significant.

    Each figure has its own verdict; in rows stored before that, only one
    figure was tested (throughput, or latency in open loop): the charts of the
    others carry none (None), rather than "not significant".
    """
    workloads: List[str] = []
    variants: List[str] = []
    for row in rows:
        if str(row.workload) not in workloads:
            workloads.append(str(row.workload))
        if str(row.variant) not in variants:
            variants.append(str(row.variant))
    by = {(str(r.variant), str(r.workload)): r for r in rows}
    series = [(v, [by[(v, w)].change(figure) if (v, w) in by else None for w in workloads])
              for v in variants]

    def marks(row: Comparison) -> bool:
        return row.interval(figure) is not None or (
            figure.tested is not None and figure.tested == row.noise.tested)

    def significant(row: Comparison) -> bool:
        found = row.interval(figure)
        return found.significant if found is not None else row.noise.significant

    if not any(marks(row) for row in rows):
        return workloads, series, None
    marked = {key: marks(row) and significant(row) for key, row in by.items()}
    return workloads, series, marked


def per_second(entry: WorkloadResult) -> List[Tuple[float, float]]:
    """(second, ops) of a workload: its own series, else its first repeat's."""
    return [(float(s.t or 0), float(s.ops or 0)) for s in entry.seconds()]


def _charts(run: Run) -> str:
    figures = []
    rows = run.comparison
    for figure in CHARTED:
        workloads, series, marked = chart_data(rows, figure)
        if not series:
            continue
        figures.append('<figure class="chart-box" data-metric="%s">%s</figure>' % (
            escaped(figure.change),
            bar_chart('%s: %% change vs %s' % (figure.chart, run.baseline),
                      workloads, series, unit='%', marked=marked)))
    if not figures:
        return '<p id="no-charts">No variant to compare with the baseline yet.</p>'
    return '<div class="charts">%s</div>' % ''.join(figures)


def _time_charts(run: Run) -> str:
    figures = []
    for name in run.workload_names():
        series = []
        for variant in run.variants:
            entry = next((w for w in variant.workloads if w.name == name and not w.error),
                         None)
            if entry is not None:
                series.append((str(variant.name), per_second(entry)))
        figures.append('<figure class="chart-box" data-workload="%s">%s</figure>' % (
            escaped(name), line_chart('%s: operations per second' % name, series,
                                      x_label='seconds', y_label='ops/s')))
    return '<div class="charts">%s</div>' % ''.join(figures) if figures else ''


def _settings(run: Run) -> str:
    made = {str(v.name): v.changes or [] for v in run.variants}
    rows = []
    for variant, text in changed_settings(run):
        changes = ''.join('<li>%s %s: %s%s</li>' % (
            escaped(c.kind), escaped(c.target), escaped(c.state),
            ' (%s)' % escaped(c.error) if c.error else '') for c in made.get(variant, []))
        rows.append('<tr><th scope="row">%s</th><td>%s</td><td>%s</td></tr>' % (
            escaped(variant), escaped(text), '<ul>%s</ul>' % changes if changes else '-'))
    return ('<div class="scroll"><table id="settings-table"><thead><tr><th>Variant</th>'
            '<th>Settings vs the baseline</th><th>Changes made and put back</th></tr></thead>'
            '<tbody>%s</tbody></table></div>' % ''.join(rows))


def run_page(about: Dict[str, Any], run: Run, active: Optional[Dict[str, Any]],
             csrf: str) -> str:
    run_id = str(run.run_id)
    running = active is not None and active.get('run_id') == run_id
    body = (
        '<h1 id="run-title" data-run-id="%s">Run %s</h1>%s'
        '<p class="downloads"><a id="download-json" href="/runs/%s.json" download>JSON</a> '
        '<a id="download-csv" href="/runs/%s.csv" download>CSV</a></p>%s'
        '<section><h2>%% change vs baseline</h2>%s</section>%s%s%s'
        '<section id="bar-charts"><h2>Charts</h2>%s</section>'
        '<section id="per-second"><h2>Throughput over time</h2>%s</section>'
        '<section id="settings"><h2>Settings of each variant</h2>%s</section>'
        % (escaped(run_id), escaped(run_id), _summary(run), escaped(run_id), escaped(run_id),
           _live_section(active) if running else '', comparison_table(run),
           seeds_section(run) + hosts_section(run), findings_section(run),
           sweeps_section(run), _charts(run),
           _time_charts(run),
           _settings(run)))
    return _layout('rgwbench: run %s' % run_id, about, csrf, body)
