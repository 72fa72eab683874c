"""Build a single-file zipapp of the engine (to copy to a load agent host).

    python3 -c 'from rgwbench.loadgen.bundle import build; build("lg.pyz")'
    python3 lg.pyz --help

The archive holds the package as ``loadgen/`` plus a root ``__main__.py``,
so nothing in it shadows the standard library.
"""

import os
import zipfile
from typing import List

_MAIN = (
    "import sys\n"
    "from loadgen.cli import main\n"
    "sys.exit(main())\n"
)


def package_files() -> List[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    return sorted(name for name in os.listdir(here) if name.endswith(".py"))


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
