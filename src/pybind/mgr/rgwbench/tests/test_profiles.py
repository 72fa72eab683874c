import json
import os
from typing import Any, Dict, List

import pytest
import yaml
from fixtures import MemoryStore

from rgwbench.errors import InvalidInput, NotFound
from rgwbench.loadgen.workload import Job
from rgwbench.profiles import (BUILTIN_DOCUMENTS, Profile, ProfileInfo, ProfileStore, Variant,
                               Workload, builtin_names, builtin_profiles, estimate_seconds,
                               format_duration, parse_profile, profile_to_text, profiles_to_text,
                               with_overrides)
from rgwbench.runs.plan_text import run_plan_to_text
from rgwbench.serial import dump, load
from rgwbench.settings.registry import all_settings
from rgwbench.settings.targets import AUTO, INGRESS, RGW, URLS, Target

SETTINGS = all_settings()

SSE_YAML = """
name: mine
description: SSE at RGW against TLS and msgr2
baseline: tls-msgr2
variants:
  - {name: tls-msgr2, settings: {tls@rgw: on, msgr2-secure: on}}
  - {name: sse-kms, settings: {tls@rgw: on, msgr2-secure: on, sse: kms-testing}}
workloads:
  - {op: put, size: 4MiB, concurrency: 16, duration: 60, warmup: 5}
  - {name: get-big, op: get, size: 4MiB, concurrency: 16, duration: 60}
placement: []
repeats: 1
"""


def doc(**changes: Any) -> Dict[str, Any]:
    data: Dict[str, Any] = {'name': 'x', 'variants': [{'name': 'a'}, {'name': 'b'}],
                            'workloads': [{'op': 'put'}]}
    data.update(changes)
    return data


def refused(data: Any) -> str:
    with pytest.raises(InvalidInput) as e:
        parse_profile(data, SETTINGS)
    return str(e.value)


# -- the built-ins -----------------------------------------------------------------------

@pytest.mark.parametrize('document', BUILTIN_DOCUMENTS, ids=lambda d: d['name'])
def test_every_builtin_parses_and_round_trips(document: Dict[str, Any]) -> None:
    profile = parse_profile(document, SETTINGS)
    assert profile.name == document['name']
    assert profile.baseline == profile.variants[0].name
    assert parse_profile(json.dumps(dump(profile)), SETTINGS) == profile
    assert load(Profile, dump(profile)) == profile


def test_builtin_names() -> None:
    assert builtin_names() == ['tls', 'msgr2', 'sse', 'security', 'sizes', 'rgw-threads',
                               'quick', 'calibrate', 'rgw-sizing', 'saturation']


def test_builtins_follow_the_studies() -> None:
    by_name = {p.name: p for p in builtin_profiles(SETTINGS)}
    tls = by_name['tls']
    assert [v.name for v in tls.variants] == ['no-tls', 'tls-rgw', 'tls-ingress']
    assert tls.variant('tls-ingress').settings == {'tls@rgw': False, 'tls@ingress': 'https'}
    assert [w.name for w in tls.workloads] == ['put-64KiB', 'get-64KiB', 'put-4MiB',
                                               'get-4MiB']
    msgr2 = by_name['msgr2']
    assert msgr2.variant('tls-rgw-msgr2').settings['msgr2-secure'] is True
    assert {w.size for w in msgr2.workloads} == {'1MiB', '4MiB', '64MiB', '256MiB'}
    sse = by_name['sse']
    assert sse.baseline == 'tls-msgr2'
    assert sse.variant('sse-rgw').settings['sse'] == 'auto'
    assert sse.variant('sse-ingress').settings['tls@ingress'] == 'https'
    assert {v.name for v in by_name['security'].variants} >= \
        {v.name for v in sse.variants} | {v.name for v in tls.variants}
    assert by_name['sizes'].variants == [Variant('as-is', {})]
    threads = by_name['rgw-threads']
    assert threads.variants[0].settings == {}
    # every variant differs from RGW's default (512), the baseline's value
    assert [v.settings['config'] for v in threads.variants[1:]] == [
        {'client.rgw/rgw_thread_pool_size': str(n)} for n in (128, 256, 1024)]
    assert 'Red Hat' in threads.description and 'charts 5 and 6' in threads.description


def test_rgw_sizing_has_the_red_hat_levers_against_the_cluster_as_it_is() -> None:
    sizing = {p.name: p for p in builtin_profiles(SETTINGS)}['rgw-sizing']
    assert sizing.baseline == 'as-is' and sizing.variants[0].settings == {}
    assert {v.name: v.settings for v in sizing.variants[1:]} == {
        'cpus-1': {'rgw-cpus': 1.0}, 'cpus-2': {'rgw-cpus': 2.0}, 'cpus-4': {'rgw-cpus': 4.0},
        'per-host-2': {'rgw-per-host': 2},
        'threads-256': {'config': {'client.rgw/rgw_thread_pool_size': '256'}},
        'threads-1024': {'config': {'client.rgw/rgw_thread_pool_size': '1024'}}}
    assert [w.name for w in sizing.workloads] == ['put-64KiB', 'get-64KiB', 'put-4MiB',
                                                  'get-4MiB']
    # the same requests in flight under every variant: two RGWs per host are not
    # given twice the clients
    assert {(w.concurrency, w.concurrency_per_rgw) for w in sizing.workloads} == {(64, None)}
    assert 'Red Hat' in sizing.description and 'charts 1 to 6' in sizing.description


def test_quick_is_a_short_smoke_run() -> None:
    quick = {p.name: p for p in builtin_profiles(SETTINGS)}['quick']
    assert quick.variants[1].settings == {'config': {'client.rgw/rgw_thread_pool_size': '256'}}
    assert [(w.name, w.duration_s, w.warmup_s) for w in quick.workloads] == [
        ('put-4KiB', 10.0, 2.0), ('get-4KiB', 10.0, 2.0)]
    assert 60 <= estimate_seconds(quick) <= 180


def test_calibrate_runs_the_baseline_against_itself_interleaved() -> None:
    calibrate = {p.name: p for p in builtin_profiles(SETTINGS)}['calibrate']
    assert [v.name for v in calibrate.variants] == ['default', 'default-again']
    # the same value, RGW's default: every application restarts RGW and changes nothing
    assert calibrate.variants[0].settings == calibrate.variants[1].settings == {
        'config': {'client.rgw/rgw_thread_pool_size': '512'}}
    assert calibrate.repeats >= 2 and calibrate.interleaved()
    assert dump(calibrate)['order'] == 'interleaved'
    assert estimate_seconds(calibrate) <= 30 * 60


def test_order_is_sequential_unless_interleaved_is_asked_for() -> None:
    base = {'name': 'x', 'variants': [{'name': 'a'}], 'workloads': [{'op': 'put'}]}
    profile = parse_profile(dict(base, repeats=2), SETTINGS)
    assert profile.order == 'sequential' and not profile.interleaved()
    assert 'order' not in dump(profile)  # documents stored before the field read alike
    interleaved = parse_profile(dict(base, repeats=2, order='interleaved'), SETTINGS)
    assert interleaved.interleaved() and load(Profile, dump(interleaved)) == interleaved
    assert 'interleaved' in profile_to_text(interleaved)
    # one repeat: nothing to interleave
    assert not parse_profile(dict(base, order='interleaved'), SETTINGS).interleaved()
    with pytest.raises(InvalidInput, match='order: must be one of sequential, interleaved'):
        parse_profile(dict(base, order='random'), SETTINGS)


# -- the document form -------------------------------------------------------------------

def test_yaml_document_with_defaults() -> None:
    profile = parse_profile(SSE_YAML, SETTINGS)
    assert profile.name == 'mine'
    assert profile.variants[1] == Variant('sse-kms', {'tls@rgw': True, 'msgr2-secure': True,
                                                      'sse': 'kms-testing'})
    assert profile.workloads == [
        Workload('put-4MiB', op='put', mix={}, size='4MiB', concurrency=16, duration_s=60.0,
                 warmup_s=5.0, processes=0, buckets=1),
        Workload('get-big', op='get', mix={}, size='4MiB', concurrency=16, duration_s=60.0,
                 warmup_s=5.0, processes=0, buckets=1)]
    assert profile.placement == [] and profile.repeats == 1


def test_json_document_equals_yaml() -> None:
    as_json = json.dumps(yaml.safe_load(SSE_YAML))
    assert parse_profile(as_json, SETTINGS) == parse_profile(SSE_YAML, SETTINGS)
    assert parse_profile(as_json.encode(), SETTINGS).name == 'mine'


def test_defaults() -> None:
    profile = parse_profile(doc(workloads=[{'op': 'mixed', 'size': '64KiB',
                                            'mix': {'get': 3, 'put': 1}},
                                           {'op': 'get', 'size': 4096}]), SETTINGS)
    assert profile.baseline == 'a'
    assert profile.variants[0] == Variant('a', {})
    mixed, get = profile.workloads
    assert (mixed.name, mixed.mix) == ('mixed-64KiB', {'get': 3.0, 'put': 1.0})
    assert (get.name, get.size) == ('get-4KiB', '4KiB')
    assert (get.concurrency, get.duration_s, get.warmup_s, get.processes, get.buckets) == \
        (16, 60.0, 5.0, 0, 1)
    assert profile.repeats == 1 and profile.description == ''


def test_an_agent_runs_an_engine_process_per_core_unless_told() -> None:
    # Issue 11: each agent runs as many engine processes as its host has cores (capped
    # by agent_processes_max): 0 in the document, made a number by each agent.
    profile = parse_profile(doc(workloads=[{'op': 'get'}, {'op': 'put', 'processes': 1}]),
                            SETTINGS)
    assert [w.processes for w in profile.workloads] == [0, 1]
    assert [dump(w)['processes'] for w in profile.workloads] == [0, 1]
    assert [w.job_fields()['processes'] for w in profile.workloads] == [0, 1]
    assert Workload(name='w').processes == 0
    assert all(w.processes == 0 for p in builtin_profiles(SETTINGS) for w in p.workloads)
    # a workload stored before processes was a field ran one
    assert load(Workload, {'name': 'old', 'op': 'put'}).processes == 1
    # a concurrency of 1 is still one process, whatever the cores
    (one,) = parse_profile(doc(workloads=[{'op': 'put', 'concurrency': 1}]),
                           SETTINGS).workloads
    assert one.processes == 0 and Job(concurrency=1, processes=0).with_process_count(
        ).processes == 1


def test_short_duration_gets_a_shorter_default_warmup() -> None:
    profile = parse_profile(doc(workloads=[{'op': 'put', 'duration': 3}]), SETTINGS)
    assert profile.workloads[0].warmup_s == 3.0


@pytest.mark.parametrize('data, message', [
    (doc(variants=[{'name': 'a'}, {'name': 'b', 'settings': {'tls': 'on'}}]),
     "profile x: variants[1].settings: unknown setting 'tls' (known: config, rgw-per-host, "
     "rgw-cpus, tls@rgw, tls@ingress, msgr2-secure, data-pool, sse, rgw-restart)"),
    (doc(variants=[{'name': 'a', 'settings': {'rgw-cpus': 0}}]),
     "profile x: variants[0].settings.rgw-cpus: 0 is not valid (expected a number of cores "
     "from 0.01 to 1024, fractions allowed (0.5, 1.5))"),
    (doc(workloads=[{'op': 'put', 'duration': -5}]),
     'profile x: workloads[0].duration: must be a positive number of seconds, got -5'),
    (doc(workloads=[{'op': 'put', 'duration': 4000}]),
     'profile x: workloads[0].duration: must be at most 3600 seconds, got 4000'),
    (doc(workloads=[{'op': 'put', 'duration': 'long'}]),
     "profile x: workloads[0].duration: must be a positive number of seconds, got 'long'"),
    (doc(workloads=[{'op': 'put', 'size': 0}]),
     "profile x: workloads[0].size: 0 is not a size (object size must be at least 1 byte, "
     "got '0')"),
    (doc(workloads=[{'op': 'put', 'size': '4XB'}]),
     "profile x: workloads[0].size: '4XB' is not a size (bad size unit in '4XB' (B, KiB, MiB, "
     "GiB, TiB, KB, MB, GB, TB))"),
    (doc(baseline='foo'), "profile x: baseline 'foo' is not one of its variants (a, b)"),
    (doc(variants=[]), 'profile x: no variants'),
    (doc(workloads=[]), 'profile x: no workloads'),
    (doc(variants=[{'name': 'a'}, {'name': 'a'}]), 'profile x: variant names must be unique'),
    (doc(workloads=[{'op': 'put'}, {'op': 'put', 'concurrency': 8}]),
     'profile x: workload names must be unique (put-4KiB is given twice; name one of them)'),
    (dict(doc(), variant=[]), "profile x: unknown field 'variant'"),
    (doc(variants=[{'name': 'a', 'setting': {}}]),
     "profile x: variants[0]: unknown field 'setting'"),
    (doc(workloads=[{'op': 'put', 'threads': 4}]),
     "profile x: workloads[0]: unknown field 'threads'"),
    (doc(repeats=0), 'profile x: repeats: must be a whole number from 1 to 10, got 0'),
    (doc(repeats=11), 'profile x: repeats: must be a whole number from 1 to 10, got 11'),
    (doc(workloads=[{'op': 'put', 'concurrency': 5000}]),
     'profile x: workloads[0].concurrency: must be a whole number from 1 to 4096, got 5000'),
    (doc(workloads=[{'op': 'put', 'concurrency': 0}]),
     'profile x: workloads[0].concurrency: must be a whole number from 1 to 4096, got 0'),
    (doc(workloads=[{'op': 'put', 'duration': 10, 'warmup': 11}]),
     'profile x: workloads[0].warmup: must be 0 to the duration (10) seconds, got 11'),
    (doc(workloads=[{'op': 'put', 'warmup': -1}]),
     'profile x: workloads[0].warmup: must be 0 to the duration (60) seconds, got -1'),
    (doc(workloads=[{'op': 'put', 'concurrency': 2, 'processes': 4}]),
     'profile x: workloads[0].processes: 4 processes are more than the concurrency 2'),
    (doc(workloads=[{'op': 'copy'}]),
     "profile x: workloads[0].op: 'copy' is not an operation (use one of put, get, delete, "
     "head, list, mixed)"),
    (doc(workloads=[{'size': '4KiB'}]),
     'profile x: workloads[0]: op is missing (one of put, get, delete, head, list, mixed)'),
    (doc(workloads=[{'op': 'put', 'mix': {'get': 1}}]),
     'profile x: workloads[0].mix: only a mixed workload has a mix'),
    (doc(workloads=[{'op': 'mixed', 'mix': {'copy': 1}}]),
     "profile x: workloads[0].mix: unknown op 'copy' in mix (use put, get, delete, head, "
     "list)"),
    (doc(workloads=[{'op': 'put', 'size': '1TiB'}]),
     "profile x: workloads[0].size: '1TiB' is above the 5GiB an object may have here"),
    (doc(variants=[{'name': 'a', 'settings': {'tls@rgw': 'maybe'}}]),
     "profile x: variants[0].settings.tls@rgw: 'maybe' is not valid (expected on or off)"),
    (doc(variants=[{'name': 'a', 'settings': {'sse': 'rot13'}}]),
     "profile x: variants[0].settings.sse: 'rot13' is not valid (expected kms-testing, "
     "kms-kmip, kms-vault, sse-c, sse-s3, off, auto)"),
    (doc(variants=[{'name': 'a', 'settings': {'rgw-per-host': 40}}]),
     'profile x: variants[0].settings.rgw-per-host: 40 is not valid (expected a number of '
     'daemons, 1 to 16)'),
    (doc(variants=[{'name': 'a', 'settings': ['tls@rgw']}]),
     'profile x: variants[0].settings: must be a mapping of setting to value, e.g. '
     '{tls@rgw: on}'),
    (doc(variants=[{'name': 'a b'}]),
     "profile x: variants[0].name: 'a b' must be 1 to 41 letters, digits or . _ @ -, "
     "starting with a letter or digit"),
    (doc(placement=['h1', 'h1']), 'profile x: placement: host h1 is given twice'),
    (doc(placement=['h 1']), "profile x: placement: 'h 1' is not a host name"),
    (doc(name='Bad Name'), "profile 'Bad Name': the name must be 1 to 41 lower-case letters, "
                           "digits, _ or -, starting with a letter or digit"),
    ({'variants': []}, 'profile: name is missing'),
    ('[1, 2]', 'profile: expected a mapping (YAML or JSON) with name, variants and workloads'),
])
def test_refused_with_the_field_named(data: Any, message: str) -> None:
    assert refused(data) == message


@pytest.mark.parametrize('raw,expected', [
    (None, Target()), ('auto', Target()), ('rgw', Target(kind=RGW)),
    ('INGRESS', Target(kind=INGRESS)),
    ('http://10.0.0.1:8000, http://10.0.0.2:8000/',
     Target(kind=URLS, urls=('http://10.0.0.1:8000', 'http://10.0.0.2:8000'))),
    (['https://a:443'], Target(kind=URLS, urls=('https://a:443',)))])
def test_a_profile_names_its_target(raw: Any, expected: Target) -> None:
    profile = parse_profile(doc(target=raw), SETTINGS)
    assert profile.target == expected
    assert parse_profile(dump(profile), SETTINGS) == profile
    assert load(Profile, dump(profile)) == profile
    assert ('target' in dump(profile)) == (expected.kind != AUTO)


@pytest.mark.parametrize('raw,why', [
    ('haproxy', "'haproxy' is not rgw, ingress or http(s)://HOST:PORT URLs, comma separated"),
    ('http://a:1,https://b:2', 'the URLs must all be http:// or all https://'),
    ('http://a:1,http://a:1/', 'a URL is named twice'),
    ('http://a:1,ftp://b', "'ftp://b' is not an http(s)://HOST:PORT URL"),
    ('http://a:1/bucket', "'http://a:1/bucket' is not an http(s)://HOST:PORT URL"),
    ([], 'no URL given'),
    (7, '7 is not rgw, ingress or http(s)://HOST:PORT URLs, comma separated')])
def test_a_bad_target_is_refused_naming_the_field(raw: Any, why: str) -> None:
    assert refused(doc(target=raw)) == 'profile x: target: %s' % why


def test_yaml_booleans_are_setting_words() -> None:
    profile = parse_profile('name: y\nvariants:\n  - {name: a, settings: {tls@ingress: on, '
                            'msgr2-secure: off, sse: off}}\nworkloads: [{op: get}]\n',
                            SETTINGS)
    assert profile.variants[0].settings == {'tls@ingress': 'https', 'msgr2-secure': False,
                                            'sse': 'off'}


def test_messages_are_one_line() -> None:
    message = refused('name: x\nvariants: [{name: a}\nworkloads: [')
    assert message.startswith('profile: not JSON or YAML: ')
    assert '\n' not in message


# -- the store ---------------------------------------------------------------------------

def test_store_round_trip() -> None:
    store = MemoryStore()
    profiles = ProfileStore(store, SETTINGS)
    profile = profiles.set(SSE_YAML)
    assert json.loads(store.data['profile/mine']) == dump(profile)
    assert ' ' not in store.data['profile/mine'].replace('SSE at RGW against TLS and msgr2', '')
    assert profiles.get('mine') == profile
    listed = profiles.ls()
    assert [(i.profile.name, i.builtin) for i in listed] == \
        [(n, True) for n in builtin_names()] + [('mine', False)]
    assert dump(listed[-1])['builtin'] is False
    assert dump(listed[-1])['estimated_s'] == 2 * (2 * 72 + 60)
    profiles.rm('mine')
    assert 'profile/mine' not in store.data
    with pytest.raises(NotFound) as e:
        profiles.get('mine')
    assert str(e.value) == "no profile 'mine': `ceph rgwbench profile ls` lists them"
    assert e.value.errno == -2


def test_store_keeps_nothing_invalid() -> None:
    store = MemoryStore()
    with pytest.raises(InvalidInput):
        ProfileStore(store, SETTINGS).set(SSE_YAML.replace('duration: 60}', 'duration: -5}'))
    assert store.data == {}


def test_builtins_are_protected() -> None:
    store = MemoryStore()
    profiles = ProfileStore(store, SETTINGS)
    with pytest.raises(InvalidInput) as e:
        profiles.set(SSE_YAML.replace('name: mine', 'name: sse'))
    assert str(e.value) == 'profile sse: a built-in profile has this name; choose another name'
    with pytest.raises(InvalidInput) as e:
        profiles.rm('quick')
    assert str(e.value) == 'profile quick is built in and cannot be removed'
    assert store.data == {}
    assert profiles.get('quick').name == 'quick'
    assert profiles.info('sse').builtin is True


def test_rm_unknown() -> None:
    with pytest.raises(NotFound) as e:
        ProfileStore(MemoryStore(), SETTINGS).rm('nope')
    assert str(e.value) == "no profile 'nope': `ceph rgwbench profile ls` lists them"


def test_set_replaces_a_custom_profile() -> None:
    profiles = ProfileStore(MemoryStore(), SETTINGS)
    profiles.set(SSE_YAML)
    profiles.set(SSE_YAML.replace('repeats: 1', 'repeats: 3'))
    assert profiles.get('mine').repeats == 3
    assert [i.profile.name for i in profiles.ls()].count('mine') == 1


# -- overrides ---------------------------------------------------------------------------

def sse() -> Profile:
    return ProfileStore(MemoryStore(), SETTINGS).get('sse')


def test_overrides_apply_to_every_workload() -> None:
    profile = with_overrides(sse(), duration=20, concurrency=4, warmup=1, repeats=2,
                             placement='h1,h2')
    assert {(w.duration_s, w.concurrency, w.warmup_s) for w in profile.workloads} == \
        {(20.0, 4, 1.0)}
    assert (profile.repeats, profile.placement) == (2, ['h1', 'h2'])
    assert with_overrides(profile, placement=[]).placement == []
    assert with_overrides(sse()) == sse()


def test_sizes_multiply_workloads() -> None:
    profile = parse_profile(doc(workloads=[{'op': 'put', 'size': '4MiB'},
                                           {'name': 'reads', 'op': 'get'}]), SETTINGS)
    resized = with_overrides(profile, sizes='64KiB, 1MiB')
    assert [(w.name, w.op, w.size) for w in resized.workloads] == [
        ('put-64KiB', 'put', '64KiB'), ('put-1MiB', 'put', '1MiB'),
        ('reads-64KiB', 'get', '64KiB'), ('reads-1MiB', 'get', '1MiB')]
    assert with_overrides(profile, sizes=['8KiB']).workloads[0].name == 'put-8KiB'


def test_one_size_runs_a_study_of_several_sizes_at_that_size() -> None:
    # The tls study has PUT and GET at 4 KiB and at 4 MiB: at 64 KiB only, once each.
    (tls,) = [p for p in builtin_profiles(SETTINGS) if p.name == 'tls']
    assert len({w.size for w in tls.workloads}) > 1
    resized = with_overrides(tls, sizes='64KiB')
    ops = list(dict.fromkeys(w.op for w in tls.workloads))
    assert [w.name for w in resized.workloads] == ['%s-64KiB' % op for op in ops]
    assert {w.size for w in resized.workloads} == {'64KiB'}


@pytest.mark.parametrize('overrides, message', [
    ({'duration': -5}, '--duration: must be a positive number of seconds, got -5'),
    ({'duration': 2}, '--duration: 2 is shorter than the warm-up (5s) of workload put-4MiB; '
                      'give --warmup too'),
    ({'duration': 10, 'warmup': 20},
     '--warmup: must be 0 to the duration (10) seconds, got 20 (workload put-4MiB)'),
    ({'warmup': -1}, '--warmup: must be 0 or more seconds, got -1'),
    ({'concurrency': 0}, '--concurrency: must be a whole number from 1 to 4096, got 0'),
    ({'sizes': '0'}, "--sizes: '0' is not a size (object size must be at least 1 byte, "
                     "got '0')"),
    ({'sizes': ','}, '--sizes: give at least one size, e.g. 4KiB,4MiB'),
    ({'repeats': 20}, '--repeats: must be a whole number from 1 to 10, got 20'),
    ({'placement': ['a b']}, "--placement: 'a b' is not a host name"),
])
def test_overrides_are_checked(overrides: Dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput) as e:
        with_overrides(sse(), **overrides)
    assert str(e.value) == message


def test_processes_and_payload_signing_overrides_apply_to_every_workload() -> None:
    profile = with_overrides(sse(), processes=2, payload_signing='signed')
    assert {(w.processes, w.payload_signing) for w in profile.workloads} == {(2, 'signed')}
    # text, as the panel sends it, is the same override
    assert with_overrides(sse(), processes=' 2 ', payload_signing='signed') == profile
    per_core = with_overrides(sse(), processes=0, payload_signing='unsigned')
    assert {(w.processes, w.payload_signing) for w in per_core.workloads} == {(0, 'unsigned')}
    assert [w.job_fields()['processes'] for w in per_core.workloads] == [0, 0]


@pytest.mark.parametrize('overrides, message', [
    ({'processes': 65}, '--processes: must be a whole number from 0 to 64, got 65'),
    ({'processes': 1.5}, '--processes: must be a whole number from 0 to 64, got 1.5'),
    ({'processes': 'all'}, "--processes: must be a whole number from 0 to 64, got 'all'"),
    ({'processes': 17}, '--processes: 17 processes are more than the concurrency 16 '
                        '(workload put-4MiB)'),
    ({'payload_signing': 'auto'},
     "--payload-signing: 'auto' is not a signing mode (use unsigned or signed)"),
    ({'payload_signing': 'UNSIGNED-PAYLOAD'},
     "--payload-signing: 'UNSIGNED-PAYLOAD' is not a signing mode (use unsigned or signed)"),
])
def test_processes_and_payload_signing_overrides_are_checked_as_documents(
        overrides: Dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput) as e:
        with_overrides(sse(), **overrides)
    assert str(e.value) == message
    # the same limit, in the same words, for a profile's document
    (field, value), = overrides.items()
    document = refused(doc(workloads=[{'op': 'put', 'size': '4MiB', field: value}]))
    assert document.split(': ', 2)[2] == message.split(': ', 1)[1].split(' (workload ')[0]


def test_concurrency_below_processes_names_the_override() -> None:
    profile = parse_profile(doc(workloads=[{'op': 'put', 'concurrency': 8, 'processes': 4}]),
                            SETTINGS)
    with pytest.raises(InvalidInput) as e:
        with_overrides(profile, concurrency=2)
    assert str(e.value) == ('--concurrency: 4 processes are more than the concurrency 2 '
                            '(workload put-4KiB)')
    with pytest.raises(InvalidInput) as e:
        with_overrides(profile, processes=16)
    assert str(e.value) == ('--processes: 16 processes are more than the concurrency 8 '
                            '(workload put-4KiB)')


# -- estimates and text ------------------------------------------------------------------

def test_estimate() -> None:
    profile = parse_profile(doc(workloads=[{'op': 'put', 'duration': 30, 'warmup': 5},
                                           {'op': 'get', 'duration': 30, 'warmup': 5}],
                                variants=[{'name': 'a'},
                                          {'name': 'b', 'settings': {'tls@rgw': 'on'}}],
                                repeats=2), SETTINGS)
    # 2 repeats x (2 variants x 2 workloads x (30 + 5 + 7) + 10 for a + 60 for b)
    assert estimate_seconds(profile) == 2 * (4 * 42 + 10 + 60)
    assert format_duration(460) == '7m 40s'
    assert format_duration(3600) == '1h'
    assert format_duration(0) == '0s'


def test_profile_to_text() -> None:
    text = profile_to_text(ProfileStore(MemoryStore(), SETTINGS).info('quick'))
    lines = text.splitlines()
    assert lines[0] == 'Profile quick (built-in)'
    assert 'Baseline: as-is' in lines
    assert 'Estimated duration: 2m 26s' in lines
    assert '  as-is (baseline)  the cluster as it is' in lines
    assert '  threads-256       config: client.rgw/rgw_thread_pool_size=256' in lines
    assert '  put-4KiB  put  4KiB  16 per RGW   per core   10s       2s      1' in lines
    # the dict form (`-f json`) renders the same
    info = ProfileStore(MemoryStore(), SETTINGS).info('quick')
    assert profile_to_text(dump(info)) == text


def test_profile_to_text_says_what_the_engine_fields_set() -> None:
    profile = parse_profile(doc(workloads=[
        {'op': 'get', 'size': '64KiB', 'rates': [20, 40], 'objects': 300, 'range': '0-16KiB'},
        {'op': 'put', 'size': '1GiB', 'part_size': '32MiB'}, {'op': 'put'}]), SETTINGS)
    lines = profile_to_text(profile).splitlines()
    assert lines[-7:] == [
        '  get-64KiB@20/s  open loop at 20 ops/s over all agents',
        '                  working set 300 objects',
        '                  ranged GET of bytes 0-16KiB',
        '  get-64KiB@40/s  open loop at 40 ops/s over all agents',
        '                  working set 300 objects',
        '                  ranged GET of bytes 0-16KiB',
        '  put-1GiB        multipart above 64MiB in parts of 32MiB']


def test_profiles_to_text() -> None:
    store = ProfileStore(MemoryStore(), SETTINGS)
    store.set(SSE_YAML)
    infos: List[ProfileInfo] = store.ls()
    lines = profiles_to_text(infos).splitlines()
    assert lines[0].split() == ['PROFILE', 'KIND', 'VARIANTS', 'WORKLOADS', 'ESTIMATED']
    assert lines[-1].split() == ['mine', 'custom', 'tls-msgr2,', 'sse-kms', '2', '6m', '48s']
    assert lines[7].split()[:3] == ['quick', 'built-in', 'as-is,']
    assert profiles_to_text([dump(i) for i in infos]) == profiles_to_text(infos)
    assert profiles_to_text([]) == 'No profiles.'


DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), *(['..'] * 5),
                   'doc', 'mgr', 'rgwbench.rst')


def test_docs_table_matches_the_builtins() -> None:
    with open(DOC) as f:
        rows = {line.split()[0].strip('`'): line.split()
                for line in f if line.startswith('``') and len(line.split()) >= 5
                and line.split()[2].isdigit()}
    for profile in builtin_profiles(SETTINGS):
        row = rows[profile.name]
        assert row[1].strip('`') == profile.baseline
        assert int(row[2]) == len(profile.variants)
        assert int(row[3]) == len(profile.workloads)
        assert ' '.join(row[4:]) == format_duration(estimate_seconds(profile))


# -- open loop, working set, multipart, ranged GET ----------------------------------------

def test_engine_fields_reach_the_job() -> None:
    profile = parse_profile(doc(workloads=[{
        'op': 'get', 'size': '4MiB', 'rate': 250, 'objects': 5000, 'range': '0-1MiB',
        'multipart_threshold': '8MiB', 'part_size': '5MiB', 'processes': 2}]), SETTINGS)
    (workload,) = profile.workloads
    assert workload.name == 'get-4MiB@250/s'
    job = Job(endpoint='http://rgw:80', access_key='k', secret_key='s',
              **workload.job_fields()).validate()
    assert (job.rate, job.objects, job.range, job.multipart_threshold, job.part_size) == \
        (250.0, 5000, '0-1MiB', '8MiB', '5MiB')
    assert (job.processes, job.payload_signing) == (2, 'unsigned')
    assert job.range_header == 'bytes=0-1048575'
    assert job.working_set_bytes() == 5000 * (4 << 20)
    # the document form round-trips, the stored name included
    assert parse_profile(dump(profile), SETTINGS) == profile
    assert load(Workload, dump(workload)) == workload


def test_unset_engine_fields_leave_the_engine_defaults() -> None:
    (workload,) = parse_profile(doc(), SETTINGS).workloads
    job = Job(endpoint='http://rgw:80', access_key='k', secret_key='s',
              **workload.job_fields())
    defaults = Job()
    assert (job.rate, job.objects, job.range, job.multipart_threshold, job.part_size) == (
        defaults.rate, defaults.objects, defaults.range, defaults.multipart_threshold,
        defaults.part_size)
    assert set(dump(workload)) == {'name', 'op', 'size', 'concurrency', 'duration',
                                   'warmup', 'processes', 'buckets', 'payload_signing'}


def test_rates_expand_to_a_workload_per_rate() -> None:
    profile = parse_profile(doc(workloads=[
        {'op': 'get', 'rates': [100, 200, 12.5]},
        {'name': 'reads', 'op': 'get', 'size': '1MiB', 'rates': '50,100'}]), SETTINGS)
    assert [(w.name, w.rate) for w in profile.workloads] == [
        ('get-4KiB@100/s', 100.0), ('get-4KiB@200/s', 200.0), ('get-4KiB@12.5/s', 12.5),
        ('reads@50/s', 50.0), ('reads@100/s', 100.0)]
    assert parse_profile(dump(profile), SETTINGS) == profile


@pytest.mark.parametrize('workload, message', [
    ({'op': 'get', 'rate': 0},
     'workloads[0].rate: must be a number of operations a second above 0 and at most '
     '100000, got 0'),
    ({'op': 'get', 'rate': 'fast'},
     "workloads[0].rate: must be a number of operations a second above 0 and at most "
     "100000, got 'fast'"),
    ({'op': 'get', 'rates': [100, 100]}, 'workloads[0].rates: gives a rate twice'),
    ({'op': 'get', 'rates': []},
     'workloads[0].rates: must be a list of operations a second, e.g. [100, 200, 400]'),
    ({'op': 'get', 'rates': list(range(1, 18))}, 'workloads[0].rates: has 17 rates, at most 16'),
    ({'op': 'get', 'rate': 5, 'rates': [1, 2]},
     'workloads[0].rates: give rate or rates, not both'),
    ({'op': 'put', 'objects': 10},
     'workloads[0].objects: only a workload that reads (get, head, list, delete or mixed) '
     'has a working set'),
    ({'op': 'get', 'objects': 0},
     'workloads[0].objects: must be a whole number from 1 to 1000000, got 0'),
    ({'op': 'get', 'size': '1GiB', 'objects': 2000},
     'workloads[0].objects: 2000 objects of 1GiB are 2000GiB, more than the 1TiB a working '
     'set may have here'),
    ({'op': 'get', 'part_size': '1MiB'},
     "workloads[0].part_size: must be 5MiB to 5GiB (S3's part sizes), got '1MiB'"),
    ({'op': 'get', 'multipart_threshold': '6GiB'},
     "workloads[0].multipart_threshold: must be 1B to 5GiB (the largest single PUT), got "
     "'6GiB'"),
    ({'op': 'put', 'multipart_threshold': 'big'},
     "workloads[0].multipart_threshold: 'big' is not a size (bad size 'big': use a number "
     "with an optional unit (B, KiB, MiB, GiB, KB, MB, GB))"),
    ({'op': 'get', 'range': '0-8KiB'},
     'workloads[0].range: 0-8KiB reaches past the end of the smallest object (4KiB)'),
    ({'op': 'get', 'range': '4KiB-1KiB'},
     "workloads[0].range: range '4KiB-1KiB' is empty: END must be past START"),
    ({'op': 'get', 'range': 5},
     'workloads[0].range: 5 is not a range: write START-END, e.g. 0-1MiB'),
    ({'op': 'head', 'range': '0-1KiB'},
     'workloads[0].range: only a workload that GETs (get or mixed) reads a range'),
    ({'op': 'put', 'size': '8GiB', 'multipart_threshold': '64MiB', 'part_size': '5MiB'},
     "workloads[0].size: '8GiB' is above the 5GiB an object may have here"),
])
def test_engine_fields_are_checked(workload: Dict[str, Any], message: str) -> None:
    assert refused(doc(workloads=[workload])) == 'profile x: ' + message


def test_rate_overrides_name_the_rate_and_collapse_a_curve() -> None:
    profile = parse_profile(doc(workloads=[{'op': 'get', 'rates': [100, 200]},
                                           {'name': 'w', 'op': 'put'}]), SETTINGS)
    at_one = with_overrides(profile, rate=50)
    assert [(w.name, w.rate) for w in at_one.workloads] == [
        ('get-4KiB@50/s', 50.0), ('w@50/s', 50.0)]
    curve = with_overrides(profile, rates='10,20', sizes='64KiB')
    assert [(w.name, w.size, w.rate) for w in curve.workloads] == [
        ('get-64KiB@10/s', '64KiB', 10.0), ('get-64KiB@20/s', '64KiB', 20.0),
        ('w-64KiB@10/s', '64KiB', 10.0), ('w-64KiB@20/s', '64KiB', 20.0)]
    # a size override keeps the rate a workload has, and its name says both
    resized = with_overrides(profile, sizes='1MiB')
    assert [w.name for w in resized.workloads] == ['get-1MiB@100/s', 'get-1MiB@200/s',
                                                   'w-1MiB']


def test_reader_overrides_change_the_workloads_that_read() -> None:
    profile = with_overrides(sse(), objects=20000, range='0-1MiB', part_size='8MiB',
                             multipart_threshold='16MiB')
    for workload in profile.workloads:
        reads = workload.op == 'get'
        assert workload.objects == (20000 if reads else None)
        assert workload.range == ('0-1MiB' if reads else None)
        assert (workload.part_size, workload.multipart_threshold) == ('8MiB', '16MiB')


def test_overrides_compose_with_sizes() -> None:
    # `run --profile tls --sizes 64KiB` with the new overrides on top
    (tls,) = [p for p in builtin_profiles(SETTINGS) if p.name == 'tls']
    chosen = with_overrides(tls, sizes='64KiB', rate=100, objects=500, duration=10)
    ops = list(dict.fromkeys(w.op for w in tls.workloads))
    assert [w.name for w in chosen.workloads] == ['%s-64KiB@100/s' % op for op in ops]
    assert {(w.rate, w.duration_s) for w in chosen.workloads} == {(100.0, 10.0)}


@pytest.mark.parametrize('overrides, message', [
    ({'rate': -1}, '--rate: must be a number of operations a second above 0 and at most '
                   '100000, got -1'),
    ({'rate': 5, 'rates': '1,2'}, '--rates: give --rate or --rates, not both'),
    ({'rates': '5,5'}, '--rates: gives a rate twice'),
    ({'objects': 0}, '--objects: must be a whole number from 1 to 1000000, got 0'),
    ({'range': '0-8MiB'}, '--range: 0-8MiB reaches past the end of the smallest object '
                          '(4MiB) (workload get-4MiB)'),
    ({'part_size': '4MiB'}, "--part-size: must be 5MiB to 5GiB (S3's part sizes), got '4MiB'"),
    ({'multipart_threshold': '0'},
     "--multipart-threshold: must be 1B to 5GiB (the largest single PUT), got '0'"),
])
def test_engine_field_overrides_are_checked(overrides: Dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput) as e:
        with_overrides(sse(), **overrides)
    assert str(e.value) == message


def test_reader_overrides_need_a_workload_that_reads() -> None:
    puts = parse_profile(doc(), SETTINGS)
    with pytest.raises(InvalidInput) as e:
        with_overrides(puts, objects=10)
    assert str(e.value) == ('--objects: no workload of this profile reads objects (get, head, '
                            'list, delete or mixed)')
    with pytest.raises(InvalidInput) as e:
        with_overrides(puts, range='0-1KiB')
    assert str(e.value) == '--range: no workload of this profile GETs (get or mixed)'


def test_a_concurrency_per_rgw_is_checked_kept_and_given_up_for_a_total() -> None:
    profile = parse_profile({'name': 'p', 'description': 'd', 'baseline': 'a',
                             'variants': [{'name': 'a', 'settings': {}}],
                             'workloads': [{'op': 'get', 'concurrency_per_rgw': 32}]},
                            SETTINGS)
    (workload,) = profile.workloads
    assert workload.concurrency_per_rgw == 32
    assert workload.for_rgws(3, 1024).concurrency == 96
    assert workload.for_rgws(0, 1024).concurrency == 32
    assert workload.for_rgws(100, 1024).concurrency == 1024
    assert load(Workload, dump(workload)) == workload
    # a concurrency given on the command line is the total, per RGW no more
    (given,) = with_overrides(profile, concurrency=8).workloads
    assert given.concurrency == 8 and given.concurrency_per_rgw is None
    assert given.for_rgws(3, 1024).concurrency == 8
    with pytest.raises(InvalidInput, match=r'workloads\[0\].concurrency_per_rgw'):
        parse_profile({'name': 'p', 'description': 'd', 'baseline': 'a',
                       'variants': [{'name': 'a', 'settings': {}}],
                       'workloads': [{'op': 'get', 'concurrency_per_rgw': 0}]}, SETTINGS)
    # the built-ins give theirs per RGW: a cluster of more RGWs is loaded as hard; but
    # rgw-sizing, whose variants change the RGW count (see its own test)
    assert all(w.concurrency_per_rgw for p in builtin_profiles(SETTINGS)
               for w in p.workloads if p.name != 'rgw-sizing')


def test_a_plan_says_how_each_agent_sends_the_load() -> None:
    def said(profile: Profile) -> List[str]:
        text = run_plan_to_text({
            'profile': profile.name, 'variants': [], 'repeats': 1, 'estimated_s': 60,
            'problems': [], 'workloads': [dump(w) for w in profile.workloads]})
        return [line for line in text.splitlines() if line.startswith('each agent: ')]
    assert said(sse()) == [
        'each agent: one engine process per core of its host (at most '
        'agent_processes_max); payload unsigned (UNSIGNED-PAYLOAD), in every variant']
    assert said(with_overrides(sse(), processes=2, payload_signing='signed')) == [
        'each agent: 2 engine processes; payload signed (its SHA-256), in every variant']
    mixed = parse_profile(doc(workloads=[{'op': 'put', 'processes': 1},
                                         {'op': 'get'}]), SETTINGS)
    assert said(mixed) == [
        'each agent: put-4KiB: 1 engine process, get-4KiB: one engine process per core of '
        'its host (at most agent_processes_max); payload unsigned (UNSIGNED-PAYLOAD), in '
        'every variant']
