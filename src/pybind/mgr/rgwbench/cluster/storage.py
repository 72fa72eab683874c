"""Erasure-code profiles, CRUSH rules, pools and RGW placement targets: each read as a
state and put in place from one (None: it is not there), for the settings' journal.

Putting a state in place only ever creates what is missing or removes what is there:
one that exists already is left as it is, so that an undo never removes what was
there before the run (a setting refuses such a name when it plans)."""
import errno
from typing import Any, Callable, Dict, Optional, Protocol

from ..errors import RGWBenchError
from .rgw_admin import ZoneAdmin

EC_PROFILE, CRUSH_RULE, POOL, PLACEMENT = 'ec-profile', 'crush-rule', 'pool', 'placement'
STORAGE = (EC_PROFILE, CRUSH_RULE, POOL, PLACEMENT)
# Pools of a study are small: the autoscaler grows them if the load needs it.
PG_NUM = 8
POOL_TYPES = {1: 'replicated', 3: 'erasure'}
ALLOW_POOL_DELETE = ('mon', 'mon_allow_pool_delete')

State = Optional[Dict[str, Any]]
# Runs what it is given while the monitors allow pools to be removed.
AllowingDelete = Callable[[Callable[[], None]], None]


class MonCommands(Protocol):
    def command_json(self, **cmd: Any) -> Any: ...


def _missing(e: RGWBenchError) -> bool:
    return abs(e.errno or 0) == errno.ENOENT


def ec_profile(mon: MonCommands, name: str) -> State:
    try:
        found = mon.command_json(prefix='osd erasure-code-profile get', name=name)
    except RGWBenchError as e:
        if _missing(e):
            return None
        raise
    return dict(found) if found else None


def crush_rule(mon: MonCommands, name: str) -> State:
    if name not in (mon.command_json(prefix='osd crush rule ls') or []):
        return None
    found = mon.command_json(prefix='osd crush rule dump', name=name) or {}
    return {'type': found.get('type')}


def pool(mon: MonCommands, name: str) -> State:
    for found in mon.command_json(prefix='osd pool ls', detail='detail') or []:
        if found.get('pool_name') == name:
            state: Dict[str, Any] = {'type': POOL_TYPES.get(found.get('type'), 'unknown'),
                                     'size': found.get('size')}
            if found.get('erasure_code_profile'):
                state['profile'] = found['erasure_code_profile']
            return state
    return None


def put_ec_profile(mon: MonCommands, name: str, state: State) -> None:
    if state is None:
        mon.command_json(prefix='osd erasure-code-profile rm', name=name)
    elif ec_profile(mon, name) is None:
        mon.command_json(prefix='osd erasure-code-profile set', name=name,
                         profile=['%s=%s' % kv for kv in sorted(state.items())])


def put_crush_rule(mon: MonCommands, name: str, state: State) -> None:
    if state is None:
        if crush_rule(mon, name) is not None:
            mon.command_json(prefix='osd crush rule rm', name=name)
    elif crush_rule(mon, name) is None:
        mon.command_json(prefix='osd crush rule create-erasure', name=name,
                         profile=state['profile'])


def put_pool(mon: MonCommands, name: str, state: State,
             allowing_delete: AllowingDelete) -> None:
    """Create the pool (RGW's application enabled on it), or remove it: the monitors
    remove a pool only while `mon_allow_pool_delete` is true, which `allowing_delete`
    makes so for as long as its argument runs."""
    if state is None:
        if pool(mon, name) is not None:
            allowing_delete(lambda: mon.command_json(
                prefix='osd pool delete', pool=name, pool2=name,
                yes_i_really_really_mean_it=True))
        return
    if pool(mon, name) is not None:
        return
    if state['type'] == 'erasure':
        mon.command_json(prefix='osd pool create', pool=name, pg_num=PG_NUM,
                         pool_type='erasure', erasure_code_profile=state['profile'],
                         rule=state['rule'])
    else:
        mon.command_json(prefix='osd pool create', pool=name, pg_num=PG_NUM,
                         pool_type='replicated')
        mon.command_json(prefix='osd pool set', pool=name, var='size',
                         val=str(state['size']), yes_i_really_mean_it=True)
    mon.command_json(prefix='osd pool application enable', pool=name, app='rgw')


def placement(zones: ZoneAdmin, name: str) -> State:
    found = zones.zone_placement()
    if name not in found.data_pools and name not in found.targets:
        return None
    return {'data_pool': found.data_pools.get(name)}


def put_placement(zones: ZoneAdmin, name: str, state: State) -> None:
    if state is None:
        zones.remove_placement(name)
    elif placement(zones, name) is None:
        zones.add_placement(name, state['data_pool'])


def up_osds_by_host(tree: Dict[str, Any]) -> Dict[str, int]:
    """How many OSDs are up on each host, from `osd tree`."""
    nodes = {n.get('id'): n for n in tree.get('nodes') or []}
    found: Dict[str, int] = {}
    for node in nodes.values():
        if node.get('type') != 'host':
            continue
        found[str(node.get('name'))] = sum(
            1 for child in node.get('children') or []
            if (nodes.get(child) or {}).get('status') == 'up')
    return found
