import json
import os
import secrets
import socket
import subprocess
import tempfile
import threading
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional

import orchestrator
import pytest
from fixtures import MemoryStore
from rgwbench.tests.run_fakes import BlockingLauncher, load_ended, load_service

from rgwbench.results.model import LoadRecord
from rgwbench.results.store import KEEP_LOADS, MAX_VALUE, LoadStore
from rgwbench.serial import dump, load
from rgwbench.cluster.credentials import CredentialStore, parse_credentials
from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.agents.launchers import LocalLauncher, NotReachable, processes_in, remove_leftovers
from rgwbench.loadgen.histogram import Histogram, bucket_bounds
from rgwbench.loadgen.workload import Job
from rgwbench.runs.loads import (LEFTOVERS_KEY, LoadRequest, LoadService, load_request,
                                 load_to_text)
from rgwbench.agents.workload_runs import make_job


def service(store: MemoryStore, endpoints: List[str],
            gate: Optional[threading.Event] = None) -> LoadService:
    def no_channel() -> Any:
        if gate is not None:
            gate.wait(10)
        raise RuntimeError('no channel in this test')
    return load_service(store, endpoints, lambda placement: BlockingLauncher(), no_channel)


class TooFull:
    """A capacity check that refuses the start when a prefill is to come."""

    def __init__(self, in_flight_bytes: int, prefill_bytes: int, open_ended: bool) -> None:
        self.prefill_bytes = prefill_bytes

    def before_start(self) -> Optional[str]:
        return 'osd.0 is 70.0 % full' if self.prefill_bytes else None

    def problem(self) -> Optional[str]:
        return None


def test_a_load_whose_prefill_would_pass_the_guard_launches_no_agent() -> None:
    store = MemoryStore()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    launched: List[Dict[str, Any]] = []

    class Launcher(BlockingLauncher):
        def launch(self, config: Dict[str, Any]) -> None:
            launched.append(config)

    def no_channel() -> Any:
        raise AssertionError('the agents\' channel is opened only for agents that run')
    loads = load_service(store, ['http://127.0.0.1:1'], lambda placement: Launcher(),
                         no_channel)
    loads.agents = replace(loads.agents, new_capacity_check=TooFull)
    load_id = loads.start(LoadRequest.of(op='get', size='64MiB', objects=16))
    assert load_ended(loads)
    shown = dump(loads.show(load_id))
    assert shown['state'] == 'failed' and launched == []
    assert shown['stopped'] == shown['error'] == 'capacity: not started: osd.0 is 70.0 % full'


def test_credentials_parse() -> None:
    assert parse_credentials('access_key: A\nsecret_key: S\n') == {
        'access_key': 'A', 'secret_key': 'S'}
    assert parse_credentials('{"access_key": "A", "secret_key": "S"}')['secret_key'] == 'S'
    for text, message in [('[1, 2]', 'expected a mapping'),
                          ('access_key: A', 'secret_key is missing'),
                          ('access_key: ""\nsecret_key: S', 'access_key is missing'),
                          ('access_key: A\nsecret_key: S\nx: 1', 'unknown field x'),
                          ('access_key: A\nsecret_key: S\nca_bundle: x', 'not a PEM'),
                          ('{', 'not JSON or YAML')]:
        with pytest.raises(InvalidInput, match=message):
            parse_credentials(text)


def test_credentials_store_never_describes_the_secret() -> None:
    store = MemoryStore()
    creds = CredentialStore(store)
    assert creds.describe() == {'configured': False}
    with pytest.raises(NotFound, match='credentials set'):
        creds.require()
    creds.set('access_key: A\nsecret_key: TOPSECRET\n')
    assert 'TOPSECRET' not in json.dumps(creds.describe())
    assert creds.require()['secret_key'] == 'TOPSECRET'
    assert creds.remove() is True and creds.remove() is False


def stored_load(load_id: str, **result: Any) -> Dict[str, Any]:
    return {'load_id': load_id, 'state': 'complete', 'endpoint': 'http://vm:80',
            'targets': ['http://vm:80'], 'request': LoadRequest.of().stored(),
            'started': 1.0, 'finished': 2.0, 'agents': {'a1': {'state': 'done', 'error': None}},
            'result': dict({'ops': 3, 'errors': 0, 'ops_per_s': 1.5,
                            'throughput_mib_s': 0.1, 'latency_ms': {'mean': 1.0}}, **result),
            'error': None, 'findings': []}


def test_a_load_is_kept_whole_in_chunks_under_the_value_limit() -> None:
    store = MemoryStore()
    # far over one value: its histograms and per-second series are kept all the same
    wide = Histogram()
    wide.record_many(bucket_bounds(index)[0] for index in range(7000))
    big = stored_load('20261128-040000-aaaaaa', histogram=wide.to_dict(),
                      by_op={'get': {'histogram': {'counts': list(range(20000))}}},
                      per_second=[{'t': t, 'ops': t} for t in range(5000)])
    records = LoadStore(store)
    records.save(load(LoadRecord, big))
    assert max(len(v.encode()) for v in store.data.values()) < MAX_VALUE
    assert sum(1 for k in store.data if k.startswith('load_chunk/')) > 1
    shown = records.load(big['load_id'])
    assert shown is not None and dump(shown) == big
    assert [dump(s) for s in records.summaries()] == [{
        'load_id': big['load_id'], 'state': 'complete', 'started': 1.0, 'finished': 2.0,
        'endpoint': 'http://vm:80', 'error': None}]


def test_a_load_stored_before_loads_were_chunked_reads_as_it_was() -> None:
    store = MemoryStore()
    # one JSON value under load/<id>, trimmed of its histograms to fit
    old = dict(stored_load('20261120-100000-bbbbbb', per_second=[{'t': 0, 'ops': 3}]),
               trimmed=True)
    store.set_store('load/' + old['load_id'], json.dumps(old))
    loads = service(store, [])
    assert dump(loads.show(old['load_id'])) == old
    assert dump(loads.show()) == old
    assert [s.load_id for s in loads.list()] == [old['load_id']]
    assert 'ops 3  errors 0  1.5 ops/s' in load_to_text(loads.show())
    # a new one beside it, and only the newest KEEP_LOADS are kept
    records = LoadStore(store)
    for n in range(KEEP_LOADS):
        records.save(load(LoadRecord, stored_load('20261128-0400%02d-cccccc' % n)))
    assert len(records.summaries()) == KEEP_LOADS
    assert records.load(old['load_id']) is None
    assert not any(old['load_id'] in k for k in store.data)


def test_start_checks_before_anything_runs() -> None:
    store = MemoryStore()
    loads = service(store, [])
    with pytest.raises(NotFound, match='credentials'):
        loads.start(LoadRequest.of())
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    with pytest.raises(NotFound, match='no RGW endpoint'):
        loads.start(LoadRequest.of())
    with pytest.raises(InvalidInput, match='http'):
        loads.start(LoadRequest.of(endpoint='s3.example'))
    with pytest.raises(InvalidInput, match="unknown op 'fly'"):
        loads.start(LoadRequest.of(op='fly', endpoint='http://127.0.0.1:1'))
    assert loads.active() is None and store.get_store_prefix('load/') == {}


def test_one_load_at_a_time_and_its_record() -> None:
    store = MemoryStore()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    # Closed ports on loopback: the load's clean-up at its end finds nothing there.
    gate = threading.Event()
    loads = service(store, ['https://127.0.0.1:9', 'http://127.0.0.1:7'], gate)
    load_id = loads.start(LoadRequest.of(duration_s=1.0))
    try:
        with pytest.raises(Busy, match=load_id):
            loads.start(LoadRequest.of())
        active = dump(loads.show())
        assert active['load_id'] == load_id and active['endpoint'] == 'http://127.0.0.1:7'
        assert active['state'] == 'running'
        assert 'load %s: running' % load_id in load_to_text(load(LoadRecord, active))
    finally:
        gate.set()
    deadline = threading.Event()
    for _ in range(100):
        if loads.active() is None:
            break
        deadline.wait(0.1)
    record = dump(loads.show(load_id))
    assert record['state'] == 'failed' and record['finished'] is not None
    assert store.get_store('load/' + load_id) is not None


def test_a_load_goes_to_every_rgw_endpoint_unless_told_where() -> None:
    store, gate = MemoryStore(), threading.Event()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    loads = service(store, ['http://127.0.0.1:7', 'https://127.0.0.1:9', 'http://127.0.0.1:8',
                            'http://127.0.0.1:7'], gate)
    assert loads.default_targets() == ['http://127.0.0.1:7', 'http://127.0.0.1:8']
    assert service(store, ['https://127.0.0.1:9']).default_targets() == ['https://127.0.0.1:9']
    with pytest.raises(InvalidInput, match="^--endpoint: the URLs must all be http:// or all"):
        loads.start(LoadRequest.of(endpoint='http://127.0.0.1:1,https://127.0.0.1:2'))
    try:
        load_id = loads.start(LoadRequest.of(duration_s=1.0))
        record = dump(loads.show(load_id))
        assert record['targets'] == ['http://127.0.0.1:7', 'http://127.0.0.1:8']
        assert record['endpoint'] == 'http://127.0.0.1:7'
        assert 'x16 on http://127.0.0.1:7, http://127.0.0.1:8' in load_to_text(
            load(LoadRecord, record))
    finally:
        gate.set()
    load_ended(loads, 10.0)
    gate.clear()
    try:
        load_id = loads.start(LoadRequest.of(endpoint='http://127.0.0.1:5/, http://127.0.0.1:6'))
        assert dump(loads.show(load_id))['targets'] == ['http://127.0.0.1:5', 'http://127.0.0.1:6']
    finally:
        gate.set()
    load_ended(loads, 10.0)


def test_what_a_load_would_leave_is_written_down_before_it_starts_and_removed_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr('rgwbench.agents.workload_runs.remove_over_s3',
                        lambda job, ca=None: {'objects_deleted': 0, 'buckets_deleted': 1})
    store, gate = MemoryStore(), threading.Event()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    loads = service(store, ['http://127.0.0.1:1'], gate)
    load_id = loads.start(LoadRequest.of(duration_s=5))
    key = '%s/rgwbench-%s' % (LEFTOVERS_KEY, load_id)
    left = json.loads(store.data[key])
    assert left['record']['load_id'] == load_id
    assert left['agents'] == {'service': 'container.rgwbench-agent'}
    assert left['bucket_prefix'] == 'rgwbench-%s' % load_id
    assert 'S' not in json.dumps(left['record']) and '"secret' not in json.dumps(left)
    gate.set()
    load_ended(loads, 20.0)
    assert key not in store.data


def test_a_load_whose_clean_up_reached_no_rgw_keeps_its_state_and_its_buckets_are_retried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, gate = MemoryStore(), threading.Event()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    loads = service(store, ['http://127.0.0.1:1'], gate)   # nothing answers there
    load_id = loads.start(LoadRequest.of(duration_s=5))
    gate.set()
    load_ended(loads, 20.0)
    ended = dump(loads.show(load_id))
    (pending,) = loads.leftovers.pending()
    assert pending['bucket_prefix'] == 'rgwbench-%s' % load_id
    assert 'connection refused' in pending['errors'][0], pending
    deleted: List[str] = []

    def remove_buckets(job: Job, ca: Optional[str]) -> Dict[str, Any]:
        deleted.append(job.bucket_prefix)
        return {}
    monkeypatch.setattr('rgwbench.agents.workload_runs.remove_over_s3', remove_buckets)
    loads.recover(lambda service: None)   # the serve loop's next try
    assert deleted == ['rgwbench-%s' % load_id] and loads.leftovers.pending() == []
    # The load is kept as it ended, not as one a mgr restart cut off.
    assert dump(loads.show(load_id))['state'] == ended['state']
    assert 'mgr restarted' not in (dump(loads.show(load_id)).get('error') or '')


def test_a_new_mgr_removes_what_a_cut_off_load_left(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore()
    record = {'load_id': 'l1', 'state': 'running', 'endpoint': 'http://127.0.0.1:1',
              'request': LoadRequest.of().stored(), 'agents': {}, 'result': None,
              'error': None, 'started': 1.0, 'finished': None}
    store.set_store(LEFTOVERS_KEY, json.dumps({
        'record': record, 'agents': {'service': 'container.rgwbench-agent'},
        'endpoint': 'http://127.0.0.1:1', 'bucket_prefix': 'rgwbench-l1', 'buckets': 1,
        'key_prefix': 'rgwbench/'}))
    removed: List[str] = []
    loads = service(store, [])
    # Without credentials its buckets cannot be removed: the record stays for the next try.
    assert loads.recover(removed.append) == ['l1']
    assert removed == ['container.rgwbench-agent']
    shown = dump(loads.show('l1'))
    assert shown['state'] == 'failed' and 'mgr restarted' in shown['error']
    assert 'tried again every minute' in shown['error']
    assert LEFTOVERS_KEY in store.data
    assert loads.leftovers.pending() == [{
        'bucket_prefix': 'rgwbench-l1', 'agents': {},
        'errors': ['no stored credentials to remove buckets rgwbench-l1* with'],
        'ended': False}]
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    deleted: List[str] = []

    def remove_buckets(job: Job, ca: Optional[str]) -> Dict[str, Any]:
        deleted.append(job.bucket_prefix)
        return {}
    monkeypatch.setattr('rgwbench.agents.workload_runs.remove_over_s3', remove_buckets)
    assert loads.recover(removed.append) == ['l1']
    assert deleted == ['rgwbench-l1'] and LEFTOVERS_KEY not in store.data
    assert dump(loads.show('l1'))['error'].endswith('were removed')
    assert loads.recover(removed.append) == []
    # The service went at the first try: it is not asked for again.
    assert removed == ['container.rgwbench-agent']


def test_leftovers_stay_while_the_orchestrator_does_not_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    key = LEFTOVERS_KEY + '/rgwbench-l2'
    store.set_store(key, json.dumps({
        'record': {'load_id': 'l2'}, 'agents': {'service': 'container.rgwbench-agent'},
        'endpoint': 'http://127.0.0.1:1', 'bucket_prefix': 'rgwbench-l2', 'buckets': 1,
        'key_prefix': 'rgwbench/'}))
    monkeypatch.setattr('rgwbench.agents.workload_runs.remove_over_s3', lambda job, ca: {})

    def not_yet(name: str) -> None:
        raise RuntimeError('orchestrator not available yet')
    loads = service(store, [])
    loads.recover(not_yet)
    assert key in store.data
    gone: List[str] = []
    loads.recover(gone.append)
    assert gone == ['container.rgwbench-agent'] and key not in store.data


def local_agent_left(store: MemoryStore, load_id: str, folder: str, host: str) -> str:
    """The record a local agent on `host` leaves, as its launcher writes it."""
    key = '%s/rgwbench-%s' % (LEFTOVERS_KEY, load_id)
    launcher = LocalLauncher(host)
    launcher.folder = folder
    store.set_store(key, json.dumps({
        'record': {'load_id': load_id, 'request': LoadRequest.of().stored(), 'agents': {},
                   'endpoint': 'http://127.0.0.1:1', 'started': 1.0},
        'agents': launcher.leftovers(), 'endpoint': 'http://127.0.0.1:1',
        'bucket_prefix': 'rgwbench-%s' % load_id, 'buckets': 1, 'key_prefix': 'rgwbench/'}))
    return key


def own_agent_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> str:
    """A folder named as a local agent's, in a temporary folder of the test's own (only
    such a folder is removed as a leftover)."""
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    return str(tmp_path / ('rgwbench-agent-' + secrets.token_hex(6)))


def test_a_local_agent_of_another_host_is_reported_and_its_record_kept(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    store = MemoryStore()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    folder = own_agent_folder(monkeypatch, tmp_path)
    os.mkdir(folder)
    key = local_agent_left(store, 'l3', folder, 'other-host')
    deleted: List[str] = []

    def remove_buckets(job: Job, ca: Optional[str]) -> Dict[str, Any]:
        deleted.append(job.bucket_prefix)
        return {}
    monkeypatch.setattr('rgwbench.agents.workload_runs.remove_over_s3', remove_buckets)
    loads = service(store, [])
    assert loads.recover(lambda name: None) == ['l3']
    assert 'ran on host other-host' in dump(loads.show('l3'))['error']
    assert 'cannot be reached from here' in dump(loads.show('l3'))['error']
    assert os.path.isdir(folder) and key in store.data
    # The buckets are the cluster's: they go at once, and only once.
    assert deleted == ['rgwbench-l3']
    loads.recover(lambda name: None)
    assert deleted == ['rgwbench-l3'] and key in store.data
    # A mgr on that host removes the agent, and the record with it.
    left = json.loads(store.data[key])
    left['agents']['host'] = socket.gethostname()
    store.set_store(key, json.dumps(left))
    assert loads.recover(lambda name: None) == ['l3']
    assert not os.path.exists(folder) and key not in store.data
    assert dump(loads.show('l3'))['error'].endswith('were removed')


def test_a_new_load_keeps_what_an_older_one_left_and_is_never_removed_itself(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, gate = MemoryStore(), threading.Event()
    old = LEFTOVERS_KEY + '/rgwbench-old'
    store.set_store(old, json.dumps({
        'record': {'load_id': 'old'}, 'agents': {}, 'endpoint': 'http://127.0.0.1:1',
        'bucket_prefix': 'rgwbench-old', 'buckets': 1, 'key_prefix': 'rgwbench/'}))
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    loads = service(store, ['http://127.0.0.1:1'], gate)
    load_id = loads.start(LoadRequest.of(duration_s=5))
    assert old in store.data
    deleted: List[str] = []

    def remove_buckets(job: Job, ca: Optional[str]) -> Dict[str, Any]:
        deleted.append(job.bucket_prefix)
        return {}
    monkeypatch.setattr('rgwbench.agents.workload_runs.remove_over_s3', remove_buckets)
    # The serve loop's retry, while the new load goes: only the old one is removed.
    assert loads.recover(lambda name: None) == ['old']
    assert deleted == ['rgwbench-old'] and old not in store.data
    assert '%s/rgwbench-%s' % (LEFTOVERS_KEY, load_id) in store.data
    gate.set()


def test_a_local_agent_left_behind_is_ended_and_its_folder_removed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    folder = own_agent_folder(monkeypatch, tmp_path)
    os.mkdir(folder)
    proc = subprocess.Popen(['sleep', '60'], cwd=folder)
    try:
        assert processes_in(folder) == [proc.pid]
        with pytest.raises(NotReachable, match='ran on host elsewhere, this mgr runs on here'):
            remove_leftovers({'folder': folder, 'host': 'elsewhere'}, lambda name: None,
                             here='here')
        assert proc.poll() is None and os.path.isdir(folder)
        remove_leftovers({'folder': folder, 'host': socket.gethostname()}, lambda name: None)
        assert proc.wait(10) is not None
        assert not os.path.exists(folder) and processes_in(folder) == []
    finally:
        if proc.poll() is None:
            proc.kill()


def test_an_agent_service_left_behind_counts_as_removed_only_when_the_orchestrator_says_so(
        ) -> None:
    def refuse(error: Exception) -> Callable[[str], None]:
        def remove(name: str) -> None:
            raise error
        return remove

    gone = orchestrator.OrchestratorError(
        'Invalid service name "container.rgwbench-agent". View currently running services '
        'using "ceph orch ls"')
    remove_leftovers({'service': 'container.rgwbench-agent'}, refuse(gone))
    # just after a failover the backend's module is not loaded yet
    with pytest.raises(ImportError):
        remove_leftovers({'service': 'container.rgwbench-agent'},
                         refuse(ImportError('Module not found')))
    with pytest.raises(RuntimeError):
        remove_leftovers({'service': 'container.rgwbench-agent'},
                         refuse(RuntimeError('timed out')))


@pytest.mark.parametrize('field, value, message', [
    ('concurrency', 10 ** 6, '--concurrency: must be a whole number from 1 to 4096'),
    ('processes', 10 ** 5, '--processes: must be a whole number from 0 to 64'),
    ('buckets', 10 ** 6, '--buckets: must be a whole number from 1 to 1000'),
    ('size', '150GiB', "--size: '150GiB' is above the 5GiB an object may have here"),
    ('duration', 0, '--duration: must be a positive number of seconds'),
    ('duration', 3601, '--duration: must be at most 3600 seconds'),
    ('warmup', 31, '--warmup: must be 0 to the duration (30) seconds'),
    ('op', 'frobnicate', "--op: 'frobnicate' is not an operation"),
    ('processes', 17, '--processes: 17 processes are more than the concurrency 16'),
    ('rate', 0, '--rate: must be a number of operations a second above 0 and at most 100000'),
    ('objects', 10, '--objects: only a workload that reads (get, head, list, delete or '
                    'mixed) has a working set'),
    ('range', '0-1KiB', '--range: only a workload that GETs (get or mixed) reads a range'),
    ('part_size', '1MiB', "--part-size: must be 5MiB to 5GiB (S3's part sizes), got '1MiB'"),
    ('multipart_threshold', '0', '--multipart-threshold: must be 1B to 5GiB'),
])
def test_a_load_has_the_limits_of_a_profile_workload(
        field: str, value: Any, message: str) -> None:
    words: Dict[str, Any] = dict(op='put', size='4KiB', concurrency=16, processes=1,
                                 duration=30, warmup=2, buckets=1, placement=None,
                                 endpoint=None)
    words[field] = value
    with pytest.raises(InvalidInput) as refused:
        load_request(words)
    assert str(refused.value) == message or str(refused.value).startswith(message)


def test_a_load_within_the_limits_is_taken_as_given() -> None:
    request = load_request(dict(op='get', size='64KiB', concurrency=32, processes=2,
                                duration=10, warmup=1, buckets=3, placement=['h1'],
                                endpoint=None))
    assert request == LoadRequest.of(op='get', size='64KiB', concurrency=32, processes=2,
                                     duration_s=10.0, warmup_s=1.0, buckets=3,
                                     placement=['h1'])


def test_a_load_at_a_rate_over_a_working_set_reaches_the_job() -> None:
    request = load_request(dict(op='get', size='64KiB', concurrency=8, processes=1,
                                duration=10, warmup=1, buckets=1, placement=None,
                                endpoint=None, rate=50, objects=2000, range='0-16KiB',
                                part_size='8MiB', multipart_threshold='32MiB'))
    job = make_job(request.workload, creds={'access_key': 'a', 'secret_key': 's'},
                   endpoints=['http://rgw:80'], bucket_prefix='b', run_tag='t')
    assert (job.rate, job.objects, job.range, job.part_size, job.multipart_threshold) == (
        50.0, 2000, '0-16KiB', '8MiB', '32MiB')
    record = {'load_id': 'l1', 'state': 'complete', 'endpoint': 'http://vm:80', 'agents': {},
              'request': request.stored(), 'error': None,
              'result': {'ops': 500, 'errors': 0, 'ops_per_s': 49.8, 'throughput_mib_s': 0.8,
                         'mode': 'open', 'rate': 50.0, 'objects': 2000,
                         'working_set_bytes': 2000 * 65536, 'range': '0-16KiB',
                         'latency_ms': dict.fromkeys(('mean', 'p50', 'p90', 'p99', 'p999',
                                                      'max'), 1.0)}}
    text = load_to_text(load(LoadRecord, record)).split('\n')
    assert 'open loop at 50 ops/s asked: latency counts from each request\'s intended ' \
        'start' in text
    assert 'working set 2000 objects, 125.0 MiB; ranged GET of bytes 0-16KiB' in text


def test_a_loads_text_names_each_daemon() -> None:
    daemon = {'daemon': 'rgw.foo.vm.abc', 'host': 'vm', 'cpu_cores': 0.42, 'rss_mib': 120.5,
              'rss_mib_max': 121.0}
    record = {'load_id': 'l1', 'state': 'complete', 'endpoint': 'http://vm:80', 'agents': {},
              'request': LoadRequest.of().stored(), 'error': None,
              'result': {'ops': 10, 'errors': 0, 'ops_per_s': 5.0, 'throughput_mib_s': 0.1,
                         'latency_ms': dict.fromkeys(('mean', 'p50', 'p90', 'p99', 'p999',
                                                      'max'), 1.0),
                         'rgw': {'daemons': 1, 'cpu_cores': 0.42, 'rss_mib': 120.5,
                                 'per_daemon': [daemon]}}}
    text = load_to_text(load(LoadRecord, record))
    assert 'rgw: 1 daemons, 0.42 CPU cores, 120.5 MiB RSS' in text
    assert '  rgw.foo.vm.abc on vm: 0.42 CPU cores, 120.5 MiB RSS' in text
    assert 'haproxy' not in text


def test_a_load_that_completed_no_request_still_reads_as_text() -> None:
    # What a one-second load on a starved machine stored (Tentacle's CI): no latency,
    # no CPU figure for a daemon sampled once.
    daemon = {'daemon': 'rgw.foo.vm.abc', 'host': 'vm', 'cpu_cores': None, 'rss_mib': 120.5}
    record = {'load_id': 'l1', 'state': 'complete', 'endpoint': 'http://vm:80', 'agents': {},
              'request': LoadRequest.of().stored(), 'error': None,
              'result': {'ops': 0, 'errors': 0, 'ops_per_s': 0.0, 'throughput_mib_s': 0.0,
                         'latency_ms': dict.fromkeys(('mean', 'p50', 'p90', 'p99', 'p999',
                                                      'min', 'max')),
                         'rgw': {'daemons': 1, 'cpu_cores': None, 'rss_mib': 120.5,
                                 'per_daemon': [daemon]}}}
    text = load_to_text(load(LoadRecord, record)).split('\n')
    assert 'ops 0  errors 0  0.0 ops/s  0.00 MiB/s' in text
    assert 'latency ms: mean -  p50 -  p90 -  p99 -  p99.9 -  max -' in text
    assert 'rgw: 1 daemons, - CPU cores, 120.5 MiB RSS' in text
    assert '  rgw.foo.vm.abc on vm: - CPU cores, 120.5 MiB RSS' in text
