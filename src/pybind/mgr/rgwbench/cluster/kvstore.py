"""The module's key/value store (the config-key store under the module's prefix)."""
import errno
from typing import Any, Dict, Optional, Protocol, Tuple

from ..errors import RGWBenchError

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


#: where the mgr keeps a module's keys in the config-key store
MODULE_PREFIX = 'mgr/rgwbench/'


class SecretStore(Store, Protocol):
    """The store, and the mon commands a secret is written and read with.

    The mgr's set_store logs, at level 0, the whole value of a write the mon refuses
    (a CI on a loaded machine found an S3 secret key in the mgr's log so). A secret
    goes to the config-key store as a mon command's input instead, which nothing logs,
    and is read back from the mon (the mgr's copy of the store follows it late).
    """

    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]: ...


def mon_set(store: SecretStore, key: str, val: Optional[str]) -> None:
    """Write (or, with None, remove) a key with the mon's command; a refusal raises.

    The mon's message names the key, never the value (it was the command's input).
    """
    check_size(key, val)
    if val is None:
        ret, _, err = store.mon_command({'prefix': 'config-key rm', 'key': MODULE_PREFIX + key})
    else:
        ret, _, err = store.mon_command({'prefix': 'config-key set', 'key': MODULE_PREFIX + key},
                                        inbuf=val)
    if ret != 0 and not (val is None and abs(ret) == errno.ENOENT):
        raise RGWBenchError('storing %s failed: %s' % (key, err.strip() or ret), abs(ret))


def set_secret(store: SecretStore, key: str, val: Optional[str]) -> None:
    """A secret: never through set_store, which would log it if the mon refused it."""
    mon_set(store, key, val)


def set_kept(store: SecretStore, key: str, val: Optional[str]) -> None:
    """A record a failover must find (the undo journal): a write the mon refuses raises.

    On Pacific, set_store takes a refused write as done: the mgr keeps the value
    in its own copy, and a failover loses it. So the mon's command writes it
    first (a refusal raises before the change it records is made), and then
    set_store puts it in the mgr's copy, which get_store reads, at once.
    """
    mon_set(store, key, val)
    store.set_store(key, val)


def get_secret(store: SecretStore, key: str) -> Optional[str]:
    ret, out, err = store.mon_command({'prefix': 'config-key get', 'key': MODULE_PREFIX + key})
    if abs(ret) == errno.ENOENT:
        return None
    if ret != 0:
        raise RGWBenchError('reading %s failed: %s' % (key, err.strip() or ret), abs(ret))
    return out
