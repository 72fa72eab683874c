"""Reading a profile's document (YAML or JSON, or the mapping), fully checked."""
import re
from dataclasses import replace
from typing import Any, Callable, Dict, List, Sequence, Union

from ..documents import load_document
from ..errors import InvalidInput
from ..loadgen.workload import ALL_OPS
from ..settings.base import Setting
from .field_checks import (MAX_BUCKETS, MAX_CONCURRENCY, MAX_REPEATS, FieldError, at_rate,
                           check_duration, check_mix, check_multipart_threshold, check_objects,
                           check_op, check_part_size, check_payload_signing, check_placement,
                           check_processes, check_range, check_rate, check_rates, check_size,
                           check_sweep, check_target, check_warmup, check_whole, check_workload,
                           default_workload_name, shown, unique_workloads)
from .types import (DEFAULT_CONCURRENCY, DEFAULT_DURATION_S, DEFAULT_PROCESSES, DEFAULT_WARMUP_S,
                    ORDERS, SEQUENTIAL, SWEPT_FIELDS, Profile, Variant, Workload)

NAME = re.compile(r'^[a-z0-9][a-z0-9_-]{0,40}\Z')
VARIANT_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.@-]{0,40}\Z')
# `@` and `/` name a workload at a fixed rate: get-4KiB@200/s
WORKLOAD_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.,+=@/-]{0,63}\Z')

PROFILE_FIELDS = ('name', 'description', 'baseline', 'variants', 'workloads', 'placement',
                  'repeats', 'target', 'order')
VARIANT_FIELDS = ('name', 'settings', 'sweep', 'curve', 'swept')
WORKLOAD_FIELDS = ('name', 'op', 'mix', 'size', 'concurrency', 'duration', 'warmup',
                   'processes', 'buckets', 'payload_signing', 'rate', 'rates', 'objects',
                   'multipart_threshold', 'part_size', 'range', 'concurrency_per_rgw',
                   'curve', 'swept')


def _mapping(raw: Any, path: str, known: Sequence[str]) -> Dict[str, Any]:
    if not isinstance(raw, dict):
        raise FieldError(path, 'must be a mapping of %s' % ', '.join(known))
    for key in raw:
        if key not in known:
            raise FieldError(path, 'unknown field %r' % key)
    return raw


def _join(path: str, name: str) -> str:
    return '%s.%s' % (path, name) if path and name else path or name


def _parse_workloads(raw: Any, path: str) -> List[Workload]:
    """One workload of a document; a latency-vs-rate curve (`rates`) is one per rate,
    named after it (`get-4KiB@200/s`); a sweep (a list of concurrencies or sizes) one
    per value (`put-4KiB-c64`, `put-4KiB-c16/rgw`, `put-64KiB`)."""
    data = _mapping(raw, path, WORKLOAD_FIELDS)
    lists = [key for key in SWEPT_FIELDS if isinstance(data.get(key), list)]
    if lists:
        return _swept(data, lists, path)
    single = {k: v for k, v in data.items() if k != 'rates'}
    base = parse_workload(single, lambda f: _join(path, f))
    if data.get('rates') is None:
        return [base]
    if base.rate is not None:
        raise FieldError(_join(path, 'rates'), 'give rate or rates, not both')
    curve = []
    for rate in check_rates(data['rates'], _join(path, 'rates')):
        name = at_rate(base.name, rate)
        if not WORKLOAD_NAME.match(name):
            raise FieldError(_join(path, 'name'), '%s is too long to name it at each rate '
                             '(%s: at most 64 characters)' % (shown(base.name), name))
        curve.append(replace(base, name=name, rate=rate))
    return curve


def _swept(data: Dict[str, Any], lists: List[str], path: str) -> List[Workload]:
    """A sweep: the workload once per value of its one list, each named after it."""
    if len(lists) > 1:
        raise FieldError(path, 'sweeps %s: sweep one field a workload (write a workload '
                         'for each)' % ' and '.join(lists))
    key = lists[0]
    if data.get('rates') is not None:
        raise FieldError(_join(path, key), 'a workload sweeps rates or %s, not both' % key)
    for given in ('curve', 'swept'):
        if data.get(given) is not None:
            raise FieldError(_join(path, given), 'is set by the sweep of %s' % key)
    check = (check_size if key == 'size' else
             lambda raw, where: check_whole(raw, where, 1, MAX_CONCURRENCY))
    values = check_sweep(data[key], _join(path, key), check)
    if 'op' not in data:
        raise FieldError(path, 'op is missing (one of %s)' % ', '.join(ALL_OPS))
    named = data.get('name')
    if named is None:
        curve = ('%s-sizes' % check_op(data.get('op'), _join(path, 'op')) if key == 'size'
                 else default_workload_name(check_op(data.get('op'), _join(path, 'op')),
                                            check_size(data.get('size', '4KiB'),
                                                       _join(path, 'size'))))
    else:
        curve = named
    points = []
    for value in values:
        one = dict(data, **{key: value})
        one.pop('name', None)
        if named is not None or key != 'size':
            one['name'] = sweep_point_name(curve, key, value)
        point = _parse_workloads(one, path)[0]
        points.append(replace(point, curve=curve, swept=key))
    return points


def sweep_point_name(curve: str, key: str, value: Any) -> str:
    """A point's name: `put-4KiB` at concurrency 64 `put-4KiB-c64`, at 16 per RGW
    `put-4KiB-c16/rgw`, of size 1MiB `reads-1MiB`."""
    suffix = {'concurrency': 'c%s', 'concurrency_per_rgw': 'c%s/rgw'}.get(key, '%s') % value
    return '%s-%s' % (curve, suffix)


def parse_workload(data: Dict[str, Any], where: Callable[[str], str]) -> Workload:
    """One workload, every field checked: a profile's, or `ceph rgwbench load`'s.

    `where(field)` names a field in messages (a document path, or a command's flag);
    `where('')` names the workload as a whole.
    """
    if 'op' not in data:
        raise FieldError(where(''), 'op is missing (one of %s)' % ', '.join(ALL_OPS))
    op = check_op(data['op'], where('op'))
    size = check_size(data.get('size', '4KiB'), where('size'))
    mix: Dict[str, float] = {}
    if data.get('mix') is not None:
        if op != 'mixed':
            raise FieldError(where('mix'), 'only a mixed workload has a mix')
        mix = check_mix(data['mix'], where('mix'))
    duration = check_duration(data.get('duration', DEFAULT_DURATION_S), where('duration'))
    workload = Workload(
        name='', op=op, mix=mix, size=size,
        concurrency=check_whole(data.get('concurrency', DEFAULT_CONCURRENCY),
                                where('concurrency'), 1, MAX_CONCURRENCY),
        duration_s=duration,
        warmup_s=check_warmup(data.get('warmup', min(DEFAULT_WARMUP_S, duration)),
                              where('warmup'), duration),
        processes=check_processes(data.get('processes', DEFAULT_PROCESSES),
                                  where('processes')),
        buckets=check_whole(data.get('buckets', 1), where('buckets'), 1, MAX_BUCKETS),
        payload_signing=check_payload_signing(data.get('payload_signing', 'unsigned'),
                                              where('payload_signing')),
        rate=_optional(data, 'rate', check_rate, where),
        objects=_optional(data, 'objects', check_objects, where),
        multipart_threshold=_optional(data, 'multipart_threshold', check_multipart_threshold,
                                      where),
        part_size=_optional(data, 'part_size', check_part_size, where),
        range=_optional(data, 'range', check_range, where),
        concurrency_per_rgw=_optional(
            data, 'concurrency_per_rgw',
            lambda raw, path: check_whole(raw, path, 1, MAX_CONCURRENCY), where))
    curve, swept = data.get('curve'), data.get('swept')
    if (curve is None) != (swept is None) or swept not in (None,) + SWEPT_FIELDS or (
            curve is not None and not (isinstance(curve, str) and WORKLOAD_NAME.match(curve))):
        raise FieldError(where('curve'), 'a point of a sweep has both curve (a workload '
                         'name) and swept (one of %s); give a list instead'
                         % ', '.join(SWEPT_FIELDS))
    workload = replace(workload, curve=curve, swept=swept)
    name = data.get('name')
    if name is None:
        name = default_workload_name(op, size, workload.rate)
    if not isinstance(name, str) or not WORKLOAD_NAME.match(name):
        raise FieldError(where('name'), '%s must be 1 to 64 letters, digits or . , _ + = @ '
                         '/ -, starting with a letter or digit' % shown(name))
    workload = replace(workload, name=name)
    check_workload(workload, where)
    return workload


def _optional(data: Dict[str, Any], key: str, check: Callable[[Any, str], Any],
              where: Callable[[str], str]) -> Any:
    return None if data.get(key) is None else check(data[key], where(key))


def _setting_value(setting: Setting, raw: Any, path: str) -> Any:
    # YAML reads on/off/yes/no as booleans; settings take the words.
    if isinstance(raw, bool):
        raw = 'on' if raw else 'off'
    try:
        return setting.parse(raw)
    except InvalidInput as e:
        message = str(e)
        own = '%s: ' % setting.name
        raise FieldError(path, message[len(own):] if message.startswith(own) else message)


def _parse_variants(raw: Any, path: str, settings: Sequence[Setting]) -> List[Variant]:
    """One variant of a document, or a setting sweep (`sweep: {setting: [values]}`): one
    variant per value, named after it (`threads-128`), each with the variant's settings."""
    data = _mapping(raw, path, VARIANT_FIELDS)
    sweep = data.get('sweep')
    if sweep is None:
        return [_parse_variant(data, path, settings)]
    where = _join(path, 'sweep')
    if not isinstance(sweep, dict) or len(sweep) != 1:
        raise FieldError(where, 'must be one setting and its values, e.g. '
                         '{rgw-cpus: [1, 2, 4]}')
    for given in ('curve', 'swept'):
        if data.get(given) is not None:
            raise FieldError(_join(path, given), 'is set by the sweep')
    (setting, values), = sweep.items()
    base = _parse_variant({k: v for k, v in data.items() if k != 'sweep'}, path, settings)
    if setting in base.settings:
        raise FieldError(where, '%s is both swept and set in settings' % setting)
    points = []
    for value in check_sweep(values, '%s.%s' % (where, setting), lambda v, w: v):
        one = _parse_variant({'name': sweep_variant_name(base.name, value),
                              'settings': dict(data.get('settings') or {}, **{setting: value})},
                             path, settings)
        points.append(replace(one, curve=base.name, swept=setting))
    return points


def sweep_variant_name(curve: str, value: Any) -> str:
    """A setting sweep's variant: `threads` at {...rgw_thread_pool_size: 128} `threads-128`,
    `tls` at on `tls-on` (what is not a name's letter becomes `_`)."""
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    text = ('on' if value else 'off') if isinstance(value, bool) else str(value)
    return '%s-%s' % (curve, re.sub(r'[^A-Za-z0-9_.@-]', '_', text))


def _parse_variant(raw: Any, path: str, settings: Sequence[Setting]) -> Variant:
    data = _mapping(raw, path, VARIANT_FIELDS)
    name = data.get('name')
    if not isinstance(name, str) or not VARIANT_NAME.match(name):
        raise FieldError(_join(path, 'name'), '%s must be 1 to 41 letters, digits or . _ @ -, '
                         'starting with a letter or digit' % shown(name))
    given = data.get('settings')
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise FieldError(_join(path, 'settings'), 'must be a mapping of setting to value, '
                         'e.g. {tls@rgw: on}')
    known = {s.name: s for s in settings}
    values: Dict[str, Any] = {}
    for key, raw_value in given.items():
        if key not in known:
            raise FieldError(_join(path, 'settings'), 'unknown setting %r (known: %s)'
                             % (key, ', '.join(s.name for s in settings)))
        values[key] = _setting_value(known[key], raw_value,
                                     '%s.settings.%s' % (path, key))
    curve, swept = data.get('curve'), data.get('swept')
    if (curve is None) != (swept is None) or swept not in (None,) + tuple(known) or (
            curve is not None and not (isinstance(curve, str) and VARIANT_NAME.match(curve))):
        raise FieldError(_join(path, 'curve'), 'a variant of a sweep has both curve (a '
                         'variant name) and swept (a setting); give sweep instead')
    return Variant(name=name, settings=values, curve=curve, swept=swept)


def _load(text_or_dict: Union[str, bytes, Dict[str, Any]]) -> Dict[str, Any]:
    data: Any = text_or_dict
    if isinstance(data, (str, bytes)):
        data = load_document(data, 'profile')
    if not isinstance(data, dict):
        raise InvalidInput('profile: expected a mapping (YAML or JSON) with name, variants and '
                           'workloads')
    return data


def parse_profile(text_or_dict: Union[str, bytes, Dict[str, Any]],
                  settings: Sequence[Setting]) -> Profile:
    """A profile from its document (YAML or JSON text, or the mapping), fully checked.

    Raises InvalidInput with one line naming the field, e.g.
    `profile x: workloads[0].duration: must be a positive number of seconds, got -5`.
    """
    data = _load(text_or_dict)
    name = data.get('name')
    if name is None:
        raise InvalidInput('profile: name is missing')
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidInput('profile %s: the name must be 1 to 41 lower-case letters, digits, '
                           '_ or -, starting with a letter or digit' % shown(name))
    try:
        return _parse(name, data, settings)
    except FieldError as e:
        raise InvalidInput('profile %s: %s' % (name, e))


def _parse(name: str, data: Dict[str, Any], settings: Sequence[Setting]) -> Profile:
    _mapping(data, '', PROFILE_FIELDS)
    description = data.get('description')
    if description is None:
        description = ''
    if not isinstance(description, str):
        raise FieldError('description', 'must be text')
    raw_variants = data.get('variants')
    if not raw_variants:
        raise FieldError('', 'no variants')
    if not isinstance(raw_variants, list):
        raise FieldError('variants', 'must be a list of {name, settings}')
    variants = [one for i, v in enumerate(raw_variants)
                for one in _parse_variants(v, 'variants[%d]' % i, settings)]
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise FieldError('', 'variant names must be unique')
    raw_workloads = data.get('workloads')
    if not raw_workloads:
        raise FieldError('', 'no workloads')
    if not isinstance(raw_workloads, list):
        raise FieldError('workloads', 'must be a list of {op, size, ...}')
    workloads = [w for i, raw in enumerate(raw_workloads)
                 for w in _parse_workloads(raw, 'workloads[%d]' % i)]
    unique_workloads(workloads, '')
    baseline = data.get('baseline')
    if baseline is None:
        baseline = names[0]
    if baseline not in names:
        raise FieldError('', 'baseline %s is not one of its variants (%s)'
                         % (repr(baseline) if isinstance(baseline, str) else shown(baseline),
                            ', '.join(names)))
    return Profile(name=name, description=description.strip(), baseline=baseline,
                   variants=variants, workloads=workloads,
                   placement=check_placement(data.get('placement'), 'placement'),
                   repeats=check_whole(data.get('repeats', 1), 'repeats', 1, MAX_REPEATS),
                   target=check_target(data.get('target'), 'target'),
                   order=_order(data.get('order', SEQUENTIAL)))


def _order(raw: Any) -> str:
    if raw not in ORDERS:
        raise FieldError('order', 'must be one of %s, got %s' % (', '.join(ORDERS), shown(raw)))
    return str(raw)
