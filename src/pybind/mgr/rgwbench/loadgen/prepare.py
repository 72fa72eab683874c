"""Before and after the load: preflight, buckets, prefill, clean-up.

``preflight`` sends one ListBuckets request and turns every way it can go
wrong (nothing listening, TLS trouble, not HTTP, refused credentials) into
one ``EndpointError``/``AuthError`` line, before any load is sent.
"""

import itertools
import re
import socket
import ssl
import threading
import time
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, TypeVar

from .errors import AuthError, EndpointError, LoadgenError, ProtocolError, UsageError
from .payload import Pattern
from .ops import make_client
from .s3 import S3Client, describe_error, error_code
from .workload import Job

_AUTH_CODES = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied",
               "RequestTimeTooSkewed", "AuthorizationHeaderMalformed")
T = TypeVar("T")
_KEY_RE = re.compile(rb"<Key>([^<]*)</Key>")
_TOKEN_RE = re.compile(rb"<NextContinuationToken>([^<]*)</NextContinuationToken>")
_TRUNC_RE = re.compile(rb"<IsTruncated>\s*true\s*</IsTruncated>", re.I)
# A prefill cut short by its time still writes this many objects (as a default key
# space has at least).
PREFILL_FLOOR = 4


class Stopped(LoadgenError):
    """Set-up work was told to stop before it was done."""


def _unescape(raw: bytes) -> str:
    text = raw.decode("utf-8")
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'),
                         ("&apos;", "'"), ("&amp;", "&")):
        text = text.replace(entity, char)
    return text


def _call(job: Job, what: str, fn: Callable[[], T], url: Optional[str] = None) -> T:
    """Run one set-up request, turning transport errors into EndpointError."""
    url = url or job.endpoint
    try:
        return fn()
    except socket.timeout:
        raise EndpointError("%s: no answer from %s within %gs" % (what, url, job.timeout_s))
    except ssl.SSLCertVerificationError as exc:
        raise EndpointError("%s: TLS certificate of %s is not trusted (%s); use "
                            "--ca-bundle FILE or --insecure"
                            % (what, url, exc.verify_message or exc))
    except ssl.SSLError as exc:
        raise EndpointError("%s: TLS with %s failed (%s); is the endpoint really https?"
                            % (what, url, exc.reason or exc))
    except ConnectionRefusedError:
        raise EndpointError("%s: cannot connect to %s: connection refused" % (what, url))
    except ProtocolError as exc:
        raise EndpointError("%s: %s did not answer in HTTP/1.1 (%s); is it https?"
                            % (what, url, exc))
    except ConnectionError as exc:
        hint = "; is it https?" if url.startswith("http:") else ""
        raise EndpointError("%s: %s closed the connection (%s)%s" % (what, url, exc, hint))
    except OSError as exc:
        raise EndpointError("%s: cannot connect to %s: %s" % (what, url, exc.strerror or exc))


def preflight(job: Job) -> None:
    """One ListBuckets request to each endpoint: is it there, are the keys good?"""
    for url in job.targets:
        _preflight_one(job, url)


def _preflight_one(job: Job, url: str) -> None:
    client = make_client(job, timeout=min(job.timeout_s, 10.0), url=url)
    try:
        resp = _call(job, "preflight", client.list_buckets, url)
    finally:
        client.close()
    if resp.status == 200:
        return
    code = error_code(resp)
    if resp.status == 403 or code in _AUTH_CODES:
        raise AuthError("%s refused the credentials: %s (check --access-key, --secret-key"
                        "%s)" % (url, describe_error(resp),
                                 " and the clock" if code == "RequestTimeTooSkewed" else ""))
    raise EndpointError("%s answered ListBuckets with %s" % (url, describe_error(resp)))


def ensure_buckets(job: Job) -> List[str]:
    """Create the job's buckets if missing; returns the ones created now."""
    client = make_client(job)
    created = []
    try:
        for bucket in job.bucket_names:
            resp = _call(job, "create bucket", lambda: client.create_bucket(bucket, job.placement))
            status = resp.status
            code = error_code(resp)
            if status == 200:
                created.append(bucket)
            elif status == 409 and code == "BucketAlreadyOwnedByYou":
                pass
            elif status == 409:
                raise EndpointError("bucket %s exists and belongs to someone else (%s); "
                                    "choose another --bucket-prefix" % (bucket, code))
            elif status == 403:
                raise AuthError("creating bucket %s: %s" % (bucket, describe_error(resp)))
            else:
                raise EndpointError("creating bucket %s: %s" % (bucket, describe_error(resp)))
    finally:
        client.close()
    return created


#: told (done, count) about once a second while set-up work goes
Tick = Callable[[int, int], None]


def _parallel(job: Job, count: int, work: Callable[[S3Client, int], Optional[str]],
              progress: Optional[IO[str]], label: str,
              stop: Optional[threading.Event] = None, tick: Optional[Tick] = None,
              until: Optional[float] = None, floor: int = 0) -> int:
    """Run ``work(client, index)`` for index in 0..count-1 on up to
    ``concurrency`` threads; the first error message, or ``stop`` set, stops
    everything. Past ``until`` (time.monotonic()) no index from ``floor`` on is
    begun: those begun finish, so what was done is indexes 0..N-1; returns N."""
    counter = itertools.count()
    errors: List[str] = []
    done = [0]
    closed: List[int] = []
    lock = threading.Lock()
    halted = stop or threading.Event()

    def worker() -> None:
        client = make_client(job)
        try:
            while not errors and not halted.is_set():
                with lock:  # indexes are begun in order: none after the first refused
                    index = next(counter)
                    if index >= count or closed or (
                            until is not None and index >= floor and time.monotonic() > until):
                        closed.append(index)
                        return
                try:
                    err = work(client, index)
                except LoadgenError as exc:
                    err = str(exc)
                except (OSError, ProtocolError) as exc:
                    err = "%s: %s" % (type(exc).__name__, exc)
                if err:
                    with lock:
                        errors.append(err)
                    return
                with lock:
                    done[0] += 1
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True, name="loadgen-%s-%d" % (label, i))
               for i in range(max(1, min(job.concurrency, count, 64)))]
    for t in threads:
        t.start()
    last = -1
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(1.0)
            break
        if tick is not None:
            tick(done[0], count)
        if progress is not None and done[0] != last:
            last = done[0]
            progress.write("[%s] %d/%d\n" % (label, last, count))
            progress.flush()
    if progress is not None and done[0] != last:
        progress.write("[%s] %d/%d\n" % (label, done[0], count))
        progress.flush()
    if errors:
        raise EndpointError("%s failed: %s" % (label, errors[0]))
    if halted.is_set() and done[0] < count:
        raise Stopped("%s stopped after %d of %d" % (label, done[0], count))
    return done[0]


def prefill(job: Job, progress: Optional[IO[str]] = None,
            stop: Optional[threading.Event] = None, tick: Optional[Tick] = None) -> int:
    """PUT the key space that get/head/list/delete read; returns how many objects
    it wrote (objects 0..N-1): all of them, or those written within the job's
    ``prefill_s`` (at least PREFILL_FLOOR).

    ``stop`` set ends it early (``Stopped``); ``tick`` is told how far it is.
    """
    count = job.object_count()
    pattern = Pattern(job.seed)
    sizes = job.sizes
    threshold = job.multipart_threshold_bytes
    part = job.part_size_bytes

    def work(client: S3Client, index: int) -> Optional[str]:
        bucket, key = job.prefill_key(index)
        size = sizes.for_index(job.seed, index)
        body = pattern.body(size, pattern.offset_for(key) if job.verify else 0)
        resp = client.upload(bucket, key, body, threshold, part)
        if resp.status != 200:
            return "PUT %s/%s: %s" % (bucket, key, describe_error(resp))
        return None

    until = time.monotonic() + job.prefill_s if job.prefill_s else None
    return _parallel(job, count, work, progress, "prefill", stop, tick, until,
                     min(count, PREFILL_FLOOR))


def check_prefilled(job: Job) -> None:
    """With --no-prefill: make sure the first and last objects are there."""
    count = job.object_count()
    client = make_client(job)
    try:
        for index in sorted({0, count - 1}):
            bucket, key = job.prefill_key(index)
            resp = _call(job, "check objects", lambda: client.head_object(bucket, key))
            status = resp.status
            if status == 404:
                raise UsageError("object %s/%s is missing: run without --no-prefill (or "
                                 "with the same --objects/--size/--bucket-prefix/"
                                 "--key-prefix as the run that wrote them)" % (bucket, key))
            if status != 200:
                hint = ""
                if status in (400, 403):
                    # a HEAD answer has no body: S3's error code is not there
                    hint = ("; is --sse-c-key the key they were written with?"
                            if job.sse().mode == "sse-c" else
                            "; objects written with SSE-C need the same --sse-c-key")
                raise EndpointError("checking %s/%s: HTTP %d %s%s"
                                    % (bucket, key, status, resp.reason, hint))
    finally:
        client.close()


def list_keys(client: S3Client, bucket: str, prefix: str) -> Tuple[List[str], bool]:
    """All keys under ``prefix`` (``False`` if the bucket does not exist)."""
    keys: List[str] = []
    token: Optional[str] = None
    while True:
        resp = client.list_objects(bucket, prefix, 1000, token, keep_body=True)
        if resp.status == 404:
            return keys, False
        if resp.status != 200:
            raise EndpointError("listing %s: %s" % (bucket, describe_error(resp)))
        keys.extend(_unescape(m) for m in _KEY_RE.findall(resp.body))
        m = _TOKEN_RE.search(resp.body)
        if not _TRUNC_RE.search(resp.body) or not m:
            return keys, True
        token = _unescape(m.group(1))


def cleanup(job: Job, progress: Optional[IO[str]] = None, attempts: int = 10,
            pause_s: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> Dict[str, Any]:
    """Delete every object under the key prefix, then the (empty) buckets.

    A write that agents sent just before they were stopped can land after
    the listing; the bucket is then not empty (409), and its objects are
    listed and deleted again, up to `attempts` times. Buckets still there
    after that are named in ``buckets_left``.
    """
    client = make_client(job)
    deleted = buckets = 0
    left = []
    try:
        for bucket in job.bucket_names:
            for attempt in range(attempts):
                keys, exists = _call(job, "clean-up",
                                     lambda: list_keys(client, bucket, job.key_prefix))
                if not exists:
                    break
                for i in range(0, len(keys), 1000):
                    batch = keys[i:i + 1000]
                    resp = client.delete_objects(bucket, batch)
                    if resp.status != 200 or b"<Error>" in resp.body:
                        for key in batch:  # fall back to one by one
                            client.request("DELETE", "/%s/%s" % (bucket, key))
                    deleted += len(batch)
                    if progress is not None:
                        progress.write("[clean-up] %s: %d objects deleted\n" % (bucket, deleted))
                        progress.flush()
                resp = client.delete_bucket(bucket)
                if resp.status in (200, 204):
                    buckets += 1
                    break
                if resp.status == 404:
                    break
                if attempt + 1 < attempts:
                    sleep(pause_s)
            else:
                left.append(bucket)
    finally:
        client.close()
    out: Dict[str, Any] = {"objects_deleted": deleted, "buckets_deleted": buckets}
    if left:
        out["buckets_left"] = left
    return out
