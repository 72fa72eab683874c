"""Every program the code runs is installed by the repository's own commands.

A fresh machine has none of what a developer once installed by hand, so the
command lines in the code are read (the first word of each argv given to
subprocess, to the cluster tool's runners and to `Release.argv`, and each
program looked up with `shutil.which`) and each program must be in
`localcluster.hostpackages`, which `cluster install` installs. It reads
files only: it runs with the unit tests, no cluster needed.

An argv's first word is found where it is written in the file: a string, a
name assigned a string (`OPENSSL = 'openssl'`; `[OPENSSL, 'req']`), or a
name assigned a list (`argv = ['openssl', 'req']`; `run(argv)`,
`run(PODMAN + args)`, `for cmd in (['apt-get', ...], ...): run(cmd)`).
"""
import ast
import os
import sys
from typing import Dict, Iterator, List, Set, Tuple

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *['..'] * 5))
TOOLS = os.path.join(ROOT, 'qa', 'standalone', 'rgwbench')
if TOOLS not in sys.path:
    sys.path.append(TOOLS)
from localcluster import hostpackages  # noqa: E402

SCANNED = ('src/pybind/mgr/rgwbench', 'qa/standalone/rgwbench', 'bench')
# Calls whose first argument is a command line.
RUNNERS = {'run', 'call', 'check_call', 'check_output', 'Popen', '_run', 'argv',
           'execvp', 'execv', 'in_netns_argv', 'tool_exec'}
# Calls whose positional arguments are the command line itself.
VARARG_RUNNERS = {'in_netns'}
# Calls whose first argument is a program name alone.
PROGRAM_LOOKUPS = {'which'}


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


def _bound_name(node: ast.AST) -> str:
    """`x` of a name `x` or of an attribute `self.x` ('' for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return '.' + node.attr
    return ''


class Names:
    """What the names of one file are assigned anywhere in it: strings and lists."""

    def __init__(self, tree: ast.AST) -> None:
        self.values: Dict[str, List[ast.AST]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind(node.target, node.value)
            elif isinstance(node, (ast.For, ast.comprehension)) and \
                    isinstance(node.iter, (ast.List, ast.Tuple)):
                for value in node.iter.elts:   # for cmd in (['x', ...], ['y', ...])
                    self._bind(node.target, value)

    def _bind(self, target: ast.AST, value: ast.AST) -> None:
        name = _bound_name(target)
        if name:
            self.values.setdefault(name, []).append(value)

    def strings(self, node: ast.AST) -> List[str]:
        """The strings `node` is, or is assigned."""
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else []
        return [v.value for v in self.values.get(_bound_name(node), [])
                if isinstance(v, ast.Constant) and isinstance(v.value, str)]

    def first_words(self, node: ast.AST, depth: int = 0) -> List[str]:
        """The programs of an argv expression: `['x', ...]`, `['x'] + rest`, `[X, ...]`
        with X = 'x', or a name assigned such a list."""
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            node = node.left
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.strings(node.elts[0]) if node.elts else []
        if depth > 3 or not _bound_name(node):
            return []
        return [word for value in self.values.get(_bound_name(node), [])
                for word in self.first_words(value, depth + 1)]


def _program(word: str) -> bool:
    return bool(word) and not word.startswith('-') and '/' not in word and \
        word.strip() == word


def programs_in(source: str) -> List[Tuple[str, int]]:
    """(program, line) for every command line run, and every program looked up, in
    `source`."""
    tree = ast.parse(source)
    names = Names(tree)
    found: List[Tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = _call_name(node)
        words: List[str] = []
        if name in RUNNERS:
            words = names.first_words(node.args[0])
        elif name in VARARG_RUNNERS and len(node.args) > 1:
            words = names.strings(node.args[1])
        elif name in PROGRAM_LOOKUPS:
            words = names.strings(node.args[0])
        found.extend((word, node.lineno) for word in words if _program(word))
    return found


def _known() -> Set[str]:
    return (set(hostpackages.HOST) | set(hostpackages.TESTS) | set(hostpackages.RELEASE)
            | set(hostpackages.DASHBOARD))


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
                          'qa/standalone/rgwbench/localcluster/hostpackages.py):\n'
                          + '\n'.join(unlisted))


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
    ("subprocess.run(['/usr/bin/env', 'x'])", []),
    # looked up rather than run
    ("if shutil.which('openssl') is None: pass", ['openssl']),
    ("which(program)", []),
    # names assigned a string or a list, anywhere in the file
    ("HAPROXY = 'haproxy'\nsubprocess.run([HAPROXY, '-f', cfg])", ['haproxy']),
    ("self.tool = 'radosgw-admin'\nsubprocess.run([self.tool] + args)", ['radosgw-admin']),
    ("argv = ['openssl', 'req']\nsubprocess.run(argv, check=True)", ['openssl']),
    ("PODMAN: List[str] = ['podman']\nsubprocess.run(PODMAN + ['ps'])", ['podman']),
    ("IP = 'ip'\nin_netns(ns, IP, 'addr')", ['ip']),
    ("for cmd in (['apt-get', 'update'], ['dpkg', '-i', p]):\n    subprocess.run(cmd)",
     ['apt-get', 'dpkg']),
    ("argv = [os.path.join(d, 'x')]\nsubprocess.run(argv)", []),
])
def test_the_scan_reads_command_lines(source: str, expected: List[str]) -> None:
    assert [p for p, _ in programs_in(source)] == expected


def test_a_program_missing_from_the_list_is_caught() -> None:
    assert 'surely-not-installed' not in _known()
    assert programs_in("subprocess.run(['surely-not-installed', 'x'])") == [
        ('surely-not-installed', 1)]
