"""Where agents go: every RGW host by default, hosts named, `rgw`, `mgr` or `count:N`."""
from typing import List, Optional

import pytest

from rgwbench.errors import InvalidInput, NotFound
from rgwbench.profiles.placement import agent_count, agent_hosts, placement_hosts
from rgwbench.profiles import FieldError, check_placement

KNOWN = ['h1', 'h2', 'h3', 'h4']


def known() -> List[str]:
    return list(reversed(KNOWN))


def never() -> List[str]:
    raise AssertionError('the hosts were asked for')


def test_the_default_and_rgw_place_an_agent_on_each_rgw_host_asked_each_time() -> None:
    asked: List[int] = []

    def rgw_hosts() -> List[str]:
        asked.append(1)
        return ['h2', 'h1', 'h2']   # two daemons on h2

    for placement in (None, [], ['rgw']):
        assert agent_hosts(placement, rgw_hosts, never) == ['h1', 'h2']
    assert len(asked) == 3
    assert agent_count([], ['h2', 'h1', 'h2']) == 2 == agent_count(['rgw'], ['h1', 'h2'])


def test_the_default_is_the_mgr_host_without_an_orchestrator_or_rgw_daemons() -> None:
    def no_orchestrator() -> Optional[List[str]]:
        return None
    assert agent_hosts(None, no_orchestrator, never) == []
    assert agent_hosts([], lambda: [], never) == []
    assert agent_count([], []) == 1
    with pytest.raises(NotFound, match='no orchestrator backend'):
        agent_hosts(['rgw'], no_orchestrator, never)
    with pytest.raises(NotFound, match='no orchestrator backend'):
        agent_hosts(['count:2'], no_orchestrator, never)


def test_mgr_and_named_hosts_do_not_ask_the_orchestrator() -> None:
    assert agent_hosts(['mgr'], never, never) == []
    assert agent_hosts(['h3', 'h1'], never, never) == ['h3', 'h1']
    assert agent_count(['mgr'], ['h1', 'h2']) == 1
    assert agent_count(['h3', 'h1'], ['h1']) == 2


def test_an_rgw_placement_without_rgw_daemons_is_refused() -> None:
    with pytest.raises(NotFound):
        agent_hosts(['rgw'], lambda: [], never)


def test_a_count_takes_the_rgw_hosts_first_then_the_others_by_name() -> None:
    assert agent_hosts(['count:3'], lambda: ['h4', 'h2'], known) == ['h2', 'h4', 'h1']
    assert agent_hosts(['count:1'], lambda: ['h4', 'h2'], known) == ['h2']
    assert agent_count(['count:3'], ['h1']) == 3
    with pytest.raises(InvalidInput, match='count:5: the orchestrator knows 4 host'):
        agent_hosts(['count:5'], lambda: ['h1'], known)


def test_a_keyword_or_a_count_stands_alone() -> None:
    assert placement_hosts('rgw', lambda: KNOWN) == ['rgw']
    assert placement_hosts('count:2', never) == ['count:2']
    assert placement_hosts('h1,h2', lambda: KNOWN) == ['h1', 'h2']
    with pytest.raises(InvalidInput, match='rgw stands alone'):
        placement_hosts('rgw,h1', lambda: KNOWN)
    with pytest.raises(InvalidInput, match='count:2 stands alone'):
        placement_hosts('h1,count:2', lambda: KNOWN)
    with pytest.raises(InvalidInput, match='count:0: the count must be from 1 to 64'):
        placement_hosts('count:0', lambda: KNOWN)
    with pytest.raises(InvalidInput, match='unknown host h9'):
        placement_hosts('h1,h9', lambda: KNOWN)
    assert check_placement(['rgw'], 'placement') == ['rgw']
    assert check_placement('count:3', 'placement') == ['count:3']
    with pytest.raises(FieldError, match='mgr stands alone'):
        check_placement(['h1', 'mgr'], 'placement')
    with pytest.raises(FieldError, match='count:65: the count must be from 1 to 64'):
        check_placement(['count:65'], 'placement')
    with pytest.raises(FieldError, match='is not a host name'):
        check_placement(['count:x'], 'placement')
