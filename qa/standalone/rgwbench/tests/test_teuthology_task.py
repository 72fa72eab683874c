"""The teuthology task qa/tasks/rgwbench.py: its pure logic, its clean-up, and a real run.

teuthology is not installed here: a small stand-in gives the task what it uses
of teuthology's `ctx` (`ctx.cluster.only(role).remotes`, `ctx.cluster.remotes`,
`ctx.archive`, `ctx.config`), and its Remote runs the `ceph` and `radosgw-admin`
commands of a local cluster through the `cluster` entry point.
"""
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import tempfile
from types import ModuleType, SimpleNamespace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest
import yaml

from conftest import SMALL_LOAD, Cluster, needs_the_tool

HERE = os.path.dirname(os.path.abspath(__file__))
QA = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TASK_FILE = os.path.join(QA, 'tasks', 'rgwbench.py')
SUITE = os.path.join(QA, 'suites', 'rgw', 'rgwbench')


def _load_task() -> ModuleType:
    spec = importlib.util.spec_from_file_location('teuthology_task_rgwbench', TASK_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rb = _load_task()


# -- a stand-in for teuthology's ctx ------------------------------------------------------

class LocalRemote:
    """A Remote whose `run` executes ceph/radosgw-admin on a local cluster."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.commands: List[List[str]] = []

    def run(self, args: Sequence[str], stdin: Optional[str] = None, stdout: Any = None,
            stderr: Any = None, check_status: bool = True) -> SimpleNamespace:
        args = list(args)
        (at,) = [i for i, a in enumerate(args) if a in ('ceph', 'radosgw-admin')][:1]
        tool, rest = args[at], args[at + 1:]
        if rest[:1] == ['--cluster']:
            assert rest[1] == 'ceph'
            rest = rest[2:]
        self.commands.append([tool] + rest)
        if tool == 'ceph' and stdin is None and not needs_the_tool(rest):
            # The task's polls, over the test's connection: the same exit status,
            # output and error line, without a `ceph` tool (0.4 CPU s) each second.
            proc = self.cluster.ceph_reply(*rest)
        else:
            proc = subprocess.run(self.cluster.tool_argv(tool) + rest, input=stdin,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=300)
        if stdout is not None:
            stdout.write(proc.stdout)
        if stderr is not None:
            stderr.write(proc.stderr)
        if check_status and proc.returncode != 0:
            raise RuntimeError('%s failed (%d)' % (' '.join(args), proc.returncode))
        return SimpleNamespace(exitstatus=proc.returncode)


class FakeCluster:
    """teuthology's Cluster as the task uses it: remotes and only(role)."""

    def __init__(self, remotes: Dict[Any, List[str]]) -> None:
        self.remotes = remotes

    def only(self, role: str) -> 'FakeCluster':
        return FakeCluster({r: roles for r, roles in self.remotes.items() if role in roles})


def make_ctx(remote: Any, archive: Optional[str] = None,
             job: Optional[Dict[str, Any]] = None) -> SimpleNamespace:
    roles = ['mon.a', 'mgr.x', 'osd.0', 'osd.1', 'client.0']
    return SimpleNamespace(cluster=FakeCluster({remote: roles}), archive=archive,
                           config=job or {})


# -- config --------------------------------------------------------------------------------

def test_config_defaults() -> None:
    config = rb.validate_config({'profile': 'quick'})
    assert config['cluster'] == 'ceph'
    assert config['timeout'] == 3600
    assert config['keep_results'] is False
    assert config['overrides'] == {}
    assert config['bounds'] == {'require_state': 'complete'}
    assert config['fail_on'] == ['refuse']
    assert rb.validate_config({'profile': 'quick', 'fail_on': ['skews']})['fail_on'] == [
        'refuse', 'skews']


@pytest.mark.parametrize('config, message', [
    (None, 'profile is required'),
    ({}, 'profile is required'),
    (['quick'], 'the config must be a mapping'),
    ({'profile': 'quick', 'duration': 5}, "unknown key 'duration'"),
    ({'profile': 5}, 'profile must be a profile name, got 5'),
    ({'profile': 'quick', 'timeout': 'soon'}, "timeout must be a number of seconds, got 'soon'"),
    ({'profile': 'quick', 'timeout': True}, 'timeout must be a number of seconds, got True'),
    ({'profile': 'quick', 'timeout': 0}, 'timeout must be more than 0'),
    ({'profile': 'quick', 'keep_results': 'yes'}, 'keep_results must be true or false'),
    ({'profile': 'quick', 'overrides': {'duratoin': 5}}, "overrides.unknown key 'duratoin'"),
    ({'profile': 'quick', 'overrides': {'concurrency': 1.5}},
     'overrides.concurrency must be a whole number, got 1.5'),
    ({'profile': 'quick', 'overrides': {'duration': 2.5}},
     'overrides.duration must be a whole number of seconds, got 2.5'),
    ({'profile': 'quick', 'client': 'client.0', 'role': 'mon.a'}, 'not both'),
    ({'profile': 'quick', 'credentials': {'access_key': 'A'}},
     'credentials.secret_key is missing'),
    ({'profile': 'quick', 'credentials': {'access_key': 'A', 'secret_key': 'S', 'x': 1}},
     "credentials: unknown key 'x'"),
    ({'profile': 'quick', 'bounds': {'max_throughput_drop': {'sse': 50}}},
     "unknown bound 'max_throughput_drop'"),
    ({'profile': 'quick', 'bounds': {'max_throughput_drop_pct': 50}},
     'bounds.max_throughput_drop_pct must map variant names'),
    ({'profile': 'quick', 'bounds': {'max_throughput_drop_pct': {'sse': 'half'}}},
     "bounds.max_throughput_drop_pct.sse must be a percentage of 0 or more, got 'half'"),
    ({'profile': 'quick', 'bounds': {'require_state': 'done'}},
     'bounds.require_state must be one of running, complete, failed, aborted'),
    ({'profile': 'quick', 'fail_on': 'skews'},
     "fail_on must be a list of finding levels, e.g. [skews], got 'skews'"),
    ({'profile': 'quick', 'fail_on': ['skew']},
     "fail_on: unknown level(s) 'skew' (known: refuse, skews, info)"),
    ({'profile': 'mine', 'profile_definition': {'name': 'other'}},
     "profile_definition is named 'other' but profile is 'mine'"),
])
def test_config_errors(config: Any, message: str) -> None:
    with pytest.raises(rb.ConfigError) as e:
        rb.validate_config(config)
    assert message in str(e.value)
    assert '\n' not in str(e.value)


def test_config_error_lists_every_problem() -> None:
    with pytest.raises(rb.ConfigError) as e:
        rb.validate_config({'duration': 5, 'timeout': 'x'})
    text = str(e.value)
    assert "unknown key 'duration'" in text and 'timeout must be' in text
    assert 'profile is required' in text


def test_profile_definition_takes_the_profile_name() -> None:
    config = rb.validate_config({'profile': 'mine', 'profile_definition': {'baseline': 'a'}})
    assert config['profile_definition'] == {'name': 'mine', 'baseline': 'a'}


def test_run_args() -> None:
    assert rb.run_args('quick', {}) == ['rgwbench', 'run', '--profile', 'quick',
                                        '--yes-i-really-mean-it']
    args = rb.run_args('sse', {'warmup': 2, 'sizes': ['4KiB', '4MiB'], 'duration': 30,
                               'placement': 'host1,host2', 'concurrency': 8, 'repeats': 3})
    assert args == ['rgwbench', 'run', '--profile', 'sse', '--duration', '30',
                    '--concurrency', '8', '--sizes', '4KiB,4MiB', '--placement', 'host1,host2',
                    '--repeats', '3', '--warmup', '2', '--yes-i-really-mean-it']
    args = rb.run_args('tls', {'rates': [100, 200.5], 'objects': 5000, 'range': '0-1MiB',
                               'part_size': '8MiB', 'multipart_threshold': '32MiB'})
    assert args == ['rgwbench', 'run', '--profile', 'tls', '--rates', '100,200.5',
                    '--objects', '5000', '--range', '0-1MiB', '--multipart-threshold', '32MiB',
                    '--part-size', '8MiB', '--yes-i-really-mean-it']
    config = rb.validate_config({'profile': 'tls', 'overrides': {'rate': 50.5}})
    assert rb.run_args('tls', config['overrides'])[4:6] == ['--rate', '50.5']
    config = rb.validate_config({'profile': 'tls', 'overrides': {
        'processes': 0, 'payload_signing': 'signed'}})
    assert rb.run_args('tls', config['overrides'])[4:8] == [
        '--processes', '0', '--payload-signing', 'signed']


@pytest.mark.parametrize('stdout, run_id', [
    ('20261122-160500-quick\n', '20261122-160500-quick'),
    ('  abc123 ', 'abc123'),
    ('run abc123 started\n', None),
    ('', None),
])
def test_parse_run_id(stdout: str, run_id: Optional[str]) -> None:
    assert rb.parse_run_id(stdout) == run_id


# -- bounds --------------------------------------------------------------------------------

def row(variant: str, workload: str, **figures: Any) -> Dict[str, Any]:
    base = {'variant': variant, 'workload': workload, 'throughput_pct': 0.0, 'ops_pct': 0.0,
            'latency_mean_pct': 0.0, 'latency_p99_pct': 0.0, 'rgw_cpu_pct': 0.0,
            'rgw_rss_pct': 0.0, 'significant': True}
    base.update(figures)
    return base


def result(*rows: Dict[str, Any], state: str = 'complete') -> Dict[str, Any]:
    return {'run_id': 'r1', 'state': state, 'baseline': 'base', 'comparison': list(rows)}


def test_a_drop_beyond_the_bound_fails_naming_variant_and_workload() -> None:
    res = result(row('sse', 'put-4MiB', throughput_pct=-60.0),
                 row('sse', 'get-4MiB', throughput_pct=-10.0))
    misses = rb.check_bounds(res, {'max_throughput_drop_pct': {'sse': 50}})
    assert [(m.variant, m.workload, m.value, m.limit) for m in misses] == [
        ('sse', 'put-4MiB', -60.0, 50)]
    error = rb.bounds_error('r1', misses, res)
    assert isinstance(error, AssertionError)
    text = str(error)
    assert 'max_throughput_drop_pct' in text and 'variant sse' in text
    assert 'workload put-4MiB' in text and '-60.0 %' in text and 'limit -50 %' in text


def test_within_the_bound_passes() -> None:
    res = result(row('sse', 'put-4MiB', throughput_pct=-49.9, latency_p99_pct=80.0),
                 row('tls', 'put-4MiB', throughput_pct=-90.0))
    assert rb.check_bounds(res, {'max_throughput_drop_pct': {'sse': 50},
                                 'max_latency_p99_increase_pct': {'sse': 100},
                                 'require_state': 'complete'}) == []


def test_increase_bounds_and_every_miss_is_named() -> None:
    res = result(row('sse', 'put', latency_p99_pct=150.0, rgw_cpu_pct=30.0),
                 row('sse', 'get', latency_p99_pct=20.0, rgw_cpu_pct=45.0))
    misses = rb.check_bounds(res, {'max_latency_p99_increase_pct': {'sse': 100},
                                   'max_rgw_cpu_increase_pct': {'sse': 40}})
    assert sorted((m.bound, m.workload) for m in misses) == [
        ('max_latency_p99_increase_pct', 'put'), ('max_rgw_cpu_increase_pct', 'get')]
    text = str(rb.bounds_error('r1', misses, res))
    assert 'missed 2 bound(s)' in text
    assert 'latency_p99_pct +150.0 %, limit +100 %' in text


def test_star_bounds_every_variant_not_named() -> None:
    res = result(row('a', 'put', throughput_pct=-30.0), row('b', 'put', throughput_pct=-30.0))
    misses = rb.check_bounds(res, {'max_throughput_drop_pct': {'*': 20, 'b': 40}})
    assert [m.variant for m in misses] == ['a']


def test_a_bounded_variant_missing_from_the_result_misses() -> None:
    misses = rb.check_bounds(result(row('sse-rgw', 'put')),
                             {'max_throughput_drop_pct': {'sse': 50}})
    assert [(m.variant, m.workload) for m in misses] == [('sse', '')]
    assert 'variant sse is not in the result' in str(misses[0])


def test_a_missing_figure_misses() -> None:
    misses = rb.check_bounds(result(row('sse', 'put', rgw_cpu_pct=None)),
                             {'max_rgw_cpu_increase_pct': {'sse': 50}})
    assert len(misses) == 1 and 'no rgw_cpu_pct figure' in str(misses[0])


def test_significant_only_skips_noise() -> None:
    res = result(row('sse', 'put', throughput_pct=-60.0, significant=False))
    bound = {'max_throughput_drop_pct': {'sse': 50}}
    assert len(rb.check_bounds(res, bound)) == 1
    assert rb.check_bounds(res, dict(bound, significant_only=True)) == []


def test_the_state_is_checked() -> None:
    assert rb.check_bounds(result(), {}) == []
    failed = result(state='failed')
    failed['error'] = 'RGW did not come back'
    misses = rb.check_bounds(failed, {'require_state': 'complete'})
    assert [str(m) for m in misses] == ["state is 'failed', required complete"]
    assert 'run error: RGW did not come back' in str(rb.bounds_error('r1', misses, failed))
    assert rb.check_bounds(failed, {'require_state': ['complete', 'failed']}) == []
    assert rb.check_bounds(failed, {'require_state': None}) == []


# -- findings --------------------------------------------------------------------------------

DEBUG_RGW = {'id': 'debug-rgw-raised', 'level': 'skews', 'summary': 'debug_rgw is above its '
             'default (1/5)', 'evidence': ['section client.rgw: debug_rgw = 20'],
             'fix': 'ceph config rm client.rgw debug_rgw'}
SCRUBBING = {'id': 'pgs-scrubbing', 'level': 'skews', 'summary': 'PGs are being scrubbed',
             'evidence': ['up to 2 PGs active+clean+scrubbing'], 'fix': 'ceph osd set noscrub',
             'variant': 'tls', 'workload': 'put-4KiB', 'seconds': [3, 4]}
FORCED = {'id': 'health-err', 'level': 'refuse', 'summary': 'the cluster is in HEALTH_ERR',
          'evidence': ['OSD_FULL: 1 full osd(s)'], 'fix': 'ceph health detail'}
ESTIMATE = {'id': 'capacity-estimate', 'level': 'info', 'summary': 'what a run would write',
            'evidence': [], 'fix': ''}


def test_findings_fail_on_their_levels_naming_each() -> None:
    res = dict(result(), findings=[DEBUG_RGW, SCRUBBING, ESTIMATE])
    assert rb.check_findings(res, ['refuse']) == []
    failing = rb.check_findings(res, ['refuse', 'skews'])
    assert failing == [
        '[skews] debug-rgw-raised: debug_rgw is above its default (1/5) '
        '(fix: ceph config rm client.rgw debug_rgw)',
        '[skews] pgs-scrubbing (tls / put-4KiB, seconds 3,4): PGs are being scrubbed '
        '(fix: ceph osd set noscrub)']
    text = str(rb.findings_error('r1', failing))
    assert text.startswith('rgwbench run r1 has 2 finding(s) the task fails on:')
    assert rb.check_findings(result(), ['refuse', 'skews']) == []  # stored before findings


# -- the task against a scripted mgr: set-up, polling and clean-up --------------------------

class ScriptedRemote:
    """Answers the task's commands as the module would; `states` is what show returns."""

    def __init__(self, states: List[str], comparison: Optional[List[Dict[str, Any]]] = None,
                 enabled: bool = True,
                 findings: Optional[List[Dict[str, Any]]] = None) -> None:
        self.states = states
        self.comparison = comparison or []
        self.findings = findings
        self.enabled = enabled
        self.commands: List[Tuple[str, ...]] = []
        self.stdin: List[Optional[str]] = []
        self.aborted = False

    def _answer(self, cmd: Tuple[str, ...]) -> Tuple[int, str]:
        if cmd[:1] == ('radosgw-admin',):
            if cmd[1:3] == ('user', 'create'):
                return 0, json.dumps({'keys': [{'access_key': 'AK', 'secret_key': '-SK'}]})
            return 0, ''
        words = tuple(w for w in cmd[1:] if w not in ('-f', 'json'))
        if words[:3] == ('mgr', 'module', 'ls'):
            return 0, json.dumps({'enabled_modules': ['rgwbench'] if self.enabled else []})
        if words[:2] == ('rgwbench', 'run'):
            return 0, 'run-1\n'
        if words[:3] == ('rgwbench', 'results', 'show'):
            state = 'aborted' if self.aborted else (
                self.states.pop(0) if len(self.states) > 1 else self.states[0])
            shown = {'run_id': 'run-1', 'state': state, 'progress': state,
                     'comparison': self.comparison}
            if self.findings is not None:
                shown['findings'] = self.findings
            return 0, json.dumps(shown)
        if words[:2] == ('rgwbench', 'abort'):
            self.aborted = True
        if words[:3] == ('rgwbench', 'results', 'export'):
            return 0, json.dumps({'run_id': 'run-1', 'state': 'complete'})
        return 0, ''

    def run(self, args: Sequence[str], stdin: Optional[str] = None, stdout: Any = None,
            stderr: Any = None, check_status: bool = True) -> SimpleNamespace:
        assert args[:1] == ['sudo']
        assert args[2:4] == ['--cluster', 'ceph']
        cmd = (args[1],) + tuple(args[4:])
        self.commands.append(cmd)
        self.stdin.append(stdin)
        status, out = self._answer(cmd)
        stdout.write(out)
        return SimpleNamespace(exitstatus=status)

    def ceph_commands(self) -> List[str]:
        return [' '.join(c[1:]) for c in self.commands if c[0] == 'ceph']


def run_task(remote: Any, config: Dict[str, Any], archive: Optional[str] = None,
             job: Optional[Dict[str, Any]] = None) -> None:
    with rb.task(make_ctx(remote, archive, job), config):
        pass


def test_task_runs_archives_and_removes_what_it_created(tmp_path: Any) -> None:
    remote = ScriptedRemote(['running', 'complete'],
                            [row('threads-256', 'put-4KiB', throughput_pct=-5.0)])
    run_task(remote, {'profile': 'quick', 'poll_interval': 0.01,
                      'overrides': {'duration': 3},
                      'bounds': {'max_throughput_drop_pct': {'threads-256': 50}}},
             archive=str(tmp_path))
    cmds = remote.ceph_commands()
    assert 'rgwbench run --profile quick --duration 3 --yes-i-really-mean-it' in cmds
    assert 'mgr module enable rgwbench' not in cmds
    assert cmds[-2:] == ['rgwbench results rm run-1', 'rgwbench credentials rm']
    assert remote.commands[-1][:3] == ('radosgw-admin', 'user', 'rm')
    uid = remote.commands[-1][4]
    (create,) = [c for c in remote.commands if c[:3] == ('radosgw-admin', 'user', 'create')]
    assert create[3:5] == ('--uid', uid)
    creds = json.loads(remote.stdin[remote.commands.index(
        ('ceph', 'rgwbench', 'credentials', 'set', '-i', '-'))] or '')
    assert creds == {'access_key': 'AK', 'secret_key': '-SK'}
    assert json.loads((tmp_path / 'rgwbench' / 'run-1.json').read_text())['run_id'] == 'run-1'
    assert 'abort' not in ' '.join(cmds)


def test_task_with_credentials_and_a_profile_keeps_results_when_asked() -> None:
    remote = ScriptedRemote(['complete'], enabled=False)
    definition = {'baseline': 'a', 'variants': [{'name': 'a', 'settings': {}}],
                  'workloads': [{'op': 'put'}]}
    run_task(remote, {'profile': 'mine', 'profile_definition': definition,
                      'credentials': {'access_key': 'K', 'secret_key': 'S'},
                      'keep_results': True})
    cmds = remote.ceph_commands()
    assert 'mgr module enable rgwbench' in cmds
    assert not any(c[0] == 'radosgw-admin' for c in remote.commands)
    stored = remote.stdin[remote.commands.index(
        ('ceph', 'rgwbench', 'profile', 'set', '-i', '-'))]
    assert json.loads(stored or '')['name'] == 'mine'
    assert 'rgwbench results rm run-1' not in cmds and 'rgwbench profile rm mine' not in cmds
    assert cmds[-1] == 'rgwbench credentials rm'


def test_a_missed_bound_fails_the_task_after_cleaning_up() -> None:
    remote = ScriptedRemote(['complete'], [row('sse', 'put-4MiB', throughput_pct=-60.0)])
    with pytest.raises(AssertionError) as e:
        run_task(remote, {'profile': 'sse', 'bounds': {'max_throughput_drop_pct': {'sse': 50}}})
    assert 'variant sse, workload put-4MiB' in str(e.value)
    assert remote.ceph_commands()[-1] == 'rgwbench credentials rm'
    assert remote.commands[-1][:3] == ('radosgw-admin', 'user', 'rm')


def test_skews_fail_the_task_when_asked_and_refuse_always() -> None:
    cases: List[Tuple[Dict[str, Any], Optional[List[str]], bool]] = [
        (DEBUG_RGW, None, False), (DEBUG_RGW, ['skews'], True), (FORCED, None, True),
        (ESTIMATE, ['skews'], False)]
    for found, fail_on, fails in cases:
        remote = ScriptedRemote(['complete'], findings=[found])
        config: Dict[str, Any] = {'profile': 'quick'}
        if fail_on is not None:
            config['fail_on'] = fail_on
        if not fails:
            run_task(remote, config)
            continue
        with pytest.raises(rb.FindingsFailed) as e:
            run_task(remote, config)
        assert found['id'] in str(e.value)
        # the table was reported first, and everything removed after
        assert 'rgwbench results show run-1' in remote.ceph_commands()
        assert remote.ceph_commands()[-1] == 'rgwbench credentials rm'


def test_a_run_past_its_timeout_is_aborted() -> None:
    remote = ScriptedRemote(['running'])
    with pytest.raises(RuntimeError) as e:
        run_task(remote, {'profile': 'quick', 'timeout': 0.05, 'poll_interval': 0.01})
    assert 'still running after' in str(e.value)
    cmds = remote.ceph_commands()
    assert 'rgwbench abort' in cmds
    assert cmds.index('rgwbench abort') < cmds.index('rgwbench credentials rm')


def test_job_overrides_are_merged() -> None:
    remote = ScriptedRemote(['complete'])
    run_task(remote, {'profile': 'quick'},
             job={'overrides': {'rgwbench': {'overrides': {'duration': 5}}}})
    assert 'rgwbench run --profile quick --duration 5 --yes-i-really-mean-it' \
        in remote.ceph_commands()


def test_a_bad_config_fails_before_any_command() -> None:
    remote = ScriptedRemote(['complete'])
    with pytest.raises(rb.ConfigError):
        run_task(remote, {'profile': 'quick', 'bogus': 1})
    assert remote.commands == []


# -- the suite fragment --------------------------------------------------------------------

def test_suite_fragment_parses() -> None:
    found = []
    for folder, _, files in os.walk(SUITE):
        for name in files:
            if name.endswith('.yaml'):
                with open(os.path.join(folder, name)) as f:
                    found.append((name, yaml.safe_load(f)))
    assert os.path.exists(os.path.join(SUITE, '%'))
    docs = dict(found)
    tasks = [t for _, doc in found for t in (doc or {}).get('tasks', [])]
    configs = [t['rgwbench'] for t in tasks if 'rgwbench' in t]
    assert {c['profile'] for c in configs} >= {'quick', 'sse'}
    for config in configs:
        rb.validate_config(config)
    assert any(c.get('bounds') for c in configs)
    assert any('roles' in (doc or {}) for doc in docs.values())


# -- a real run on a local cluster ---------------------------------------------------------

def _has_run_command(cluster: Cluster) -> bool:
    proc = cluster.ceph('rgwbench', '-h', check=False)
    return 'rgwbench run' in proc.stdout + proc.stderr


@contextlib.contextmanager
def _archive() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix='rgwbench-archive-') as d:
        yield d


def _require_run(cluster: Cluster) -> None:
    """A module that did not load (or lacks `run`) fails the real-cluster tests: no skip."""
    if not _has_run_command(cluster):
        health = cluster.ceph('health', 'detail', check=False)
        pytest.fail('`ceph rgwbench run` is missing: the rgwbench module did not load, or '
                    'lost its run command\n%s%s' % (health.stdout, health.stderr))


class _ModuleNotLoaded:
    """A cluster whose mgr does not know `ceph rgwbench`."""

    def ceph(self, *args: str, check: bool = True) -> 'subprocess.CompletedProcess[str]':
        if args[:1] == ('health',):
            return subprocess.CompletedProcess(list(args), 0, 'HEALTH_ERR MGR_MODULE_ERROR', '')
        return subprocess.CompletedProcess(list(args), 22, '', 'no valid command found')


def test_a_module_that_did_not_load_fails_the_real_cluster_tests() -> None:
    with pytest.raises(BaseException) as e:  # a skip is a BaseException too: caught here
        _require_run(_ModuleNotLoaded())  # type: ignore[arg-type]
    assert e.type is pytest.fail.Exception, 'the real-cluster tests were skipped, not failed'
    assert 'MGR_MODULE_ERROR' in str(e.value)


def test_task_runs_quick_on_a_real_cluster(two_osds: Cluster) -> None:
    _require_run(two_osds)
    remote = LocalRemote(two_osds)
    config = {'profile': 'quick', 'poll_interval': 2, 'timeout': 900,
              'overrides': dict(SMALL_LOAD, duration=3, warmup=1),
              'bounds': {'max_throughput_drop_pct': {'*': 100}}}
    with _archive() as archive:
        with rb.task(make_ctx(remote, archive), config):
            exported = os.listdir(os.path.join(archive, 'rgwbench'))
        (json_name,) = [n for n in exported if n.endswith('.json')]
        with open(os.path.join(archive, 'rgwbench', json_name)) as f:
            res = json.load(f)
    assert res['state'] == 'complete' and res['profile'] == 'quick'
    assert {r['variant'] for r in res['comparison']} == {'threads-256'}
    # what the task created is gone
    assert two_osds.ceph_json('rgwbench', 'credentials', 'show')['configured'] is False
    ls = two_osds.ceph('rgwbench', 'results', 'ls', '-f', 'json').stdout
    assert res['run_id'] not in ls
    (create,) = [c for c in remote.commands if c[:3] == ['radosgw-admin', 'user', 'create']]
    info = two_osds.tool('radosgw-admin', '--', 'user', 'info', '--uid', create[4], check=False)
    assert info.returncode != 0
    assert two_osds.ceph_json('rgwbench', 'status')['active_run'] is None


def test_task_names_a_missed_bound_on_a_real_cluster(two_osds: Cluster) -> None:
    _require_run(two_osds)
    remote = LocalRemote(two_osds)
    # A one-variant profile of its own: a short run that restarts nothing.
    config = {'profile': 'teuthology-bound', 'poll_interval': 2, 'timeout': 900,
              'keep_results': True,
              'profile_definition': {
                  'variants': [{'name': 'as-is', 'settings': {}}],
                  'workloads': [{'op': 'put', 'size': '4KiB', 'concurrency': 4,
                                 'duration': 2, 'warmup': 0}]},
              'bounds': {'max_throughput_drop_pct': {'no-such-variant': 10}}}
    with pytest.raises(AssertionError) as e:
        with rb.task(make_ctx(remote), config):
            pass
    assert 'variant no-such-variant is not in the result' in str(e.value)
    run_id = str(e.value).split()[2]
    assert two_osds.ceph_json('rgwbench', 'results', 'show', run_id)['state'] == 'complete'
    two_osds.ceph('rgwbench', 'results', 'rm', run_id)
    assert two_osds.ceph_json('rgwbench', 'credentials', 'show')['configured'] is False


def test_local_remote_passes_stdin(two_osds: Cluster) -> None:
    """The stand-in itself: stdin reaches `ceph ... -i -` and the exit status comes back."""
    cluster = two_osds
    remote = LocalRemote(cluster)
    out = io.StringIO()
    proc = remote.run(args=['sudo', 'ceph', '--cluster', 'ceph', 'config-key', 'set',
                            'rgwbench-teuthology-test', '-i', '-'],
                      stdin='hello', stdout=out, stderr=io.StringIO(), check_status=False)
    assert proc.exitstatus == 0
    got = cluster.ceph('config-key', 'get', 'rgwbench-teuthology-test').stdout
    cluster.ceph('config-key', 'rm', 'rgwbench-teuthology-test')
    assert got == 'hello'


def test_task_aborts_a_run_past_its_timeout_on_a_real_cluster(two_osds: Cluster) -> None:
    _require_run(two_osds)
    remote = LocalRemote(two_osds)
    config = {'profile': 'quick', 'poll_interval': 1, 'timeout': 5,
              'overrides': dict(SMALL_LOAD, duration=30, warmup=1)}
    with pytest.raises(RuntimeError) as e:
        with rb.task(make_ctx(remote), config):
            pass
    assert 'still running after 5 s' in str(e.value)
    assert ['ceph', 'rgwbench', 'abort'] in remote.commands
    status = two_osds.ceph_json('rgwbench', 'status')
    assert status['active_run'] is None and status['settings_in_place'] is None
    assert two_osds.ceph_json('rgwbench', 'credentials', 'show')['configured'] is False
    run_id = str(e.value).split()[2]
    assert run_id not in two_osds.ceph('rgwbench', 'results', 'ls', '-f', 'json').stdout
