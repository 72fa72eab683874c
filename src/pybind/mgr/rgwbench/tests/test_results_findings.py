"""A run's findings wherever its figures show: text, Markdown, -f json, export, the panel."""
import json
from typing import Any, Dict

from rgwbench.tests.module_harness import ModuleUnderTest, call, registered  # noqa: F401 (autouse)
from rgwbench.tests.result_records import small_record

from rgwbench.checks.finding import Finding, Level
from rgwbench.serial import dump, load
from rgwbench.results.model import Run
from rgwbench.tests.fixtures import stored_run
from rgwbench.panel.pages import run_page
from rgwbench.results.report import result_to_markdown, result_to_text

DEBUG_RGW = Finding(id='debug-rgw-raised', level=Level.skews,
                    summary='debug_rgw is above its default (1/5)',
                    evidence=('section client.rgw: debug_rgw = 20, reaching rgw.default.vm.a',),
                    fix='ceph config rm client.rgw debug_rgw')
SCRUBBING = Finding(id='pgs-scrubbing', level=Level.skews, summary='PGs are being scrubbed',
                    evidence=('up to 2 PGs active+clean+scrubbing',),
                    fix='ceph osd set noscrub', variant='kms', workload='put-4KiB',
                    seconds=(3, 4, 5, 9))
ESTIMATE = Finding(id='capacity-estimate', level=Level.info, summary='at most 1 GiB',
                   evidence=(), fix='')


def with_findings(*found: Finding) -> Dict[str, Any]:
    record = small_record()
    record['findings'] = [dump(f) for f in found]
    return record


def rows(text: str) -> Dict[str, str]:
    """The table's VARIANT cells (marks included), by variant."""
    lines = text.split('\n')
    header = next(line for line in lines if line.startswith('WORKLOAD'))
    start, end = header.index('VARIANT'), header.index('MiB/s')
    body = lines[lines.index(header) + 1:]
    cells = [line[start:end].strip() for line in body[:body.index('')]]
    return {cell.split()[0]: cell for cell in cells}


def test_a_finding_of_one_workload_marks_its_row_and_is_listed_under_the_table() -> None:
    text = result_to_text(stored_run(with_findings(SCRUBBING, ESTIMATE)))
    assert rows(text) == {'off': 'off', 'kms': 'kms !', 'tls': 'tls', 'sse-c': 'sse-c'}
    lines = text.split('\n')
    start = lines.index('findings (! marks the rows they cover; `ceph rgwbench check` '
                        'describes each):')
    assert lines[start + 1:] == [
        '  [skews] pgs-scrubbing: PGs are being scrubbed',
        '    when: kms / put-4KiB, seconds 3-5, 9 of the measured window',
        '    seen: up to 2 PGs active+clean+scrubbing',
        '    fix:  ceph osd set noscrub',
        '  [info] capacity-estimate: at most 1 GiB',
        '    when: before the start']
    assert max(len(line) for line in lines[:start]) <= 100


def test_a_finding_before_the_run_marks_every_row_and_info_none() -> None:
    assert set(rows(result_to_text(stored_run(with_findings(DEBUG_RGW)))).values()) == {
        'off !', 'kms !', 'tls !', 'sse-c !'}
    assert '!' not in ''.join(rows(result_to_text(stored_run(with_findings(ESTIMATE)))).values())


def test_a_result_stored_before_findings_shows_as_before() -> None:
    old = small_record()
    assert 'findings' not in old
    assert stored_run(old).findings is None
    text = result_to_text(stored_run(old))
    assert 'findings' not in text and ' !' not in text
    assert dump(stored_run(old)) == old


def test_findings_round_trip_in_the_record() -> None:
    record = with_findings(DEBUG_RGW, SCRUBBING)
    run = load(Run, record)
    assert run.findings == [DEBUG_RGW, SCRUBBING]
    assert dump(run) == record
    assert record['findings'][1] == {
        'id': 'pgs-scrubbing', 'level': 'skews', 'summary': 'PGs are being scrubbed',
        'evidence': ['up to 2 PGs active+clean+scrubbing'], 'fix': 'ceph osd set noscrub',
        'variant': 'kms', 'workload': 'put-4KiB', 'seconds': [3, 4, 5, 9]}


def test_markdown_marks_and_lists_them() -> None:
    text = result_to_markdown(stored_run(with_findings(SCRUBBING)))
    assert '| kms ! |' in text and '| tls |' in text
    assert '  [skews] pgs-scrubbing: PGs are being scrubbed' in text


def test_results_show_json_and_export_carry_them() -> None:
    mod = ModuleUnderTest({})
    mod.services.results.save(stored_run(with_findings(DEBUG_RGW, SCRUBBING)))
    shown = json.loads(call(mod, 'rgwbench results show', run_id='r1', format='json').stdout)
    exported = json.loads(call(mod, 'rgwbench results export', run_id='r1').stdout)
    for record in (shown, exported):
        assert [f['id'] for f in record['findings']] == ['debug-rgw-raised', 'pgs-scrubbing']
        assert record['findings'][1]['seconds'] == [3, 4, 5, 9]
    text = call(mod, 'rgwbench results show', run_id='r1').stdout
    assert '[skews] debug-rgw-raised' in text and 'kms !' in text


def test_the_run_page_lists_them_and_marks_the_rows() -> None:
    page = run_page({}, stored_run(with_findings(SCRUBBING, ESTIMATE)), None, 'csrf')
    assert '<section id="findings"><h2>Findings</h2>' in page
    assert page.count('<tr class="variant skewed">') == 1
    assert 'data-finding="pgs-scrubbing"' in page and 'data-finding="capacity-estimate"' in page
    assert 'kms / put-4KiB, seconds 3-5, 9 of the measured window' in page
    assert 'id="findings"' not in run_page({}, stored_run(small_record()), None, 'csrf')


def test_the_run_page_escapes_what_a_finding_says() -> None:
    evil = Finding(id='x', level=Level.skews, summary='<script>alert(1)</script>',
                   evidence=('<b>',), fix='a & b')
    page = run_page({}, stored_run(with_findings(evil)), None, 'csrf')
    assert '<script>alert(1)' not in page and '&lt;script&gt;' in page
    assert '<code>a &amp; b</code>' in page
