"""The module's key/value store (the config-key store under the module's prefix)."""
from typing import Dict, Optional, Protocol


class Store(Protocol):
    """What MgrModule offers (get_store, set_store, get_store_prefix), or a fake in tests.

    Values are limited to 64 KiB each (`mon_config_key_max_entry_size`).
    """

    def get_store(self, key: str, default: Optional[str] = None) -> Optional[str]: ...

    def set_store(self, key: str, val: Optional[str]) -> None: ...

    def get_store_prefix(self, key_prefix: str) -> Dict[str, str]: ...
