"""Server process sampling (/proc) and merging of results."""
import json
import os
import random
import shutil
from typing import Any, Dict, List

import pytest


from rgwbench.loadgen import proc
from rgwbench.loadgen.histogram import Histogram
from rgwbench.loadgen.result import OpStats, Series, finalize, merge_results, summary_text
from rgwbench.tests.proc_fakes import FSID, OTHER_FSID, fake_proc


def _end(root: str, pid: int) -> None:
    shutil.rmtree(os.path.join(root, str(pid)))


HAPROXY_CFG = "/tmp/c/orch/haproxy.ingress.vm.qwerty/haproxy.cfg"


def _radosgw(name: str, *more: str) -> List[str]:
    return ["radosgw", "-f", "-c", "/tmp/c/ceph.conf", "-n", name] + list(more)


def _cluster_on_a_fake_host(root: str) -> None:
    """Two radosgw of this cluster, one of another cluster and one of another name,
    this cluster's haproxy and another's, and programs that mention the names."""
    fake_proc(root, 10, "radosgw", 100, 50, 200 * 1024, _radosgw("client.rgw.foo.vm.abc"))
    fake_proc(root, 11, "radosgw", 1000, 0, 100 * 1024,
              ["/usr/bin/radosgw", "--name=client.rgw.foo.vm.def", "--fsid", FSID])
    fake_proc(root, 12, "radosgw", 500, 0, 300 * 1024,
              _radosgw("client.rgw.foo.vm.abc", "--fsid", OTHER_FSID))
    fake_proc(root, 13, "radosgw", 700, 0, 300 * 1024, _radosgw("client.rgw.foo.vm.abcd"))
    fake_proc(root, 20, "haproxy", 10, 10, 10 * 1024, ["haproxy", "-db", "-f", HAPROXY_CFG])
    fake_proc(root, 21, "haproxy", 90, 10, 40 * 1024,
              ["haproxy", "-f", "/tmp/d/orch/haproxy.ingress.vm.zzz/haproxy.cfg"])
    # A container's init and a shell that name the daemon: not the daemon.
    fake_proc(root, 30, "podman-init", 5, 5, 1024,
              ["/run/podman-init", "--", "/usr/bin/radosgw", "-n", "client.rgw.foo.vm.abc"])
    fake_proc(root, 31, "bash", 5, 5, 1024, ["bash", "-c", "haproxy -f " + HAPROXY_CFG])
    os.makedirs(os.path.join(root, "self"))


DAEMONS = {"rgw.foo.vm.abc": "vm", "rgw.foo.vm.def": "vm",
           "haproxy.ingress.vm.qwerty": "vm"}


def test_daemons_are_found_by_name_not_by_program(tmp_path: Any) -> None:
    root = str(tmp_path)
    _cluster_on_a_fake_host(root)
    daemons = [proc.Daemon(n, h) for n, h in sorted(DAEMONS.items())]
    assert proc.find_daemons(daemons, FSID, root) == {
        "rgw.foo.vm.abc": [10], "rgw.foo.vm.def": [11], "haproxy.ingress.vm.qwerty": [20]}
    # Without the fsid, another cluster's daemon of the same name cannot be told apart.
    assert proc.find_daemons(daemons, "", root)["rgw.foo.vm.abc"] == [10, 12]
    assert proc.command_line(11, root) == ["/usr/bin/radosgw", "--name=client.rgw.foo.vm.def",
                                           "--fsid", FSID]
    assert proc.ceph_entities(["radosgw", "--id", "rgw.x", "-n", "client.y"]) == {
        "client.rgw.x", "client.y"}
    # The service map drops "rgw." of client.rgw.<id>: a radosgw named client.<id> counts.
    assert proc.Daemon("rgw.gw1", "h").named_by(["radosgw", "-n", "client.gw1"])
    assert not proc.Daemon("rgw.gw1", "h").named_by(["radosgw", "-n", "client.gw10"])


def test_a_cephadm_container_is_found_by_its_unit(tmp_path: Any) -> None:
    root = str(tmp_path)
    unit = ("0::/system.slice/system-ceph\\x2d%s.slice/ceph-%s@haproxy.rgw.foo.h1.xyz"
            ".service/libpod-payload-0123\n")
    # cephadm's haproxy reads /var/lib/haproxy/haproxy.cfg inside its container.
    fake_proc(root, 40, "haproxy", 10, 0, 1024,
              ["haproxy", "-f", "/var/lib/haproxy/haproxy.cfg"], cgroup=unit % (FSID, FSID))
    fake_proc(root, 41, "haproxy", 10, 0, 1024,
              ["haproxy", "-f", "/var/lib/haproxy/haproxy.cfg"],
              cgroup=unit % (OTHER_FSID, OTHER_FSID))
    # Another cluster's radosgw of the same name, told apart by its unit only.
    fake_proc(root, 42, "radosgw", 10, 0, 1024, _radosgw("client.rgw.foo.h1.abc"),
              cgroup=unit.replace("haproxy", "rgw").replace("xyz", "abc")
              % (OTHER_FSID, OTHER_FSID))
    fake_proc(root, 43, "radosgw", 10, 0, 1024, _radosgw("client.rgw.foo.h1.abc"),
              cgroup=unit.replace("haproxy", "rgw").replace("xyz", "abc") % (FSID, FSID))
    daemon = proc.Daemon("haproxy.rgw.foo.h1.xyz", "h1")
    rgw = proc.Daemon("rgw.foo.h1.abc", "h1")
    assert proc.find_daemons([daemon, rgw], FSID, root) == {daemon.name: [40], rgw.name: [43]}


def test_a_cephadm_container_in_a_cgroup_of_the_runtimes_is_found_by_its_folder(
        tmp_path: Any) -> None:
    """A container whose cgroup names no unit (podman's cgroupfs manager): its process
    binds the daemon's folder, which cephadm mounts into the container."""
    root = str(tmp_path)
    runtime = "0::/libpod_parent/libpod-0123\n"
    mount = ("1203 1187 254:0 /var/lib/ceph/%s/haproxy.rgw.foo.h1.xyz/haproxy "
             "/var/lib/haproxy rw,relatime - ext4 /dev/vda rw\n")
    other = "1204 1187 254:0 /var/lib/haproxy /var/lib/haproxy rw - ext4 /dev/vda rw\n"
    for pid, mounts in ((50, mount % FSID), (51, mount % OTHER_FSID), (52, other)):
        fake_proc(root, pid, "haproxy", 10, 0, 1024,
                  ["haproxy", "-W", "-db", "-f", "/var/lib/haproxy/haproxy.cfg"],
                  cgroup=runtime)
        with open(os.path.join(root, str(pid), "mountinfo"), "w") as f:
            f.write("22 1 254:0 / / rw - ext4 /dev/vda rw\n" + mounts)
    # a folder whose name only starts with the daemon's is another daemon's
    fake_proc(root, 53, "haproxy", 10, 0, 1024, ["haproxy"], cgroup=runtime)
    with open(os.path.join(root, "53", "mountinfo"), "w") as f:
        f.write(mount.replace("xyz", "xyzw") % FSID)
    daemon = proc.Daemon("haproxy.rgw.foo.h1.xyz", "h1")
    assert proc.find_daemons([daemon], FSID, root) == {daemon.name: [50]}
    # without the fsid the folder cannot be told from another cluster's
    assert proc.find_daemons([daemon], "", root) == {daemon.name: []}


def test_per_daemon_figures_on_a_fake_proc_tree(tmp_path: Any) -> None:
    root = str(tmp_path)
    _cluster_on_a_fake_host(root)
    sampler = proc.ProcSampler(root=root, clock_ticks=100,
                               daemons=dict(DAEMONS, **{"rgw.foo.other.zzz": "other"}),
                               fsid=FSID)
    sampler.start(now=1000.0)
    # 2 s later: abc used 150 ticks, def 250, the other cluster's and name's 1000 each
    fake_proc(root, 10, "radosgw", 200, 100, 220 * 1024, _radosgw("client.rgw.foo.vm.abc"))
    fake_proc(root, 11, "radosgw", 1250, 0, 100 * 1024,
              ["radosgw", "--name=client.rgw.foo.vm.def", "--fsid", FSID])
    fake_proc(root, 12, "radosgw", 1500, 0, 300 * 1024,
              _radosgw("client.rgw.foo.vm.abc", "--fsid", OTHER_FSID))
    fake_proc(root, 13, "radosgw", 1700, 0, 300 * 1024, _radosgw("client.rgw.foo.vm.abcd"))
    fake_proc(root, 20, "haproxy", 70, 30, 12 * 1024, ["haproxy", "-db", "-f", HAPROXY_CFG])
    sampler.sample()
    out = sampler.stop(now=1002.0)
    rgw = out["radosgw"]
    assert rgw["counted_by"] == "daemon" and rgw["daemons"] == 2 and rgw["pids"] == [10, 11]
    assert rgw["cpu_cores"] == pytest.approx(2.0)
    assert rgw["missing"] == ["rgw.foo.other.zzz"]
    abc, def_ = rgw["per_daemon"]
    assert abc == {"daemon": "rgw.foo.vm.abc", "host": "vm", "cpu_s": 1.5, "cpu_cores": 0.75,
                   "rss_mib": pytest.approx((200 + 220 + 220) / 3.0, abs=0.01),
                   "rss_mib_max": 220.0, "pids": [10]}
    assert def_["daemon"] == "rgw.foo.vm.def" and def_["cpu_cores"] == 1.25
    assert def_["rss_mib"] == 100.0
    assert rgw["rss_mib"] == pytest.approx(abc["rss_mib"] + def_["rss_mib"], abs=0.02)
    (hap,) = out["haproxy"]["per_daemon"]
    assert hap["daemon"] == "haproxy.ingress.vm.qwerty" and hap["cpu_cores"] == 0.4
    assert out["haproxy"]["missing"] == [] and out["haproxy"]["pids"] == [20]


def _count_scans(monkeypatch: Any, reads: List[str]) -> None:
    """Note each listing of /proc's processes in `reads`."""
    scan = proc.processes

    def counted(programs: Any, root: str = "/proc") -> Dict[int, str]:
        reads.append("scan")
        return scan(programs, root)
    monkeypatch.setattr(proc, "processes", counted)


def test_a_daemon_restarted_in_the_window_is_found_again(tmp_path: Any,
                                                         monkeypatch: Any) -> None:
    root = str(tmp_path)
    _cluster_on_a_fake_host(root)
    clock = [0.0]
    reads: List[str] = []
    sampler = proc.ProcSampler(root=root, clock_ticks=100, daemons=DAEMONS, fsid=FSID,
                               monotonic=lambda: clock[0])
    sampler.start(now=0.0)
    _count_scans(monkeypatch, reads)
    clock[0] = 1.0
    fake_proc(root, 10, "radosgw", 300, 50, 200 * 1024, _radosgw("client.rgw.foo.vm.abc"))
    sampler.sample()
    assert reads == []  # every daemon has its process: /proc is not listed again
    _end(root, 10)  # restarted: gone for a moment ...
    clock[0] = 2.0
    sampler.sample()
    assert reads == ["scan"]
    clock[0] = 3.0
    sampler.sample()
    assert reads == ["scan", "scan"]  # looked for at every sample until it is back ...
    # ... under a new pid, with 40 ticks since it started.
    fake_proc(root, 50, "radosgw", 30, 10, 150 * 1024, _radosgw("client.rgw.foo.vm.abc"))
    clock[0] = 4.0
    sampler.sample()
    clock[0] = 5.0
    sampler.sample()
    assert reads == ["scan", "scan", "scan"]
    out = sampler.stop(now=10.0)
    assert reads == ["scan", "scan", "scan"]
    abc = out["radosgw"]["per_daemon"][0]
    assert abc["daemon"] == "rgw.foo.vm.abc" and abc["pids"] == [10, 50]
    # 200 ticks of the old process until its last sample, 40 of the new one
    assert abc["cpu_s"] == pytest.approx(2.4) and abc["cpu_cores"] == pytest.approx(0.24)
    assert out["radosgw"]["missing"] == []


def test_proc_sampler_by_program_name(tmp_path: Any) -> None:
    root = str(tmp_path)
    fake_proc(root, 10, "radosgw", 100, 50, 200 * 1024)
    fake_proc(root, 11, "radosgw", 1000, 0, 100 * 1024)
    fake_proc(root, 20, "haproxy", 10, 10, 10 * 1024)
    fake_proc(root, 30, "bash", 5, 5, 1024)
    os.makedirs(os.path.join(root, "self"))
    assert proc.find_pids(("radosgw", "haproxy"), root) == {"radosgw": [10, 11],
                                                            "haproxy": [20]}
    clock = [0.0]
    sampler = proc.ProcSampler(("radosgw", "haproxy"), root=root, clock_ticks=100,
                               monotonic=lambda: clock[0])
    sampler.start(now=1000.0)
    # 2 s later: radosgw 10 used 150 ticks, 11 used 250, a new radosgw 12 appeared
    fake_proc(root, 10, "radosgw", 200, 100, 220 * 1024)
    fake_proc(root, 11, "radosgw", 1250, 0, 100 * 1024)
    fake_proc(root, 12, "radosgw", 30, 20, 50 * 1024)
    clock[0] = proc.RESCAN_S
    sampler.sample()
    out = sampler.stop(now=1002.0)
    rgw = out["radosgw"]
    assert rgw["daemons"] == 3 and rgw["pids"] == [10, 11, 12]
    assert rgw["counted_by"] == "name" and "per_daemon" not in rgw
    assert rgw["cpu_s"] == pytest.approx(4.5)
    assert rgw["cpu_cores"] == pytest.approx(2.25)
    assert rgw["rss_mib_max"] == pytest.approx(370.0)
    assert rgw["rss_mib"] == pytest.approx((300 + 370 + 370) / 3.0, abs=0.01)
    assert rgw["processes"]["11"] == {"cpu_cores": 1.25, "rss_mib": 100.0,
                                      "rss_mib_max": 100.0}
    assert rgw["processes"]["12"]["cpu_cores"] == 0.25  # started in the window
    assert out["haproxy"]["cpu_cores"] == 0.0 and out["haproxy"]["rss_mib"] == 10.0
    assert "bash" not in out


@pytest.mark.parametrize("by_daemon", [False, True])
def test_a_pid_reused_by_a_new_process_is_a_process_that_ended(
        tmp_path: Any, by_daemon: bool) -> None:
    # CI saw radosgw at -5.96 cores: a radosgw of another cluster on the host ended, and
    # its pid went to a new process, whose few ticks were taken for the old one's.
    root = str(tmp_path)
    _cluster_on_a_fake_host(root)
    daemons = DAEMONS if by_daemon else None
    sampler = proc.ProcSampler(root=root, clock_ticks=100, daemons=daemons, fsid=FSID,
                               monotonic=lambda: 0.0)
    sampler.start(now=0.0)
    fake_proc(root, 11, "radosgw", 1200, 0, 100 * 1024,
              ["/usr/bin/radosgw", "--name=client.rgw.foo.vm.def", "--fsid", FSID])
    sampler.sample()  # 200 ticks of pid 11 ...
    # ... which ends; its pid goes to a new radosgw of the same daemon: 30 ticks so far.
    fake_proc(root, 11, "radosgw", 30, 0, 100 * 1024,
              ["/usr/bin/radosgw", "--name=client.rgw.foo.vm.def", "--fsid", FSID],
              started=5000)
    sampler.sample()
    fake_proc(root, 11, "radosgw", 80, 0, 100 * 1024,
              ["/usr/bin/radosgw", "--name=client.rgw.foo.vm.def", "--fsid", FSID],
              started=5000)
    out = sampler.stop(now=10.0)["radosgw"]
    if by_daemon:
        def_ = [d for d in out["per_daemon"] if d["daemon"] == "rgw.foo.vm.def"][0]
        assert def_["cpu_s"] == pytest.approx(2.0 + 0.8) and def_["pids"] == [11]
    # Every radosgw of the host when counted by name: 10, 12 and 13 used nothing.
    assert out["cpu_s"] == pytest.approx(2.0 + 0.8)
    assert out["processes"]["11"]["cpu_cores"] == pytest.approx(0.28)


def test_proc_reads_this_process() -> None:
    pid = os.getpid()
    ticks = proc.process_ticks(pid)
    assert ticks is not None and ticks.cpu >= 0 and ticks.started > 0
    rss = proc.rss_kib(pid)
    assert rss is not None and rss > 1000
    assert proc.process_ticks(2 ** 22 + 12345) is None  # no such process


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
                        "rss_mib_max": 220.0, "cpu_cores_mean": 0.5, "rss_mib_mean": 100.0}
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


def _by_daemon(host: str, *daemons: Dict[str, Any]) -> Dict[str, Any]:
    raw = _raw(4, 10, host)
    raw["server"] = {host: {"radosgw": {
        "daemons": len(daemons), "cpu_cores": sum(d["cpu_cores"] for d in daemons),
        "counted_by": "daemon", "missing": [],
        "per_daemon": [dict(d, cpu_s=d["cpu_cores"], pids=[i]) for i, d in
                       enumerate(daemons)]}}}
    return finalize(raw)


def test_merge_counts_each_daemon_once_with_its_own_figures() -> None:
    a = {"daemon": "rgw.a", "host": "h1", "cpu_cores": 0.5, "rss_mib": 100.0,
         "rss_mib_max": 110.0}
    b = {"daemon": "rgw.b", "host": "h2", "cpu_cores": 0.25, "rss_mib": 50.0,
         "rss_mib_max": 60.0}
    # Agents of hosts h1 and h2 on one machine (namespaces): one machine label.
    m = merge_results([_by_daemon("machine", a), _by_daemon("machine", b),
                       _by_daemon("elsewhere", a)])
    assert m["rgw"] == {"daemons": 2, "cpu_cores": 0.75, "rss_mib": 150.0,
                        "rss_mib_max": 170.0, "cpu_cores_mean": 0.375, "rss_mib_mean": 75.0,
                        "per_daemon": [a, b]}
    assert [d["daemon"] for d in m["server"]["machine"]["radosgw"]["per_daemon"]] == [
        "rgw.a", "rgw.b"]
    assert "haproxy" not in m
    assert "rgw.a on h1  0.50 cores" in summary_text(m)


def test_a_daemon_never_found_is_looked_for_only_now_and_then(tmp_path: Any,
                                                              monkeypatch: Any) -> None:
    root = str(tmp_path)
    _cluster_on_a_fake_host(root)
    clock = [0.0]
    reads: List[str] = []
    sampler = proc.ProcSampler(root=root, clock_ticks=100, fsid=FSID,
                               daemons={"rgw.foo.vm.abc": "vm", "rgw.gone": "vm"},
                               monotonic=lambda: clock[0])
    sampler.start(now=0.0)
    _count_scans(monkeypatch, reads)
    for second in range(1, 11):
        clock[0] = float(second)
        sampler.sample()
    assert reads == ["scan", "scan"]  # at 5 s and 10 s
    assert sampler.stop(now=10.0)["radosgw"]["missing"] == ["rgw.gone"]
