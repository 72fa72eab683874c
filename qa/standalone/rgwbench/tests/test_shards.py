"""releases_in_parallel.py, which CI runs: the quiet shard starts late, a shard over the
budget is interrupted and fails, and the others' results stand."""
import os
import pathlib
import signal
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(os.path.dirname(HERE), 'releases_in_parallel.py')

sys.path.insert(0, os.path.dirname(HERE))
import releases_in_parallel  # noqa: E402


def write_tests(folder: pathlib.Path) -> None:
    folder.mkdir()
    (folder / 'test_a.py').write_text(textwrap.dedent('''
        import time
        def test_quick():
            time.sleep(6)
        '''))
    (folder / 'test_b.py').write_text(textwrap.dedent('''
        import pytest
        @pytest.mark.quiet
        def test_marked():
            pass
        def test_unmarked():
            pass
        '''))
    (folder / 'test_load.py').write_text(textwrap.dedent('''
        import time
        def test_quick():
            time.sleep(3)
        '''))
    (folder / 'test_runs.py').write_text(textwrap.dedent('''
        import time
        def test_hangs():
            time.sleep(600)
        '''))


def test_a_quiet_test_gets_a_shard_of_its_own_and_the_others_go_without_it(
        tmp_path: pathlib.Path) -> None:
    write_tests(tmp_path / 't')
    found = releases_in_parallel.shards([str(tmp_path / 't')], 'pacific')
    assert found['quiet'] == ['-m', 'quiet', str(tmp_path / 't' / 'test_b.py')]
    assert found['runs'] == ['-m', 'not quiet', str(tmp_path / 't' / 'test_runs.py')]
    assert found['others'] == ['-m', 'not quiet', str(tmp_path / 't' / 'test_a.py'),
                               str(tmp_path / 't' / 'test_b.py')]


def test_a_shard_over_the_budget_is_interrupted_and_fails_the_others_stand(
        tmp_path: pathlib.Path) -> None:
    write_tests(tmp_path / 't')
    # Started with Ctrl-C ignored, as CI's runner may start `./dev test`: a shard heeds
    # the budget's Ctrl-C all the same.
    proc = subprocess.run(
        [sys.executable, RUNNER, str(tmp_path / 'junit'), str(tmp_path / 't')],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        universal_newlines=True, timeout=300,
        env=dict(os.environ, RGWBENCH_RELEASES='x', RGWBENCH_BUDGET='90',
                 RGWBENCH_PHASES=str(tmp_path / 'phases')))
    out = proc.stdout
    assert proc.returncode != 0, out
    # three shards start; the quiet one once one of them has ended
    first_end = min(out.index('x loads: exit'), out.index('x others: exit'))
    assert out.index('x quiet started') > first_end, out
    assert 'x runs: exit 2 after' in out and '(interrupted: over the budget)' in out, out
    assert 'test_runs.py:4: KeyboardInterrupt' in out, out
    assert 'x others: exit 0' in out and 'x loads: exit 0' in out, out
    assert 'x quiet: exit 0' in out, out
    phases = (tmp_path / 'phases').read_text().splitlines()
    assert sorted(line.split('\t')[0] for line in phases) == [
        '  integration x loads', '  integration x others', '  integration x quiet',
        '  integration x runs'], phases


def test_the_cephadm_shard_waits_until_at_most_ten_others_run() -> None:
    waiting = [releases_in_parallel.Waiting('pacific', 'quiet', []),
               releases_in_parallel.Waiting('tentacle', 'quiet', []),
               releases_in_parallel.Waiting('tentacle', 'cephadm', [])]
    assert releases_in_parallel.ready(waiting, 11) == []
    assert releases_in_parallel.ready(waiting, 10) == waiting[2:]
    assert releases_in_parallel.ready(waiting, 2) == waiting


def test_the_cephadm_tests_go_to_the_late_shard_of_tentacle_only(
        tmp_path: pathlib.Path) -> None:
    write_tests(tmp_path / 't')
    (tmp_path / 't' / 'test_cephadm.py').write_text('def test_x():\n    pass\n')
    assert releases_in_parallel.shards([str(tmp_path / 't')], 'tentacle')['cephadm'] == [
        '-m', 'not quiet', str(tmp_path / 't' / 'test_cephadm.py')]
    assert 'cephadm' not in releases_in_parallel.shards([str(tmp_path / 't')], 'pacific')
