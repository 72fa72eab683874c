"""The rgwbench mgr module.

It needs Python 3.8 or newer (typing.Protocol, dataclasses). A mgr image on an
older interpreter (the el8 images of Pacific and Quincy run 3.6) is given a
module that reports why it cannot run, so `ceph mgr module enable rgwbench`
refuses in one line instead of the mgr failing to import the package. This
file keeps to what Python 3.6 parses.
"""
import sys
from typing import Tuple

if sys.version_info >= (3, 8):
    from .module import Module
else:
    from mgr_module import MgrModule

    TOO_OLD = ('rgwbench needs Python 3.8 or newer; this mgr runs Python %d.%d'
               % tuple(sys.version_info[:2]))

    class Module(MgrModule):
        @staticmethod
        def can_run() -> Tuple[bool, str]:
            return False, TOO_OLD

__all__ = ['Module']
