"""A bucket of a workload that RGW reshards, or queues for resharding, while it runs.

RGW's dynamic resharding does not look at a bucket as it is written: each
RGW's bucket stats sync thread, every `rgw_user_quota_bucket_sync_interval`
(180 s by default), reads the stats of the buckets that RGW wrote to since,
and queues one holding more than `rgw_max_objs_per_shard` objects per index
shard (100000 by default, over the 11 shards a new bucket has by default).
Its reshard thread, every `rgw_reshard_thread_interval` (10 minutes by
default), then reshards the queue's buckets, holding each one's writes while
it copies its index. A PUT workload of small objects into one bucket can
cross that line: its figures then include writes held up by a reshard, or an
index whose shards hold more entries than RGW aims for. (Measured on Pacific
and Tentacle, both intervals set short: queued within one sync interval of
crossing the line, resharded at the reshard thread's next pass, a PUT held
for seconds meanwhile.)

While a workload that writes runs, a thread reads each of its buckets' index
shards (`radosgw-admin bucket stats`, the first WATCHED of them: the engine
spreads objects evenly over a job's buckets) and RGW's reshard queue
(`reshard list`) every `every_s`, and once more when the workload ends. A
bucket whose shards changed between two readings was resharded during the
workload (`bucket-resharded`); one only queued will be resharded later, if it
still exists (`bucket-reshard-queued`). A queued reshard to fewer shards
(Tentacle, not Pacific: a bucket that lost most of its objects) is not counted.
"""
import math
import time
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple

from ..cluster.rgw_admin import BucketShards, QueuedReshard
from .finding import Finding, Level
from .periodic import Periodic

SAMPLE_EVERY_S = 5.0
#: how often it reads until it first finds one of the buckets (the agents make them as
#: they start): a reshard soon after would otherwise fall before its first reading, unseen
UNTIL_FOUND_EVERY_S = 1.0
#: buckets of a job read each time: each radosgw-admin call takes a moment on the mgr
WATCHED = 4
FIX = ('spread the workload\'s objects over more buckets (its `buckets`), so that each '
       'holds fewer than rgw_max_objs_per_shard times its shards; or give new buckets more '
       'shards (ceph config set client.rgw rgw_override_bucket_index_max_shards N)')


class ShardReader(Protocol):
    """Reads buckets' index shards and RGW's reshard queue (radosgw-admin, or a fake)."""

    def bucket_shards(self, bucket: str) -> Optional[BucketShards]: ...

    def reshard_queue(self) -> List[QueuedReshard]: ...


class ReshardWatch(Periodic):
    """Reads the shards of `buckets` every `every_s` while entered (every
    `until_found_s` until it finds one of them), and once more at its exit;
    `findings()` after."""

    def __init__(self, reader: ShardReader, buckets: Sequence[str],
                 every_s: float = SAMPLE_EVERY_S, log: Optional[Any] = None,
                 clock: Callable[[], float] = time.time,
                 until_found_s: float = UNTIL_FOUND_EVERY_S) -> None:
        super().__init__(self._tick, min(every_s, until_found_s), 'rgwbench-reshard-watch',
                         log)
        self.read_every_s = every_s
        self.last_read: Optional[float] = None
        self.reader = reader
        self.buckets = list(buckets)[:WATCHED]
        self.clock = clock
        # each bucket's readings in order: when, its shards and objects
        self.readings: Dict[str, List[Tuple[float, BucketShards]]] = {
            b: [] for b in self.buckets}
        # when each bucket was first seen in the reshard queue
        self.queued: Dict[str, float] = {}

    def _tick(self) -> bool:
        now = self.clock()
        found = any(self.readings.values())
        if not found or self.last_read is None or now - self.last_read >= self.read_every_s:
            self.last_read = now
            self._read()
        return False

    def _read(self) -> bool:
        for bucket in self.buckets:
            found = self.reader.bucket_shards(bucket)
            if found is not None and found.shards is not None:
                self.readings[bucket].append((self.clock(), found))
        now = self.clock()
        for entry in self.reader.reshard_queue():
            if entry.bucket in self.readings and not entry.reduces:
                self.queued.setdefault(entry.bucket, now)
        return False

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        try:   # the workload's end: its buckets as full as they get, before they go
            self._read()
        except Exception as e:
            if self.log:
                self.log.debug('%s: %s', self.name, e)

    def findings(self, window_start: Optional[float] = None,
                 duration_s: float = 0.0) -> List[Finding]:
        """What was seen; with the measured window [window_start, + duration_s), the
        seconds of it a reshard (between the two readings around it) or a bucket's first
        sight in the queue fall in (none: before or after the window)."""
        def seconds(first: float, last: float) -> Tuple[int, ...]:
            if window_start is None:
                return ()
            start, end = first - window_start, last - window_start
            return tuple(k for k in range(max(0, math.floor(start)), math.floor(end) + 1)
                         if k < duration_s)
        resharded, queued = [], []
        touched: List[int] = []
        queued_at: List[int] = []
        for bucket, seen in self.readings.items():
            shards = [r.shards for _, r in seen]
            if len(set(shards)) > 1:
                resharded.append('bucket %s: %s index shards, %d objects at the end' % (
                    bucket, ' -> '.join(str(n) for n in dict.fromkeys(shards)),
                    seen[-1][1].objects))
                for (before, old), (after, new) in zip(seen, seen[1:]):
                    if old.shards != new.shards:
                        touched += seconds(before, after)
            elif bucket in self.queued:
                queued.append('bucket %s: in RGW\'s reshard queue, %s index shards, %d '
                              'objects at the end' % (
                                  bucket, shards[-1] if shards else 'unknown',
                                  seen[-1][1].objects if seen else 0))
                queued_at += seconds(self.queued[bucket], self.queued[bucket])
        found = []
        if resharded:
            found.append(Finding(
                id='bucket-resharded', level=Level.skews,
                summary='RGW resharded a bucket of the workload while it ran: writes to the '
                        'bucket wait while its index is copied, and its shards held more '
                        'entries than RGW aims for before; the figures include both',
                evidence=tuple(resharded), fix=FIX, seconds=tuple(sorted(set(touched)))))
        if queued:
            found.append(Finding(
                id='bucket-reshard-queued', level=Level.info,
                summary='a bucket of the workload crossed RGW\'s dynamic resharding line '
                        '(rgw_max_objs_per_shard objects per index shard) and was queued: '
                        'its shards held more entries than RGW aims for, and a longer '
                        'workload would have waited on its reshard',
                evidence=tuple(queued), fix=FIX, seconds=tuple(sorted(set(queued_at)))))
        return found
