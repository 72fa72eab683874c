"""How long a run of a profile takes.

Without a cluster (`profile ls`, `profile show`, a sweep's share) a variant with
settings is given a flat allowance. `plan` knows what the run will do to the
cluster and counts it (`ClusterWork`): each RGW restart, spec applied, OSD batch
restarted and bounded prefill, applied and put back, at the times below.

A restart, spec or OSD batch is counted at the median time such steps took on this
cluster in earlier runs and applies (`StepSeconds`, from cluster/step_times.py's
store), or where none was timed yet at the time below. Those were measured on a local
cluster of three hosts (Pacific, four memstore OSDs on two CRUSH hosts, the machine
loaded by other clusters), from the manager's log of two runs (doc/mgr/rgwbench.rst,
"How long a run takes"); elsewhere a restart takes what it takes there (an RGW restart
on Tentacle's local cluster, 10 s a daemon).
"""
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Mapping

from ..cluster.step_times import DAEMON_RESTART, OSD_BATCH, SPEC

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
#: an `orch restart` of a service, until its daemons are back (RGW: registered anew);
#: measured 0.9 to 3.3 s to its restart, 1.4 to 3.2 s for a variant applying one
DAEMON_RESTART_S = 2.5
#: a service spec applied or put back, until its daemons are redeployed; measured 2.0 to
#: 5.5 s
SPEC_S = 4.0
#: a batch of OSDs restarted (a host's together, or one), until they are up again and
#: the PGs active+clean; measured 8.0 to 9.2 s (memstore OSDs)
OSD_BATCH_S = 9.0


@dataclass(frozen=True)
class StepSeconds:
    """What each step on the cluster takes, and which of the estimate's parts
    (`daemon_restarts`, `specs`, `osd_restarts`) have times measured on this cluster."""
    daemon_restart_s: float = DAEMON_RESTART_S
    spec_s: float = SPEC_S
    osd_batch_s: float = OSD_BATCH_S
    measured: FrozenSet[str] = field(default_factory=frozenset)


#: the kind of step (cluster/step_times.py) each part of the estimate counts
MEASURED_PARTS = {DAEMON_RESTART: 'daemon_restarts', SPEC: 'specs', OSD_BATCH: 'osd_restarts'}


def step_seconds(medians: Mapping[str, float]) -> StepSeconds:
    """The times measured on this cluster (by kind of step), the fixed ones for the rest."""
    return StepSeconds(daemon_restart_s=medians.get(DAEMON_RESTART, DAEMON_RESTART_S),
                       spec_s=medians.get(SPEC, SPEC_S),
                       osd_batch_s=medians.get(OSD_BATCH, OSD_BATCH_S),
                       measured=frozenset(MEASURED_PARTS[k] for k in medians
                                          if k in MEASURED_PARTS))


@dataclass(frozen=True)
class ClusterWork:
    """What a run does to the cluster besides measuring, as its plan counts it: each
    daemon restart, spec and OSD batch once when applied and once when put back."""
    applications: int = 0
    daemon_restarts: int = 0
    specs: int = 0
    osd_batches: int = 0
    #: the time bound of every prefill of a working set sized from the caches
    prefill_s: float = 0.0

    def seconds(self, steps: StepSeconds = StepSeconds()) -> Dict[str, float]:
        """The estimate's parts, by what they are for, each step at its time in `steps`."""
        return {'run': RUN_ALLOWANCE_S,
                'applications': self.applications * APPLICATION_S,
                'daemon_restarts': self.daemon_restarts * steps.daemon_restart_s,
                'specs': self.specs * steps.spec_s,
                'osd_restarts': self.osd_batches * steps.osd_batch_s,
                'prefills': self.prefill_s}


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
                    steps: StepSeconds = StepSeconds()) -> Dict[str, float]:
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
