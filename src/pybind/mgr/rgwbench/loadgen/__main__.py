"""Entry point: ``python3 path/to/loadgen`` or ``python3 -m rgwbench.loadgen``."""

import os
import sys


def _cli_main() -> int:
    if __package__:
        from .cli import main
        return main()
    # Run as a directory (or from a zipapp): Python put the package folder
    # itself first on sys.path, where http.py would shadow the standard
    # library's http package.  Put its parent there instead and import the
    # folder as a package, so the relative imports inside work.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path.insert(0, os.path.dirname(here))
    import importlib
    cli = importlib.import_module(os.path.basename(here) + ".cli")
    return int(cli.main())


if __name__ == "__main__":
    sys.exit(_cli_main())
