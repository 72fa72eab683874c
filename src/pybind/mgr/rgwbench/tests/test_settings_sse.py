"""The `sse` setting: parsing, plans (with refusals), clients and the write check."""
import base64
import json
from typing import Any, Dict, List, Optional

import pytest

from rgwbench.errors import InvalidInput, NotSupported
from rgwbench.serial import dump
from rgwbench.tests.s3stub import StubS3
from rgwbench.loadgen.sse import SSE
from rgwbench.settings.base import ClientSide, SettingNotInEffect
from rgwbench.settings.changes import (CONFIG, RESTART, SERVICE, Change, config_change,
                                       service_change)
from rgwbench.settings.registry import all_settings
from rgwbench.settings.sse import ServerSideEncryption, check_write, parse_version

from rgwbench.tests.sse_fakes import PACIFIC, RGW_SPEC, context, plan

KMIP = {'sse_kmip_addr': '127.0.0.1:5696', 'sse_kmip_ca_path': '/etc/ceph/kmip/ca.crt',
        'sse_kmip_client_cert': '/etc/ceph/kmip/rgw.crt',
        'sse_kmip_client_key': '/etc/ceph/kmip/rgw.key', 'sse_kmip_key_id': 'bench-key'}
VAULT = {'sse_vault_addr': 'http://127.0.0.1:8200', 'sse_vault_auth': 'token',
         'sse_vault_secret_engine': 'transit', 'sse_vault_token_file': '/etc/ceph/vault.token',
         'sse_vault_key_id': 'bench/key'}


def configs(changes: List[Change]) -> Dict[str, Any]:
    return {c.target: c.after for c in changes if c.kind == CONFIG}


def test_parse() -> None:
    setting = ServerSideEncryption()
    for value in ('kms-testing', 'kms-kmip', 'kms-vault', 'sse-c', 'sse-s3', 'off'):
        assert setting.parse(value) == value
    assert setting.parse(' KMS-Testing ') == 'kms-testing'
    for bad in ('on', 'kms', '', 'sse-kms'):
        with pytest.raises(InvalidInput) as e:
            setting.parse(bad)
        assert str(e.value).startswith('sse: ')
        assert 'kms-testing, kms-kmip, kms-vault, sse-c, sse-s3, off' in str(e.value)


def test_registered_after_every_setting_that_changes_rgw() -> None:
    # sse plans against the RGW spec the others leave; rgw-restart only restarts
    assert [s.name for s in all_settings()][-2:] == ['sse', 'rgw-restart']


def test_off_changes_nothing() -> None:
    ctx = context()
    assert plan(ctx, 'off') == []
    assert ServerSideEncryption().client(ctx, 'off', ClientSide()) == ClientSide()


def test_kms_testing_plan_key_kept_and_hidden() -> None:
    ctx = context()
    changes = plan(ctx, 'kms-testing')
    key_id, key = configs(changes)['client.rgw/rgw_crypt_s3_kms_encryption_keys'].split('=', 1)
    assert len(base64.b64decode(key)) == 32
    assert configs(changes) == {
        'client.rgw/rgw_crypt_s3_kms_backend': 'testing',
        'client.rgw/rgw_crypt_s3_kms_encryption_keys': '%s=%s' % (key_id, key),
        'client.rgw/rgw_crypt_require_ssl': 'false'}
    assert changes[-1].kind == RESTART and changes[-1].target == 'rgw.default'
    assert [c.kind for c in changes].count(RESTART) == 1
    # the key is never in what plans show
    assert all(key not in c.summary for c in changes)
    assert any('%s=<secret>' % key_id in c.summary for c in changes)
    # plan and apply agree: the same key the next time
    assert plan(ctx, 'kms-testing') == changes
    client = ServerSideEncryption().client(ctx, 'kms-testing', ClientSide())
    assert client.sse == {'sse_kms_key_id': key_id}
    assert dump(client.shown())['sse_kms_key_id'] == key_id
    assert key not in json.dumps(dump(client.shown()))


def test_kms_testing_keeps_keys_already_there_and_is_in_place_once_applied() -> None:
    ctx = context()
    cluster: Any = ctx.cluster
    cluster.config[('client.rgw', 'rgw_crypt_s3_kms_encryption_keys')] = 'theirs=AAAA'
    changes = plan(ctx, 'kms-testing')
    keys = configs(changes)['client.rgw/rgw_crypt_s3_kms_encryption_keys'].split()
    assert keys[0] == 'theirs=AAAA' and len(keys) == 2
    assert 'theirs=<secret>' in ' '.join(c.summary for c in changes)
    for change in changes:
        if change.kind == CONFIG:
            cluster.config[tuple(change.target.split('/', 1))] = change.after
    assert plan(ctx, 'kms-testing') == []


def test_kms_kmip_refused_naming_the_missing_option() -> None:
    for missing in sorted(KMIP):
        options = dict(KMIP)
        del options[missing]
        with pytest.raises(InvalidInput) as e:
            plan(context(options), 'kms-kmip')
        assert 'set mgr/rgwbench/%s first' % missing in str(e.value)
        assert '\n' not in str(e.value)


def test_kms_kmip_plan_and_client() -> None:
    ctx = context(KMIP)
    changes = plan(ctx, 'kms-kmip')
    assert configs(changes) == {
        'client.rgw/rgw_crypt_s3_kms_backend': 'kmip',
        'client.rgw/rgw_crypt_kmip_addr': '127.0.0.1:5696',
        'client.rgw/rgw_crypt_kmip_ca_path': '/etc/ceph/kmip/ca.crt',
        'client.rgw/rgw_crypt_kmip_client_cert': '/etc/ceph/kmip/rgw.crt',
        'client.rgw/rgw_crypt_kmip_client_key': '/etc/ceph/kmip/rgw.key',
        'client.rgw/rgw_crypt_require_ssl': 'false'}
    assert changes[-1].kind == RESTART
    assert ServerSideEncryption().client(ctx, 'kms-kmip', ClientSide()).sse == {
        'sse_kms_key_id': 'bench-key'}


@pytest.mark.parametrize('value, options, files', [
    ('kms-kmip', KMIP, ['/etc/ceph/kmip/ca.crt', '/etc/ceph/kmip/rgw.crt',
                        '/etc/ceph/kmip/rgw.key']),
    ('kms-vault', VAULT, ['/etc/ceph/vault.token'])])
def test_under_cephadm_the_files_rgw_reads_are_mounted_into_its_containers(
        value: str, options: Dict[str, str], files: List[str]) -> None:
    ctx = context(options)
    assert [c for c in plan(ctx, value) if c.kind == SERVICE] == []   # RGW on the host
    ctx.cluster.backend_module = 'cephadm'  # type: ignore[attr-defined]
    ctx.cluster.specs['rgw.default']['extra_container_args'] = [  # type: ignore[attr-defined]
        '--cpus=2', '--volume=/etc/ceph/kmip/ca.crt:/etc/ceph/kmip/ca.crt:ro']
    changes = plan(ctx, value)
    # the spec first (cephadm redeploys RGW with the files), the options, RGW's restart
    assert [c.kind for c in changes][0] == SERVICE and changes[-1].kind == RESTART
    args = changes[0].after['extra_container_args']
    wanted = ['--volume=%s:%s:ro' % (f, f) for f in files
              if f != '/etc/ceph/kmip/ca.crt']        # mounted already: not twice
    assert args == ['--cpus=2', '--volume=/etc/ceph/kmip/ca.crt:/etc/ceph/kmip/ca.crt:ro'] + \
        wanted
    assert all(f in changes[0].summary for f in files)


def test_under_cephadm_the_notes_say_which_user_must_read_the_files() -> None:
    ctx = context(VAULT)
    assert not [n for n in ServerSideEncryption().notes(ctx, 'sse-s3') if 'uid' in n]
    ctx.cluster.backend_module = 'cephadm'  # type: ignore[attr-defined]
    found = [n for n in ServerSideEncryption().notes(ctx, 'kms-vault') if 'uid 167' in n]
    assert len(found) == 1 and '/etc/ceph/vault.token' in found[0], found
    kmip = ServerSideEncryption().notes(context(KMIP), 'kms-kmip')
    assert not [n for n in kmip if 'uid' in n]          # not cephadm
    ctx = context(KMIP)
    ctx.cluster.backend_module = 'cephadm'  # type: ignore[attr-defined]
    found = [n for n in ServerSideEncryption().notes(ctx, 'kms-kmip') if 'uid 167' in n]
    assert found and '/etc/ceph/kmip/rgw.key' in found[0] and '5696' not in found[0]


def test_mounts_are_refused_where_the_spec_has_no_container_args() -> None:
    ctx = context(KMIP)
    ctx.cluster.backend_module = 'cephadm'  # type: ignore[attr-defined]
    ctx.cluster.spec_from_json = lambda spec: type(
        'OldSpec', (), {'service_name': lambda self: 'rgw.default'})()
    with pytest.raises(NotSupported, match='no extra_container_args; nothing changed'):
        plan(ctx, 'kms-kmip')


def test_kms_vault_plan() -> None:
    ctx = context(VAULT)
    assert configs(plan(ctx, 'kms-vault')) == {
        'client.rgw/rgw_crypt_s3_kms_backend': 'vault',
        'client.rgw/rgw_crypt_vault_addr': 'http://127.0.0.1:8200',
        'client.rgw/rgw_crypt_vault_auth': 'token',
        'client.rgw/rgw_crypt_vault_secret_engine': 'transit',
        'client.rgw/rgw_crypt_vault_token_file': '/etc/ceph/vault.token',
        # the transit engine's data keys
        'client.rgw/rgw_crypt_vault_prefix': '/v1/transit',
        'client.rgw/rgw_crypt_require_ssl': 'false'}
    assert ServerSideEncryption().client(ctx, 'kms-vault', ClientSide()).sse == {
        'sse_kms_key_id': 'bench/key'}
    # an agent needs no token file; a prefix is passed on
    agent = dict(VAULT, sse_vault_auth='agent', sse_vault_token_file='',
                 sse_vault_prefix='/v1/keys/transit/export/encryption-key')
    found = configs(plan(context(agent), 'kms-vault'))
    assert found['client.rgw/rgw_crypt_vault_auth'] == 'agent'
    assert 'client.rgw/rgw_crypt_vault_token_file' not in found
    assert found['client.rgw/rgw_crypt_vault_prefix'] == '/v1/keys/transit/export/encryption-key'
    # the kv engine has no path of its own to assume: the operator's prefix, or none
    kv = configs(plan(context(dict(VAULT, sse_vault_secret_engine='kv')), 'kms-vault'))
    assert 'client.rgw/rgw_crypt_vault_prefix' not in kv


@pytest.mark.parametrize('missing', ['sse_vault_addr', 'sse_vault_token_file',
                                     'sse_vault_key_id'])
def test_kms_vault_refused_without_its_options(missing: str) -> None:
    with pytest.raises(InvalidInput) as e:
        plan(context(dict(VAULT, **{missing: ''})), 'kms-vault')
    assert 'set mgr/rgwbench/%s first' % missing in str(e.value)


def test_sse_c_changes_only_require_ssl_and_keeps_its_key() -> None:
    ctx = context()
    changes = plan(ctx, 'sse-c')
    assert configs(changes) == {'client.rgw/rgw_crypt_require_ssl': 'false'}
    first = ServerSideEncryption().client(ctx, 'sse-c', ClientSide())
    key = first.sse['sse_c_key']
    assert len(base64.b64decode(key)) == 32
    assert ServerSideEncryption().client(ctx, 'sse-c', ClientSide()).sse == {'sse_c_key': key}
    assert key not in json.dumps(dump(first.shown()))
    SSE.from_settings(customer_key=key)  # the engine takes it
    # nothing to do when RGW already takes SSE over plain HTTP
    cluster: Any = ctx.cluster
    cluster.config[('client.rgw', 'rgw_crypt_require_ssl')] = 'false'
    assert plan(ctx, 'sse-c') == []


@pytest.mark.parametrize('release, version', [
    (16, PACIFIC),
    (17, 'ceph version 17.2.3 (dff484df) quincy (stable)'),
])
def test_sse_s3_refused_before_quincy_17_2_4(release: int, version: str) -> None:
    with pytest.raises(InvalidInput) as e:
        plan(context(VAULT, release=release, version=version), 'sse-s3')
    message = str(e.value)
    assert 'SSE-S3 needs RGW 17.2.4 (Quincy) or newer' in message
    assert 'this cluster runs %s' % parse_version(version)[0] in message  # type: ignore


@pytest.mark.parametrize('release, version', [
    (17, 'ceph version 17.2.4 (1353ed37) quincy (stable)'),
    (20, 'ceph version 20.2.4 (7f79) tentacle (stable)'),
])
def test_sse_s3_plan_from_17_2_4(release: int, version: str) -> None:
    ctx = context(VAULT, release=release, version=version)
    assert configs(plan(ctx, 'sse-s3')) == {
        'client.rgw/rgw_crypt_sse_s3_backend': 'vault',
        'client.rgw/rgw_crypt_sse_s3_vault_addr': 'http://127.0.0.1:8200',
        'client.rgw/rgw_crypt_sse_s3_vault_auth': 'token',
        'client.rgw/rgw_crypt_sse_s3_vault_secret_engine': 'transit',
        'client.rgw/rgw_crypt_sse_s3_vault_token_file': '/etc/ceph/vault.token',
        # the transit engine's keys, where RGW makes one per bucket
        'client.rgw/rgw_crypt_sse_s3_vault_prefix': '/v1/transit',
        'client.rgw/rgw_crypt_require_ssl': 'false'}
    assert ServerSideEncryption().client(ctx, 'sse-s3', ClientSide()).sse == {'sse_s3': True}
    with pytest.raises(InvalidInput) as e:
        plan(context(release=release, version=version), 'sse-s3')
    assert 'set mgr/rgwbench/sse_vault_addr first' in str(e.value)


def test_parse_version() -> None:
    assert parse_version(PACIFIC) == (16, 2, 15)
    assert parse_version('ceph version Development (no_version)') is None
    assert parse_version(None) is None


def test_require_ssl_kept_when_tls_is_planned_before() -> None:
    ctx = context()
    tls_rgw = dict(RGW_SPEC, spec={'rgw_frontend_port': 8443, 'ssl': True})
    changes = plan(ctx, 'kms-testing', [service_change('rgw.default', tls_rgw, 'tls')])
    assert 'client.rgw/rgw_crypt_require_ssl' not in configs(changes)
    ingress = {'service_type': 'ingress', 'service_id': 'rgw.default',
               'spec': {'backend_service': 'rgw.default', 'ssl': True, 'frontend_port': 443}}
    # behind an ingress RGW sees plain HTTP: kept only when it trusts the proxy's word
    with_ingress = [service_change('ingress.rgw.default', ingress, 'ingress')]
    assert configs(plan(ctx, 'sse-c', with_ingress)) == {
        'client.rgw/rgw_crypt_require_ssl': 'false'}
    assert plan(ctx, 'sse-c', with_ingress + [config_change(
        'client.rgw', 'rgw_trust_forwarded_https', 'true')]) == []
    # an ingress without TLS is plain HTTP
    plain = dict(ingress, spec=dict(ingress['spec'], ssl=False))  # type: ignore
    changes = plan(ctx, 'sse-c', [service_change('ingress.rgw.default', plain, 'ingress')])
    assert configs(changes) == {'client.rgw/rgw_crypt_require_ssl': 'false'}
    # an RGW that already serves TLS keeps it too
    cluster: Any = ctx.cluster
    cluster.specs['rgw.default'] = tls_rgw
    assert plan(ctx, 'sse-c') == []


def test_notes_say_when_no_write_check_is_possible() -> None:
    ctx = context()
    setting = ServerSideEncryption()
    assert any('no S3 credentials' in n for n in setting.notes(ctx, 'sse-c'))
    ctx.secrets.set_store('credentials/s3', json.dumps({'access_key': 'A', 'secret_key': 'S'}))
    assert setting.notes(ctx, 'sse-c') == []
    assert setting.notes(ctx, 'off') == []
    assert any('testing backend' in n for n in setting.notes(ctx, 'kms-testing'))


def test_verify_reads_the_running_backend() -> None:
    ctx = context()
    cluster: Any = ctx.cluster
    cluster.running[('rgw.4131', 'rgw_crypt_s3_kms_backend')] = 'vault'
    with pytest.raises(SettingNotInEffect) as e:
        ServerSideEncryption().verify(ctx, 'kms-testing')
    assert 'rgw.4131 runs with rgw_crypt_s3_kms_backend = vault, not testing' in str(e.value)
    cluster.running[('rgw.4131', 'rgw_crypt_s3_kms_backend')] = 'testing'
    ServerSideEncryption().verify(ctx, 'kms-testing')  # no credentials: no write
    ServerSideEncryption().verify(ctx, 'off')


def test_verify_waits_for_the_backend_the_mgr_reports_late() -> None:
    # A restarted RGW's config reaches the mgr with its reports, a moment later.
    ctx = context()
    cluster: Any = ctx.cluster
    answers = ['barbican', 'barbican', 'kmip']

    def running_config(daemon: str, option: str) -> Optional[str]:
        return answers.pop(0) if len(answers) > 1 else answers[0]
    cluster.running_config = running_config
    ServerSideEncryption().verify(ctx, 'kms-kmip')
    assert answers == ['kmip']


def test_verify_refuses_plain_http_when_rgw_wants_tls() -> None:
    ctx = context()
    ctx.secrets.set_store('credentials/s3', json.dumps({'access_key': 'A', 'secret_key': 'S'}))
    cluster: Any = ctx.cluster
    cluster.running.update({('rgw.4131', 'rgw_crypt_require_ssl'): 'true',
                            ('rgw.4131', 'rgw_trust_forwarded_https'): 'false'})
    with pytest.raises(SettingNotInEffect) as e:
        ServerSideEncryption().verify(ctx, 'sse-c')
    assert 'serves plain HTTP only' in str(e.value)


@pytest.fixture
def stub() -> Any:
    server = StubS3(access_key='AK', secret_key='SK').start()
    yield server
    server.stop()


def test_verify_waits_for_a_restarted_rgw_to_report_it_takes_sse_over_http(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # sse-c sets rgw_crypt_require_ssl false and restarts RGW; the restarted daemon
    # reports its config a moment after it serves, the old value until then.
    ctx = context()
    ctx.secrets.set_store('credentials/s3', json.dumps({'access_key': 'A', 'secret_key': 'S'}))
    cluster: Any = ctx.cluster
    reported = ['true', 'true', 'false']

    def running_config(daemon: str, option: str) -> Optional[str]:
        if option != 'rgw_crypt_require_ssl':
            return None
        return reported.pop(0) if len(reported) > 1 else reported[0]
    cluster.running_config = running_config
    written: List[str] = []
    monkeypatch.setattr('rgwbench.settings.sse.check_write',
                        lambda url, *args: written.append(url))
    ServerSideEncryption().verify(ctx, 'sse-c')
    assert reported == ['false'] and written == ['http://127.0.0.1:8000']


def test_check_write_finds_an_object_stored_without_encryption(stub: Any) -> None:
    # The stub stores what it is sent and says nothing of encryption, as an RGW
    # without SSE would.
    with pytest.raises(SettingNotInEffect) as e:
        check_write(stub.url, {'access_key': 'AK', 'secret_key': 'SK'},
                    SSE('sse-kms', kms_key_id='k'), {}, 'SSE-KMS', 'kms-testing')
    assert 'stored it without encryption' in str(e.value)


def test_check_write_says_why_a_write_failed(stub: Any) -> None:
    stub.fault = lambda kind, method, path: (500, 0.0) if method == 'PUT' and \
        path.count('/') == 2 else None
    with pytest.raises(SettingNotInEffect) as e:
        check_write(stub.url, {'access_key': 'AK', 'secret_key': 'SK'},
                    SSE('sse-kms', kms_key_id='k'), {}, 'SSE-KMS', 'kms-kmip')
    message = str(e.value)
    assert message.startswith('sse=kms-kmip: writing an object with SSE-KMS through %s failed: '
                              'HTTP 500' % stub.url)
    assert 'mgr/rgwbench/sse_kmip_addr' in message
    assert stub.buckets == {}  # the check cleans up after itself


def test_check_write_when_nothing_listens() -> None:
    with pytest.raises(SettingNotInEffect) as e:
        check_write('http://127.0.0.1:9', {'access_key': 'AK', 'secret_key': 'SK'},
                    SSE('sse-c', customer_key=b'k' * 32), {}, 'SSE-C', 'sse-c')
    assert 'ConnectionRefusedError' in str(e.value)


@pytest.mark.parametrize('value, configured, where', [
    ('kms-testing', {'client.rgw/rgw_crypt_s3_kms_backend': 'vault'},
     'client.rgw/rgw_crypt_s3_kms_backend is vault'),
    ('kms-vault', {'global/rgw_crypt_s3_kms_backend': 'kmip'},
     'global/rgw_crypt_s3_kms_backend is kmip'),
    ('kms-testing', {'client.rgw.default/rgw_crypt_s3_kms_backend': 'barbican'},
     'client.rgw.default/rgw_crypt_s3_kms_backend is barbican'),
    ('kms-testing', {'client.rgw/rgw_barbican_url': 'https://barbican:9311'},
     'client.rgw/rgw_barbican_url is set, with the default backend barbican'),
])
def test_a_kms_backend_in_production_use_is_not_switched_without_force(
        value: str, configured: Dict[str, str], where: str) -> None:
    ctx = context(dict(VAULT))
    ctx.cluster.config.update(  # type: ignore[attr-defined]
        {tuple(target.split('/', 1)): value for target, value in configured.items()})
    with pytest.raises(InvalidInput) as refused:
        plan(ctx, value)
    message = str(refused.value)
    assert where in message and '--force switches it anyway' in message
    assert '\n' not in message
    forced = configs(plan(ctx._replace(force=True), value))
    assert forced['client.rgw/rgw_crypt_s3_kms_backend'] == value.split('-')[1]


def test_the_same_backend_already_in_use_is_no_switch() -> None:
    ctx = context(dict(VAULT))
    ctx.cluster.config[('client.rgw', 'rgw_crypt_s3_kms_backend')] = 'vault'  # type: ignore
    assert 'client.rgw/rgw_crypt_s3_kms_backend' not in configs(plan(ctx, 'kms-vault'))
