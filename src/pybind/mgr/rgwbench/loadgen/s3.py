"""S3 requests over one keep-alive connection, signed with SigV4.

``S3Client`` is used by one worker thread at a time.  The object
operations the load runs (PUT, GET, HEAD, DELETE, ListObjectsV2, the steps
of a multipart upload) use precomputed header templates; the rest (bucket
set-up, multi-object delete) go through the general, slower ``request``.
"""

import base64
import hashlib
import re
import ssl
from typing import Dict, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from .errors import UsageError
from .http import BytesLike, Connection, Response, Sink, StreamBody
from .payload import Body
from .sigv4 import (EMPTY_SHA256, UNSIGNED_PAYLOAD, HeaderTemplate, Signer,
                    canonical_query, encode_path)
from .sse import SSE

_CODE_RE = re.compile(rb"<Code>([^<]{1,200})</Code>")
_MESSAGE_RE = re.compile(rb"<Message>([^<]{0,300})</Message>")
_UPLOAD_ID_RE = re.compile(rb"<UploadId>([^<]+)</UploadId>")

PAYLOAD_SIGNING = ("auto", "signed", "unsigned")


class Endpoint:
    """A parsed S3 endpoint URL (scheme, host, port, Host header)."""

    def __init__(self, url: str) -> None:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise UsageError("bad --endpoint %r: %s" % (url, exc))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError("--endpoint must look like http://HOST:PORT or "
                             "https://HOST:PORT, not %r" % url)
        if parts.path not in ("", "/") or parts.query:
            raise UsageError("--endpoint must not have a path (path-style "
                             "addressing is used): %r" % url)
        self.url = url
        self.scheme = parts.scheme
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        default_port = 443 if self.tls else 80
        self.port = port or default_port
        host = "[%s]" % self.host if ":" in self.host else self.host
        self.host_header = host if self.port == default_port else "%s:%d" % (host, self.port)

    def __repr__(self) -> str:
        return "Endpoint(%s)" % self.url


def make_ssl_context(ca_bundle: Optional[str] = None,
                     insecure: bool = False) -> ssl.SSLContext:
    if insecure:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    try:
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError("cannot load --ca-bundle %r: %s" % (ca_bundle, exc))


def error_code(resp: Response) -> str:
    """The S3 error code in a response body, or ``""``."""
    m = _CODE_RE.search(resp.body)
    return m.group(1).decode("utf-8", "replace") if m else ""


def error_message(resp: Response) -> str:
    m = _MESSAGE_RE.search(resp.body)
    return m.group(1).decode("utf-8", "replace") if m else ""


def describe_error(resp: Response) -> str:
    code = error_code(resp)
    text = "HTTP %d %s" % (resp.status, resp.reason)
    if code:
        text += " " + code
    msg = error_message(resp)
    if msg and msg != code:
        text += ": " + msg
    return text


class _Kind:
    """Precomputed pieces of one kind of request (headers beyond the basics)."""

    __slots__ = ("template", "extra")

    def __init__(self, host: str, static: Dict[str, str]) -> None:
        self.template = HeaderTemplate(host, static)
        self.extra = "".join("%s: %s\r\n" % (k, v) for k, v in static.items())


class S3Client:
    """S3 operations over one connection."""

    def __init__(self, endpoint: Endpoint, signer: Signer, sse: Optional[SSE] = None,
                 tls: Optional[ssl.SSLContext] = None, timeout: float = 30.0,
                 payload_signing: str = "auto") -> None:
        if payload_signing not in PAYLOAD_SIGNING:
            raise UsageError("payload signing must be one of %s" % ", ".join(PAYLOAD_SIGNING))
        if endpoint.tls and tls is None:
            tls = make_ssl_context()
        self.endpoint = endpoint
        self.signer = signer
        self.sse = sse or SSE()
        self.conn = Connection(endpoint.host, endpoint.port,
                               tls if endpoint.tls else None, timeout=timeout)
        # UNSIGNED-PAYLOAD is always accepted over TLS; over plain HTTP the
        # body hash is signed unless asked otherwise ("auto")
        self.unsigned = payload_signing == "unsigned" or (
            payload_signing == "auto" and endpoint.tls)
        host = endpoint.host_header
        self._host = host
        self._plain = _Kind(host, {})
        self._write = _Kind(host, self.sse.write)
        self._read = _Kind(host, self.sse.read)
        self._ranged: Dict[str, _Kind] = {}

    def close(self) -> None:
        self.conn.close()

    # -- the hot path -----------------------------------------------------

    def head_for(self, method: str, path: str, query: str, kind: _Kind, payload_hash: str,
                 length: int) -> bytes:
        """The signed request line and headers of one request of a template kind."""
        signer = self.signer
        date = signer.now()
        tmpl = kind.template
        auth = signer.authorization_for(
            tmpl.canonical(method, path, query, payload_hash, date), tmpl.signed, date)
        target = path + "?" + query if query else path
        return ("%s %s HTTP/1.1\r\nHost: %s\r\nx-amz-date: %s\r\n"
                "x-amz-content-sha256: %s\r\nAuthorization: %s\r\n"
                "Content-Length: %d\r\n%s\r\n" % (
                    method, target, self._host, date, payload_hash, auth, length,
                    kind.extra)).encode("latin-1")

    def _fast(self, method: str, path: str, query: str, kind: _Kind, payload_hash: str,
              length: int, body: Optional[Union[BytesLike, StreamBody]] = None,
              head_only: bool = False, sink: Optional[Sink] = None,
              keep_body: bool = False) -> Response:
        head = self.head_for(method, path, query, kind, payload_hash, length)
        return self.conn.request(head, body, head_only, sink, keep_body)

    # -- requests built, not sent (the caller sends them) ----------------

    def put_request(self, bucket: str, key: str,
                    body: Body) -> Tuple[bytes, Union[BytesLike, StreamBody]]:
        """The head and body of a single PUT of ``body`` (URI-safe ``key``)."""
        payload_hash, data = self._body_args(body)
        return self.head_for("PUT", "/" + bucket + "/" + key, "", self._write, payload_hash,
                             body.length), data

    def get_request(self, bucket: str, key: str, byte_range: str = "") -> bytes:
        return self.head_for("GET", "/" + bucket + "/" + key, "", self._read_kind(byte_range),
                             EMPTY_SHA256, 0)

    def head_request(self, bucket: str, key: str) -> bytes:
        return self.head_for("HEAD", "/" + bucket + "/" + key, "", self._read, EMPTY_SHA256, 0)

    def delete_request(self, bucket: str, key: str) -> bytes:
        return self.head_for("DELETE", "/" + bucket + "/" + key, "", self._plain,
                             EMPTY_SHA256, 0)

    def list_request(self, bucket: str, prefix: str = "", max_keys: int = 1000,
                     token: Optional[str] = None) -> bytes:
        params = [("list-type", "2"), ("max-keys", str(max_keys))]
        if prefix:
            params.append(("prefix", prefix))
        if token:
            params.append(("continuation-token", token))
        return self.head_for("GET", "/" + bucket, canonical_query(params), self._plain,
                             EMPTY_SHA256, 0)

    def _read_kind(self, byte_range: str) -> _Kind:
        if not byte_range:
            return self._read
        return self._ranged.get(byte_range) or self._ranged.setdefault(
            byte_range, _Kind(self._host, dict(self.sse.read, Range=byte_range)))

    def _body_args(self, body: Body) -> Tuple[str, Union[BytesLike, StreamBody]]:
        payload_hash = UNSIGNED_PAYLOAD if self.unsigned else body.sha256_hex()
        if body.length <= body.pattern.period:
            return payload_hash, body.single()
        return payload_hash, body

    def put_object(self, bucket: str, key: str, body: Body) -> Response:
        """PUT an object; ``key`` must already be URI-safe (see encode_path)."""
        head, data = self.put_request(bucket, key, body)
        return self.conn.request(head, data, keep_body=True)

    def get_object(self, bucket: str, key: str, sink: Optional[Sink] = None,
                   byte_range: str = "") -> Response:
        """GET an object, or with ``byte_range`` (``bytes=0-1023``) part of it (206)."""
        return self.conn.request(self.get_request(bucket, key, byte_range), sink=sink)

    def head_object(self, bucket: str, key: str) -> Response:
        return self.conn.request(self.head_request(bucket, key), head_only=True)

    def delete_object(self, bucket: str, key: str) -> Response:
        return self.conn.request(self.delete_request(bucket, key), keep_body=True)

    def list_objects(self, bucket: str, prefix: str = "", max_keys: int = 1000,
                     token: Optional[str] = None, keep_body: bool = False) -> Response:
        return self.conn.request(self.list_request(bucket, prefix, max_keys, token),
                                 keep_body=keep_body)

    # -- multipart upload -----------------------------------------------

    def initiate_multipart(self, bucket: str, key: str) -> Response:
        return self._fast("POST", "/" + bucket + "/" + key, "uploads=", self._write,
                          EMPTY_SHA256, 0, keep_body=True)

    def upload_part(self, bucket: str, key: str, upload_id: str, number: int,
                    body: Body) -> Response:
        payload_hash, data = self._body_args(body)
        query = canonical_query([("partNumber", str(number)), ("uploadId", upload_id)])
        return self._fast("PUT", "/" + bucket + "/" + key, query, self._read, payload_hash,
                          body.length, data, keep_body=True)

    def complete_multipart(self, bucket: str, key: str, upload_id: str,
                           etags: Sequence[str]) -> Response:
        parts = "".join("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>"
                        % (i + 1, escape(tag)) for i, tag in enumerate(etags))
        data = ("<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % parts).encode()
        return self._fast("POST", "/" + bucket + "/" + key,
                          canonical_query([("uploadId", upload_id)]), self._plain,
                          hashlib.sha256(data).hexdigest(), len(data), data,
                          keep_body=True)

    def abort_multipart(self, bucket: str, key: str, upload_id: str) -> Response:
        return self._fast("DELETE", "/" + bucket + "/" + key,
                          canonical_query([("uploadId", upload_id)]), self._plain,
                          EMPTY_SHA256, 0, keep_body=True)

    def upload(self, bucket: str, key: str, body: Body, threshold: int,
               part_size: int) -> Response:
        """PUT ``body``, as a multipart upload if it is above ``threshold``.

        Returns the last response: a failed step's (the upload is then
        aborted), or the successful PUT / CompleteMultipartUpload.
        """
        if body.length <= threshold:
            return self.put_object(bucket, key, body)
        resp = self.initiate_multipart(bucket, key)
        upload_id = self.upload_id(resp) if resp.status == 200 else None
        if upload_id is None:
            return resp
        etags: List[str] = []
        done = False
        try:
            position = 0
            while position < body.length:
                n = min(part_size, body.length - position)
                part = Body(body.pattern, n, (body.offset + position) % body.pattern.period)
                resp = self.upload_part(bucket, key, upload_id, len(etags) + 1, part)
                if resp.status != 200:
                    return resp
                etags.append(resp.headers.get("etag", ""))
                position += n
            resp = self.complete_multipart(bucket, key, upload_id, etags)
            if resp.status == 200 and b"<Error>" in resp.body:
                # S3 may report a failed completion in a 200 response
                resp.status = 500
            done = resp.status == 200
            return resp
        finally:
            if not done:
                try:
                    self.abort_multipart(bucket, key, upload_id)
                except Exception:
                    pass

    @staticmethod
    def upload_id(resp: Response) -> Optional[str]:
        m = _UPLOAD_ID_RE.search(resp.body)
        return m.group(1).decode("utf-8") if m else None

    # -- general requests (set-up, clean-up) ----------------------------

    def request(self, method: str, path: str, params: Sequence[Tuple[str, str]] = (),
                headers: Optional[Dict[str, str]] = None, data: bytes = b"",
                head_only: bool = False) -> Response:
        """Any request; ``path`` is unencoded (``/bucket/key``), body kept."""
        uri = encode_path(path)
        query = canonical_query(params)
        date = self.signer.now()
        payload_hash = hashlib.sha256(data).hexdigest() if data else EMPTY_SHA256
        sent: List[Tuple[str, str]] = [("Host", self._host), ("x-amz-date", date),
                                       ("x-amz-content-sha256", payload_hash)]
        for name, value in (headers or {}).items():
            sent.append((name, value))
        auth = self.signer.authorization(method, uri, query, sent, payload_hash, date)
        lines = "".join("%s: %s\r\n" % (k, v) for k, v in sent)
        head = ("%s %s HTTP/1.1\r\n%sAuthorization: %s\r\nContent-Length: %d\r\n\r\n"
                % (method, uri + ("?" + query if query else ""), lines, auth,
                   len(data))).encode("utf-8")
        return self.conn.request(head, data or None, head_only=head_only, keep_body=True)

    def list_buckets(self) -> Response:
        return self.request("GET", "/")

    def create_bucket(self, bucket: str, placement: Optional[str] = None) -> Response:
        """Create a bucket; with `placement`, under that placement target of the zonegroup
        RGW serves (its LocationConstraint `:<placement-id>`)."""
        if not placement:
            return self.request("PUT", "/" + bucket)
        data = ("<CreateBucketConfiguration><LocationConstraint>:%s</LocationConstraint>"
                "</CreateBucketConfiguration>" % escape(placement)).encode("utf-8")
        return self.request("PUT", "/" + bucket, headers={"Content-Type": "application/xml"},
                            data=data)

    def delete_bucket(self, bucket: str) -> Response:
        return self.request("DELETE", "/" + bucket)

    def head_bucket(self, bucket: str) -> Response:
        return self.request("HEAD", "/" + bucket, head_only=True)

    def delete_objects(self, bucket: str, keys: Sequence[str]) -> Response:
        """Multi-object delete (up to 1000 keys), quiet mode."""
        objects = "".join("<Object><Key>%s</Key></Object>" % escape(k) for k in keys)
        data = ('<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>%s'
                "</Delete>" % objects).encode("utf-8")
        md5 = base64.b64encode(hashlib.md5(data).digest()).decode("ascii")
        return self.request("POST", "/" + bucket, [("delete", "")],
                            {"Content-MD5": md5, "Content-Type": "application/xml"}, data)
