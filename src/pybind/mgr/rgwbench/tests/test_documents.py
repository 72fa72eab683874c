"""Documents handed in with -i: bounded in size, depth and what their aliases expand to."""
import json
import resource
import time
from typing import Any, Dict, Iterator

import pytest

from rgwbench.cluster.credentials import parse_credentials
from rgwbench.documents import MAX_BYTES, MAX_NUMBER, MAX_VALUES, load_document
from rgwbench.errors import InvalidInput
from rgwbench.profiles import parse_profile
from rgwbench.settings.registry import all_settings


@pytest.fixture(autouse=True)
def bounded_memory() -> Iterator[None]:
    """A defect here must fail the test, not take the machine's memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def laughs(levels: int = 9, width: int = 9, field: str = 'name') -> str:
    """YAML whose aliases expand to width ** levels values (a billion laughs)."""
    lines = ['a0: &a0 ["lol"]']
    for n in range(1, levels + 1):
        lines.append('a%d: &a%d [%s]' % (n, n, ', '.join(['*a%d' % (n - 1)] * width)))
    return '\n'.join(lines) + '\n%s: *a%d\n' % (field, levels)


GOOD: Dict[str, Any] = {'name': 'p', 'baseline': 'b',
                        'variants': [{'name': 'b', 'settings': {}}],
                        'workloads': [{'op': 'put', 'size': '4KiB', 'duration': 5}]}


@pytest.mark.parametrize('text, message', [
    (laughs(), 'its aliases stand for more than %d values' % MAX_VALUES),
    (laughs(field='description'), 'its aliases stand for more than'),
    ('name: &n [*n]\n', 'its aliases stand for more than'),
    ('{"name": ' + '[' * 100000 + ']' * 100000 + '}', 'nested too deeply'),
    ('name: ' + '[' * 50000 + ']' * 50000 + '\n', 'nested too deeply'),
    (json.dumps(dict(GOOD, description='x' * MAX_BYTES)),
     'more than the %d bytes a document may have' % MAX_BYTES),
    ('name: ' + '9' * 5000 + '\n', 'profile: not JSON or YAML'),
    (json.dumps(dict(GOOD, workloads=[dict(GOOD['workloads'][0], concurrency=10 ** 400)])),
     'the number 10000000000000000000... is out of range'),
    (json.dumps(dict(GOOD, workloads=[dict(GOOD['workloads'][0], duration=1e300)])),
     'the number 1e+300 is out of range'),
    ('{"name": "p", "workloads": [{"duration": NaN}]}', 'the number nan is out of range'),
    ('name: p\nworkloads: [{duration: .inf}]\n', 'the number inf is out of range'),
])
def test_a_hostile_profile_is_refused_at_once_with_one_line(text: str, message: str) -> None:
    # The CPU this process used, not the wall clock: a shared machine stretches the latter
    # (CI13: 40 s for one document, on a machine loaded by the integration tests).
    began = time.process_time()
    with pytest.raises(InvalidInput) as refused:
        parse_profile(text, all_settings())
    assert message in str(refused.value) and '\n' not in str(refused.value)
    assert str(refused.value).startswith('profile: ')
    assert time.process_time() - began < 30  # a billion laughs took 88 s (and 3 GiB)


def test_hostile_credentials_are_refused_with_one_line() -> None:
    for text in (laughs(field='access_key'), 'access_key: &a [*a]\nsecret_key: s\n',
                 '[' * 100000, 'x' * (MAX_BYTES + 1)):
        with pytest.raises(InvalidInput) as refused:
            parse_credentials(text)
        assert str(refused.value).startswith('credentials: ')
        assert '\n' not in str(refused.value)


def test_aliases_within_bounds_and_plain_documents_are_read_as_before() -> None:
    text = 'w: &w {op: put, size: 4KiB, duration: 5}\nworkloads: [*w, *w]\n'
    data = load_document(text, 'profile')
    assert data['workloads'] == [data['w'], data['w']]
    assert load_document(json.dumps(GOOD), 'profile') == GOOD
    assert load_document(b'a: 1', 'x') == {'a': 1}
    assert load_document('{"n": %d, "f": -2.5, "b": true}' % MAX_NUMBER, 'x') == {
        'n': MAX_NUMBER, 'f': -2.5, 'b': True}
