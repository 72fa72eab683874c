"""Deterministic object bodies without buffering whole objects.

One pseudo-random pattern of ``period`` bytes is made per process and kept
twice in a row, so any window of up to ``period`` bytes starting anywhere
in the pattern is one contiguous slice (a memoryview: no copy).  An object
of any size is the pattern repeated from a start offset:
``byte[i] = pattern[(offset + i) % period]``.  With verification on, the
offset is derived from the object key, so a GET can check the body it reads
without knowing anything else; otherwise it is 0, so every object of one
size has the same body and its SHA-256 is computed once.
"""

import hashlib
import random
import zlib
from collections import OrderedDict
from typing import Iterator, Tuple

DEFAULT_PERIOD = 1 << 20


class Pattern:
    """The shared pattern of one process (``2 * period`` bytes of memory)."""

    def __init__(self, seed: int = 0, period: int = DEFAULT_PERIOD,
                 hash_cache: int = 256) -> None:
        if period <= 0:
            raise ValueError("period must be positive")
        data = random.Random(seed).getrandbits(period * 8).to_bytes(period, "little")
        self.period = period
        self.data = data + data
        self.view = memoryview(self.data)
        self._hashes: "OrderedDict[Tuple[int, int], str]" = OrderedDict()
        self._hash_cache = hash_cache

    def offset_for(self, key: str) -> int:
        """Start offset of the body of object ``key`` (verification mode)."""
        return zlib.crc32(key.encode("utf-8")) % self.period

    def body(self, size: int, offset: int = 0) -> "Body":
        return Body(self, size, offset % self.period)

    def sha256_hex(self, size: int, offset: int) -> str:
        """SHA-256 of a body, remembered for the most recent (size, offset)s."""
        key = (size, offset)
        cached = self._hashes.get(key)
        if cached is not None:
            self._hashes.move_to_end(key)
            return cached
        digest = hashlib.sha256()
        for chunk in Body(self, size, offset).chunks():
            digest.update(chunk)
        value = digest.hexdigest()
        self._hashes[key] = value
        if len(self._hashes) > self._hash_cache:
            self._hashes.popitem(last=False)
        return value


class Body:
    """An object body: ``size`` bytes of the pattern from ``offset``."""

    __slots__ = ("pattern", "length", "offset")

    def __init__(self, pattern: Pattern, length: int, offset: int) -> None:
        self.pattern = pattern
        self.length = length
        self.offset = offset

    def chunks(self) -> Iterator[memoryview]:
        """The body as slices of the shared pattern, each at most ``period``."""
        view = self.pattern.view
        period = self.pattern.period
        start = self.offset
        remaining = self.length
        while remaining > 0:
            n = period if remaining > period else remaining
            yield view[start:start + n]
            remaining -= n

    def single(self) -> memoryview:
        """The whole body as one slice (only for bodies up to ``period``)."""
        if self.length > self.pattern.period:
            raise ValueError("body larger than the pattern period")
        return self.pattern.view[self.offset:self.offset + self.length]

    def sha256_hex(self) -> str:
        return self.pattern.sha256_hex(self.length, self.offset)


class Verifier:
    """Checks a streamed body against the pattern, chunk by chunk."""

    __slots__ = ("pattern", "offset", "position", "ok")

    def __init__(self, pattern: Pattern, offset: int) -> None:
        self.pattern = pattern
        self.offset = offset % pattern.period
        self.position = 0
        self.ok = True

    def __call__(self, chunk: memoryview) -> None:
        if not self.ok:
            return
        data = self.pattern.data
        period = self.pattern.period
        done = 0
        total = len(chunk)
        while done < total:
            start = (self.offset + self.position) % period
            n = min(total - done, period)
            if not data.startswith(chunk[done:done + n], start):
                self.ok = False
                return
            done += n
            self.position += n
