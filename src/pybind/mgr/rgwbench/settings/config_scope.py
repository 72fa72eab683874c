"""Which `ceph config` options the `config` setting may change: those of the study.

rgwbench measures what RGW, OSD and messenger options do to S3 performance. Its
`config` setting runs with the mgr's caps, so without a limit anyone allowed to
start a run (or a stored profile, from the panel) could change the cluster's
authentication, or point RGW's secrets at another key server. An option is
accepted only at a section where it changes a performance path (RGW's at
`client.rgw[.<name>]`, the OSDs' at `osd[.N]`, the messenger's at any of those,
`client` or `global`); mon and mgr sections, authentication, keys, KMS and
keystone are refused whatever the name looks like. The module option
`config_allow` widens the list, one `<section>/<option>` (glob patterns allowed)
per comma, for an operator who means it.
"""
import fnmatch
import re
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Sequence

from ..errors import InvalidInput

ALLOW_OPTION = 'config_allow'

RGW = frozenset({'client.rgw'})
OSD = frozenset({'osd'})
MESSENGER = frozenset({'global', 'client', 'client.rgw', 'osd'})


@dataclass(frozen=True)
class Allowed:
    """Options (glob patterns) that may be set at these kinds of section."""
    patterns: Sequence[str]
    sections: FrozenSet[str]


STUDY: List[Allowed] = [
    # RGW: threads and frontends, request and chunk sizes, caches, index shards,
    # concurrency throttles, logging that costs per request.
    Allowed(('rgw_thread_pool_size', 'rgw_frontends', 'rgw_max_concurrent_requests',
             'rgw_max_chunk_size', 'rgw_obj_stripe_size', 'rgw_put_obj_min_window_size',
             'rgw_get_obj_window_size', 'rgw_get_obj_max_req_size', 'rgw_cache_enabled',
             'rgw_cache_lru_size', 'rgw_bucket_index_max_aio',
             'rgw_override_bucket_index_max_shards',
             'rgw_max_objs_per_shard', 'rgw_dynamic_resharding', 'rgw_enable_ops_log',
             'rgw_enable_usage_log', 'rgw_ops_log_rados', 'rgw_list_buckets_max_chunk',
             'rgw_max_listing_results', 'rgw_max_dynamic_shards', 'rgw_beast_enable_async',
             'rgw_num_async_rados_threads', 'rgw_rados_pool_*', 'rgw_gc_max_concurrent_io',
             'rgw_lc_max_worker', 'rgw_md_log_max_shards', 'rgw_data_log_num_shards',
             'rgw_data_log_window', 'rgw_bucket_default_quota_*', 'rgw_dmclock_*',
             'rgw_scheduler_type', 'rgw_max_put_size', 'rgw_max_put_param_size',
             'rgw_multipart_min_part_size', 'rgw_verify_ssl'), RGW),
    # The OSDs: op shards and threads, queues and QoS, memory and BlueStore's caches
    # and throttles, recovery's share.
    Allowed(('osd_op_num_shards*', 'osd_op_num_threads_per_shard*', 'osd_op_queue*',
             'osd_mclock_*', 'osd_memory_target*', 'osd_memory_cache_*',
             'osd_client_message_*', 'osd_max_backfills', 'osd_recovery_max_active*',
             'osd_recovery_sleep*', 'osd_recovery_op_priority', 'osd_client_op_priority',
             'osd_pg_log_*', 'osd_max_write_size', 'osd_deep_scrub_*', 'osd_scrub_*',
             'bluestore_cache_*', 'bluestore_throttle_*', 'bluestore_deferred_*',
             'bluestore_prefer_deferred_size*', 'bluestore_min_alloc_size*',
             'bluestore_max_blob_size*', 'bluestore_compression_*', 'bluestore_csum_type',
             'bluestore_rocksdb_options', 'bluestore_shard_finishers', 'bluefs_buffered_io'),
            OSD),
    # The messenger and the RADOS client (RGW's objecter).
    Allowed(('ms_async_op_threads', 'ms_async_max_op_threads', 'ms_dispatch_throttle_bytes',
             'ms_tcp_nodelay', 'ms_tcp_rcvbuf', 'ms_tcp_prefetch_max_size',
             'ms_max_backoff', 'ms_crc_data', 'ms_crc_header', 'ms_cluster_mode',
             'ms_service_mode', 'ms_client_mode', 'objecter_inflight_ops',
             'objecter_inflight_op_bytes', 'rados_osd_op_timeout'), MESSENGER),
    # Debug levels of the daemons under study.
    Allowed(('debug_*',), MESSENGER),
]

# Never accepted without config_allow, even where a pattern above would match.
REFUSED = re.compile(r'auth|key|secret|password|token|keystone|kms|vault|kmip|barbican|'
                     r'ldap|opa_|sts_|crypt|admin|cert|ssl_|mon_|mgr_|^mon|^mgr')


def section_kind(who: str) -> str:
    """`client.rgw.foo` -> `client.rgw`, `osd.3` -> `osd`."""
    if who.startswith('client.rgw'):
        return 'client.rgw'
    if who.startswith('osd'):
        return 'osd'
    return who


def widened(text: Optional[str]) -> List[str]:
    """The `<section>/<option>` patterns of config_allow."""
    return [p.strip() for p in str(text or '').split(',') if p.strip()]


def in_study(who: str, option: str) -> bool:
    if REFUSED.search(option):
        return False
    kind = section_kind(who)
    return any(kind in allowed.sections and
               any(fnmatch.fnmatchcase(option, p) for p in allowed.patterns)
               for allowed in STUDY)


def allowed(who: str, option: str, extra: Sequence[str] = ()) -> bool:
    """Whether `config` may set who/option: in the study, or widened by the operator."""
    key = '%s/%s' % (who, option)
    return in_study(who, option) or any(fnmatch.fnmatchcase(key, p) for p in extra)


def check(keys: Sequence[str], extra: Sequence[str] = ()) -> None:
    """InvalidInput (EINVAL, one line) naming the first <who>/<option> outside the study."""
    for key in keys:
        who, _, option = key.partition('/')
        if not allowed(who, option, extra):
            raise InvalidInput(
                'config: %s is outside what rgwbench changes (RGW, OSD and messenger '
                'performance options, at the sections where they apply); nothing was '
                'changed; to allow it anyway: `ceph config set mgr mgr/rgwbench/%s %s`'
                % (key, ALLOW_OPTION, key))
