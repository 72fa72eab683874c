"""Run results: per-op counters, per-second series, JSON form, merging.

A result from one process, one host or many hosts has the same shape.
The raw parts (counts, serialised histograms, per-second counts, CPU
seconds, server samples per host) merge by adding; the derived figures
(rates, percentiles, means) are computed from the merged raw parts by
``finalize`` and never averaged.
"""

import math
from typing import Any, Dict, Iterable, List, Optional

from .histogram import Histogram

RESULT_VERSION = 1
MIB = float(1 << 20)
#: fields that describe the run (echoed, not summed)
ECHO_FIELDS = ("op", "mix", "object_size", "size_bytes", "concurrency", "processes",
               "duration_s", "warmup_s", "ops_limit", "mode", "rate", "buckets",
               "objects", "working_set_bytes", "range", "sse", "payload_signing", "verify",
               "multipart_threshold", "part_size", "endpoint", "endpoints", "start_at", "run_tag")
#: echo fields that add up when hosts are merged (each host its own key space)
SUMMED_ECHO = ("concurrency", "processes", "rate", "objects", "working_set_bytes")
MAX_ERROR_SAMPLES = 5


class OpStats:
    """Counters and histograms of one operation type."""

    __slots__ = ("ops", "bytes", "errors", "errors_by_class", "lat", "ttfb")

    def __init__(self) -> None:
        self.ops = 0
        self.bytes = 0
        self.errors = 0
        self.errors_by_class: Dict[str, int] = {}
        self.lat = Histogram()
        self.ttfb = Histogram()

    def error(self, cls: str) -> None:
        self.errors += 1
        self.errors_by_class[cls] = self.errors_by_class.get(cls, 0) + 1

    def merge(self, other: "OpStats") -> "OpStats":
        self.ops += other.ops
        self.bytes += other.bytes
        self.errors += other.errors
        for cls, n in other.errors_by_class.items():
            self.errors_by_class[cls] = self.errors_by_class.get(cls, 0) + n
        self.lat.merge(other.lat)
        self.ttfb.merge(other.ttfb)
        return self

    def to_dict(self) -> Dict[str, Any]:
        return {"ops": self.ops, "bytes": self.bytes, "errors": self.errors,
                "errors_by_class": dict(sorted(self.errors_by_class.items())),
                "histogram": self.lat.to_dict(), "ttfb_histogram": self.ttfb.to_dict()}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "OpStats":
        st = cls()
        st.ops = int(data.get("ops", 0))
        st.bytes = int(data.get("bytes", 0))
        st.errors = int(data.get("errors", 0))
        st.errors_by_class = {str(k): int(v)
                              for k, v in (data.get("errors_by_class") or {}).items()}
        if data.get("histogram"):
            st.lat = Histogram.from_dict(data["histogram"])
        if data.get("ttfb_histogram"):
            st.ttfb = Histogram.from_dict(data["ttfb_histogram"])
        return st


class TargetStats:
    """What the workers on one endpoint did in the measured window: merged by adding."""

    __slots__ = ("url", "workers", "ops", "errors")

    def __init__(self, url: str, workers: int = 0, ops: int = 0, errors: int = 0) -> None:
        self.url = url
        self.workers = workers
        self.ops = ops
        self.errors = errors

    def to_dict(self) -> Dict[str, Any]:
        return {"url": self.url, "workers": self.workers, "ops": self.ops,
                "errors": self.errors}


def merge_targets(lists: Iterable[Iterable[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """Per-endpoint figures of processes or hosts added up, by URL, in first-seen order."""
    found: Dict[str, TargetStats] = {}
    for items in lists:
        for item in items:
            url = str(item.get("url", ""))
            entry = found.setdefault(url, TargetStats(url))
            entry.workers += int(item.get("workers", 0))
            entry.ops += int(item.get("ops", 0))
            entry.errors += int(item.get("errors", 0))
    return [entry.to_dict() for entry in found.values()]


class Series:
    """Per-second counts, second 0 starting when the measured window does."""

    __slots__ = ("ops", "bytes", "errors", "lat_ns")

    def __init__(self) -> None:
        self.ops: List[int] = []
        self.bytes: List[int] = []
        self.errors: List[int] = []
        self.lat_ns: List[int] = []

    def _grow(self, second: int) -> None:
        n = second + 1 - len(self.ops)
        if n > 0:
            zeros = [0] * n
            self.ops += zeros
            self.bytes += zeros
            self.errors += zeros
            self.lat_ns += zeros

    def add(self, second: int, nbytes: int, latency_ns: int) -> None:
        if second >= len(self.ops):
            self._grow(second)
        self.ops[second] += 1
        self.bytes[second] += nbytes
        self.lat_ns[second] += latency_ns

    def add_error(self, second: int) -> None:
        if second >= len(self.ops):
            self._grow(second)
        self.errors[second] += 1

    def merge(self, other: "Series") -> "Series":
        self._grow(len(other.ops) - 1)
        for i in range(len(other.ops)):
            self.ops[i] += other.ops[i]
            self.bytes[i] += other.bytes[i]
            self.errors[i] += other.errors[i]
            self.lat_ns[i] += other.lat_ns[i]
        return self

    def to_list(self) -> List[Dict[str, Any]]:
        out = []
        for i in range(len(self.ops)):
            ops = self.ops[i]
            out.append({"t": i, "ops": ops, "bytes": self.bytes[i], "errors": self.errors[i],
                        "lat_mean_ms": round(self.lat_ns[i] / ops / 1e6, 6) if ops else None})
        return out

    @classmethod
    def from_list(cls, items: Iterable[Dict[str, Any]]) -> "Series":
        s = cls()
        for item in items:
            t = int(item["t"])
            s._grow(t)
            ops = int(item.get("ops", 0))
            s.ops[t] += ops
            s.bytes[t] += int(item.get("bytes", 0))
            s.errors[t] += int(item.get("errors", 0))
            mean = item.get("lat_mean_ms")
            if ops and mean is not None:
                s.lat_ns[t] += int(round(float(mean) * 1e6 * ops))
        return s


def _cv(values: List[float]) -> Optional[float]:
    """Coefficient of variation (sample stdev / mean)."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if mean <= 0:
        return None
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return round(math.sqrt(var) / mean, 6)


def _rounded(value: float, digits: int = 6) -> float:
    return round(value, digits)


def _daemon_figures(entry: Dict[str, Any]) -> Dict[str, Any]:
    return {"daemon": entry.get("daemon"), "host": entry.get("host"),
            "cpu_cores": entry.get("cpu_cores"), "rss_mib": entry.get("rss_mib"),
            "rss_mib_max": entry.get("rss_mib_max")}


def _sums(items: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"cpu_cores": _rounded(sum(float(x.get("cpu_cores") or 0.0) for x in items), 4),
            "rss_mib": _rounded(sum(float(x.get("rss_mib") or 0.0) for x in items), 2),
            "rss_mib_max": _rounded(sum(float(x.get("rss_mib_max") or 0.0) for x in items),
                                    2)}


def _per_daemon_means(totals: Dict[str, Any]) -> Dict[str, Any]:
    """Totals with their mean per daemon (the studies quote cores and MiB per RGW)."""
    daemons = int(totals.get("daemons") or 0)
    for key in ("cpu_cores", "rss_mib"):
        if daemons and totals.get(key) is not None:
            totals[key + "_mean"] = _rounded(float(totals[key]) / daemons, 4)
    return totals


def host_figures(server: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Each sampled host's own figures (CPU, interfaces, its OSDs), by host name."""
    found = []
    for host in sorted(server):
        figures = server[host].get("host")
        if isinstance(figures, dict):
            entry = {"host": host}
            entry.update({k: v for k, v in figures.items() if k != "window_s"})
            found.append(entry)
    return found


def _osd_totals(hosts: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The OSDs found on the sampled hosts, added."""
    osds = [h["osd"] for h in hosts if isinstance(h.get("osd"), dict)]
    if not osds:
        return None
    totals: Dict[str, Any] = {"daemons": sum(int(o.get("daemons") or 0) for o in osds),
                              "cpu_cores": _rounded(sum(float(o.get("cpu_cores") or 0.0)
                                                        for o in osds), 4),
                              "rss_mib": _rounded(sum(float(o.get("rss_mib") or 0.0)
                                                      for o in osds), 2)}
    return _per_daemon_means(totals)


def _server_totals(server: Dict[str, Dict[str, Any]], name: str) -> Optional[Dict[str, Any]]:
    """The figures of a program's daemons on every host, added.

    Counted by daemon name, each daemon once (agents on one machine may each
    have found it) and each with its own figures under ``per_daemon``.
    """
    found = [host[name] for host in server.values() if name in host]
    if not found:
        return None
    if any("per_daemon" in x for x in found):
        by_daemon: Dict[str, Dict[str, Any]] = {}
        for x in found:
            for entry in x.get("per_daemon") or []:
                by_daemon.setdefault(str(entry.get("daemon")), entry)
        if not by_daemon:
            return None
        daemons = [_daemon_figures(by_daemon[k]) for k in sorted(by_daemon)]
        totals: Dict[str, Any] = {"daemons": len(daemons)}
        totals.update(_sums(daemons))
        _per_daemon_means(totals)
        totals["per_daemon"] = daemons
        return totals
    totals = {"daemons": sum(int(x.get("daemons", 0)) for x in found)}
    totals.update(_sums(found))
    return _per_daemon_means(totals)


def _merge_host(kept: Dict[str, Any], other: Dict[str, Any]) -> Dict[str, Any]:
    """Two agents' samples of one machine: the daemons each found, each once.

    Agents on hosts that share a machine (network namespaces) each count the
    daemons of their own host; programs counted by name were counted alike.
    """
    merged = dict(kept)
    for program, theirs in other.items():
        ours = merged.get(program)
        if ours is None:
            merged[program] = theirs
            continue
        if not isinstance(ours, dict) or "per_daemon" not in ours or \
                not isinstance(theirs, dict) or "per_daemon" not in theirs:
            continue
        by_daemon = {str(d.get("daemon")): d for d in theirs["per_daemon"]}
        by_daemon.update({str(d.get("daemon")): d for d in ours["per_daemon"]})
        per_daemon = [by_daemon[k] for k in sorted(by_daemon)]
        entry = dict(ours)
        entry.update(_sums(per_daemon))
        entry["cpu_s"] = _rounded(sum(float(d.get("cpu_s") or 0.0) for d in per_daemon), 3)
        entry["daemons"] = len(per_daemon)
        entry["per_daemon"] = per_daemon
        entry["pids"] = sorted({int(p) for d in per_daemon for p in d.get("pids") or []})
        entry["processes"] = dict(theirs.get("processes") or {}, **(ours.get("processes")
                                                                    or {}))
        entry["missing"] = sorted((set(ours.get("missing") or [])
                                   | set(theirs.get("missing") or [])) - set(by_daemon))
        merged[program] = entry
    return merged


def finalize(raw: Dict[str, Any]) -> Dict[str, Any]:
    """Add the derived figures (totals, rates, percentiles) to a raw result."""
    by_op = {op: OpStats.from_dict(d) for op, d in (raw.get("by_op") or {}).items()}
    total = OpStats()
    for st in by_op.values():
        total.merge(st)
    elapsed = float(raw.get("elapsed_s") or 0.0)
    cpu = float(raw.get("client_cpu_s") or 0.0)
    wait = float(raw.get("client_wait_s") or 0.0)
    series = Series.from_list(raw.get("per_second") or [])
    out = dict(raw)
    out["version"] = RESULT_VERSION
    out["ops"] = total.ops
    out["bytes"] = total.bytes
    out["errors"] = total.errors
    out["errors_by_class"] = dict(sorted(total.errors_by_class.items()))
    out["elapsed_s"] = _rounded(elapsed)
    out["ops_per_s"] = _rounded(total.ops / elapsed, 3) if elapsed > 0 else 0.0
    out["throughput_mib_s"] = _rounded(total.bytes / MIB / elapsed, 3) if elapsed > 0 else 0.0
    out["latency_ms"] = total.lat.summary()
    out["ttfb_ms"] = total.ttfb.summary()
    out["client_cpu_s"] = _rounded(cpu, 4)
    out["client_wait_s"] = _rounded(wait, 4)
    out["client_cpu_ms_per_op"] = (_rounded(cpu * 1000.0 / (total.ops + total.errors), 4)
                                   if total.ops + total.errors else None)
    full = int(elapsed)  # complete seconds only
    out["ops_per_s_cv"] = _cv([float(x) for x in series.ops[:full]])
    out["throughput_cv"] = _cv([float(x) for x in series.bytes[:full]])
    out["per_second"] = series.to_list()
    out["histogram"] = total.lat.to_dict()
    out["ttfb_histogram"] = total.ttfb.to_dict()
    ops_out: Dict[str, Any] = {}
    for op, st in sorted(by_op.items()):
        d = st.to_dict()
        d["ops_per_s"] = _rounded(st.ops / elapsed, 3) if elapsed > 0 else 0.0
        d["throughput_mib_s"] = _rounded(st.bytes / MIB / elapsed, 3) if elapsed > 0 else 0.0
        d["latency_ms"] = st.lat.summary()
        d["ttfb_ms"] = st.ttfb.summary()
        ops_out[op] = d
    out["by_op"] = ops_out
    server = raw.get("server") or {}
    out["server"] = server
    for name, key in (("radosgw", "rgw"), ("haproxy", "haproxy")):
        totals = _server_totals(server, name)
        if totals is not None:
            out[key] = totals
        else:
            out.pop(key, None)
    hosts = host_figures(server)
    for key, value in (("host_figures", hosts or None), ("osd", _osd_totals(hosts))):
        if value is not None:
            out[key] = value
        else:
            out.pop(key, None)
    return out


def merge_results(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Merge results of processes or hosts that ran the same job together.

    Counts and histograms add; CPU seconds add; the window is the longest;
    server samples are kept per host (two agents on one machine: each
    daemon once, see ``_merge_host``).
    """
    if not results:
        raise ValueError("nothing to merge")
    by_op: Dict[str, OpStats] = {}
    series = Series()
    cpu = cpu_total = wait = 0.0
    elapsed = 0.0
    samples: List[str] = []
    server: Dict[str, Any] = {}
    hosts: List[str] = []
    exhausted = False
    late = 0.0
    for res in results:
        for op, d in (res.get("by_op") or {}).items():
            by_op.setdefault(op, OpStats()).merge(OpStats.from_dict(d))
        series.merge(Series.from_list(res.get("per_second") or []))
        cpu += float(res.get("client_cpu_s") or 0.0)
        wait += float(res.get("client_wait_s") or 0.0)
        cpu_total += float(res.get("client_cpu_total_s") or 0.0)
        elapsed = max(elapsed, float(res.get("elapsed_s") or 0.0))
        for s in res.get("error_samples") or []:
            if len(samples) < MAX_ERROR_SAMPLES and s not in samples:
                samples.append(s)
        for host, data in (res.get("server") or {}).items():
            server[host] = _merge_host(server[host], data) if host in server else data
        for host in res.get("hosts") or []:
            if host not in hosts:
                hosts.append(host)
        exhausted = exhausted or bool(res.get("exhausted"))
        late = max(late, float(res.get("late_start_s") or 0.0))
    raw: Dict[str, Any] = {}
    first = results[0]
    for name in ECHO_FIELDS:
        if name in first:
            raw[name] = first[name]
    for name in SUMMED_ECHO:
        numbers = [r.get(name) for r in results]
        if all(isinstance(v, (int, float)) for v in numbers):
            raw[name] = sum(float(v) for v in numbers if v is not None)
            if all(isinstance(v, int) for v in numbers):
                raw[name] = int(raw[name])
    raw.update({
        "by_op": {op: st.to_dict() for op, st in by_op.items()},
        "per_second": series.to_list(),
        "client_cpu_s": cpu,
        "client_wait_s": wait,
        "client_cpu_total_s": _rounded(cpu_total, 4),
        "elapsed_s": elapsed,
        "error_samples": samples,
        "server": server,
        "hosts": hosts,
        "exhausted": exhausted,
        "late_start_s": _rounded(late, 4),
    })
    if any("targets" in res for res in results):
        raw["targets"] = merge_targets(res.get("targets") or [] for res in results)
    return finalize(raw)


def summary_text(res: Dict[str, Any]) -> str:
    """A short readable summary of a finalized result."""
    lat = res.get("latency_ms") or {}
    ttfb = res.get("ttfb_ms") or {}

    def ms(v: Optional[float]) -> str:
        return "-" if v is None else ("%.3f" % v if v < 10 else "%.1f" % v)

    lines = [
        "op %s  size %s  concurrency %s  processes %s  %s"
        % (res.get("op"), res.get("object_size"), res.get("concurrency"),
           res.get("processes"), "open loop %s ops/s (latency from each request's intended "
           "start)" % res.get("rate") if res.get("mode") == "open" else "closed loop"),
        "ops %d  errors %d  bytes %d  elapsed %.2f s"
        % (res.get("ops", 0), res.get("errors", 0), res.get("bytes", 0),
           res.get("elapsed_s", 0.0)),
        "throughput %.2f MiB/s  %.1f ops/s" % (res.get("throughput_mib_s", 0.0),
                                               res.get("ops_per_s", 0.0)),
        "latency ms  mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s"
        % tuple(ms(lat.get(k)) for k in ("mean", "p50", "p90", "p99", "p999", "max")),
        "ttfb ms     mean %s  p50 %s  p99 %s"
        % tuple(ms(ttfb.get(k)) for k in ("mean", "p50", "p99")),
        "client CPU %.2f s (%s ms/op)" % (res.get("client_cpu_s", 0.0),
                                          ms(res.get("client_cpu_ms_per_op"))),
    ]
    if res.get("range"):
        lines.append("ranged GET: bytes %s of each object" % res["range"])
    if res.get("working_set_bytes"):
        lines.append("working set %d objects, %.1f MiB" % (
            res.get("objects") or 0, res["working_set_bytes"] / MIB))
    if res.get("errors_by_class"):
        lines.append("errors: " + ", ".join("%s=%d" % kv
                                            for kv in res["errors_by_class"].items()))
    for sample in res.get("error_samples") or []:
        lines.append("  e.g. " + sample)
    by_op = res.get("by_op") or {}
    if len(by_op) > 1:
        for op, d in by_op.items():
            lines.append("  %-6s ops %d  errors %d  %.1f ops/s  p50 %s ms  p99 %s ms"
                         % (op, d["ops"], d["errors"], d["ops_per_s"],
                            ms(d["latency_ms"].get("p50")), ms(d["latency_ms"].get("p99"))))
    targets = res.get("targets") or []
    if len(targets) > 1:
        for target in targets:
            lines.append("  %s  workers %d  ops %d  errors %d"
                         % (target["url"], target["workers"], target["ops"], target["errors"]))
    for key, label in (("rgw", "radosgw"), ("haproxy", "haproxy")):
        if res.get(key):
            s = res[key]
            lines.append("%s: %d %s  %.2f cores  %.1f MiB RSS"
                         % (label, s["daemons"], "daemon(s)" if "per_daemon" in s
                            else "process(es)", s["cpu_cores"], s["rss_mib"]))
            for d in s.get("per_daemon") or []:
                lines.append("  %s on %s  %.2f cores  %.1f MiB RSS"
                             % (d["daemon"], d["host"], d["cpu_cores"], d["rss_mib"]))
    if res.get("interrupted"):
        lines.append("note: interrupted before the end")
    if res.get("exhausted"):
        lines.append("note: ran out of prefilled objects before the end (raise --objects)")
    return "\n".join(lines)
