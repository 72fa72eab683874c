"""The load engine against a local stub S3 server (real sockets, 127.0.0.1)."""
import itertools
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest


from rgwbench.loadgen import api, prepare
from rgwbench.loadgen.errors import EndpointError
from rgwbench.loadgen.histogram import Histogram, bucket_bounds
from rgwbench.loadgen.measure import Pace
from rgwbench.loadgen.schedule import NS, Schedule, share
from rgwbench.tests.s3stub import StubS3
from rgwbench.loadgen.workload import Job

MS = 1000000


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key="AK", secret_key="SK").start()
    yield s
    s.stop()


def job_for(stub: StubS3, **kw: Any) -> Job:
    settings: Dict[str, Any] = dict(endpoint=stub.url, access_key="AK", secret_key="SK",
                                    proc_stats=False, duration_s=None, concurrency=4,
                                    timeout_s=5.0)
    settings.update(kw)
    return Job(**settings)


def count_above(hist_dict: Dict[str, Any], threshold_ns: int) -> int:
    hist = Histogram.from_dict(hist_dict)
    return sum(n for index, n in hist.counts.items() if bucket_bounds(index)[0] > threshold_ns)


def test_closed_loop_op_counts(stub: StubS3) -> None:
    res = api.run_job(job_for(stub, op="put", ops=300, size="4KiB"))
    assert res["ops"] == 300 and res["errors"] == 0
    assert stub.counts["put"] == 300
    assert stub.counts["list_buckets"] == 1 and stub.counts["create_bucket"] == 1
    assert stub.auth_failures == []
    assert res["bytes"] == 300 * 4096
    assert Histogram.from_dict(res["histogram"]).count == 300
    assert Histogram.from_dict(res["ttfb_histogram"]).count == 300
    assert sum(p["ops"] for p in res["per_second"]) == 300
    assert res["by_op"]["put"]["ops"] == 300
    lat = res["latency_ms"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert res["ttfb_ms"]["p50"] <= lat["p50"] * 1.01
    assert res["client_cpu_s"] > 0 and res["elapsed_s"] > 0
    assert res["ops_per_s"] == pytest.approx(300 / res["elapsed_s"], rel=1e-3)
    assert res["op"] == "put" and res["object_size"] == "4KiB" and res["concurrency"] == 4


def test_ranged_get_reads_the_range_and_verifies_it(stub: StubS3) -> None:
    res = api.run_job(job_for(stub, op="get", ops=50, objects=10, size="64KiB",
                              range="4KiB-12KiB", verify=True))
    assert res["ops"] == 50 and res["errors"] == 0
    assert res["bytes"] == 50 * 8192
    assert set(stub.ranges) == {"bytes=4096-12287"} and len(stub.ranges) == 50
    assert res["range"] == "4KiB-12KiB"
    assert res["objects"] == 10 and res["working_set_bytes"] == 10 * 64 * 1024
    # a corrupted byte inside the range is caught, one outside it is not read
    for objects in stub.buckets.values():
        for obj in objects.values():
            assert obj.data is not None
            obj.data = obj.data[:5000] + bytes([obj.data[5000] ^ 0xFF]) + obj.data[5001:]
    res = api.run_job(job_for(stub, op="get", ops=20, objects=10, size="64KiB",
                              range="4KiB-12KiB", verify=True, prefill=False))
    assert res["errors_by_class"] == {"verify": 20}
    res = api.run_job(job_for(stub, op="get", ops=20, objects=10, size="64KiB",
                              range="8KiB-12KiB", verify=True, prefill=False))
    assert res["ops"] == 20 and res["errors"] == 0


def test_get_prefills_spreads_over_buckets_and_verifies(stub: StubS3) -> None:
    res = api.run_job(job_for(stub, op="get", ops=120, objects=30, buckets=3, verify=True))
    assert res["prefill"]["objects"] == 30
    assert stub.counts["put"] == 30 and stub.counts["get"] == 120
    assert res["ops"] == 120 and res["errors"] == 0 and res["bytes"] == 120 * 4096
    assert sorted(stub.buckets) == ["rgwbench-0", "rgwbench-1", "rgwbench-2"]
    assert [len(v) for _, v in sorted(stub.buckets.items())] == [10, 10, 10]
    # corrupt what the stub holds: a verifying run must notice every GET
    for objects in stub.buckets.values():
        for obj in objects.values():
            assert obj.data is not None
            obj.data = obj.data[:100] + bytes([obj.data[100] ^ 0xFF]) + obj.data[101:]
    res = api.run_job(job_for(stub, op="get", ops=40, objects=30, buckets=3, verify=True,
                              prefill=False))
    assert res["ops"] == 0 and res["errors_by_class"] == {"verify": 40}
    assert "does not match" in res["error_samples"][0]


def test_errors_are_classified_by_status(stub: StubS3) -> None:
    counter = itertools.count(1)

    def hook(kind: str, method: str, path: str) -> Optional[Tuple[int, float]]:
        if kind != "put":
            return None
        n = next(counter)
        if n % 5 == 0:
            return 503, 0.0
        if n % 7 == 0:
            return 500, 0.0
        return None

    stub.fault = hook
    res = api.run_job(job_for(stub, op="put", ops=140))
    assert res["errors_by_class"] == {"http_503": 28, "http_500": 16}
    assert res["errors"] == 44 and res["ops"] == 96
    assert res["by_op"]["put"]["errors"] == 44
    assert sum(p["errors"] for p in res["per_second"]) == 44
    assert any("InjectedFault" in s for s in res["error_samples"])


def test_timeouts_and_dropped_connections(stub: StubS3) -> None:
    counter = itertools.count(1)

    def hook(kind: str, method: str, path: str) -> Optional[Tuple[int, float]]:
        if kind != "put":
            return None
        n = next(counter)
        if n == 3:
            return 0, 1.0  # answer too late
        if n in (10, 11):
            return -1, 0.0  # hang up twice: the retry on a new connection fails too
        return None

    stub.fault = hook
    res = api.run_job(job_for(stub, op="put", ops=30, concurrency=1, timeout_s=0.4))
    assert res["errors_by_class"] == {"connection": 1, "timeout": 1}
    assert res["ops"] == 28
    assert stub.counts["put"] == 31  # 30 + the one transparent retry


def test_open_loop_shows_a_stall_that_closed_loop_hides(stub: StubS3) -> None:
    # A stall long against what scheduling on a busy machine adds (the tests run
    # beside integration tests): 1 s, and "slow" is above half of it. The rate is
    # one a starved test process still keeps (it made 7.5 requests a second with
    # the machine's load at 29 on 2 cores).
    def stall_once(at: int) -> Any:
        counter = itertools.count(1)

        def hook(kind: str, method: str, path: str) -> Optional[Tuple[int, float]]:
            if kind == "put" and next(counter) == at:
                return 0, 1.0
            return None
        return hook

    stub.fault = stall_once(5)
    open_res = api.run_job(job_for(stub, op="put", rate=5.0, duration_s=4.0,
                                   concurrency=1))
    assert open_res["mode"] == "open" and open_res["errors"] == 0
    assert open_res["ops_per_s"] == pytest.approx(5.0, rel=0.15)
    assert open_res["latency_ms"]["max"] >= 990
    assert open_res["latency_ms"]["p99"] >= 500
    # the requests due during the stall waited for it and say so: of the 5 due
    # in that second, those due in its first half waited more than half of it
    assert count_above(open_res["histogram"], 500 * MS) >= 2

    stub.fault = stall_once(10)
    closed = api.run_job(job_for(stub, op="put", ops=100, concurrency=1))
    assert closed["latency_ms"]["max"] >= 990
    # the closed loop waited with its requests: only the stalled one is slow (above
    # 0.9 s: a starved machine gave three requests above 0.5 s once)
    assert 1 <= count_above(closed["histogram"], 900 * MS) <= 2


def test_open_loop_gives_each_target_its_share_even_when_one_is_slow(stub: StubS3) -> None:
    # A round-robin balancer's view: each RGW is due half the requests; a slow one
    # makes its own wait (its latency shows it) instead of a fast one taking them.
    def slow(kind: str, method: str, path: str) -> Optional[Tuple[int, float]]:
        return (0, 0.25) if kind == "put" else None
    with StubS3(access_key="AK", secret_key="SK") as slow_stub:
        slow_stub.fault = slow
        slow_stub.buckets = stub.buckets   # one cluster, two RGWs
        res = api.run_job(job_for(stub, endpoints=[stub.url, slow_stub.url], op="put",
                                  rate=8.0, duration_s=4.0, concurrency=4))
        counts = (stub.counts["put"], slow_stub.counts["put"])
    assert res["errors"] == 0, res
    # 16 due at each in 4 s; the slow one's two threads keep up at 8 per second
    assert all(14 <= n <= 17 for n in counts), counts
    by_url = {t["url"]: t["ops"] for t in res["targets"]}
    assert abs(by_url[stub.url] - by_url[slow_stub.url]) <= 2, res["targets"]


def test_the_time_the_engine_waited_for_a_core_is_measured(stub: StubS3) -> None:
    # Two busy loops on the one CPU the engine may use: it is runnable far more than
    # it runs, and says how long it waited.
    cpu = min(os.sched_getaffinity(0))
    allowed = os.sched_getaffinity(0)
    hogs = [subprocess.Popen([sys.executable, '-c', 'import os, sys\n'
                              'os.sched_setaffinity(0, {%d})\nprint(flush=True)\n'
                              'while True: pass' % cpu], stdout=subprocess.PIPE)
            for _ in range(2)]
    for hog in hogs:  # each spins on that CPU before the load starts
        assert hog.stdout is not None and hog.stdout.readline() == b'\n'

    def pin(cpus: Any) -> None:  # every thread of this process, the stub's among them
        for tid in os.listdir('/proc/self/task'):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:
                pass
    pin({cpu})
    try:
        # Bodies it signs (a SHA-256 of each): the engine wants its CPU all the time, and
        # so waits for it whatever the rest of a busy machine does.
        res = api.run_job(job_for(stub, op="put", size="256KiB", payload_signing="signed",
                                  duration_s=2.0, concurrency=2))
    finally:
        pin(allowed)
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert res["errors"] == 0 and res["ops"] > 0
    assert res["client_wait_s"] > 0.5, (res["client_wait_s"], res["client_cpu_s"])


def test_warmup_is_left_out(stub: StubS3) -> None:
    start_at = time.time() + 0.3

    # 503s until 1.1 s before the window: a starved machine may deliver the last of
    # them late, but not a second late.
    def hook(kind: str, method: str, path: str) -> Optional[Tuple[int, float]]:
        if kind == "put" and time.time() < start_at + 0.4:
            return 503, 0.0
        return None

    stub.fault = hook
    # A window of a whole second: in 0.6 s a starved machine once completed no request.
    res = api.run_job(job_for(stub, op="put", start_at=start_at, warmup_s=1.5,
                              duration_s=1.0))
    assert stub.counts["put"] > res["ops"] + res["errors"]  # warm-up requests happened
    assert res["errors"] == 0  # ... and none of their 503s is counted
    assert res["ops"] > 0 and res["elapsed_s"] == pytest.approx(1.0)
    assert [p["t"] for p in res["per_second"]] == [0]
    assert res["start_at"] == start_at


def test_mixed_workload(stub: StubS3) -> None:
    res = api.run_job(job_for(stub, op="mixed", ops=400, objects=20, verify=True,
                              mix={"put": 1.0, "get": 1.0, "delete": 1.0, "head": 1.0,
                                   "list": 1.0}))
    assert res["errors"] == 0 and res["ops"] == 400
    assert set(res["by_op"]) == {"put", "get", "delete", "head", "list"}
    assert all(d["ops"] > 40 for d in res["by_op"].values())
    assert stub.counts["delete"] == res["by_op"]["delete"]["ops"]
    assert stub.counts["put"] == 20 + res["by_op"]["put"]["ops"]  # prefill + load


def test_delete_stops_when_objects_run_out(stub: StubS3) -> None:
    res = api.run_job(job_for(stub, op="delete", objects=50, duration_s=10.0))
    assert res["ops"] == 50 and res["exhausted"] is True
    assert res["elapsed_s"] < 5
    assert stub.buckets["rgwbench-0"] == {}


def test_multipart_upload_and_verified_read() -> None:
    with StubS3(keep_limit=32 << 20) as stub:
        res = api.run_job(job_for(stub, op="get", size="12MiB", objects=2, ops=4,
                                  verify=True, multipart_threshold="5MiB",
                                  part_size="5MiB", concurrency=2))
        assert res["errors"] == 0 and res["ops"] == 4 and res["bytes"] == 4 * (12 << 20)
        assert stub.counts["initiate"] == 2 and stub.counts["part"] == 6
        assert stub.counts["complete"] == 2 and stub.counts["abort"] == 0


def test_cleanup_lists_pages_and_deletes_buckets(stub: StubS3) -> None:
    res = api.run_job(job_for(stub, op="put", ops=1100, size="1KiB", concurrency=8,
                              cleanup=True))
    assert res["ops"] == 1100
    assert res["cleanup"] == {"objects_deleted": 1100, "buckets_deleted": 1}
    assert stub.buckets == {}
    # two pages of a listing (1000 + 100 keys), two multi-object deletes
    assert stub.counts["list"] == 2 and stub.counts["multi_delete"] == 2


def test_cleanup_deletes_again_what_landed_after_its_listing(
        stub: StubS3, monkeypatch: pytest.MonkeyPatch) -> None:
    api.run_job(job_for(stub, op="put", ops=20, size="1KiB"))
    real = prepare.list_keys
    listings = []

    def late(client: Any, bucket: str, prefix: str) -> Tuple[List[str], bool]:
        listings.append(bucket)
        # The first listing misses the writes still on their way (as after an abort).
        return ([], True) if len(listings) == 1 else real(client, bucket, prefix)

    monkeypatch.setattr(prepare, "list_keys", late)
    waits: List[float] = []
    done = prepare.cleanup(job_for(stub, op="put", ops=20, size="1KiB"), sleep=waits.append)
    assert done == {"objects_deleted": 20, "buckets_deleted": 1}
    assert len(listings) == 2 and waits == [1.0] and stub.buckets == {}


def test_cleanup_names_the_buckets_it_could_not_empty(
        stub: StubS3, monkeypatch: pytest.MonkeyPatch) -> None:
    api.run_job(job_for(stub, op="put", ops=5, size="1KiB"))
    monkeypatch.setattr(prepare, "list_keys", lambda *args: ([], True))
    waits: List[float] = []
    done = prepare.cleanup(job_for(stub, op="put", ops=5, size="1KiB"), attempts=3,
                           sleep=waits.append)
    assert done["buckets_deleted"] == 0 and done["buckets_left"] == list(stub.buckets)
    assert waits == [1.0, 1.0]


def test_server_process_sampling(stub: StubS3) -> None:
    with open("/proc/self/comm") as f:
        me = f.read().strip()
    res = api.run_job(job_for(stub, op="put", duration_s=2.0, proc_stats=True,
                              proc_names=(me,), host_label="h1"))
    mine = res["server"]["h1"][me]
    assert mine["daemons"] >= 1 and os.getpid() in mine["pids"]
    # This process served and sent the load: the sampler saw it work, however little a
    # starved machine left it (one 10 ms tick in a second is 0.01 cores).
    assert mine["cpu_cores"] > 0 and mine["rss_mib"] > 5, mine
    assert "rgw" not in res  # radosgw was not asked for


def test_wrong_secret_is_refused_before_any_load(stub: StubS3) -> None:
    with pytest.raises(EndpointError) as err:
        api.run_job(job_for(stub, op="put", ops=10, secret_key="nope"))
    assert "SignatureDoesNotMatch" in str(err.value)
    assert stub.total == 1


def _self_signed(tmpdir: str) -> Tuple[str, str]:
    cert, key = os.path.join(tmpdir, "cert.pem"), os.path.join(tmpdir, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_https_with_ca_bundle_and_insecure(tmp_path: Any) -> None:
    cert, key = _self_signed(str(tmp_path))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    with StubS3(tls=ctx) as stub:
        assert stub.url.startswith("https://")
        res = api.run_job(job_for(stub, op="put", ops=20, ca_bundle=cert))
        assert res["ops"] == 20 and res["errors"] == 0
        res = api.run_job(job_for(stub, op="get", ops=20, objects=5, insecure=True,
                                  verify=True))
        assert res["ops"] == 20 and res["errors"] == 0
        with pytest.raises(EndpointError) as err:
            api.run_job(job_for(stub, op="put", ops=5))
        assert "not trusted" in str(err.value) and "--ca-bundle" in str(err.value)


def test_no_engine_thread_outlives_a_run(stub: StubS3) -> None:
    api.run_job(job_for(stub, op="head", ops=50, objects=5, cleanup=True))
    left = [t.name for t in threading.enumerate() if t.name.startswith("loadgen")]
    assert left == []
    with socket.create_connection(("127.0.0.1", stub.port), timeout=2):
        pass  # the stub still serves: nothing was left holding it


@pytest.mark.parametrize("ops,concurrency,processes", [(101, 5, 2), (7, 8, 3), (1000, 16, 4)])
def test_processes_split_the_ops_limit_and_the_rate(
        ops: int, concurrency: int, processes: int) -> None:
    job = Job(endpoint="http://127.0.0.1:1", access_key="AK", secret_key="SK", op="put",
              ops=ops, rate=200.0, concurrency=concurrency, processes=processes)
    schedule = Schedule(time.time(), 0.0, None)
    paces = [Pace.for_process(job, schedule, *share(concurrency, processes, i))
             for i in range(processes)]
    quotas = [p.quota or 0 for p in paces]
    assert sum(quotas) == ops and min(quotas) >= 0
    assert sum(NS / (p.interval_ns or 0) for p in paces) == pytest.approx(200.0)
    # the processes' first due times are staggered, not all at the start
    firsts = [p.first_slot_ns - schedule.start_ns for p in paces]
    assert firsts == sorted(set(firsts)) and firsts[0] == 0


def test_progress_ticks_on_the_seconds_of_the_window() -> None:
    schedule = Schedule(time.time(), 2.0, 3.5)
    m, end = schedule.measure_ns, schedule.end_ns
    assert schedule.next_tick(m - 3 * NS) == m - 2 * NS
    assert schedule.next_tick(m - NS // 2) == m
    assert schedule.next_tick(m) == m + NS
    assert schedule.next_tick(m + 3 * NS + 7) == end
    assert schedule.next_tick(end) == m + 4 * NS


def test_a_cpu_quota_holding_the_process_back_counts_as_waiting(tmp_path: Any) -> None:
    from rgwbench.loadgen.process import cgroup_throttled_s
    # cgroup v1 (the cpu controller's own hierarchy), as on hosts with hybrid cgroups
    own = tmp_path / 'cgroup'
    own.write_text('12:memory:/x\n4:cpu,cpuacct:/rgwbench-held\n0::/user.slice\n')
    group = tmp_path / 'fs' / 'cpu,cpuacct' / 'rgwbench-held'
    group.mkdir(parents=True)
    (group / 'cpu.stat').write_text('nr_periods 80\nnr_throttled 79\nthrottled_time 7500000000\n')
    assert cgroup_throttled_s(str(own), str(tmp_path / 'fs')) == pytest.approx(7.5)
    # cgroup v2, as in a container with a CPU limit
    own.write_text('0::/\n')
    (tmp_path / 'fs' / 'cpu.stat').write_text('usage_usec 100\nthrottled_usec 2500000\n')
    assert cgroup_throttled_s(str(own), str(tmp_path / 'fs')) == pytest.approx(2.5)
    # no cgroup file, or no throttling figure: nothing
    assert cgroup_throttled_s(str(tmp_path / 'none'), str(tmp_path / 'fs')) == 0.0
    (tmp_path / 'fs' / 'cpu.stat').write_text('usage_usec 100\n')
    assert cgroup_throttled_s(str(own), str(tmp_path / 'fs')) == 0.0


def test_the_wait_for_a_cpu_is_the_larger_of_run_delay_and_throttling() -> None:
    from rgwbench.loadgen.process import cpu_wait_s
    # a busy thread under a quota: its run delay holds the throttling already
    assert cpu_wait_s(runqueue=5.9, throttled=7.1, wall=3.0) == 5.9
    # an event-driven one: throttled on its way back to user space, no run delay
    assert cpu_wait_s(runqueue=0.04, throttled=4.9, wall=3.0) == 3.0
    assert cpu_wait_s(runqueue=0.5, throttled=0.0, wall=8.0) == 0.5
    assert cpu_wait_s(runqueue=-0.1, throttled=0.0, wall=8.0) == 0.0


def test_a_window_its_sampling_thread_missed_still_has_its_cpu(
        stub: StubS3, monkeypatch: Any) -> None:
    # The thread that samples the window's CPU held back past the window's end, as a
    # CPU quota held an agent's: the figures come from the sample taken before it,
    # under the warmup's same load, where they read no CPU and no wait at all.
    real_sleep = Schedule.sleep_until
    main = threading.current_thread()

    def oversleep(deadline_ns: int, stop: Optional[threading.Event] = None) -> None:
        late = 2 * NS if threading.current_thread() is main else 0
        real_sleep(deadline_ns + late, stop)

    monkeypatch.setattr(Schedule, 'sleep_until', staticmethod(oversleep))
    res = api.run_job(job_for(stub, op="put", size="4KiB", payload_signing="signed",
                              warmup_s=0.6, duration_s=1.0))
    assert res["ops"] > 0 and res["elapsed_s"] == pytest.approx(1.0)
    assert res["client_cpu_s"] > 0, res


def test_the_window_figures_scale_what_was_sampled_to_the_window() -> None:
    from rgwbench.loadgen.process import CpuSample, window_figures, window_start
    measure = 100 * NS
    before = CpuSample(measure - NS // 2, cpu_s=1.0, runqueue_s=0.0, throttled_s=0.0)
    on_time = CpuSample(measure + NS // 100, cpu_s=1.2, runqueue_s=0.1, throttled_s=0.0)
    late = CpuSample(measure + 3 * NS, cpu_s=1.6, runqueue_s=2.0, throttled_s=0.0)
    assert window_start(before, on_time, measure) is on_time
    assert window_start(before, late, measure) is before
    assert window_start(None, late, measure) is late
    end = CpuSample(measure + 8 * NS, cpu_s=2.8, runqueue_s=4.0, throttled_s=0.0)
    # on time: the growth itself
    cpu, wait = window_figures(on_time, end, 8.0 - 0.01)
    assert cpu == pytest.approx(1.6) and wait == pytest.approx(3.9)
    # sampled over 8.5 s for a window of 8: the share over what was sampled
    cpu, wait = window_figures(before, end, 8.0)
    assert cpu == pytest.approx(1.8 * 8 / 8.5) and wait == pytest.approx(4.0 * 8 / 8.5)
    # throttled more than the span: at most the span, scaled the same
    held = CpuSample(end.at_ns, cpu_s=1.1, runqueue_s=0.0, throttled_s=20.0)
    assert window_figures(before, held, 8.0)[1] == pytest.approx(8.0)
    assert window_figures(end, end, 8.0) == (0.0, 0.0)
