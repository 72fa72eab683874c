"""Fencing: only the active mgr changes the cluster or writes what records the changes.

A mgr that hung (the usual cause of a failover) can resume after another
one became active and took over its journal. Every journal write and every
change first asks `check_active`, and a journal also compares the owner it
wrote with the one stored (see journal.py), so a resumed old mgr fails with
`Fenced` and changes nothing.
"""
import errno
from dataclasses import dataclass
from typing import Any, Dict, Optional, Protocol, runtime_checkable

from ..errors import RGWBenchError


class Fenced(RGWBenchError):
    """This mgr is not (or no longer) the one that may change the cluster."""

    def __init__(self, message: str) -> None:
        super().__init__(message, errno.ESTALE)


@runtime_checkable
class MgrIdentity(Protocol):
    """What MgrModule tells about the mgr it runs in; stores without it are not fenced."""

    def get_mgr_id(self) -> str: ...

    def get(self, data_name: str) -> Any: ...


@dataclass(frozen=True)
class Owner:
    name: str        # the mgr's name
    epoch: int       # the mgr map's epoch when it took the journal


def owner_from(found: Any) -> Optional[Owner]:
    if not isinstance(found, dict) or 'name' not in found:
        return None
    return Owner(str(found['name']), int(found.get('epoch') or 0))


def _mgr_map(mgr: MgrIdentity) -> Dict[str, Any]:
    found = mgr.get('mgr_map')
    return found if isinstance(found, dict) else {}


def identity(store: Any) -> Optional[Owner]:
    """This mgr as a journal's owner (None: the store is no mgr, as in tools and tests)."""
    if not isinstance(store, MgrIdentity):
        return None
    return Owner(store.get_mgr_id(), int(_mgr_map(store).get('epoch') or 0))


def check_active(store: Any, what: str) -> None:
    """Raise Fenced unless this mgr is the active one in its newest mgr map."""
    if not isinstance(store, MgrIdentity):
        return
    active = _mgr_map(store).get('active_name')
    me = store.get_mgr_id()
    if active and active != me:
        raise Fenced('mgr %s is no longer the active mgr (%s is): it does not %s'
                     % (me, active, what))
