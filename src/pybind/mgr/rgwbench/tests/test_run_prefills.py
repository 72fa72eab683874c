"""A run's prefills: written once, read by every variant that stores objects alike."""
from typing import Dict, Iterator, List, Tuple

import pytest
from rgwbench.tests.run_fakes import Setup

from rgwbench.serial import dump
from rgwbench.loadgen.workload import Job
from rgwbench.profiles import Profile, Variant, Workload
from rgwbench.profiles.prefills import RunPrefills, held_at_once, reads_only, storage_of
from rgwbench.tests.s3stub import StubS3

OBJECTS = 40


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key='AK', secret_key='SK').start()
    s.max_log = 10 ** 7   # every request (the GETs of six repeats are many)
    yield s
    s.stop()


def prefill_puts(stub: StubS3, run_id: str) -> Dict[str, int]:
    """PUTs of prefilled objects seen by the stub, by the prefill's bucket prefix."""
    found: Dict[str, int] = {}
    for kind, _, path in stub.log:
        bucket = path.lstrip('/').split('/', 1)[0]
        if kind == 'put' and bucket.startswith('rgwbench-%s-' % run_id):
            prefix = bucket.rsplit('-', 1)[0]
            found[prefix] = found.get(prefix, 0) + 1
    return found


def test_variants_that_store_alike_read_one_prefill_and_the_run_removes_it(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    run_id = s.engine.start(s.profile(
        variants=[{'name': 'as-is', 'settings': {}},
                  {'name': 'secure', 'settings': {'msgr2-secure': 'on'}},
                  {'name': 'threads', 'settings': {
                      'config': {'client.rgw/rgw_thread_pool_size': 128}}}],
        repeats=2,
        workloads=[{'op': 'get', 'size': '4KiB', 'concurrency': 2, 'duration': 1,
                    'warmup': 0, 'objects': OBJECTS}]))
    s.engine.wait(120)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']
    for variant in record['variants']:
        get = variant['workloads'][0]
        assert get['ops'] > 0 and get['errors'] == 0 and get['objects'] == OBJECTS, get
        assert len(get['repeats']) == 2
    # as-is and secure (msgr2 leaves how objects are stored as it is) share one prefill,
    # written once over six repeats; threads (a config option) writes its own, once.
    assert prefill_puts(stub, run_id) == {'rgwbench-%s-p0' % run_id: OBJECTS,
                                          'rgwbench-%s-p1' % run_id: OBJECTS}
    assert [v['workloads'][0]['prefilled_by'] for v in record['variants']] == [
        'as-is', 'as-is', 'threads']
    assert not [b for b in stub.buckets if b.startswith('rgwbench-')], sorted(stub.buckets)
    assert s.engine.leftovers.pending() == []
    assert not s.store.get_store_prefix(s.engine.leftovers.key)


def test_a_prefill_is_removed_once_its_last_reader_ends(
        stub: StubS3, certificate: Tuple[str, str]) -> None:
    s = Setup(stub, certificate)
    run_id = s.engine.start(s.profile(
        variants=[{'name': 'as-is', 'settings': {}},
                  {'name': 'secure', 'settings': {'msgr2-secure': 'on'}}],
        repeats=1,
        workloads=[{'name': 'get-%s' % size, 'op': 'get', 'size': size, 'concurrency': 2,
                    'duration': 1, 'warmup': 0, 'objects': OBJECTS}
                   for size in ('4KiB', '8KiB')]))
    s.engine.wait(120)
    record = dump(s.results.load(run_id))
    assert record['state'] == 'complete', record['error']

    def at(kind: str, prefill: int) -> List[int]:
        prefix = 'rgwbench-%s-p%d-' % (run_id, prefill)
        return [i for i, (k, _, path) in enumerate(stub.log)
                if k == kind and path.lstrip('/').startswith(prefix)]
    # get-4KiB's objects (p0) are read by both variants, then removed before the
    # secure variant's get-8KiB, not held to the variant's end.
    assert at('get', 0) and at('delete_bucket', 0) and at('get', 1)
    assert max(at('get', 0)) < min(at('delete_bucket', 0)) < max(at('get', 1))
    assert [i for i in at('get', 1) if i > min(at('delete_bucket', 0))]
    assert min(at('delete_bucket', 1)) > max(at('get', 1))
    assert not [b for b in stub.buckets if b.startswith('rgwbench-')], sorted(stub.buckets)
    assert s.engine.leftovers.pending() == []


def test_a_workload_that_writes_or_deletes_prefills_for_itself() -> None:
    def workload(op: str, **more: float) -> Workload:
        return Workload(name=op, op=op, size='4KiB', duration_s=1, warmup_s=0,
                        mix=dict(more))
    assert reads_only(workload('get')) and reads_only(workload('head'))
    assert reads_only(workload('mixed', get=0.9, list=0.1))
    assert not reads_only(workload('put'))
    assert not reads_only(workload('delete'))
    assert not reads_only(workload('mixed', get=0.9, put=0.1))


def test_sse_and_config_variants_prefill_their_own() -> None:
    def variant(**settings: object) -> Variant:
        return Variant(name='v', settings=dict(settings))
    assert storage_of(variant(), 0) == 'shared'
    assert storage_of(variant(**{'tls@rgw': 'on', 'rgw-per-host': 2}), 3) == 'shared'
    assert storage_of(variant(**{'tls@ingress': 'on', 'msgr2-secure': 'on'}), 3) == 'shared'
    assert storage_of(variant(sse='kms-testing'), 2) == 'v2'
    assert storage_of(variant(config={'client.rgw/rgw_max_chunk_size': 1 << 20}), 1) == 'v1'


def test_a_prefill_is_reused_only_by_the_same_agents() -> None:
    prefills = RunPrefills('r1')
    get = Workload(name='get-4KiB', op='get', size='4KiB', duration_s=1, warmup_s=0)
    two = prefills.key(get, 'shared', ['h2', 'h1'])
    assert prefills.bucket_prefix(two) == 'rgwbench-r1-p0'
    assert prefills.made(two, Job(bucket_prefix='rgwbench-r1-p0'), 'as-is') == 'as-is'
    assert prefills.made(two, Job(bucket_prefix='rgwbench-r1-p0'), 'tls') == 'as-is'
    assert prefills.get(two) is None   # made, not read yet: a later repeat writes again
    prefills.read(two, 40)
    assert prefills.get(two) is not None and prefills.get(two).objects == 40  # type: ignore
    assert prefills.key(get, 'shared', ['h1', 'h2']) == two
    three = prefills.key(get, 'shared', ['h1', 'h2', 'h3'])
    assert prefills.get(three) is None and prefills.bucket_prefix(three) == 'rgwbench-r1-p1'
    # removed, its buckets' names are never given again
    assert [j.bucket_prefix for j in prefills.done_with(two)] == ['rgwbench-r1-p0']
    own = prefills.key(get, 'v2', ['h1', 'h2'])
    assert prefills.bucket_prefix(own) == 'rgwbench-r1-p1'
    prefills.made(own, Job(bucket_prefix='rgwbench-r1-p1'), 'v2')
    assert prefills.bucket_prefix(three) == 'rgwbench-r1-p2'


def test_the_prefills_a_run_holds_at_once_share_the_room() -> None:
    def profile(*settings: dict, interleaved: bool = False, reads: int = 1) -> Profile:
        return Profile(name='p', description='', baseline='v0',
                       variants=[Variant('v%d' % i, s) for i, s in enumerate(settings)],
                       workloads=[Workload(name='get-%d' % i, op='get', size='4KiB')
                                  for i in range(reads)] +
                       [Workload(name='put', op='put', size='4KiB')],
                       repeats=2, order='interleaved' if interleaved else 'sequential')
    config = {'config': {'client.rgw/rgw_thread_pool_size': 256}}
    assert held_at_once(profile({}, {'tls@rgw': 'on'})) == 1
    assert held_at_once(profile({}, {'tls@rgw': 'on'}, reads=3)) == 3
    # one at a time: the shared one is removed after its last reader ...
    assert held_at_once(profile({}, config, {'sse': 'kms-testing'})) == 1
    # ... unless a variant's own comes before a later reader of the shared one
    assert held_at_once(profile({}, config, {'tls@rgw': 'on'})) == 2
    # ... or every variant's own, read again round after round
    assert held_at_once(profile({}, config, {'sse': 'kms-testing'}, interleaved=True)) == 3
    assert held_at_once(profile(config, interleaved=True, reads=0)) == 1
    # variants that each prefill their own, none shared: each removed after its reader
    assert held_at_once(profile(config)) == 1
    assert held_at_once(profile(config, {'sse': 'kms-testing'}, reads=2)) == 1
