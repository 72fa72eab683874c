"""Set-up checks of the load engine: what --no-prefill says when objects are unreadable."""
from typing import Any, List

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
