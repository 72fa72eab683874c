"""Build a single-file zipapp of the engine (to copy to a load agent host).

    python3 -c 'from rgwbench.loadgen.bundle import build; build("lg.pyz")'
    python3 lg.pyz --help

The archive holds the package as ``loadgen/`` plus a root ``__main__.py``,
so nothing in it shadows the standard library.
"""

import ast
import io
import os
import tokenize
import zipfile
from typing import List, Optional, Tuple

_MAIN = (
    "import sys\n"
    "from loadgen.cli import main\n"
    "sys.exit(main())\n"
)


def package_files() -> List[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    return sorted(name for name in os.listdir(here) if name.endswith(".py"))


def needed_by(start: str) -> List[str]:
    """The package's files that ``start`` imports, directly or through others, with
    ``start`` and ``__init__.py``: what an agent needs of the engine (not its command
    line nor this builder)."""
    here = os.path.dirname(os.path.abspath(__file__))
    found, todo = set(), [start, "__init__.py"]
    while todo:
        name = todo.pop()
        if name in found or not os.path.exists(os.path.join(here, name)):
            continue
        found.add(name)
        with open(os.path.join(here, name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
                todo.extend(n + ".py" for n in names if n + ".py" not in found)
    return sorted(found)


# After these tokens a statement starts (a string alone there is a docstring).
STATEMENT_STARTS = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)


def without_comments(source: str) -> str:
    """The source with its comments gone and each docstring (a statement that is only a
    string) an empty string: what runs is the same, in a quarter less text.

    The text is cut where the tokens say, not rebuilt from them: rebuilding
    (tokenize.untokenize) changed the braces of f-strings in some Python 3.12s.
    """
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(where: Tuple[int, int]) -> int:
        return starts[where[0] - 1] + where[1]

    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    cuts: List[Tuple[int, int, str]] = []
    statement_start = True
    for at, token in enumerate(tokens):
        if token.type == tokenize.COMMENT:
            cuts.append((offset(token.start), offset(token.end), ''))
            continue
        if token.type == tokenize.STRING and statement_start and \
                _next_kind(tokens, at) in (tokenize.NEWLINE, tokenize.ENDMARKER):
            cuts.append((offset(token.start), offset(token.end), '""'))
        if token.type != tokenize.NL:
            statement_start = token.type in STATEMENT_STARTS
    out, done = [], 0
    for begin, end, put in cuts:
        out.append(source[done:begin] + put)
        done = end
    out.append(source[done:])
    return ''.join(out)


def _next_kind(tokens: List[tokenize.TokenInfo], at: int) -> int:
    for token in tokens[at + 1:at + 3]:   # a comment may come before the line's end
        if token.type != tokenize.COMMENT:
            return token.type
    return tokenize.ENDMARKER


def package_sources(names: Optional[List[str]] = None) -> List[Tuple[str, str]]:
    """(file name, source without comments) of each file named (default: of the package),
    for an agent."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    for name in package_files() if names is None else names:
        with open(os.path.join(here, name), encoding="utf-8") as f:
            found.append((name, without_comments(f.read())))
    return found


def build(path: str, interpreter: str = "/usr/bin/env python3") -> str:
    """Write the zipapp to ``path``; returns the path."""
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        raw.write(("#!%s\n" % interpreter).encode("utf-8"))
        with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("__main__.py", _MAIN)
            for name in package_files():
                zf.write(os.path.join(here, name), "loadgen/" + name)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return path
