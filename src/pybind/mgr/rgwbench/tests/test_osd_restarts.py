"""OSD restarts a host at a time where `osd ok-to-stop` allows it, one at a time where
not, and none of an OSD that is down or out."""
from typing import List

from rgwbench.tests.osd_fakes import OsdRestartMgr

from rgwbench.cluster.access import ClusterAccess, group_by_host


def access(mgr: OsdRestartMgr) -> ClusterAccess:
    return ClusterAccess(mgr, lambda found: found, lambda spec: spec,  # type: ignore
                         timeout_s=60, clock=lambda: 0.0, sleep=lambda s: None)


THREE_HOSTS = {'h1': [0, 3], 'h2': [1, 4], 'h3': [2, 5]}


def test_the_osds_of_a_host_restart_together_when_ok_to_stop_allows_it() -> None:
    mgr = OsdRestartMgr(stale_reads=2, hosts=THREE_HOSTS)
    cluster = access(mgr)
    cluster.restart_osds()
    assert mgr.restarted_groups() == [[0, 3], [1, 4], [2, 5]]
    assert [0, 3] in mgr.asked and [1, 4] in mgr.asked and [2, 5] in mgr.asked
    # each group only once the PGs of the one before reported since it came back
    assert mgr.reported == mgr.epoch
    assert cluster.osd_restarted == 6


def test_a_host_ok_to_stop_refuses_as_a_whole_restarts_one_osd_at_a_time() -> None:
    mgr = OsdRestartMgr(stale_reads=0, hosts=THREE_HOSTS, stoppable=1)
    cluster = access(mgr)
    cluster.restart_osds()
    assert mgr.restarted_groups() == [[0], [3], [1], [4], [2], [5]]
    assert mgr.asked[0] == [0, 3]   # the whole host first
    assert cluster.osd_restarted == 6


def test_osds_down_or_out_are_skipped_and_said_so() -> None:
    mgr = OsdRestartMgr(stale_reads=0, hosts=THREE_HOSTS)
    mgr.down, mgr.out = {3}, {4}
    said: List[str] = []
    cluster = access(mgr)
    cluster.log = said.append
    cluster.restart_osds()
    assert mgr.restarted_groups() == [[0], [1], [2, 5]]
    assert not any(3 in ids or 4 in ids for ids in mgr.asked)
    assert 'not restarting osd.3, osd.4: down or out' in ' '.join(said)
    assert cluster.running_osd_ids() == [0, 1, 2, 5]
    assert cluster.osd_restarted == 4


def test_the_first_osd_waited_for_before_a_restart_is_one_that_runs() -> None:
    mgr = OsdRestartMgr(stale_reads=0, hosts=THREE_HOSTS)
    mgr.down = {0}
    access(mgr).wait_ready_to_restart('osd')
    assert mgr.asked == [[3]]


def test_osds_under_no_host_are_groups_of_their_own() -> None:
    tree = {'nodes': [{'id': -2, 'name': 'b', 'type': 'host', 'children': [2, 1]},
                      {'id': -3, 'name': 'a', 'type': 'host', 'children': [0]}]}
    groups = group_by_host(tree, [0, 1, 2, 7], skipped=[1])
    assert groups.hosts == [('a', [0]), ('b', [2]), ('osd.7', [7])]
    assert groups.skipped == [1]
