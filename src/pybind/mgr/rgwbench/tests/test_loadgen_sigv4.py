"""SigV4 signer of the load engine, checked against botocore."""
import datetime
import socket
import threading
from typing import Any, Dict, List, Tuple
from unittest import mock

import pytest

from rgwbench.loadgen import sigv4
from rgwbench.loadgen.payload import Pattern
from rgwbench.loadgen.s3 import Endpoint, S3Client
from rgwbench.loadgen.sse import SSE

botocore = pytest.importorskip("botocore")
from botocore.auth import S3SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402
from botocore.utils import percent_encode  # noqa: E402

AK = "AKIDEXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
WHEN = datetime.datetime(2024, 2, 29, 23, 59, 58)
KEYS = ["plain", "a b/c d", "dir/sub dir/ünïcödé-€.txt", "we+ird&key=~*'()!$,;:@",
        "slash//double/", "%41already-percent", "日本語/キー"]


def _botocore_auth(method: str, url: str, headers: Dict[str, str], body: bytes = b"",
                   params: Any = None, region: str = "us-east-1",
                   unsigned: bool = False, when: datetime.datetime = WHEN) -> str:
    req = AWSRequest(method=method, url=url, headers=dict(headers), data=body,
                     params=params or {})
    if unsigned:
        req.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    auth = S3SigV4Auth(Credentials(AK, SK), "s3", region)
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        auth.add_auth(req)
    return str(req.headers["Authorization"])


@pytest.mark.parametrize("key", KEYS)
def test_path_encoding_matches_botocore(key: str) -> None:
    assert sigv4.encode_path("/bucket/" + key) == percent_encode("/bucket/" + key, safe="/~")


@pytest.mark.parametrize("key", KEYS)
def test_get_object_signature(key: str) -> None:
    path = sigv4.encode_path("/bkt/" + key)
    date = WHEN.strftime("%Y%m%dT%H%M%SZ")
    ours = sigv4.Signer(AK, SK).authorization(
        "GET", path, "", [("host", "127.0.0.1:8000"), ("x-amz-date", date),
                          ("x-amz-content-sha256", sigv4.EMPTY_SHA256)], sigv4.EMPTY_SHA256)
    theirs = _botocore_auth("GET", "http://127.0.0.1:8000" + path,
                            {"Host": "127.0.0.1:8000"})
    assert ours == theirs


def test_query_with_special_characters() -> None:
    params = [("list-type", "2"), ("prefix", "a b/ü&=+?#%"), ("max-keys", "100"),
              ("start-after", "x~y*z'()"), ("delimiter", "/"), ("uploads", "")]
    date = WHEN.strftime("%Y%m%dT%H%M%SZ")
    ours = sigv4.Signer(AK, SK, "eu-west-1").authorization(
        "GET", "/bkt", sigv4.canonical_query(params),
        [("Host", "localhost:7480"), ("X-Amz-Date", date),
         ("X-Amz-Content-SHA256", sigv4.EMPTY_SHA256)], sigv4.EMPTY_SHA256)
    theirs = _botocore_auth("GET", "http://localhost:7480/bkt", {}, params=params,
                            region="eu-west-1")
    assert ours == theirs


def test_signed_payload_and_extra_headers() -> None:
    body = Pattern(7, period=1 << 16).body(100000, 1234)
    data = b"".join(bytes(c) for c in body.chunks())
    key = "k ey/ü"
    path = sigv4.encode_path("/bkt/" + key)
    sse = SSE("sse-c", customer_key=b"k" * 32)
    headers = dict(sse.write)
    headers["Content-Type"] = "application/octet-stream"
    headers["X-Amz-Meta-Note"] = "  spaced    out   value "
    date = WHEN.strftime("%Y%m%dT%H%M%SZ")
    pairs: List[Tuple[str, str]] = [("host", "h:1"), ("x-amz-date", date),
                                    ("x-amz-content-sha256", body.sha256_hex())]
    pairs += list(headers.items())
    ours = sigv4.Signer(AK, SK).authorization("PUT", path, "", pairs, body.sha256_hex())
    theirs = _botocore_auth("PUT", "http://h:1" + path, dict(headers, Host="h:1"), data)
    assert ours == theirs


def test_unsigned_payload_over_https() -> None:
    date = WHEN.strftime("%Y%m%dT%H%M%SZ")
    path = "/bkt/obj"
    query = sigv4.canonical_query([("partNumber", "3"), ("uploadId", "2~abc/def+g==")])
    ours = sigv4.Signer(AK, SK).authorization(
        "PUT", path, query, [("host", "rgw.example:8443"), ("x-amz-date", date),
                             ("x-amz-content-sha256", sigv4.UNSIGNED_PAYLOAD)],
        sigv4.UNSIGNED_PAYLOAD)
    theirs = _botocore_auth("PUT", "https://rgw.example:8443" + path,
                            {"Content-MD5": "x"}, b"data",
                            params={"partNumber": "3", "uploadId": "2~abc/def+g=="},
                            unsigned=True)
    # botocore signs the Content-MD5 it was given; sign the same set
    ours_md5 = sigv4.Signer(AK, SK).authorization(
        "PUT", path, query, [("host", "rgw.example:8443"), ("x-amz-date", date),
                             ("x-amz-content-sha256", sigv4.UNSIGNED_PAYLOAD),
                             ("content-md5", "x")], sigv4.UNSIGNED_PAYLOAD)
    assert "UNSIGNED-PAYLOAD" not in theirs  # the header value, not in Authorization
    assert ours_md5 == theirs
    assert ours != theirs  # a different header set must give another signature


def test_signing_key_changes_with_the_day() -> None:
    signer = sigv4.Signer(AK, SK)
    headers = [("host", "h"), ("x-amz-content-sha256", sigv4.EMPTY_SHA256)]
    for when in (WHEN, WHEN + datetime.timedelta(seconds=3)):  # crosses midnight
        date = when.strftime("%Y%m%dT%H%M%SZ")
        ours = signer.authorization("GET", "/", "", headers + [("x-amz-date", date)],
                                    sigv4.EMPTY_SHA256)
        assert ours == _botocore_auth("GET", "http://h/", {}, when=when)


@pytest.mark.parametrize("static", [
    {},
    {"content-type": "text/plain"},
    {"x-amz-copy-source": "/a/b"},  # sorts between content-sha256 and date
    {"x-amz-server-side-encryption": "aws:kms", "a-first": "1", "zz-last": " 2  3 "},
])
def test_header_template_equals_general_canonical_request(static: Dict[str, str]) -> None:
    tmpl = sigv4.HeaderTemplate("host:1", static)
    signer = sigv4.Signer(AK, SK)
    pairs = [("host", "host:1"), ("x-amz-date", "20240101T000000Z"),
             ("x-amz-content-sha256", "abc")] + list(static.items())
    general, signed = signer.canonical_request("PUT", "/b/k", "x=1", pairs, "abc")
    assert tmpl.canonical("PUT", "/b/k", "x=1", "abc", "20240101T000000Z") == general
    assert tmpl.signed == signed


class _Capture:
    """A socket server that records raw requests and answers 200."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.requests: List[Tuple[str, Dict[str, str], bytes]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0"))
            while len(buf) < length:
                buf += conn.recv(65536)
            body, buf = buf[:length], buf[length:]
            self.requests.append((lines[0], headers, body))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")


def _check_with_botocore(line: str, headers: Dict[str, str], body: bytes, port: int) -> None:
    """Re-sign what the engine sent with botocore; the signatures must agree."""
    method, target, _ = line.split(" ")
    auth = headers["authorization"]
    signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    # everything sent is signed except these two
    assert set(headers) - set(signed) == {"authorization", "content-length"}
    when = datetime.datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    sent = {name: headers[name] for name in signed if name != "x-amz-date"}
    unsigned = headers["x-amz-content-sha256"] == sigv4.UNSIGNED_PAYLOAD
    theirs = _botocore_auth(method, "http://127.0.0.1:%d%s" % (port, target), sent, body,
                            unsigned=unsigned, when=when)
    assert auth == theirs


@pytest.mark.parametrize("signing", ["signed", "unsigned"])
def test_engine_requests_verify_with_botocore(signing: str) -> None:
    cap = _Capture()
    client = S3Client(Endpoint("http://127.0.0.1:%d" % cap.port), sigv4.Signer(AK, SK),
                      SSE("sse-c", customer_key=bytes(range(32))),
                      payload_signing=signing)
    body = Pattern(3).body(5000, 77)
    key = sigv4.encode_path("dir/ü n+i=c&o~de")
    client.put_object("bkt", key, body)
    client.get_object("bkt", key)
    client.head_object("bkt", key)
    client.delete_object("bkt", key)
    client.list_objects("bkt", prefix="a b/ü&=", max_keys=7, token="tok/en+")
    client.upload_part("bkt", key, "id/+=~", 2, body)
    client.complete_multipart("bkt", key, "id/+=~", ['"etag1"', '"etag2"'])
    client.request("POST", "/bkt", [("delete", "")], {"Content-MD5": "abc=="}, b"<x/>")
    client.close()
    cap.thread.join(5)
    assert len(cap.requests) == 8
    for line, headers, body_bytes in cap.requests:
        _check_with_botocore(line, headers, body_bytes, cap.port)
    assert cap.requests[0][2] == b"".join(bytes(c) for c in body.chunks())
    put_headers = cap.requests[0][1]
    assert put_headers["x-amz-server-side-encryption-customer-algorithm"] == "AES256"
    expected_hash = sigv4.UNSIGNED_PAYLOAD if signing == "unsigned" else body.sha256_hex()
    assert put_headers["x-amz-content-sha256"] == expected_hash
