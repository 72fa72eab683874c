"""What the orchestrator has been asked for and what it deployed, kept in the
mgr's key/value store so that a new active mgr carries on after a failover."""
import datetime
import json
from typing import Any, Dict, List, NamedTuple, Optional, Protocol

from ceph.deployment.service_spec import ServiceSpec

SERVICE_PREFIX = 'service/'
DAEMON_PREFIX = 'daemon/'


class KVStore(Protocol):
    def get_store(self, key: str, default: Optional[str] = None) -> Optional[str]: ...

    def set_store(self, key: str, val: Optional[str]) -> None: ...

    def get_store_prefix(self, key_prefix: str) -> Dict[str, str]: ...


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def parse_time(text: Optional[str]) -> Optional[datetime.datetime]:
    if not text:
        return None
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%S.%fZ').replace(
        tzinfo=datetime.timezone.utc)


class ServiceRecord(NamedTuple):
    spec: Dict[str, Any]
    created: str
    # Set by remove_service; the record goes once the daemons are gone.
    deleted: Optional[str] = None

    def service_spec(self) -> ServiceSpec:
        return ServiceSpec.from_json(self.spec)


class DaemonRecord(NamedTuple):
    daemon_type: str
    daemon_id: str
    service_name: str
    host: str
    ports: List[int]
    ip: Optional[str]
    created: str
    # What the daemon was last deployed with; a change means a redeploy.
    config_digest: str
    wanted: str = 'running'
    started: Optional[str] = None

    @property
    def name(self) -> str:
        return '%s.%s' % (self.daemon_type, self.daemon_id)


class OrchestratorState:
    def __init__(self, store: KVStore) -> None:
        self.store = store

    def services(self) -> Dict[str, ServiceRecord]:
        return {k[len(SERVICE_PREFIX):]: ServiceRecord(**json.loads(v))
                for k, v in self.store.get_store_prefix(SERVICE_PREFIX).items()}

    def set_service(self, name: str, record: Optional[ServiceRecord]) -> None:
        self.store.set_store(SERVICE_PREFIX + name,
                             json.dumps(record._asdict()) if record else None)

    def daemons(self) -> Dict[str, DaemonRecord]:
        found = {}
        for key, value in self.store.get_store_prefix(DAEMON_PREFIX).items():
            record = DaemonRecord(**json.loads(value))
            found[record.name] = record
        return found

    def set_daemon(self, record: DaemonRecord) -> None:
        self.store.set_store(DAEMON_PREFIX + record.name, json.dumps(record._asdict()))

    def remove_daemon(self, name: str) -> None:
        self.store.set_store(DAEMON_PREFIX + name, None)
