"""Settings of the daemons themselves: config options of the study (config_scope), RGWs per
host, msgr2 secure mode."""
import re
from typing import Any, Dict, List, Optional, Tuple

from ..errors import InvalidInput, RGWBenchError
from . import config_scope
from .base import PlanView, Setting, SettingContext, SettingNotInEffect, on_off, poll
from .changes import Change, config_change, restart_change, service_change
from ..cluster.secret_options import HIDDEN, is_secret, shown

# Daemon types whose options a variant may set, and what restarts them.
# \Z, not $: `$` also matches before a trailing newline.
WHO = re.compile(r'^(global|mon|mgr|osd|client|client\.rgw(\.[A-Za-z0-9_.-]+)?|osd\.\d+)\Z')
OPTION = re.compile(r'^[a-z][a-z0-9_]*\Z')
INT64 = float(2 ** 63 - 1)

MSGR2_SECURE: List[Tuple[str, str]] = [
    # OSDs talk to each other and serve clients in secure mode, RGW asks for it.
    ('osd', 'ms_cluster_mode'), ('osd', 'ms_service_mode'), ('client.rgw', 'ms_client_mode')]
MSGR2_DEFAULT = 'crc secure'
#: why the mons' and mgrs' own modes are left as they are
MSGR2_NOT_COVERED = (
    'mon and mgr keep their messenger modes: RGW-OSD and OSD-OSD traffic, which carries '
    'the data, is secure; the mgr\'s own would take a failover of the mgr that runs the '
    'run, and a failover ends a run (its settings put back)')


def rgw_restart(ctx: SettingContext) -> Change:
    service = ctx.rgw_service()
    return restart_change(service, 'ceph orch restart %s' % service)


#: the target of the change that restarts every OSD, a host at a time
OSD_RESTART_TARGET = 'osd'


def osd_restart() -> Change:
    return restart_change(OSD_RESTART_TARGET, 'restart every OSD up and in, a host at a time '
                          'where `osd ok-to-stop` allows it (else one at a time), with PGs '
                          'active+clean before the next')


def restart_for(ctx: SettingContext, who: str) -> Optional[Change]:
    if who == 'global':
        return None
    if who.startswith('client.rgw'):
        return rgw_restart(ctx)
    if who.startswith('osd'):
        return osd_restart()
    return None


class ConfigOption(Setting):
    """`config`: options of a daemon type, e.g. {"client.rgw/rgw_thread_pool_size": 512}."""

    name = 'config'
    values = 'a mapping of "<who>/<option>" to a value, e.g. client.rgw/rgw_thread_pool_size'
    summary = 'set `ceph config` options; daemons restart when an option needs it'

    def parse(self, raw: Any) -> Dict[str, str]:
        if isinstance(raw, str):
            pairs: Dict[str, Any] = {}
            for item in raw.split(','):
                key, eq, value = item.partition(':')
                if not eq:
                    # Not the text itself: a value holding a comma may be a secret's part.
                    raise InvalidInput('config: item %d of %d has no ":" (write '
                                       '<who>/<option>:<value>, comma-separated)'
                                       % (len(pairs) + 1, len(raw.split(','))))
                pairs[key.strip()] = value.strip()
            raw = pairs
        if not isinstance(raw, dict) or not raw:
            raise self.bad(raw)
        parsed = {}
        for key, value in raw.items():
            who, slash, option = str(key).partition('/')
            if not slash or not WHO.match(who) or not OPTION.match(option):
                raise self.bad(key, 'write <who>/<option> with who one of global, mon, mgr, '
                                    'osd, osd.N, client, client.rgw[.name]')
            if value is None or isinstance(value, (dict, list)) or str(value) == '':
                raise self.bad(HIDDEN if is_secret(str(key)) else value,
                               'the value of %s must be a number or a word' % key)
            parsed['%s/%s' % (who, option)] = str(value).lower() \
                if isinstance(value, bool) else str(value)
        return parsed

    def _runtime(self, ctx: SettingContext, option: str, wanted: str) -> bool:
        try:
            described = ctx.cluster.command_json(prefix='config help', key=option)
        except RGWBenchError:
            described = None
        if not isinstance(described, dict):
            raise self.bad(option, 'Ceph does not know this option')
        problem = number_problem(described, wanted)
        if problem:
            raise InvalidInput('%s: %s: %s' % (self.name, option, problem))
        return bool(described.get('can_update_at_runtime', False))

    def plan(self, ctx: SettingContext, view: PlanView, value: Dict[str, str]) -> List[Change]:
        extra = config_scope.widened(allow_option(ctx))
        changes: List[Change] = []
        restarts: Dict[str, Change] = {}
        for key, wanted in sorted(value.items()):
            who, option = key.split('/', 1)
            runtime = self._runtime(ctx, option, wanted)  # also refuses unknown options
            config_scope.check([key], extra)
            if view.config_value(who, option) == wanted:
                continue
            changes.append(config_change(who, option, wanted))
            # RGW reads most of its options once, at start (thread pool, frontends,
            # crypto), whatever `config help` says of updating them at runtime.
            restart = restart_for(ctx, who) \
                if who.startswith('client.rgw') or not runtime else None
            if restart is not None:
                restarts[restart.target] = restart
        return changes + list(restarts.values())

    def verify(self, ctx: SettingContext, value: Dict[str, str]) -> None:
        for key, wanted in value.items():
            who, option = key.split('/', 1)
            poll(ctx, '%s to be in effect' % key,
                 lambda: config_problem(ctx, who, option, wanted))


def allow_option(ctx: SettingContext) -> str:
    """mgr/rgwbench/config_allow; empty (nothing widened) where the module lacks it."""
    try:
        return str(ctx.option(config_scope.ALLOW_OPTION) or '')
    except (RuntimeError, KeyError):
        return ''


def _bound(raw: Any) -> Optional[float]:
    try:
        return float(raw) if raw not in (None, '') else None
    except (TypeError, ValueError):
        return None


def number_problem(described: Dict[str, Any], wanted: str) -> Optional[str]:
    """Why a value cannot be a numeric option's (its type and bounds from `config help`).

    Found at plan time, so that a run or `settings apply` is refused before it
    changes anything; other types are left to `ceph config set`.
    """
    kind = str(described.get('type') or '')
    if kind not in ('int', 'uint', 'float'):
        return None
    shown_value = wanted if len(wanted) <= 24 else wanted[:20] + '...'
    try:
        number: float = float(wanted) if kind == 'float' else int(wanted, 10)
    except ValueError:
        return '%r is not a %s' % (shown_value, 'number' if kind == 'float' else
                                   'whole number')
    low, high = _bound(described.get('min')), _bound(described.get('max'))
    if kind == 'uint' and (low is None or low < 0):
        low = 0.0
    if low is None and kind == 'int':
        low = -INT64
    high = INT64 if high is None and kind != 'float' else high
    if number != number or (low is not None and number < low) or \
            (high is not None and number > high):
        return '%r is out of range (%s to %s)' % (
            shown_value, '%g' % low if low is not None else '-inf',
            '%g' % high if high is not None else 'inf')
    return None


def config_problem(ctx: SettingContext, who: str, option: str, wanted: str) -> Optional[str]:
    """Which daemon of the section does not run with the value yet (None: all do).

    The mgr knows a daemon's config from its reports, every few seconds: right
    after a change or a restart it may still show the value before.
    """
    for daemon in running_daemons(ctx, who):
        running = ctx.cluster.running_config(daemon, option)
        if running is not None and not same_value(running, wanted):
            return '%s runs with %s = %s, not %s' % (
                daemon, option, shown(option, running), shown(option, wanted))
    return None


def same_value(running: str, wanted: str) -> bool:
    if running == wanted:
        return True
    try:
        return float(running) == float(wanted)
    except ValueError:
        return running.lower() in ('true', 'false') and running.lower() == wanted.lower()


def running_daemons(ctx: SettingContext, who: str) -> List[str]:
    """The daemons (as `ceph config show` names them) a section applies to."""
    if who.startswith('client.rgw'):
        return ['rgw.%s' % d.key for d in ctx.cluster.rgw_daemons()
                if who == 'client.rgw' or who == 'client.rgw.%s' % d.name]
    if who == 'osd':   # a down OSD runs nothing; it reads the config when it starts
        return ['osd.%d' % i for i in ctx.cluster.running_osd_ids()]
    if who.startswith('osd.'):
        return [who]
    return []


class RGWPerHost(Setting):
    """`rgw-per-host`: RGW daemons per host, the RGW spec's `count_per_host`."""

    name = 'rgw-per-host'
    values = 'a number of daemons, 1 to 16'
    summary = 'run N RGW daemons on each RGW host'

    def parse(self, raw: Any) -> int:
        try:
            count = int(str(raw))
        except ValueError:
            raise self.bad(raw)
        if not 1 <= count <= 16:
            raise self.bad(raw)
        return count

    def plan(self, ctx: SettingContext, view: PlanView, value: int) -> List[Change]:
        service = ctx.rgw_service()
        spec = view.service_spec(service)
        if spec is None:
            raise self.bad(value, 'no service %s' % service)
        placement = dict(spec.get('placement') or {})
        if int(placement.get('count_per_host') or 1) == value:
            return []
        placement['count_per_host'] = value
        if value > 1 and placement.get('count') and not placement.get('hosts'):
            # cephadm takes count_per_host only with explicit hosts or a label
            raise self.bad(value, 'the spec of %s places its daemons by count; give it '
                                  'hosts or a label first' % service)
        spec['placement'] = placement
        return [service_change(service, spec, 'ceph orch apply %s with count_per_host %d'
                               % (service, value))]

    def verify(self, ctx: SettingContext, value: int) -> None:
        per_host: Dict[str, int] = {}
        for daemon in ctx.cluster.daemons(ctx.rgw_service()):
            if daemon.running:
                per_host[daemon.host] = per_host.get(daemon.host, 0) + 1
        wrong = {h: n for h, n in per_host.items() if n != value}
        if not per_host or wrong:
            raise SettingNotInEffect('RGW daemons per host are %s, not %d' % (
                ', '.join('%s: %d' % hn for hn in sorted(per_host.items())) or 'none', value))


class Msgr2Secure(Setting):
    """`msgr2-secure`: messenger v2 secure mode between RGW and OSDs and among OSDs."""

    name = 'msgr2-secure'
    values = 'on or off'
    summary = ('ms_cluster_mode and ms_service_mode of OSDs and ms_client_mode of RGW set to '
               'secure; OSDs (a host at a time) and RGWs restarted')

    def parse(self, raw: Any) -> bool:
        return on_off(self, raw)

    def notes(self, ctx: SettingContext, value: bool) -> List[str]:
        return [MSGR2_NOT_COVERED] if value else []

    def _wanted(self, value: bool, current: Optional[str]) -> Optional[str]:
        if value:
            return 'secure'
        # off: only a secure mode is taken away; anything else already is off
        return MSGR2_DEFAULT if current == 'secure' else current

    def plan(self, ctx: SettingContext, view: PlanView, value: bool) -> List[Change]:
        changes = []
        for who, option in MSGR2_SECURE:
            current = view.config_value(who, option)
            wanted = self._wanted(value, current)
            if wanted != current:
                changes.append(config_change(who, option, wanted))
        if not changes:
            return []
        return changes + [osd_restart(), rgw_restart(ctx)]

    def verify(self, ctx: SettingContext, value: bool) -> None:
        # Polled: an RGW restarted a moment ago has a new name the mgr holds no config
        # of yet (`config show` fails), as seen on a 3-host cluster.
        def problem() -> Optional[str]:
            for who, option in MSGR2_SECURE:
                for daemon in running_daemons(ctx, who):
                    running = ctx.cluster.running_config(daemon, option)
                    if (running == 'secure') != value:
                        return '%s runs with %s = %s' % (daemon, option, running)
            return None
        poll(ctx, 'msgr2 secure mode to be %s in every daemon' % ('on' if value else 'off'),
             problem)


class RGWRestart(Setting):
    """`rgw-restart`: restart the RGW service under test and change nothing else.

    A run gives it to every variant whose settings leave RGW running when another
    variant's settings restart it: a restarted RGW holds less memory and colder caches than
    one that has run for days, which would otherwise read as an effect of the settings.
    """

    name = 'rgw-restart'
    values = 'on or off'
    summary = 'restart the RGW daemons of the service under test, nothing else changed'

    def parse(self, raw: Any) -> bool:
        return on_off(self, raw)

    def plan(self, ctx: SettingContext, view: PlanView, value: bool) -> List[Change]:
        service = ctx.rgw_service()
        return [restart_change(service, 'ceph orch restart %s (nothing else changed)'
                               % service)] if value else []
