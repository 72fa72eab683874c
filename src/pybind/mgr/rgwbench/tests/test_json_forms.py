"""The JSON the module stores and shows, byte for byte: an interface to scripts and to the
records older versions left, whatever code writes it."""
import json
from fixtures import MemoryStore

from rgwbench.checks.clock_skew import ClockSample
from rgwbench.profiles import ProfileStore, Workload, parse_profile
from rgwbench.profiles.text import profile_to_text
from rgwbench.serial import dump
from rgwbench.settings.applier import SettingPlan
from rgwbench.settings.base import ClientSide
from rgwbench.settings.changes import config_change, restart_change
from rgwbench.settings.journal import Finding, Step
from rgwbench.settings.registry import all_settings
from rgwbench.settings.session import shown_steps

SETTINGS = all_settings()


FULL = {
    'name': 'full', 'description': 'every field', 'baseline': 'b',
    'variants': [{'name': 'a', 'settings': {'rgw-per-host': 2}}, {'name': 'b'}],
    'workloads': [
        {'name': 'mixed', 'op': 'mixed', 'mix': {'get': 70, 'put': 30}, 'size': '1MiB',
         'concurrency': 8, 'duration': 2.5, 'warmup': 1, 'processes': 2, 'buckets': 3,
         'rate': 12.5, 'objects': 100, 'multipart_threshold': '8MiB', 'part_size': '5MiB',
         'range': '0-1KiB'},
        {'name': 'per-rgw', 'op': 'put', 'concurrency_per_rgw': 4, 'rate': 200}],
    'placement': ['h1', 'h2'], 'repeats': 3, 'order': 'interleaved',
    'target': 'http://rgw:80'}

FULL_STORED = (
    '{"name":"full","description":"every field","baseline":"b","variants":['
    '{"name":"a","settings":{"rgw-per-host":2}},{"name":"b","settings":{}}],"workloads":['
    '{"name":"mixed","op":"mixed","size":"1MiB","concurrency":8,"duration":2.5,"warmup":1,'
    '"processes":2,"buckets":3,"payload_signing":"unsigned","mix":{"get":70.0,"put":30.0},'
    '"rate":12.5,"objects":100,"multipart_threshold":"8MiB","part_size":"5MiB",'
    '"range":"0-1KiB"},'
    '{"name":"per-rgw","op":"put","size":"4KiB","concurrency":16,"duration":60,"warmup":5,'
    '"processes":0,"buckets":1,"payload_signing":"unsigned","rate":200,'
    '"concurrency_per_rgw":4}],'
    '"placement":["h1","h2"],"repeats":3,"target":"http://rgw:80","order":"interleaved"}')

PLAIN_STORED = (
    '{"name":"plain","description":"","baseline":"a","variants":[{"name":"a","settings":{}}],'
    '"workloads":[{"name":"put-4KiB","op":"put","size":"4KiB","concurrency":16,"duration":60,'
    '"warmup":5,"processes":0,"buckets":1,"payload_signing":"unsigned"}],"placement":[],'
    '"repeats":1}')


def test_a_stored_profile_is_what_it_always_was() -> None:
    store = MemoryStore()
    profiles = ProfileStore(store, SETTINGS)
    profiles.set(FULL)
    profiles.set({'name': 'plain', 'variants': [{'name': 'a'}], 'workloads': [{'op': 'put'}]})
    assert store.data['profile/full'] == FULL_STORED
    assert store.data['profile/plain'] == PLAIN_STORED
    # what `profile ls` reads back is what was stored, and reads the same again
    listed = {i.profile.name: i for i in profiles.ls()}
    assert listed['full'].profile == parse_profile(FULL, SETTINGS)
    assert json.dumps(dump(listed['full'].profile), separators=(',', ':')) == FULL_STORED
    assert json.dumps(dump(listed['plain'].profile), separators=(',', ':')) == PLAIN_STORED


def test_profile_show_json_is_the_stored_form_with_builtin_and_estimate() -> None:
    store = MemoryStore()
    profiles = ProfileStore(store, SETTINGS)
    profiles.set({'name': 'plain', 'variants': [{'name': 'a'}], 'workloads': [{'op': 'put'}]})
    info = profiles.info('plain')
    assert json.dumps(dump(info), separators=(',', ':')) == (
        PLAIN_STORED[:-1] + ',"builtin":false,"estimated_s":82}')
    # the text of `profile show` reads the JSON form as well as the object
    assert profile_to_text(dump(info)) == profile_to_text(info)


def test_a_profile_stored_by_an_older_version_still_loads() -> None:
    store = MemoryStore()
    # before `processes`, `order` and `target` were fields, and with the *_s names
    # some records had; no description, no baseline
    store.data['profile/old'] = json.dumps({
        'name': 'old', 'variants': [{'name': 'v1', 'settings': None}, {'name': 'v2'}],
        'workloads': [{'name': 'w', 'op': 'get', 'duration_s': 30, 'warmup_s': 2.5,
                       'mix': None, 'rate': None}],
        'placement': None})
    (old,) = [i.profile for i in ProfileStore(store, SETTINGS).ls() if i.profile.name == 'old']
    assert (old.description, old.baseline, old.placement, old.repeats, old.order) == (
        '', 'v1', [], 1, 'sequential')
    assert old.target.to_value() is None
    assert [v.settings for v in old.variants] == [{}, {}]
    (w,) = old.workloads
    assert w == Workload(name='w', op='get', duration_s=30.0, warmup_s=2.5, processes=1)
    assert (type(w.duration_s), type(w.warmup_s)) == (float, float)
    # a stored thing that is not a profile is passed over
    store.data['profile/junk'] = json.dumps({'description': 'no name'})
    assert 'junk' not in [i.profile.name for i in ProfileStore(store, SETTINGS).ls()]


def test_agent_clocks_are_shown_in_milliseconds() -> None:
    assert json.dumps(dump(ClockSample(0.2104567, 0.00210049))) == (
        '{"offset_ms": 210.457, "error_ms": 2.1}')
    assert json.dumps(dump(ClockSample(-0.01, 0.0))) == '{"offset_ms": -10.0, "error_ms": 0.0}'


def test_a_settings_plan_masks_secrets_and_leaves_out_the_states() -> None:
    key = 'c2VjcmV0IGtleSBtYXRlcmlhbCBoZXJl'
    option = 'client.rgw/rgw_crypt_default_encryption_key'
    plan = SettingPlan('config', {option: key}, notes=['a note'], changes=[
        config_change('client.rgw', 'rgw_crypt_default_encryption_key', key),
        restart_change('rgw.default', 'restart rgw.default')])
    assert json.dumps(dump(plan)) == (
        '{"setting": "config", "value": {"client.rgw/rgw_crypt_default_encryption_key": '
        '"<secret>"}, "notes": ["a note"], "changes": [{"kind": "config", "target": '
        '"client.rgw/rgw_crypt_default_encryption_key", "summary": "ceph config set client.rgw '
        'rgw_crypt_default_encryption_key <secret>"}, {"kind": "restart", "target": '
        '"rgw.default", "summary": "restart rgw.default"}]}')
    assert key not in json.dumps(dump(plan))
    plain = SettingPlan('rgw-per-host', 2, notes=[], changes=[])
    assert json.dumps(dump(plain)) == (
        '{"setting": "rgw-per-host", "value": 2, "notes": [], "changes": []}')


def test_client_side_is_shown_without_key_material() -> None:
    client = ClientSide(rgw=('https://h1:443',), ingress=(), ca_bundle='-----BEGIN CERT',
                        sse={'sse_kms_key_id': 'key-1', 'sse_c_key': 'material'},
                        targets=('https://h1:443', 'https://h2:443'))
    assert json.dumps(dump(client.shown())) == (
        '{"endpoint": "https://h1:443", "targets": ["https://h1:443", "https://h2:443"], '
        '"ca_bundle": true, "sse": ["sse_c_key", "sse_kms_key_id"], '
        '"sse_kms_key_id": "key-1"}')
    assert dump(client._replace(placement='rgwbench-replica2').shown())['placement'] == \
        'rgwbench-replica2'
    assert json.dumps(dump(ClientSide().shown())) == (
        '{"endpoint": null, "targets": [], "ca_bundle": false, "sse": [], '
        '"sse_kms_key_id": null}')


def test_journal_steps_are_shown_without_their_states() -> None:
    steps = [Step(1, 'config', 'client.rgw/x', None, 'secret-ish', 'made'),
             Step(2, 'restart', 'rgw.default', None, None, 'failed', 'gave up')]
    assert json.dumps(shown_steps(steps)) == (
        '[{"kind": "config", "target": "client.rgw/x", "state": "made", "error": null}, '
        '{"kind": "restart", "target": "rgw.default", "state": "failed", "error": "gave up"}]')


def test_findings_json_is_what_it_always_was() -> None:
    found = [Finding('run-1', 'config', 'client.rgw/x', 'changed meanwhile')]
    assert json.dumps(dump(found)) == (
        '[{"run_id": "run-1", "kind": "config", "target": "client.rgw/x", '
        '"finding": "changed meanwhile"}]')
