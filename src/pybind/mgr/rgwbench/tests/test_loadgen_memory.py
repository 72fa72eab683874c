"""Large objects stream through bounded buffers: never a whole object in memory."""
import json
import os
import subprocess
import sys
import tracemalloc
from typing import Iterator, List

import pytest

from rgwbench.loadgen.payload import Pattern
from rgwbench.loadgen.s3 import Endpoint, S3Client
from rgwbench.tests.s3stub import StubS3
from rgwbench.loadgen.sigv4 import Signer

MIB = 1 << 20
SIZE = 256 * MIB
_HERE = os.path.dirname(os.path.abspath(__file__))
LOADGEN = os.path.join(os.path.dirname(_HERE), "loadgen")


@pytest.fixture
def stub() -> Iterator[StubS3]:
    s = StubS3(access_key="AK", secret_key="SK", check_signatures=False).start()
    yield s
    s.stop()


def test_256mib_put_and_get_allocate_little(stub: StubS3) -> None:
    client = S3Client(Endpoint(stub.url), Signer("AK", "SK"), payload_signing="unsigned")
    assert client.create_bucket("big").status == 200
    pattern = Pattern(1)
    body = pattern.body(SIZE)
    chunk_sizes: List[int] = []
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        resp = client.put_object("big", "obj", body)
        assert resp.status == 200
        resp = client.get_object("big", "obj", sink=lambda mv: chunk_sizes.append(len(mv)))
        assert resp.status == 200 and resp.nbytes == SIZE
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    client.close()
    assert stub.buckets["big"]["obj"].size == SIZE  # the whole object went through
    assert sum(chunk_sizes) == SIZE and max(chunk_sizes) <= 256 * 1024
    # client and (in-process) stub together: a few MiB, not hundreds
    assert peak < 16 * MIB, peak  # measured: about 0.15 MiB
    assert max(len(c) for c in body.chunks()) <= pattern.period


_WRAPPER = """
import runpy, sys
code = 0
sys.argv[:2] = [sys.argv[1]]  # as if the engine had been run directly
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    code = exc.code
finally:
    with open("/proc/self/status") as f:
        hwm = [line for line in f if line.startswith("VmHWM:")][0]
    sys.stderr.write("PEAK-RSS-KIB %s\\n" % hwm.split()[1])
sys.exit(code)
"""


def _max_rss_mib(args: List[str]) -> "tuple[float, dict]":
    """Run the CLI (one process) and read its own peak RSS (VmHWM) at exit."""
    out = subprocess.run([sys.executable, "-I", "-S", "-c", _WRAPPER, LOADGEN] + args,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    peak = [line for line in out.stderr.splitlines() if line.startswith("PEAK-RSS-KIB")]
    return int(peak[0].split()[1]) / 1024.0, json.loads(out.stdout)


def test_cli_rss_stays_bounded_with_256mib_objects(stub: StubS3) -> None:
    common = ["--endpoint", stub.url, "--access-key", "AK", "--secret-key", "SK",
              "--no-proc-stats", "--size", "256MiB", "--concurrency", "4",
              "--payload-signing", "unsigned", "--json"]
    rss, res = _max_rss_mib(common + ["--op", "put", "--ops", "4"])
    assert res["ops"] == 4 and res["bytes"] == 4 * SIZE
    assert stub.counts["part"] == 4 * 16  # 64 MiB threshold, 16 MiB parts
    assert rss < 64, rss  # measured: about 26 MiB
    rss, res = _max_rss_mib(common + ["--op", "get", "--ops", "4", "--objects", "1"])
    assert res["ops"] == 4 and res["bytes"] == 4 * SIZE
    assert rss < 64, rss  # measured: about 26 MiB
