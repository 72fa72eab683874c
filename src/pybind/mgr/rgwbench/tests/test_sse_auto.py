"""`sse=auto`: the KMS chosen from the cluster when a variant is planned, said in the plan,
and the value that ran kept in the run's record."""
from typing import Any, Dict, List, Optional, Tuple

import pytest

from rgwbench.tests.run_fakes import Setup
from rgwbench.tests.s3stub import StubS3
from rgwbench.tests.sse_fakes import PACIFIC, context

from rgwbench.profiles.builtin import builtin_profiles
from rgwbench.runs.plan_text import chosen_text, run_plan_to_text
from rgwbench.serial import dump
from rgwbench.settings.applier import SettingsApplier, as_put_in_place
from rgwbench.settings.base import Chosen, PlanView, Setting, SettingContext
from rgwbench.settings.changes import Change, config_change
from rgwbench.settings.daemon_settings import RGWRestart
from rgwbench.settings.registry import all_settings, settings_plan_to_text
from rgwbench.settings.sse import ServerSideEncryption

TENTACLE = 'ceph version 20.2.0 (69f84cc2) tentacle (stable)'
QUINCY_OLD = 'ceph version 17.2.3 (dff484df) quincy (stable)'
VAULT = {'sse_vault_addr': 'https://vault.example:8200',
         'sse_vault_token_file': '/etc/ceph/vault.token', 'sse_vault_key_id': 'bench-key'}


def chosen(options: Dict[str, str], release: int = 20,
           version: str = TENTACLE) -> Optional[Chosen]:
    return ServerSideEncryption().choose(context(options, release, version), 'auto')


def test_auto_is_a_value_and_other_values_are_not_chosen() -> None:
    setting = ServerSideEncryption()
    assert setting.parse(' AUTO ') == 'auto'
    ctx = context(VAULT, 20, TENTACLE)
    for value in ('kms-testing', 'kms-vault', 'sse-s3', 'off'):
        assert setting.choose(ctx, value) is None


def test_sse_s3_through_vault_where_vault_is_configured_and_rgw_has_it() -> None:
    found = chosen(VAULT)
    assert found == Chosen('sse-s3', 'sse=auto -> sse-s3 (SSE-S3, Vault at '
                                     'https://vault.example:8200, transit engine): Vault is '
                                     'configured (mgr/rgwbench/sse_vault_*) and RGW takes '
                                     'SSE-S3')
    # SSE-S3 needs no key id: RGW makes a key per bucket
    assert chosen(dict(VAULT, sse_vault_key_id='')).value == 'sse-s3'  # type: ignore
    # agent auth reads no token file
    agent = dict(VAULT, sse_vault_auth='agent', sse_vault_token_file='')
    assert chosen(agent).value == 'sse-s3'  # type: ignore
    assert chosen(VAULT, 17, 'ceph version 17.2.4 (1353ed37) quincy (stable)'
                  ).value == 'sse-s3'  # type: ignore


@pytest.mark.parametrize('release, version', [(16, PACIFIC), (17, QUINCY_OLD)])
def test_before_17_2_4_sse_kms_through_vault_else_the_testing_backend(
        release: int, version: str) -> None:
    found = chosen(VAULT, release, version)
    assert found is not None and found.value == 'kms-vault'
    assert found.why.startswith('sse=auto -> kms-vault (SSE-KMS, Vault at '
                                'https://vault.example:8200, transit engine, key bench-key): '
                                'SSE-S3 needs RGW 17.2.4 (Quincy) or newer; this cluster runs '
                                '1'), found.why
    found = chosen(dict(VAULT, sse_vault_key_id=''), release, version)
    assert found is not None and found.value == 'kms-testing'
    assert 'mgr/rgwbench/sse_vault_key_id is unset' in found.why
    assert 'SSE-S3 needs RGW 17.2.4' in found.why


def test_a_kv_engine_takes_sse_kms_only() -> None:
    found = chosen(dict(VAULT, sse_vault_secret_engine='kv'))
    assert found is not None and found.value == 'kms-vault'
    assert 'transit engine only' in found.why and 'Vault at https://vault.example:8200, kv ' \
        'engine' in found.why


def test_without_vault_the_testing_backend_and_why() -> None:
    found = chosen({})
    assert found == Chosen('kms-testing', "sse=auto -> kms-testing (SSE-KMS, RGW's testing "
                                          'backend, no KMS round trip): no Vault is configured '
                                          '(mgr/rgwbench/sse_vault_addr, '
                                          'mgr/rgwbench/sse_vault_token_file unset)')
    assert chosen({'sse_vault_addr': 'https://v:8200'}).value == 'kms-testing'  # type: ignore
    # RGW's own Vault options are not taken, but the plan names them
    ctx = context({}, 20, TENTACLE)
    cluster: Any = ctx.cluster
    cluster.config[('client.rgw', 'rgw_crypt_sse_s3_vault_addr')] = 'https://theirs:8200'
    found = ServerSideEncryption().choose(ctx, 'auto')
    assert found is not None and found.value == 'kms-testing'
    assert found.why.endswith("; RGW's rgw_crypt_sse_s3_vault_addr is https://theirs:8200: "
                              'set mgr/rgwbench/sse_vault_* to use it)'), found.why


def sse_applier(ctx: SettingContext) -> SettingsApplier:
    return SettingsApplier(ctx, [ServerSideEncryption(), RGWRestart()])


def test_the_applier_plans_the_chosen_value_and_says_why() -> None:
    ctx = context(VAULT, 20, TENTACLE)
    (plan,) = sse_applier(ctx).plan({'sse': 'auto'})
    direct = ServerSideEncryption().plan(ctx, PlanView(ctx.cluster), 'sse-s3')
    assert plan.value == 'sse-s3' and plan.changes == direct
    assert plan.chosen is not None and plan.chosen.startswith('sse=auto -> sse-s3 (')
    assert as_put_in_place({'sse': 'auto', 'tls@rgw': True}, [plan]) == {
        'sse': 'sse-s3', 'tls@rgw': True}
    shown = dump([plan])
    assert shown[0]['value'] == 'sse-s3' and shown[0]['chosen'] == plan.chosen
    lines = settings_plan_to_text(shown).splitlines()
    assert lines[:2] == ['sse = sse-s3', '  ' + plan.chosen]
    # a value given as it is: no `chosen` in the plan's JSON
    (given,) = sse_applier(ctx).plan({'sse': 'sse-s3'})
    assert given.chosen is None and 'chosen' not in dump(given)
    assert as_put_in_place({'sse': 'sse-s3'}, [given]) == {'sse': 'sse-s3'}


def test_the_run_plan_says_the_choice_once() -> None:
    ctx = context({}, 16, PACIFIC)
    plans = [dump(sse_applier(ctx).plan({'sse': 'auto'})) for _ in range(2)]
    variants = [{'name': 'plain', 'baseline': True, 'settings': {}, 'changes': []}] + [
        {'name': 'sse-%d' % n, 'baseline': False, 'settings': {'sse': 'auto'}, 'changes': p}
        for n, p in enumerate(plans)]
    assert chosen_text(variants) == [plans[0][0]['chosen']]
    text = run_plan_to_text({'profile': 'sse', 'variants': variants, 'workloads': [],
                             'repeats': 1, 'estimated_s': 60, 'problems': []})
    assert [line for line in text.splitlines() if line.startswith('sse=auto')] == [
        "sse=auto -> kms-testing (SSE-KMS, RGW's testing backend, no KMS round trip): no "
        'Vault is configured (mgr/rgwbench/sse_vault_addr, mgr/rgwbench/sse_vault_token_file '
        'unset)']


def test_the_builtins_sse_and_security_choose() -> None:
    by_name = {p.name: p for p in builtin_profiles(all_settings())}
    for name in ('sse', 'security'):
        with_sse = [v for v in by_name[name].variants if 'sse' in v.settings]
        assert {v.name for v in with_sse} == {'sse-rgw', 'sse-ingress'}
        assert all(v.settings['sse'] == 'auto' for v in with_sse)


class ChoosingSetting(Setting):
    """`sse` as a run sees it: `auto` chosen as `kms-testing`, one config change."""
    name = 'sse'
    values = 'auto, kms-testing'

    def parse(self, raw: Any) -> str:
        return str(raw)

    def choose(self, ctx: SettingContext, value: Any) -> Optional[Chosen]:
        return Chosen('kms-testing', 'sse=auto -> kms-testing: no Vault') \
            if value == 'auto' else None

    def plan(self, ctx: SettingContext, view: PlanView, value: Any) -> List[Change]:
        return [config_change('client.rgw', 'rgw_crypt_s3_kms_backend', 'testing')] \
            if value == 'kms-testing' else []


def test_a_runs_record_keeps_the_value_that_ran(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    base = s.engine.make_applier()
    s.engine.make_applier = lambda: SettingsApplier(
        base.ctx, [ChoosingSetting(), RGWRestart()])
    profile = s.profile(baseline='plain', variants=[{'name': 'plain', 'settings': {}},
                                                    {'name': 'sse', 'settings': {'sse': 'auto'}}])
    plan = s.engine.plan(profile)
    assert 'sse=auto -> kms-testing: no Vault' in run_plan_to_text(plan).splitlines()
    run_id = s.engine.start(profile)
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    assert [v['settings'] for v in record['variants']] == [{}, {'sse': 'kms-testing'}]
    # what was asked stays in the definition
    assert record['definition']['variants'][1]['settings'] == {'sse': 'auto'}
    assert s.cluster.config_value('client.rgw', 'rgw_crypt_s3_kms_backend') is None
