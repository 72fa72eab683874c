"""Records of any size in the config-key store, each cut into chunks under its 64 KiB limit.

A record is JSON, compressed with zlib, base64, cut into chunks so that every
value stays under ``MAX_VALUE`` bytes:

    <chunks><id>/<NNNN>     the chunks of a record (NNNN from 0000)
    <index><id>             its index: a summary and where its chunks are

The chunks of ``a`` are under ``<chunks>a/``, a prefix that no other record's
keys start with (an id holds no ``/``). The index is written after the chunks
and removed before them, so a half-written record is never listed. Saving a
record again writes its new chunks next to the old ones (numbers that do not
overlap), then the index, then removes the old chunks: a reader never sees a
mix of two versions. An index without chunk numbers is a record kept whole in
that one value (as loads were before they were chunked).
"""
import base64
import json
import zlib
from typing import Any, Dict, List, Optional, Tuple

from .kvstore import Store

#: every stored value stays below this many bytes (the store's limit is 64 KiB)
MAX_VALUE = 60000
#: base64 characters per chunk (ASCII: one byte each)
CHUNK_CHARS = 56000
FORMAT = 1
#: what an index holds besides the record's summary
PLACE = ('format', 'start', 'chunks', 'chars', 'crc')


def encode(record: Dict[str, Any]) -> str:
    data = json.dumps(record, sort_keys=True, separators=(',', ':')).encode('utf-8')
    return base64.b64encode(zlib.compress(data, 6)).decode('ascii')


def decode(text: str) -> Dict[str, Any]:
    return dict(json.loads(zlib.decompress(base64.b64decode(text)).decode('utf-8')))


class Damaged(Exception):
    """A record's chunks do not match its index (a save replaced them under a reader)."""


class ChunkedRecords:
    """Records under two key prefixes of the store: their chunks, their indexes."""

    def __init__(self, store: Store, chunks: str, index: str) -> None:
        self.store = store
        self.chunks = chunks
        self.index = index

    def chunk_key(self, record_id: str, number: int) -> str:
        return '%s%s/%04d' % (self.chunks, record_id, number)

    def index_of(self, record_id: str) -> Optional[Dict[str, Any]]:
        raw = self.store.get_store(self.index + record_id)
        return None if raw is None else dict(json.loads(raw))

    def save(self, record_id: str, record: Dict[str, Any],
             summary: Dict[str, Any]) -> Dict[str, Any]:
        """Store a record (again); returns its index: ``summary`` and where its chunks are."""
        text = encode(record)
        pieces = [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or ['']
        old = self.index_of(record_id)
        old_start, old_count = (old['start'], old['chunks']) if old and 'chunks' in old \
            else (0, 0)
        # a range that does not overlap the one the current index points to
        start = 0 if len(pieces) <= old_start else old_start + old_count
        for n, piece in enumerate(pieces):
            self.store.set_store(self.chunk_key(record_id, start + n), piece)
        index = dict(summary, format=FORMAT, start=start, chunks=len(pieces), chars=len(text),
                     crc=zlib.crc32(text.encode('ascii')))
        self.store.set_store(self.index + record_id, json.dumps(index, sort_keys=True))
        keep = {self.chunk_key(record_id, start + n) for n in range(len(pieces))}
        # the old version's chunks and any left by a save cut off half-way
        for key in self.store.get_store_prefix('%s%s/' % (self.chunks, record_id)):
            if key not in keep:
                self.store.set_store(key, None)
        return index

    def read(self, record_id: str) -> Optional[Dict[str, Any]]:
        """A record, None if there is none; Damaged if its chunks do not match its index."""
        index = self.index_of(record_id)
        if index is None:
            return None
        if 'chunks' not in index:
            return index
        parts = []
        for n in range(index['chunks']):
            part = self.store.get_store(self.chunk_key(record_id, index['start'] + n))
            if part is None:
                raise Damaged(n)
            parts.append(part)
        text = ''.join(parts)
        if len(text) != index['chars'] or zlib.crc32(text.encode('ascii')) != index['crc']:
            raise Damaged('checksum')
        return decode(text)

    def summaries(self) -> List[Tuple[str, Dict[str, Any]]]:
        """Every record's id and index, by id."""
        return sorted((key[len(self.index):], dict(json.loads(raw)))
                      for key, raw in self.store.get_store_prefix(self.index).items())

    def has(self, record_id: str) -> bool:
        return self.index_of(record_id) is not None

    def orphans(self) -> List[str]:
        """The ids of chunks no index points to (a first save cut off)."""
        indexed = {key[len(self.index):] for key in self.store.get_store_prefix(self.index)}
        return sorted({key[len(self.chunks):].split('/')[0]
                       for key in self.store.get_store_prefix(self.chunks)} - indexed)

    def remove(self, record_id: str) -> None:
        # the index first: from now on the record is not listed, whatever happens next
        self.store.set_store(self.index + record_id, None)
        self.remove_chunks(record_id)

    def remove_chunks(self, record_id: str) -> None:
        for key in self.store.get_store_prefix('%s%s/' % (self.chunks, record_id)):
            self.store.set_store(key, None)
