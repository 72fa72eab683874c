"""Overrides from the command line (and the panel) applied to a profile's workloads."""
from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from ..errors import InvalidInput
from .field_checks import (MAX_CONCURRENCY, MAX_REPEATS, FieldError, as_number, at_rate,
                           check_duration, check_multipart_threshold, check_objects,
                           check_part_size, check_payload_signing, check_placement, check_processes,
                           check_range, check_rate, check_rates, check_size, check_whole,
                           check_workload, default_workload_name, reads_prefilled, shown,
                           unique_workloads)
from .types import Profile, Workload

Sizes = Union[str, Sequence[str]]
#: a number as the command line gives it, or as the panel's form does: its text
Number = Union[int, float, str]


@dataclass(frozen=True)
class Overrides:
    """What `plan`, `run` and the panel change of a profile's workloads (None: as the
    profile says): the command line's words, checked when applied."""
    duration: Optional[Number] = None
    concurrency: Optional[Number] = None
    sizes: Optional[Sizes] = None
    warmup: Optional[Number] = None
    rate: Optional[Number] = None
    rates: Optional[Union[str, Sequence[float]]] = None
    objects: Optional[Number] = None
    multipart_threshold: Optional[str] = None
    part_size: Optional[str] = None
    range: Optional[str] = None
    processes: Optional[Number] = None
    payload_signing: Optional[str] = None

    def given(self) -> Dict[str, Any]:
        """The overrides given, by their flag (`--part-size`)."""
        return {'--' + f.name.replace('_', '-'): getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}


#: The words `plan` and `run` take after the profile, in the order of their command line,
#: as the CLI types them: the commands' parameters are made from this one list.
RUN_WORDS: Tuple[Tuple[str, Any, Any], ...] = tuple((name, kind, None) for name, kind in (
    ('duration', Optional[int]), ('concurrency', Optional[int]), ('sizes', Optional[str]),
    ('placement', Optional[str]), ('repeats', Optional[int]), ('warmup', Optional[int]),
    ('rate', Optional[float]), ('rates', Optional[str]), ('objects', Optional[int]),
    ('multipart_threshold', Optional[str]), ('part_size', Optional[str]),
    ('range', Optional[str]), ('processes', Optional[int]), ('payload_signing', Optional[str])))


def _sizes(raw: Sizes) -> List[str]:
    items = raw.split(',') if isinstance(raw, str) else list(raw)
    sizes = [check_size(item, '--sizes') for item in items if str(item).strip()]
    if not sizes:
        raise FieldError('--sizes', 'give at least one size, e.g. 4KiB,4MiB')
    return sizes


def _name_and_rate(workload: Workload) -> Tuple[str, str]:
    """A workload's name without its rate (`get-4KiB@200/s` -> `get-4KiB`), and the rate's
    part of it ('' when its name has none)."""
    suffix = at_rate('', workload.rate)
    if suffix and workload.name.endswith(suffix) and len(workload.name) > len(suffix):
        return workload.name[:-len(suffix)], suffix
    return workload.name, ''


def _resized(workload: Workload, size: str) -> Workload:
    base, suffix = _name_and_rate(workload)
    if base == default_workload_name(workload.op, workload.size):
        base = default_workload_name(workload.op, size)
    else:
        base = '%s-%s' % (base, size)
    return replace(workload, name=base + suffix, size=size)


def _at_rate(workload: Workload, rate: float) -> Workload:
    """The workload in open loop at `rate`, named after it (`get-4KiB@200/s`)."""
    base, _ = _name_and_rate(workload)
    return replace(workload, name=at_rate(base, rate), rate=rate)


def _once_each(workloads: List[Workload]) -> List[Workload]:
    """The first of the workloads that resizing gave the same name.

    A profile's PUT of 4 KiB and PUT of 4 MiB both become a PUT of 64 KiB
    under `--sizes 64KiB`: the study at that one size runs it once.
    """
    seen: Set[str] = set()
    kept = []
    for workload in workloads:
        if workload.name not in seen:
            seen.add(workload.name)
            kept.append(workload)
    return kept


def with_overrides(profile: Profile, duration: Optional[Number] = None,
                   concurrency: Optional[Number] = None,
                   sizes: Optional[Sizes] = None,
                   placement: Optional[Union[str, Sequence[str]]] = None,
                   repeats: Optional[Number] = None,
                   warmup: Optional[Number] = None, *,
                   rate: Optional[Number] = None,
                   rates: Optional[Union[str, Sequence[float]]] = None,
                   objects: Optional[Number] = None,
                   multipart_threshold: Optional[str] = None,
                   part_size: Optional[str] = None,
                   range: Optional[str] = None,
                   processes: Optional[Number] = None,
                   payload_signing: Optional[str] = None) -> Profile:
    """The profile with command-line overrides applied to every workload.

    `sizes` (a comma list, or a list) replaces each workload's size: every
    workload runs once per size, named after it; `rates` likewise runs each
    workload once per rate (`rate` at one), named after it. `objects` and
    `range` change the workloads that read (those they apply to);
    `processes` (0: one per core of each agent's host) and `payload_signing`
    every workload. The values are checked as a profile document's. Messages
    name the override, e.g. `--duration: must be a positive number of
    seconds, got -5`.
    """
    given = Overrides(duration=duration, concurrency=concurrency, sizes=sizes, warmup=warmup,
                      rate=rate, rates=rates, objects=objects,
                      multipart_threshold=multipart_threshold, part_size=part_size,
                      range=range, processes=processes, payload_signing=payload_signing)
    try:
        return _overridden(profile, given, placement, repeats)
    except FieldError as e:
        raise InvalidInput(str(e))


def _changes(given: Overrides) -> Dict[str, Any]:
    """The fields every workload takes as they are."""
    changes: Dict[str, Any] = {}
    if given.duration is not None:
        changes['duration_s'] = check_duration(given.duration, '--duration')
    if given.concurrency is not None:
        changes['concurrency'] = check_whole(given.concurrency, '--concurrency', 1,
                                             MAX_CONCURRENCY)
        changes['concurrency_per_rgw'] = None   # a concurrency given is the total
    if given.warmup is not None:
        if as_number(given.warmup) is None or float(given.warmup) < 0:
            raise FieldError('--warmup', 'must be 0 or more seconds, got %s'
                             % shown(given.warmup))
        changes['warmup_s'] = float(given.warmup)
    if given.multipart_threshold is not None:
        changes['multipart_threshold'] = check_multipart_threshold(
            given.multipart_threshold, '--multipart-threshold')
    if given.part_size is not None:
        changes['part_size'] = check_part_size(given.part_size, '--part-size')
    if given.processes is not None:
        changes['processes'] = check_processes(given.processes, '--processes')
    if given.payload_signing is not None:
        changes['payload_signing'] = check_payload_signing(given.payload_signing,
                                                           '--payload-signing')
    return changes


def _rates(given: Overrides) -> Optional[List[float]]:
    if given.rate is not None and given.rates is not None:
        raise FieldError('--rates', 'give --rate or --rates, not both')
    if given.rate is not None:
        return [check_rate(given.rate, '--rate')]
    if given.rates is not None:
        return check_rates(given.rates if isinstance(given.rates, str) else list(given.rates),
                           '--rates')
    return None


def _readers(workloads: List[Workload], flag: str, value: Any,
             applies: Callable[[Workload], bool], what: str) -> List[Workload]:
    """`value` set on the workloads it `applies` to; refused when none is such."""
    if not any(applies(w) for w in workloads):
        raise FieldError(flag, 'no workload of this profile %s' % what)
    key = flag[2:].replace('-', '_')
    return [replace(w, **{key: value}) if applies(w) else w for w in workloads]


def _overridden(profile: Profile, given: Overrides,
                placement: Optional[Union[str, Sequence[str]]],
                repeats: Optional[Number]) -> Profile:
    changes = _changes(given)
    for flag, swept in (('concurrency', ('concurrency', 'concurrency_per_rgw')),
                        ('sizes', ('size',))):
        sweep = next((w for w in profile.workloads if w.swept in swept), None)
        if getattr(given, flag) is not None and sweep is not None:
            raise FieldError('--' + flag, 'workload %s is a point of the sweep %s, whose '
                             'values the profile gives' % (sweep.name, sweep.curve))
    workloads = [replace(w, **changes) for w in profile.workloads]
    if given.objects is not None:
        workloads = _readers(workloads, '--objects', check_objects(given.objects, '--objects'),
                             reads_prefilled, 'reads objects (get, head, list, delete or mixed)')
    if given.range is not None:
        workloads = _readers(workloads, '--range', check_range(given.range, '--range'),
                             lambda w: w.op in ('get', 'mixed'), 'GETs (get or mixed)')
    if given.sizes is not None:
        workloads = _once_each([_resized(w, size) for w in workloads
                                for size in _sizes(given.sizes)])
        unique_workloads(workloads, '--sizes')
    rates = _rates(given)
    if rates is not None:
        workloads = _once_each([_at_rate(w, rate) for w in workloads for rate in rates])
        unique_workloads(workloads, '--rates' if given.rates is not None else '--rate')
    flags = given.given()

    def where(name: str) -> str:
        # processes above the concurrency: the override of either that was given
        candidates = {'processes': ('--processes', '--concurrency'), 'size': ('--sizes',)}.get(
            name, ('--' + name.replace('_', '-'),))
        for flag in candidates:
            if flag in flags:
                return flag
        return ', '.join(flags) or 'profile'

    for workload in workloads:
        if given.warmup is None and workload.warmup_s > workload.duration_s:
            raise FieldError('--duration', '%s is shorter than the warm-up (%ss) of workload %s; '
                             'give --warmup too' % (shown(given.duration),
                                                    shown(workload.warmup_s), workload.name))
        try:
            check_workload(workload, where)
        except FieldError as e:
            raise FieldError(e.path, '%s (workload %s)' % (e.message, workload.name))
    result = replace(profile, workloads=workloads)
    if placement is not None:
        result = replace(result, placement=check_placement(
            placement if isinstance(placement, str) else list(placement), '--placement'))
    if repeats is not None:
        result = replace(result, repeats=check_whole(repeats, '--repeats', 1, MAX_REPEATS))
    return result
