"""AWS Signature Version 4 for S3, header based, path-style addressing.

The signing key depends only on the secret, the day, the region and the
service, so it is derived once a day.  Everything a request needs beyond
that is a few string joins, one SHA-256 of the canonical request and one
HMAC.

S3 rules followed here (they differ from other AWS services):

* the canonical URI is the request path exactly as sent: every segment
  percent-encoded once (UTF-8, unreserved characters ``A-Za-z0-9-_.~``
  kept), slashes kept, no normalisation of ``//`` or ``..``;
* the canonical query is every ``name=value`` percent-encoded (slashes
  too), sorted by encoded name then value; a parameter without a value is
  ``name=``;
* ``x-amz-content-sha256`` is always sent and signed: the hex SHA-256 of the
  body, or ``UNSIGNED-PAYLOAD``.
"""

import hashlib
import hmac
import time
from typing import Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import quote

ALGORITHM = "AWS4-HMAC-SHA256"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

Pairs = Sequence[Tuple[str, str]]


def encode_path(path: str) -> str:
    """Percent-encode a path (slashes kept), as S3 wants it signed and sent."""
    return quote(path, safe="/~")


def encode_component(text: str) -> str:
    """Percent-encode a query name or value (slashes encoded too)."""
    return quote(text, safe="~")


def canonical_query(params: Iterable[Tuple[str, str]]) -> str:
    """Canonical query string; also a valid query string to send."""
    pairs = sorted((encode_component(k), encode_component(v)) for k, v in params)
    return "&".join(k + "=" + v for k, v in pairs)


def amz_date(epoch: float) -> str:
    """``YYYYMMDDTHHMMSSZ`` for a Unix time."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(epoch))


def _trim(value: str) -> str:
    value = value.strip()
    if "  " in value:
        value = " ".join(value.split())
    return value


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


class Signer:
    """Signs S3 requests for one set of credentials."""

    def __init__(self, access_key: str, secret_key: str,
                 region: str = "us-east-1", service: str = "s3") -> None:
        self.access_key = access_key
        self.region = region
        self.service = service
        self._secret = ("AWS4" + secret_key).encode("utf-8")
        self._day = ""
        self._key = b""
        self._scope_tail = "/%s/%s/aws4_request" % (region, service)
        self._clock_second = -1
        self._clock_value = ""

    def signing_key(self, day: str) -> bytes:
        """The derived key for ``day`` (``YYYYMMDD``), cached."""
        if day != self._day:
            key = _hmac(self._secret, day)
            key = _hmac(key, self.region)
            key = _hmac(key, self.service)
            self._key = _hmac(key, "aws4_request")
            self._day = day
        return self._key

    def now(self) -> str:
        """``x-amz-date`` for the current second (formatted once a second)."""
        second = int(time.time())
        if second != self._clock_second:
            self._clock_value = amz_date(second)
            self._clock_second = second
        return self._clock_value

    def canonical_request(self, method: str, uri: str, query: str,
                          headers: Pairs, payload_hash: str) -> Tuple[str, str]:
        """Canonical request and the signed-headers list.

        ``headers`` are (name, value) pairs, names in any case; all of them
        are signed.  ``host``, ``x-amz-date`` and ``x-amz-content-sha256``
        must be among them.
        """
        merged: Dict[str, str] = {}
        for name, value in headers:
            lname = name.lower()
            value = _trim(value)
            merged[lname] = merged[lname] + "," + value if lname in merged else value
        names = sorted(merged)
        lines = [n + ":" + merged[n] for n in names]
        signed = ";".join(names)
        creq = "%s\n%s\n%s\n%s\n\n%s\n%s" % (
            method, uri, query, "\n".join(lines), signed, payload_hash)
        return creq, signed

    def authorization(self, method: str, uri: str, query: str, headers: Pairs,
                      payload_hash: str, date: Optional[str] = None) -> str:
        """The ``Authorization`` header value.

        ``date`` defaults to the ``x-amz-date`` among ``headers``.
        """
        if date is None:
            for name, value in headers:
                if name.lower() == "x-amz-date":
                    date = value.strip()
                    break
            else:
                raise ValueError("x-amz-date header missing")
        creq, signed = self.canonical_request(method, uri, query, headers, payload_hash)
        return self.authorization_for(creq, signed, date)

    def authorization_for(self, creq: str, signed: str, date: str) -> str:
        day = date[:8]
        scope = day + self._scope_tail
        sts = "%s\n%s\n%s\n%s" % (ALGORITHM, date, scope,
                                  hashlib.sha256(creq.encode("utf-8")).hexdigest())
        sig = hmac.digest(self.signing_key(day), sts.encode("utf-8"), "sha256").hex()
        return "%s Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
            ALGORITHM, self.access_key, scope, signed, sig)


class HeaderTemplate:
    """Precomputed canonical headers for one kind of request.

    The header names and all values except ``x-amz-date`` and
    ``x-amz-content-sha256`` are fixed (host, SSE headers, content type...),
    so the sorted canonical block is built once with two holes in it.
    """

    __slots__ = ("signed", "_before", "_between", "_after")

    def __init__(self, host: str, static: Dict[str, str]) -> None:
        fixed = {k.lower(): _trim(v) for k, v in static.items()}
        fixed["host"] = host
        dynamic = ("x-amz-content-sha256", "x-amz-date")
        for name in dynamic:
            fixed.pop(name, None)
        names = sorted(set(fixed) | set(dynamic))
        self.signed = ";".join(names)
        # "x-amz-content-sha256" always sorts before "x-amz-date"; static
        # headers may sort anywhere around them
        parts: List[str] = [""]
        for name in names:
            if name in dynamic:
                parts[-1] += name + ":"
                parts.append("\n")
            else:
                parts[-1] += name + ":" + fixed[name] + "\n"
        self._before, self._between, self._after = parts

    def canonical(self, method: str, uri: str, query: str,
                  payload_hash: str, date: str) -> str:
        return (method + "\n" + uri + "\n" + query + "\n" + self._before
                + payload_hash + self._between + date + self._after + "\n"
                + self.signed + "\n" + payload_hash)
