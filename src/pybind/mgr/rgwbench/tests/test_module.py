"""The module as ceph-mgr drives it: registered commands called with a cmd dict."""
import errno
import json
import threading
import time
from typing import Any, Dict, List

import pytest

from rgwbench.serial import dump
from rgwbench.errors import InvalidInput
from rgwbench.module import Module
from rgwbench.panel.app import SESSION_COOKIE, Request, Response
from rgwbench.profiles import Profile, with_overrides
from rgwbench.results.model import Run

from rgwbench.tests.module_harness import ModuleUnderTest, call
from rgwbench.tests.module_harness import registered  # noqa: F401 (a fixture)


class FakeOrchestratorResult:
    """An OrchResult-like answer, as newer orchestrators return."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.exception = None
        self.serialized_exception = None
        self.exception_str = ''


def commands() -> List[Dict[str, Any]]:
    return [c for c in Module.COMMANDS if c['cmd'].startswith('rgwbench ')]


def test_status_command_is_registered_with_format() -> None:
    (status,) = [c for c in commands() if c['cmd'].startswith('rgwbench status')]
    assert status['perm'] == 'r'
    assert 'name=format' in status['cmd']
    assert status['desc']


def test_status_json_without_orchestrator() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    res = call(mod, 'rgwbench status', format='json')
    assert res.retval == 0, res.stderr
    status = json.loads(res.stdout)
    assert status['ceph_version'] == '16.2.15'
    assert status['ceph_release'] == 'pacific'
    assert status['orchestrator'] == {
        'backend': None, 'available': False,
        'message': 'no orchestrator backend set (ceph orch set backend)'}
    assert [d['name'] for d in status['rgw_daemons']] == ['default.vm.a']
    assert status['rgw_daemons'][0]['endpoints'][0]['port'] == 25598
    assert status['run_in_progress'] is False


@pytest.mark.parametrize('answer', [(True, '', {}), FakeOrchestratorResult((True, '', {}))])
def test_status_with_an_available_orchestrator(answer: Any) -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): 'cephadm',
                           ('cephadm', 'available'): answer})
    status = json.loads(call(mod, 'rgwbench status', format='json').stdout)
    assert status['orchestrator'] == {'backend': 'cephadm', 'available': True, 'message': ''}


def test_status_when_the_backend_fails() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): 'rook',
                           ('rook', 'available'): RuntimeError('k8s unreachable')})
    status = json.loads(call(mod, 'rgwbench status', format='json').stdout)
    assert status['orchestrator']['available'] is False
    assert 'k8s unreachable' in status['orchestrator']['message']


def test_status_shows_the_active_run() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    mod.services.runs._record = Run(run_id='sse-20261122-1', profile='sse',
                                    state='running', started=1.0, progress='variant tls')
    res = call(mod, 'rgwbench status')
    assert res.retval == 0
    assert 'run: sse-20261122-1 in progress' in res.stdout
    assert json.loads(call(mod, 'rgwbench status', format='json-pretty').stdout)[
        'run_in_progress'] is True


def test_status_plain_and_yaml() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    plain = call(mod, 'rgwbench status').stdout
    assert plain.startswith('rgwbench ')
    assert 'default.vm.a' in plain and 'http://127.0.0.1:25598' in plain
    assert 'ceph_release: pacific' in call(mod, 'rgwbench status', format='yaml').stdout


def test_unknown_format_is_one_line_einval() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    res = call(mod, 'rgwbench status', format='xml')
    assert res.retval == -errno.EINVAL
    assert res.stdout == ''
    assert '\n' not in res.stderr.strip()
    assert "unsupported output format 'xml'" in res.stderr


def test_settings_and_loads_wait_while_a_run_goes() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    mod.services.runs._record = Run(run_id='r-1', profile='quick', state='running',
                                    started=1.0, progress='variant as-is')
    res = call(mod, 'rgwbench settings apply', settings=['msgr2-secure=on'],
               yes_i_really_mean_it=True)
    assert res.retval == -errno.EBUSY and 'run r-1 is in progress' in res.stderr
    res = call(mod, 'rgwbench load')
    assert res.retval == -errno.EBUSY and 'run r-1 is in progress' in res.stderr


def test_a_failing_clean_up_does_not_keep_the_settings_from_being_put_back() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    recovered: List[str] = []

    def broken(remove_service: Any) -> None:
        raise RuntimeError('results store unreadable')
    mod.services.loads.recover = broken  # type: ignore
    mod.services.runs.recover = broken  # type: ignore
    mod.services.settings.recover = lambda stopping: recovered.append('settings')  # type: ignore
    mod._stopping.set()
    mod.serve()
    assert recovered == ['settings']


def test_an_option_change_never_waits_for_the_panel() -> None:
    mod = ModuleUnderTest({})
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow_restart() -> None:        # as one waiting for its port to be let go
        started.set()
        release.wait(120)
        finished.set()

    mod.services.panel.restart_if_changed = slow_restart  # type: ignore[method-assign]
    mod.config_notify()
    assert not finished.is_set()       # config_notify came back while the restart waits
    assert started.wait(60), 'the panel was not asked to restart'
    release.set()
    assert finished.wait(60)
    mod._stopping.set()
    started.clear()
    mod.config_notify()                # nothing after a shutdown
    assert not started.wait(0.5)


def test_a_run_is_refused_while_a_load_goes_and_the_reverse() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    mod.services.loads._active = {'load_id': 'l-1', 'state': 'running'}
    res = call(mod, 'rgwbench settings apply', settings=['msgr2-secure=on'],
               yes_i_really_mean_it=True)
    assert res.retval == -errno.EBUSY and 'load l-1 is in progress' in res.stderr
    res = call(mod, 'rgwbench settings revert')
    assert res.retval == -errno.EBUSY and 'load l-1 is in progress' in res.stderr
    res = call(mod, 'rgwbench load')
    assert res.retval == -errno.EBUSY and 'load l-1 is in progress' in res.stderr


def test_agents_count_the_rgw_daemons_by_name_without_an_orchestrator() -> None:
    mod = ModuleUnderTest({})
    mod._fake_data['mon_map'] = {'fsid': '5b5c7a9e-0000-4000-8000-000000000001'}
    daemons = mod.services.server_daemons()
    assert daemons.fsid == '5b5c7a9e-0000-4000-8000-000000000001'
    assert daemons.on_host('vm') == {'rgw.default.vm.a': 'vm'}  # and no HAProxy


def test_what_could_not_be_removed_is_tried_again_until_the_module_stops() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    mod.leftovers_retry_s = 0.01
    tries: List[str] = []
    mod.services.settings.recover = lambda stopping: None  # type: ignore

    def not_yet(remove_service: Any) -> List[str]:
        tries.append('load')
        if len(tries) >= 4:
            mod._stopping.set()
            return []
        raise RuntimeError('orchestrator not available yet')
    mod.services.loads.recover = not_yet  # type: ignore
    mod.services.runs.recover = lambda remove_service: None  # type: ignore
    mod.services.loads.leftovers.pending = lambda: [{'bucket_prefix': 'rgwbench-x'}]  # type: ignore
    mod.services.runs.leftovers.pending = lambda: []  # type: ignore
    thread = threading.Thread(target=mod.serve, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and tries == ['load'] * 4
    # Nothing left: nothing asked.
    mod._stopping.clear()
    tries.clear()
    mod.services.loads.leftovers.pending = lambda: []  # type: ignore
    thread = threading.Thread(target=mod.serve, daemon=True)
    thread.start()
    time.sleep(0.2)
    mod._stopping.set()
    thread.join(10)
    assert tries == ['load']   # the start's own try only


@pytest.mark.parametrize('prefix', ['rgwbench plan', 'rgwbench run', 'rgwbench load'])
def test_workload_field_options_are_declared(prefix: str) -> None:
    (command,) = [c for c in commands() if c['cmd'].split(' name=')[0] == prefix]
    for option in ('rate,req=false,type=CephFloat', 'objects,req=false,type=CephInt',
                   'multipart_threshold,req=false,type=CephString',
                   'part_size,req=false,type=CephString', 'range,req=false,type=CephString'):
        assert ' name=%s' % option in command['cmd']
    assert (' name=rates,req=false,type=CephString' in command['cmd']) == (
        prefix != 'rgwbench load')


def test_run_overrides_reach_the_profile_and_are_checked() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    taken = mod.services.starter.profile('tls', dict(sizes='64KiB', rate=100.0, rates=None,
                                                     objects=500, range='0-1KiB',
                                                     multipart_threshold=None,
                                                     part_size=None))
    assert {(w.size, w.rate) for w in taken.workloads} == {('64KiB', 100.0)}
    assert {w.objects for w in taken.workloads if w.op == 'get'} == {500}
    res = call(mod, 'rgwbench run', profile='tls', sizes='64KiB', rate=100.0, objects=500)
    assert res.retval == -errno.EINVAL and 'add --yes-i-really-mean-it' in res.stderr
    res = call(mod, 'rgwbench run', profile='tls', rates='10,10', yes_i_really_mean_it=True)
    assert res.retval == -errno.EINVAL
    assert res.stderr.strip().endswith('--rates: gives a rate twice')
    assert mod.services.runs.active() is None


@pytest.mark.parametrize('prefix', ['rgwbench plan', 'rgwbench run'])
def test_processes_and_payload_signing_are_overrides(prefix: str) -> None:
    (command,) = [c for c in commands() if c['cmd'].split(' name=')[0] == prefix]
    for option in ('processes,req=false,type=CephInt',
                   'payload_signing,req=false,type=CephString'):
        assert ' name=%s' % option in command['cmd']


def test_processes_and_payload_signing_reach_the_profile_and_are_checked() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    taken = mod.services.starter.profile('tls', dict(processes=0, payload_signing='signed'))
    assert {(w.processes, w.payload_signing) for w in taken.workloads} == {(0, 'signed')}
    for words, message in (
            (dict(processes=65), '--processes: must be a whole number from 0 to 64, got 65'),
            (dict(processes=-1), '--processes: must be a whole number from 0 to 64, got -1'),
            (dict(payload_signing='auto'),
             "--payload-signing: 'auto' is not a signing mode (use unsigned or signed)"),
            (dict(concurrency=2, processes=4),
             '--processes: 4 processes are more than the concurrency 2 (workload put-64KiB)')):
        for prefix in ('rgwbench plan', 'rgwbench run'):
            res = call(mod, prefix, profile='tls', yes_i_really_mean_it=True, **words) \
                if prefix == 'rgwbench run' else call(mod, prefix, profile='tls', **words)
            assert res.retval == -errno.EINVAL, (prefix, words, res)
            assert res.stderr == message and '\n' not in res.stderr
            assert res.stdout == ''
    assert mod.services.runs.active() is None
    assert dump(mod.services.results.summaries()) == []


def panel(mod: Module, method: str, path: str, fields: Dict[str, str]) -> Response:
    """A request of a logged-in browser to the module's own panel app."""
    session = mod.services.panel.sessions.open(mod.services.panel.passwords.version())
    return mod.services.panel.app.handle(Request(
        method, path, fields if method == 'GET' else {}, fields if method == 'POST' else {},
        {'x-csrf-token': session.csrf}, {SESSION_COOKIE: session.token}, '192.0.2.7', True))


def test_the_panels_overrides_take_the_clis_path(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    planned: List[Profile] = []
    started: List[Profile] = []

    def plan(chosen: Profile) -> Dict[str, Any]:
        planned.append(chosen)
        return {'profile': chosen.name}
    monkeypatch.setattr(mod.services.runs, 'plan', plan)
    monkeypatch.setattr('rgwbench.runs.starter.run_plan_to_text', lambda plan: 'the plan')

    def start(chosen: Profile, force: bool = False) -> str:
        started.append(chosen)
        return 'run-1'
    monkeypatch.setattr(mod.services.runs, 'start', start)
    form = {'profile': 'tls', 'duration': '20', 'warmup': '2', 'repeats': '2',
            'rates': '100,200', 'objects': '500', 'multipart_threshold': '16MiB',
            'part_size': '8MiB', 'range': '0-1KiB', 'processes': '0',
            'payload_signing': 'signed'}
    answer = panel(mod, 'GET', '/api/plan', form)
    assert answer.status == 200, answer.body
    assert json.loads(answer.body) == {'plan': {'profile': 'tls'}, 'text': 'the plan'}
    (chosen,) = planned
    assert chosen == with_overrides(
        mod.services.profiles.get('tls'), duration=20, warmup=2, repeats=2, rates=[100.0, 200.0],
        objects=500, multipart_threshold='16MiB', part_size='8MiB', range='0-1KiB',
        processes=0, payload_signing='signed')
    assert chosen.repeats == 2 and [w.name for w in chosen.workloads][:2] == [
        'put-64KiB@100/s', 'put-64KiB@200/s']
    assert {(w.processes, w.payload_signing, w.part_size, w.duration_s)
            for w in chosen.workloads} == {(0, 'signed', '8MiB', 20.0)}
    started_answer = panel(mod, 'POST', '/api/runs', dict(form, confirm='yes'))
    assert started_answer.status == 202 and started == planned
    # What the CLI refuses, the panel refuses in the same words, and nothing starts.
    for field, text in (('warmup', '2s'), ('repeats', '1.5'), ('processes', '65'),
                        ('processes', 'all'), ('payload_signing', 'auto'),
                        ('rates', '5,5'), ('rate', 'fast'), ('part_size', '4MiB'),
                        ('objects', '1e3x'), ('range', '0-8MiB')):
        with pytest.raises(InvalidInput) as e:
            with_overrides(mod.services.profiles.get('tls'), **{field: text})
        for method, path in (('GET', '/api/plan'), ('POST', '/api/runs')):
            refused = panel(mod, method, path, {'profile': 'tls', field: text,
                                                'confirm': 'yes'})
            assert refused.status == 400, (field, text, refused.body)
            assert json.loads(refused.body) == {'error': str(e.value)}
            assert str(e.value).startswith('--%s: ' % field.replace('_', '-'))
    assert len(planned) == 1 and len(started) == 1 and mod.services.runs.active() is None


def test_a_load_runs_an_engine_process_per_core_unless_told(
        monkeypatch: pytest.MonkeyPatch) -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    asked: List[Any] = []

    def start(request: Any, force: bool = False) -> str:
        asked.append(request)
        return 'load-%d' % len(asked)
    monkeypatch.setattr(mod.services.loads, 'start', start)
    for words in ({}, {'processes': 1}):
        res = call(mod, 'rgwbench load', **words)
        assert res.retval == 0, res.stderr
    assert [r.workload.processes for r in asked] == [0, 1]


def test_other_modules_get_plain_data_and_errors_with_their_errno() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    assert mod.api_status() == json.loads(call(mod, 'rgwbench status', format='json').stdout)
    assert [p['name'] for p in mod.api_profiles()] == [
        p['name'] for p in json.loads(call(mod, 'rgwbench profile ls', format='json').stdout)]
    assert mod.api_runs() == [] and mod.api_live() is None
    with pytest.raises(OSError) as e:
        mod.api_run_show('no-such-run')
    assert e.value.errno == errno.ENOENT
    with pytest.raises(OSError) as e:
        mod.api_run('quick', {}, False)
    assert e.value.errno == errno.EINVAL and 'yes-i-really-mean-it' in str(e.value)
    with pytest.raises(OSError) as e:
        mod.api_plan('quick', {'duration': '-5'})
    assert e.value.errno == errno.EINVAL and str(e.value.strerror).startswith('--duration: ')
    with pytest.raises(OSError) as e:
        mod.api_profile('nope')
    assert e.value.errno == errno.ENOENT
    assert mod.services.runs.active() is None


def test_results_show_checks_its_words_before_it_looks_for_the_run() -> None:
    mod = ModuleUnderTest({('orchestrator', '_select_orchestrator'): None})
    for words, message in (({'table': 'html'}, '--table must be one of'),
                           ({'layout': '../../'}, '--layout must be one of')):
        res = call(mod, 'rgwbench results show', run_id='x', **words)
        assert res.retval == -errno.EINVAL and res.stderr.startswith(message), res
    assert call(mod, 'rgwbench results show', run_id='x').retval == -errno.ENOENT
