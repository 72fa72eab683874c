"""What would skew or endanger a run, found before it starts: `ceph rgwbench check`.

`findings(view, profile)` is what a run or a load calls; the checks read the
cluster only through a ClusterView (view.py), MgrClusterView in the mgr.
"""
from dataclasses import replace
from typing import List, Optional

from ..profiles.placement import agent_count
from ..profiles.prefills import held_at_once
from ..profiles import MAX_CONCURRENCY, Profile, Workload
from ..settings.targets import URLS
from .cache_checks import cache_findings, sized_to_caches
from .capacity_estimate import capacity_findings
from .config_checks import config_findings
from .facts import read_facts
from .finding import Finding, Level, findings_to_text, ordered
from .health_checks import health_findings, no_rgw_daemon
from .pg_checks import pg_findings
from .queue_checks import queue_findings, uneven_spread
from .reshard_estimate import reshard_findings
from .view import ClusterView, MgrClusterView

__all__ = ['ClusterView', 'Finding', 'Level', 'MgrClusterView', 'findings',
           'findings_to_text', 'sized_workload', 'workload_findings']


def findings(view: ClusterView, profile: Optional[Profile] = None,
             keep_objects: bool = False, load: bool = False,
             size_working_sets: bool = False, rgw_required: bool = False) -> List[Finding]:
    """Every finding for this cluster, and for a run of `profile` when given.

    keep_objects: the run keeps its objects (the module option), so nothing it
    writes is freed before it ends. load: `profile` is a load's one workload.
    size_working_sets: GET workloads that name no `objects` read a working set
    sized from the caches (`sized_to_caches`), as the run then sends them.
    rgw_required: a run is to start (or `check` tells whether one could), which
    needs an RGW daemon in the service map.
    """
    facts = read_facts(view)
    found = health_findings(facts) + config_findings(facts) + pg_findings(facts)
    if rgw_required:
        found += no_rgw_daemon(facts)
    if profile is not None:
        agents = agent_count(profile.placement, [d.host for d in facts.rgws])
        if size_working_sets:
            held = held_at_once(profile)
            profile = replace(profile, workloads=[
                sized_to_caches(facts, w, agents, held) for w in profile.workloads])
        found += capacity_findings(facts, profile, keep_objects, load)
        # Each workload as the run sends it to the RGW daemons there are now.
        workloads = [w.for_rgws(len(facts.rgws), MAX_CONCURRENCY) for w in profile.workloads]
        targets = len(profile.target.urls) if profile.target.kind == URLS else len(facts.rgws)
        found += [f for w in workloads for f in uneven_spread(w, targets, load)]
        found += queue_findings(facts, workloads, load) + cache_findings(
            facts, workloads, agents, load) + reshard_findings(facts, workloads, agents, load)
    return list(ordered(found))


def sized_workload(view: ClusterView, workload: Workload, agents: int,
                   held: int = 1) -> Workload:
    """`workload` with its working set sized from the caches now (`sized_to_caches`)."""
    return sized_to_caches(read_facts(view), workload, agents, held)


def workload_findings(view: ClusterView, workload: Workload, agents: int,
                      targets: int = 0) -> List[Finding]:
    """The cluster's findings before one workload of a run (after its variant's settings
    are in place), and those about the workload itself (`workload` as it runs, its
    concurrency scaled to the RGW daemons, over the variant's `targets`: 0, unknown)."""
    facts = read_facts(view)
    found = health_findings(facts) + config_findings(facts) + pg_findings(facts) + \
        queue_findings(facts, [workload]) + cache_findings(facts, [workload], agents) + \
        uneven_spread(workload, targets) + reshard_findings(facts, [workload], agents)
    return list(ordered(found))
