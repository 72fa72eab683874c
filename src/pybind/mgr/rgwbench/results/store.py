"""Results of runs in the module's config-key store, whole (histograms and per-second
series included), in chunks (cluster.chunked):

    result/<run_id>/<NNNN>     the chunks of a run (NNNN from 0000)
    result_index/<run_id>      its index: a summary and where its chunks are
    load_chunk/<load_id>/<NNNN>  the chunks of a load (`ceph rgwbench load`)
    load/<load_id>             its index; a load stored before loads were chunked
                               is whole in this one value, and reads as it was

The stores give and take typed records: `Run` (and `RunSummary` for `results
ls`), `LoadRecord` (and `LoadSummary` for `load ls`); their JSON is
`serial.dump(record)`, the document `results export` and `-f json` print.
"""
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import Busy, InvalidInput, NotFound, RGWBenchError
from ..cluster.chunked import CHUNK_CHARS, MAX_VALUE, ChunkedRecords, Damaged, decode, encode
from ..cluster.fencing import check_active
from ..cluster.kvstore import Store
from ..serial import dump, load
from .model import LoadRecord, LoadSummary, Run, RunSummary

CHUNK_PREFIX = 'result/'
INDEX_PREFIX = 'result_index/'
LOAD_CHUNK_PREFIX = 'load_chunk/'
LOAD_INDEX_PREFIX = 'load/'
#: the loads kept (the newest)
KEEP_LOADS = 10
FINISHED = ('complete', 'failed', 'aborted')
_RUN_ID = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}\Z')
__all__ = ['CHUNK_CHARS', 'MAX_VALUE', 'LoadStore', 'ResultStore', 'check_run_id', 'decode',
           'encode']


def check_run_id(run_id: Optional[str]) -> str:
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise InvalidInput('invalid run id %r: letters, digits and ._:@+- only, no "/"'
                           % (run_id,))
    return run_id


def chunk_key(run_id: str, number: int) -> str:
    return '%s%s/%04d' % (CHUNK_PREFIX, run_id, number)


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
        self.records = ChunkedRecords(store, CHUNK_PREFIX, INDEX_PREFIX)

    def save(self, run: Run) -> Dict[str, Any]:
        """Store the whole run (again, while it runs); returns its index entry.

        After a finished run is saved, only the newest ``keep()`` finished runs
        are kept; running ones are never removed.
        """
        run_id = check_run_id(run.run_id)
        check_active(self.store, 'write the result of %s' % run_id)
        index = self.records.save(run_id, dump(run), dump(run.summary()))
        if run.state in FINISHED:
            self._retain()
        return index

    def _retain(self) -> None:
        keep = max(1, int(self.keep()))
        finished = [s for s in self.summaries() if s.state in FINISHED]
        for old in finished[:-keep]:
            self._remove(str(old.run_id))

    def load(self, run_id: str) -> Run:
        """The whole result of a run; NotFound if there is none."""
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise NotFound('no result %r (see `ceph rgwbench results ls`)' % (run_id,))
        for _ in range(3):  # a save that replaces the chunks under our feet: read again
            try:
                record = self.records.read(run_id)
            except Damaged:
                continue
            if record is None:
                raise NotFound('no result %r (see `ceph rgwbench results ls`)' % run_id)
            return load(Run, record)
        raise RGWBenchError('result %r is damaged in the store; remove it with '
                            '`ceph rgwbench results rm %s`' % (run_id, run_id))

    def summaries(self) -> List[RunSummary]:
        """Summaries of the stored runs, newest last (what `results ls` shows)."""
        return newest_last([load(RunSummary, index) for _, index in self.records.summaries()])

    def rm(self, run_id: str, force: bool = False) -> None:
        """Remove a run's result; a running run only with ``force``."""
        index = self.records.index_of(run_id) if isinstance(run_id, str) and _RUN_ID.match(
            run_id) else None
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
        orphans = self.records.orphans()
        for run_id in orphans:
            check_active(self.store, 'remove the result of %s' % run_id)
            self.records.remove_chunks(run_id)
        return orphans

    def _remove(self, run_id: str) -> None:
        check_active(self.store, 'remove the result of %s' % run_id)
        self.records.remove(run_id)


class LoadStore:
    """The newest loads, whole, in the module's store (see the module docstring)."""

    def __init__(self, store: Store, keep: int = KEEP_LOADS) -> None:
        self.records = ChunkedRecords(store, LOAD_CHUNK_PREFIX, LOAD_INDEX_PREFIX)
        self.keep = keep

    def save(self, record: LoadRecord) -> None:
        """Store a load (again), then remove the oldest past the ``keep`` newest."""
        load_id = check_run_id(record.load_id)
        self.records.save(load_id, dump(record), dump(record.summary()))
        for old, _ in self.records.summaries()[:-self.keep]:
            self.records.remove(old)

    def load(self, load_id: str) -> Optional[LoadRecord]:
        """A load as stored; None if there is none (or it is damaged)."""
        if not isinstance(load_id, str) or not _RUN_ID.match(load_id):
            return None
        for _ in range(3):  # a save that replaces the chunks under our feet: read again
            try:
                found = self.records.read(load_id)
            except Damaged:
                continue
            return None if found is None else load(LoadRecord, found)
        return None

    def newest(self) -> Optional[LoadRecord]:
        ids = [load_id for load_id, _ in self.records.summaries()]
        return self.load(ids[-1]) if ids else None

    def summaries(self) -> List[LoadSummary]:
        """The stored loads, oldest first (load ids start with the time they started)."""
        return [load(LoadSummary, index) for _, index in self.records.summaries()]
