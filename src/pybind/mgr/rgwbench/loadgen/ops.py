"""The S3 operations of one worker thread, on its own keep-alive connection.

Each operation returns ``(error class or None, bytes moved, first-byte
time in ns)``; an HTTP error is classified ``http_<status>`` here, a
payload mismatch ``verify``.  Exceptions are left to the measuring loop.
"""

import collections
import random
import ssl
from typing import Callable, Deque, Dict, List, Optional, Sequence, Tuple, Union

from .http import BytesLike, Response, StreamBody
from .payload import Pattern, Verifier
from .result import MAX_ERROR_SAMPLES
from .s3 import Endpoint, S3Client, describe_error, make_ssl_context
from .sigv4 import Signer
from .workload import Job, SizeSpec

OpResult = Tuple[Optional[str], int, int]


class Request:
    """One operation's request, built and not yet sent, and how to judge its answer.

    ``accepted``: the statuses that mean success; ``counted``: the bytes a
    success moved when known in advance (a PUT's size), else -1 (the
    response's body length counts).
    """

    __slots__ = ("op", "what", "head", "body", "head_only", "accepted", "counted",
                 "written")

    def __init__(self, op: str, what: str, head: bytes,
                 body: Optional[Union[BytesLike, StreamBody]], head_only: bool,
                 accepted: Tuple[int, ...], counted: int,
                 written: Optional[Tuple[str, str]] = None) -> None:
        self.op = op
        self.what = what
        self.head = head
        self.body = body
        self.head_only = head_only
        self.accepted = accepted
        self.counted = counted
        self.written = written


_OK = (200,)
_DELETED = (200, 204)
# the ops whose bodies are kept whatever the status (small: errors, upload ids)
_KEPT = ("put", "delete")


class Exhausted(Exception):
    """No prefilled object left to delete."""


def make_client(job: Job, timeout: Optional[float] = None,
                tls: Optional[ssl.SSLContext] = None, url: Optional[str] = None) -> S3Client:
    """A client of ``url`` (default: the job's first endpoint)."""
    endpoint = Endpoint(url or job.endpoint)
    if endpoint.tls and tls is None:
        tls = make_ssl_context(job.ca_bundle, job.insecure)
    return S3Client(endpoint, Signer(job.access_key, job.secret_key, job.region),
                    job.sse(), tls, timeout or job.timeout_s, job.payload_signing)


class Operations:
    """One thread's requests: which key, which size, what counts as success.

    ``gtid`` is the thread's index over all processes; ``samples`` is where
    the first error messages are kept (the thread's own list); ``target`` is
    the endpoint this thread's connection goes to.
    """

    def __init__(self, job: Job, *, gtid: int, target: str, tls: Optional[ssl.SSLContext],
                 sizes: SizeSpec, pattern: Pattern, prefilled: Sequence[Tuple[str, str]],
                 total_threads: int, samples: List[str]) -> None:
        self.job = job
        self.gtid = gtid
        self.samples = samples
        self.target = target
        self.client = make_client(job, tls=tls, url=target)
        # Also draws the op of a mixed workload: one sequence per thread and seed.
        self.rng = random.Random(job.seed * 7919 + gtid)
        self.sizes = sizes
        self.pattern = pattern
        self.prefilled = prefilled
        self.objects = len(prefilled)
        self.total_threads = total_threads
        self.verify = job.verify
        self.buckets = job.bucket_names
        self.threshold = job.multipart_threshold_bytes
        self.part_size = job.part_size_bytes
        self.put_prefix = "%s%s/%d." % (job.key_prefix, job.run_tag, gtid)
        self.seq = 0
        self.mixed = job.op == "mixed"
        self.written: Deque[Tuple[str, str]] = collections.deque()
        self.delete_next = gtid  # op=delete: prefilled keys gtid, gtid+C, ...
        self.list_prefix = job.key_prefix + "obj/"
        # A ranged GET reads END - START bytes from START and is answered 206.
        self.byte_range = job.range_header
        first, stop = job.range_bytes or (0, 0)
        self.range_start, self.range_length = first, stop - first
        self.get_status = 206 if self.byte_range else 200
        self.by_name: Dict[str, Callable[[], OpResult]] = {
            "put": self.op_put, "get": self.op_get, "head": self.op_head,
            "delete": self.op_delete, "list": self.op_list}

    def fail(self, what: str, resp: Response) -> OpResult:
        if len(self.samples) < MAX_ERROR_SAMPLES:
            self.samples.append("%s: %s" % (what, describe_error(resp)))
        return "http_%d" % resp.status, 0, resp.first_byte_ns

    def finish(self, req: Request, resp: Response) -> OpResult:
        """The result of ``req`` from its response."""
        if resp.status not in req.accepted:
            return self.fail(req.what, resp)
        if req.written is not None:
            self.written.append(req.written)
        return None, (req.counted if req.counted >= 0 else resp.nbytes), resp.first_byte_ns

    def prepare_put(self) -> Request:
        """The next PUT, as one request (only for sizes up to the multipart threshold)."""
        self.seq += 1
        key = self.put_prefix + str(self.seq)
        bucket = self.buckets[(self.gtid + self.seq) % len(self.buckets)]
        size = self.sizes.pick(self.rng)
        body = self.pattern.body(size, self.pattern.offset_for(key) if self.verify else 0)
        head, data = self.client.put_request(bucket, key, body)
        return Request("put", "PUT " + bucket + "/" + key, head, data, False, _OK, size,
                       (bucket, key) if self.mixed else None)

    def prepare_get(self) -> Request:
        """The next GET (without payload verification)."""
        bucket, key = self.prefilled[int(self.rng.random() * self.objects)]
        return Request("get", "GET " + bucket + "/" + key,
                       self.client.get_request(bucket, key, self.byte_range), None, False,
                       (self.get_status,), -1)

    def prepare_head(self) -> Request:
        bucket, key = self.prefilled[int(self.rng.random() * self.objects)]
        return Request("head", "HEAD " + bucket + "/" + key,
                       self.client.head_request(bucket, key), None, True, _OK, 0)

    def prepare_delete(self) -> Request:
        if self.mixed:
            bucket, key = self.written.popleft()
        else:
            index = self.delete_next
            if index >= self.objects:
                raise Exhausted()
            self.delete_next += self.total_threads
            bucket, key = self.prefilled[index]
        return Request("delete", "DELETE " + bucket + "/" + key,
                       self.client.delete_request(bucket, key), None, False, _DELETED, 0)

    def prepare_list(self) -> Request:
        bucket = self.buckets[int(self.rng.random() * len(self.buckets))]
        return Request("list", "LIST " + bucket,
                       self.client.list_request(bucket, self.list_prefix,
                                                self.job.list_max_keys), None, False, _OK, 0)

    def send(self, req: Request) -> OpResult:
        """Send ``req`` on this thread's connection and judge the answer."""
        return self.finish(req, self.client.conn.request(
            req.head, req.body, req.head_only, keep_body=req.op in _KEPT))

    def op_put(self) -> OpResult:
        size = self.sizes.max_size
        if size > self.threshold:
            return self._put_multipart()
        return self.send(self.prepare_put())

    def _put_multipart(self) -> OpResult:
        self.seq += 1
        key = self.put_prefix + str(self.seq)
        bucket = self.buckets[(self.gtid + self.seq) % len(self.buckets)]
        size = self.sizes.pick(self.rng)
        body = self.pattern.body(size, self.pattern.offset_for(key) if self.verify else 0)
        if size > self.threshold:
            resp = self.client.upload(bucket, key, body, self.threshold, self.part_size)
        else:
            resp = self.client.put_object(bucket, key, body)
        if resp.status != 200:
            return self.fail("PUT %s/%s" % (bucket, key), resp)
        if self.mixed:
            self.written.append((bucket, key))
        return None, size, resp.first_byte_ns

    def op_get(self) -> OpResult:
        if not self.verify:
            return self.send(self.prepare_get())
        index = int(self.rng.random() * self.objects)
        bucket, key = self.prefilled[index]
        check = Verifier(self.pattern, self.pattern.offset_for(key) + self.range_start)
        resp = self.client.get_object(bucket, key, check, byte_range=self.byte_range)
        if resp.status != self.get_status:
            return self.fail("GET %s/%s" % (bucket, key), resp)
        expected = self.range_length or self.sizes.for_index(self.job.seed, index)
        if not check.ok or resp.nbytes != expected:
            if len(self.samples) < MAX_ERROR_SAMPLES:
                self.samples.append(
                    "GET %s/%s: body does not match what was written (%d bytes read, "
                    "%d expected)" % (bucket, key, resp.nbytes, expected))
            return "verify", 0, resp.first_byte_ns
        return None, resp.nbytes, resp.first_byte_ns

    def op_head(self) -> OpResult:
        return self.send(self.prepare_head())

    def op_delete(self) -> OpResult:
        return self.send(self.prepare_delete())

    def op_list(self) -> OpResult:
        return self.send(self.prepare_list())
