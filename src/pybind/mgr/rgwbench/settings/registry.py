"""The settings rgwbench knows, in the order their changes are made."""
from typing import Any, Dict, List

from ..errors import InvalidInput
from .base import Setting
from .data_pool import DataPool
from .daemon_settings import ConfigOption, Msgr2Secure, RGWPerHost, RGWRestart
from .rgw_cpus import RGWCpus
from .sse import ServerSideEncryption
from .tls import IngressTls, RGWTls


def all_settings() -> List[Setting]:
    return [ConfigOption(), RGWPerHost(), RGWCpus(), RGWTls(), IngressTls(), Msgr2Secure(),
            DataPool(), ServerSideEncryption(), RGWRestart()]


def parse_assignments(items: List[str]) -> Dict[str, Any]:
    """`name=value` words from the command line into a mapping."""
    found: Dict[str, Any] = {}
    for item in items:
        name, eq, value = item.partition('=')
        if not eq or not name.strip() or not value.strip():
            raise InvalidInput('write settings as name=value, got %r' % item)
        if name.strip() in found:
            raise InvalidInput('%s is given twice' % name.strip())
        found[name.strip()] = value.strip()
    return found


def describe(settings: List[Setting]) -> List[Dict[str, str]]:
    return [{'setting': s.name, 'values': s.values, 'summary': s.summary} for s in settings]


def settings_list_to_text(found: List[Dict[str, str]]) -> str:
    return '\n'.join('%-14s %s (%s)' % (s['setting'], s['summary'], s['values']) for s in found)


def settings_plan_to_text(plans: List[Dict[str, Any]]) -> str:
    lines = []
    for plan in plans:
        lines.append('%s = %s' % (plan['setting'], plan['value']))
        if plan.get('chosen'):
            lines.append('  %s' % plan['chosen'])
        lines += ['  - %s' % c['summary'] for c in plan['changes']] or ['  (already in place)']
        lines += ['  note: %s' % n for n in plan['notes']]
    return '\n'.join(lines)
