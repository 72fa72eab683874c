"""Where agents go: hosts named, or the `rgw` and `mgr` keywords."""
from typing import List

import pytest

from rgwbench.errors import InvalidInput, NotFound
from rgwbench.orchestration import agent_hosts, placement_hosts
from rgwbench.profiles import FieldError, check_placement

KNOWN = ['h1', 'h2', 'h3']


def test_the_rgw_keyword_places_an_agent_on_each_rgw_host_asked_each_time() -> None:
    asked: List[int] = []

    def rgw_hosts() -> List[str]:
        asked.append(1)
        return ['h2', 'h1', 'h2']   # two daemons on h2

    assert agent_hosts(['rgw'], rgw_hosts) == ['h1', 'h2']
    assert agent_hosts(['rgw'], rgw_hosts) == ['h1', 'h2']
    assert len(asked) == 2


def test_no_placement_or_mgr_is_one_agent_on_the_mgr_host() -> None:
    def never() -> List[str]:
        raise AssertionError('the RGW hosts were asked for')
    assert agent_hosts(None, never) == [] and agent_hosts([], never) == []
    assert agent_hosts(['mgr'], never) == []
    assert agent_hosts(['h3', 'h1'], never) == ['h3', 'h1']


def test_an_rgw_placement_without_rgw_daemons_is_refused() -> None:
    with pytest.raises(NotFound):
        agent_hosts(['rgw'], lambda: [])


def test_a_keyword_stands_alone() -> None:
    assert placement_hosts('rgw', lambda: KNOWN) == ['rgw']
    assert placement_hosts('h1,h2', lambda: KNOWN) == ['h1', 'h2']
    with pytest.raises(InvalidInput, match='rgw stands alone'):
        placement_hosts('rgw,h1', lambda: KNOWN)
    with pytest.raises(InvalidInput, match='unknown host h9'):
        placement_hosts('h1,h9', lambda: KNOWN)
    assert check_placement(['rgw'], 'placement') == ['rgw']
    with pytest.raises(FieldError, match='mgr stands alone'):
        check_placement(['h1', 'mgr'], 'placement')
