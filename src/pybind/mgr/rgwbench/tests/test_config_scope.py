"""The `config` setting changes only options of the study, at the sections they apply to."""
from typing import Any, Dict, Optional

import pytest
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster
from rgwbench.tests.settings_fakes import summaries

from rgwbench.errors import InvalidInput
from rgwbench.settings import config_scope
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import SettingContext
from rgwbench.settings.daemon_settings import ConfigOption, RGWRestart


class KnowsEveryOption(FakeCluster):
    """`config help` knows any option (the refusal must not depend on it)."""

    def command_json(self, **cmd: Any) -> Any:
        assert cmd['prefix'] == 'config help'
        return {'name': cmd['key'], 'can_update_at_runtime': True}


def applier(cluster: FakeCluster, options: Optional[Dict[str, str]] = None) -> SettingsApplier:
    ctx = SettingContext(cluster=cluster,  # type: ignore[arg-type]
                         rgw_service=lambda: 'rgw.default', option=(options or {}).get,
                         secrets=MemoryStore(), release=16)
    return SettingsApplier(ctx, [ConfigOption(), RGWRestart()])


@pytest.mark.parametrize('key', [
    'global/auth_cluster_required', 'global/auth_allow_insecure_global_id_reclaim',
    'client.rgw/rgw_crypt_vault_addr', 'client.rgw/rgw_keystone_url',
    'client.rgw/rgw_crypt_s3_kms_backend', 'client.rgw.default/rgw_crypt_require_ssl',
    'client.rgw/rgw_s3_auth_use_keystone', 'mon/mon_allow_pool_delete',
    'mgr/mgr_stats_period', 'mon/debug_mon', 'client.rgw/rgw_dns_name',
    # an option of the study, at a section where it does not apply
    'global/rgw_thread_pool_size', 'osd/rgw_thread_pool_size',
    'client.rgw/osd_op_num_shards', 'client/bluestore_cache_size',
])
def test_options_outside_the_study_are_refused_naming_them_and_nothing_changes(
        key: str) -> None:
    cluster = KnowsEveryOption()
    before = dict(cluster.config)
    with pytest.raises(InvalidInput) as refused:
        applier(cluster).plan({'config': {'client.rgw/rgw_thread_pool_size': 128, key: 'x'}})
    message = str(refused.value)
    assert message.startswith('config: %s is outside what rgwbench changes' % key)
    assert '\n' not in message and 'mgr/rgwbench/config_allow %s' % key in message
    assert refused.value.errno == -22  # EINVAL
    assert cluster.config == before and cluster.calls == []


@pytest.mark.parametrize('key', [
    'client.rgw/rgw_thread_pool_size', 'client.rgw.default/rgw_max_concurrent_requests',
    'client.rgw/rgw_frontends', 'client.rgw/rgw_cache_lru_size',
    'client.rgw/rgw_override_bucket_index_max_shards', 'osd/osd_op_num_shards_ssd',
    'osd.3/osd_memory_target', 'osd/bluestore_cache_size', 'osd/bluestore_throttle_bytes',
    'global/ms_async_op_threads', 'client.rgw/objecter_inflight_ops', 'osd/debug_osd',
    'client.rgw/debug_rgw', 'osd/ms_cluster_mode',
])
def test_performance_options_at_their_sections_are_accepted(key: str) -> None:
    assert config_scope.allowed(*key.split('/', 1))


def test_the_thread_pool_still_works_end_to_end() -> None:
    plans = applier(KnowsEveryOption()).plan(
        {'config': {'client.rgw/rgw_thread_pool_size': 128}})
    assert summaries(plans) == ['ceph config set client.rgw rgw_thread_pool_size 128',
                                'ceph orch restart rgw.default']


def test_config_allow_widens_the_list_by_section_and_option() -> None:
    widened = {'config_allow': 'client.rgw/rgw_keystone_*, mon/mon_allow_pool_delete'}
    plans = applier(KnowsEveryOption(), widened).plan(
        {'config': {'client.rgw/rgw_keystone_url': 'http://k:5000',
                    'mon/mon_allow_pool_delete': 'true'}})
    assert 'ceph config set client.rgw rgw_keystone_url http://k:5000' in summaries(plans)
    # only at the section named
    with pytest.raises(InvalidInput, match='global/rgw_keystone_url is outside'):
        applier(KnowsEveryOption(), widened).plan(
            {'config': {'global/rgw_keystone_url': 'http://k:5000'}})


def test_a_module_without_the_option_widens_nothing() -> None:
    def unknown(name: str) -> str:
        raise RuntimeError("Config option '%s' is not in rgwbench.MODULE_OPTIONS" % name)

    ctx = SettingContext(cluster=KnowsEveryOption(),  # type: ignore[arg-type]
                         rgw_service=lambda: 'rgw.default', option=unknown,
                         secrets=MemoryStore(), release=16)
    with pytest.raises(InvalidInput, match='global/auth_cluster_required is outside'):
        SettingsApplier(ctx, [ConfigOption()]).plan(
            {'config': {'global/auth_cluster_required': 'none'}})


@pytest.mark.parametrize('key', ['client.rgw/rgw_thread_pool_size\n',
                                 'client.rgw\n/rgw_thread_pool_size', 'osd.1\n/debug_osd'])
def test_a_name_with_a_trailing_newline_is_refused(key: str) -> None:
    with pytest.raises(InvalidInput, match='is not valid'):
        ConfigOption().parse({key: 128})
