"""What a plan makes (a certificate, a key) and only an apply keeps: in memory, per store.

A plan is a dry run and writes nothing to the module's store. What it makes
is held here, so that the plans before an apply and the apply itself use the
same certificate or key, and the apply stores it once it is in place. A mgr
that stops forgets it; nothing of it is on the cluster unless it was applied.
"""
import threading
import weakref
from typing import Any, Dict

_LOCK = threading.Lock()
_BY_STORE: 'weakref.WeakKeyDictionary[Any, Dict[str, Any]]' = weakref.WeakKeyDictionary()


def pending(store: Any) -> Dict[str, Any]:
    """The store's material not kept yet, by the store key it goes to once applied."""
    with _LOCK:
        found = _BY_STORE.get(store)
        if found is None:
            found = {}
            _BY_STORE[store] = found
        return found
