"""Checks of the daemons' configuration: beast's tcp_nodelay, debug levels, the ops log."""
import shlex
from typing import Dict, List, Optional, Sequence, Tuple

from .facts import ConfigEntry, Daemon, Facts
from .finding import Finding, Level

TRUE = ('true', '1', 'yes', 'on')


def _unique(items: Sequence[str]) -> List[str]:
    return list(dict.fromkeys(items))


def _restart(daemons: Sequence[Daemon]) -> List[str]:
    return ['ceph orch daemon restart %s' % d.label for d in daemons]


# -- beast without tcp_nodelay ---------------------------------------------------------------

def _frontends(facts: Facts, daemon: Daemon) -> Tuple[str, ...]:
    if daemon.frontends:
        return daemon.frontends
    value = facts.value('rgw_frontends', daemon)
    return (value,) if value else ()


def _nodelay(frontend: str) -> bool:
    return any(arg in ('tcp_nodelay=1', 'tcp_nodelay=true') for arg in frontend.split()[1:])


def beast_tcp_nodelay(facts: Facts) -> List[Finding]:
    evidence, sets, restarts = [], [], []
    for daemon in facts.rgws:
        for frontend in _frontends(facts, daemon):
            if not frontend.startswith('beast') or _nodelay(frontend):
                continue
            entry = facts.effective('rgw_frontends', daemon)
            evidence.append('%s: rgw_frontends = %r (%s)' % (
                daemon.label, frontend, 'set in section %s' % entry.who if entry
                else 'the default'))
            sets.append('ceph config set %s rgw_frontends %s' % (
                entry.who if entry else daemon.entity, shlex.quote(frontend + ' tcp_nodelay=1')))
            restarts.extend(_restart([daemon]))
    if not evidence:
        return []
    return [Finding(
        id='beast-without-tcp-nodelay', level=Level.skews,
        summary='beast serves without tcp_nodelay=1: Nagle\'s algorithm holds back the end '
                'of replies, and small GETs stall about 40 ms each',
        evidence=tuple(evidence), fix='; '.join(_unique(sets) + restarts))]


# -- debug levels above their defaults ---------------------------------------------------------

DEBUG_OPTIONS = (('debug_rgw', 'rgw'), ('debug_ms', 'rgw+osd'), ('debug_osd', 'osd'))


def debug_levels(text: Optional[str]) -> Optional[Tuple[int, int]]:
    """`20` -> (20, 20), `1/5` -> (1, 5): the log level and the in-memory level."""
    if text is None:
        return None
    log, _, memory = text.strip().partition('/')
    try:
        return (int(log), int(memory or log))
    except ValueError:
        return None


def _above(value: Optional[str], default: Optional[str]) -> bool:
    seen, usual = debug_levels(value), debug_levels(default)
    if seen is None or usual is None:
        return False
    return seen[0] > usual[0] or seen[1] > usual[1]


def _debug_daemons(facts: Facts, kinds: str) -> List[Daemon]:
    found: List[Daemon] = []
    if 'rgw' in kinds:
        found.extend(facts.rgw_or_generic())
    if 'osd' in kinds:
        found.extend(facts.osd_daemons())
    return found


def debug_raised(facts: Facts) -> List[Finding]:
    found = []
    for option, kinds in DEBUG_OPTIONS:
        default = facts.option_default(option)
        reached: Dict[ConfigEntry, List[str]] = {}
        for daemon in _debug_daemons(facts, kinds):
            entry = facts.effective(option, daemon)
            if entry is not None and _above(entry.value, default):
                reached.setdefault(entry, []).append(daemon.label)
        if not reached:
            continue
        found.append(Finding(
            id='%s-raised' % option.replace('_', '-'), level=Level.skews,
            summary='%s is above its default (%s): every request formats and writes log '
                    'lines, which costs CPU and latency' % (option, default),
            evidence=tuple('section %s: %s = %s, reaching %s' % (
                entry.who, option, entry.value, ', '.join(labels))
                for entry, labels in reached.items()),
            fix='; '.join('ceph config rm %s %s' % (entry.who, option) for entry in reached)))
    return found


# -- the ops log -------------------------------------------------------------------------------

def _sinks(facts: Facts, daemon: Daemon) -> List[str]:
    sinks = []
    path = facts.value('rgw_ops_log_file_path', daemon)
    if path:
        sinks.append('the file %s (rgw_ops_log_file_path)' % path)
    if (facts.value('rgw_ops_log_rados', daemon) or '').lower() in TRUE:
        sinks.append('a RADOS object per bucket and hour (rgw_ops_log_rados)')
    socket = facts.value('rgw_ops_log_socket_path', daemon)
    if socket:
        sinks.append('the socket %s (rgw_ops_log_socket_path)' % socket)
    return sinks


def ops_log(facts: Facts) -> List[Finding]:
    evidence, removes, restarts = [], [], []
    for daemon in facts.rgw_or_generic():
        entry = facts.effective('rgw_enable_ops_log', daemon)
        if entry is None or entry.value.lower() not in TRUE:
            continue
        sinks = _sinks(facts, daemon)
        if not sinks:
            continue
        evidence.append('%s: rgw_enable_ops_log = %s (section %s), writing every request to %s'
                        % (daemon.label, entry.value, entry.who, ' and '.join(sinks)))
        removes.append('ceph config rm %s rgw_enable_ops_log' % entry.who)
        if not entry.runtime and daemon.host:
            restarts.extend(_restart([daemon]))
    if not evidence:
        return []
    return [Finding(
        id='rgw-ops-log', level=Level.skews,
        summary='RGW writes an ops log entry for every request: one more write per '
                'request, on the path the run measures',
        evidence=tuple(evidence), fix='; '.join(_unique(removes) + restarts))]


def config_findings(facts: Facts) -> List[Finding]:
    return beast_tcp_nodelay(facts) + debug_raised(facts) + ops_log(facts)
