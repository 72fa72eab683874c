"""A secret given through the `config` setting (an option widened with config_allow whose
name says password, key, secret, token) is `<secret>` wherever it is shown: `profile show`,
`plan`, a run's record (`results show`, `export`, the panel's pages), errors."""
import json
from typing import Any, Dict, Iterator, Tuple

import pytest
from fixtures import MemoryStore
from rgwbench.tests.module_harness import ModuleUnderTest, call
from rgwbench.tests.module_harness import registered  # noqa: F401 (a fixture)
from rgwbench.tests.run_fakes import PROFILE, Setup
from rgwbench.tests.fixtures import RUNTIME, FakeCluster

from rgwbench.errors import InvalidInput
from rgwbench.api import shown_run
from rgwbench.results.model import Run, VariantResult
from rgwbench.serial import dump
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.base import SettingContext
from rgwbench.settings.daemon_settings import ConfigOption, RGWRestart
from rgwbench.tests.s3stub import StubS3

SECRET = 'Hunter2-of-the-keystone-9Q'
OPTION = 'client.rgw/rgw_keystone_admin_password'
WITH_SECRET = dict(PROFILE, name='leaky', variants=[
    {'name': 'as-is', 'settings': {}},
    {'name': 'keystone', 'settings': {'config': {OPTION: SECRET}}}])


@pytest.fixture
def stub() -> Iterator[StubS3]:
    with StubS3() as s:
        yield s


def widened_applier(cluster: FakeCluster) -> SettingsApplier:
    ctx = SettingContext(cluster=cluster, rgw_service=lambda: 'rgw.default',  # type: ignore
                         option={'config_allow': OPTION}.get, secrets=MemoryStore(),
                         release=16)
    return SettingsApplier(ctx, [ConfigOption(), RGWRestart()])


@pytest.fixture
def known_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RUNTIME, 'rgw_keystone_admin_password', False)


@pytest.mark.usefixtures('registered')
def test_profile_show_masks_a_secret_of_the_config_setting() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    stored = mod._handle_command(json.dumps(WITH_SECRET), {'prefix': 'rgwbench profile set'})
    assert stored[0] == 0, stored
    for fmt in ('json', 'plain'):
        shown = call(mod, 'rgwbench profile show', profile='leaky', format=fmt)
        assert shown.retval == 0, shown.stderr
        assert SECRET not in shown.stdout + shown.stderr and '<secret>' in shown.stdout
    listed = call(mod, 'rgwbench profile ls', format='json')
    assert SECRET not in listed.stdout
    # what a run applies is still the value itself
    assert mod.services.profiles.get('leaky').variants[1].settings['config'] == {
        OPTION: SECRET}


def test_a_runs_plan_and_record_mask_a_secret_of_the_config_setting(
        stub: StubS3, certificate: Tuple[str, str], monkeypatch: pytest.MonkeyPatch,
        known_option: None) -> None:
    monkeypatch.setattr('rgwbench.tests.run_fakes.applier', widened_applier)
    s = Setup(stub, certificate)
    profile = s.profile(**{k: v for k, v in WITH_SECRET.items() if k != 'name'})
    plan = s.engine.plan(profile)
    assert SECRET not in json.dumps(plan)
    assert plan['variants'][1]['settings'] == {'config': {OPTION: '<secret>'}}
    run_id = s.engine.start(profile)
    s.engine.wait(180)
    record = s.results.load(run_id)
    assert record.state == 'complete', record.error
    # the cluster had the value while the variant ran, and has its own back
    assert ('config %s=%s' % (OPTION, SECRET)) in s.cluster.calls
    stored = json.dumps(dump(record))
    assert SECRET not in stored and '<secret>' in stored


def test_a_run_recorded_in_clear_is_shown_masked() -> None:
    """Runs kept before the engine masked their settings: shown (show, export, the panel)
    through the API, masked there."""
    record = Run(run_id='r1', definition=WITH_SECRET,
                 variants=[VariantResult(name='as-is', settings={}),
                           VariantResult(name='keystone',
                                         settings={'config': {OPTION: SECRET}})])
    shown: Dict[str, Any] = dump(shown_run(record))
    assert SECRET not in json.dumps(shown)
    assert shown['variants'][1]['settings'] == {'config': {OPTION: '<secret>'}}
    assert shown['definition']['variants'][1]['settings'] == {'config': {OPTION: '<secret>'}}


@pytest.mark.parametrize('raw', [
    '%s:%s,%s' % (OPTION, SECRET[:10], SECRET[10:]),   # a comma in the value
    {OPTION: [SECRET]}])
def test_a_config_value_refused_is_not_quoted_when_it_is_a_secret(raw: Any) -> None:
    with pytest.raises(InvalidInput) as refused:
        ConfigOption().parse(raw)
    assert SECRET[:10] not in str(refused.value) and SECRET[10:] not in str(refused.value)
    assert '\n' not in str(refused.value)
