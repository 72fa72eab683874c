"""Several endpoints in one job: connections spread round-robin, figures per target."""
import collections
from typing import Any, Counter, Dict, Iterator, List, Tuple

import pytest

from rgwbench.loadgen import api
from rgwbench.loadgen.cli import build_parser, job_from_args
from rgwbench.loadgen.errors import UsageError
from rgwbench.loadgen.result import merge_results, summary_text
from rgwbench.loadgen.schedule import share
from rgwbench.loadgen.workload import Job
from rgwbench.tests.s3stub import StubS3

URLS = ['http://10.0.0.1:80', 'http://10.0.0.2:80', 'http://10.0.0.3:80']


def job(**kw: Any) -> Job:
    settings: Dict[str, Any] = dict(endpoints=list(URLS), access_key='AK', secret_key='SK')
    settings.update(kw)
    return Job(**settings).validate()


def workers_per_target(jobs: List[Job]) -> List[int]:
    """How many workers of these jobs (as processes split them) go to each URL."""
    found: Counter[str] = collections.Counter()
    for one in jobs:
        for index in range(one.processes):
            first, count = share(one.concurrency, one.processes, index)
            for worker in range(first, first + count):
                found[one.target_of(worker)] += 1
    return [found[url] for url in URLS]


@pytest.mark.parametrize('concurrency,processes,expected', [
    (10, 1, [4, 3, 3]), (10, 3, [4, 3, 3]), (2, 2, [1, 1, 0]), (9, 4, [3, 3, 3])])
def test_workers_go_round_robin_over_the_targets_across_processes(
        concurrency: int, processes: int, expected: List[int]) -> None:
    assert workers_per_target([job(concurrency=concurrency, processes=processes)]) == expected


def test_agents_continue_the_round_robin_where_the_one_before_ended() -> None:
    # Two agents of 5 workers each: 10 workers over 3 targets, not 2+2+1 twice.
    agents = [job(concurrency=5, target_offset=index * 5) for index in range(2)]
    assert workers_per_target(agents) == [4, 3, 3]


def test_a_job_with_one_endpoint_reads_as_before() -> None:
    old = Job.from_dict({'endpoint': 'http://h:80/', 'access_key': 'AK', 'secret_key': 'SK'})
    assert old.targets == ['http://h:80/']
    old.validate()
    assert old.endpoints == ['http://h:80'] and old.endpoint == 'http://h:80'
    new = job()
    assert new.endpoint == URLS[0]
    assert Job.from_dict(new.to_dict()).targets == URLS


@pytest.mark.parametrize('endpoints,message', [
    (['http://a:1', 'https://b:2'], 'must all be http:// or all https://'),
    (['http://a:1', 'http://a:1/'], 'names a URL twice'),
    (['http://a:1', 'ftp://b'], 'must look like http://HOST:PORT'),
    ([], '--endpoint is required')])
def test_bad_endpoint_lists_are_refused(endpoints: List[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        job(endpoints=endpoints)


def test_the_command_line_takes_several_endpoints() -> None:
    args = build_parser().parse_args(['--endpoint', 'http://a:1,http://b:2',
                                      '--endpoint', 'http://c:3'])
    assert job_from_args(args).targets == ['http://a:1', 'http://b:2', 'http://c:3']


def test_per_target_figures_add_up_over_processes_and_hosts() -> None:
    def part(ops: Tuple[int, int], workers: Tuple[int, int]) -> Any:
        return {'targets': [{'url': URLS[i], 'workers': workers[i], 'ops': ops[i],
                             'errors': i} for i in range(2)]}
    merged = merge_results([part((10, 7), (2, 1)), part((5, 6), (1, 2)),
                            {'by_op': {}}])
    assert merged['targets'] == [
        {'url': URLS[0], 'workers': 3, 'ops': 15, 'errors': 0},
        {'url': URLS[1], 'workers': 3, 'ops': 13, 'errors': 2}]
    assert 'targets' not in merge_results([{'by_op': {}}])


@pytest.fixture
def two_stubs() -> Iterator[Tuple[StubS3, StubS3]]:
    """Two S3 servers with one store between them, as two RGWs of one cluster."""
    first = StubS3(access_key='AK', secret_key='SK').start()
    second = StubS3(access_key='AK', secret_key='SK')
    second.buckets, second.uploads, second.lock = first.buckets, first.uploads, first.lock
    second.start()
    yield first, second
    first.stop()
    second.stop()


@pytest.mark.parametrize('processes', [1, 2])
def test_each_target_gets_its_share_and_its_own_figures(
        two_stubs: Tuple[StubS3, StubS3], processes: int) -> None:
    first, second = two_stubs
    res = api.run_job(Job(endpoints=[first.url, second.url], access_key='AK', secret_key='SK',
                          op='put', concurrency=5, processes=processes, duration_s=None,
                          ops=400, proc_stats=False, timeout_s=5.0))
    assert res['ops'] == 400 and res['errors'] == 0
    targets = res['targets']
    assert [t['url'] for t in targets] == [first.url, second.url]
    assert [t['workers'] for t in targets] == [3, 2]
    # what each server saw is what the result says it got
    assert [t['ops'] for t in targets] == [first.counts['put'], second.counts['put']]
    assert sum(t['ops'] for t in targets) == 400
    assert min(t['ops'] for t in targets) > 0
    # every target is checked before the load
    assert first.counts['list_buckets'] == 1 and second.counts['list_buckets'] == 1
    assert res['endpoints'] == [first.url, second.url] and res['endpoint'] == first.url
    assert '%s  workers 2' % second.url in summary_text(res)


def test_a_dead_target_is_named_before_any_load(two_stubs: Tuple[StubS3, StubS3]) -> None:
    first, second = two_stubs
    url = second.url
    second.stop()
    with pytest.raises(Exception, match=url.replace('.', '[.]')):
        api.run_job(Job(endpoints=[first.url, url], access_key='AK', secret_key='SK',
                        op='put', ops=10, duration_s=None, proc_stats=False, timeout_s=2.0))
    assert first.counts['put'] == 0
