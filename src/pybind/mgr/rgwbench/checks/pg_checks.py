"""Checks of placement groups: scrubs and recovery now, autoscaler changes, PGs per OSD."""
from typing import Dict, List, Optional, Tuple

from .facts import Daemon, Facts, Pool
from .finding import Finding, Level

# Health checks the PG autoscaler raises (in `warn` mode) for a pool it would resize.
AUTOSCALE_CHECKS = ('POOL_TOO_FEW_PGS', 'POOL_TOO_MANY_PGS')
SCRUB_STATES = ('scrubbing',)
RECOVERY_STATES = ('recovering', 'recovery_wait', 'backfilling', 'backfill_wait')


def states_with(pg_states: Dict[str, int], words: Tuple[str, ...]) -> Dict[str, int]:
    """Of PG states and their counts, those with one of `words` in them."""
    return {state: n for state, n in sorted(pg_states.items())
            if n and any(w in state.split('+') for w in words)}


def scrubbing_finding(evidence: Tuple[str, ...]) -> Finding:
    return Finding(
        id='pgs-scrubbing', level=Level.skews,
        summary='PGs are being scrubbed or deep-scrubbed: the OSDs read and compare data '
                'besides serving the run',
        evidence=evidence,
        fix='ceph osd set noscrub; ceph osd set nodeep-scrub (and `ceph osd unset noscrub; '
            'ceph osd unset nodeep-scrub` after the run)')


def recovering_finding(evidence: Tuple[str, ...]) -> Finding:
    return Finding(
        id='pgs-recovering', level=Level.skews,
        summary='PGs are recovering or backfilling (or waiting to): the OSDs copy data '
                'besides serving the run',
        evidence=evidence,
        fix='ceph pg stat (wait until every PG is active+clean)')


def _counts(states: Dict[str, int]) -> Tuple[str, ...]:
    return tuple('%d PGs %s' % (n, state) for state, n in states.items())


def scrubbing(facts: Facts) -> List[Finding]:
    states = states_with(facts.pg_states, SCRUB_STATES)
    return [scrubbing_finding(_counts(states))] if states else []


def recovering(facts: Facts) -> List[Finding]:
    states = states_with(facts.pg_states, RECOVERY_STATES)
    return [recovering_finding(_counts(states))] if states else []


def _autoscale_evidence(facts: Facts, pool: Pool) -> List[str]:
    seen = []
    if pool.pg_num != pool.pg_num_target:
        seen.append('pool %s: pg_num %d, pg_num_target %d (a split or merge is under way)'
                    % (pool.name, pool.pg_num, pool.pg_num_target))
    if pool.pgp_num != pool.pgp_num_target:
        seen.append('pool %s: pgp_num %d, pgp_num_target %d (PGs are being moved)'
                    % (pool.name, pool.pgp_num, pool.pgp_num_target))
    for check in facts.health_checks:
        if check.code in AUTOSCALE_CHECKS:
            seen.extend('%s: %s' % (check.code, d) for d in check.detail
                        if ("'%s'" % pool.name) in d or (' %s ' % pool.name) in d)
    return seen


def autoscale_pending(facts: Facts) -> List[Finding]:
    evidence: List[str] = []
    pools = []
    for pool in facts.pools:
        if not pool.rgw:
            continue
        seen = _autoscale_evidence(facts, pool)
        if seen:
            evidence.extend(seen)
            pools.append(pool.name)
    if not evidence:
        return []
    return [Finding(
        id='pg-autoscale-pending', level=Level.skews,
        summary='PG counts of pools the run writes are changing or about to: PGs split, '
                'merge and move data during the run',
        evidence=tuple(evidence),
        fix='ceph osd pool autoscale-status; ceph osd pool ls detail (wait until pg_num and '
            'pgp_num reach their targets, or set pg_num to the target: `ceph osd pool set '
            '%s pg_num <target>`)' % pools[0])]


def op_shards(facts: Facts) -> Optional[int]:
    """How many op queue shards an OSD has: work of one PG goes to one shard only."""
    shards = []
    for osd in facts.osds:
        if not osd.up:
            continue
        daemon = Daemon(entity='osd.%d' % osd.id, host='')
        raw = facts.value('osd_op_num_shards', daemon)
        if not raw or raw == '0':
            raw = facts.value('osd_op_num_shards_%s' % ('hdd' if osd.rotational else 'ssd'),
                              daemon)
        try:
            shards.append(int(raw or ''))
        except ValueError:
            continue
    return min(shards) if shards else None


def pgs_per_osd(facts: Facts) -> List[Finding]:
    osds = len(facts.data_osds())
    shards = op_shards(facts)
    if not osds or not shards:
        return []
    evidence, fixes = [], []
    for pool in facts.pools:
        if not pool.rgw_data:
            continue
        # A replicated PG has `size` copies, an erasure-coded one k+m shards: each on an OSD.
        per_osd = pool.pg_num * pool.size / float(osds)
        if per_osd < shards:
            evidence.append('pool %s: %d PGs x %d copies or shards over %d OSDs = %.1f per '
                            'OSD; an OSD has %d op shards' % (
                                pool.name, pool.pg_num, pool.size, osds, per_osd, shards))
            want = -(-shards * osds // pool.size)
            pg_num = 1 << max(0, (want - 1).bit_length())
            fixes.append('ceph osd pool set %s pg_num %d' % (pool.name, pg_num))
    if not evidence:
        return []
    return [Finding(
        id='data-pool-few-pgs', level=Level.skews,
        summary='the RGW data pool has fewer PGs per OSD than an OSD has op shards: the '
                'work of a PG runs on one shard, so some shards idle and a few PGs '
                'serialize the run\'s writes',
        evidence=tuple(evidence), fix='; '.join(fixes))]


def pg_findings(facts: Facts) -> List[Finding]:
    return scrubbing(facts) + recovering(facts) + autoscale_pending(facts) + pgs_per_osd(facts)
