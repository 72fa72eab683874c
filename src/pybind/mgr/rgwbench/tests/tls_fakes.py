"""tls@rgw and tls@ingress for tests: an RGW service, a fake cluster whose RGW serves a
frontend, and a setting's context over it."""
from typing import Any, Dict, List, Optional

from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster

from rgwbench.cluster.rgw_daemons import rgw_daemons
from rgwbench.settings.base import SettingContext


RGW_SPEC: Dict[str, Any] = {
    'service_type': 'rgw', 'service_id': 'default', 'service_name': 'rgw.default',
    'placement': {'hosts': ['host1']}, 'spec': {'rgw_frontend_port': 8000}}


def tls_cluster(specs: List[Dict[str, Any]], frontend: str = 'beast port=8000') -> FakeCluster:
    """A cluster of the specs whose one RGW daemon, on host1, serves `frontend`."""
    return FakeCluster(specs, rgws=rgw_daemons({'services': {'rgw': {'daemons': {'4131': {
        'addr': '127.0.0.1:0/1', 'metadata': {
            'id': 'default.host1.a', 'hostname': 'host1', 'frontend_config#0': frontend}}}}}}))


def context(cluster: FakeCluster, store: Optional[MemoryStore] = None, release: int = 16,
            **options: Any) -> SettingContext:
    return SettingContext(cluster=cluster, rgw_service=lambda: 'rgw.default',  # type: ignore
                          option=lambda key: options.get(key), secrets=store or MemoryStore(),
                          release=release)
