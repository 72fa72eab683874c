"""Server process sampling (/proc) and merging of results."""
import json
import os
import random
from typing import Any, Dict, List

import pytest


from rgwbench.loadgen import proc
from rgwbench.loadgen.histogram import Histogram
from rgwbench.loadgen.result import OpStats, Series, finalize, merge_results


def _fake_proc(root: str, pid: int, comm: str, utime: int, stime: int, rss_kib: int) -> None:
    d = os.path.join(root, str(pid))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "comm"), "w") as f:
        f.write(comm + "\n")
    fields = ["S"] + ["0"] * 10 + [str(utime), str(stime)] + ["0"] * 30
    with open(os.path.join(d, "stat"), "w") as f:
        # a command name with spaces and parentheses, as the kernel allows
        f.write("%d (%s) %s\n" % (pid, comm + " (x) y", " ".join(fields)))
    with open(os.path.join(d, "status"), "w") as f:
        f.write("Name:\t%s\nVmPeak:\t 999 kB\nVmRSS:\t %d kB\nThreads:\t3\n" % (comm, rss_kib))


def test_proc_sampler_on_a_fake_proc_tree(tmp_path: Any) -> None:
    root = str(tmp_path)
    _fake_proc(root, 10, "radosgw", 100, 50, 200 * 1024)
    _fake_proc(root, 11, "radosgw", 1000, 0, 100 * 1024)
    _fake_proc(root, 20, "haproxy", 10, 10, 10 * 1024)
    _fake_proc(root, 30, "bash", 5, 5, 1024)
    os.makedirs(os.path.join(root, "self"))
    assert proc.find_pids(("radosgw", "haproxy"), root) == {"radosgw": [10, 11],
                                                            "haproxy": [20]}
    sampler = proc.ProcSampler(("radosgw", "haproxy"), root=root, clock_ticks=100)
    sampler.start(now=1000.0)
    # 2 s later: radosgw 10 used 150 ticks, 11 used 250, a new radosgw 12 appeared
    _fake_proc(root, 10, "radosgw", 200, 100, 220 * 1024)
    _fake_proc(root, 11, "radosgw", 1250, 0, 100 * 1024)
    _fake_proc(root, 12, "radosgw", 30, 20, 50 * 1024)
    sampler.sample()
    out = sampler.stop(now=1002.0)
    rgw = out["radosgw"]
    assert rgw["daemons"] == 3 and rgw["pids"] == [10, 11, 12]
    assert rgw["cpu_s"] == pytest.approx(4.5)
    assert rgw["cpu_cores"] == pytest.approx(2.25)
    assert rgw["rss_mib_max"] == pytest.approx(370.0)
    assert rgw["rss_mib"] == pytest.approx((300 + 370 + 370) / 3.0, abs=0.01)
    assert rgw["processes"]["11"] == {"cpu_cores": 1.25, "rss_mib": 100.0,
                                      "rss_mib_max": 100.0}
    assert rgw["processes"]["12"]["cpu_cores"] == 0.25  # started in the window
    assert out["haproxy"]["cpu_cores"] == 0.0 and out["haproxy"]["rss_mib"] == 10.0
    assert "bash" not in out


def test_proc_sampler_counts_only_the_given_pids(tmp_path: Any) -> None:
    root = str(tmp_path)
    _fake_proc(root, 10, "radosgw", 100, 0, 100 * 1024)   # this cluster's
    _fake_proc(root, 11, "radosgw", 100, 0, 300 * 1024)   # another cluster's
    _fake_proc(root, 20, "haproxy", 10, 0, 10 * 1024)
    sampler = proc.ProcSampler(("radosgw", "haproxy"), root=root, clock_ticks=100,
                               only={"radosgw": [10, 99]})
    sampler.start(now=0.0)
    _fake_proc(root, 10, "radosgw", 200, 0, 100 * 1024)
    _fake_proc(root, 11, "radosgw", 900, 0, 300 * 1024)
    out = sampler.stop(now=1.0)
    assert out["radosgw"]["pids"] == [10] and out["radosgw"]["counted_by"] == "pids"
    assert out["radosgw"]["cpu_cores"] == pytest.approx(1.0)
    assert out["radosgw"]["rss_mib"] == pytest.approx(100.0)
    assert out["haproxy"]["counted_by"] == "name"
    # None of the given pids alive (another pid namespace): every radosgw counts.
    fallback = proc.ProcSampler(("radosgw",), root=root, clock_ticks=100,
                                only={"radosgw": [7]})
    fallback.start(now=0.0)
    out = fallback.stop(now=1.0)
    assert out["radosgw"]["pids"] == [10, 11] and out["radosgw"]["counted_by"] == "name"


def test_proc_reads_this_process() -> None:
    pid = os.getpid()
    ticks = proc.cpu_ticks(pid)
    assert ticks is not None and ticks >= 0
    rss = proc.rss_kib(pid)
    assert rss is not None and rss > 1000
    assert proc.cpu_ticks(2 ** 22 + 12345) is None  # no such process


def _raw(seed: int, ops: int, host: str, seconds: int = 3) -> Dict[str, Any]:
    rng = random.Random(seed)
    st = OpStats()
    series = Series()
    for i in range(ops):
        lat = int(rng.lognormvariate(14, 0.5))
        st.ops += 1
        st.bytes += 4096
        st.lat.record(lat)
        st.ttfb.record(lat // 2)
        series.add(i % seconds, 4096, lat)
    st.error("http_503")
    series.add_error(0)
    return finalize({"op": "get", "concurrency": 4, "processes": 1, "by_op": {"get": st.to_dict()},
                     "per_second": series.to_list(), "client_cpu_s": 1.5,
                     "elapsed_s": float(seconds), "hosts": [host],
                     "server": {host: {"radosgw": {"daemons": 1, "cpu_cores": 0.5,
                                                   "rss_mib": 100.0, "rss_mib_max": 110.0}}}})


def test_merge_of_hosts_adds_counts_and_histograms() -> None:
    a, b = _raw(1, 3000, "h1"), _raw(2, 1000, "h2", seconds=2)
    m = merge_results([json.loads(json.dumps(a)), json.loads(json.dumps(b))])
    assert m["ops"] == 4000 and m["errors"] == 2 and m["bytes"] == 4000 * 4096
    assert m["errors_by_class"] == {"http_503": 2}
    assert m["elapsed_s"] == 3.0 and m["ops_per_s"] == pytest.approx(4000 / 3.0, rel=1e-4)
    assert m["concurrency"] == 8 and m["processes"] == 2 and m["op"] == "get"
    assert m["client_cpu_s"] == 3.0
    want = Histogram.from_dict(a["histogram"]).merge(Histogram.from_dict(b["histogram"]))
    assert Histogram.from_dict(m["histogram"]) == want
    assert m["latency_ms"] == want.summary()
    assert [p["ops"] for p in m["per_second"]] == [1000 + 500, 1000 + 500, 1000]
    assert m["per_second"][0]["errors"] == 2
    # server figures add across hosts, and are not counted twice for one host
    assert m["rgw"] == {"daemons": 2, "cpu_cores": 1.0, "rss_mib": 200.0,
                        "rss_mib_max": 220.0}
    twice = merge_results([a, a])
    assert twice["rgw"]["daemons"] == 1 and twice["ops"] == 6000
    # never an average of percentiles: the merged p99 comes from merged counts
    assert m["latency_ms"]["p99"] != pytest.approx(
        (a["latency_ms"]["p99"] + b["latency_ms"]["p99"]) / 2, rel=1e-9)


def test_finalize_is_idempotent_and_json_safe() -> None:
    r = _raw(3, 500, "h")
    again = finalize(json.loads(json.dumps(r)))
    assert again == r
    assert r["ops_per_s_cv"] is not None and r["ops_per_s_cv"] < 0.01
    assert r["client_cpu_ms_per_op"] == pytest.approx(1500.0 / 501, rel=1e-3)


def test_series_round_trip() -> None:
    s = Series()
    for i, lat in enumerate([1000000, 3000000, 5000000]):
        s.add(i // 2, 10, lat)
    s.add_error(4)
    items: List[Dict[str, Any]] = s.to_list()
    assert [i["ops"] for i in items] == [2, 1, 0, 0, 0]
    assert items[0]["lat_mean_ms"] == 2.0 and items[2]["lat_mean_ms"] is None
    assert Series.from_list(items).to_list() == items
