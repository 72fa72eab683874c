"""OSDs as the mgr reports them, for tests of their restarts: `osd dump`, `osd tree`,
`osd ok-to-stop` and the PG stats."""
import errno
import json
from typing import Any, Dict, List, Optional, Set, Tuple


def pg_stat(pgid: str, osds: List[int], epoch: int, state: str = 'active+clean') -> Dict[str, Any]:
    return {'pgid': pgid, 'state': state, 'up': osds, 'acting': osds, 'reported_epoch': epoch}


class OsdRestartMgr:
    """OSDs on hosts (`hosts`: host to its OSDs; by default two hosts of one OSD each)
    that are up again as soon as they are restarted, whose PGs the mgr shows as they
    were before (active+clean) for a few reads of `pg_stats`. OSDs in `down` or `out`
    are so in the OSD map; `ok-to-stop` refuses more than `stoppable` OSDs at once."""

    def __init__(self, stale_reads: int, hosts: Optional[Dict[str, List[int]]] = None,
                 stoppable: int = 64) -> None:
        self.epoch = 10
        self.hosts = hosts if hosts is not None else {'h0': [0], 'h1': [1]}
        self.up_from = {o: 5 + o for osds in self.hosts.values() for o in osds}
        self.reported = 9
        self.stale_reads = stale_reads
        self.stale_left = 0
        self.stale_when_restarted: List[int] = []
        self.down: Set[int] = set()
        self.out: Set[int] = set()
        self.stoppable = stoppable
        self.asked: List[List[int]] = []      # each `ok-to-stop`'s OSDs
        self.restarted: List[str] = []
        # the OSDs restarted between two waits for them (each a group)
        self.groups: List[List[int]] = [[]]

    def mon_command(self, cmd: Dict[str, Any], inbuf: str = '') -> Tuple[int, str, str]:
        if cmd['prefix'] == 'osd ok-to-stop':
            ids = [int(i) for i in cmd['ids']]
            self.asked.append(ids)
            if len(ids) > self.stoppable:
                return -errno.EBUSY, '', 'unsafe to stop osd(s) at this time (8 PGs are or ' \
                    'would become offline)'
            return 0, '', ''
        if cmd['prefix'] == 'osd tree':
            nodes: List[Dict[str, Any]] = [{'id': -1, 'name': 'default', 'type': 'root',
                                            'children': [-2 - i for i in range(len(self.hosts))]}]
            for i, (host, osds) in enumerate(sorted(self.hosts.items())):
                nodes.append({'id': -2 - i, 'name': host, 'type': 'host', 'children': osds})
                nodes += [{'id': o, 'name': 'osd.%d' % o, 'type': 'osd',
                           'status': 'down' if o in self.down else 'up'} for o in osds]
            return 0, json.dumps({'nodes': nodes}), ''
        assert cmd['prefix'] == 'osd dump', cmd
        return 0, json.dumps({'epoch': self.epoch, 'osds': [
            {'osd': o, 'up': 0 if o in self.down else 1, 'in': 0 if o in self.out else 1,
             'up_from': u} for o, u in sorted(self.up_from.items())]}), ''

    def daemon_action(self, action: str, daemon_name: str, image: Optional[str] = None) -> None:
        self.stale_when_restarted.append(self.stale_left)
        self.restarted.append(daemon_name)
        self.groups[-1].append(int(daemon_name.split('.')[1]))
        self.epoch += 2   # down, then up again
        self.up_from[int(daemon_name.split('.')[1])] = self.epoch
        self.stale_left = self.stale_reads

    def get(self, data_name: str) -> Any:
        if data_name == 'pg_summary':
            return {'by_pool': {'1': {'active+clean': 2}}}
        assert data_name == 'pg_stats'
        if self.groups[-1]:
            self.groups.append([])   # waited for: the next restart is another group
        if self.stale_left:
            self.stale_left -= 1
        else:
            self.reported = self.epoch
        osds = sorted(self.up_from)
        return {'pg_stats': [pg_stat('1.%d' % i, [o, osds[(i + 1) % len(osds)]],
                                     self.reported) for i, o in enumerate(osds)]}

    def restarted_groups(self) -> List[List[int]]:
        return [g for g in self.groups if g]
