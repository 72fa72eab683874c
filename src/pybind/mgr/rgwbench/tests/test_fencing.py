"""Only the active mgr writes results (journals: see test_journal.py)."""
from typing import Any

import pytest
from fixtures import MemoryStore

from rgwbench.cluster.fencing import Fenced
from rgwbench.serial import load
from rgwbench.results.model import Run
from rgwbench.results.store import ResultStore


class MgrStore(MemoryStore):
    def __init__(self, active: str) -> None:
        super().__init__()
        self.active = active

    def get_mgr_id(self) -> str:
        return 'a'

    def get(self, data_name: str) -> Any:
        assert data_name == 'mgr_map'
        return {'epoch': 9, 'active_name': self.active}


def test_a_mgr_that_is_no_longer_active_writes_and_removes_no_result() -> None:
    store = MgrStore(active='a')
    results = ResultStore(store, lambda: 10)
    results.save(load(Run, {'run_id': 'r1', 'state': 'complete'}))
    kept = dict(store.data)
    store.active = 'b'   # a failover while mgr a hung
    with pytest.raises(Fenced, match='no longer the active mgr'):
        results.save(load(Run, {'run_id': 'r2', 'state': 'running'}))
    with pytest.raises(Fenced):
        results.rm('r1')
    assert store.data == kept
