"""How long a run of a profile takes.

Without a cluster (`profile ls`, `profile show`, a sweep's share) a variant with
settings is given a flat allowance. `plan` knows what the run will do to the
cluster and counts it (`ClusterWork`): each RGW restart, spec applied, OSD batch
restarted and bounded prefill, applied and put back, at the times below.

The times were measured on a local cluster of three hosts (Pacific, four memstore
OSDs on two CRUSH hosts, the machine loaded by other clusters), from the manager's
log of two runs (doc/mgr/rgwbench.rst, "How long a run takes"); elsewhere a restart
takes what it takes there.
"""
from dataclasses import dataclass
from typing import Dict

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
class ClusterWork:
    """What a run does to the cluster besides measuring, as its plan counts it: each
    daemon restart, spec and OSD batch once when applied and once when put back."""
    applications: int = 0
    daemon_restarts: int = 0
    specs: int = 0
    osd_batches: int = 0
    #: the time bound of every prefill of a working set sized from the caches
    prefill_s: float = 0.0

    def seconds(self) -> Dict[str, float]:
        """The estimate's parts, by what they are for."""
        return {'run': RUN_ALLOWANCE_S,
                'applications': self.applications * APPLICATION_S,
                'daemon_restarts': self.daemon_restarts * DAEMON_RESTART_S,
                'specs': self.specs * SPEC_S,
                'osd_restarts': self.osd_batches * OSD_BATCH_S,
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


def planned_seconds(profile: Profile, work: ClusterWork) -> Dict[str, float]:
    """How long a run takes on a cluster whose plan counted `work`: its parts
    (`workloads`, and those of `ClusterWork.seconds`) and their `total`."""
    parts = dict(workloads=workloads_seconds(profile), **work.seconds())
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
