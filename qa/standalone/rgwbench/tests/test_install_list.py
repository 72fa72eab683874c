"""Every program the code runs is installed by the repository's own commands.

A fresh machine has none of what a developer once installed by hand, so the
command lines in the code are read (the first word of each argv given to
subprocess, to the cluster tool's runners and to `Release.argv`) and each
program must be in `localcluster.hostpackages`, which `cluster install`
installs. Runs without a cluster.
"""
import ast
import os
from typing import Iterator, List, Optional, Set, Tuple

import pytest

from localcluster import hostpackages

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
SCANNED = ('src/pybind/mgr/rgwbench', 'qa/standalone/rgwbench', 'bench')
# Calls whose first argument is a command line.
RUNNERS = {'run', 'call', 'check_call', 'check_output', 'Popen', '_run', 'argv',
           'execvp', 'execv', 'in_netns_argv', 'tool_exec'}
# Calls whose positional arguments are the command line itself.
VARARG_RUNNERS = {'in_netns'}


def _python_files() -> Iterator[str]:
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d not in ('__pycache__', '.tox')]
            for name in files:
                if name.endswith('.py'):
                    yield os.path.join(folder, name)


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ''


def _first_word(node: ast.AST) -> Optional[str]:
    """The program of an argv expression: `['x', ...]` or `['x'] + rest`."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        node = node.left
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        first = node.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def programs_in(source: str) -> List[Tuple[str, int]]:
    """(program, line) for every literal command line run in `source`."""
    found: List[Tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = _call_name(node)
        word: Optional[str] = None
        if name in RUNNERS:
            word = _first_word(node.args[0])
        elif name in VARARG_RUNNERS and len(node.args) > 1:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                word = arg.value
        if word and not word.startswith('-') and '/' not in word and word.strip() == word:
            found.append((word, node.lineno))
    return found


def _known() -> Set[str]:
    return set(hostpackages.HOST) | set(hostpackages.TESTS) | set(hostpackages.RELEASE)


def test_every_program_the_code_runs_is_installed_by_the_repository() -> None:
    known = _known()
    unlisted = []
    seen = 0
    for path in _python_files():
        with open(path) as f:
            for program, line in programs_in(f.read()):
                seen += 1
                if program not in known:
                    where = os.path.relpath(path, ROOT)
                    unlisted.append('%s:%d runs %r' % (where, line, program))
    assert seen > 20, 'the scan found too few command lines: is it reading the code?'
    assert not unlisted, ('programs that no install step provides (add them to '
                          'localcluster/hostpackages.py):\n' + '\n'.join(unlisted))


def test_the_release_programs_come_from_the_release_packages() -> None:
    from localcluster import releases
    assert set(hostpackages.RELEASE.values()) <= set(releases.PACKAGES)


@pytest.mark.parametrize('source, expected', [
    ("subprocess.run(['debootstrap', '--variant=minbase'])", ['debootstrap']),
    ("subprocess.Popen(['podman', 'run'] + args)", ['podman']),
    ("_run(['mount', '--bind', a, b], 'mount')", ['mount']),
    ("release.argv(['ceph-authtool'] + list(args))", ['ceph-authtool']),
    ("in_netns(ns, 'ip', '-j', 'addr')", ['ip']),
    ("subprocess.run(argv)", []),
    ("subprocess.run([sys.executable, '-m', 'x'])", []),
])
def test_the_scan_reads_command_lines(source: str, expected: List[str]) -> None:
    assert [p for p, _ in programs_in(source)] == expected


def test_a_program_missing_from_the_list_is_caught() -> None:
    assert 'surely-not-installed' not in _known()
    assert programs_in("subprocess.run(['surely-not-installed', 'x'])") == [
        ('surely-not-installed', 1)]
