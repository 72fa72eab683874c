"""A run's plan as `ceph rgwbench plan` prints it."""
from typing import Any, Dict, List, Optional, Sequence

from ..agents.launchers import MGR_PROCESS
from ..profiles.estimates import format_duration
from ..settings.s3user import user_plan_to_text


def agents_text(agents: Dict[str, Any]) -> str:
    if agents.get('error'):
        return 'none can be placed now: %s' % agents['error']
    if agents.get('started_by') == MGR_PROCESS:
        text = 'one, a process on the active mgr\'s host (%s)' % ', '.join(agents['hosts'])
    else:
        text = 'one on each of %s (containers the orchestrator starts)' % ', '.join(
            agents.get('hosts') or [])
    if agents.get('samplers'):
        text += '; and on %s, which the placement leaves out, one that only counts the ' \
            'CPU and memory of its RGW and HAProxy daemons' % ', '.join(agents['samplers'])
    return text


def _processes_text(workload: Dict[str, Any]) -> str:
    processes = int(workload.get('processes') or 0)
    if not processes:
        return 'one engine process per core of its host (at most agent_processes_max)'
    return '%d engine process%s' % (processes, '' if processes == 1 else 'es')


SIGNING = {'unsigned': 'payload unsigned (UNSIGNED-PAYLOAD)',
           'signed': 'payload signed (its SHA-256)'}


def engine_text(workloads: List[Dict[str, Any]]) -> Optional[str]:
    """How each agent sends the load: its engine processes, and the payload signing that
    every variant's requests have."""
    if not workloads:
        return None
    parts = []
    for describe in (_processes_text,
                     lambda w: SIGNING.get(str(w.get('payload_signing')),
                                           'payload %s' % w.get('payload_signing'))):
        said = [describe(w) for w in workloads]
        if len(set(said)) == 1:
            parts.append(said[0])
        else:
            parts.append(', '.join('%s: %s' % (w['name'], text)
                                   for w, text in zip(workloads, said)))
    return 'each agent: %s; %s, in every variant' % tuple(parts)


def sweeps_text(sweeps: List[Dict[str, Any]]) -> List[str]:
    """Each sweep of the plan: what its list expanded to, and its share of the run's time."""
    lines = []
    for sweep in sweeps:
        swept = {'concurrency_per_rgw': 'concurrency per RGW'}.get(sweep['swept'],
                                                                   sweep['swept'])
        lines.append('sweep %s: %s %s -> %d %s (%s), about %s' % (
            sweep['curve'], swept, ', '.join(sweep['values']), len(sweep['points']),
            sweep['kind'], ', '.join(sweep['points']),
            format_duration(sweep['estimated_s'])))
    return lines


def chosen_text(variants: List[Dict[str, Any]]) -> List[str]:
    """Each value chosen from the cluster (`sse=auto`) and why, once however many
    variants have it."""
    return list(dict.fromkeys(p['chosen'] for v in variants for p in v['changes']
                              if p.get('chosen')))


ESTIMATE_PARTS = (('workloads', 'workloads'), ('osd_restarts', 'OSD restarts'),
                  ('specs', 'specs applied and put back'),
                  ('daemon_restarts', 'RGW restarts'), ('prefills', 'prefills at most'),
                  ('applications', 'settings'), ('run', 'its S3 user and record'))


#: the parts whose steps are timed on the cluster (or else counted at fixed times)
STEP_PARTS = ('osd_restarts', 'specs', 'daemon_restarts')


def estimate_text(estimate: Dict[str, float], measured: Sequence[str] = ()) -> str:
    """`estimate: 1m 45s (workloads 48s, OSD restarts 36s, ...), step times measured on
    this cluster`: its parts that take time, and whether the steps it counts are at the
    times they took here (`measured`: those parts) or the fixed ones."""
    said = dict(ESTIMATE_PARTS)
    parts = ['%s %s' % (said[part], format_duration(estimate[part]))
             for part, _ in ESTIMATE_PARTS if estimate.get(part)]
    steps = [p for p in STEP_PARTS if estimate.get(p)]
    timed = [p for p in steps if p in measured]
    if not steps:
        where = ''
    elif timed == steps:
        where = ', step times measured on this cluster'
    elif not timed:
        where = ', default step times'
    else:
        where = ', %s measured on this cluster, other steps at default times' % ' and '.join(
            said[p] for p in timed)
    return 'estimate: %s (%s)%s' % (format_duration(estimate['total']), ', '.join(parts),
                                    where)


def run_plan_to_text(plan: Dict[str, Any]) -> str:
    lines = ['profile %s: %d variant(s) x %d workload(s) x %d repeat(s), about %d min' % (
        plan['profile'], len(plan['variants']), len(plan['workloads']), plan['repeats'],
        round(plan['estimated_s'] / 60.0 + 0.5))]
    if plan.get('estimate'):
        lines.append(estimate_text(plan['estimate'], plan.get('estimate_measured') or ()))
    lines.append('agents: %s' % agents_text(plan.get('agents') or {}))
    lines.append('load goes to: %s' % {
        'auto': 'every RGW daemon of the service, or the ingress of a variant that has one',
        'rgw': 'every RGW daemon of the service', 'ingress': 'every frontend of the ingress'
    }.get(plan.get('target') or 'auto', plan.get('target')))
    lines.append('workloads: %s' % ', '.join(w['name'] for w in plan['workloads']))
    for w in plan['workloads']:
        if w.get('prefill_time_s'):
            lines.append('  %s reads %d objects (twice the caches in front of the disks), '
                         'prefilled for at most %g s'
                         % (w['name'], w['objects'], w['prefill_time_s']))
    lines.extend(sweeps_text(plan.get('sweeps') or []))
    engine = engine_text(plan['workloads'])
    if engine:
        lines.append(engine)
    if 's3_user' in plan:
        lines.append(user_plan_to_text(plan['s3_user']))
    lines += chosen_text(plan['variants'])
    for variant in plan['variants']:
        lines.append('variant %s%s:' % (variant['name'],
                                        ' (baseline)' if variant['baseline'] else ''))
        if variant.get('kept'):
            lines.append('  - keeps %s as the variant before left it'
                         % ', '.join(variant['kept']))
        changes = [c['summary'] for p in variant['changes'] for c in p['changes']]
        lines += ['  - %s' % c for c in changes] or ['  (the cluster as it is)']
        lines.append('  - run every workload, then put back what the next variant does '
                     'not keep')
    if plan.get('osd_restarts') is not None:
        lines.append('OSD restarts: %d' % plan['osd_restarts'])
    for problem in plan['problems']:
        lines.append('refused now: %s' % problem)
    for found in plan.get('findings') or []:
        lines.append('%s: [%s] %s: %s%s' % (
            'refused now' if found['level'] == 'refuse' else 'finding', found['level'],
            found['id'], found['summary'],
            ' (fix: %s)' % found['fix'] if found.get('fix') else ''))
        # the values seen: what the summary is about (24 requests over 9 targets, ...)
        lines += ['  seen: %s' % e for e in found.get('evidence') or []]
    return '\n'.join(lines)
