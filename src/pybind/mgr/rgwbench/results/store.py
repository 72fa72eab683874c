"""Results of runs in the module's config-key store.

A record is kept whole (histograms and per-second series included): JSON,
compressed with zlib, base64, cut into chunks so that every value stays
under ``MAX_VALUE`` bytes (the store takes at most 64 KiB a value).

    result/<run_id>/<NNNN>     the chunks of a run (NNNN from 0000)
    result_index/<run_id>      its index: a summary and where its chunks are

The chunks of ``a`` are under ``result/a/``, a prefix that no other run's
keys start with (a run id holds no ``/``). The index is written after the
chunks and removed before them, so a half-written result is never listed.
Saving a run again writes its new chunks next to the old ones (numbers that
do not overlap), then the index, then removes the old chunks: a reader
never sees a mix of two versions.
"""
import base64
import json
import re
import zlib
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import Busy, InvalidInput, NotFound, RGWBenchError
from ..cluster.fencing import check_active
from ..cluster.kvstore import Store
from .model import Run, RunSummary

CHUNK_PREFIX = 'result/'
INDEX_PREFIX = 'result_index/'
#: every stored value stays below this many bytes (the store's limit is 64 KiB)
MAX_VALUE = 60000
#: base64 characters per chunk (ASCII: one byte each)
CHUNK_CHARS = 56000
FORMAT = 1
FINISHED = ('complete', 'failed', 'aborted')
_RUN_ID = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$')


def check_run_id(run_id: Optional[str]) -> str:
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise InvalidInput('invalid run id %r: letters, digits and ._:@+- only, no "/"'
                           % (run_id,))
    return run_id


def chunk_key(run_id: str, number: int) -> str:
    return '%s%s/%04d' % (CHUNK_PREFIX, run_id, number)


def encode(record: Dict[str, Any]) -> str:
    data = json.dumps(record, sort_keys=True, separators=(',', ':')).encode('utf-8')
    return base64.b64encode(zlib.compress(data, 6)).decode('ascii')


def decode(text: str) -> Dict[str, Any]:
    return dict(json.loads(zlib.decompress(base64.b64decode(text)).decode('utf-8')))


def _time_key(value: Any) -> Tuple[int, float, str]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), '')
    return (1, 0.0, '' if value is None else str(value))


def newest_last(summaries: List[RunSummary]) -> List[RunSummary]:
    return sorted(summaries, key=lambda s: (_time_key(s.started), str(s.run_id)))


class ResultStore:
    """Results of runs, whole, in the module's store (see the module docstring)."""

    def __init__(self, store: Store, keep: Callable[[], int]) -> None:
        self.store = store
        self.keep = keep

    def _index(self, run_id: str) -> Optional[Dict[str, Any]]:
        raw = self.store.get_store(INDEX_PREFIX + run_id)
        return None if raw is None else dict(json.loads(raw))

    def save(self, run: Run) -> Dict[str, Any]:
        """Store the whole run (again, while it runs); returns its index entry.

        After a finished run is saved, only the newest ``keep()`` finished runs
        are kept; running ones are never removed.
        """
        run_id = check_run_id(run.run_id)
        check_active(self.store, 'write the result of %s' % run_id)
        text = encode(run.to_dict())
        pieces = [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or ['']
        old = self._index(run_id)
        old_start, old_count = (old['start'], old['chunks']) if old else (0, 0)
        # a range that does not overlap the one the current index points to
        start = 0 if len(pieces) <= old_start else old_start + old_count
        for n, piece in enumerate(pieces):
            self.store.set_store(chunk_key(run_id, start + n), piece)
        index = run.summary().to_dict()
        index.update(format=FORMAT, start=start, chunks=len(pieces), chars=len(text),
                     crc=zlib.crc32(text.encode('ascii')))
        self.store.set_store(INDEX_PREFIX + run_id, json.dumps(index, sort_keys=True))
        keep = {chunk_key(run_id, start + n) for n in range(len(pieces))}
        # the old version's chunks and any left by a save cut off half-way
        for key in self.store.get_store_prefix('%s%s/' % (CHUNK_PREFIX, run_id)):
            if key not in keep:
                self.store.set_store(key, None)
        if run.state in FINISHED:
            self._retain()
        return index

    def _retain(self) -> None:
        keep = max(1, int(self.keep()))
        finished = [s for s in self.summaries() if s.state in FINISHED]
        for old in finished[:-keep]:
            self._remove(str(old.run_id))

    def _read(self, run_id: str) -> Optional[Dict[str, Any]]:
        index = self._index(run_id)
        if index is None:
            return None
        parts = []
        for n in range(index['chunks']):
            part = self.store.get_store(chunk_key(run_id, index['start'] + n))
            if part is None:
                raise KeyError(n)
            parts.append(part)
        text = ''.join(parts)
        if len(text) != index['chars'] or zlib.crc32(text.encode('ascii')) != index['crc']:
            raise ValueError('checksum')
        return decode(text)

    def load(self, run_id: str) -> Dict[str, Any]:
        """The whole result of a run as stored (`Run.to_dict()`); NotFound if there is none.

        This is the document `results export` prints; `load_run` reads it.
        """
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise NotFound('no result %r (see `ceph rgwbench results ls`)' % (run_id,))
        for _ in range(3):  # a save that replaces the chunks under our feet: read again
            try:
                record = self._read(run_id)
            except (KeyError, ValueError):
                continue
            if record is None:
                raise NotFound('no result %r (see `ceph rgwbench results ls`)' % run_id)
            return record
        raise RGWBenchError('result %r is damaged in the store; remove it with '
                            '`ceph rgwbench results rm %s`' % (run_id, run_id))

    def load_run(self, run_id: str) -> Run:
        """The whole result of a run; NotFound if there is none."""
        return Run.from_dict(self.load(run_id))

    def summaries(self) -> List[RunSummary]:
        """Summaries of the stored runs, newest last."""
        return newest_last([RunSummary.from_dict(json.loads(raw))
                            for raw in self.store.get_store_prefix(INDEX_PREFIX).values()])

    def ls(self) -> List[Dict[str, Any]]:
        """The summaries as `results ls -f json` prints them."""
        return [s.to_dict() for s in self.summaries()]

    def rm(self, run_id: str, force: bool = False) -> None:
        """Remove a run's result; a running run only with ``force``."""
        index = self._index(run_id) if isinstance(run_id, str) and _RUN_ID.match(run_id) \
            else None
        if index is None:
            raise NotFound('no result %r (see `ceph rgwbench results ls`)' % (run_id,))
        if index.get('state') == 'running' and not force:
            raise Busy('run %s is still running: abort it first (`ceph rgwbench abort`)'
                       % run_id)
        self._remove(run_id)

    def sweep(self) -> List[str]:
        """Remove chunks no index points to (a first save cut off); returns their runs.

        Only when no save is under way (at module start): a first save writes
        its chunks before its index.
        """
        indexed = set(self.store.get_store_prefix(INDEX_PREFIX))
        orphans = sorted({key[len(CHUNK_PREFIX):].split('/')[0]
                          for key in self.store.get_store_prefix(CHUNK_PREFIX)} -
                         {key[len(INDEX_PREFIX):] for key in indexed})
        for run_id in orphans:
            check_active(self.store, 'remove the result of %s' % run_id)
            for key in self.store.get_store_prefix('%s%s/' % (CHUNK_PREFIX, run_id)):
                self.store.set_store(key, None)
        return orphans

    def _remove(self, run_id: str) -> None:
        check_active(self.store, 'remove the result of %s' % run_id)
        # the index first: from now on the run is not listed, whatever happens next
        self.store.set_store(INDEX_PREFIX + run_id, None)
        for key in self.store.get_store_prefix('%s%s/' % (CHUNK_PREFIX, run_id)):
            self.store.set_store(key, None)
