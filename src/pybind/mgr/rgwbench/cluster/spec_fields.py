"""What a service spec change changes, and whether the orchestrator still holds it.

cephadm's serve loop reads the specs at the start of a pass and, for an RGW
service marked as needing configuration, saves the spec it read once it has
configured it: a spec applied during that pass is overwritten by the one it
replaced, silently (seen on Tentacle: the TLS spec, then the `--cpus` argument,
gone within a second of the apply, and the RGW redeployed as before).
"""
import json
from typing import Any, Dict, List, Optional

ARGS = 'extra_container_args'


def argument_text(item: Any) -> str:
    """An item of extra_container_args as text: a string, or {argument, split} (Reef+)."""
    if isinstance(item, dict):
        return str(item.get('argument') or '')
    return str(item)


def _arguments(spec: Optional[Dict[str, Any]]) -> List[str]:
    return [argument_text(item) for item in (spec or {}).get(ARGS) or []]


def spec_part(spec: Any) -> Dict[str, Any]:
    """A service spec's `spec` part (the service type's own fields); {} for no spec."""
    return dict(spec.get('spec') or {}) if isinstance(spec, dict) else {}


def _plain(value: Any) -> str:
    """A field's value in one form: text without its whitespace (a PEM is kept as text or
    as a list of lines), nothing for an empty or false value (`ssl: false` is no TLS)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = ''.join(value)
    if isinstance(value, str):
        value = ''.join(value.split())
    return json.dumps(value if value not in ('', [], {}, False) else None, sort_keys=True)


def changed_fields(before: Optional[Dict[str, Any]], after: Dict[str, Any]) -> List[str]:
    """The fields of the spec's `spec` part whose value `after` changes."""
    old, new = spec_part(before), spec_part(after)
    return sorted(k for k in set(old) | set(new) if _plain(old.get(k)) != _plain(new.get(k)))


def same_spec(one: Optional[Dict[str, Any]], other: Optional[Dict[str, Any]]) -> bool:
    """Whether two specs the orchestrator gave have the same container arguments and the
    same `spec` part (both read back from it: its defaults are in both)."""
    if one is None or other is None:
        return one is other
    return _arguments(one) == _arguments(other) and not changed_fields(one, other)


def holds(stored: Optional[Dict[str, Any]], before: Optional[Dict[str, Any]],
          after: Dict[str, Any]) -> bool:
    """Whether the `stored` spec has what `after` changed of `before` (its container
    arguments, and each field of its `spec` part it changed); the orchestrator's own
    defaults and fields nobody changed are not compared."""
    if stored is None:
        return False
    if _arguments(before) != _arguments(after) and _arguments(stored) != _arguments(after):
        return False
    have, want = spec_part(stored), spec_part(after)
    return all(_plain(have.get(k)) == _plain(want.get(k)) for k in changed_fields(before, after))
