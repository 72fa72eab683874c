"""Server-side encryption request headers.

* SSE-C: the client sends the key with every PUT, GET and HEAD of the
  object (and with multipart initiate and each part upload):
  ``x-amz-server-side-encryption-customer-{algorithm,key,key-MD5}``.
* SSE-KMS: ``x-amz-server-side-encryption: aws:kms`` and the key id, on
  object writes only.
* SSE-S3: ``x-amz-server-side-encryption: AES256``, on object writes only.

RGW refuses SSE over plain HTTP unless ``rgw_crypt_require_ssl`` is false.
"""

import base64
import binascii
import hashlib
from typing import Dict, Optional

from .errors import UsageError

MODES = ("none", "sse-c", "sse-kms", "sse-s3")


def parse_customer_key(text: str) -> bytes:
    """A 256-bit SSE-C key from 64 hex digits, base64, or 32 raw characters."""
    text = text.strip()
    if len(text) == 64:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    try:
        raw = base64.b64decode(text, validate=True)
        if len(raw) == 32:
            return raw
    except (binascii.Error, ValueError):
        pass
    raw = text.encode("utf-8")
    if len(raw) == 32:
        return raw
    raise UsageError("--sse-c-key must be 32 bytes: 64 hex digits, base64 of 32 "
                     "bytes, or 32 characters")


class SSE:
    """Which headers go on object writes and on object reads."""

    def __init__(self, mode: str = "none", customer_key: Optional[bytes] = None,
                 kms_key_id: Optional[str] = None) -> None:
        if mode not in MODES:
            raise UsageError("unknown SSE mode %r (one of %s)" % (mode, ", ".join(MODES)))
        self.mode = mode
        self.write: Dict[str, str] = {}
        self.read: Dict[str, str] = {}
        if mode == "sse-c":
            if not customer_key or len(customer_key) != 32:
                raise UsageError("SSE-C needs a 32-byte key")
            key_b64 = base64.b64encode(customer_key).decode("ascii")
            md5_b64 = base64.b64encode(hashlib.md5(customer_key).digest()).decode("ascii")
            self.write = {
                "x-amz-server-side-encryption-customer-algorithm": "AES256",
                "x-amz-server-side-encryption-customer-key": key_b64,
                "x-amz-server-side-encryption-customer-key-md5": md5_b64,
            }
            self.read = dict(self.write)
        elif mode == "sse-kms":
            self.write = {"x-amz-server-side-encryption": "aws:kms"}
            if kms_key_id:
                self.write["x-amz-server-side-encryption-aws-kms-key-id"] = kms_key_id
        elif mode == "sse-s3":
            self.write = {"x-amz-server-side-encryption": "AES256"}

    def to_dict(self) -> Dict[str, str]:
        """For the result echo: the mode, never the key."""
        return {"mode": self.mode}

    @classmethod
    def from_settings(cls, customer_key: Optional[str] = None,
                      kms_key_id: Optional[str] = None, sse_s3: bool = False) -> "SSE":
        chosen = sum(1 for x in (customer_key, kms_key_id, sse_s3) if x)
        if chosen > 1:
            raise UsageError("choose one of --sse-c-key, --sse-kms-key-id, --sse-s3")
        if customer_key:
            return cls("sse-c", customer_key=parse_customer_key(customer_key))
        if kms_key_id:
            return cls("sse-kms", kms_key_id=kms_key_id)
        if sse_s3:
            return cls("sse-s3")
        return cls("none")
