"""Where the load agents go: a profile's or a load's `placement`, resolved to hosts.

A placement is a list of words:

* empty (the default) or ``rgw``: one agent on every host that runs an RGW daemon of
  the service under test, resolved for each workload, so that a variant that adds
  RGWs gets agents there too. The default is the mgr's host on a cluster with no
  orchestrator backend (a load there still runs), or with no RGW daemon;
* ``mgr``: one agent, a process on the active mgr's host;
* ``count:N``: N agents, on the RGW hosts first, then on the other hosts the
  orchestrator knows, in name order;
* host names: one agent on each.
"""
import re
from typing import Callable, Iterable, List, Optional, Sequence

from ..errors import InvalidInput, NotFound

RGW_HOSTS = 'rgw'
MGR_HOST = 'mgr'
KEYWORDS = (RGW_HOSTS, MGR_HOST)
COUNT = re.compile(r'^count:([0-9]{1,4})\Z')
# As many agents as a count may ask for (the profile's limit on processes bounds the rest).
MAX_COUNT = 64


def count_of(word: str) -> Optional[int]:
    """N of a `count:N` word; None for any other word."""
    found = COUNT.match(word)
    return int(found.group(1)) if found else None


def stands_alone(word: str) -> bool:
    """A keyword or a count: the placement's only word."""
    return word in KEYWORDS or count_of(word) is not None


def problem_of(placement: Sequence[str]) -> Optional[str]:
    """Why a placement's words cannot be taken together, if they cannot."""
    alone = [w for w in placement if stands_alone(w)]
    if alone and len(placement) > 1:
        return '%s stands alone, not in a list of hosts' % alone[0]
    count = count_of(placement[0]) if placement else None
    if count is not None and not 1 <= count <= MAX_COUNT:
        return '%s: the count must be from 1 to %d' % (placement[0], MAX_COUNT)
    return None


def agent_count(placement: Sequence[str], rgw_hosts: Iterable[str]) -> int:
    """How many agents a placement gives, with the RGW hosts there are now."""
    if not placement or list(placement) == [RGW_HOSTS]:
        return max(1, len(set(rgw_hosts)))
    count = count_of(placement[0])
    if count is not None:
        return count
    return 1 if list(placement) == [MGR_HOST] else len(placement)


def agent_hosts(placement: Optional[Sequence[str]],
                rgw_hosts: Callable[[], Optional[Iterable[str]]],
                known_hosts: Callable[[], Iterable[str]]) -> List[str]:
    """The hosts to place agents on now; [] for one agent on the mgr's host.

    `rgw_hosts` gives None on a cluster with no orchestrator backend. An orchestrator
    that fails is an error here, never a quiet move of the agents to another host.
    """
    placement = list(placement or [])
    if placement == [MGR_HOST]:
        return []
    if placement and not stands_alone(placement[0]):
        return placement
    found = rgw_hosts()
    if not placement:
        return sorted(set(found or []))
    if found is None:
        raise NotFound('placement %s: no orchestrator backend is set (ceph orch set '
                       'backend); place the agent with placement mgr' % placement[0])
    first = sorted(set(found))
    if placement == [RGW_HOSTS]:
        if not first:
            raise NotFound('placement rgw: the RGW service under test has no daemon')
        return first
    count = count_of(placement[0]) or 0
    ordered = first + sorted(set(known_hosts()) - set(first))
    if count > len(ordered):
        raise InvalidInput('placement count:%d: the orchestrator knows %d host(s) (%s)' % (
            count, len(ordered), ', '.join(ordered) or 'none'))
    return ordered[:count]


def placement_hosts(placement: Optional[str], known_hosts: Callable[[], Iterable[str]],
                    flag: str = '--placement') -> Optional[List[str]]:
    """The words of a comma-separated placement, each host one the orchestrator knows."""
    words = [h.strip() for h in placement.split(',') if h.strip()] if placement else None
    if not words:
        return words
    problem = problem_of(words)
    if problem:
        raise InvalidInput('%s: %s' % (flag, problem))
    if any(stands_alone(w) for w in words):
        return words
    unknown = sorted(set(words) - set(known_hosts()))
    if unknown:
        raise InvalidInput('%s: unknown host %s (see `ceph orch host ls`)'
                           % (flag, ', '.join(unknown)))
    return words
