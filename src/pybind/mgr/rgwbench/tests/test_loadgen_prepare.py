"""Set-up checks of the load engine: what --no-prefill says when objects are unreadable."""
import time
from typing import Any, List, Tuple

import pytest


from rgwbench.loadgen import prepare
from rgwbench.loadgen.errors import EndpointError, UsageError
from rgwbench.loadgen.http import Response
from rgwbench.loadgen.workload import Job


class _HeadOnly:
    """A client whose HEAD answers with one status."""

    def __init__(self, status: int, reason: str) -> None:
        self.status = status
        self.reason = reason
        self.heads: List[str] = []

    def head_object(self, bucket: str, key: str) -> Response:
        self.heads.append("%s/%s" % (bucket, key))
        return Response(self.status, self.reason, {}, b"", 0, 0)

    def close(self) -> None:
        pass


def _job(**extra: Any) -> Job:
    return Job(endpoint="http://127.0.0.1:1", access_key="AK", secret_key="SK", op="get",
               objects=5, prefill=False, **extra).validate()


@pytest.mark.parametrize("sse_key,fragment", [
    (None, "objects written with SSE-C need the same --sse-c-key"),
    ("11" * 32, "is --sse-c-key the key they were written with?"),
])
def test_unreadable_prefilled_objects_name_the_sse_c_key(
        monkeypatch: Any, sse_key: Any, fragment: str) -> None:
    client = _HeadOnly(400, "Bad Request")
    monkeypatch.setattr(prepare, "make_client", lambda job, **kw: client)
    with pytest.raises(EndpointError) as info:
        prepare.check_prefilled(_job(sse_c_key=sse_key))
    text = str(info.value)
    assert text.startswith("checking rgwbench-0/rgwbench/obj/00000000: HTTP 400 Bad Request")
    assert fragment in text and "\n" not in text
    assert client.heads == ["rgwbench-0/rgwbench/obj/00000000"]


def test_missing_prefilled_objects_are_a_usage_error(monkeypatch: Any) -> None:
    client = _HeadOnly(404, "Not Found")
    monkeypatch.setattr(prepare, "make_client", lambda job, **kw: client)
    with pytest.raises(UsageError, match="is missing: run without --no-prefill"):
        prepare.check_prefilled(_job())


def test_other_statuses_carry_no_sse_hint(monkeypatch: Any) -> None:
    monkeypatch.setattr(prepare, "make_client",
                        lambda job, **kw: _HeadOnly(503, "Service Unavailable"))
    with pytest.raises(EndpointError) as info:
        prepare.check_prefilled(_job())
    assert str(info.value).endswith("HTTP 503 Service Unavailable")


class _SlowUploads:
    """A client whose uploads each take `pause` seconds; it keeps the keys written."""

    def __init__(self, written: List[str], pause: float) -> None:
        self.written = written
        self.pause = pause

    def upload(self, bucket: str, key: str, body: bytes, threshold: int,
               part: int) -> Response:
        time.sleep(self.pause)
        self.written.append(key)
        return Response(200, "OK", {}, b"", 0, 0)

    def close(self) -> None:
        pass


def _prefill(monkeypatch: Any, pause: float, **extra: Any) -> Tuple[int, List[str], Job]:
    written: List[str] = []
    monkeypatch.setattr(prepare, "make_client", lambda job: _SlowUploads(written, pause))
    job = Job(endpoint="http://127.0.0.1:1", access_key="AK", secret_key="SK", op="get",
              concurrency=8, **extra).validate()
    return prepare.prefill(job), written, job


def test_a_prefill_past_its_time_wrote_the_first_objects_in_key_order(
        monkeypatch: Any) -> None:
    count, written, job = _prefill(monkeypatch, 0.01, objects=100000, prefill_s=0.3)
    assert prepare.PREFILL_FLOOR < count < 100000
    # Exactly objects 0..count-1: what the load then reads is all there.
    assert sorted(written) == sorted(job.prefill_key(i)[1] for i in range(count))


def test_a_prefill_writes_its_floor_however_short_its_time(monkeypatch: Any) -> None:
    count, written, _ = _prefill(monkeypatch, 0.05, objects=1000, prefill_s=0.001)
    assert count == len(written) >= prepare.PREFILL_FLOOR


def test_a_prefill_without_a_time_writes_every_object(monkeypatch: Any) -> None:
    count, written, _ = _prefill(monkeypatch, 0.0, objects=300)
    assert count == len(set(written)) == 300


def test_a_negative_prefill_time_is_refused() -> None:
    with pytest.raises(UsageError, match="--prefill-time"):
        Job(endpoint="http://127.0.0.1:1", access_key="AK", secret_key="SK", op="get",
            prefill_s=-1).validate()
