"""Data as real clusters report it, for tests."""
from typing import Any, Dict, Optional


def rgw_service_map(**frontends: str) -> Dict[str, Any]:
    """A service map with one RGW daemon per `name=frontend_config` given."""
    daemons: Dict[str, Any] = {'summary': ''}
    for gid, (name, frontend) in enumerate(sorted(frontends.items()), start=4131):
        daemons[str(gid)] = {
            'start_epoch': 2, 'gid': gid, 'addr': '127.0.0.1:0/%d' % (gid * 7),
            'metadata': {
                'ceph_version': 'ceph version 20.2.4 (7f79) tentacle (stable)',
                'frontend_config#0': frontend, 'frontend_type#0': frontend.split()[0],
                'hostname': 'vm', 'id': name, 'zone_name': 'default',
            },
            'task_status': {},
        }
    return {'epoch': 2, 'services': {
        'mgr': {'daemons': {'summary': '', 'x': {'gid': 0, 'metadata': {}}}},
        'rgw': {'daemons': daemons},
    }}


class MemoryStore:
    """The module's key/value store (get_store, set_store, get_store_prefix) in memory."""

    def __init__(self) -> None:
        self.data: Dict[str, str] = {}

    def get_store(self, key: str, default: Optional[str] = None) -> Optional[str]:
        return self.data.get(key, default)

    def set_store(self, key: str, val: Optional[str]) -> None:
        if val is None:
            self.data.pop(key, None)
        else:
            self.data[key] = val

    def get_store_prefix(self, key_prefix: str) -> Dict[str, str]:
        return {k: v for k, v in self.data.items() if k.startswith(key_prefix)}
