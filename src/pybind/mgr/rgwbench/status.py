"""`ceph rgwbench status`: what the module sees of the cluster and of its runs."""
import re
from typing import Any, Dict, Optional

from .formatting import table
from .serial import dump
from .cluster.orchestration import OrchestratorState
from .cluster.rgw_daemons import rgw_daemons
from .version import MODULE_VERSION


def ceph_version_number(version: str) -> str:
    """`16.2.15` out of `ceph version 16.2.15 (618f...) pacific (stable)`."""
    match = re.search(r'\b(\d+\.\d+\.\d+\S*)', version)
    return match.group(1) if match else version


def build_status(ceph_version: str, release: str, orch: OrchestratorState,
                 service_map: Dict[str, Any],
                 active_run: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        'module_version': MODULE_VERSION,
        'ceph_version': ceph_version,
        'ceph_release': release,
        'orchestrator': dump(orch),
        'rgw_daemons': dump(rgw_daemons(service_map)),
        'run_in_progress': active_run is not None,
        'active_run': active_run,
    }


def status_to_text(status: Dict[str, Any]) -> str:
    orch = status['orchestrator']
    if orch['available']:
        orch_line = '%s (available)' % orch['backend']
    else:
        orch_line = 'not available: %s' % orch['message']
    run = status['active_run']
    lines = [
        'rgwbench %s on Ceph %s (%s)' % (status['module_version'], status['ceph_version'],
                                         status['ceph_release']),
        'orchestrator: %s' % orch_line,
        'run: %s' % ('%s in progress' % run.get('run_id') if run else 'none in progress'),
    ]
    if run:
        lines.append('  %s%s' % (run.get('progress') or '', live_text(run.get('live'))))
    load = status.get('active_load')
    if load:
        lines.append('load: %s in progress%s' % (load['load_id'], live_text(load.get('live'))))
    settings = status.get('settings_in_place')
    if settings:
        lines.append('settings: %s %s (%s)' % (
            ', '.join('%s=%s' % kv for kv in sorted(settings['settings'].items())),
            settings['state'], settings['journal_id']))
    for left in status.get('leftovers') or []:
        lines.append('left by %s, being removed: %s (%s)' % (
            'a workload whose clean-up failed' if left.get('ended') else
            'an interrupted workload', left['bucket_prefix'],
            '; '.join(left['errors']) or 'not tried yet'))
    daemons = status['rgw_daemons']
    if not daemons:
        lines.append('RGW daemons: none found in the service map')
    else:
        lines.append('RGW daemons: %d' % len(daemons))
        rows = [(d['name'], d['host'], ' '.join(e['url'] for e in d['endpoints']) or '-')
                for d in daemons]
        lines.append(table(('DAEMON', 'HOST', 'ENDPOINTS'), rows, indent='  '))
    return '\n'.join(lines)


def live_text(live: Optional[Dict[str, Any]]) -> str:
    """`; now 1234.5 ops/s, 4.82 MiB/s (2 agents, measuring)`, or nothing."""
    if not live:
        return ''
    return '; now %.1f ops/s, %.2f MiB/s (%d agent%s, %s)' % (
        live['ops_per_s'], live['mib_per_s'], live['agents'],
        '' if live['agents'] == 1 else 's', live['phase'])
