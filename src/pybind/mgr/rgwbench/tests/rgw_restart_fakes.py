"""An orchestrator's RGW service for tests of its restart through ClusterAccess."""
from typing import Any, Dict, Optional


class InstantRestartMgr:
    """An orchestrator whose restart of an RGW service is done before it returns."""

    def __init__(self, count: int = 9) -> None:
        self.names = ['default.h%d.%d' % (i // 3, i % 3) for i in range(count)]
        self.generation = 0

    def get(self, data_name: str) -> Any:
        assert data_name == 'service_map'
        daemons: Dict[str, Any] = {'summary': ''}
        for i, name in enumerate(self.names):
            gid = 1000 * (self.generation + 1) + i
            daemons[str(gid)] = {'start_epoch': 2 + self.generation, 'gid': gid,
                                 'addr': '127.0.0.1:0/1',
                                 'metadata': {'id': name, 'hostname': 'h', 'pid': str(100 + i),
                                              'frontend_config#0': 'beast port=8000'}}
        return {'epoch': 2, 'services': {'rgw': {'daemons': daemons}}}

    def service_action(self, action: str, service_name: str) -> None:
        self.generation += 1   # every daemon restarted (pids can repeat in containers)

    def describe_service(self, service_type: Optional[str] = None,
                         service_name: Optional[str] = None, refresh: bool = False) -> Any:
        spec = type('Spec', (), {'service_type': 'rgw', 'ssl': False})()
        return [type('Described', (), {'size': len(self.names), 'spec': spec})()]

    def list_daemons(self, service_name: Optional[str] = None, **kwargs: Any) -> Any:
        return [type('D', (), {'name': lambda self, n=n: 'rgw.' + n, 'daemon_type': 'rgw',
                               'daemon_id': n, 'hostname': 'h', 'status_desc': 'running',
                               'status': 1, 'ports': [8000], 'ip': None})()
                for n in self.names]
