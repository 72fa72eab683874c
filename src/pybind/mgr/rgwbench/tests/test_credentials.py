"""The stored S3 credentials: the secret key never goes through the mgr's set_store,
whose refused writes the mgr logs with their values."""
import json
from typing import Any, Dict, Optional, Tuple

import pytest

from fixtures import MemoryStore
from rgwbench.cluster.credentials import KEY, CredentialStore
from rgwbench.errors import RGWBenchError

SECRET = 'Tg7Py5_2QOWTGrpMuJ5u7-bWybzBDFQQcjcMdda9'


class NoSetStore(MemoryStore):
    """A store whose set_store fails the test, as a refused write would show its value."""

    def set_store(self, key: str, val: Optional[str]) -> None:
        raise AssertionError('set_store(%r) was called' % key)


def test_the_secret_key_is_stored_and_read_by_mon_commands_only() -> None:
    store = NoSetStore()
    creds = CredentialStore(store)
    creds.set(json.dumps({'access_key': 'AK', 'secret_key': SECRET}))
    assert json.loads(store.data[KEY])['secret_key'] == SECRET
    assert creds.get() == {'access_key': 'AK', 'secret_key': SECRET}
    assert creds.describe() == {'configured': True, 'access_key': 'AK', 'ca_bundle': False}
    assert creds.remove() is True
    assert store.data == {} and creds.get() is None
    assert creds.remove() is False


def test_credentials_stored_by_set_store_before_are_read() -> None:
    store = MemoryStore()
    store.set_store(KEY, json.dumps({'access_key': 'AK', 'secret_key': SECRET}))
    assert CredentialStore(store).require()['secret_key'] == SECRET


class RefusingMon(MemoryStore):
    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]:
        return -11, '', "error setting 'mgr/rgwbench/credentials/s3': (11) try again"


def test_a_write_the_mon_refuses_is_an_error_without_the_value() -> None:
    with pytest.raises(RGWBenchError) as raised:
        CredentialStore(RefusingMon()).set(json.dumps({'access_key': 'AK', 'secret_key': SECRET}))
    assert SECRET not in str(raised.value)
    assert raised.value.errno == -11
    assert 'storing credentials/s3 failed' in str(raised.value)
