"""A small in-memory S3 server for the tests (loopback only).

It checks SigV4 signatures (with this package's signer: it proves that
what the client sends matches what it signed, not that the signer is right;
the unit tests compare the signer with botocore for that), serves the
operations the engine uses, counts requests by kind, and can inject faults
(an HTTP error or a delay) through a hook.  Objects above ``keep_limit``
bytes are stored as their size only and read back as zero bytes, so large
objects cost no memory.

    stub = StubS3(access_key="AK", secret_key="SK").start()
    ... stub.url ...
    stub.stop()
"""

import collections
import hashlib
import re
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Counter, Dict, List, Optional, Tuple
from urllib.parse import unquote

from rgwbench.loadgen.sigv4 import UNSIGNED_PAYLOAD, Signer, canonical_query

#: fault hook: (kind, method, path) -> None, or (status, delay seconds);
#: status 0 means "only delay, then answer normally", -1 "close the
#: connection without answering"
FaultHook = Callable[[str, str, str], Optional[Tuple[int, float]]]

_AUTH_RE = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/"
                      r"aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$")
_KEY_RE = re.compile(rb"<Key>([^<]*)</Key>")
_ZEROS = bytes(1 << 16)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that time out or go away are part of the tests


class StoredObject:
    __slots__ = ("size", "data", "etag")

    def __init__(self, size: int, data: Optional[bytes], etag: str) -> None:
        self.size = size
        self.data = data
        self.etag = etag


def _xml_error(code: str, message: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code>'
            "<Message>%s</Message></Error>" % (code, message)).encode("utf-8")


class StubS3:
    """The server; ``start()`` serves on a thread, ``stop()`` ends it."""

    def __init__(self, access_key: str = "AK", secret_key: str = "SK",
                 host: str = "127.0.0.1", port: int = 0,
                 tls: Optional[ssl.SSLContext] = None, check_signatures: bool = True,
                 chunked_lists: bool = True, keep_limit: int = 1 << 20) -> None:
        self.access_key = access_key
        self.secret_key = secret_key
        self.check_signatures = check_signatures
        self.chunked_lists = chunked_lists
        self.keep_limit = keep_limit
        self.fault: Optional[FaultHook] = None
        self.lock = threading.Lock()
        self.buckets: Dict[str, Dict[str, StoredObject]] = {}
        # the body of each bucket's CreateBucket (b"": none)
        self.bucket_bodies: Dict[str, bytes] = {}
        self.uploads: Dict[str, Dict[int, StoredObject]] = {}
        self.counts: Counter[str] = collections.Counter()
        self.log: List[Tuple[str, str, str]] = []   # (kind, method, path), bounded
        self.auth_failures: List[str] = []
        self.ranges: List[str] = []   # the Range headers of GETs, as sent
        self.max_log = 10000
        self._signers: Dict[str, Signer] = {}
        handler = self._handler_class()
        self.server = _Server((host, port), handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.tls = tls is not None
        self._thread: Optional[threading.Thread] = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.port)

    @property
    def total(self) -> int:
        with self.lock:
            return sum(self.counts.values())

    def start(self) -> "StubS3":
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> "StubS3":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def signer(self, region: str) -> Signer:
        if region not in self._signers:
            self._signers[region] = Signer(self.access_key, self.secret_key, region)
        return self._signers[region]

    def _handler_class(self) -> type:
        stub = self

        class Handler(_Handler):
            pass

        Handler.stub = stub
        return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stub: StubS3

    def setup(self) -> None:
        super().setup()
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass

    # -- plumbing --------------------------------------------------------

    def _send(self, status: int, body: bytes = b"", headers: Optional[Dict[str, str]] = None,
              length: Optional[int] = None) -> None:
        lines = ["HTTP/1.1 %d %s\r\n" % (status, self.responses.get(status, ("",))[0]),
                 "Server: s3stub\r\n"]
        for k, v in (headers or {}).items():
            lines.append("%s: %s\r\n" % (k, v))
        lines.append("Content-Length: %d\r\n\r\n" % (len(body) if length is None else length))
        data = "".join(lines).encode("latin-1")
        if self.command != "HEAD":
            data += body
        self.wfile.write(data)

    def _error(self, status: int, code: str, message: str = "") -> None:
        self._send(status, _xml_error(code, message or code),
                   {"Content-Type": "application/xml"})

    def _read_body(self, keep: bool) -> Tuple[int, Optional[bytes], str]:
        """Read the request body in chunks: (size, data if kept, sha256 hex)."""
        length = int(self.headers.get("Content-Length") or 0)
        digest = hashlib.sha256()
        kept: Optional[bytearray] = bytearray() if keep and length <= \
            self.stub.keep_limit else None
        remaining = length
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 16))
            if not chunk:
                break
            remaining -= len(chunk)
            digest.update(chunk)
            if kept is not None:
                kept += chunk
        return length - remaining, bytes(kept) if kept is not None else None, \
            digest.hexdigest()

    def _check_auth(self, path: str, query: str) -> Optional[Tuple[int, str]]:
        stub = self.stub
        auth = self.headers.get("Authorization", "")
        m = _AUTH_RE.match(auth)
        if not m:
            return 403, "AccessDenied"
        access_key, _day, region, _service, signed, signature = m.groups()
        if access_key != stub.access_key:
            return 403, "InvalidAccessKeyId"
        if not stub.check_signatures:
            return None
        names = signed.split(";")
        if "host" not in names or "x-amz-date" not in names or \
                "x-amz-content-sha256" not in names:
            return 403, "AccessDenied"
        pairs = [(n, self.headers.get(n, "")) for n in names]
        params = []
        for part in query.split("&") if query else []:
            k, _, v = part.partition("=")
            params.append((unquote(k), unquote(v)))
        expected = stub.signer(region).authorization(
            self.command, path, canonical_query(params), pairs,
            self.headers.get("x-amz-content-sha256", ""))
        if not expected.endswith("Signature=" + signature):
            stub.auth_failures.append("%s %s" % (self.command, self.path))
            return 403, "SignatureDoesNotMatch"
        return None

    # -- dispatch ----------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _kind(self, bucket: str, key: str, args: Dict[str, str]) -> str:
        m = self.command
        if not bucket:
            return "list_buckets" if m == "GET" else "service"
        if not key:
            if m == "GET":
                return "list"
            if m == "POST" and "delete" in args:
                return "multi_delete"
            return {"PUT": "create_bucket", "DELETE": "delete_bucket",
                    "HEAD": "head_bucket"}.get(m, "bucket")
        if m == "POST" and "uploads" in args:
            return "initiate"
        if m == "POST" and "uploadId" in args:
            return "complete"
        if m == "PUT" and "uploadId" in args:
            return "part"
        if m == "DELETE" and "uploadId" in args:
            return "abort"
        return {"PUT": "put", "GET": "get", "HEAD": "head", "DELETE": "delete"}.get(m, "obj")

    def _dispatch(self) -> None:
        stub = self.stub
        raw_path, _, query = self.path.partition("?")
        path = unquote(raw_path)
        bucket, _, key = path.lstrip("/").partition("/")
        args: Dict[str, str] = {}
        for part in query.split("&") if query else []:
            k, _, v = part.partition("=")
            args[unquote(k)] = unquote(v)
        kind = self._kind(bucket, key, args)
        with stub.lock:
            stub.counts[kind] += 1
            if len(stub.log) < stub.max_log:
                stub.log.append((kind, self.command, path))
        denied = self._check_auth(raw_path, query)
        if denied:
            self._read_body(False)
            self._error(denied[0], denied[1])
            return
        hook = stub.fault
        if hook is not None:
            fault = hook(kind, self.command, path)
            if fault:
                status, delay = fault
                if delay:
                    time.sleep(delay)
                if status < 0:  # drop the connection without an answer
                    self._read_body(False)
                    self.close_connection = True
                    return
                if status:
                    self._read_body(False)
                    self._error(status, "InjectedFault", "injected by the test")
                    return
        getattr(self, "_op_" + kind, self._op_unknown)(bucket, key, args)

    def _op_unknown(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        self._read_body(False)
        self._error(400, "NotImplemented", "s3stub does not do this")

    # -- service and buckets -------------------------------------------------

    def _op_list_buckets(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        with self.stub.lock:
            names = sorted(self.stub.buckets)
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult><Owner>'
                "<ID>stub</ID></Owner><Buckets>%s</Buckets></ListAllMyBucketsResult>"
                % "".join("<Bucket><Name>%s</Name></Bucket>" % n for n in names))
        self._send(200, body.encode(), {"Content-Type": "application/xml"})

    def _op_create_bucket(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        _, body, _ = self._read_body(True)
        with self.stub.lock:
            if bucket in self.stub.buckets:
                exists = True
            else:
                exists = False
                self.stub.buckets[bucket] = {}
                self.stub.bucket_bodies[bucket] = body or b""
        if exists:
            self._error(409, "BucketAlreadyOwnedByYou")
        else:
            self._send(200)

    def _op_delete_bucket(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        with self.stub.lock:
            objects = self.stub.buckets.get(bucket)
            if objects is None:
                result = 404
            elif objects:
                result = 409
            else:
                del self.stub.buckets[bucket]
                result = 204
        if result == 404:
            self._error(404, "NoSuchBucket")
        elif result == 409:
            self._error(409, "BucketNotEmpty")
        else:
            self._send(204)

    def _op_head_bucket(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        with self.stub.lock:
            found = bucket in self.stub.buckets
        self._send(200 if found else 404)

    def _op_list(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        prefix = args.get("prefix", "")
        max_keys = int(args.get("max-keys", "1000"))
        after = args.get("continuation-token", "")
        with self.stub.lock:
            objects = self.stub.buckets.get(bucket)
            if objects is not None:
                keys = sorted(k for k in objects if k.startswith(prefix) and k > after)
                sizes = {k: objects[k].size for k in keys[:max_keys]}
        if objects is None:
            self._error(404, "NoSuchBucket")
            return
        page = keys[:max_keys]
        truncated = len(keys) > max_keys
        parts = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>',
                 "<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount>"
                 "<MaxKeys>%d</MaxKeys><IsTruncated>%s</IsTruncated>"
                 % (bucket, prefix, len(page), max_keys, "true" if truncated else "false")]
        if truncated:
            parts.append("<NextContinuationToken>%s</NextContinuationToken>" % page[-1])
        for k in page:
            parts.append("<Contents><Key>%s</Key><Size>%d</Size></Contents>" % (k, sizes[k]))
        parts.append("</ListBucketResult>")
        body = "".join(parts).encode()
        if not self.stub.chunked_lists:
            self._send(200, body, {"Content-Type": "application/xml"})
            return
        head = ("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                "Transfer-Encoding: chunked\r\n\r\n").encode()
        out = bytearray(head)
        step = max(1, len(body) // 3)
        for i in range(0, len(body), step):
            piece = body[i:i + step]
            out += b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n"
        out += b"0\r\nX-Trailer: t\r\n\r\n"
        self.wfile.write(bytes(out))

    def _op_multi_delete(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        _, data, _ = self._read_body(True)
        keys = [k.decode("utf-8") for k in _KEY_RE.findall(data or b"")]
        with self.stub.lock:
            objects = self.stub.buckets.get(bucket, {})
            for k in keys:
                objects.pop(k, None)
        self._send(200, b'<?xml version="1.0" encoding="UTF-8"?><DeleteResult/>',
                   {"Content-Type": "application/xml"})

    # -- objects -------------------------------------------------------------

    def _check_payload(self, sha: str) -> bool:
        claimed = self.headers.get("x-amz-content-sha256", "")
        if claimed != UNSIGNED_PAYLOAD and claimed != sha:
            self._error(400, "XAmzContentSHA256Mismatch")
            return False
        return True

    def _op_put(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        size, data, sha = self._read_body(True)
        if not self._check_payload(sha):
            return
        etag = '"%s"' % hashlib.md5(data).hexdigest() if data is not None else '"big"'
        with self.stub.lock:
            objects = self.stub.buckets.get(bucket)
            if objects is not None:
                objects[key] = StoredObject(size, data, etag)
        if objects is None:
            self._error(404, "NoSuchBucket")
        else:
            self._send(200, b"", {"ETag": etag})

    def _lookup(self, bucket: str, key: str) -> Optional[StoredObject]:
        with self.stub.lock:
            objects = self.stub.buckets.get(bucket)
            obj = objects.get(key) if objects is not None else None
        if obj is None:
            self._error(404, "NoSuchBucket" if objects is None else "NoSuchKey")
        return obj

    def _op_get(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        obj = self._lookup(bucket, key)
        if obj is None:
            return
        status, first, length = 200, 0, obj.size
        asked = self.headers.get("Range")
        if asked:  # "bytes=FIRST-LAST", LAST included, as S3 takes it
            low, _, high = asked[len("bytes="):].partition("-")
            first, last = int(low), min(int(high), obj.size - 1)
            status, length = 206, last - first + 1
            with self.stub.lock:
                self.stub.ranges.append(asked)
        if obj.data is not None:
            self._send(status, obj.data[first:first + length], {"ETag": obj.etag})
            return
        self._send(status, b"", {"ETag": obj.etag}, length=length)
        remaining = length
        while remaining > 0:
            n = min(remaining, len(_ZEROS))
            self.wfile.write(memoryview(_ZEROS)[:n])
            remaining -= n

    def _op_head(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        obj = self._lookup(bucket, key)
        if obj is not None:
            self._send(200, b"", {"ETag": obj.etag}, length=obj.size)

    def _op_delete(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        with self.stub.lock:
            self.stub.buckets.get(bucket, {}).pop(key, None)
        self._send(204)

    def _op_initiate(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        self._read_body(False)
        upload_id = "up-%d-%d" % (time.monotonic_ns(), threading.get_ident())
        with self.stub.lock:
            self.stub.uploads[upload_id] = {}
        self._send(200, ('<?xml version="1.0" encoding="UTF-8"?>'
                         "<InitiateMultipartUploadResult><Bucket>%s</Bucket><Key>%s</Key>"
                         "<UploadId>%s</UploadId></InitiateMultipartUploadResult>"
                         % (bucket, key, upload_id)).encode())

    def _op_part(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        size, data, sha = self._read_body(True)
        if not self._check_payload(sha):
            return
        etag = '"%s"' % hashlib.md5(data).hexdigest() if data is not None else '"bigpart"'
        with self.stub.lock:
            parts = self.stub.uploads.get(args["uploadId"])
            if parts is not None:
                parts[int(args.get("partNumber", "0"))] = StoredObject(size, data, etag)
        if parts is None:
            self._error(404, "NoSuchUpload")
        else:
            self._send(200, b"", {"ETag": etag})

    def _op_complete(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        _, data, sha = self._read_body(True)
        if not self._check_payload(sha):
            return
        with self.stub.lock:
            parts = self.stub.uploads.pop(args["uploadId"], None)
            objects = self.stub.buckets.get(bucket)
            if parts is not None and objects is not None:
                ordered = [parts[n] for n in sorted(parts)]
                size = sum(p.size for p in ordered)
                blob: Optional[bytes] = None
                if all(p.data is not None for p in ordered) and size <= self.stub.keep_limit:
                    blob = b"".join(p.data or b"" for p in ordered)
                objects[key] = StoredObject(size, blob, '"mp-%d"' % len(ordered))
        if parts is None or objects is None:
            self._error(404, "NoSuchUpload")
            return
        self._send(200, ('<?xml version="1.0" encoding="UTF-8"?>'
                         "<CompleteMultipartUploadResult><Key>%s</Key>"
                         "</CompleteMultipartUploadResult>" % key).encode())

    def _op_abort(self, bucket: str, key: str, args: Dict[str, str]) -> None:
        with self.stub.lock:
            self.stub.uploads.pop(args["uploadId"], None)
        self._send(204)
