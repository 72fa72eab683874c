"""Only the active mgr writes results (journals: see test_journal.py)."""

import pytest
from fixtures import MgrStore

from rgwbench.cluster.fencing import Fenced
from rgwbench.serial import load
from rgwbench.results.model import Run
from rgwbench.results.store import ResultStore


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
