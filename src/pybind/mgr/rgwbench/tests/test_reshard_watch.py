"""Buckets of a workload that RGW reshards or queues for resharding while it runs: read
with radosgw-admin, watched, and kept as findings of the run."""
import json
from dataclasses import replace
from typing import Dict, List, Optional, Tuple, Union

import pytest

from checks_fakes import FakeView, roomy
from rgwbench.tests.run_fakes import Setup, checks_on
from rgwbench.tests.s3stub import StubS3

from rgwbench.checks import findings
from rgwbench.checks.finding import Finding, Level
from rgwbench.checks.gate import load_profile
from rgwbench.checks.reshard_watch import WATCHED, ReshardWatch
from rgwbench.cluster.rgw_admin import (BucketShards, QueuedReshard, RadosgwAdmin,
                                        RadosgwAdminError)
from rgwbench.profiles import Profile, Variant, Workload
from rgwbench.serial import dump


def growing(bucket: str) -> QueuedReshard:
    """A bucket queued by dynamic resharding, for more shards."""
    return QueuedReshard(bucket, 11, 23)


class ScriptedReader:
    """Each bucket's shards at each reading (the last one repeated), and the queue: the
    buckets of each reading, queued for more shards, or its entries."""

    def __init__(self, shards: Dict[str, List[Optional[int]]],
                 queue: Optional[List[List[Union[str, QueuedReshard]]]] = None) -> None:
        self.shards = shards
        self.queue = queue or [[]]
        self.reads: Dict[str, int] = {}
        self.queue_reads = 0

    def bucket_shards(self, bucket: str) -> Optional[BucketShards]:
        n = self.reads.get(bucket, 0)
        self.reads[bucket] = n + 1
        script = self.shards.get(bucket)
        if not script:
            return None
        shards = script[min(n, len(script) - 1)]
        return None if shards is None else BucketShards(bucket, shards, 1000 * (n + 1))

    def reshard_queue(self) -> List[QueuedReshard]:
        self.queue_reads += 1
        return [growing(e) if isinstance(e, str) else e
                for e in self.queue[min(self.queue_reads - 1, len(self.queue) - 1)]]


def watched(reader: ScriptedReader, buckets: List[str], readings: int) -> ReshardWatch:
    """A watch that read `readings` times (the last one its exit's)."""
    watch = ReshardWatch(reader, buckets, every_s=3600)
    for _ in range(readings - 1):
        watch._read()
    with watch:
        pass
    return watch


def test_a_bucket_whose_shards_changed_was_resharded() -> None:
    # b-0 does not exist at the first reading (the agents make it), then has 11 shards,
    # then 23; b-1 keeps 11
    reader = ScriptedReader({'b-0': [None, 11, 23], 'b-1': [11]})
    (found,) = watched(reader, ['b-0', 'b-1'], 3).findings()
    assert found.id == 'bucket-resharded' and found.level == Level.skews
    assert found.evidence == ('bucket b-0: 11 -> 23 index shards, 3000 objects at the end',)
    assert 'buckets' in found.fix and 'rgw_override_bucket_index_max_shards' in found.fix


def test_the_seconds_of_the_window_a_reshard_fell_in() -> None:
    """Readings at 100, 110 and 120 s of the clock; the window from 105 s, 20 s long:
    the reshard between 110 and 120 s covers its seconds 5 to 15; a bucket first seen
    queued at 120 s, its second 15."""
    times = iter([100.0, 100.0, 110.0, 110.0, 120.0, 120.0, 130.0, 130.0])
    reader = ScriptedReader({'b-0': [11, 11, 23]}, queue=[[], ['b-0']])
    watch = ReshardWatch(reader, ['b-0'], every_s=3600, clock=lambda: next(times))
    watch._read()
    watch._read()
    watch._read()
    (found,) = watch.findings(105.0, 20.0)
    assert found.seconds == tuple(range(5, 16))
    assert watch.findings(None, 20.0)[0].seconds == ()
    reader = ScriptedReader({'b-0': [11]}, queue=[[], [], ['b-0']])
    times = iter([100.0, 100.0, 110.0, 110.0, 120.0, 120.0])
    watch = ReshardWatch(reader, ['b-0'], every_s=3600, clock=lambda: next(times))
    for _ in range(3):
        watch._read()
    (found,) = watch.findings(105.0, 20.0)
    assert found.id == 'bucket-reshard-queued' and found.seconds == (15,)
    assert watch.findings(125.0, 20.0)[0].seconds == ()   # before the window


def test_a_queued_bucket_is_told_and_a_quiet_one_is_not() -> None:
    reader = ScriptedReader({'b-0': [11], 'b-1': [11]},
                            queue=[[], ['someone-elses', 'b-1']])
    (found,) = watched(reader, ['b-0', 'b-1'], 2).findings()
    assert found.id == 'bucket-reshard-queued' and found.level == Level.info
    assert found.evidence == ("bucket b-1: in RGW's reshard queue, 11 index shards, 2000 "
                              'objects at the end',)
    assert watched(ScriptedReader({'b-0': [11]}), ['b-0'], 3).findings() == []


def test_a_bucket_queued_for_fewer_shards_is_not_told() -> None:
    """Tentacle finds a bucket that lost most of its objects in need of fewer shards (its
    log said so while a load's bucket was emptied): no line was crossed."""
    reader = ScriptedReader({'b-0': [23]}, queue=[[QueuedReshard('b-0', 23, 11)]])
    assert watched(reader, ['b-0'], 2).findings() == []
    # an entry that does not say its shards is taken as one that grows
    reader = ScriptedReader({'b-0': [23]}, queue=[[QueuedReshard('b-0', 23, None)]])
    assert [f.id for f in watched(reader, ['b-0'], 2).findings()] == ['bucket-reshard-queued']


def test_it_reads_every_second_until_it_finds_a_bucket_then_every_five() -> None:
    """The agents make the bucket at its third tick: read at each tick until then, so a
    reshard right after its making is not missed, then once every 5 s."""
    reader = ScriptedReader({'b-0': [None, None, 1, 1, 7]})
    ticks = [100.0, 101.0, 102.0, 103.0, 104.0, 107.0, 108.0, 112.0]
    now = [0.0]
    watch = ReshardWatch(reader, ['b-0'], every_s=5.0, until_found_s=1.0,
                         clock=lambda: now[0])
    assert watch.every_s == 1.0   # its thread's tick
    read_at = []
    for at in ticks:
        before = reader.reads.get('b-0', 0)
        now[0] = at
        watch._tick()
        if reader.reads.get('b-0', 0) > before:
            read_at.append(at)
    assert read_at == [100.0, 101.0, 102.0, 107.0, 112.0]
    (found,) = watch.findings()
    assert found.evidence == ('bucket b-0: 1 -> 7 index shards, 5000 objects at the end',)


def test_the_first_buckets_only_are_read() -> None:
    buckets = ['b-%d' % i for i in range(WATCHED + 3)]
    reader = ScriptedReader({b: [11] for b in buckets})
    watched(reader, buckets, 1)
    assert sorted(reader.reads) == sorted(buckets[:WATCHED])


class FailingReader(ScriptedReader):
    def reshard_queue(self) -> List[QueuedReshard]:
        raise RadosgwAdminError('`radosgw-admin reshard list` failed (5): no message')


def test_a_reading_that_fails_leaves_the_others() -> None:
    reader = FailingReader({'b-0': [11, 13]})
    watch = ReshardWatch(reader, ['b-0'], every_s=3600)
    with pytest.raises(RadosgwAdminError):
        watch._read()   # a tick: Periodic logs it
    with watch:          # its exit's reading fails the same way, quietly
        pass
    (found,) = watch.findings()
    assert found.evidence == ('bucket b-0: 11 -> 13 index shards, 2000 objects at the end',)


class Tools:
    """The mgr's tool_exec, answering from a script."""

    def __init__(self, answers: List[Tuple[int, str, str]]) -> None:
        self.answers = answers
        self.argvs: List[List[str]] = []

    def get_ceph_conf_path(self) -> str:
        return '/etc/ceph/ceph.conf'

    def tool_exec(self, args: List[str], timeout: int = 10,
                  stdin: Optional[bytes] = None) -> Tuple[int, str, str]:
        self.argvs.append(list(args))
        return self.answers.pop(0)


def test_radosgw_admin_reads_shards_and_the_queue() -> None:
    stats = json.dumps({'bucket': 'rgwbench-r-0-0', 'num_shards': 11,
                        'usage': {'rgw.main': {'num_objects': 1200}}})
    # the entries as Pacific 16.2.15 and Tentacle print them, and an earlier release's
    pacific = json.dumps([{'time': '2026-11-29T07:00:00.0Z', 'tenant': '',
                           'bucket_name': 'rgwbench-r-0-0', 'bucket_id': 'x.1',
                           'new_instance_id': '', 'old_num_shards': 11,
                           'tentative_new_num_shards': 23},
                          {'bucket_name': 'rgwbench-r-0-3', 'old_num_shards': 1,
                           'new_num_shards': 7}])
    tentacle = json.dumps([{'time': '2026-11-29T07:00:00.0Z', 'tenant': '',
                            'bucket_name': 'rgwbench-r-0-1', 'bucket_id': 'x.2',
                            'old_num_shards': 23, 'tentative_new_num_shards': 11,
                            'initiator': 'dynamic resharding'},
                           {'bucket_name': 'rgwbench-r-0-2'}])
    tools = Tools([(0, stats, ''), (-2002, '', 'could not get bucket info (2002)'),
                   (0, pacific, ''), (0, tentacle, ''), (0, '[]', ''), (0, 'not json', '')])
    admin = RadosgwAdmin(tools)
    assert admin.bucket_shards('rgwbench-r-0-0') == BucketShards('rgwbench-r-0-0', 11, 1200)
    assert admin.bucket_shards('rgwbench-r-0-1') is None
    assert admin.reshard_queue() == [QueuedReshard('rgwbench-r-0-0', 11, 23),
                                     QueuedReshard('rgwbench-r-0-3', 1, 7)]
    queued = admin.reshard_queue()
    assert queued == [QueuedReshard('rgwbench-r-0-1', 23, 11),
                      QueuedReshard('rgwbench-r-0-2', None, None)]
    assert [e.reduces for e in queued] == [True, False]
    assert admin.reshard_queue() == []
    with pytest.raises(RadosgwAdminError, match='printed no list'):
        admin.reshard_queue()
    assert [a[a.index('/dev/null') + 1:] for a in tools.argvs] == [
        ['bucket', 'stats', '--bucket', 'rgwbench-r-0-0'],
        ['bucket', 'stats', '--bucket', 'rgwbench-r-0-1'],
        ['reshard', 'list'], ['reshard', 'list'], ['reshard', 'list'], ['reshard', 'list']]


def test_a_run_keeps_a_reshard_with_its_variant_and_workload(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate, checks=checks_on(roomy(FakeView())))
    readers: List[ScriptedReader] = []

    def new_watch(buckets: List[str]) -> ReshardWatch:
        # the second workload's bucket is resharded under it
        reader = ScriptedReader({b: [11] if not readers else [11, 23] for b in buckets})
        readers.append(reader)
        return ReshardWatch(reader, buckets, every_s=0.2)
    s.engine.agents = replace(s.engine.agents, new_reshard_watch=new_watch)
    run_id = s.engine.start(s.profile(baseline='a', variants=[{'name': 'a', 'settings': {}}],
                                      workloads=[{'name': 'put-1', 'op': 'put', 'size': '4KiB',
                                                  'concurrency': 2, 'duration': 1,
                                                  'warmup': 0, 'rate': 20},
                                                 {'name': 'put-2', 'op': 'put', 'size': '4KiB',
                                                  'concurrency': 2, 'duration': 1,
                                                  'warmup': 0, 'rate': 20}]))
    s.engine.wait(180)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    assert len(readers) == 2 and all(r.reads for r in readers)
    found = [f for f in record['findings'] if f['id'].startswith('bucket-')]
    assert [(f['id'], f['variant'], f['workload']) for f in found] == [
        ('bucket-resharded', 'a', 'put-2')]
    assert found[0]['evidence'][0].startswith('bucket rgwbench-%s-0-0: 11 -> 23 index shards'
                                              % run_id)


# -- before: whether a workload may write past the line -----------------------------------

def likely(view: FakeView, *workloads: Workload, load: bool = False) -> List[Finding]:
    found = findings(view, load_profile(workloads[0], None) if load else Profile(
        name='p', description='', baseline='a', variants=[Variant('a')],
        workloads=list(workloads)), load=load)
    return [f for f in found if f.id == 'bucket-reshard-likely']


def test_an_open_loop_past_the_line_is_told_with_enough_buckets() -> None:
    put = Workload(name='put', size='4KiB', rate=5000.0, duration_s=295.0, warmup_s=5.0)
    (found,) = likely(FakeView(), put)
    assert found.level == Level.info and found.workload == 'put'
    assert found.evidence == (
        "workload put: about 1500000 objects per bucket (1500000 in all over 1 bucket), past "
        "the 1100000 at which RGW reshards a bucket: rgw_max_objs_per_shard 100000 x 11 "
        "index shards (a new bucket's, unless the zonegroup says otherwise)",)
    assert found.fix == 'buckets: 2 in workload put'
    assert likely(FakeView(), replace(put, buckets=2)) == []
    (load,) = likely(FakeView(), put, load=True)
    assert load.fix == '--buckets 2' and load.evidence[0].startswith('the load: about')


def test_the_line_follows_rgws_options() -> None:
    view = FakeView().set('client.rgw', 'rgw_max_objs_per_shard', '1000')
    view.set('client.rgw', 'rgw_override_bucket_index_max_shards', '3')
    put = Workload(name='put', size='4KiB', rate=20.0, duration_s=195.0, warmup_s=5.0)
    (found,) = likely(view, put)
    assert found.evidence[0].endswith('past the 3000 at which RGW reshards a bucket: '
                                      'rgw_max_objs_per_shard 1000 x 3 index shards '
                                      '(rgw_override_bucket_index_max_shards)')
    assert likely(view.set('global', 'rgw_dynamic_resharding', 'false'), put) == []


def test_a_prefill_counts_exactly_and_a_closed_loop_as_a_bound() -> None:
    get = Workload(name='get', op='get', size='4KiB', objects=2000000)
    (found,) = likely(FakeView(), get)
    assert found.evidence[0].startswith('workload get: about 2000000 objects per bucket')
    # each request at least 1 ms and its 4 KiB at 1 GiB/s: 16 in flight for 65 s write
    # at most 1036047 objects, under the line; 32 twice that
    assert likely(FakeView(), Workload(name='put', size='4KiB')) == []
    (found,) = likely(FakeView(), Workload(name='put', size='4KiB', concurrency=32))
    assert found.evidence[0].startswith(
        'workload put: up to 2072095 objects per bucket (2072095 in all over 1 bucket; '
        'closed loop: if every request took 1.00381 ms), past the 1100000')
