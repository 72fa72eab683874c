"""The `sse` setting for tests: a Pacific RGW on a fake cluster, its context and a plan."""
from typing import Dict, List, Optional

from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster

from rgwbench.cluster.rgw_daemons import Endpoint, RGWDaemon
from rgwbench.settings.base import PlanView, SettingContext
from rgwbench.settings.changes import Change
from rgwbench.settings.sse import ServerSideEncryption


PACIFIC = 'ceph version 16.2.15 (618f4400) pacific (stable)'
RGW_SPEC = {'service_type': 'rgw', 'service_id': 'default',
            'placement': {'hosts': ['vm']}, 'spec': {'rgw_frontend_port': 8000}}


def context(options: Optional[Dict[str, str]] = None, release: int = 16,
            version: str = PACIFIC) -> SettingContext:
    cluster = FakeCluster([RGW_SPEC], rgws=[RGWDaemon(
        'default.vm.abc', 'vm', 'default', version=version, frontends=['beast port=8000'],
        endpoints=[Endpoint('http', '127.0.0.1', 8000)], pid=10, key='4131')])
    values = dict(options or {})
    return SettingContext(cluster=cluster, rgw_service=lambda: 'rgw.default',  # type: ignore
                          option=values.get, secrets=MemoryStore(), release=release)


def plan(ctx: SettingContext, value: str, planned: Optional[List[Change]] = None
         ) -> List[Change]:
    setting = ServerSideEncryption()
    view = PlanView(ctx.cluster)
    view.add(planned or [])
    return setting.plan(ctx, view, setting.parse(value))
