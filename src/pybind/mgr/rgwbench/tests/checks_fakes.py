"""A ClusterView fake: a healthy three-OSD cluster, as real clusters report it, and the
changes tests make to it (filled, in HEALTH_ERR, roomy)."""
import copy
from typing import Any, Dict, List, Optional

from fixtures import rgw_service_map

GiB = 1 << 30
GIB_KB = 1 << 20
DATA_POOL = 'default.rgw.buckets.data'

DEFAULTS = {
    'debug_rgw': '1/5', 'debug_ms': '0/0', 'debug_osd': '1/5',
    'rgw_frontends': 'beast port=7480', 'rgw_enable_ops_log': 'false',
    'rgw_ops_log_rados': 'true', 'rgw_ops_log_file_path': '', 'rgw_ops_log_socket_path': '',
    'osd_op_num_shards': '0', 'osd_op_num_shards_hdd': '5', 'osd_op_num_shards_ssd': '8',
    'rgw_max_chunk_size': '4194304', 'osd_pool_default_size': '3',
    'osd_memory_target': '4294967296', 'bluestore_cache_autotune': 'true',
    'bluestore_cache_size': '0', 'bluestore_cache_size_hdd': '1073741824',
    'bluestore_cache_size_ssd': '3221225472',
    'rgw_d3n_l1_local_datacache_enabled': 'false', 'rgw_d3n_l1_datacache_size': '1073741824',
    'rgw_thread_pool_size': '512', 'rgw_max_concurrent_requests': '1024',
    'rgw_scheduler_type': 'throttler',
}


def pool(pool_id: int, name: str, pg_num: int = 32, size: int = 3,
         apps: Optional[List[str]] = None, **more: Any) -> Dict[str, Any]:
    data = {'pool': pool_id, 'pool_name': name, 'type': 1, 'size': size, 'min_size': 1,
            'pg_num': pg_num, 'pg_num_target': pg_num, 'pg_placement_num': pg_num,
            'pg_placement_num_target': pg_num, 'pg_autoscale_mode': 'on',
            'erasure_code_profile': '', 'crush_rule': 0,
            'application_metadata': {a: {} for a in (['rgw'] if apps is None else apps)}}
    data.update(more)
    return data


class FakeView:
    """Every answer a copy of what tests set; config help answers from `defaults`."""

    def __init__(self) -> None:
        self.services = rgw_service_map(**{'default.vm.a': 'beast port=8000 tcp_nodelay=1'})
        self.config: List[Dict[str, Any]] = [
            self.entry('client.rgw.default.vm.a', 'rgw_frontends',
                       'beast port=8000 tcp_nodelay=1', runtime=False)]
        self.defaults: Dict[str, Optional[str]] = dict(DEFAULTS)
        self.health_data: Dict[str, Any] = {'status': 'HEALTH_OK', 'checks': {},
                                            'mutes': []}
        self.map: Dict[str, Any] = {
            'epoch': 20, 'full_ratio': 0.95, 'backfillfull_ratio': 0.9,
            'nearfull_ratio': 0.85,
            'osds': [{'osd': i, 'up': 1, 'in': 1, 'weight': 1.0, 'primary_affinity': 1.0,
                      'state': ['exists', 'up']} for i in range(3)],
            'pools': [pool(1, '.mgr', 1, apps=['mgr']), pool(2, '.rgw.root', 8),
                      pool(3, 'default.rgw.buckets.index', 8), pool(4, DATA_POOL, 32)],
            'erasure_code_profiles': {'default': {'k': '2', 'm': '2', 'plugin': 'jerasure'}},
        }
        # 100 GiB OSDs, 10 GiB used each
        self.stats: List[Dict[str, Any]] = [
            {'osd': i, 'kb': 100 * GIB_KB, 'kb_used': 10 * GIB_KB, 'kb_avail': 90 * GIB_KB}
            for i in range(3)]
        self.df_data: Dict[str, Any] = {
            'stats': {'total_bytes': 300 << 30},
            'pools': [{'name': DATA_POOL, 'id': 4,
                       'stats': {'stored': 0, 'max_avail': 80 << 30}}]}
        self.pgs: Dict[str, Any] = {'all': {'active+clean': 57}, 'by_pool': {}}
        self.metadata: Dict[str, Dict[str, Any]] = {
            str(i): {'rotational': '0', 'hostname': 'vm'} for i in range(3)}

    @staticmethod
    def entry(section: str, option: str, value: str, mask: str = '',
              runtime: bool = True) -> Dict[str, Any]:
        return {'section': section, 'name': option, 'value': value, 'level': 'advanced',
                'can_update_at_runtime': runtime, 'mask': mask}

    def set(self, section: str, option: str, value: str, mask: str = '',
            runtime: bool = True) -> 'FakeView':
        self.config.append(self.entry(section, option, value, mask, runtime))
        return self

    def data_pool(self) -> Dict[str, Any]:
        found: Dict[str, Any] = next(p for p in self.map['pools']
                                     if p['pool_name'] == DATA_POOL)
        return found

    # -- ClusterView
    def service_map(self) -> Dict[str, Any]:
        return copy.deepcopy(self.services)

    def config_dump(self) -> List[Dict[str, Any]]:
        return copy.deepcopy(self.config)

    def option_default(self, option: str) -> Optional[str]:
        return self.defaults.get(option)

    def health(self) -> Dict[str, Any]:
        return copy.deepcopy(self.health_data)

    def osd_map(self) -> Dict[str, Any]:
        return copy.deepcopy(self.map)

    def osd_stats(self) -> List[Dict[str, Any]]:
        return copy.deepcopy(self.stats)

    def df(self) -> Dict[str, Any]:
        return copy.deepcopy(self.df_data)

    def pg_summary(self) -> Dict[str, Any]:
        return copy.deepcopy(self.pgs)

    def osd_metadata(self) -> Dict[str, Dict[str, Any]]:
        return copy.deepcopy(self.metadata)


def filled(view: FakeView) -> FakeView:
    """Every OSD at 70 % of its 100 GiB: 10 GiB of room before nearfull less the margin."""
    for stats in view.stats:
        stats['kb_avail'] = 30 * (1 << 20)
    return view


def health_err(view: FakeView) -> FakeView:
    view.health_data = {'status': 'HEALTH_ERR', 'checks': {'OSD_FULL': {
        'severity': 'HEALTH_ERR', 'summary': {'message': '1 full osd(s)'}, 'detail': []}}}
    return view


def roomy(view: FakeView) -> FakeView:
    """OSDs of 10 TiB: the capacity estimate never refuses what these tests read."""
    for stats in view.stats:
        stats.update(kb=10240 * GIB_KB, kb_avail=10000 * GIB_KB)
    view.df_data['pools'][0]['stats']['max_avail'] = 10000 * GiB
    return view
