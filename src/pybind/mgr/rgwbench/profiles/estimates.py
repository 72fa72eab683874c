"""How long a run of a profile takes."""
from .types import Profile, Variant, Workload

# What a run spends besides measuring, for estimates: per workload (agents
# started, objects prefilled and removed) and per variant (settings put in place,
# daemons restarted and checked, then put back; the cluster as it is needs none).
WORKLOAD_ALLOWANCE_S = 5.0
VARIANT_ALLOWANCE_S = 60.0
AS_IS_ALLOWANCE_S = 10.0


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
