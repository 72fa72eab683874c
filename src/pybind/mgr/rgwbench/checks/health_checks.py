"""Checks of the cluster's health: HEALTH_ERR, HEALTH_WARN, OSDs near full, no RGW."""
from typing import List

from .facts import Facts
from .finding import Finding, Level

FULLNESS_STATES = ('nearfull', 'backfillfull', 'full')


def _checks(facts: Facts, severity: str) -> List[str]:
    return ['%s: %s' % (c.code, c.message) for c in facts.health_checks
            if c.severity == severity]


def health_error(facts: Facts) -> List[Finding]:
    if facts.health_status != 'HEALTH_ERR':
        return []
    return [Finding(
        id='health-err', level=Level.refuse,
        summary='the cluster is in HEALTH_ERR: a run would add load to a cluster that '
                'needs care, and its figures would mean nothing',
        evidence=tuple(_checks(facts, 'HEALTH_ERR')) or ('status HEALTH_ERR',),
        fix='ceph health detail')]


def health_warning(facts: Facts) -> List[Finding]:
    seen = _checks(facts, 'HEALTH_WARN')
    if not seen:
        return []
    return [Finding(
        id='health-warn', level=Level.skews,
        summary='health warnings are raised: what they report may slow the cluster down '
                'during the run',
        evidence=tuple(seen),
        fix='ceph health detail (resolve each, or `ceph health mute <CHECK>` one that '
            'cannot affect the run)')]


def osd_nearfull(facts: Facts) -> List[Finding]:
    evidence = []
    for osd in facts.osds:
        flags = [s for s in osd.states if s in FULLNESS_STATES]
        if flags or (osd.kb > 0 and osd.used_ratio >= facts.nearfull_ratio):
            evidence.append('osd.%d: %.1f %% used, nearfull_ratio %.2f%s' % (
                osd.id, osd.used_ratio * 100, facts.nearfull_ratio,
                ', flagged %s' % '+'.join(flags) if flags else ''))
    if not evidence:
        return []
    return [Finding(
        id='osd-nearfull', level=Level.skews,
        summary='OSDs are near full: writes slow down, and a run would fill them further',
        evidence=tuple(evidence),
        fix='ceph osd df; radosgw-admin gc process --include-all (frees what deleted '
            'objects still hold), or add OSDs')]


def no_rgw_daemon(facts: Facts) -> List[Finding]:
    """What a run refuses when the service map lists no RGW, as settings.applier's
    precheck does; a load that names its endpoints needs none."""
    if facts.rgws:
        return []
    return [Finding(
        id='no-rgw-daemon', level=Level.refuse,
        summary='no RGW daemon is in the service map: a run would have no gateway to '
                'measure, nor daemons to apply its settings to',
        evidence=('the service map lists no rgw daemon',),
        fix='ceph orch apply rgw <name> (where RGW daemons run, wait until `ceph rgwbench '
            'status` lists them: a started radosgw registers within seconds)')]


def health_findings(facts: Facts) -> List[Finding]:
    return health_error(facts) + health_warning(facts) + osd_nearfull(facts)
