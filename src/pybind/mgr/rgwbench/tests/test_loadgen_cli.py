"""The load engine's command line, run as a separate process."""
import ast
import base64
import io
import json
import os
import re
import socket
import subprocess
import sys
import tarfile
import zipfile
from typing import Any, Dict, Iterator, List

import pytest

from rgwbench.loadgen import bundle
from rgwbench.loadgen.histogram import Histogram
from rgwbench.tests.s3stub import StubS3

_HERE = os.path.dirname(os.path.abspath(__file__))
LOADGEN = os.path.join(os.path.dirname(_HERE), "loadgen")


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key="AK", secret_key="SK").start()
    yield s
    s.stop()


def run(args: List[str], target: str = LOADGEN, timeout: float = 60
        ) -> "subprocess.CompletedProcess[str]":
    # -I -S: no site-packages, no environment: the engine needs only the stdlib
    return subprocess.run([sys.executable, "-I", "-S", target] + args, capture_output=True,
                          text=True, timeout=timeout, cwd="/")


def base(url: str, *extra: str) -> List[str]:
    return ["--endpoint", url, "--access-key", "AK", "--secret-key", "SK",
            "--no-proc-stats"] + list(extra)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)


def test_help_needs_only_the_standard_library() -> None:
    out = run(["--help"])
    assert out.returncode == 0, out.stderr
    for flag in ("--endpoint", "--access-key", "--secret-key", "--ca-bundle", "--insecure",
                 "--op", "--size", "--concurrency", "--duration", "--json", "--rate",
                 "--warmup", "--start-at", "--processes", "--sse-c-key", "--cleanup"):
        assert flag in out.stdout


@pytest.mark.parametrize("args,fragment", [
    (["--op", "copy"], "invalid choice"),
    (["--size", "0"], "at least 1 byte"),
    (["--size", "4XiB"], "bad size"),
    (["--op", "mixed", "--mix", "put=0,get=0"], "sum to 0"),
    (["--op", "mixed", "--mix", "put=1,copy=2"], "unknown op"),
    (["--concurrency", "2", "--processes", "3"], "--processes"),
    (["--duration", "abc"], "not a number"),
    (["--part-size", "1MiB"], "5MiB"),
    (["--proc-daemons", "osd.1"], "not rgw.<id> or haproxy.<id>"),
])
def test_usage_errors_are_one_line_exit_2_and_send_nothing(
        stub: StubS3, args: List[str], fragment: str) -> None:
    out = run(base(stub.url, "--duration", "1", *args))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and fragment in lines[0], out.stderr
    assert stub.total == 0


def test_missing_endpoint_and_bad_url() -> None:
    out = run(["--access-key", "a", "--secret-key", "b"])
    assert out.returncode == 2 and "--endpoint is required" in out.stderr
    out = run(["--endpoint", "ftp://127.0.0.1:1", "--access-key", "a", "--secret-key", "b"])
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1


def test_unreachable_endpoint_exit_1() -> None:
    out = run(base("http://127.0.0.1:%d" % closed_port(), "--duration", "1"))
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "connection refused" in lines[0]


@pytest.mark.parametrize("access,secret,code", [
    ("WRONG", "SK", "InvalidAccessKeyId"),
    ("AK", "WRONG", "SignatureDoesNotMatch"),
])
def test_wrong_keys_exit_1_before_any_load(stub: StubS3, access: str, secret: str,
                                           code: str) -> None:
    out = run(["--endpoint", stub.url, "--access-key", access, "--secret-key", secret,
               "--op", "get", "--duration", "1"])
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and code in lines[0] and "credentials" in lines[0]
    assert dict(stub.counts) == {"list_buckets": 1}  # the preflight, nothing else


def test_not_http_endpoint() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    import threading

    def garbage() -> None:
        conn, _ = srv.accept()
        conn.recv(4096)
        conn.sendall(b"\x15\x03\x01\x00\x02\x02\x0a" * 4 + b"\r\n\r\n")
        conn.close()

    threading.Thread(target=garbage, daemon=True).start()
    out = run(base("http://127.0.0.1:%d" % srv.getsockname()[1], "--duration", "1"))
    srv.close()
    assert out.returncode == 1 and len(out.stderr.splitlines()) == 1


def test_json_run_with_two_processes(stub: StubS3) -> None:
    out = run(base(stub.url, "--op", "put", "--size", "2KiB", "--concurrency", "4",
                   "--processes", "2", "--ops", "400", "--json"))
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    res = json.loads(out.stdout)
    assert res["ops"] == 400 and res["errors"] == 0 and res["bytes"] == 400 * 2048
    assert stub.counts["put"] == 400
    assert Histogram.from_dict(res["histogram"]).count == 400
    assert sum(p["ops"] for p in res["per_second"]) == 400
    assert res["processes"] == 2 and res["concurrency"] == 4
    assert res["client_cpu_s"] > 0 and res["client_cpu_ms_per_op"] > 0
    for key in ("ops", "errors", "errors_by_class", "bytes", "elapsed_s", "client_cpu_s",
                "ops_per_s", "throughput_mib_s", "latency_ms", "ttfb_ms", "per_second",
                "histogram", "op", "object_size", "concurrency"):
        assert key in res
    assert set(res["latency_ms"]) >= {"mean", "p50", "p90", "p99", "p999", "max"}


def test_readable_summary_and_progress(stub: StubS3) -> None:
    out = run(base(stub.url, "--op", "get", "--objects", "10", "--duration", "2",
                   "--warmup", "0.5", "--concurrency", "2", "--progress"))
    assert out.returncode == 0, out.stderr
    assert "latency ms" in out.stdout and "ops/s" in out.stdout
    progress = [line for line in out.stderr.splitlines() if "ops/s" in line]
    assert len(progress) >= 2 and any("measuring" in line for line in progress)
    assert any("prefill" in line for line in out.stderr.splitlines())


def test_zipapp_runs_with_the_standard_library_only(stub: StubS3, tmp_path: Any) -> None:
    pyz = bundle.build(str(tmp_path / "loadgen.pyz"))
    out = run(["--help"], target=pyz)
    assert out.returncode == 0 and "--endpoint" in out.stdout
    out = run(base(stub.url, "--op", "put", "--ops", "20", "--json"), target=pyz)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ops"] == 20


def test_the_agents_engine_runs_without_its_comments(stub: StubS3, tmp_path: Any) -> None:
    # What an agent's container unpacks from its spec: the agent's modules, comments
    # dropped; a load runs with them alone, the steps the agent takes.
    from rgwbench.agents.launchers import bootstrap_script
    engine = re.search(r'ENGINE = """([^"]+)"""', bootstrap_script())
    assert engine is not None
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(engine.group(1))), mode="r:xz") as tar:
        tar.extractall(str(tmp_path))
        shipped = sorted(tar.getnames())
    assert shipped == ["loadgen/" + n for n in bundle.needed_by("agent.py")]
    assert "# " not in (tmp_path / "loadgen" / "runner.py").read_text()
    load = ("import json\n"
            "from loadgen import prepare\n"
            "from loadgen.runner import run_load\n"
            "from loadgen.workload import Job\n"
            "job = Job(endpoint=%r, access_key='AK', secret_key='SK', op='put', ops=20,\n"
            "          duration_s=None, proc_stats=False).validate()\n"
            "prepare.preflight(job)\n"
            "prepare.ensure_buckets(job)\n"
            "print(json.dumps(run_load(job)))\n" % stub.url)
    out = subprocess.run([sys.executable, "-c", load], cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ops"] == 20


def test_without_comments_the_code_does_the_same() -> None:
    source = ('''"""A module."""  # its docstring
x = "kept"  # a comment
def f(a):
    """Docstring."""
    # a comment alone
    s = """a string that is a value"""
    return a + len(s)
class C:
    "doc"
''')
    stripped = bundle.without_comments(source)
    assert "#" not in stripped and "Docstring" not in stripped and "A module" not in stripped
    names: Dict[str, Any] = {}
    exec(compile(stripped, "m", "exec"), names)
    assert names["x"] == "kept" and names["f"](1) == 1 + len("a string that is a value")
    assert names["f"].__doc__ == "" and names["C"].__doc__ == ""


def test_the_engine_ships_no_test_support(tmp_path: Any) -> None:
    # The stub S3 server belongs to the tests: not in the package, not in an agent's zipapp.
    modules = sorted(n for n in os.listdir(LOADGEN) if n.endswith(".py"))
    assert "s3stub.py" not in modules
    with zipfile.ZipFile(bundle.build(str(tmp_path / "loadgen.pyz"))) as zf:
        shipped = zf.namelist()
    assert shipped == ["__main__.py"] + ["loadgen/" + n for n in modules]


def test_every_engine_module_imports_only_itself_and_the_standard_library() -> None:
    # -I -S above proves it for the code a run reaches; this reads every module.
    for name in sorted(n for n in os.listdir(LOADGEN) if n.endswith(".py")):
        with open(os.path.join(LOADGEN, name)) as f:
            tree = ast.parse(f.read(), name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                tops = [(node.module or "").split(".")[0]]
            else:
                # "from .. import": out of the package, into the mgr module
                assert not isinstance(node, ast.ImportFrom) or node.level == 1, name
                continue
            for top in tops:
                assert top in sys.stdlib_module_names, "%s imports %s" % (name, top)


@pytest.mark.parametrize("processes", ["1", "2"])
def test_sigterm_stops_reports_and_cleans_up(stub: StubS3, processes: str) -> None:
    import signal
    import time
    proc = subprocess.Popen([sys.executable, "-I", "-S", LOADGEN] + base(
        stub.url, "--op", "put", "--concurrency", "4", "--processes", processes,
        "--duration", "30", "--cleanup", "--json"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    while stub.counts["put"] < 100 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    res = json.loads(out)
    assert res["interrupted"] is True and res["errors"] == 0
    assert 0 < res["ops"] <= stub.counts["put"] and res["elapsed_s"] < 20
    assert res["cleanup"]["buckets_deleted"] == 1 and stub.buckets == {}
    assert "interrupted" in err


def test_keys_that_begin_with_a_dash_are_taken_with_equals() -> None:
    # radosgw-admin makes secret keys like "-ajJ57GA...": "--secret-key -aj..." would
    # read as an option, "--secret-key=-aj..." and the environment both work.
    dashed = StubS3(access_key="-AK", secret_key="-SK").start()
    try:
        out = run(["--endpoint", dashed.url, "--access-key=-AK", "--secret-key=-SK",
                   "--no-proc-stats", "--op", "put", "--ops", "2", "--concurrency", "1",
                   "--json"])
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["ops"] == 2
    finally:
        dashed.stop()


def test_the_daemons_to_sample_are_named_on_the_command_line() -> None:
    from rgwbench.loadgen.cli import build_parser, job_from_args
    args = build_parser().parse_args([
        "--endpoint", "http://h:80", "--proc-daemons", "rgw.foo.h1.abc@h1, haproxy.i.h1.x",
        "--proc-fsid", "f00"])
    job = job_from_args(args)
    assert job.proc_daemons == {"rgw.foo.h1.abc": "h1", "haproxy.i.h1.x": socket.gethostname()}
    assert job.proc_fsid == "f00"
    assert job_from_args(build_parser().parse_args(["--endpoint", "http://h"])).proc_daemons \
        is None
