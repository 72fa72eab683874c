"""Documents: numbers written in any base are bounded like decimal ones."""
import pytest

from rgwbench.documents import load_document
from rgwbench.errors import InvalidInput


@pytest.mark.parametrize('number', ['0x' + 'f' * 5000, '0b' + '1' * 20000, '0x' + 'f' * 20])
def test_a_huge_integer_in_another_base_is_refused_in_one_line(number: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        load_document('duration: %s\n' % number, 'profile')
    message = str(refused.value)
    assert message.startswith('profile: the number ') and 'out of range' in message
    assert '\n' not in message and len(message) < 200
