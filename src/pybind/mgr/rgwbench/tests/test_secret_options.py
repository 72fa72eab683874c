"""Secret options (SSE keys, passwords, tokens) never in a log line, plan or error message."""
from typing import Any, Dict, List, Tuple

import pytest
from fixtures import wait_a_few_polls

from rgwbench.errors import RGWBenchError
from rgwbench.cluster.access import ClusterAccess
from rgwbench.cluster.secret_options import is_secret, masked, shown

KMS = 'rgw_crypt_s3_kms_encryption_keys'
KEY = 'c2VjcmV0LWtleS1vZi0zMi1ieXRlcy0xMjM0NTY3OA=='


class Mgr:
    """A mon that takes every command, or refuses it quoting what it was sent."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.commands: List[Dict[str, Any]] = []

    def mon_command(self, cmd: Dict[str, Any], inbuf: str = '') -> Tuple[int, str, str]:
        self.commands.append(cmd)
        if self.refuse:
            return -22, '', 'error setting %s to %s: invalid' % (
                cmd.get('name'), cmd.get('value'))
        return 0, '', ''


def access(mgr: Mgr, lines: List[str]) -> ClusterAccess:
    return ClusterAccess(mgr, lambda x: x, lambda spec: spec,  # type: ignore[arg-type]
                         log=lines.append)


@pytest.mark.parametrize('option', [KMS, 'rgw_crypt_default_encryption_key',
                                    'rgw_keystone_admin_password', 'rgw_keystone_admin_token',
                                    'rgw_keystone_barbican_password', 'rgw_crypt_kmip_password',
                                    'rgw_crypt_vault_token_file', 'rgw_ldap_secret', 'key',
                                    'rgw_sts_key', 'client.rgw/rgw_crypt_default_encryption_key',
                                    'some_future_secret_option', 'a_password_of_tomorrow'])
def test_options_that_hold_secrets(option: str) -> None:
    assert is_secret(option)


@pytest.mark.parametrize('option', ['rgw_thread_pool_size', 'rgw_crypt_s3_kms_backend',
                                    'rgw_crypt_vault_secret_engine', 'ms_client_mode',
                                    'rgw_crypt_require_ssl', 'keyring'])
def test_options_that_do_not(option: str) -> None:
    assert not is_secret(option)


@pytest.mark.parametrize('option, value', [
    (KMS, 'rgwbench-abc=%s other=%s' % (KEY, KEY[::-1])),
    ('rgw_crypt_default_encryption_key', KEY),
    ('rgw_keystone_admin_password', 'hunter2-hunter2')])
def test_setting_a_secret_option_logs_no_value(option: str, value: str) -> None:
    lines: List[str] = []
    mgr = Mgr()
    access(mgr, lines).put_config('client.rgw', option, value)
    assert mgr.commands[0]['value'] == value  # the cluster gets it all the same
    assert lines and option in lines[0] and '<secret>' in lines[0]
    parts = [p.split('=', 1)[1] for p in value.split()] if option == KMS else [value]
    for part in parts:
        assert part not in lines[0], lines


def test_the_kms_keys_are_named_in_the_log() -> None:
    lines: List[str] = []
    access(Mgr(), lines).put_config('client.rgw', KMS, 'rgwbench-abc=%s' % KEY)
    assert 'rgwbench-abc=<secret>' in lines[0]


def test_removing_a_secret_option_and_setting_a_plain_one_log_as_before() -> None:
    lines: List[str] = []
    cluster = access(Mgr(), lines)
    cluster.put_config('client.rgw', KMS, None)
    cluster.put_config('client.rgw', 'rgw_thread_pool_size', '512')
    assert lines == ['config client.rgw %s = None' % KMS,
                     'config client.rgw rgw_thread_pool_size = 512']


def test_a_refused_secret_value_is_not_in_the_error() -> None:
    with pytest.raises(RGWBenchError) as e:
        access(Mgr(refuse=True), []).put_config('client.rgw', KMS, 'rgwbench-abc=%s' % KEY)
    assert KEY not in str(e.value) and 'invalid' in str(e.value)
    with pytest.raises(RGWBenchError) as e:
        access(Mgr(refuse=True), []).put_config('client.rgw', 'rgw_thread_pool_size', '-5')
    assert '-5' in str(e.value)  # a plain value still says what was refused


def test_shown_and_masked() -> None:
    assert shown(KMS, 'a=%s b=%s' % (KEY, KEY)) == 'a=<secret> b=<secret>'
    assert shown('rgw_thread_pool_size', '512') == '512'
    assert shown('rgw_crypt_default_encryption_key', None) is None
    pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----'
    assert masked('spec: %s and %s' % (pem, KEY), [KEY]) == \
        'spec: <private key> and <secret>'


def test_a_generic_config_setting_shows_no_secret_in_its_plan_or_its_error() -> None:
    from rgwbench.settings.base import SettingNotInEffect
    from rgwbench.settings.changes import config_change
    from rgwbench.settings.daemon_settings import ConfigOption

    secret = 'c2VjcmV0LWtleS0xMjM0NTY3ODkwYWJjZGVmMDEyMzQ1Njc='
    change = config_change('client.rgw', 'rgw_crypt_s3_kms_encryption_keys', 'k1=' + secret)
    assert secret not in change.summary and 'k1=<secret>' in change.summary
    assert change.after == 'k1=' + secret   # what is put in place keeps it

    class Cluster:
        def rgw_daemons(self) -> list:
            class Daemon:
                key, name = '4242', 'a'
            return [Daemon()]

        def running_config(self, daemon: str, option: str) -> str:
            return 'k1=' + secret[::-1]

        def wait_for(self, what: str, check: Any, timeout_s: Any = None) -> None:
            wait_a_few_polls(what, check)

    class Ctx:
        cluster = Cluster()
    with pytest.raises(SettingNotInEffect) as raised:
        ConfigOption().verify(Ctx(),  # type: ignore[arg-type]
                              {'client.rgw/rgw_crypt_s3_kms_encryption_keys': 'k1=' + secret})
    assert secret not in str(raised.value) and secret[::-1] not in str(raised.value)
