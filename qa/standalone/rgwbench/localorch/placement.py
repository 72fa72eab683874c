"""Where a spec's daemons go: the scheduling of cephadm, for a handful of hosts."""
import fnmatch
from typing import Any, List, Tuple

import orchestrator

from .hosts import Host


def place(placement: Any, hosts: List[Host], service_name: str,
          default_count: int = 1) -> List[Tuple[Host, int]]:
    """(host, rank on that host) for each daemon a placement asks for.

    Follows cephadm: explicit hosts, a label, or a host pattern choose the
    candidates (all hosts otherwise); `count` takes that many of them, one
    daemon each; `count_per_host` puts several daemons on each.
    """
    by_name = {h.name: h for h in hosts}
    candidates = list(hosts)
    if placement is not None and placement.hosts:
        wanted = [hp.hostname for hp in placement.hosts]
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            raise orchestrator.OrchestratorValidationError(
                'Cannot place %s on %s: Unknown hosts' % (service_name, ', '.join(unknown)))
        candidates = [by_name[n] for n in wanted]
    elif placement is not None and placement.label:
        raise orchestrator.OrchestratorValidationError(
            'Cannot place %s: no host has label %s' % (service_name, placement.label))
    elif placement is not None and getattr(placement, 'host_pattern', None):
        pattern = placement.host_pattern
        pattern = getattr(pattern, 'pattern', pattern)
        candidates = [h for h in hosts if fnmatch.fnmatch(h.name, str(pattern))]
        if not candidates:
            raise orchestrator.OrchestratorValidationError(
                'Cannot place %s: no host matches %s' % (service_name, pattern))
    per_host = (placement.count_per_host if placement is not None and placement.count_per_host
                else 1)
    count = placement.count if placement is not None and placement.count else None
    if count is None and (placement is None or placement.is_empty()):
        count = default_count
    if count is not None and per_host == 1:
        candidates = candidates[:count]
    return [(h, rank) for h in candidates for rank in range(per_host)]
