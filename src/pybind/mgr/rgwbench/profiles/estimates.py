"""How long a run of a profile takes.

Without a cluster (`profile ls`, `profile show`, a sweep's share) a variant with
settings is given a flat allowance. `plan` knows what the run will do to the
cluster and counts it (`ClusterWork`): each RGW restart, spec applied, OSD batch
restarted and bounded prefill, applied and put back, at the times below.

A restart, spec or OSD batch is counted at the median time such steps took on this
cluster in earlier runs and applies (`StepSeconds`, from cluster/step_times.py's
store), or where none was timed yet at the default below for the cluster's release and
RGW daemon count (`default_steps`). Those were measured on local clusters of three
hosts (four memstore OSDs, the machine loaded by other clusters), from the manager's
log (doc/mgr/rgwbench.rst, "How long a run takes"); elsewhere a restart takes what it
takes there.
"""
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Mapping

from ..cluster.step_times import DAEMON_RESTART, KINDS, OSD_BATCH, RGW_SPEC, SPEC

from .types import Profile, Variant, Workload

# Per workload: agents started, enrolled (2 s of settling), started together (2 s
# ahead), their results collected, the workload's buckets removed. Measured 5.6 to
# 7.3 s besides warm-up and duration (the first workload after TLS was applied, 10 s).
WORKLOAD_ALLOWANCE_S = 7.0
# Per variant, where the cluster is not known: settings put in place, daemons restarted
# and checked, then put back; the cluster as it is needs none.
VARIANT_ALLOWANCE_S = 60.0
AS_IS_ALLOWANCE_S = 10.0

# Where the cluster is known (ClusterWork), each of:
#: the run's own S3 user made and removed, the record saved at the end
RUN_ALLOWANCE_S = 3.0
#: a variant's application: its checks, config values and keys set
APPLICATION_S = 1.0
#: an RGW daemon restarted, until it is registered anew; orchestrators restart a service's
#: daemons one after another. Before Tentacle: 0.9 to 3.3 s for three daemons.
RGW_RESTART_S = 0.8
#: Tentacle's radosgw, told to stop, waits for its dedup background ("dedup_bg shutdown
#: waiting...") until it is killed: the test orchestrator kills it after 10 s, as podman
#: stop does by default; three daemons took 28.0 to 32.6 s. (cephadm gives RGW's
#: container 120 s: one daemon took 20 to 22 s to its registration.)
SLOW_STOP_SINCE = 20
SLOW_RGW_RESTART_S = 10.3
#: an RGW spec applied or put back, until its daemons are redeployed, each daemon (both
#: orchestrators redeploy a daemon again once its container arguments change): before
#: Tentacle 2.0 to 5.5 s for three daemons; Tentacle 57.7 and 62.9 s for three
RGW_SPEC_S = 1.3
SLOW_RGW_SPEC_S = 20.0
#: another service's spec (an ingress) applied or put back, until its daemons are
#: deployed
SPEC_S = 4.0
#: a batch of OSDs restarted (a host's together, or one), until they are up again and
#: the PGs active+clean; measured 8.0 to 9.2 s (Pacific), 8.4 to 10.5 s (Tentacle),
#: memstore OSDs
OSD_BATCH_S = 9.0


@dataclass(frozen=True)
class StepSeconds:
    """What each step on the cluster takes: a restart of the RGW service, an RGW spec or
    another spec applied or put back, a batch of OSDs restarted; and which kinds of step
    (cluster/step_times.py) were measured on this cluster."""
    daemon_restart_s: float
    rgw_spec_s: float
    spec_s: float
    osd_batch_s: float
    measured: FrozenSet[str] = field(default_factory=frozenset)

    def shown(self) -> Dict[str, float]:
        """By kind of step, as `plan -f json` shows them (`step_seconds`)."""
        return {DAEMON_RESTART: round(self.daemon_restart_s, 1),
                RGW_SPEC: round(self.rgw_spec_s, 1), SPEC: round(self.spec_s, 1),
                OSD_BATCH: round(self.osd_batch_s, 1)}


def default_steps(release: int, rgw_daemons: int) -> StepSeconds:
    """The times where this cluster measured none: RGW's steps for `rgw_daemons` daemons
    of Ceph `release` (its major version)."""
    slow = release >= SLOW_STOP_SINCE
    daemons = max(1, rgw_daemons)
    return StepSeconds(
        daemon_restart_s=daemons * (SLOW_RGW_RESTART_S if slow else RGW_RESTART_S),
        rgw_spec_s=daemons * (SLOW_RGW_SPEC_S if slow else RGW_SPEC_S),
        spec_s=SPEC_S, osd_batch_s=OSD_BATCH_S)


def step_seconds(medians: Mapping[str, float], defaults: StepSeconds) -> StepSeconds:
    """The times measured on this cluster (by kind of step), `defaults` for the rest."""
    return StepSeconds(daemon_restart_s=medians.get(DAEMON_RESTART, defaults.daemon_restart_s),
                       rgw_spec_s=medians.get(RGW_SPEC, defaults.rgw_spec_s),
                       spec_s=medians.get(SPEC, defaults.spec_s),
                       osd_batch_s=medians.get(OSD_BATCH, defaults.osd_batch_s),
                       measured=frozenset(k for k in medians if k in KINDS))


@dataclass(frozen=True)
class ClusterWork:
    """What a run does to the cluster besides measuring, as its plan counts it: each
    daemon restart, spec and OSD batch once when applied and once when put back."""
    applications: int = 0
    daemon_restarts: int = 0
    #: specs of the RGW service, and of others (an ingress)
    rgw_specs: int = 0
    specs: int = 0
    osd_batches: int = 0
    #: the time bound of every prefill of a working set sized from the caches
    prefill_s: float = 0.0

    def seconds(self, steps: StepSeconds) -> Dict[str, float]:
        """The estimate's parts, by what they are for, each step at its time in `steps`."""
        return {'run': RUN_ALLOWANCE_S,
                'applications': self.applications * APPLICATION_S,
                'daemon_restarts': self.daemon_restarts * steps.daemon_restart_s,
                'specs': self.rgw_specs * steps.rgw_spec_s + self.specs * steps.spec_s,
                'osd_restarts': self.osd_batches * steps.osd_batch_s,
                'prefills': self.prefill_s}

    def measured_parts(self, steps: StepSeconds) -> List[str]:
        """The estimate's parts whose every step counted is at a time measured on this
        cluster."""
        counted = {'daemon_restarts': {DAEMON_RESTART: self.daemon_restarts},
                   'specs': {RGW_SPEC: self.rgw_specs, SPEC: self.specs},
                   'osd_restarts': {OSD_BATCH: self.osd_batches}}
        return sorted(part for part, kinds in counted.items()
                      if any(kinds.values()) and
                      all(kind in steps.measured for kind, n in kinds.items() if n))


def workload_seconds(workload: Workload) -> float:
    """One workload under one variant, once: its warm-up, its duration, its start."""
    return workload.warmup_s + workload.duration_s + WORKLOAD_ALLOWANCE_S


def variant_seconds(profile: Profile, variant: Variant) -> float:
    """One variant, once: every workload, and its settings put in place and back."""
    return sum(workload_seconds(w) for w in profile.workloads) + (
        VARIANT_ALLOWANCE_S if variant.settings else AS_IS_ALLOWANCE_S)


def estimate_seconds(profile: Profile) -> float:
    """How long a run takes: every workload (warm-up + duration) under every variant, each
    repeat, plus what starting workloads and putting variants in place and back take."""
    return sum(variant_seconds(profile, v) for v in profile.variants) * profile.repeats


def workloads_seconds(profile: Profile) -> float:
    """Every workload under every variant, each repeat, with its start."""
    return sum(workload_seconds(w) for w in profile.workloads) * \
        len(profile.variants) * profile.repeats


def planned_seconds(profile: Profile, work: ClusterWork,
                    steps: StepSeconds) -> Dict[str, float]:
    """How long a run takes on a cluster whose plan counted `work`, its steps taking
    `steps`: its parts (`workloads`, and those of `ClusterWork.seconds`) and their
    `total`."""
    parts = dict(workloads=workloads_seconds(profile), **work.seconds(steps))
    return dict(parts, total=sum(parts.values()))


def format_duration(seconds: float) -> str:
    """3725 -> `1h 2m 5s`."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if hours:
        parts.append('%dh' % hours)
    if minutes:
        parts.append('%dm' % minutes)
    if secs or not parts:
        parts.append('%ds' % secs)
    return ' '.join(parts)
