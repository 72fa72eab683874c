"""What this backend shares with the cluster tool (localcluster), loaded from its files.

The mgr loads this package alone, not the cluster tool's, so the modules are
loaded by path: the process table (so that `cluster stop` ends our daemons
too), the podman command lines (so that it removes our containers too) and the
daemons' CPU quotas (so that it removes their cgroups too).
"""
import importlib.util
import os
import sys
from typing import Any


def _load(file_name: str) -> Any:
    here = os.path.dirname(os.path.realpath(__file__))
    path = os.path.join(os.path.dirname(here), 'localcluster', file_name)
    spec = importlib.util.spec_from_file_location('localorch_' + file_name[:-3], path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_processes = _load('processes.py')
ProcessTable: Any = _processes.ProcessTable
osd_stop_grace: Any = _processes.osd_stop_grace
_containers = _load('containers.py')
Containers: Any = _containers.Containers
HOST_ROOT_ANCHOR: str = _containers.HOST_ROOT_ANCHOR
_cpu_quota = _load('cpu_quota.py')
CpuQuotas: Any = _cpu_quota.CpuQuotas
NoCpuController: Any = _cpu_quota.NoCpuController
