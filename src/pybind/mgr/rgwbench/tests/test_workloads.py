"""One workload on agents: the job a workload makes, and what running it once leaves."""
import errno
import json
import logging
import re
import socket
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

from fixtures import MemoryStore
from rgwbench.agents.channel import AgentChannel
from rgwbench.errors import InvalidInput, RGWBenchError
from rgwbench.loadgen.workload import Job
from rgwbench.runs.loads import LoadRequest
from rgwbench.profiles import Workload, parse_profile
from rgwbench.cluster.sampled_daemons import ServerDaemons
from rgwbench.settings.registry import all_settings
from rgwbench.tests.s3stub import StubS3
from rgwbench.agents.workload_runs import AgentWorkloads, Leftovers, make_job, new_id

CREDS = {'access_key': 'AK', 'secret_key': 'SK'}


def test_every_field_a_workload_sets_reaches_the_job() -> None:
    workload = Workload(name='w', op='mixed', mix={'get': 3.0, 'put': 1.0}, size='64KiB',
                        concurrency=32, duration_s=20.0, warmup_s=3.0, processes=4,
                        buckets=5, payload_signing='signed')
    job = make_job(workload, creds=CREDS, endpoints=['http://h:80', 'http://h2:80'],
                   bucket_prefix='p', run_tag='t', sse={'sse_kms_key_id': 'k1'})
    for field, value in workload.job_fields().items():
        assert getattr(job, field) == value, field
    assert (job.targets[0], job.bucket_prefix, job.run_tag, job.sse_kms_key_id) == (
        'http://h:80', 'p', 't', 'k1')
    assert job.endpoints == ['http://h:80', 'http://h2:80']


def test_a_job_the_engine_refuses_names_the_workload() -> None:
    with pytest.raises(InvalidInput, match='workload w: '):
        make_job(Workload(name='w', op='put', concurrency=2, processes=3), creds=CREDS,
                 endpoints=['http://h:80'], bucket_prefix='p', run_tag='t')


def test_one_signing_mode_for_every_variant_of_a_run_over_http_and_https() -> None:
    """RGW checks a signed body's SHA-256: a TLS delta must not include that cost."""
    profile = parse_profile({'name': 'p', 'variants': [
        {'name': 'plain', 'settings': {}},
        {'name': 'tls', 'settings': {'tls@rgw': 'on'}}],
        'workloads': [{'op': 'put', 'size': '4KiB'}]}, all_settings())
    (workload,) = profile.workloads
    jobs = [make_job(workload, creds=CREDS, endpoints=[url], bucket_prefix='b', run_tag='t')
            for url in ('http://h:80', 'https://h:443')]
    assert [j.payload_signing for j in jobs] == ['unsigned', 'unsigned']
    signed = parse_profile({'name': 'p', 'variants': [{'name': 'a', 'settings': {}}],
                            'workloads': [{'op': 'put', 'payload_signing': 'signed'}]},
                           all_settings())
    assert signed.workloads[0].payload_signing == 'signed'
    with pytest.raises(InvalidInput, match=r'workloads\[0\].payload_signing: .*auto'):
        parse_profile({'name': 'p', 'variants': [{'name': 'a', 'settings': {}}],
                       'workloads': [{'op': 'put', 'payload_signing': 'auto'}]},
                      all_settings())


def test_a_load_signs_as_a_run_does() -> None:
    job = make_job(LoadRequest.of().workload, creds=CREDS, endpoints=['http://h:80'],
                   bucket_prefix='p', run_tag='t')
    assert job.payload_signing == 'unsigned'


def test_ids_say_when_and_differ() -> None:
    ids = {new_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(re.match(r'^\d{8}-\d{6}-[0-9a-f]{6}$', i) for i in ids)


def free_port() -> int:
    """A loopback port nothing listens on (a killed RGW's)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


class FailingLauncher:
    started_by = 'mgr-process'
    samplers: Sequence[str] = ()

    def agent_ids(self) -> List[str]:
        return ['h1']

    def leftovers(self) -> Dict[str, Any]:
        return {}


def run_failing_agents(job: Job, leftovers: Leftovers) -> Dict[str, Any]:
    """Running `job` once on agents that never start; what the clean-up did."""
    leftovers.write({'id': 'x'}, FailingLauncher(), job)  # type: ignore[arg-type]
    watched: List[Optional[object]] = []
    cleaned: Dict[str, Any] = {}

    def broken_channel() -> Any:
        raise OSError('no port')
    agents = AgentWorkloads(make_channel=broken_channel, server_daemons=ServerDaemons,
                            log=logging.getLogger('test'))
    with pytest.raises(OSError):
        agents.run_once(job, FailingLauncher(), ca_pem=None,  # type: ignore[arg-type]
                        leftovers=leftovers, watch=watched.append, cleaned=cleaned)
    assert watched[-1] is None
    return cleaned


def test_running_once_cleans_up_through_the_first_rgw_that_answers_and_clears_its_record(
        ) -> None:
    store = MemoryStore()
    leftovers = Leftovers(store, 'k')
    with StubS3(access_key='AK', secret_key='SK') as stub:
        stub.buckets['rgwbench-x-0'] = {}   # made before the agents failed
        dead = 'http://127.0.0.1:%d' % free_port()
        job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=[dead, stub.url],
                       bucket_prefix='rgwbench-x', run_tag='x')
        cleaned = run_failing_agents(job, leftovers)
        assert cleaned == {'objects_deleted': 0, 'buckets_deleted': 1}, cleaned
        assert stub.buckets == {}
    assert store.get_store_prefix('k') == {} and leftovers.pending() == []


def test_a_clean_up_no_rgw_answers_stays_written_down_to_be_tried_again() -> None:
    store = MemoryStore()
    leftovers = Leftovers(store, 'k')
    dead = ['http://127.0.0.1:%d' % free_port() for _ in range(2)]
    job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=dead,
                   bucket_prefix='rgwbench-x', run_tag='x')
    cleaned = run_failing_agents(job, leftovers)
    assert 'connection refused' in cleaned['error'] and dead[1] in cleaned['error'], cleaned
    (pending,) = leftovers.pending()
    assert pending['bucket_prefix'] == 'rgwbench-x' and pending['errors'] == [cleaned['error']]
    # The serve loop's next try, once an RGW answers again: the buckets go, the record too.
    with StubS3(access_key='AK', secret_key='SK') as stub:
        stub.buckets['rgwbench-x-0'] = {}
        left = json.loads(store.get_store('k/rgwbench-x') or '{}')
        store.set_store('k/rgwbench-x', json.dumps(dict(left, endpoints=[dead[0], stub.url])))
        (found,) = leftovers.remove(lambda service: None, CREDS, logging.getLogger('test'))
        assert found.errors == [] and stub.buckets == {}
    assert leftovers.pending() == [] and store.get_store_prefix('k') == {}


class VanishingLauncher:
    """An agents' service whose one agent is gone at once: the agents' run ends early."""
    started_by = 'orchestrator'
    samplers: Sequence[str] = ()

    def __init__(self) -> None:
        self.removed = False

    def agent_ids(self) -> List[str]:
        return ['h1']

    def launch(self, config: Dict[str, Any]) -> None:
        pass

    def problem(self, agent: str) -> Optional[str]:
        return 'agent container on h1 is error'

    def remove(self) -> None:
        self.removed = True

    def leftovers(self) -> Dict[str, Any]:
        return {'service': 'container.rgwbench-agent'}


def test_a_record_kept_for_its_buckets_drops_the_agents_the_run_removed_itself(
        certificate: Tuple[str, str]) -> None:
    store = MemoryStore()
    leftovers = Leftovers(store, 'k')
    dead = ['http://127.0.0.1:%d' % free_port()]
    job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=dead,
                   bucket_prefix='rgwbench-x', run_tag='x')
    launcher = VanishingLauncher()
    leftovers.write({'id': 'x'}, launcher, job)
    agents = AgentWorkloads(make_channel=lambda: AgentChannel('127.0.0.1', 0, *certificate),
                            server_daemons=ServerDaemons, log=logging.getLogger('test'))
    summary = agents.run_once(job, launcher, ca_pem=None,
                              leftovers=leftovers, watch=lambda run: None)
    assert summary.agents['h1']['state'] == 'failed' and launcher.removed
    # The buckets are owed (no RGW answered the clean-up), the agents' service is not:
    # a mgr on any host can finish the record.
    (pending,) = leftovers.pending()
    assert pending['agents'] == {} and 'connection refused' in pending['errors'][0]


class UnremovableLauncher(VanishingLauncher):
    """An agents' service the orchestrator fails to remove at the workload's end."""

    def remove(self) -> None:
        raise RuntimeError('remove_service failed: injected by a test')


def test_agents_whose_removal_failed_stay_written_down_after_clean_buckets(
        certificate: Tuple[str, str]) -> None:
    store = MemoryStore()
    leftovers = Leftovers(store, 'k')
    with StubS3(access_key='AK', secret_key='SK') as stub:
        job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=[stub.url],
                       bucket_prefix='rgwbench-x', run_tag='x')
        launcher = UnremovableLauncher()
        leftovers.write({'id': 'x'}, launcher, job)
        agents = AgentWorkloads(
            make_channel=lambda: AgentChannel('127.0.0.1', 0, *certificate),
            server_daemons=ServerDaemons, log=logging.getLogger('test'))
        with pytest.raises(RuntimeError, match='remove_service failed'):
            agents.run_once(job, launcher, ca_pem=None, leftovers=leftovers,
                            watch=lambda run: None)
        assert stub.buckets == {}  # the buckets went
    # The service did not: the serve loop's next try removes it, and the buckets are not
    # tried again.
    (pending,) = leftovers.pending()
    assert pending['agents'] == {'service': 'container.rgwbench-agent'}
    assert pending['errors'] == ['its agents were not removed'] and pending['ended']
    removed: List[str] = []
    (found,) = leftovers.remove(removed.append, None, logging.getLogger('test'))
    assert found.errors == [] and removed == ['container.rgwbench-agent']
    assert leftovers.pending() == [] and store.get_store_prefix('k') == {}


def test_buckets_held_for_the_run_stay_until_released_or_a_new_mgr_removes_them() -> None:
    store = MemoryStore()
    log = logging.getLogger('test')
    with StubS3(access_key='AK', secret_key='SK') as stub:
        job = make_job(Workload(name='w', op='get', buckets=1, objects=4), creds=CREDS,
                       endpoints=[stub.url], bucket_prefix='rgwbench-r-p0', run_tag='x')
        stub.buckets['rgwbench-r-p0-0'] = {}
        leftovers = Leftovers(store, 'k')
        leftovers.write({'id': 'r'}, FailingLauncher(), job)  # type: ignore[arg-type]
        leftovers.ended({'kept': 'for the run'}, agents_removed=True, held=True)
        # The serve loop leaves what the run holds for its later variants.
        assert leftovers.pending() == [] and leftovers.remove(lambda name: None, CREDS,
                                                              log) == []
        assert store.get_store_prefix('k') and 'rgwbench-r-p0-0' in stub.buckets
        # A mgr that took over after a failover holds nothing: it removes them.
        (found,) = Leftovers(store, 'k').remove(lambda name: None, CREDS, log)
        assert found.errors == [] and stub.buckets == {}
        assert store.get_store_prefix('k') == {}
        # The run releases what it held once it removed the buckets itself.
        leftovers.write({'id': 'r'}, FailingLauncher(), job)  # type: ignore[arg-type]
        leftovers.ended({'kept': 'for the run'}, agents_removed=True, held=True)
        leftovers.release('rgwbench-r-p0', {'buckets_removed': ['rgwbench-r-p0-0']})
        assert store.get_store_prefix('k') == {}
        # ... or keeps the record, with why, for the serve loop when it could not.
        leftovers.write({'id': 'r'}, FailingLauncher(), job)  # type: ignore[arg-type]
        leftovers.ended({'kept': 'for the run'}, agents_removed=True, held=True)
        leftovers.release('rgwbench-r-p0', {'error': 'no RGW answered'})
        (pending,) = leftovers.pending()
        assert pending['errors'] == ['no RGW answered'] and pending['ended']


def test_released_buckets_whose_agents_were_not_removed_stay_for_the_serve_loop() -> None:
    # The orchestrator failed the agents' removal while the run held the buckets:
    # releasing them once they are removed must not forget the agents' service.
    store = MemoryStore()
    log = logging.getLogger('test')
    with StubS3(access_key='AK', secret_key='SK') as stub:
        job = make_job(Workload(name='w', op='get', buckets=1, objects=4), creds=CREDS,
                       endpoints=[stub.url], bucket_prefix='rgwbench-r-p0', run_tag='x')
        leftovers = Leftovers(store, 'k')
        leftovers.write({'id': 'r'}, UnremovableLauncher(), job)
        leftovers.ended({'kept': 'for the run'}, agents_removed=False, held=True)
        assert leftovers.pending() == []  # held: the run goes on with it
        leftovers.release('rgwbench-r-p0', {'buckets_removed': ['rgwbench-r-p0-0']})
        (pending,) = leftovers.pending()
        assert pending['agents'] == {'service': 'container.rgwbench-agent'}
        assert pending['errors'] == ['its agents were not removed'] and pending['ended']
        removed: List[str] = []
        (found,) = leftovers.remove(removed.append, CREDS, log)
        # the buckets are not tried again: the run removed them
        assert found.errors == [] and removed == ['container.rgwbench-agent']
        assert 'cleanup' not in found.record
        assert leftovers.pending() == [] and store.get_store_prefix('k') == {}


class BucketAdminStub:
    """radosgw-admin's bucket removal: buckets with their object counts; it may refuse."""

    def __init__(self, buckets: Dict[str, int], refuse: str = '') -> None:
        self.buckets = buckets
        self.refuse = refuse

    def remove_bucket(self, bucket: str) -> Optional[int]:
        if self.refuse:
            raise InvalidInput(self.refuse)
        return self.buckets.pop(bucket, None)


def test_buckets_go_through_radosgw_admin_first_and_over_s3_when_it_refuses() -> None:
    dead = 'http://127.0.0.1:%d' % free_port()
    job = make_job(Workload(name='w', buckets=2), creds=CREDS, endpoints=[dead],
                   bucket_prefix='rgwbench-x', run_tag='x')
    admin = BucketAdminStub({'rgwbench-x-0': 7, 'rgwbench-x-1': 3, 'rgwbench-y-0': 1})
    agents = AgentWorkloads(make_channel=lambda: None, server_daemons=ServerDaemons,
                            log=logging.getLogger('test'), bucket_admin=admin)
    # No RGW answers: all of it was done by radosgw-admin.
    assert agents.clean_up(job, None, aborted=False) == {
        'objects_deleted': 10, 'buckets_deleted': 2, 'space_freed': 'at once'}
    assert admin.buckets == {'rgwbench-y-0': 1}
    refusing = AgentWorkloads(make_channel=lambda: None, server_daemons=ServerDaemons,
                              log=logging.getLogger('test'),
                              bucket_admin=BucketAdminStub({}, refuse='multisite'))
    with StubS3(access_key='AK', secret_key='SK') as stub:
        stub.buckets['rgwbench-x-0'] = {}
        job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=[stub.url],
                       bucket_prefix='rgwbench-x', run_tag='x')
        assert refusing.clean_up(job, None, aborted=False) == {
            'objects_deleted': 0, 'buckets_deleted': 1, 'admin_error': 'multisite'}
        assert stub.buckets == {}


def test_buckets_written_with_sse_s3_go_over_s3_where_rgw_removes_their_keys() -> None:
    admin = BucketAdminStub({'rgwbench-x-0': 7})
    agents = AgentWorkloads(make_channel=lambda: None, server_daemons=ServerDaemons,
                            log=logging.getLogger('test'), bucket_admin=admin)
    with StubS3(access_key='AK', secret_key='SK') as stub:
        stub.buckets['rgwbench-x-0'] = {}
        job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=[stub.url],
                       bucket_prefix='rgwbench-x', run_tag='x', sse={'sse_s3': True})
        assert agents.clean_up(job, None, aborted=False) == {
            'objects_deleted': 0, 'buckets_deleted': 1}
        assert stub.buckets == {} and admin.buckets == {'rgwbench-x-0': 7}
    # No RGW answers: radosgw-admin removes them (the keys stay in the KMS).
    dead = 'http://127.0.0.1:%d' % free_port()
    job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=[dead],
                   bucket_prefix='rgwbench-x', run_tag='x', sse={'sse_s3': True})
    assert agents.clean_up(job, None, aborted=False) == {
        'objects_deleted': 7, 'buckets_deleted': 1, 'space_freed': 'at once'}
    assert admin.buckets == {}


def test_leftovers_a_new_mgr_finds_go_the_way_its_workloads_remove_buckets() -> None:
    store = MemoryStore()
    admin = BucketAdminStub({'rgwbench-x-0': 5})
    agents = AgentWorkloads(make_channel=lambda: None, server_daemons=ServerDaemons,
                            log=logging.getLogger('test'), bucket_admin=admin)
    dead = 'http://127.0.0.1:%d' % free_port()
    job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=[dead],
                   bucket_prefix='rgwbench-x', run_tag='x')
    Leftovers(store, 'k').write({'id': 'x'}, FailingLauncher(), job)  # type: ignore[arg-type]
    # Another mgr: the record is found and removed through radosgw-admin.
    leftovers = Leftovers(store, 'k', remove_buckets=agents.remove_buckets)
    (found,) = leftovers.remove(lambda service: None, CREDS, logging.getLogger('test'))
    assert found.errors == [] and admin.buckets == {}
    assert found.record['cleanup']['objects_deleted'] == 5
    assert store.get_store_prefix('k') == {}


def test_a_record_the_mon_refuses_raises_and_is_kept_nowhere() -> None:
    # Written before the agents and buckets are made (loads.py, runs/engine.py), so a
    # refusal stops the workload first.
    # Pacific's set_store takes a refused write as done; the record would be in this
    # mgr's memory only, and a failover would leave the agents and buckets behind.
    class RefusingMon(MemoryStore):
        def mon_command(self, cmd_dict: Dict[str, Any],
                        inbuf: Optional[str] = None) -> Tuple[int, str, str]:
            return -errno.EFBIG, '', 'error: entry size limited to 20 bytes'
    store = RefusingMon()
    job = make_job(Workload(name='w', buckets=1), creds=CREDS, endpoints=['http://rgw:80'],
                   bucket_prefix='rgwbench-r', run_tag='r')
    with pytest.raises(RGWBenchError) as refused:
        Leftovers(store, 'k').write({'id': 'r'}, FailingLauncher(), job)  # type: ignore
    assert abs(refused.value.errno) == errno.EFBIG and store.data == {}
