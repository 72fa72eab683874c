"""
Benchmark the Ceph Object Gateway with the rgwbench mgr module.

The task runs one rgwbench profile on the cluster from the first monitor's
host (or the role given), waits for the run to end, logs its "% change vs
baseline" table, archives the full result and checks it against bounds::

    tasks:
    - install:
    - ceph:
    - rgw: [client.0]
    - rgwbench:
        profile: sse
        overrides:
          duration: 30
          sizes: [4KiB, 4MiB]
        bounds:
          max_throughput_drop_pct:
            sse-rgw: 50
          max_latency_p99_increase_pct:
            sse-rgw: 200

Config keys (see "Teuthology" in doc/mgr/rgwbench.rst):

  cluster              cluster name (default ceph)
  client / role        role whose host runs the ceph CLI (default: the first mon)
  profile              the profile to run (required)
  profile_definition   a profile document, stored with `profile set -i -` first
  overrides            duration, concurrency, sizes, placement, repeats, warmup, rate,
                       rates, objects, range, multipart_threshold, part_size, processes,
                       payload_signing
  credentials          access_key, secret_key (and ca_bundle) for the load; without
                       them an S3 user is created for the run and removed after it
  timeout              seconds the run may take (default 3600)
  poll_interval        seconds between two looks at the run (default 10)
  bounds               limits the result must keep (see check_bounds)
  fail_on              finding levels that fail the task besides refuse, which
                       always does: [skews] fails a run whose figures a finding
                       skews (see check_findings)
  keep_results         keep the result (and a stored profile) in the cluster

On the way out the task aborts a run still going and removes what it created:
the S3 user, the stored credentials, the stored profile and (unless
keep_results) the result.

Everything that does not need teuthology (config checks, arguments, bounds) is
in plain functions; teuthology itself is only touched through `ctx`.
"""
import contextlib
import io
import json
import logging
import os
import re
import time
import uuid
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

log = logging.getLogger(__name__)

MODULE = 'rgwbench'
DEFAULT_TIMEOUT_S = 3600
DEFAULT_POLL_S = 10
ABORT_WAIT_S = 600
MODULE_WAIT_S = 120

Number = (int, float)

# key: (accepted types, what to say about a wrong one)
CONFIG_KEYS: Dict[str, Tuple[Tuple[type, ...], str]] = {
    'cluster': ((str,), 'a cluster name'),
    'client': ((str,), 'a role, e.g. client.0 or mon.a'),
    'role': ((str,), 'a role, e.g. client.0 or mon.a'),
    'profile': ((str,), 'a profile name'),
    'profile_definition': ((dict,), 'a profile document (a mapping)'),
    'overrides': ((dict,), 'a mapping of duration, concurrency, sizes, placement, '
                           'repeats, warmup, rate, rates, objects, range, '
                           'multipart_threshold, part_size, processes, '
                           'payload_signing'),
    'credentials': ((dict,), 'a mapping with access_key and secret_key'),
    'timeout': (Number, 'a number of seconds'),
    'poll_interval': (Number, 'a number of seconds'),
    'bounds': ((dict,), 'a mapping of limits'),
    'fail_on': ((list,), 'a list of finding levels, e.g. [skews]'),
    'keep_results': ((bool,), 'true or false'),
}
OVERRIDE_KEYS: Dict[str, Tuple[Tuple[type, ...], str]] = {
    'duration': ((int,), 'a whole number of seconds'),
    'concurrency': ((int,), 'a whole number'),
    'sizes': ((str, list), 'a size list, e.g. 4KiB,4MiB or [4KiB, 4MiB]'),
    'placement': ((str, list), 'hosts, e.g. host1,host2 or [host1, host2]'),
    'repeats': ((int,), 'a whole number'),
    'warmup': ((int,), 'a whole number of seconds'),
    'rate': (Number, 'operations a second over all agents'),
    'rates': ((str, list), 'a rate list, e.g. 100,200 or [100, 200]'),
    'objects': ((int,), 'a whole number of objects'),
    'range': ((str,), 'START-END, e.g. 0-1MiB'),
    'multipart_threshold': ((str,), 'a size, e.g. 64MiB'),
    'part_size': ((str,), 'a size, e.g. 16MiB'),
    'processes': ((int,), 'a whole number of engine processes per agent (0: one per core)'),
    'payload_signing': ((str,), 'unsigned or signed'),
}
CREDENTIAL_KEYS = ('access_key', 'secret_key', 'ca_bundle')

# bound: (field of a comparison row, +1 for "at most N % more", -1 for "at most N % less")
LIMITS: Dict[str, Tuple[str, int]] = {
    'max_throughput_drop_pct': ('throughput_pct', -1),
    'max_ops_drop_pct': ('ops_pct', -1),
    'max_latency_mean_increase_pct': ('latency_mean_pct', 1),
    'max_latency_p99_increase_pct': ('latency_p99_pct', 1),
    'max_rgw_cpu_increase_pct': ('rgw_cpu_pct', 1),
    'max_rgw_rss_increase_pct': ('rgw_rss_pct', 1),
}
STATES = ('running', 'complete', 'failed', 'aborted')
# Finding levels (`ceph rgwbench check`): a refuse finding in a result fails the task always.
LEVELS = ('refuse', 'skews', 'info')
ALWAYS_FAIL_ON = ('refuse',)
ANY_VARIANT = '*'


class ConfigError(ValueError):
    """The task's config is wrong; the message lists every problem."""


class BoundsMissed(AssertionError):
    """The result misses one or more bounds; the message names each one."""


class FindingsFailed(AssertionError):
    """The result carries findings of a level the task fails on; the message names each."""


class CommandFailed(RuntimeError):
    pass


# -- config ------------------------------------------------------------------------------

def _is(value: Any, types: Tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _check_keys(where: str, data: Dict[str, Any], known: Dict[str, Tuple[Tuple[type, ...], str]],
                problems: List[str]) -> None:
    for key in sorted(data, key=str):
        if key not in known:
            problems.append('%sunknown key %r (known: %s)'
                            % (where, key, ', '.join(sorted(known))))
            continue
        types, wanted = known[key]
        if not _is(data[key], types):
            problems.append('%s%s must be %s, got %r' % (where, key, wanted, data[key]))


def _check_bounds(bounds: Dict[str, Any], problems: List[str]) -> None:
    known = sorted(list(LIMITS) + ['require_state', 'significant_only'])
    for key in sorted(bounds, key=str):
        value = bounds[key]
        where = 'bounds.%s' % key
        if key == 'require_state':
            states = value if isinstance(value, list) else [value]
            bad = [s for s in states if s not in STATES]
            if value is not None and (bad or not states):
                problems.append('%s must be one of %s (or a list of them), got %r'
                                % (where, ', '.join(STATES), value))
        elif key == 'significant_only':
            if not isinstance(value, bool):
                problems.append('%s must be true or false, got %r' % (where, value))
        elif key in LIMITS:
            if not isinstance(value, dict) or not value:
                problems.append('%s must map variant names (or %r) to a percentage, got %r'
                                % (where, ANY_VARIANT, value))
                continue
            for variant, limit in value.items():
                if not isinstance(variant, str) or not _is(limit, Number) or limit < 0:
                    problems.append('%s.%s must be a percentage of 0 or more, got %r'
                                    % (where, variant, limit))
        else:
            problems.append('unknown bound %r (known: %s)' % (key, ', '.join(known)))


def validate_config(config: Any) -> Dict[str, Any]:
    """The task's config with defaults filled in; ConfigError lists every problem."""
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ConfigError('rgwbench: the config must be a mapping, got %r' % (config,))
    problems: List[str] = []
    _check_keys('', config, CONFIG_KEYS, problems)
    if 'profile' not in config:
        problems.append('profile is required (e.g. profile: quick)')
    if 'client' in config and 'role' in config:
        problems.append('give client or role, not both')
    if isinstance(config.get('overrides'), dict):
        _check_keys('overrides.', config['overrides'], OVERRIDE_KEYS, problems)
    creds = config.get('credentials')
    if isinstance(creds, dict):
        for key in sorted(creds, key=str):
            if key not in CREDENTIAL_KEYS:
                problems.append('credentials: unknown key %r (known: %s)'
                                % (key, ', '.join(CREDENTIAL_KEYS)))
        for key in ('access_key', 'secret_key'):
            if not isinstance(creds.get(key), str) or not creds[key]:
                problems.append('credentials.%s is missing or not a string' % key)
    if isinstance(config.get('bounds'), dict):
        _check_bounds(config['bounds'], problems)
    if isinstance(config.get('fail_on'), list):
        bad = [level for level in config['fail_on'] if level not in LEVELS]
        if bad:
            problems.append('fail_on: unknown level(s) %s (known: %s)'
                            % (', '.join(repr(b) for b in bad), ', '.join(LEVELS)))
    definition = config.get('profile_definition')
    if isinstance(definition, dict) and isinstance(config.get('profile'), str):
        named = definition.get('name', config['profile'])
        if named != config['profile']:
            problems.append('profile_definition is named %r but profile is %r'
                            % (named, config['profile']))
    for key in ('timeout', 'poll_interval'):
        if _is(config.get(key), Number) and config[key] <= 0:
            problems.append('%s must be more than 0, got %r' % (key, config[key]))
    if problems:
        raise ConfigError('rgwbench: bad config: ' + '; '.join(problems))
    found = dict(config)
    found.setdefault('cluster', 'ceph')
    found.setdefault('overrides', {})
    found.setdefault('timeout', DEFAULT_TIMEOUT_S)
    found.setdefault('poll_interval', DEFAULT_POLL_S)
    found.setdefault('keep_results', False)
    found['fail_on'] = sorted(set(found.get('fail_on') or []) | set(ALWAYS_FAIL_ON),
                              key=LEVELS.index)
    bounds = dict(found.get('bounds') or {})
    bounds.setdefault('require_state', 'complete')
    found['bounds'] = bounds
    if found.get('profile_definition') is not None:
        found['profile_definition'] = dict(found['profile_definition'], name=found['profile'])
    return found


# -- the ceph CLI --------------------------------------------------------------------------

def _flag_value(value: Any) -> str:
    if isinstance(value, list):
        return ','.join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def run_args(profile: str, overrides: Dict[str, Any]) -> List[str]:
    """`ceph` arguments that start a run of `profile` with the overrides."""
    args = ['rgwbench', 'run', '--profile', profile]
    for key in OVERRIDE_KEYS:
        if overrides.get(key) is not None:
            args += ['--%s' % key.replace('_', '-'), _flag_value(overrides[key])]
    return args + ['--yes-i-really-mean-it']


RUN_ID = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.:-]*$')


def parse_run_id(stdout: str) -> Optional[str]:
    """The run id `rgwbench run` printed: its output when that is one word, else None."""
    words = stdout.split()
    if len(words) == 1 and RUN_ID.match(words[0]):
        return words[0]
    return None


# -- bounds --------------------------------------------------------------------------------

class Miss(NamedTuple):
    bound: str
    variant: str
    workload: str
    value: Any
    limit: Any

    def __str__(self) -> str:
        if self.bound == 'require_state':
            return 'state is %r, required %s' % (self.value, self.limit)
        if self.workload == '':
            return '%s: variant %s is not in the result (limit %s %%)' % (
                self.bound, self.variant, self.limit)
        field, sign = LIMITS[self.bound]
        if self.value is None:
            shown = 'no %s figure' % field
        else:
            shown = '%s %+.1f %%' % (field, self.value)
        return '%s: variant %s, workload %s: %s, limit %s%s %%' % (
            self.bound, self.variant, self.workload, shown, '-' if sign < 0 else '+',
            self.limit)


def _limit_for(bound: Dict[str, Any], variant: str) -> Optional[float]:
    if variant in bound:
        return bound[variant]
    return bound.get(ANY_VARIANT)


def check_bounds(result: Dict[str, Any], bounds: Dict[str, Any]) -> List[Miss]:
    """Every bound the result misses.

    `max_throughput_drop_pct: {sse-rgw: 50}` means the throughput of variant
    sse-rgw may not be more than 50 % below the baseline's in any workload
    (throughput_pct < -50 misses); the `*_increase_pct` bounds cap a rise the
    same way. `*` stands for every variant not named. A bounded variant with no
    comparison row, or a row without the figure, misses. With
    `significant_only: true` rows not marked significant are skipped.
    `require_state` (default complete) is the state the run must have ended in.
    """
    misses: List[Miss] = []
    states = bounds.get('require_state', 'complete')
    if states is not None:
        wanted = states if isinstance(states, list) else [states]
        if result.get('state') not in wanted:
            misses.append(Miss('require_state', '', '', result.get('state'),
                               ' or '.join(wanted)))
    rows = [r for r in result.get('comparison') or [] if isinstance(r, dict)]
    significant_only = bool(bounds.get('significant_only'))
    for name, (field, sign) in LIMITS.items():
        bound = bounds.get(name)
        if not bound:
            continue
        compared = set()
        for row in rows:
            variant = str(row.get('variant'))
            limit = _limit_for(bound, variant)
            if limit is None:
                continue
            compared.add(variant)
            if significant_only and not row.get('significant'):
                continue
            value: Any = row.get(field)
            if not _is(value, Number) or value * sign > limit:
                misses.append(Miss(name, variant, str(row.get('workload')), value, limit))
        for variant in sorted(set(bound) - compared - {ANY_VARIANT}):
            misses.append(Miss(name, variant, '', None, bound[variant]))
    return misses


def bounds_error(run_id: str, misses: Sequence[Miss], result: Dict[str, Any]) -> BoundsMissed:
    lines = ['rgwbench run %s missed %d bound(s):' % (run_id, len(misses))]
    lines += ['  ' + str(m) for m in misses]
    if result.get('error'):
        lines.append('  run error: %s' % result['error'])
    return BoundsMissed('\n'.join(lines))


# -- findings ------------------------------------------------------------------------------

def check_findings(result: Dict[str, Any], fail_on: Sequence[str]) -> List[str]:
    """The result's findings of a level in `fail_on`, one line each.

    A run stores what `ceph rgwbench check` found before it started, before
    each workload and during it (scrubs, recovery); a `skews` finding means
    its figures are marked, a `refuse` one that the run went on past a
    refusal (--force) or met it while it ran.
    """
    failing = []
    for finding in result.get('findings') or []:
        if not isinstance(finding, dict) or finding.get('level') not in fail_on:
            continue
        where = ' / '.join(str(finding[k]) for k in ('variant', 'workload') if finding.get(k))
        if finding.get('seconds'):
            where += '%sseconds %s' % (', ' if where else '',
                                       ','.join(str(s) for s in finding['seconds']))
        failing.append('[%s] %s%s: %s (fix: %s)' % (
            finding.get('level'), finding.get('id'), ' (%s)' % where if where else '',
            finding.get('summary'), finding.get('fix') or '-'))
    return failing


def findings_error(run_id: str, failing: Sequence[str]) -> FindingsFailed:
    return FindingsFailed('\n'.join(['rgwbench run %s has %d finding(s) the task fails on:'
                                     % (run_id, len(failing))] + ['  ' + f for f in failing]))


# -- the task ------------------------------------------------------------------------------

def _role_matches(role: str, cluster: str, kind: str) -> bool:
    parts = role.split('.')
    if cluster == 'ceph' and len(parts) == 2:
        return parts[0] == kind
    return len(parts) == 3 and parts[0] == cluster and parts[1] == kind


def first_role(ctx: Any, cluster: str, kind: str = 'mon') -> str:
    """The first role of a kind in the cluster, in sorted order (as teuthology's
    get_first_mon picks it)."""
    roles = sorted(r for rs in ctx.cluster.remotes.values() for r in rs
                   if _role_matches(r, cluster, kind))
    if not roles:
        raise ConfigError('rgwbench: no %s role in cluster %s' % (kind, cluster))
    return roles[0]


def _exit_status(proc: Any) -> int:
    for attr in ('exitstatus', 'returncode'):
        value = getattr(proc, attr, None)
        if value is not None:
            return int(value)
    return 0


class CephCLI:
    """The `ceph` and `radosgw-admin` commands of one cluster, on one remote."""

    def __init__(self, remote: Any, cluster: str, prefix: Sequence[str]) -> None:
        self.remote = remote
        self.cluster = cluster
        self.prefix = list(prefix)

    @classmethod
    def for_ctx(cls, ctx: Any, config: Dict[str, Any]) -> 'CephCLI':
        cluster = config['cluster']
        role = config.get('client') or config.get('role') or first_role(ctx, cluster)
        remotes = list(ctx.cluster.only(role).remotes.keys())
        if len(remotes) != 1:
            raise ConfigError('rgwbench: role %s is on %d hosts, expected one'
                              % (role, len(remotes)))
        prefix = ['sudo']
        info: Any = getattr(ctx, 'ceph', {}).get(cluster) if hasattr(ctx, 'ceph') else None
        if getattr(ctx, 'cephadm', None) and getattr(info, 'fsid', None) \
                and getattr(info, 'image', None):
            # a cephadm cluster: its CLI runs in `cephadm shell`, as qa/tasks/cephadm.py does
            prefix += [ctx.cephadm, '--image', info.image, 'shell',
                       '-c', '/etc/ceph/%s.conf' % cluster,
                       '-k', '/etc/ceph/%s.client.admin.keyring' % cluster,
                       '--fsid', info.fsid, '--']
        log.info('rgwbench: running the ceph CLI as %s', role)
        return cls(remotes[0], cluster, prefix)

    def _run(self, tool: str, args: Sequence[str], stdin: Optional[str] = None,
             check: bool = True) -> Tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        argv = self.prefix + [tool, '--cluster', self.cluster] + list(args)
        proc = self.remote.run(args=argv, stdin=stdin, stdout=out, stderr=err,
                               check_status=False)
        status = _exit_status(proc)
        if check and status != 0:
            raise CommandFailed('%s %s failed (%d): %s' % (
                tool, ' '.join(args), status, err.getvalue().strip()[-2000:]))
        return status, out.getvalue(), err.getvalue()

    def ceph(self, *args: str, stdin: Optional[str] = None, check: bool = True) -> str:
        return self._run('ceph', args, stdin, check)[1]

    def ceph_status(self, *args: str, stdin: Optional[str] = None) -> Tuple[int, str, str]:
        return self._run('ceph', args, stdin, check=False)

    def ceph_json(self, *args: str) -> Any:
        return json.loads(self.ceph(*args, '-f', 'json'))

    def radosgw_admin(self, *args: str, check: bool = True) -> str:
        return self._run('radosgw-admin', args, None, check)[1]


class Bench:
    """One rgwbench run in a teuthology job: set up, run, report, check, clean up."""

    def __init__(self, cli: CephCLI, config: Dict[str, Any], archive: Optional[str],
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cli = cli
        self.config = config
        self.archive = archive
        self.sleep = sleep
        self.clock = clock
        self.user: Optional[str] = None
        self.credentials_set = False
        self.profile_set = False
        self.run_id: Optional[str] = None
        self.result: Optional[Dict[str, Any]] = None

    # setting up
    def enable_module(self) -> None:
        enabled = self.cli.ceph_json('mgr', 'module', 'ls').get('enabled_modules', [])
        if MODULE not in enabled:
            log.info('rgwbench: enabling the mgr module')
            self.cli.ceph('mgr', 'module', 'enable', MODULE)
        deadline = self.clock() + MODULE_WAIT_S
        while True:
            status, _, err = self.cli.ceph_status('rgwbench', 'status', '-f', 'json')
            if status == 0:
                return
            if self.clock() > deadline:
                raise CommandFailed('the rgwbench module did not answer within %d s: %s'
                                    % (MODULE_WAIT_S, err.strip()))
            self.sleep(2)

    def store_credentials(self) -> None:
        creds = self.config.get('credentials')
        if creds is None:
            uid = 'rgwbench-%s' % uuid.uuid4().hex[:12]
            log.info('rgwbench: creating S3 user %s', uid)
            out = self.cli.radosgw_admin('user', 'create', '--uid', uid,
                                         '--display-name', 'rgwbench teuthology run')
            self.user = uid
            key = json.loads(out)['keys'][0]
            creds = {'access_key': key['access_key'], 'secret_key': key['secret_key']}
        self.cli.ceph('rgwbench', 'credentials', 'set', '-i', '-', stdin=json.dumps(creds))
        self.credentials_set = True

    def store_profile(self) -> None:
        definition = self.config.get('profile_definition')
        if definition is not None:
            log.info('rgwbench: storing profile %s', self.config['profile'])
            self.cli.ceph('rgwbench', 'profile', 'set', '-i', '-', stdin=json.dumps(definition))
            self.profile_set = True

    # running
    def start(self) -> str:
        args = run_args(self.config['profile'], self.config['overrides'])
        log.info('rgwbench: ceph %s', ' '.join(args))
        out = self.cli.ceph(*args)
        run_id = parse_run_id(out)
        if run_id is None:
            active = self.cli.ceph_json('rgwbench', 'status').get('active_run') or {}
            run_id = active.get('run_id') if isinstance(active, dict) else None
        if not run_id:
            raise CommandFailed('rgwbench run printed no run id: %r' % out)
        self.run_id = run_id
        log.info('rgwbench: run %s started', run_id)
        return run_id

    def show(self) -> Dict[str, Any]:
        assert self.run_id
        result = self.cli.ceph_json('rgwbench', 'results', 'show', self.run_id)
        self.result = result
        return result

    def wait(self, timeout: float) -> Dict[str, Any]:
        deadline = self.clock() + timeout
        last = None
        while True:
            result = self.show()
            if result.get('state') != 'running':
                log.info('rgwbench: run %s ended: %s', self.run_id, result.get('state'))
                return result
            progress = result.get('progress')
            if progress != last:
                log.info('rgwbench: run %s: %s', self.run_id, progress)
                last = progress
            if self.clock() > deadline:
                raise RuntimeError('rgwbench run %s still running after %d s (timeout)'
                                   % (self.run_id, timeout))
            self.sleep(self.config['poll_interval'])

    def report(self) -> None:
        assert self.run_id
        table = self.cli.ceph('rgwbench', 'results', 'show', self.run_id)
        log.info('rgwbench: run %s\n%s', self.run_id, table)
        if self.archive:
            exported = self.cli.ceph('rgwbench', 'results', 'export', self.run_id)
            folder = os.path.join(self.archive, 'rgwbench')
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, '%s.json' % self.run_id), 'w') as f:
                f.write(exported)
            with open(os.path.join(folder, '%s.txt' % self.run_id), 'w') as f:
                f.write(table)
            log.info('rgwbench: result archived in %s', folder)

    def check(self) -> None:
        assert self.run_id and self.result is not None
        failing = check_findings(self.result, self.config['fail_on'])
        if failing:
            raise findings_error(self.run_id, failing)
        misses = check_bounds(self.result, self.config['bounds'])
        if misses:
            raise bounds_error(self.run_id, misses, self.result)
        log.info('rgwbench: run %s keeps every bound', self.run_id)

    def execute(self) -> None:
        self.enable_module()
        self.store_credentials()
        self.store_profile()
        self.start()
        self.wait(self.config['timeout'])
        self.report()
        self.check()

    # cleaning up
    def _still_running(self) -> bool:
        if self.run_id is None:
            return False
        try:
            return self.show().get('state') == 'running'
        except (CommandFailed, ValueError):
            return True

    def abort(self) -> None:
        log.info('rgwbench: aborting run %s', self.run_id)
        self.cli.ceph('rgwbench', 'abort')
        deadline = self.clock() + ABORT_WAIT_S
        while self._still_running():
            if self.clock() > deadline:
                raise RuntimeError('rgwbench run %s still running %d s after abort'
                                   % (self.run_id, ABORT_WAIT_S))
            self.sleep(min(self.config['poll_interval'], 5))

    def cleanup(self) -> List[str]:
        """Undo what the task did; every step is tried, the failures are returned."""
        failures = []
        steps: List[Tuple[str, bool, Callable[[], Any]]] = [
            ('abort the run', self._still_running(), self.abort),
            ('remove the result', bool(self.run_id) and not self.config['keep_results'],
             lambda: self.cli.ceph('rgwbench', 'results', 'rm', str(self.run_id))),
            ('remove the profile', self.profile_set and not self.config['keep_results'],
             lambda: self.cli.ceph('rgwbench', 'profile', 'rm', self.config['profile'])),
            ('remove the credentials', self.credentials_set,
             lambda: self.cli.ceph('rgwbench', 'credentials', 'rm')),
            ('remove S3 user %s' % self.user, self.user is not None,
             lambda: self.cli.radosgw_admin('user', 'rm', '--uid', str(self.user),
                                            '--purge-data')),
        ]
        for what, needed, step in steps:
            if not needed:
                continue
            try:
                step()
            except Exception as e:
                log.error('rgwbench: could not %s: %s', what, e)
                failures.append('%s: %s' % (what, e))
        return failures


def _job_overrides(ctx: Any, config: Dict[str, Any]) -> Dict[str, Any]:
    """The config with the job's `overrides: rgwbench:` merged in, as other tasks do."""
    job = getattr(ctx, 'config', None)
    extra = job.get('overrides', {}).get('rgwbench') if isinstance(job, dict) else None
    if not extra:
        return config
    try:
        from teuthology import misc
    except ImportError:
        merged = dict(config)
        merged.update(extra)
        return merged
    merged = dict(config)
    misc.deep_merge(merged, extra)
    return merged


@contextlib.contextmanager
def task(ctx: Any, config: Any) -> Iterator[None]:
    """Run an rgwbench profile and check its result against bounds.

    See the module's docstring and doc/mgr/rgwbench.rst for the config keys.
    """
    if isinstance(config, dict):
        config = _job_overrides(ctx, config)
    checked = validate_config(config)
    bench = Bench(CephCLI.for_ctx(ctx, checked), checked, getattr(ctx, 'archive', None))
    failed = False
    try:
        bench.execute()
        yield
    except BaseException:
        failed = True
        raise
    finally:
        failures = bench.cleanup()
        if failures and not failed:
            raise RuntimeError('rgwbench: clean-up failed: ' + '; '.join(failures))
