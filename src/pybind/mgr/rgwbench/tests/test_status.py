import json

from rgwbench.cluster.orchestration import OrchestratorState
from rgwbench.status import build_status, ceph_version_number, status_to_text
from rgwbench.version import MODULE_VERSION

from fixtures import rgw_service_map


def test_version_number() -> None:
    assert ceph_version_number(
        'ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)'
    ) == '16.2.15'
    assert ceph_version_number('20.2.4') == '20.2.4'
    assert ceph_version_number('unknown') == 'unknown'


def test_status_fields_and_text() -> None:
    status = build_status('20.2.4', 'tentacle',
                          OrchestratorState('cephadm', True, ''),
                          rgw_service_map(**{'default.vm.a': 'beast port=8000'}),
                          {'run_id': 'r-1'})
    assert status['module_version'] == MODULE_VERSION
    assert status['ceph_release'] == 'tentacle'
    assert status['run_in_progress'] is True
    assert status['rgw_daemons'][0]['endpoints'][0]['port'] == 8000
    text = status_to_text(status)
    assert 'Ceph 20.2.4 (tentacle)' in text
    assert 'cephadm (available)' in text
    assert 'r-1 in progress' in text
    assert 'http://127.0.0.1:8000' in text


def test_status_text_without_daemons_or_orchestrator() -> None:
    status = build_status('16.2.15', 'pacific',
                          OrchestratorState(None, False, 'no orchestrator backend set'),
                          {}, None)
    assert status['run_in_progress'] is False
    text = status_to_text(status)
    assert 'not available: no orchestrator backend set' in text
    assert 'none found in the service map' in text
    assert 'none in progress' in text


def test_live_figures_are_one_readable_clause() -> None:
    from rgwbench.status import live_text
    assert live_text(None) == ''
    assert live_text({'agents': 2, 'phase': 'measuring', 'ops_per_s': 1234.5,
                      'mib_per_s': 4.8213, 'errors': 0}) == \
        '; now 1234.5 ops/s, 4.82 MiB/s (2 agents, measuring)'


def test_leftovers_say_whether_their_workload_was_cut_off_or_ended() -> None:
    status = build_status('20.2.4', 'tentacle', OrchestratorState('cephadm', True, ''), {}, None)
    status['leftovers'] = [
        {'bucket_prefix': 'rgwbench-a', 'agents': {}, 'errors': [], 'ended': False},
        {'bucket_prefix': 'rgwbench-b', 'agents': {}, 'errors': ['buckets: refused'],
         'ended': True}]
    lines = status_to_text(status).splitlines()
    assert 'left by an interrupted workload, being removed: rgwbench-a (not tried yet)' in lines
    assert 'left by a workload whose clean-up failed, being removed: rgwbench-b (buckets: ' \
        'refused)' in lines


def test_status_json_is_what_it_always_was() -> None:
    # `status -f json` prints this document: its keys and their order are an interface
    status = build_status('20.2.4', 'tentacle', OrchestratorState('cephadm', True, ''),
                          rgw_service_map(**{'default.vm.a': 'beast port=8000 ssl_port=8443'}),
                          None)
    assert json.dumps(status['orchestrator']) == (
        '{"backend": "cephadm", "available": true, "message": ""}')
    assert json.dumps(status['rgw_daemons']) == (
        '[{"name": "default.vm.a", "host": "vm", "zone": "default", "pid": null, "key": "4131", '
        '"ceph_version": "ceph version 20.2.4 (7f79) tentacle (stable)", '
        '"frontends": ["beast port=8000 ssl_port=8443"], "endpoints": ['
        '{"scheme": "http", "host": "127.0.0.1", "port": 8000, "url": "http://127.0.0.1:8000"}, '
        '{"scheme": "https", "host": "127.0.0.1", "port": 8443, '
        '"url": "https://127.0.0.1:8443"}]}]')
    none = build_status('16.2.15', 'pacific', OrchestratorState(None, False, 'no backend'), {},
                        None)
    assert json.dumps(none['orchestrator']) == (
        '{"backend": null, "available": false, "message": "no backend"}')
