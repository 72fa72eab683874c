"""Profiles as `profile ls` and `profile show` print them."""
from typing import Any, Dict, List, Sequence, Union

from ..formatting import table
from ..serial import load
from ..settings.targets import AUTO, RGW, URLS, Target
from .builtin import builtin_names
from .estimates import estimate_seconds, format_duration
from .store import ProfileInfo
from .sweeps import sweeps_of
from ..loadgen.workload import Job
from .types import Profile, Workload, format_rate


def _setting_text(value: Any) -> str:
    if isinstance(value, bool):
        return 'on' if value else 'off'
    if isinstance(value, dict):
        return ', '.join('%s=%s' % kv for kv in value.items())
    return str(value)


def settings_text(settings: Dict[str, Any]) -> str:
    if not settings:
        return 'the cluster as it is'
    return '; '.join('%s: %s' % (k, _setting_text(v)) for k, v in settings.items())


def target_text(target: Target) -> str:
    if target.kind == AUTO:
        return 'each variant\'s: its ingress if it has one, else every RGW daemon'
    if target.kind == URLS:
        return ', '.join(target.urls)
    return 'every RGW daemon' if target.kind == RGW else 'every ingress frontend'


def _as_info(item: Union[ProfileInfo, Profile, Dict[str, Any]]) -> ProfileInfo:
    if isinstance(item, ProfileInfo):
        return item
    if isinstance(item, Profile):
        return ProfileInfo(item, item.name in builtin_names())
    return ProfileInfo(load(Profile, item),
                       bool(item.get('builtin', item.get('name') in builtin_names())))


def profile_to_text(item: Union[ProfileInfo, Profile, Dict[str, Any]]) -> str:
    """`profile show`: a ProfileInfo, a Profile or the dict of either."""
    info = _as_info(item)
    profile = info.profile
    lines = ['Profile %s (%s)' % (profile.name, 'built-in' if info.builtin else 'custom')]
    if profile.description:
        lines.append(profile.description)
    lines += ['',
              'Baseline: %s' % profile.baseline,
              'Repeats: %d' % profile.repeats + (
                  ', interleaved (variant by variant, each repeat a fresh application)'
                  if profile.interleaved() else ''),
              'Placement: %s' % (', '.join(profile.placement) if profile.placement
                                 else 'one load agent on every RGW host'),
              'Target: %s' % target_text(profile.target),
              'Estimated duration: %s' % format_duration(estimate_seconds(profile)),
              '', 'Variants:']
    lines.append(table(['VARIANT', 'SETTINGS'],
                       [[v.name + (' (baseline)' if v.name == profile.baseline else ''),
                         settings_text(v.settings)] for v in profile.variants], '  '))
    lines += ['', 'Workloads:']
    lines.append(table(
        ['WORKLOAD', 'OP', 'SIZE', 'CONCURRENCY', 'PROCESSES', 'DURATION', 'WARMUP', 'BUCKETS'],
        [[w.name, w.op + (' (%s)' % ','.join('%s=%g' % kv for kv in w.mix.items())
                          if w.mix else ''),
          w.size, ('%d per RGW' % w.concurrency_per_rgw) if w.concurrency_per_rgw
          else w.concurrency, w.processes or 'per core', '%gs' % w.duration_s,
          '%gs' % w.warmup_s,
          w.buckets] for w in profile.workloads], '  '))
    engine = [(w.name, engine_fields(w)) for w in profile.workloads if engine_fields(w)]
    if engine:
        width = max(len(name) for name, _ in engine)
        lines += ['  %s  %s' % ((name if i == 0 else '').ljust(width), part)
                  for name, parts in engine for i, part in enumerate(parts)]
    sweeps = sweeps_of(profile)
    if sweeps:
        lines += ['', 'Sweeps:']
        lines.append(table(['CURVE', 'SWEEPS', 'VALUES', 'ESTIMATED'],
                           [[s.curve, '%s of the %s' % (s.swept.replace('_', ' '), s.kind),
                             ', '.join(s.values), format_duration(s.estimated_s)]
                            for s in sweeps], '  '))
    return '\n'.join(lines)


def engine_fields(workload: Workload) -> List[str]:
    """What a workload sets beyond the table's columns (empty: the engine's defaults)."""
    parts = []
    if workload.rate is not None:
        parts.append('open loop at %s ops/s over all agents' % format_rate(workload.rate))
    if workload.objects is not None:
        parts.append('working set %d objects' % workload.objects)
    if workload.range is not None:
        parts.append('ranged GET of bytes %s' % workload.range)
    if workload.multipart_threshold is not None or workload.part_size is not None:
        parts.append('multipart above %s in parts of %s' % (
            workload.multipart_threshold or Job.multipart_threshold,
            workload.part_size or Job.part_size))
    return parts


def profiles_to_text(items: Sequence[Union[ProfileInfo, Profile, Dict[str, Any]]]) -> str:
    """`profile ls`: one line a profile."""
    infos = [_as_info(item) for item in items]
    if not infos:
        return 'No profiles.'
    return table(['PROFILE', 'KIND', 'VARIANTS', 'WORKLOADS', 'ESTIMATED'],
                 [[i.profile.name, 'built-in' if i.builtin else 'custom',
                   ', '.join(v.name for v in i.profile.variants),
                   len(i.profile.workloads),
                   format_duration(estimate_seconds(i.profile))] for i in infos])
