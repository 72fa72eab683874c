"""The package's layout: stages import only the stages before them, the root stays small,
no two modules share a name for different jobs, and no test file imports another
(doc/dev/rgwbench-architecture.rst)."""
import ast
import os
from collections import defaultdict
from typing import Dict, List, Set, Tuple

TESTS = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(TESTS)

# The stages in the order they may import: a module imports only from its own stage
# or an earlier one. The root's basics come first, its composition (the module, the
# services wired, the API, options, status) last.
BASICS = ('errors', 'formatting', 'documents', 'version', 'serial', 'cli')
ORDER = ('loadgen', 'basics', 'cluster', 'certs', 'web', 'settings', 'profiles', 'checks',
         'agents', 'results', 'runs', 'panel', 'composition')


def stage_of(module: str) -> str:
    """The stage of a module named by its path in the package ('settings.tls')."""
    first = module.split('.')[0]
    if '.' in module or first in ORDER:
        return first
    return 'basics' if first in BASICS else 'composition'


def modules() -> Dict[str, str]:
    """Each module of the package but its tests, by dotted name: its file."""
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d not in ('tests', '__pycache__', 'static')]
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, PACKAGE)[:-3].replace(os.sep, '.')
                found[dotted] = path
    return found


def imported(dotted: str, path: str) -> List[Tuple[int, str]]:
    """The package's modules a module imports (line, dotted name)."""
    package = dotted.split('.')[:-1]
    names = []
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)]
            target = '.'.join(base + ([node.module] if node.module else []))
            names.append((node.lineno, target or '__init__'))
    return names


def test_no_stage_imports_a_later_one() -> None:
    rank = {stage: index for index, stage in enumerate(ORDER)}
    climbing = []
    for dotted, path in sorted(modules().items()):
        if dotted.startswith('loadgen.') or dotted == '__init__':
            continue
        own = stage_of(dotted)
        for line, target in imported(dotted, path):
            if rank[stage_of(target)] > rank[own]:
                climbing.append('%s:%d imports %s (%s after %s)'
                                % (dotted, line, target, stage_of(target), own))
    assert climbing == []


def test_every_import_within_the_package_finds_its_module() -> None:
    # mypy reads the distribution's modules with missing imports ignored, so a module
    # moved under an import is seen only when that import runs.
    known = set(modules()) | {'__init__'}
    packages = {dotted.rsplit('.', 1)[0] for dotted in known if '.' in dotted}
    missing = ['%s:%d imports %s' % (dotted, line, target)
               for dotted, path in sorted(modules().items())
               for line, target in imported(dotted, path)
               if target not in known and target not in packages]
    assert missing == []


def test_the_root_keeps_at_most_twelve_files() -> None:
    root = [n for n in os.listdir(PACKAGE) if n.endswith('.py')]
    assert len(root) <= 12, sorted(root)


def test_no_two_modules_share_a_name_outside_the_engine() -> None:
    by_stem: Dict[str, List[str]] = defaultdict(list)
    for dotted in modules():
        if not dotted.startswith('loadgen.') and not dotted.endswith('__init__'):
            by_stem[dotted.split('.')[-1]].append(dotted)
    # a store per stage is one job: each keeps its stage's records in the module's store
    shared = {stem: sorted(where) for stem, where in by_stem.items()
              if len(where) > 1 and stem != 'store'}
    assert shared == {}
    # nor a module a folder's name: `checks` is the stage of `rgwbench check`
    folders = {dotted.split('.')[0] for dotted in modules() if '.' in dotted}
    assert sorted(folders & set(by_stem)) == []


def test_stage_of_names_the_folders() -> None:
    assert stage_of('settings.tls') == 'settings'
    assert stage_of('errors') == 'basics'
    assert stage_of('wiring') == 'composition'
    assert stage_of('loadgen') == 'loadgen'


def imported_test_files(path: str) -> List[Tuple[int, str]]:
    """The test files a module imports (line, module): `test_x`, `rgwbench.tests.test_x`,
    `from rgwbench.tests import test_x`."""
    names: List[Tuple[int, str]] = []
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = '.' * node.level + (node.module or '')
            names.append((node.lineno, module))
            if module.rstrip('.').endswith('tests') or not module.strip('.'):
                names += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in names if name.split('.')[-1].startswith('test_')]


def test_no_test_file_imports_another() -> None:
    # What test files share lives in the folder's fakes and harnesses and in conftest.py;
    # those import no test file either.
    importing = ['%s:%d imports %s' % (name, line, module)
                 for name in sorted(os.listdir(TESTS)) if name.endswith('.py')
                 for line, module in imported_test_files(os.path.join(TESTS, name))]
    assert importing == []


def stage_imports() -> Dict[str, List[str]]:
    """Each stage: the stages its modules import, in the order stages may import."""
    found: Dict[str, Set[str]] = defaultdict(set)
    for dotted, path in modules().items():
        own = stage_of(dotted)
        for _, target in imported(dotted, path):
            if stage_of(target) != own:
                found[own].add(stage_of(target))
    return {stage: sorted(found[stage], key=ORDER.index) for stage in ORDER}


if __name__ == '__main__':
    for stage, uses in stage_imports().items():
        print('%-12s <- %s' % (stage, ', '.join(uses) or '-'))
