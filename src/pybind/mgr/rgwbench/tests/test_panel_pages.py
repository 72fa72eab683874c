"""The panel's app with a session: its pages, the downloads, the API and the forms that
plan, start and abort runs. (`h` is conftest's fixture: a panel_harness.Harness.)"""
import csv
import html
import inspect
import io
import json
import re

import pytest
from panel_harness import (NASTY, PLAN, PROFILES, RECORD, RUN_ID, SUMMARIES, Harness, body, data,
                           header, hidden, table)

from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.panel.app import OVERRIDES, SESSION_COOKIE, STATIC_DIR
from rgwbench.profiles import with_overrides


# -- with a session -----------------------------------------------------------------
def test_the_runs_page(h: Harness) -> None:
    login = h.login()
    h.backend.calls.clear()
    response = h.get('/', login)
    assert response.status == 200
    assert response.content_type == 'text/html; charset=utf-8'
    page = body(response)
    assert sorted(h.backend.names()) == ['about', 'active_run', 'profiles', 'runs']
    assert re.findall(r'<script[^>]*>', page) == ['<script src="/static/panel.js" defer>']
    assert '<b>' not in page
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in page
    rows = table(page, 'runs')
    assert rows[0] == ['Run', 'Profile', 'State', 'Started', 'Finished', 'Variants']
    assert rows[1] == ['20261121-101500-0a1b2c', NASTY, 'failed', '2026-11-21 14:15:00Z',
                       '2026-11-21 14:16:40Z', 'as-is, <b>bold</b>']
    assert rows[2][:3] == [RUN_ID, 'quick', 'complete']
    assert rows[2][5] == 'as-is, threads-256'
    assert rows[3][:3] == [NASTY, 'quick', 'running']
    assert 'href="/runs/%s"' % RUN_ID in page
    assert 'href="/runs/&lt;script&gt;' in page
    profiles = re.search(r'<select id="profile">(.*?)</select>', page)
    assert profiles
    options = re.findall(r'<option value="([^"]*)">([^<]*)</option>', profiles.group(1))
    assert [html.unescape(v) for v, _ in options] == [p['name'] for p in PROFILES]
    assert html.unescape(options[0][1]) == 'quick (built-in, about 2 min)'
    assert html.unescape(options[1][1]).endswith('(custom, about 1 min)')
    assert '<section id="live" class="live" hidden>' in page     # nothing running
    assert hidden(page, 'csrf_token') == login.csrf          # the logout form's
    assert 'Ceph 16.2.15 (pacific)' in page


def test_the_runs_page_while_a_run_goes(h: Harness) -> None:
    login = h.login()
    h.backend.active = {'run_id': RUN_ID, 'profile': 'quick', 'state': 'running',
                        'fraction': 0.25, 'progress': 'variant threads-256: put-4KiB',
                        'live': {'ops_per_s': 829.3, 'mib_per_s': 3.24, 'phase': 'measure'}}
    page = body(h.get('/', login))
    assert '<section id="live" class="live">' in page
    assert '<a id="live-run" href="/runs/%s">%s</a>' % (RUN_ID, RUN_ID) in page
    assert 'value="0.25"' in page
    assert '829.3 ops/s, 3.24 MiB/s (measure)' in page
    assert data(h.get('/api/status', login)) == {'active_run': h.backend.active}


def test_no_runs_yet(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    login = h.login()
    monkeypatch.setattr(h.backend, 'runs', lambda: [])
    assert '<p id="no-runs">No runs yet.</p>' in body(h.get('/', login))


def test_the_run_page(h: Harness) -> None:
    login = h.login()
    h.backend.calls.clear()
    response = h.get('/runs/%s' % RUN_ID, login)
    assert response.status == 200
    assert ('run', RUN_ID) in h.backend.calls
    page = body(response)
    assert '<h1 id="run-title" data-run-id="%s">Run %s</h1>' % (RUN_ID, RUN_ID) in page
    assert 'href="/runs/%s.json"' % RUN_ID in page and 'href="/runs/%s.csv"' % RUN_ID in page
    summary = re.search(r'<dl id="run-summary">(.*?)</dl>', page, re.S)
    assert summary and 'complete' in summary.group(1) and '2026-11-22 18:50:18Z' in page
    rows = table(page, 'comparison')
    assert rows[0] == ['Workload', 'Variant', 'Throughput MiB/s', 'Ops/s', 'Latency mean ms',
                       'Latency p99 ms', 'RGW CPU cores', 'RGW RSS MiB', 'Noise']
    assert rows[1:] == [
        ['put-4KiB', 'as-is (baseline)', '1.97', '503.8', '38.00', '389.0', '0.467', '88.27',
         ''],
        ['', 'threads-256', '+64.6%', '+64.6%', '-49.2%', '-88.3%', '+63.2%', '-8.4%',
         '\u00b126.6%'],
        ['get-4KiB', 'as-is (baseline)', '6.53', '1,671', '9.56', '28.38', '1.01', '115.3', ''],
        ['', 'threads-256', '+30.0%', '+30.0%', '-23.1%', '-28.2%', '+23.6%', '-8.1%',
         '\u00b19.8%'],
    ]
    comparison = re.search(r'<table id="comparison">(.*?)</table>', page, re.S)
    assert comparison
    # the significant throughput changes are marked, the rest is not
    assert re.findall(r'<strong>([^<]*)</strong>', comparison.group(1)) == [
        '+64.6%', '+64.6%', '+30.0%', '+30.0%']
    charts = re.findall(r'<svg [^>]*class="chart"', page)
    metrics = re.findall(r'<figure class="chart-box" data-metric="([^"]+)">', page)
    assert metrics == ['throughput_pct', 'latency_p50_pct', 'latency_p99_pct', 'rgw_cpu_pct',
                       'rgw_rss_pct']
    assert re.findall(r'<figure class="chart-box" data-workload="([^"]+)">', page) == [
        'put-4KiB', 'get-4KiB']
    assert len(charts) == len(metrics) + 2
    per_second = re.search(r'<section id="per-second">(.*?)</section>', page, re.S)
    assert per_second and '<polyline' in per_second.group(1)
    settings = table(page, 'settings-table')
    assert settings[0] == ['Variant', 'Settings vs the baseline', 'Changes made and put back']
    assert settings[1] == ['as-is', 'as the cluster is', '-']
    assert settings[2][0] == 'threads-256'
    assert settings[2][1] == 'config={"client.rgw/rgw_thread_pool_size":"256"}'
    assert 'config client.rgw/rgw_thread_pool_size: undone' in settings[2][2]
    assert 'restart rgw.default: undone' in settings[2][2]
    assert '<section id="live"' not in page           # the run is over


def test_the_run_page_escapes_the_record(h: Harness) -> None:
    login = h.login()
    record = json.loads(json.dumps(RECORD))
    record['profile'] = NASTY
    record['error'] = '<img src=x onerror=alert(3)>'
    record['variants'][1]['name'] = '<i>threads</i>'
    record['comparison'][0]['variant'] = record['comparison'][1]['variant'] = '<i>threads</i>'
    record['variants'][1]['changes'][0]['target'] = '<u>target</u>'
    h.backend.records['nasty-1'] = record
    page = body(h.get('/runs/nasty-1', login))
    for raw in ('<script>alert', '<img', '<i>', '<u>'):
        assert raw not in page
    assert '&lt;img src=x onerror=alert(3)&gt;' in page
    assert table(page, 'comparison')[2][1] == '<i>threads</i>'
    assert table(page, 'settings-table')[2][0] == '<i>threads</i>'


def seeds_section(page: str) -> str:
    found = re.search(r'<section id="seeds">(.*?)</section>', page, re.S)
    assert found, 'no seeds section'
    return found.group(1)


def test_the_run_page_shows_the_seeds_tables(h: Harness) -> None:
    login = h.login()
    page = body(h.get('/runs/%s' % RUN_ID, login))
    section = seeds_section(page)
    assert re.findall(r'<div class="scroll" data-workload="([^"]+)"><table id="seeds-(\d+)">',
                      section) == [('put-4KiB', '0'), ('get-4KiB', '1')]
    put, get = table(page, 'seeds-0'), table(page, 'seeds-1')
    assert put[0] == ['Metric', 'as-is (baseline)', 'threads-256', '% change vs as-is']
    assert put[1:] == [
        ['Throughput MiB/s', '1.97', '3.24', '+64.6%'],
        ['Ops/s', '503.8', '829.3', '+64.6%'],
        ['Latency mean ms', '38.00', '19.29', '-49.2%'],
        ['Latency p99 ms', '389.0', '45.48', '-88.3%'],
        ['RGW CPU cores', '0.467', '0.762', '+63.2%'],
        ['RGW CPU cores per daemon', '0.467', '0.762', '-'],
        ['RGW RSS MiB', '88.27', '80.86', '-8.4%'],
        ['RGW RSS MiB per daemon', '88.27', '80.86', '-']]
    assert get[1] == ['Throughput MiB/s', '6.53', '8.49', '+30.0%']
    # the same rows, marks and metrics as `results show --layout seeds` (one computation)
    assert re.findall(r'<tr data-metric="([^"]+)">', section) == 2 * [
        'throughput_mib_s', 'ops_per_s', 'latency_mean_ms', 'latency_p99_ms',
        'rgw_cpu_cores', 'rgw_cpu_cores_mean', 'rgw_rss_mib', 'rgw_rss_mib_mean']
    assert re.findall(r'<strong>([^<]*)</strong>', section) == [
        '+64.6%', '+64.6%', '+30.0%', '+30.0%']
    assert 'HAProxy' not in section
    assert 'then its % change vs as-is' in html.unescape(section)


def test_the_seeds_tables_have_haproxy_rows_where_an_ingress_ran(h: Harness) -> None:
    login = h.login()
    record = json.loads(json.dumps(RECORD))
    record['variants'][1]['workloads'][0]['haproxy'] = {
        'daemons': 2, 'cpu_cores': 0.4012, 'rss_mib': 42.5}
    h.backend.records['ingress-1'] = record
    page = body(h.get('/runs/ingress-1', login))
    put, get = table(page, 'seeds-0'), table(page, 'seeds-1')
    assert put[-4:] == [['HAProxy CPU cores', '-', '0.401', '-'],
                        ['HAProxy CPU cores per daemon', '-', '0.201', '-'],
                        ['HAProxy RSS MiB', '-', '42.50', '-'],
                        ['HAProxy RSS MiB per daemon', '-', '21.25', '-']]
    assert not any(row[0].startswith('HAProxy') for row in get)
    assert 'HAProxy rows: only where a variant ran behind an ingress' in seeds_section(page)


def test_the_seeds_tables_escape_the_record(h: Harness) -> None:
    login = h.login()
    record = json.loads(json.dumps(RECORD))
    record['baseline'] = record['variants'][0]['name'] = '<b>as-is</b>'
    record['variants'][1]['workloads'][1]['name'] = NASTY
    record['variants'][1]['workloads'].append(dict(
        record['variants'][1]['workloads'][0], name='<i>put</i>',
        error='<img src=x onerror=alert(4)>'))
    record['comparison'] = []
    h.backend.records['nasty-2'] = record
    page = body(h.get('/runs/nasty-2', login))
    section = seeds_section(page)
    for raw in ('<script>alert', '<img', '<i>', '<b>'):
        assert raw not in page
    assert '&lt;b&gt;as-is&lt;/b&gt; (baseline)' in section
    assert 'data-workload="&lt;script&gt;alert(1)&lt;/script&gt;"' in section
    assert '<li>threads-256: &lt;img src=x onerror=alert(4)&gt;</li>' in section


def test_a_run_that_goes_shows_the_live_section(h: Harness) -> None:
    login = h.login()
    h.backend.active = {'run_id': RUN_ID, 'fraction': 0.5, 'progress': 'measuring',
                        'live': None}
    page = body(h.get('/runs/%s' % RUN_ID, login))
    assert '<section id="live" class="live">' in page
    assert 'no figures yet' in page


def test_the_json_download(h: Harness) -> None:
    login = h.login()
    response = h.get('/runs/%s.json' % RUN_ID, login)
    assert response.status == 200
    assert response.content_type == 'application/json'
    assert header(response, 'Content-Disposition') == \
        'attachment; filename="rgwbench-%s.json"' % RUN_ID
    assert json.loads(response.body) == RECORD
    assert ('run', RUN_ID) in h.backend.calls


def test_the_csv_download(h: Harness) -> None:
    login = h.login()
    response = h.get('/runs/%s.csv' % RUN_ID, login)
    assert response.status == 200
    assert response.content_type == 'text/csv; charset=utf-8'
    assert header(response, 'Content-Disposition') == \
        'attachment; filename="rgwbench-%s.csv"' % RUN_ID
    rows = list(csv.DictReader(io.StringIO(body(response))))
    assert [(r['run_id'], r['variant'], r['baseline'], r['workload']) for r in rows] == [
        (RUN_ID, 'as-is', 'yes', 'put-4KiB'), (RUN_ID, 'threads-256', 'no', 'put-4KiB'),
        (RUN_ID, 'as-is', 'yes', 'get-4KiB'), (RUN_ID, 'threads-256', 'no', 'get-4KiB')]
    assert rows[0]['op'] == 'put' and rows[0]['object_size'] == '4KiB'
    assert float(rows[0]['ops_per_s']) == 503.8
    assert float(rows[0]['latency_p99_ms']) == 389.021695
    assert int(rows[0]['ops']) == 5038 and int(rows[0]['bytes']) == 5038 * 4096
    assert rows[0]['throughput_pct'] == '' and rows[0]['significant'] == ''
    assert float(rows[1]['throughput_pct']) == 64.58
    assert rows[1]['significant'] == 'yes' and float(rows[1]['noise_pct']) == 26.62
    assert float(rows[3]['ops_per_s']) == 2172.3


def test_an_unknown_run(h: Harness) -> None:
    login = h.login()
    for path in ('/runs/20200101-000000-000000', '/runs/20200101-000000-000000.json',
                 '/runs/20200101-000000-000000.csv'):
        response = h.get(path, login)
        assert response.status == 404
        assert 'no result' in data(response)['error']


@pytest.mark.parametrize('path', ['/runs/', '/runs/.hidden', '/runs/a/b', '/runs/a%2Fb.json',
                                  '/runs/' + 'x' * 200, '/nothing', '/api/nothing',
                                  '/runs/%s/' % RUN_ID])
def test_unknown_paths_answer_404(h: Harness, path: str) -> None:
    login = h.login()
    h.backend.calls.clear()
    response = h.get(path, login)
    assert response.status == 404
    assert 'run' not in h.backend.names()
    if response.content_type.startswith('text/html'):
        assert '<h1>Not found</h1>' in body(response)


def test_other_methods(h: Harness) -> None:
    login = h.login()
    assert h.post('/nothing', login, csrf=login.csrf).status == 404
    response = h.request('PUT', '/', cookies={SESSION_COOKIE: login.token})
    assert response.status == 405
    assert h.request('PUT', '/login').status == 405
    head = h.request('HEAD', '/api/status', cookies={SESSION_COOKIE: login.token})
    assert head.status == 200


def test_the_static_files(h: Harness) -> None:
    login = h.login()
    for name, kind in (('panel.js', 'text/javascript'), ('panel.css', 'text/css')):
        response = h.get('/static/' + name, login)
        assert response.status == 200
        assert response.content_type.startswith(kind)
        with open('%s/%s' % (STATIC_DIR, name), 'rb') as f:
            assert response.body == f.read()
    for name in ('nope.js', '../app.py', '..%2Fapp.py', '', 'panel.js/'):
        assert h.get('/static/' + name, login).status == 404


def test_the_plan(h: Harness) -> None:
    login = h.login()
    response = h.get('/api/plan', login, query={'profile': 'quick'})
    assert response.status == 200
    assert data(response) == {'plan': PLAN, 'text': 'run quick: 2 variants, about 2 min'}
    assert h.backend.calls[-1] == ('plan', 'quick', {})
    changed = h.get('/api/plan', login, query={'profile': 'quick', 'duration': ' 30 ',
                                               'warmup': '', 'repeats': '3', 'other': '1'})
    assert changed.status == 200
    assert h.backend.calls[-1] == ('plan', 'quick', {'duration': '30', 'repeats': '3'})
    # The module checks the overrides as it checks the CLI's; its refusal is the answer.
    h.backend.fail['plan'] = InvalidInput("--warmup: must be 0 or more seconds, got '2s'")
    bad = h.get('/api/plan', login, query={'profile': 'quick', 'warmup': '2s'})
    assert bad.status == 400
    assert data(bad) == {'error': "--warmup: must be 0 or more seconds, got '2s'"}
    assert h.backend.calls[-1] == ('plan', 'quick', {'warmup': '2s'})
    del h.backend.fail['plan']
    refused = h.get('/api/plan', login, query={'profile': 'nope'})
    assert refused.status == 400
    assert data(refused) == {'error': "no profile 'nope'"}


def test_the_runs_api(h: Harness) -> None:
    login = h.login()
    assert data(h.get('/api/runs', login)) == SUMMARIES
    assert data(h.get('/api/status', login)) == {'active_run': None}


def test_starting_a_run_needs_the_csrf_token(h: Harness) -> None:
    login, other = h.login(), h.login()
    for csrf in (None, '', 'made-up', other.csrf, login.token, login.csrf[:-1]):
        response = h.post('/api/runs', login, form={'profile': 'quick'}, csrf=csrf)
        assert response.status == 403
        assert 'CSRF' in data(response)['error']
    response = h.request('POST', '/api/runs',
                         form={'profile': 'quick', 'csrf_token': other.csrf},
                         cookies={SESSION_COOKIE: login.token})
    assert response.status == 403
    assert 'start_run' not in h.backend.names()


def test_starting_a_run(h: Harness) -> None:
    login = h.login()
    for unconfirmed in ({'profile': 'quick'}, {'profile': 'quick', 'confirm': 'no'}):
        refused = h.post('/api/runs', login, form=unconfirmed, csrf=login.csrf)
        assert refused.status == 400 and 'confirm' in data(refused)['error']
    assert 'start_run' not in h.backend.names()
    response = h.post('/api/runs', login, form={'profile': 'quick', 'confirm': 'yes'},
                      csrf=login.csrf)
    assert response.status == 202
    assert data(response) == {'run_id': '20261123-090000-abcdef'}
    assert h.backend.calls[-1] == ('start_run', 'quick', {})
    by_form = h.request('POST', '/api/runs', form={'profile': 'quick', 'confirm': 'yes',
                                                   'csrf_token': login.csrf},
                        cookies={SESSION_COOKIE: login.token})
    assert by_form.status == 202
    assert [c for c in h.backend.calls if c[0] == 'start_run'] == \
        [('start_run', 'quick', {})] * 2


def test_starting_a_run_with_overrides(h: Harness) -> None:
    login = h.login()
    response = h.post('/api/runs', login, form={'profile': 'quick', 'duration': '20',
                                                'warmup': '0', 'repeats': '',
                                                'confirm': 'yes'}, csrf=login.csrf)
    assert response.status == 202
    assert h.backend.calls[-1] == ('start_run', 'quick', {'duration': '20', 'warmup': '0'})
    # as typed: the module's checks, those of `rgwbench run`, judge them
    h.backend.fail['start_run'] = InvalidInput(
        "--repeats: must be a whole number from 1 to 10, got '1.5'")
    refused = h.post('/api/runs', login, form={'profile': 'quick', 'repeats': '1.5',
                                               'confirm': 'yes'}, csrf=login.csrf)
    assert refused.status == 400
    assert data(refused) == {'error': "--repeats: must be a whole number from 1 to 10, "
                                      "got '1.5'"}
    assert h.backend.calls[-1] == ('start_run', 'quick', {'repeats': '1.5'})


def test_a_run_at_a_rate_over_a_working_set(h: Harness) -> None:
    login = h.login()
    page = h.get('/', login).body.decode()
    assert '<input id="rate" type="number" min="0" step="any"' in page
    assert '<input id="objects" type="number" min="1"' in page
    plan = h.get('/api/plan', login, query={'profile': 'quick', 'rate': '12.5',
                                            'objects': '5000'})
    assert plan.status == 200
    assert h.backend.calls[-1] == ('plan', 'quick', {'rate': '12.5', 'objects': '5000'})
    response = h.post('/api/runs', login, form={'profile': 'quick', 'rate': '200',
                                                'objects': '', 'confirm': 'yes'},
                      csrf=login.csrf)
    assert response.status == 202
    assert h.backend.calls[-1] == ('start_run', 'quick', {'rate': '200'})


#: every override of the form, and what an operator would type in it
FORM = {'duration': '20', 'warmup': '2', 'repeats': '2', 'rates': '100, 200',
        'objects': '5000', 'multipart_threshold': '16MiB', 'part_size': '8MiB',
        'range': '0-1KiB', 'processes': '0', 'payload_signing': 'signed'}


def test_the_form_has_every_override_of_run(h: Harness) -> None:
    login = h.login()
    page = h.get('/', login).body.decode()
    for name in OVERRIDES:
        assert re.search(r'<(input|select) id="%s"' % name, page), name
        # each is an override of `rgwbench plan` / `run` under the same name
        assert name in inspect.signature(with_overrides).parameters
    with open('%s/panel.js' % STATIC_DIR) as f:
        script = f.read()
    found = re.search(r'var OVERRIDES = \[([^\]]*)\]', script)
    assert found and re.findall(r"'([a-z_]+)'", found.group(1)) == list(OVERRIDES)
    assert set(FORM) | {'rate'} == set(OVERRIDES)
    signing = re.search(r'<select id="payload_signing">(.*?)</select>', page)
    assert signing and re.findall(r'<option value="([^"]*)">', signing.group(1)) == \
        ['', 'unsigned', 'signed']
    assert '<input id="processes" type="number" min="0" max="64"' in page


def test_every_override_of_the_form_reaches_the_run_as_typed(h: Harness) -> None:
    login = h.login()
    plan = h.get('/api/plan', login, query=dict(FORM, profile='quick'))
    assert plan.status == 200
    expected = dict(FORM, rates='100, 200')
    assert h.backend.calls[-1] == ('plan', 'quick', expected)
    response = h.post('/api/runs', login, form=dict(FORM, profile='quick', confirm='yes'),
                      csrf=login.csrf)
    assert response.status == 202
    assert h.backend.calls[-1] == ('start_run', 'quick', expected)
    # an unchosen signing (the select's empty option) is left out
    h.post('/api/runs', login, form={'profile': 'quick', 'payload_signing': '',
                                     'processes': ' 4 ', 'confirm': 'yes'}, csrf=login.csrf)
    assert h.backend.calls[-1] == ('start_run', 'quick', {'processes': '4'})


@pytest.mark.parametrize('error, status', [
    (Busy('run 20261122-185018-9c6c4f is in progress (`ceph rgwbench abort` stops it)'), 409),
    (NotFound('no profile nope'), 404), (InvalidInput('bad profile name'), 400),
])
def test_errors_of_a_start_are_json(h: Harness, error: Exception, status: int) -> None:
    login = h.login()
    h.backend.fail['start_run'] = error
    response = h.post('/api/runs', login, form={'profile': 'quick', 'confirm': 'yes'},
                      csrf=login.csrf)
    assert response.status == status
    assert data(response) == {'error': str(error)}


def test_aborting_a_run(h: Harness) -> None:
    login = h.login()
    assert h.post('/api/abort', login).status == 403
    assert h.post('/api/abort', login, csrf='made-up').status == 403
    assert 'abort_run' not in h.backend.names()
    response = h.post('/api/abort', login, csrf=login.csrf)
    assert response.status == 202
    assert data(response) == {'run_id': RUN_ID}
    assert h.backend.names().count('abort_run') == 1
    h.backend.fail['abort_run'] = NotFound('no run in progress')
    response = h.post('/api/abort', login, csrf=login.csrf)
    assert response.status == 404 and data(response) == {'error': 'no run in progress'}
