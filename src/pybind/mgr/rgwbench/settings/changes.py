"""The changes a setting makes, each of a kind that knows how to put a state in place.

A change is journaled with the state it replaces (`before`) and the state it
makes (`after`); making it and undoing it are the same operation, "put this
state in place", so undo is as well tested as apply and is idempotent.
"""
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Set

from ..cluster.secret_options import shown
from ..cluster.spec_fields import spec_part
from ..cluster.storage import STORAGE, AllowingDelete, State
from ..serial import HIDDEN

CONFIG, SERVICE, RESTART, USER = 'config', 'service', 'restart', 'user'
CONFIG_KEY = 'config-key'
# Restarts are undone after everything else: daemons must come back with the
# settings already put back.
UNDO_LAST = (RESTART,)


@dataclass(frozen=True)
class Change:
    kind: str
    target: str
    after: Any = field(metadata=HIDDEN)   # plans show the summary: `after` may hold a secret
    summary: str            # one line for plans and reports


def config_change(who: str, option: str, value: Optional[str]) -> Change:
    summary = ('ceph config rm %s %s' % (who, option) if value is None
               else 'ceph config set %s %s %s' % (who, option, shown(option, value)))
    return Change(CONFIG, '%s/%s' % (who, option), value, summary)


def config_key_change(key: str, value: Optional[str], summary: str) -> Change:
    """A value of the monitors' config-key store (the summary says what, never the value)."""
    return Change(CONFIG_KEY, key, value, summary)


def service_change(service_name: str, spec: Optional[Dict[str, Any]], summary: str) -> Change:
    return Change(SERVICE, service_name, spec, summary)


def user_change(uid: str, display_name: str) -> Change:
    """A run's own S3 user (no keys here: radosgw-admin makes them, see settings/s3user.py)."""
    return Change(USER, uid, {'display_name': display_name},
                  'radosgw-admin user create --uid %s (temporary: removed with its data '
                  'when the run ends)' % uid)


def storage_change(kind: str, name: str, state: Dict[str, Any], summary: str) -> Change:
    """An EC profile, CRUSH rule, pool or placement target the setting creates (its undo
    removes it)."""
    return Change(kind, name, state, summary)


def restart_change(daemons: str, summary: str) -> Change:
    """Restart a kind of daemon: `osd` (a host at a time, safely) or an RGW service name."""
    return Change(RESTART, daemons, None, summary)


class ChangeTarget(Protocol):
    """What puts a state in place on the cluster (ClusterAccess, or a fake in tests)."""

    def config_value(self, who: str, option: str) -> Optional[str]: ...

    def put_config(self, who: str, option: str, value: Optional[str]) -> None: ...

    def config_key(self, key: str) -> Optional[str]: ...

    def put_config_key(self, key: str, value: Optional[str]) -> None: ...

    def service_spec(self, service_name: str) -> Optional[Dict[str, Any]]: ...

    def put_service(self, service_name: str, spec: Optional[Dict[str, Any]],
                    replaced: Optional[Dict[str, Any]] = None) -> None: ...

    def restart(self, daemons: str) -> None: ...

    def remove_user(self, uid: str) -> None: ...

    def storage_state(self, kind: str, name: str) -> State: ...

    def put_storage(self, kind: str, name: str, state: State,
                    allowing_delete: AllowingDelete) -> None: ...


def current_state(target: ChangeTarget, change: Change) -> Any:
    """The state a change replaces, read just before it is journaled."""
    if change.kind == CONFIG:
        who, option = change.target.split('/', 1)
        return target.config_value(who, option)
    if change.kind == SERVICE:
        return target.service_spec(change.target)
    if change.kind == CONFIG_KEY:
        return target.config_key(change.target)
    if change.kind in STORAGE:
        return target.storage_state(change.kind, change.target)
    return None


def no_pool_delete(remove: Callable[[], None]) -> None:
    raise ValueError('a pool is removed only by an undo, which allows it for the while')


def put_state(target: ChangeTarget, kind: str, name: str, state: Any,
              allowing_delete: AllowingDelete = no_pool_delete, replaced: Any = None) -> None:
    """Put one state in place: a config value or key, a service spec, a restart, no user,
    a pool or what it needs (`allowing_delete` runs a pool's removal). `replaced`: the
    state an undo puts back over (a spec: what it left elsewhere goes too, even when a
    crash came between the spec put back and that)."""
    if kind == CONFIG:
        who, option = name.split('/', 1)
        target.put_config(who, option, state)
    elif kind == SERVICE:
        target.put_service(name, state, replaced)
    elif kind == CONFIG_KEY:
        target.put_config_key(name, state)
    elif kind == RESTART:
        target.restart(name)
    elif kind in STORAGE:
        target.put_storage(kind, name, state, allowing_delete)
    elif kind == USER:
        if state is not None:
            # Its keys must come back to the run: s3user.create_user makes it.
            raise ValueError('a user is created by s3user.create_user, not put in place')
        target.remove_user(name)
    else:
        raise ValueError('unknown kind of change %r' % kind)


# -- did someone else change a target? ----------------------------------------------------
COMPARED = (CONFIG, CONFIG_KEY, SERVICE)


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, sort_keys=True)


def _placement(spec: Any) -> Any:
    return (spec or {}).get('placement') if isinstance(spec, dict) else None


# Fields of a spec's top level a setting changes (rgw-cpus), beside its placement.
TOP_FIELDS = ('extra_container_args',)


def _argument_list(spec: Any, name: str) -> List[Any]:
    """A spec's list of container arguments in one form: Reef and later store a string
    as it was given and {argument, split} with `split` filled in."""
    items = (spec or {}).get(name) if isinstance(spec, dict) else None
    return [(str(i.get('argument')), bool(i.get('split'))) if isinstance(i, dict) else str(i)
            for i in items or []]


def same_state(kind: str, now: Any, known: Any, fields: Set[str]) -> bool:
    """Whether a target's state `now` is the `known` one.

    A spec is compared by its placement, its container arguments and by the `fields`
    the run's states name: the orchestrator adds defaults to a spec it stores, so a
    whole comparison would take its own normalisation for someone else's change."""
    if now is None or known is None:
        return now is None and known is None
    if kind != SERVICE:
        return _plain(now) == _plain(known)
    if _placement(known) is not None and \
            _plain(_placement(now) or {}) != _plain(_placement(known)):
        return False
    if any(_argument_list(now, f) != _argument_list(known, f) for f in TOP_FIELDS):
        return False
    have, want = spec_part(now), spec_part(known)
    return all(_plain(have.get(f)) == _plain(want.get(f)) or
               (not have.get(f) and not want.get(f)) for f in fields)


def changed_meanwhile(target: ChangeTarget, kind: str, name: str, before: Any,
                      left_in: List[Any]) -> Optional[str]:
    """Why a target holds neither a state the run left it in nor its `before`: someone
    else changed it during the run (None: it may be put back)."""
    if kind not in COMPARED:
        return None
    now = current_state(target, Change(kind, name, None, ''))
    fields: Set[str] = set()
    for state in [before] + left_in:
        fields |= set(spec_part(state))
    if any(same_state(kind, now, known, fields) for known in [before] + left_in):
        return None
    if kind == CONFIG:
        who, option = name.split('/', 1)
        return ('ceph config %s %s: now %s, not the run\'s %s; someone changed it during '
                'the run, so it is left as it is'
                % (who, option, shown(option, now), shown(option, left_in[0])))
    if kind == SERVICE:
        return ('service %s: its spec was %s during the run by someone else, so it is left '
                'as it is' % (name, 'removed' if now is None else 'changed'))
    return ('config-key %s: changed during the run by someone else, so it is left as it is'
            % name)
