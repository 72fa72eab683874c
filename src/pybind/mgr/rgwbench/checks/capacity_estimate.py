"""What a profile's run would write, against the room the RGW data pool has.

Two kinds of writes, and only one of them can refuse a run:

- Prefills are known exactly: workloads that read (GET, HEAD, LIST) or delete
  first write their key space on every agent, and cannot measure anything
  without all of it. A workload that only reads prefills once per run for
  the variants that store objects alike (see profiles/prefills.py): those objects stay
  until their last reader, the workload in the last variant that reads them,
  ends. The run removes a workload's
  objects at its end, but RGW frees the tails of large objects (beyond the
  head, rgw_max_chunk_size; every part of a multipart upload) only when its
  garbage collection runs, hours later (rgw_gc_obj_min_wait): those bytes
  are counted as staying for the whole run. With keep_objects, everything
  stays. When the most the prefills hold at once exceeds the room, the run
  is refused (`capacity-exceeded`): it could not work.
- PUT workloads write for as long as they run, at a rate no estimate knows
  beforehand (a loopback OSD takes tens of MiB/s, an NVMe cluster tens of
  GiB/s). The capacity guard (capacity_guard.py) watches the fullest OSD every
  second while they run and stops a workload before nearfull, marked
  ``stopped: capacity`` with its figures up to then. So their bytes never
  refuse a run; the estimate gives their upper bound for information, at the
  lower of two bounds: every OSD that holds data absorbing OSD_WRITE_BYTES_S
  of raw writes (a fast NVMe OSD's ceiling), divided by the pool's copies (or
  (k+m)/k); each request in flight completing no faster than REQUEST_FLOOR_S
  plus its object at STREAM_BYTES_S. Only a pool already past the guard's
  line (no room at all) refuses them: every one would stop at once.

The room is what the data pool can take before its fullest OSD reaches the
nearfull ratio minus MARGIN, data spreading over the OSDs by their size and
reweight; never more than `ceph df`'s max_avail.
"""
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple

from ..loadgen.errors import UsageError
from ..loadgen.workload import parse_size
from ..profiles.placement import agent_count
from ..profiles.prefills import read_later, reads_only, storage_of
from ..profiles import MAX_CONCURRENCY, Profile, Workload
from .facts import Daemon, Facts, Pool
from .finding import Finding, Level

GiB = float(1 << 30)
OSD_WRITE_BYTES_S = 1 << 30
REQUEST_FLOOR_S = 0.001
STREAM_BYTES_S = 1 << 30
MARGIN = 0.05
DEFAULT_HEAD_BYTES = 4 << 20


@dataclass(frozen=True)
class Written:
    """What one workload of the run writes, in client bytes."""
    variant: str
    workload: str
    put_bytes: float       # an upper bound; the capacity guard stops it before nearfull
    prefill_bytes: float
    staying_bytes: float   # of the prefill, still held after the workload's clean-up


@dataclass(frozen=True)
class Estimate:
    pool: str
    pool_exists: bool
    raw_factor: float
    osds: int
    peak_bytes: float
    peak_at: Optional[Written]
    room_bytes: float
    written: Tuple[Written, ...]


def _gib(n: float) -> str:
    return '%.1f GiB' % (n / GiB)


def _head_bytes(facts: Facts) -> int:
    raw = facts.value('rgw_max_chunk_size', facts.rgw_or_generic()[0])
    try:
        return parse_size(raw) if raw else DEFAULT_HEAD_BYTES
    except UsageError:
        return DEFAULT_HEAD_BYTES


def _written(workload: Workload, variant: str, agents: int, osd_rate: float,
             head: int, keep_objects: bool) -> Written:
    job = workload.job()
    weights = job.weights
    mean = job.sizes.mean_size
    put_share = weights.get('put', 0.0) / (sum(weights.values()) or 1.0)
    per_request_s = REQUEST_FLOOR_S + mean / STREAM_BYTES_S
    # The concurrency is the total over the agents; each agent prefills its own objects.
    client_rate = workload.concurrency * put_share * mean / per_request_s
    if workload.rate:
        # Open loop: never more requests than the rate asks for, whatever the concurrency.
        client_rate = min(client_rate, workload.rate * put_share * mean)
    put = min(client_rate, osd_rate) * (workload.warmup_s + workload.duration_s) \
        if put_share else 0.0
    # A workload's `objects` is over all agents; the engine's default is each agent's.
    prefill = (1 if workload.objects else agents) * job.object_count() * mean \
        if job.reads_prefilled else 0.0
    if keep_objects:
        staying = 1.0
    elif mean > job.multipart_threshold_bytes:
        staying = 1.0   # every part is a tail object
    else:
        staying = max(0.0, mean - head) / mean
    return Written(variant=variant, workload=workload.name, put_bytes=put,
                   prefill_bytes=prefill, staying_bytes=prefill * staying)


def data_pool(facts: Facts) -> Tuple[str, bool, float]:
    """The pool the run's objects go to: its name, whether it exists, its raw factor."""
    pools: List[Pool] = [p for p in facts.pools if p.rgw_data]
    if pools:
        pool = max(pools, key=lambda p: p.raw_factor)
        return pool.name, True, pool.raw_factor
    # RGW makes its data pool as it made its other pools: their copies are the best
    # guess (a ceph.conf default is not in the config database the mgr reads).
    others = [p.raw_factor for p in facts.pools if p.rgw]
    if others:
        return 'default.rgw.buckets.data', False, max(others)
    raw = facts.value('osd_pool_default_size', Daemon(entity='mon', host=''))
    try:
        copies = max(1, int(raw or '3'))
    except ValueError:
        copies = 3
    return 'default.rgw.buckets.data', False, float(copies)


def room_bytes(facts: Facts, raw_factor: float, pool: str) -> float:
    """Client bytes the pool takes before its fullest OSD reaches nearfull - MARGIN."""
    osds = facts.data_osds()
    total = sum(o.kb * o.reweight for o in osds)
    if not osds or total <= 0:
        return 0.0
    limit = facts.nearfull_ratio - MARGIN
    raw = min((limit - o.used_ratio) * o.kb * 1024 / (o.kb * o.reweight / total)
              for o in osds)
    room = max(0.0, raw / raw_factor)
    if pool in facts.max_avail:
        room = min(room, float(facts.max_avail[pool]))
    return room


def estimate(facts: Facts, profile: Profile, keep_objects: bool = False) -> Estimate:
    pool, exists, raw_factor = data_pool(facts)
    osds = len(facts.data_osds())
    osd_rate = osds * OSD_WRITE_BYTES_S / raw_factor
    head = _head_bytes(facts)
    agents = agent_count(profile.placement, [d.host for d in facts.rgws])
    written, staying, peak, peak_at = [], 0.0, 0.0, None
    # Prefills of reading workloads, while a later variant may read them: what their
    # removal frees (their tails stay, for RGW's garbage collection).
    held: Dict[Tuple[Optional[str], str], float] = {}
    interleaved = profile.interleaved()
    for _ in range(profile.repeats if interleaved else 1):
        for index, variant in enumerate(profile.variants):
            storage = storage_of(variant, index)
            for workload in profile.workloads:
                key = (workload.name, storage)
                for _ in range(1 if interleaved else profile.repeats):
                    w = _written(workload.for_rgws(len(facts.rgws), MAX_CONCURRENCY),
                                 variant.name, agents, osd_rate, head, keep_objects)
                    if reads_only(workload) and key in held:   # read again, unwritten
                        w = replace(w, prefill_bytes=0.0, staying_bytes=0.0)
                    written.append(w)
                    if staying + w.prefill_bytes > peak:
                        peak, peak_at = staying + w.prefill_bytes, w
                    if reads_only(workload) and key not in held:
                        held[key] = w.prefill_bytes - w.staying_bytes
                        staying += w.prefill_bytes
                    else:
                        staying += w.staying_bytes
                if key in held and not read_later(storage, index, profile):
                    staying -= held.pop(key)   # removed after its last reader
    return Estimate(pool=pool, pool_exists=exists, raw_factor=raw_factor, osds=osds,
                    peak_bytes=peak, peak_at=peak_at,
                    room_bytes=room_bytes(facts, raw_factor, pool), written=tuple(written))


def capacity_findings(facts: Facts, profile: Profile, keep_objects: bool = False,
                      load: bool = False) -> List[Finding]:
    """load: the profile is `ceph rgwbench load`'s one workload, and is named so."""
    e = estimate(facts, profile, keep_objects)
    what = 'the load' if load else 'a run of profile %s' % profile.name
    where = 'pool %s%s (%g raw bytes per byte, %d OSDs holding data)' % (
        e.pool, '' if e.pool_exists else ' (not created yet)', e.raw_factor, e.osds)
    room = 'room before the fullest OSD reaches nearfull_ratio %.2f - %.2f: %s' % (
        facts.nearfull_ratio, MARGIN, _gib(e.room_bytes))
    puts = sum(w.put_bytes for w in e.written)
    prefills = sum(w.prefill_bytes for w in e.written)
    peak = 'prefills: at most %s in the pool at once%s' % (
        _gib(e.peak_bytes), ', during workload %s of variant %s' % (
            e.peak_at.workload, e.peak_at.variant) if e.peak_at and not load else '')
    found = [Finding(
        id='capacity-estimate', level=Level.info,
        summary='what %s would write: its prefills, and PUT workloads that the capacity '
                'guard stops before nearfull (their upper bound: %s/s per OSD, requests '
                'no faster than %g ms)' % (
                    what, _gib(OSD_WRITE_BYTES_S), REQUEST_FLOOR_S * 1000),
        evidence=(where, 'PUT workloads: %s in all; prefills: %s in all' % (
            _gib(puts), _gib(prefills)), peak, room),
        fix='')]
    no_room = e.room_bytes <= 0 and (puts > 0 or prefills > 0)
    if e.peak_bytes <= e.room_bytes and not no_room:
        return found
    fewer = ' or read fewer objects (--objects)' if load else \
        " or read fewer objects (a workload's objects)"
    fix = 'free space (ceph osd df; radosgw-admin gc process --include-all) or add OSDs'
    found.insert(0, Finding(
        id='capacity-exceeded', level=Level.refuse,
        summary=('%s would write into pool %s, which has no room left before an OSD is '
                 'nearfull' % (what, e.pool)) if no_room else
                ('the prefills of %s need %s more than pool %s has room for before an OSD '
                 'is nearfull' % (what, _gib(e.peak_bytes - e.room_bytes), e.pool)),
        evidence=(where, peak, room), fix=fix + fewer))
    return found
