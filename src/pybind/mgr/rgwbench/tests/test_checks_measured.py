"""Findings a workload's own figures give: the error rate, agents that were the limit."""
from dataclasses import replace
from typing import Any, Dict

from rgwbench.checks.finding import Level
from rgwbench.checks.measured import measured_findings
from rgwbench.loadgen.workload import Job


def result(ops: int = 1000, errors: int = 0, cpu: float = 1.0, elapsed: float = 10.0,
           processes: int = 1, **extra: Any) -> Dict[str, Any]:
    return dict(ops=ops, errors=errors, client_cpu_s=cpu, elapsed_s=elapsed,
                processes=processes, **extra)


def test_a_quiet_workload_has_no_finding() -> None:
    assert measured_findings({'h1': result(), 'h2': result(errors=1)}) == []
    assert measured_findings({}) == []


def test_more_than_a_thousandth_of_requests_failing_skews() -> None:
    (found,) = measured_findings({
        'h1': result(ops=900, errors=3, errors_by_class={'503': 3}),
        'h2': result(ops=1000)})
    assert found.id == 'error-rate' and found.level == Level.skews
    assert found.evidence[0] == '3 of 1903 requests failed (0.16 %)'
    assert found.evidence[1:] == ('agent h1: 3 503',)


def test_an_agent_whose_processes_were_busy_is_named() -> None:
    found = measured_findings({
        'h1': result(cpu=9.0, elapsed=10.0),                  # 0.9 of its one core
        'h2': result(cpu=9.0, elapsed=10.0, processes=2),     # 0.45 of each of two
        'h3': result(cpu=17.0, elapsed=10.0, processes=2)})   # 0.85 of each of two
    (busy,) = found
    assert busy.id == 'client-bound-agent' and busy.level == Level.skews
    assert busy.evidence == ('agent h1: 0.90 cores for 1 engine process over 10 s',
                             'agent h3: 1.70 cores for 2 engine processes over 10 s')
    assert 'processes 0' in busy.fix


def test_an_agent_that_only_sampled_is_never_named_client_bound() -> None:
    # It sent no load: whatever it waited for did not skew the load.
    assert measured_findings({
        'h1': result(cpu=0.1, elapsed=10.0),
        'h2': dict(result(cpu=0.2, elapsed=10.0, client_wait_s=9.0), sample_only=True)}) == []


def test_an_agent_that_waited_for_a_core_is_named_though_it_used_little() -> None:
    # A CPU quota or a host busy with other work: the engine was runnable, not running.
    (busy,) = measured_findings({
        'h1': result(cpu=0.5, elapsed=10.0, client_wait_s=8.0),   # 0.85 of its core wanted
        'h2': result(cpu=0.5, elapsed=10.0, client_wait_s=2.0),   # 0.25: it had its core
        # waiting on RGW most of the time, and for a core 0.68 of it (a 5 % quota)
        'h3': result(cpu=0.3, elapsed=8.0, client_wait_s=5.5)})
    assert busy.id == 'client-bound-agent'
    assert busy.evidence == ('agent h1: 0.05 cores for 1 engine process over 10 s, and its threads '
                             '8.0 s waiting for a core',
                             'agent h3: 0.04 cores for 1 engine process over 8 s, and its threads '
                             '5.5 s waiting for a core')
    assert 'CPU quota' in busy.fix


def test_a_prefill_whose_time_ran_out_is_told_with_what_it_wrote() -> None:
    job = Job(objects=1000, prefill_s=30.0)
    wrote = {'h1': result(objects=300, working_set_bytes=300 << 20),
             'h2': result(objects=200, working_set_bytes=200 << 20),
             'h3': result(sample_only=True)}
    (found,) = measured_findings(wrote, job)
    assert found.id == 'prefill-time-ran-out' and found.level == Level.info
    assert found.evidence == ('500 of 1000 objects written in 30 s (500.0 MiB read by the '
                              'GETs)',)
    # every object written, or no time bound: nothing to tell
    assert measured_findings(wrote, replace(job, objects=500)) == []
    assert measured_findings(wrote, replace(job, prefill_s=0.0)) == []


def test_an_open_loop_agent_that_fell_behind_its_rate_is_named() -> None:
    found = measured_findings({
        'h1': result(ops=1500, elapsed=20.0, mode='open', rate=75.0),   # all it was due
        'h2': result(ops=1350, elapsed=20.0, mode='open', rate=75.0),   # 90 %
        'h3': result(ops=800, elapsed=20.0, mode='open', rate=75.0),    # 53 %
        'h4': result(ops=10, elapsed=20.0, mode='closed', rate=None),
        'h5': dict(result(ops=0, elapsed=20.0, mode='open', rate=75.0), sample_only=True)})
    (behind,) = found
    assert behind.id == 'rate-not-held' and behind.level == Level.info
    assert behind.evidence == ('agent h3: 800 of 1500 requests due at 75 ops/s in 20 s (53 %)',)
    assert 'lower rate' in behind.fix


def test_an_open_loop_target_that_fell_behind_its_share_is_named() -> None:
    # 90 % of the agent's due requests sent, but one of its three targets got 80 % of its
    # share: that RGW did not keep up, and its figures are of a queue.
    def target(url: str, ops: int) -> Dict[str, Any]:
        return {'url': url, 'workers': 6, 'ops': ops, 'errors': 0}
    targets = [target('https://a', 500), target('https://b', 450), target('https://c', 400)]
    (behind,) = measured_findings({
        'h1': result(ops=1350, elapsed=20.0, mode='open', rate=75.0, concurrency=18,
                     targets=targets)})
    assert behind.id == 'rate-not-held'
    assert behind.evidence == ('agent h1, target https://c: 400 of 500 requests due at '
                               '25 ops/s in 20 s (80 %)',)
    # Every target at 90 % of its share or more: nothing to tell.
    held = [target('https://a', 500), target('https://b', 450), target('https://c', 450)]
    assert measured_findings({'h1': result(ops=1400, elapsed=20.0, mode='open', rate=75.0,
                                           concurrency=18, targets=held)}) == []


def test_an_open_loop_window_too_short_to_be_due_a_request_is_not_named() -> None:
    assert measured_findings({'h1': result(ops=0, elapsed=0.0, mode='open', rate=10.0)}) == []
