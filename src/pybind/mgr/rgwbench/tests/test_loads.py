import json
import os
import subprocess
import threading
import time
from typing import Any, Dict, List, Optional

import pytest
from fixtures import MemoryStore

from rgwbench.credentials import CredentialStore, parse_credentials
from rgwbench.errors import Busy, InvalidInput, NotFound
from rgwbench.agents.launchers import processes_in, remove_leftovers
from rgwbench.loads import LEFTOVERS_KEY, LoadRequest, LoadService, compact, load_to_text


class Log:
    def exception(self, *args: Any) -> None:
        pass

    def warning(self, *args: Any) -> None:
        pass


class BlockingLauncher:
    """Never lets its agent start, so that a load stays in progress."""

    def __init__(self) -> None:
        self.removed = threading.Event()

    def agent_ids(self) -> List[str]:
        return ['host-a']

    def launch(self, config: Dict[str, str]) -> None:
        pass

    def problem(self, agent: str) -> Optional[str]:
        return None

    def remove(self) -> None:
        self.removed.set()

    def leftovers(self) -> Dict[str, Any]:
        return {'service': 'container.rgwbench-agent'}


def service(store: MemoryStore, endpoints: List[str],
            gate: Optional[threading.Event] = None) -> LoadService:
    def no_channel() -> Any:
        if gate is not None:
            gate.wait(10)
        raise RuntimeError('no channel in this test')
    return LoadService(store, CredentialStore(store), lambda: endpoints, lambda: {},
                       lambda placement: BlockingLauncher(), no_channel, Log())


def test_credentials_parse() -> None:
    assert parse_credentials('access_key: A\nsecret_key: S\n') == {
        'access_key': 'A', 'secret_key': 'S'}
    assert parse_credentials('{"access_key": "A", "secret_key": "S"}')['secret_key'] == 'S'
    for text, message in [('[1, 2]', 'expected a mapping'),
                          ('access_key: A', 'secret_key is missing'),
                          ('access_key: ""\nsecret_key: S', 'access_key is missing'),
                          ('access_key: A\nsecret_key: S\nx: 1', 'unknown field x'),
                          ('access_key: A\nsecret_key: S\nca_bundle: x', 'not a PEM'),
                          ('{', 'not JSON or YAML')]:
        with pytest.raises(InvalidInput, match=message):
            parse_credentials(text)


def test_credentials_store_never_describes_the_secret() -> None:
    store = MemoryStore()
    creds = CredentialStore(store)
    assert creds.describe() == {'configured': False}
    with pytest.raises(NotFound, match='credentials set'):
        creds.require()
    creds.set('access_key: A\nsecret_key: TOPSECRET\n')
    assert 'TOPSECRET' not in json.dumps(creds.describe())
    assert creds.require()['secret_key'] == 'TOPSECRET'
    assert creds.remove() is True and creds.remove() is False


def test_compact_drops_histograms_then_series() -> None:
    record = {'result': {'histogram': 'x' * 500, 'by_op': {'get': {'histogram': 'y' * 500}},
                         'per_second': list(range(100)), 'ops': 3}}
    assert compact(record, limit=10000) is record
    small = compact(record, limit=600)
    assert 'histogram' not in small['result'] and 'histogram' not in small['result']['by_op']['get']
    assert small['result']['per_second'] == list(range(100)) and small['trimmed']
    smaller = compact(record, limit=100)
    assert 'per_second' not in smaller['result'] and smaller['result']['ops'] == 3


def test_start_checks_before_anything_runs() -> None:
    store = MemoryStore()
    loads = service(store, [])
    with pytest.raises(NotFound, match='credentials'):
        loads.start(LoadRequest())
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    with pytest.raises(NotFound, match='no RGW endpoint'):
        loads.start(LoadRequest())
    with pytest.raises(InvalidInput, match='http'):
        loads.start(LoadRequest(endpoint='s3.example'))
    with pytest.raises(InvalidInput, match="unknown op 'fly'"):
        loads.start(LoadRequest(op='fly', endpoint='http://127.0.0.1:1'))
    assert loads.active() is None and store.get_store_prefix('load/') == {}


def test_one_load_at_a_time_and_its_record() -> None:
    store = MemoryStore()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    # Closed ports on loopback: the load's clean-up at its end finds nothing there.
    gate = threading.Event()
    loads = service(store, ['https://127.0.0.1:9', 'http://127.0.0.1:7'], gate)
    load_id = loads.start(LoadRequest(duration_s=1.0))
    try:
        with pytest.raises(Busy, match=load_id):
            loads.start(LoadRequest())
        active = loads.show()
        assert active['load_id'] == load_id and active['endpoint'] == 'http://127.0.0.1:7'
        assert active['state'] == 'running'
        assert 'load %s: running' % load_id in load_to_text(active)
    finally:
        gate.set()
    deadline = threading.Event()
    for _ in range(100):
        if loads.active() is None:
            break
        deadline.wait(0.1)
    record = loads.show(load_id)
    assert record['state'] == 'failed' and record['finished'] is not None
    assert store.get_store('load/' + load_id) is not None


def test_what_a_load_would_leave_is_written_down_before_it_starts_and_removed_after() -> None:
    store, gate = MemoryStore(), threading.Event()
    CredentialStore(store).set('access_key: A\nsecret_key: S')
    loads = service(store, ['http://127.0.0.1:1'], gate)
    load_id = loads.start(LoadRequest(duration_s=5))
    left = json.loads(store.data[LEFTOVERS_KEY])
    assert left['record']['load_id'] == load_id
    assert left['agents'] == {'service': 'container.rgwbench-agent'}
    assert left['bucket_prefix'] == 'rgwbench-%s' % load_id
    assert 'S' not in json.dumps(left['record']) and '"secret' not in json.dumps(left)
    gate.set()
    deadline = time.monotonic() + 20
    while loads.active() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert LEFTOVERS_KEY not in store.data


def test_a_new_mgr_removes_what_a_cut_off_load_left() -> None:
    store = MemoryStore()
    record = {'load_id': 'l1', 'state': 'running', 'endpoint': 'http://127.0.0.1:1',
              'request': LoadRequest()._asdict(), 'agents': {}, 'result': None,
              'error': None, 'started': 1.0, 'finished': None}
    store.set_store(LEFTOVERS_KEY, json.dumps({
        'record': record, 'agents': {'service': 'container.rgwbench-agent'},
        'endpoint': 'http://127.0.0.1:1', 'bucket_prefix': 'rgwbench-l1', 'buckets': 1,
        'key_prefix': 'rgwbench/'}))
    removed: List[str] = []
    loads = service(store, [])
    assert loads.recover(removed.append) == 'l1'
    assert removed == ['container.rgwbench-agent']
    shown = loads.show('l1')
    assert shown['state'] == 'failed' and 'mgr restarted' in shown['error']
    assert LEFTOVERS_KEY not in store.data
    assert loads.recover(removed.append) is None and removed == ['container.rgwbench-agent']


def test_a_local_agent_left_behind_is_ended_and_its_folder_removed(tmp_path: Any) -> None:
    folder = str(tmp_path / 'rgwbench-agent-x')
    os.mkdir(folder)
    proc = subprocess.Popen(['sleep', '60'], cwd=folder)
    try:
        assert processes_in(folder) == [proc.pid]
        remove_leftovers({'folder': folder}, lambda name: None)
        assert proc.wait(10) is not None
        assert not os.path.exists(folder) and processes_in(folder) == []
    finally:
        if proc.poll() is None:
            proc.kill()
