"""What the checks read from the cluster, and the one adapter over the mgr that reads it.

Every method returns the data as the cluster reports it (the mgr's `get()` or a
mon command's JSON), unparsed: the checks parse it (facts.py), so unit tests
feed the same shapes a real cluster gives.
"""
import errno
import json
from typing import Any, Dict, List, Optional, Protocol, Tuple

from ..errors import RGWBenchError


class ClusterView(Protocol):
    def service_map(self) -> Dict[str, Any]:
        """The mgr's service map (RGW daemons and their metadata)."""

    def config_dump(self) -> List[Dict[str, Any]]:
        """`ceph config dump`: the central configuration, one entry per section and option."""

    def option_default(self, option: str) -> Optional[str]:
        """The running release's default of an option (`ceph config help`); None: unknown."""

    def health(self) -> Dict[str, Any]:
        """`ceph health detail` as JSON: status and checks."""

    def osd_map(self) -> Dict[str, Any]:
        """`ceph osd dump`: pools (sizes, pg_num and targets), OSD states, full ratios."""

    def osd_stats(self) -> List[Dict[str, Any]]:
        """Per OSD its space (kb, kb_used, kb_avail), as `ceph osd df` shows it."""

    def df(self) -> Dict[str, Any]:
        """`ceph df`: per pool what it stores and its max_avail."""

    def pg_summary(self) -> Dict[str, Any]:
        """PG states and their counts (`ceph pg dump` summary), in all and by pool."""

    def osd_metadata(self) -> Dict[str, Dict[str, Any]]:
        """Per OSD id its metadata (e.g. whether its device is rotational)."""


class Mgr(Protocol):
    def get(self, data_name: str) -> Any: ...

    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]: ...


class MgrClusterView:
    """ClusterView over the running MgrModule; `config help` answers are kept."""

    def __init__(self, mgr: Mgr) -> None:
        self.mgr = mgr
        self._defaults: Dict[str, Optional[str]] = {}

    def _mon(self, prefix: str, **args: Any) -> Any:
        ret, out, err = self.mgr.mon_command(dict(args, prefix=prefix, format='json'))
        if ret != 0:
            raise RGWBenchError('`ceph %s` failed: %s' % (prefix, err.strip() or ret),
                                ret or errno.EIO)
        return json.loads(out) if out.strip() else None

    def service_map(self) -> Dict[str, Any]:
        return dict(self.mgr.get('service_map') or {})

    def config_dump(self) -> List[Dict[str, Any]]:
        return list(self._mon('config dump') or [])

    def option_default(self, option: str) -> Optional[str]:
        if option not in self._defaults:
            ret, out, _ = self.mgr.mon_command({'prefix': 'config help', 'key': option,
                                                'format': 'json'})
            self._defaults[option] = default_from_help(json.loads(out)) \
                if ret == 0 and out.strip() else None
        return self._defaults[option]

    def health(self) -> Dict[str, Any]:
        return dict(json.loads((self.mgr.get('health') or {}).get('json') or '{}'))

    def osd_map(self) -> Dict[str, Any]:
        osd_map = self.mgr.get('osd_map') or {}
        if not osd_map.get('epoch'):
            raise RGWBenchError('the manager has no OSD map yet; try again in a moment',
                                errno.EAGAIN)
        return dict(osd_map)

    def osd_stats(self) -> List[Dict[str, Any]]:
        return list((self.mgr.get('osd_stats') or {}).get('osd_stats') or [])

    def df(self) -> Dict[str, Any]:
        return dict(self.mgr.get('df') or {})

    def pg_summary(self) -> Dict[str, Any]:
        return dict(self.mgr.get('pg_summary') or {})

    def osd_metadata(self) -> Dict[str, Dict[str, Any]]:
        return dict(self.mgr.get('osd_metadata') or {})


def default_from_help(info: Any) -> Optional[str]:
    """The default `config help -f json` reports: a daemon's own, if it has one."""
    if isinstance(info, list):  # some releases answer with a list of one
        info = info[0] if info else {}
    if not isinstance(info, dict):
        return None
    for key in ('daemon_default', 'default'):
        value = info.get(key)
        if value is not None and value != '':
            return json.dumps(value) if isinstance(value, bool) else str(value)
    return '' if 'default' in info else None
