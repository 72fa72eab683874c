"""The changes a setting makes, each of a kind that knows how to put a state in place.

A change is journaled with the state it replaces (`before`) and the state it
makes (`after`); making it and undoing it are the same operation, "put this
state in place", so undo is as well tested as apply and is idempotent.
"""
from typing import Any, Dict, NamedTuple, Optional, Protocol

CONFIG, SERVICE, RESTART = 'config', 'service', 'restart'
# Restarts are undone after everything else: daemons must come back with the
# settings already put back.
UNDO_LAST = (RESTART,)


class Change(NamedTuple):
    kind: str
    target: str
    after: Any
    summary: str            # one line for plans and reports

    def to_dict(self) -> Dict[str, Any]:
        return {'kind': self.kind, 'target': self.target, 'summary': self.summary}


def config_change(who: str, option: str, value: Optional[str]) -> Change:
    summary = ('ceph config rm %s %s' % (who, option) if value is None
               else 'ceph config set %s %s %s' % (who, option, value))
    return Change(CONFIG, '%s/%s' % (who, option), value, summary)


def service_change(service_name: str, spec: Optional[Dict[str, Any]], summary: str) -> Change:
    return Change(SERVICE, service_name, spec, summary)


def restart_change(daemons: str, summary: str) -> Change:
    """Restart a kind of daemon: `osd` (one at a time, safely) or an RGW service name."""
    return Change(RESTART, daemons, None, summary)


class ChangeTarget(Protocol):
    """What puts a state in place on the cluster (ClusterAccess, or a fake in tests)."""

    def config_value(self, who: str, option: str) -> Optional[str]: ...

    def put_config(self, who: str, option: str, value: Optional[str]) -> None: ...

    def service_spec(self, service_name: str) -> Optional[Dict[str, Any]]: ...

    def put_service(self, service_name: str, spec: Optional[Dict[str, Any]]) -> None: ...

    def restart(self, daemons: str) -> None: ...


def current_state(target: ChangeTarget, change: Change) -> Any:
    """The state a change replaces, read just before it is journaled."""
    if change.kind == CONFIG:
        who, option = change.target.split('/', 1)
        return target.config_value(who, option)
    if change.kind == SERVICE:
        return target.service_spec(change.target)
    return None


def put_state(target: ChangeTarget, kind: str, name: str, state: Any) -> None:
    """Put one state in place: a config value, a service spec, or a restart."""
    if kind == CONFIG:
        who, option = name.split('/', 1)
        target.put_config(who, option, state)
    elif kind == SERVICE:
        target.put_service(name, state)
    elif kind == RESTART:
        target.restart(name)
    else:
        raise ValueError('unknown kind of change %r' % kind)
