"""Settings for tests: an applier and a session of the daemon settings over a fake cluster,
and the summaries of plans."""
import logging
from typing import Any, Callable, List, Optional

from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster

from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import SettingContext
from rgwbench.settings.daemon_settings import ConfigOption, Msgr2Secure, RGWPerHost, RGWRestart
from rgwbench.settings.session import SettingsSession


def applier(cluster: FakeCluster, log: Optional[Callable[[str], None]] = None
            ) -> SettingsApplier:
    ctx = SettingContext(cluster=cluster, rgw_service=lambda: 'rgw.default',  # type: ignore
                         option=lambda name: None, secrets=MemoryStore(), release=16)
    return SettingsApplier(ctx, [ConfigOption(), RGWPerHost(), Msgr2Secure(), RGWRestart()],
                           log=log)


def summaries(plans: Any) -> List[str]:
    return [c.summary for p in plans for c in p.changes]


def session(cluster: FakeCluster, store: MemoryStore) -> SettingsSession:
    return SettingsSession(store, lambda: applier(cluster), logging.getLogger('test'),
                           clock=lambda: 1000.0)
