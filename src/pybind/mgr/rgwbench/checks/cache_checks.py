"""A GET workload whose working set fits in the caches in front of it: the GETs measure RAM.

The caches that can hold an RGW object's data between a GET and the disks:

- each OSD's BlueStore cache. With `bluestore_cache_autotune` on (the
  default) BlueStore grows its caches up to the OSD's `osd_memory_target`
  less what the OSD needs besides; off, it keeps `bluestore_cache_size` (0:
  `bluestore_cache_size_hdd` or `_ssd` by the OSD's device). A replicated
  pool's reads go to each PG's primary, so each object is cached once, and
  the OSDs' caches add up. The target is taken whole: an upper bound.
- RGW's D3N data cache, where `rgw_d3n_l1_local_datacache_enabled` is on:
  `rgw_d3n_l1_datacache_size` on a local disk of each RGW daemon.

Not counted: RGW's own cache (`rgw_cache_enabled`) holds metadata (bucket and
user info), not object data; RGW does not keep object data in its host's page
cache (it reads from the OSDs over the network); BlueStore reads its data with
O_DIRECT, so the OSD hosts' page cache holds none either.
"""
import math
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Tuple

from ..loadgen.errors import UsageError
from ..loadgen.workload import format_size, parse_range, parse_size
from ..profiles import Workload
from .capacity_estimate import data_pool, room_bytes
from .facts import Daemon, Facts
from .finding import Finding, Level

TRUE = ('true', '1', 'yes', 'on')
# The fix asks for a working set this many times the caches: comfortably out of them.
HEADROOM = 2.0
# A working set sized from the caches takes at most this share of the room the
# capacity check finds in the data pool (the rest is for the run's PUTs).
ROOM_SHARE = 0.5


@dataclass(frozen=True)
class Caches:
    bytes: float
    evidence: Tuple[str, ...]


def human(n: float) -> str:
    """3.5 GiB, 12.0 MiB, 900 B: one decimal, the largest binary unit that fits."""
    for unit, factor in (('TiB', 1 << 40), ('GiB', 1 << 30), ('MiB', 1 << 20),
                         ('KiB', 1 << 10)):
        if n >= factor:
            return '%.1f %s' % (n / factor, unit)
    return '%d B' % n


def _size(text: Optional[str]) -> Optional[int]:
    if text is None or text.strip() == '':
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return parse_size(text)
        except UsageError:
            return None


def _osd_cache(facts: Facts, osd_id: int, rotational: Optional[bool]) -> Tuple[int, str]:
    """The most one OSD's BlueStore cache holds, and which option says so."""
    daemon = Daemon(entity='osd.%d' % osd_id, host='')
    autotune = (facts.value('bluestore_cache_autotune', daemon) or 'true').lower() in TRUE
    if autotune:
        target = _size(facts.value('osd_memory_target', daemon))
        if target:
            return target, 'osd_memory_target'
    fixed = _size(facts.value('bluestore_cache_size', daemon))
    if fixed:
        return fixed, 'bluestore_cache_size'
    option = 'bluestore_cache_size_%s' % ('hdd' if rotational else 'ssd')
    return _size(facts.value(option, daemon)) or 0, option


def caches(facts: Facts) -> Caches:
    """What the caches in front of a GET can hold at most, with where each figure comes from."""
    by_option: Dict[Tuple[str, int], List[int]] = {}
    total = 0.0
    for osd in facts.data_osds():
        size, option = _osd_cache(facts, osd.id, osd.rotational)
        total += size
        by_option.setdefault((option, size), []).append(osd.id)
    evidence = ['%d OSD%s: %s %s each (BlueStore cache, autotune %s)' % (
        len(ids), '' if len(ids) == 1 else 's', option, human(size),
        'on: up to the target' if option == 'osd_memory_target' else 'off')
        for (option, size), ids in sorted(by_option.items())]
    d3n = []
    for daemon in facts.rgws:
        enabled = facts.value('rgw_d3n_l1_local_datacache_enabled', daemon)
        if (enabled or '').lower() not in TRUE:
            continue
        size = _size(facts.value('rgw_d3n_l1_datacache_size', daemon)) or 0
        total += size
        d3n.append('%s: D3N data cache %s (rgw_d3n_l1_datacache_size)' % (
            daemon.label, human(size)))
    return Caches(bytes=total, evidence=tuple(evidence + d3n))


def working_set(workload: Workload, agents: int) -> Optional[Tuple[int, int]]:
    """(objects, bytes each GET reads of one) of a workload that GETs what it prefilled,
    over all agents; None when it does not GET."""
    job = workload.job()
    if not job.weights.get('get'):
        return None
    # A workload's `objects` is over all agents; the engine's default is each agent's.
    objects = job.object_count() * (1 if workload.objects else max(1, agents))
    each = int(round(job.sizes.mean_size))
    if workload.range:
        start, end = parse_range(workload.range)
        each = min(each, end - start)
    return objects, each


def sized_to_caches(facts: Facts, workload: Workload, agents: int,
                    held: int = 1) -> Workload:
    """A GET workload that names no `objects`, with a working set of HEADROOM times
    the caches in front of the disks (within ROOM_SHARE of the data pool's room,
    shared by the `held` prefills the run keeps at once);
    as it is when the engine's default is larger, when no working set that fits
    the room gets out of the caches (a small test cluster: the finding
    `working-set-in-cache` says so), and for any other workload."""
    found = working_set(workload, agents)
    if workload.objects is not None or found is None:
        return workload
    objects, each = found
    cached = caches(facts).bytes
    pool, _, raw_factor = data_pool(facts)
    mean = workload.job().sizes.mean_size
    room = int(ROOM_SHARE * room_bytes(facts, raw_factor, pool) / max(1, held) /
               max(1.0, mean))
    wanted = min(math.ceil(HEADROOM * cached / max(1, each)), room)
    if wanted <= objects or wanted * each <= cached:
        return workload
    return replace(workload, objects=wanted)


def working_set_in_cache(facts: Facts, workload: Workload, agents: int,
                         load: bool = False) -> List[Finding]:
    found = working_set(workload, agents)
    if found is None:
        return []
    objects, each = found
    cached = caches(facts)
    held = objects * each
    if not cached.bytes or held >= cached.bytes:
        return []
    need = int(math.ceil(HEADROOM * cached.bytes / max(1, each)))
    fix = ('ceph rgwbench load ... --objects %d' % need if load else
           'objects: %d in workload %s of the profile (or `--objects %d`)' % (
               need, workload.name, need))
    return [Finding(
        id='working-set-in-cache', level=Level.skews,
        summary='the objects a GET workload reads fit in the caches in front of the disks: '
                'its GETs measure RAM, not the cluster reading data',
        evidence=('%s: %d objects x %s read each = %s (its working set, after the prefill)'
                  % ('the load' if load else 'workload %s' % workload.name, objects,
                     format_size(each), human(held)),
                  'the caches hold up to %s in all' % human(cached.bytes))
        + cached.evidence,
        fix=fix + ': a working set of %s, %g times the caches (the capacity check '
                  'then tells whether it fits)' % (human(need * each), HEADROOM),
        workload=None if load else workload.name)]


def cache_findings(facts: Facts, workloads: Sequence[Workload], agents: int,
                   load: bool = False) -> List[Finding]:
    found: List[Finding] = []
    for workload in workloads:
        found += working_set_in_cache(facts, workload, agents, load)
    return found
