"""Dataclasses to JSON documents and back, declared by their fields and type hints.

`dump(obj)` writes a dataclass field by field, in their order; `load(cls, doc)`
reads one back by the type hints of ``cls`` (Optional, List, Dict, Tuple,
Enum, nested dataclasses; any other type is taken as it came). What a class
declares:

* a field ``extra`` (a dict): keys the class does not know, kept as they came
  and written last;
* a field ``nulls`` (a frozenset of field names): a None field is written as
  null only when named there, else left out. Its default holds the fields an
  object made here writes as null; an object read has there the fields that
  came as null and those of the default that came at all. A class without
  ``nulls`` writes every None (unless the field says OMIT_NONE);
* field metadata: FLAT (a dataclass whose keys sit beside the parent's, or a
  dict of the keys that ``flat_keys`` names), OMIT_NONE, OMIT_EMPTY (None
  included), OMIT_DEFAULT, HIDDEN (a part of the object its document leaves
  out); ``form(...)`` for a field whose document differs from its value (another
  key, a converted value, the key older records had, the value when absent);
  ``derived(fn)`` for a field written as ``fn(record)`` (a masked secret);
* a class attribute ``COMPUTED`` (names of properties): keys written after the
  fields, never read (a URL made of the fields, say).

``view(cls, obj)`` makes a dataclass that is another form of ``obj`` (what a
record shows of a type that holds more): each field is ``obj``'s attribute of
its name, or ``of(fn)``'s ``fn(obj)``.

A class that is not a dataclass but has a JSON form of its own (``to_dict`` and
a ``from_dict`` class method: the engine's latency Histogram, which goes to the
agents without this module) is written and read through them.

A value of the wrong shape for its type (a list where a dict belongs, an item
of a list of records that is not a dict, a document its own-form class refuses)
is left out when read.
"""
import dataclasses
import enum
import functools
import typing
from typing import (Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple, Type,
                    TypeVar)

T = TypeVar('T')
Doc = Dict[str, Any]

EXTRA, NULLS = 'extra', 'nulls'
#: metadata of a field written into its parent's keys
FLAT = {'flat': True}
OMIT_NONE = {'omit': 'none'}
OMIT_EMPTY = {'omit': 'empty'}
OMIT_DEFAULT = {'omit': 'default'}
HIDDEN = {'hidden': True}
COMPUTED = 'COMPUTED'
_ABSENT = object()


def form(*, key: Optional[str] = None, write: Optional[Callable[[Any], Any]] = None,
         read: Optional[Callable[[Any], Any]] = None, older_keys: Tuple[str, ...] = (),
         absent: Any = _ABSENT, omit: Optional[str] = None) -> Dict[str, Any]:
    """Metadata of a field whose document is not its plain value: written under ``key``,
    through ``write`` (a value not None) and read back through ``read``; read from
    ``older_keys`` when ``key`` is not there, and ``absent`` when none is (a record older
    than the field); ``omit``: 'none', 'empty' or 'default', checked on the written value."""
    meta: Dict[str, Any] = {'omit': omit} if omit else {}
    for name, value in (('key', key), ('write', write), ('read', read)):
        if value is not None:
            meta[name] = value
    if older_keys:
        meta['older_keys'] = older_keys
    if absent is not _ABSENT:
        meta['absent'] = absent
    return meta


def derived(make: Callable[[Any], Any]) -> Dict[str, Any]:
    """Metadata of a field written as ``make(record)`` (read back as it came)."""
    return {'derived': make}


def of(make: Callable[[Any], Any]) -> Dict[str, Any]:
    """Metadata of a field of a view: ``make(obj)`` of the object viewed (see ``view``)."""
    return {'of': make}


def flat_keys(keys: Callable[[], Tuple[str, ...]]) -> Dict[str, Any]:
    """Metadata of a dict field whose entries sit beside the parent's keys: those named."""
    return {'flat': True, 'keys': keys}


R = TypeVar('R')


def _per_class(make: Callable[[Any], R]) -> Callable[[Any], R]:
    """``make`` of a class, worked out once per class."""
    found: Dict[Any, R] = {}

    def of(cls: Any) -> R:
        if cls not in found:
            found[cls] = make(cls)
        return found[cls]
    return of


class _Skip:
    """A value of the wrong shape: the field keeps its default."""


SKIP = _Skip()


@_per_class
def _hints(cls: Any) -> Dict[str, Any]:
    return typing.get_type_hints(cls)


@_per_class
def _fields(cls: Any) -> Tuple[dataclasses.Field, ...]:
    return tuple(f for f in dataclasses.fields(cls)
                 if f.name not in (EXTRA, NULLS) and not f.metadata.get('hidden'))


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get('key', f.name)


@_per_class
def field_names(cls: Any) -> Tuple[str, ...]:
    """The keys of a record's own fields (not flat, not extra or nulls)."""
    return tuple(_key(f) for f in _fields(cls) if not f.metadata.get('flat'))


def _has(cls: Any, name: str) -> bool:
    return any(f.name == name for f in dataclasses.fields(cls))


def _default_nulls(cls: Any) -> FrozenSet[str]:
    for f in dataclasses.fields(cls):
        if f.name == NULLS:
            return frozenset(f.default)  # type: ignore[arg-type]
    return frozenset()


@_per_class
def known_keys(cls: Any) -> Tuple[str, ...]:
    """Every key a document of ``cls`` has that is not kept as extra."""
    keys: List[str] = []
    for f in _fields(cls):
        if not f.metadata.get('flat'):
            keys.append(_key(f))
            keys.extend(f.metadata.get('older_keys', ()))
        elif 'keys' in f.metadata:
            keys.extend(f.metadata['keys']())
        else:
            keys.extend(known_keys(_hints(cls)[f.name]))
    return tuple(keys)


# -- writing ---------------------------------------------------------------------------------

def dump(value: Any) -> Any:
    """A dataclass (or a list, dict, tuple or enum of them) as its JSON document."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump_record(value)
    if isinstance(value, (list, tuple)):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if _own_form(type(value)):
        return value.to_dict()
    return value


def _own_form(cls: Any) -> bool:
    """Whether a class writes and reads its JSON form itself (see the module docstring)."""
    return isinstance(cls, type) and callable(getattr(cls, 'to_dict', None)) \
        and callable(getattr(cls, 'from_dict', None))


def _dump_record(obj: Any) -> Doc:
    cls = type(obj)
    nulls = getattr(obj, NULLS) if _has(cls, NULLS) else None
    out: Doc = {}
    for f in _fields(cls):
        meta = f.metadata
        value = meta['derived'](obj) if 'derived' in meta else getattr(obj, f.name)
        if meta.get('flat'):
            out.update(dump(value))
            continue
        omit = meta.get('omit')
        if omit == 'default' and value == _default(f):
            continue
        if value is not None and 'write' in meta:
            value = meta['write'](value)
        if value is None:
            if nulls is not None and f.name not in nulls:
                continue
            if nulls is None and omit in ('none', 'empty'):
                continue
        elif omit == 'empty' and not value:
            continue
        out[_key(f)] = dump(value)
    for name in getattr(cls, COMPUTED, ()):
        out[name] = dump(getattr(obj, name))
    if _has(cls, EXTRA):
        out.update(getattr(obj, EXTRA))
    return out


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return _ABSENT


def view(cls: Type[T], obj: Any) -> T:
    """``obj`` in the form of the dataclass ``cls``: each field from ``obj``'s attribute of its
    name, or from its ``of`` metadata."""
    return cls(**{f.name: f.metadata['of'](obj) if 'of' in f.metadata else getattr(obj, f.name)
                  for f in dataclasses.fields(cls)})  # type: ignore[arg-type]


# -- reading ---------------------------------------------------------------------------------

def load(cls: Type[T], data: Mapping[str, Any]) -> T:
    """An object of the dataclass ``cls`` from its JSON document (see the module docstring)."""
    hints = _hints(cls)
    values: Dict[str, Any] = {}
    for f in _fields(cls):
        if f.metadata.get('flat'):
            if 'keys' in f.metadata:
                values[f.name] = {k: data[k] for k in f.metadata['keys']() if k in data}
            else:
                part = hints[f.name]
                values[f.name] = load(part, {k: data[k] for k in known_keys(part) if k in data})
            continue
        meta = f.metadata
        key = next((k for k in (_key(f),) + meta.get('older_keys', ()) if k in data), None)
        if key is None:
            if 'absent' in meta:
                values[f.name] = meta['absent']
            continue
        if 'read' in meta:
            value = data[key]
            if value is not None:
                value = meta['read'](value)
            elif not _optional(hints[f.name])[0]:
                value = SKIP
        else:
            value = _value(hints[f.name], data[key])
        if value is not SKIP:
            values[f.name] = value
    if _has(cls, EXTRA):
        known = frozenset(known_keys(cls))
        values[EXTRA] = {k: v for k, v in data.items() if k not in known}
    if _has(cls, NULLS):
        nullable = _default_nulls(cls)
        values[NULLS] = frozenset(k for k in field_names(cls) if k in data and (
            data[k] is None or k in nullable))
    return cls(**values)


def _optional(hint: Any) -> Tuple[bool, Any]:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Union and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return True, rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]
    return False, hint


@functools.lru_cache(maxsize=None)
def _plain(hint: Any) -> bool:
    """Whether values of this type are taken as they came (no record, enum or tuple in it)."""
    if hint is Any or hint is type(None):
        return True
    if isinstance(hint, type):
        return not (dataclasses.is_dataclass(hint) or issubclass(hint, enum.Enum)
                    or _own_form(hint))
    if typing.get_origin(hint) is tuple:
        return False
    return all(_plain(a) for a in typing.get_args(hint) if a is not Ellipsis)


def _own_load(cls: Any, value: Any) -> Any:
    if not isinstance(value, Mapping):
        return SKIP
    try:
        return cls.from_dict(value)
    except (ValueError, TypeError, KeyError):
        return SKIP


def _value(hint: Any, value: Any) -> Any:
    optional, hint = _optional(hint)
    if value is None:
        return None if optional else SKIP
    if _plain(hint):
        return value
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return load(hint, value) if isinstance(value, Mapping) else SKIP
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if _own_form(hint):
        return _own_load(hint, value)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            return SKIP
        (item,) = typing.get_args(hint)[:1]
        items = [_value(item, v) for v in value]
        kept = [v for v in items if v is not SKIP]
        return kept if origin is list else tuple(kept)
    if origin is dict:
        if not isinstance(value, Mapping):
            return SKIP
        item = typing.get_args(hint)[1]
        pairs = [(str(k), _value(item, v)) for k, v in value.items()]
        return {k: v for k, v in pairs if v is not SKIP}
    return value
