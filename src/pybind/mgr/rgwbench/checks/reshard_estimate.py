"""Whether a workload writes so many objects into a bucket that RGW reshards it.

RGW's dynamic resharding queues a bucket once it holds more than
`rgw_max_objs_per_shard` objects per index shard, and reshards it soon after,
holding its writes meanwhile (reshard_watch.py sees it happen). A new bucket
has `rgw_override_bucket_index_max_shards` shards when that is set, else the
zonegroup's count: 11 unless the operator changed it (not read here: a
zonegroup change would need radosgw-admin before every plan).

A workload's objects per bucket: its prefill (known exactly) and, for one that
PUTs, what it can write in its warmup and measured window, over its
`buckets`. In open loop that is its rate; in closed loop no estimate knows the
rate beforehand, so the bound of capacity_estimate.py is taken (each request
in flight completing no faster than REQUEST_FLOOR_S plus its object at
STREAM_BYTES_S) and the finding says it is a bound.
"""
import math
from typing import List, Optional, Sequence, Tuple

from ..profiles import Workload
from .capacity_estimate import REQUEST_FLOOR_S, STREAM_BYTES_S
from .facts import Facts
from .finding import Finding, Level

#: the shards of a new bucket under the zonegroup's default
DEFAULT_SHARDS = 11
DEFAULT_OBJS_PER_SHARD = 100000
OFF = ('false', '0', 'no', 'off')


def _whole(text: Optional[str]) -> Optional[int]:
    try:
        return int(str(text).strip())
    except ValueError:
        return None


def reshard_line(facts: Facts) -> Optional[Tuple[int, str]]:
    """The objects at which RGW reshards a new bucket, and how that is made up (None:
    dynamic resharding is off)."""
    rgw = facts.rgw_or_generic()[0]
    if str(facts.value('rgw_dynamic_resharding', rgw) or 'true').strip().lower() in OFF:
        return None
    per_shard = _whole(facts.value('rgw_max_objs_per_shard', rgw)) or DEFAULT_OBJS_PER_SHARD
    override = _whole(facts.value('rgw_override_bucket_index_max_shards', rgw)) or 0
    shards = override if override > 0 else DEFAULT_SHARDS
    return per_shard * shards, 'rgw_max_objs_per_shard %d x %d index shards (%s)' % (
        per_shard, shards, 'rgw_override_bucket_index_max_shards' if override > 0
        else 'a new bucket\'s, unless the zonegroup says otherwise')


def objects_written(workload: Workload, agents: int) -> Tuple[float, bool]:
    """The objects a workload writes into its buckets in all, and whether that is only a
    bound (closed loop)."""
    job = workload.job()
    weights = job.weights
    put_share = weights.get('put', 0.0) / (sum(weights.values()) or 1.0)
    # A workload's `objects` is over all agents; the engine's default is each agent's.
    prefill = (1 if workload.objects else agents) * job.object_count() \
        if job.reads_prefilled else 0
    if not put_share:
        return float(prefill), False
    seconds = workload.warmup_s + workload.duration_s
    per_request_s = REQUEST_FLOOR_S + job.sizes.mean_size / STREAM_BYTES_S
    bound = workload.concurrency * put_share * seconds / per_request_s
    if workload.rate:
        return prefill + min(bound, workload.rate * put_share * seconds), False
    return prefill + bound, True


def reshard_findings(facts: Facts, workloads: Sequence[Workload], agents: int,
                     load: bool = False) -> List[Finding]:
    line = reshard_line(facts)
    if line is None:
        return []
    threshold, made_of = line
    found = []
    for workload in workloads:
        written, bound = objects_written(workload, agents)
        per_bucket = written / max(1, workload.buckets)
        if per_bucket <= threshold:
            continue
        enough = int(math.ceil(written / float(threshold)))
        name = 'the load' if load else 'workload %s' % workload.name
        found.append(Finding(
            id='bucket-reshard-likely', level=Level.info,
            summary='a workload may write more objects into a bucket than RGW takes before '
                    'it reshards the bucket: a reshard during the workload holds its writes '
                    '(the run says so if it happens: bucket-resharded)',
            evidence=('%s: %s %d objects per bucket (%d in all over %d bucket%s%s), past '
                      'the %d at which RGW reshards a bucket: %s' % (
                          name, 'up to' if bound else 'about', per_bucket, written,
                          workload.buckets, '' if workload.buckets == 1 else 's',
                          '; closed loop: if every request took %g ms' % (
                              1000 * (REQUEST_FLOOR_S + workload.job().sizes.mean_size /
                                      STREAM_BYTES_S)) if bound else '',
                          threshold, made_of),),
            fix='%s %d%s' % ('--buckets' if load else 'buckets:', enough,
                             '' if load else ' in workload %s' % workload.name),
            workload=None if load else workload.name))
    return found
