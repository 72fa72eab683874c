"""Workload settings, payloads and SSE headers of the load engine."""
import base64
import hashlib
import json
import random
from collections import Counter
from typing import Dict

import pytest


from rgwbench.loadgen.errors import UsageError
from rgwbench.loadgen.payload import Pattern, Verifier
from rgwbench.loadgen.sse import SSE, parse_customer_key
from rgwbench.loadgen.workload import (
    Job, OpChooser, SizeSpec, format_size, parse_mix, parse_size)


@pytest.mark.parametrize("text,value", [
    ("4KiB", 4096), ("4kib", 4096), ("4 KiB", 4096), ("4K", 4096), ("4KB", 4000),
    ("1MiB", 1 << 20), ("1MB", 10 ** 6), ("2GiB", 2 << 30), ("3GB", 3 * 10 ** 9),
    ("512", 512), ("512B", 512), ("1.5MiB", 3 << 19), ("1TiB", 1 << 40),
])
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "KiB", "4XB", "-4KiB", "4.1B", "4 K i B", "1e3"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_size(text)


def test_size_specs() -> None:
    assert SizeSpec("4KiB").fixed == 4096
    spec = SizeSpec("4KiB,1MiB")
    rng = random.Random(1)
    picks = Counter(spec.pick(rng) for _ in range(2000))
    assert set(picks) == {4096, 1 << 20}
    assert min(picks.values()) > 800
    rng_spec = SizeSpec("1KiB-2KiB")
    values = [rng_spec.pick(rng) for _ in range(2000)]
    assert min(values) >= 1024 and max(values) <= 2048
    assert len(set(values)) > 500
    assert rng_spec.for_index(5, 17) == rng_spec.for_index(5, 17)
    assert format_size(4096) == "4KiB" and format_size(1000) == "1000B"
    for bad in ("0", "0B", "0KiB,4KiB", "2KiB-1KiB", "6TiB"):
        with pytest.raises(UsageError):
            SizeSpec(bad)


def test_mix() -> None:
    assert parse_mix("put=1,get=3") == {"put": 1.0, "get": 3.0}
    assert parse_mix("put=1,get=0") == {"put": 1.0}
    for bad in ("put=0,get=0", "foo=1", "put", "put=-1", "put=x", "", "put=nan"):
        with pytest.raises(UsageError):
            parse_mix(bad)
    chooser = OpChooser({"put": 1.0, "get": 3.0})
    rng = random.Random(2)
    counts = Counter(chooser.choose(rng.random()) for _ in range(40000))
    assert set(counts) == {"put", "get"}
    assert counts["get"] / counts["put"] == pytest.approx(3.0, rel=0.05)
    assert chooser.choose(0.0) == "put" and chooser.choose(0.999999) == "get"


def _job(**kw: object) -> Job:
    base: Dict[str, object] = dict(endpoint="http://127.0.0.1:1", access_key="a",
                                   secret_key="s")
    base.update(kw)
    return Job(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("kw,fragment", [
    ({"op": "copy"}, "unknown op"),
    ({"size": "0"}, "at least 1 byte"),
    ({"concurrency": 0}, "--concurrency"),
    ({"processes": 3, "concurrency": 2}, "--processes"),
    ({"duration_s": None, "ops": None}, "--duration or --ops"),
    ({"buckets": 0}, "--buckets"),
    ({"bucket_prefix": "Bad_Name"}, "--bucket-prefix"),
    ({"key_prefix": "a b"}, "--key-prefix"),
    ({"part_size": "1MiB"}, "5MiB"),
    ({"rate": 0.0}, "--rate"),
    ({"op": "mixed", "mix": {"put": 0.0}}, "sum to 0"),
    ({"op": "put", "mix": {"put": 1.0}}, "--mix needs --op mixed"),
    ({"insecure": True, "ca_bundle": "/etc/hostname"}, "not both"),
    ({"sse_s3": True, "sse_kms_key_id": "k"}, "one of"),
    ({"sse_c_key": "short"}, "32 bytes"),
    ({"endpoint": "ftp://x"}, None),
    ({"op": "get", "range": "1KiB"}, "START-END"),
    ({"op": "get", "range": "2KiB-1KiB"}, "empty"),
    ({"op": "get", "range": "0-8KiB"}, "past the end of the smallest object (4KiB)"),
    ({"op": "get", "size": "4KiB,1MiB", "range": "0-64KiB"}, "smallest object (4KiB)"),
    ({"op": "put", "range": "0-1KiB"}, "--range needs a workload that GETs"),
])
def test_job_validation(kw: dict, fragment: str) -> None:
    job = _job(**kw)
    if fragment is None:  # endpoint problems show when the endpoint is parsed
        from rgwbench.loadgen.s3 import Endpoint
        with pytest.raises(UsageError):
            Endpoint(job.endpoint)
        return
    with pytest.raises(UsageError) as err:
        job.validate()
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_job_round_trip_and_defaults() -> None:
    job = _job(op="mixed", mix={"get": 2.0, "put": 1.0}, size="4KiB-8KiB").validate()
    data = json.loads(json.dumps(job.to_dict()))
    again = Job.from_dict(data)
    assert again == job
    assert job.run_tag and len(job.run_tag) == 8
    with pytest.raises(UsageError):
        Job.from_dict(dict(data, bogus=1))
    assert _job(op="get", size="4KiB").object_count() == 1000
    assert _job(op="get", size="256MiB").object_count() == 4
    assert _job(op="delete", ops=123).object_count() == 123
    assert _job(op="put").reads_prefilled is False
    assert _job(op="mixed").reads_prefilled is True
    assert _job(buckets=3).bucket_names == ["rgwbench-0", "rgwbench-1", "rgwbench-2"]


def test_ranged_get_and_working_set() -> None:
    job = _job(op="mixed", size="1MiB-3MiB", range="512KiB-1MiB", objects=10).validate()
    assert job.range_bytes == (512 << 10, 1 << 20)
    assert job.range_header == "bytes=524288-1048575"
    assert job.working_set_bytes() == 10 * (2 << 20)
    assert _job(op="get").range_header == ""
    assert _job(op="get", size="4KiB").working_set_bytes() == 1000 * 4096
    assert _job(op="put").working_set_bytes() is None


def test_payload_chunks_are_bounded_and_deterministic() -> None:
    pattern = Pattern(seed=9, period=1 << 16)
    body = pattern.body(300000, pattern.offset_for("some/key"))
    chunks = list(body.chunks())
    assert max(len(c) for c in chunks) <= 1 << 16
    assert sum(len(c) for c in chunks) == 300000
    data = b"".join(bytes(c) for c in chunks)
    base = bytes(pattern.data[:pattern.period])
    offset = body.offset
    assert all(data[i] == base[(offset + i) % pattern.period] for i in range(0, 300000, 997))
    assert body.sha256_hex() == hashlib.sha256(data).hexdigest()
    assert Pattern(seed=9, period=1 << 16).data == pattern.data
    assert Pattern(seed=10, period=1 << 16).data != pattern.data
    # the slices share the pattern's memory: no copy per request
    assert all(c.obj is pattern.data for c in chunks)


def test_verifier_accepts_good_and_rejects_bad_bodies() -> None:
    pattern = Pattern(seed=4, period=4096)
    body = pattern.body(10000, 123)
    data = bytearray(b"".join(bytes(c) for c in body.chunks()))
    good = Verifier(pattern, 123)
    for i in range(0, len(data), 333):  # odd chunk boundaries
        good(memoryview(data)[i:i + 333])
    assert good.ok and good.position == 10000
    data[7777] ^= 1
    bad = Verifier(pattern, 123)
    bad(memoryview(data))
    assert not bad.ok
    wrong_key = Verifier(pattern, 124)
    wrong_key(memoryview(bytes(data[:100])))  # right bytes, wrong start offset
    assert not wrong_key.ok


def test_sse_headers() -> None:
    key = bytes(range(32))
    sse = SSE("sse-c", customer_key=key)
    assert sse.write == sse.read
    assert sse.write["x-amz-server-side-encryption-customer-algorithm"] == "AES256"
    assert base64.b64decode(sse.write["x-amz-server-side-encryption-customer-key"]) == key
    assert base64.b64decode(sse.write["x-amz-server-side-encryption-customer-key-md5"]) == \
        hashlib.md5(key).digest()
    kms = SSE.from_settings(kms_key_id="testkey-1")
    assert kms.write == {"x-amz-server-side-encryption": "aws:kms",
                         "x-amz-server-side-encryption-aws-kms-key-id": "testkey-1"}
    assert kms.read == {}
    s3 = SSE.from_settings(sse_s3=True)
    assert s3.write == {"x-amz-server-side-encryption": "AES256"} and s3.read == {}
    assert SSE.from_settings().write == {}
    assert parse_customer_key(key.hex()) == key
    assert parse_customer_key(base64.b64encode(key).decode()) == key
    assert parse_customer_key("k" * 32) == b"k" * 32
    assert "key" not in json.dumps(sse.to_dict()).replace("mode", "")
