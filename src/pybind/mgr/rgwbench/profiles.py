"""Profiles: which variants of the cluster a run compares, under which workloads.

A profile is a document (YAML or JSON) with a name, a baseline variant, the
variants (each a mapping of settings under test to values; an empty mapping
is the cluster as it is) and the workloads every variant runs. The built-in
profiles reproduce the published studies rgwbench automates; operators keep
their own in the module's store under `profile/<name>`.

Everything here is checked without a cluster: each setting validates its own
value with `Setting.parse`, each workload with the load engine's own checks.
"""
import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Union

import yaml

from .errors import InvalidInput, NotFound
from .formatting import table
from .loadgen.errors import UsageError
from .loadgen.workload import ALL_OPS, Job, SizeSpec, format_size, parse_mix
from .settings.base import Setting
from .kvstore import Store

STORE_PREFIX = 'profile/'
# Values in the config-key store are limited to 64 KiB.
MAX_STORED = 60000

NAME = re.compile(r'^[a-z0-9][a-z0-9_-]{0,40}$')
VARIANT_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.@-]{0,40}$')
WORKLOAD_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.,+=-]{0,63}$')
HOST = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,252}$')

DEFAULT_CONCURRENCY = 16
DEFAULT_DURATION_S = 60.0
DEFAULT_WARMUP_S = 5.0
MAX_CONCURRENCY = 1024
MAX_PROCESSES = 64
MAX_BUCKETS = 1000
MAX_DURATION_S = 3600.0
MAX_REPEATS = 10
# What a run spends besides measuring, for estimates: per workload (agents
# started, objects prefilled and removed) and per variant (settings put in place,
# daemons restarted and checked, then put back; the cluster as it is needs none).
WORKLOAD_ALLOWANCE_S = 5.0
VARIANT_ALLOWANCE_S = 60.0
AS_IS_ALLOWANCE_S = 10.0

PROFILE_FIELDS = ('name', 'description', 'baseline', 'variants', 'workloads', 'placement',
                  'repeats')
VARIANT_FIELDS = ('name', 'settings')
WORKLOAD_FIELDS = ('name', 'op', 'mix', 'size', 'concurrency', 'duration', 'warmup',
                   'processes', 'buckets')


class FieldError(Exception):
    """One field is wrong: its path and what is wrong with it."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__('%s: %s' % (path, message) if path else message)
        self.path = path
        self.message = message


def _seconds(value: float) -> Union[int, float]:
    return int(value) if float(value).is_integer() else value


# -- the types ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    """One load every variant runs: the engine's Job fields a profile chooses."""
    name: str
    op: str = 'put'
    mix: Dict[str, float] = field(default_factory=dict)
    size: str = '4KiB'
    concurrency: int = DEFAULT_CONCURRENCY
    duration_s: float = DEFAULT_DURATION_S
    warmup_s: float = DEFAULT_WARMUP_S
    processes: int = 1
    buckets: int = 1

    def to_dict(self) -> Dict[str, Any]:
        """The document form (`duration` and `warmup` in seconds), as parse_profile reads it."""
        data: Dict[str, Any] = {'name': self.name, 'op': self.op, 'size': self.size,
                                'concurrency': self.concurrency,
                                'duration': _seconds(self.duration_s),
                                'warmup': _seconds(self.warmup_s),
                                'processes': self.processes, 'buckets': self.buckets}
        if self.mix:
            data['mix'] = dict(self.mix)
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> 'Workload':
        """From to_dict's form (stored or shown); not checked: parse_profile checks."""
        return cls(name=str(data['name']), op=str(data.get('op', 'put')),
                   mix=dict(data.get('mix') or {}), size=str(data.get('size', '4KiB')),
                   concurrency=int(data.get('concurrency', DEFAULT_CONCURRENCY)),
                   duration_s=float(data.get('duration', data.get('duration_s',
                                                                  DEFAULT_DURATION_S))),
                   warmup_s=float(data.get('warmup', data.get('warmup_s', DEFAULT_WARMUP_S))),
                   processes=int(data.get('processes', 1)),
                   buckets=int(data.get('buckets', 1)))

    def job_fields(self) -> Dict[str, Any]:
        """The fields of the engine's Job this workload sets."""
        return {'op': self.op, 'mix': dict(self.mix), 'size': self.size,
                'concurrency': self.concurrency, 'processes': self.processes,
                'duration_s': self.duration_s, 'warmup_s': self.warmup_s,
                'buckets': self.buckets}


@dataclass(frozen=True)
class Variant:
    """The cluster with these settings in place; no settings: the cluster as it is."""
    name: str
    settings: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return {'name': self.name, 'settings': dict(self.settings)}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> 'Variant':
        return cls(name=str(data['name']), settings=dict(data.get('settings') or {}))


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    baseline: str
    variants: List[Variant]
    workloads: List[Workload]
    placement: List[str] = field(default_factory=list)   # empty: one agent on the mgr host
    repeats: int = 1

    def to_dict(self) -> Dict[str, Any]:
        return {'name': self.name, 'description': self.description,
                'baseline': self.baseline,
                'variants': [v.to_dict() for v in self.variants],
                'workloads': [w.to_dict() for w in self.workloads],
                'placement': list(self.placement), 'repeats': self.repeats}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> 'Profile':
        variants = [Variant.from_dict(v) for v in data.get('variants') or []]
        return cls(name=str(data['name']), description=str(data.get('description') or ''),
                   baseline=str(data.get('baseline') or (variants[0].name if variants else '')),
                   variants=variants,
                   workloads=[Workload.from_dict(w) for w in data.get('workloads') or []],
                   placement=[str(h) for h in data.get('placement') or []],
                   repeats=int(data.get('repeats', 1)))

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise NotFound('profile %s has no variant %r' % (self.name, name))


# -- checking one field ------------------------------------------------------------------

def _number(raw: Any) -> Optional[float]:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None
    else:
        return None
    return None if math.isnan(value) or math.isinf(value) else value


def check_whole(raw: Any, path: str, low: int, high: int) -> int:
    value = _number(raw)
    if value is None or not value.is_integer() or not low <= value <= high:
        raise FieldError(path, 'must be a whole number from %d to %d, got %s'
                         % (low, high, _shown(raw)))
    return int(value)


def check_duration(raw: Any, path: str) -> float:
    value = _number(raw)
    if value is None or value <= 0:
        raise FieldError(path, 'must be a positive number of seconds, got %s' % _shown(raw))
    if value < 1:
        raise FieldError(path, 'must be at least 1 second, got %s' % _shown(raw))
    if value > MAX_DURATION_S:
        raise FieldError(path, 'must be at most %d seconds, got %s'
                         % (MAX_DURATION_S, _shown(raw)))
    return value


def check_warmup(raw: Any, path: str, duration_s: float) -> float:
    value = _number(raw)
    if value is None or not 0 <= value <= duration_s:
        raise FieldError(path, 'must be 0 to the duration (%s) seconds, got %s'
                         % (_seconds(duration_s), _shown(raw)))
    return value


def check_size(raw: Any, path: str) -> str:
    if isinstance(raw, bool) or raw is None or isinstance(raw, (dict, list)):
        raise FieldError(path, '%s is not a size' % _shown(raw))
    text = format_size(raw) if isinstance(raw, int) and raw > 0 else str(raw).strip()
    try:
        SizeSpec(text)
    except UsageError as e:
        raise FieldError(path, '%s is not a size (%s)' % (_shown(raw), e))
    return text


def check_op(raw: Any, path: str) -> str:
    op = str(raw).strip().lower() if isinstance(raw, str) else ''
    if op not in ALL_OPS:
        raise FieldError(path, '%s is not an operation (use one of %s)'
                         % (_shown(raw), ', '.join(ALL_OPS)))
    return op


def check_mix(raw: Any, path: str) -> Dict[str, float]:
    if isinstance(raw, dict):
        text = ','.join('%s=%s' % (k, v) for k, v in raw.items())
    elif isinstance(raw, str):
        text = raw
    else:
        raise FieldError(path, 'write it as op: weight, e.g. {get: 3, put: 1}')
    try:
        return parse_mix(text)
    except UsageError as e:
        raise FieldError(path, str(e).replace('--mix', 'mix'))


def check_placement(raw: Any, path: str) -> List[str]:
    if raw is None:
        return []
    items = raw.split(',') if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise FieldError(path, 'must be a list of hosts, got %s' % _shown(raw))
    hosts: List[str] = []
    for item in items:
        host = str(item).strip() if isinstance(item, str) else ''
        if not host and isinstance(raw, str):
            continue
        if not HOST.match(host):
            raise FieldError(path, '%s is not a host name' % _shown(item))
        if host in hosts:
            raise FieldError(path, 'host %s is given twice' % host)
        hosts.append(host)
    return hosts


def _shown(raw: Any) -> str:
    if isinstance(raw, str):
        return repr(raw)
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return json.dumps(raw) if isinstance(raw, (bool, type(None), dict, list)) else str(raw)


def default_workload_name(op: str, size: str) -> str:
    return '%s-%s' % (op, size)


def check_workload(workload: Workload, where: Callable[[str], str]) -> None:
    """What needs more than one field: the engine's own Job checks, warm-up within duration.

    `where(field)` names a field in messages (a document path, or an override's flag).
    """
    if workload.processes > workload.concurrency:
        raise FieldError(where('processes'), '%d processes are more than the concurrency %d'
                         % (workload.processes, workload.concurrency))
    check_warmup(workload.warmup_s, where('warmup'), workload.duration_s)
    job = Job(endpoint='http://localhost', access_key='k', secret_key='s',
              **workload.job_fields())
    try:
        job.validate()
    except UsageError as e:
        raise FieldError(where(''), str(e))


# -- the document form -------------------------------------------------------------------

def _mapping(raw: Any, path: str, known: Sequence[str]) -> Dict[str, Any]:
    if not isinstance(raw, dict):
        raise FieldError(path, 'must be a mapping of %s' % ', '.join(known))
    for key in raw:
        if key not in known:
            raise FieldError(path, 'unknown field %r' % key)
    return raw


def _join(path: str, name: str) -> str:
    return '%s.%s' % (path, name) if path and name else path or name


def _parse_workload(raw: Any, path: str) -> Workload:
    data = _mapping(raw, path, WORKLOAD_FIELDS)
    if 'op' not in data:
        raise FieldError(path, 'op is missing (one of %s)' % ', '.join(ALL_OPS))
    op = check_op(data['op'], _join(path, 'op'))
    size = check_size(data.get('size', '4KiB'), _join(path, 'size'))
    mix: Dict[str, float] = {}
    if data.get('mix') is not None:
        if op != 'mixed':
            raise FieldError(_join(path, 'mix'), 'only a mixed workload has a mix')
        mix = check_mix(data['mix'], _join(path, 'mix'))
    duration = check_duration(data.get('duration', DEFAULT_DURATION_S),
                              _join(path, 'duration'))
    workload = Workload(
        name='', op=op, mix=mix, size=size,
        concurrency=check_whole(data.get('concurrency', DEFAULT_CONCURRENCY),
                                _join(path, 'concurrency'), 1, MAX_CONCURRENCY),
        duration_s=duration,
        warmup_s=check_warmup(data.get('warmup', min(DEFAULT_WARMUP_S, duration)),
                              _join(path, 'warmup'), duration),
        processes=check_whole(data.get('processes', 1), _join(path, 'processes'),
                              1, MAX_PROCESSES),
        buckets=check_whole(data.get('buckets', 1), _join(path, 'buckets'), 1, MAX_BUCKETS))
    name = data.get('name')
    if name is None:
        name = default_workload_name(op, size)
    if not isinstance(name, str) or not WORKLOAD_NAME.match(name):
        raise FieldError(_join(path, 'name'), '%s must be 1 to 64 letters, digits or . , _ + = -'
                         ', starting with a letter or digit' % _shown(name))
    workload = replace(workload, name=name)
    check_workload(workload, lambda f: _join(path, f))
    return workload


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


def _parse_variant(raw: Any, path: str, settings: Sequence[Setting]) -> Variant:
    data = _mapping(raw, path, VARIANT_FIELDS)
    name = data.get('name')
    if not isinstance(name, str) or not VARIANT_NAME.match(name):
        raise FieldError(_join(path, 'name'), '%s must be 1 to 41 letters, digits or . _ @ -, '
                         'starting with a letter or digit' % _shown(name))
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
    return Variant(name=name, settings=values)


def _load(text_or_dict: Union[str, bytes, Dict[str, Any]]) -> Dict[str, Any]:
    data: Any = text_or_dict
    if isinstance(data, bytes):
        data = data.decode('utf-8', 'replace')
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            try:
                data = yaml.safe_load(data)
            except yaml.YAMLError as e:
                raise InvalidInput('profile: not JSON or YAML: %s' % str(e).splitlines()[0])
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
                           '_ or -, starting with a letter or digit' % _shown(name))
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
    variants = [_parse_variant(v, 'variants[%d]' % i, settings)
                for i, v in enumerate(raw_variants)]
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise FieldError('', 'variant names must be unique')
    raw_workloads = data.get('workloads')
    if not raw_workloads:
        raise FieldError('', 'no workloads')
    if not isinstance(raw_workloads, list):
        raise FieldError('workloads', 'must be a list of {op, size, ...}')
    workloads = [_parse_workload(w, 'workloads[%d]' % i) for i, w in enumerate(raw_workloads)]
    _unique_workloads(workloads, '')
    baseline = data.get('baseline')
    if baseline is None:
        baseline = names[0]
    if baseline not in names:
        raise FieldError('', 'baseline %s is not one of its variants (%s)'
                         % (repr(baseline) if isinstance(baseline, str) else _shown(baseline),
                            ', '.join(names)))
    return Profile(name=name, description=description.strip(), baseline=baseline,
                   variants=variants, workloads=workloads,
                   placement=check_placement(data.get('placement'), 'placement'),
                   repeats=check_whole(data.get('repeats', 1), 'repeats', 1, MAX_REPEATS))


def _unique_workloads(workloads: List[Workload], path: str) -> None:
    seen: List[str] = []
    for workload in workloads:
        if workload.name in seen:
            raise FieldError(path, 'workload names must be unique (%s is given twice; name '
                             'one of them)' % workload.name)
        seen.append(workload.name)


# -- overrides from the command line -----------------------------------------------------

def _sizes(raw: Union[str, Sequence[str]]) -> List[str]:
    items = raw.split(',') if isinstance(raw, str) else list(raw)
    sizes = [check_size(item, '--sizes') for item in items if str(item).strip()]
    if not sizes:
        raise FieldError('--sizes', 'give at least one size, e.g. 4KiB,4MiB')
    return sizes


def _resized(workload: Workload, size: str) -> Workload:
    if workload.name == default_workload_name(workload.op, workload.size):
        name = default_workload_name(workload.op, size)
    else:
        name = '%s-%s' % (workload.name, size)
    return replace(workload, name=name, size=size)


def with_overrides(profile: Profile, duration: Optional[float] = None,
                   concurrency: Optional[int] = None,
                   sizes: Optional[Union[str, Sequence[str]]] = None,
                   placement: Optional[Union[str, Sequence[str]]] = None,
                   repeats: Optional[int] = None,
                   warmup: Optional[float] = None) -> Profile:
    """The profile with command-line overrides applied to every workload.

    `sizes` (a comma list, or a list) replaces each workload's size: every
    workload runs once per size, named after it. Messages name the override,
    e.g. `--duration: must be a positive number of seconds, got -5`.
    """
    try:
        return _overridden(profile, duration, concurrency, sizes, placement, repeats, warmup)
    except FieldError as e:
        raise InvalidInput(str(e))


def _overridden(profile: Profile, duration: Optional[float], concurrency: Optional[int],
                sizes: Optional[Union[str, Sequence[str]]],
                placement: Optional[Union[str, Sequence[str]]],
                repeats: Optional[int], warmup: Optional[float]) -> Profile:
    changes: Dict[str, Any] = {}
    if duration is not None:
        changes['duration_s'] = check_duration(duration, '--duration')
    if concurrency is not None:
        changes['concurrency'] = check_whole(concurrency, '--concurrency', 1, MAX_CONCURRENCY)
    if warmup is not None:
        if _number(warmup) is None or float(warmup) < 0:
            raise FieldError('--warmup', 'must be 0 or more seconds, got %s' % _shown(warmup))
        changes['warmup_s'] = float(warmup)
    workloads = [replace(w, **changes) for w in profile.workloads]
    if sizes is not None:
        workloads = [_resized(w, size) for w in workloads for size in _sizes(sizes)]
        _unique_workloads(workloads, '--sizes')

    def where(name: str) -> str:
        flags = {'warmup': '--warmup', 'duration': '--duration',
                 'concurrency': '--concurrency', 'processes': '--concurrency',
                 'size': '--sizes'}
        given = {'--warmup': warmup, '--duration': duration, '--concurrency': concurrency,
                 '--sizes': sizes}
        flag = flags.get(name)
        if flag and given[flag] is not None:
            return flag
        return ', '.join(f for f, v in given.items() if v is not None) or 'profile'

    for workload in workloads:
        if warmup is None and workload.warmup_s > workload.duration_s:
            raise FieldError('--duration', '%s is shorter than the warm-up (%ss) of workload %s; '
                             'give --warmup too' % (_shown(duration), _shown(workload.warmup_s),
                                                    workload.name))
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


# -- estimates ---------------------------------------------------------------------------

def estimate_seconds(profile: Profile) -> float:
    """How long a run takes: every workload (warm-up + duration) under every variant, each
    repeat, plus what starting workloads and putting variants in place and back take."""
    per_variant = sum(w.warmup_s + w.duration_s + WORKLOAD_ALLOWANCE_S
                      for w in profile.workloads)
    total = 0.0
    for variant in profile.variants:
        total += per_variant + (VARIANT_ALLOWANCE_S if variant.settings else AS_IS_ALLOWANCE_S)
    return total * profile.repeats


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


# -- the built-in profiles ---------------------------------------------------------------

def _w(op: str, size: str, concurrency: int = DEFAULT_CONCURRENCY,
       duration: int = 60, warmup: int = 5) -> Dict[str, Any]:
    return {'op': op, 'size': size, 'concurrency': concurrency, 'duration': duration,
            'warmup': warmup}


def _put_get(sizes: Sequence[str], concurrency: Callable[[str], int] = lambda s: 16,
             duration: int = 60, warmup: int = 5) -> List[Dict[str, Any]]:
    return [_w(op, size, concurrency(size), duration, warmup)
            for size in sizes for op in ('put', 'get')]


NO_TLS = {'tls@rgw': 'off', 'tls@ingress': 'off'}
TLS_RGW = {'tls@rgw': 'on', 'tls@ingress': 'off'}
TLS_INGRESS = {'tls@rgw': 'off', 'tls@ingress': 'https'}
SSE = {'sse': 'kms-testing'}
MSGR2_ON = {'msgr2-secure': 'on'}
MSGR2_OFF = {'msgr2-secure': 'off'}


def _concurrency_by_size(size: str) -> int:
    # Fewer requests in flight for large objects: each one holds its object in memory.
    return {'64MiB': 8, '256MiB': 4}.get(size, DEFAULT_CONCURRENCY)


BUILTIN_DOCUMENTS: List[Dict[str, Any]] = [
    {'name': 'tls',
     'description': 'TLS of the S3 endpoint: none, at RGW (end to end) or terminated at an '
                    'HAProxy ingress; small (64 KiB) and large (4 MiB) objects',
     'baseline': 'no-tls',
     'variants': [{'name': 'no-tls', 'settings': dict(NO_TLS)},
                  {'name': 'tls-rgw', 'settings': dict(TLS_RGW)},
                  {'name': 'tls-ingress', 'settings': dict(TLS_INGRESS)}],
     'workloads': _put_get(['64KiB', '4MiB'])},
    {'name': 'msgr2',
     'description': 'messenger v2 secure mode between RGW and OSDs and among OSDs, with TLS '
                    'at RGW in both variants; 1 MiB to 256 MiB objects',
     'baseline': 'tls-rgw',
     'variants': [{'name': 'tls-rgw', 'settings': {**TLS_RGW, **MSGR2_OFF}},
                  {'name': 'tls-rgw-msgr2', 'settings': {**TLS_RGW, **MSGR2_ON}}],
     'workloads': _put_get(['1MiB', '4MiB', '64MiB', '256MiB'], _concurrency_by_size)},
    {'name': 'sse',
     'description': 'server-side encryption (SSE-KMS, testing backend) over TLS and msgr2 '
                    'secure mode: TLS at RGW, or at an HAProxy ingress; 4 MiB objects',
     'baseline': 'tls-msgr2',
     'variants': [{'name': 'tls-msgr2', 'settings': {**TLS_RGW, **MSGR2_ON}},
                  {'name': 'sse-rgw', 'settings': {**TLS_RGW, **MSGR2_ON, **SSE}},
                  {'name': 'sse-ingress', 'settings': {**TLS_INGRESS, **MSGR2_ON, **SSE}}],
     'workloads': _put_get(['4MiB'])},
    {'name': 'security',
     'description': 'every security setting in one run against a plain baseline: TLS at RGW '
                    'or ingress, msgr2 secure mode, SSE-KMS; 64 KiB and 4 MiB objects',
     'baseline': 'no-tls',
     'variants': [{'name': 'no-tls', 'settings': {**NO_TLS, **MSGR2_OFF}},
                  {'name': 'tls-rgw', 'settings': {**TLS_RGW, **MSGR2_OFF}},
                  {'name': 'tls-ingress', 'settings': {**TLS_INGRESS, **MSGR2_OFF}},
                  {'name': 'tls-msgr2', 'settings': {**TLS_RGW, **MSGR2_ON}},
                  {'name': 'sse-rgw', 'settings': {**TLS_RGW, **MSGR2_ON, **SSE}},
                  {'name': 'sse-ingress', 'settings': {**TLS_INGRESS, **MSGR2_ON, **SSE}}],
     'workloads': _put_get(['64KiB', '4MiB'])},
    {'name': 'sizes',
     'description': 'PUT and GET from 4 KiB to 256 MiB objects on the cluster as it is',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}}],
     'workloads': _put_get(['4KiB', '64KiB', '1MiB', '4MiB', '64MiB', '256MiB'],
                           _concurrency_by_size)},
    {'name': 'rgw-threads',
     'description': "RGW's thread pool (rgw_thread_pool_size 128, 512, 1024) against the "
                    'cluster as it is; RGWs restarted for each; 64 KiB and 4 MiB objects',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}}] + [
         {'name': 'threads-%d' % n,
          'settings': {'config': {'client.rgw/rgw_thread_pool_size': n}}}
         for n in (128, 512, 1024)],
     'workloads': _put_get(['64KiB', '4MiB'], lambda s: 64)},
    {'name': 'quick',
     'description': 'a smoke run of a minute or two: the cluster as it is and with 256 RGW '
                    'threads (no certificate, KMS or OSD restart); 4 KiB PUT and GET',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}},
                  {'name': 'threads-256',
                   'settings': {'config': {'client.rgw/rgw_thread_pool_size': 256}}}],
     'workloads': _put_get(['4KiB'], duration=10, warmup=2)},
]


def builtin_profiles(settings: Sequence[Setting]) -> List[Profile]:
    return [parse_profile(doc, settings) for doc in BUILTIN_DOCUMENTS]


def builtin_names() -> List[str]:
    return [str(doc['name']) for doc in BUILTIN_DOCUMENTS]


# -- the store ---------------------------------------------------------------------------


class ProfileInfo(NamedTuple):
    """A profile as `profile ls` and `profile show` present it."""
    profile: Profile
    builtin: bool

    def to_dict(self) -> Dict[str, Any]:
        data = self.profile.to_dict()
        data['builtin'] = self.builtin
        data['estimated_s'] = round(estimate_seconds(self.profile))
        return data


class ProfileStore:
    """Built-in profiles and the operator's own, kept under `profile/<name>`."""

    def __init__(self, store: Store, settings: Sequence[Setting]) -> None:
        self.store = store
        self.settings = list(settings)

    def builtins(self) -> List[Profile]:
        return builtin_profiles(self.settings)

    def ls(self) -> List[ProfileInfo]:
        found = [ProfileInfo(p, True) for p in self.builtins()]
        taken = {info.profile.name for info in found}
        for key, text in sorted(self.store.get_store_prefix(STORE_PREFIX).items()):
            name = key[len(STORE_PREFIX):]
            if name in taken:
                continue
            try:
                found.append(ProfileInfo(Profile.from_dict(json.loads(text)), False))
            except (ValueError, KeyError, TypeError):
                continue  # not a profile this module wrote
        return found

    def info(self, name: str) -> ProfileInfo:
        if name in builtin_names():
            return ProfileInfo(self._builtin(name), True)
        stored = self.store.get_store(STORE_PREFIX + name) if NAME.match(name) else None
        if stored is None:
            raise NotFound('no profile %r: `ceph rgwbench profile ls` lists them' % name)
        # Checked again: the settings it names may have changed since it was stored.
        return ProfileInfo(parse_profile(stored, self.settings), False)

    def get(self, name: str) -> Profile:
        return self.info(name).profile

    def set(self, text: Union[str, bytes, Dict[str, Any]]) -> Profile:
        profile = parse_profile(text, self.settings)
        if profile.name in builtin_names():
            raise InvalidInput('profile %s: a built-in profile has this name; choose another '
                               'name' % profile.name)
        stored = json.dumps(profile.to_dict(), separators=(',', ':'))
        if len(stored) > MAX_STORED:
            raise InvalidInput('profile %s: too large to store (%d bytes, at most %d)'
                               % (profile.name, len(stored), MAX_STORED))
        self.store.set_store(STORE_PREFIX + profile.name, stored)
        return profile

    def rm(self, name: str) -> None:
        if name in builtin_names():
            raise InvalidInput('profile %s is built in and cannot be removed' % name)
        if not NAME.match(name) or self.store.get_store(STORE_PREFIX + name) is None:
            raise NotFound('no profile %r: `ceph rgwbench profile ls` lists them' % name)
        self.store.set_store(STORE_PREFIX + name, None)

    def _builtin(self, name: str) -> Profile:
        doc = next(d for d in BUILTIN_DOCUMENTS if d['name'] == name)
        return parse_profile(doc, self.settings)


# -- text --------------------------------------------------------------------------------

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


def _as_info(item: Union[ProfileInfo, Profile, Dict[str, Any]]) -> ProfileInfo:
    if isinstance(item, ProfileInfo):
        return item
    if isinstance(item, Profile):
        return ProfileInfo(item, item.name in builtin_names())
    return ProfileInfo(Profile.from_dict(item),
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
              'Repeats: %d' % profile.repeats,
              'Placement: %s' % (', '.join(profile.placement) if profile.placement
                                 else 'one load agent on the mgr host'),
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
          w.size, w.concurrency, w.processes, '%gs' % w.duration_s, '%gs' % w.warmup_s,
          w.buckets] for w in profile.workloads], '  '))
    return '\n'.join(lines)


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
