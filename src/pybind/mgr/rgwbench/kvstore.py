"""The module's key/value store (the config-key store under the module's prefix)."""
from typing import Dict, Optional, Protocol

from .errors import RGWBenchError

# `mon_config_key_max_entry_size` is 64 KiB; the mgr's set_store only logs a
# value the mon refuses, so every writer checks against this first (with room
# for the store's own prefix and a margin).
MAX_VALUE_BYTES = 60000


class Store(Protocol):
    """What MgrModule offers (get_store, set_store, get_store_prefix), or a fake in tests.

    Values are limited to 64 KiB each (`mon_config_key_max_entry_size`).
    """

    def get_store(self, key: str, default: Optional[str] = None) -> Optional[str]: ...

    def set_store(self, key: str, val: Optional[str]) -> None: ...

    def get_store_prefix(self, key_prefix: str) -> Dict[str, str]: ...


class ValueTooLarge(RGWBenchError):
    pass


def check_size(key: str, val: Optional[str], limit: int = MAX_VALUE_BYTES) -> None:
    """Raise ValueTooLarge when a value would be over the store's limit."""
    size = 0 if val is None else len(val.encode('utf-8'))
    if size > limit:
        raise ValueTooLarge('%s would take %d bytes in the config-key store, more than the '
                            '%d it keeps' % (key, size, limit))
