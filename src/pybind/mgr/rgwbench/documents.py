"""Documents operators hand in with -i (profiles, credentials), read within bounds.

YAML aliases let a few hundred bytes stand for a billion values, or for a
value that contains itself; deep nesting runs the parsers out of recursion;
an integer of thousands of digits is refused by Python itself, and one of
hundreds cannot become a float. Each is refused here as bad input, with one
line, before anything walks the values: a document larger than MAX_BYTES,
nested deeper than the parser follows, standing for more than MAX_VALUES
values once its aliases are expanded, or holding a number beyond MAX_NUMBER
(or infinite, or not a number).
"""
import json
import math
from typing import Any, List, Optional, Union

import yaml

from .errors import InvalidInput

# A profile is stored in one config-key value (64 KiB); credentials too.
MAX_BYTES = 256 * 1024
MAX_VALUES = 100000
# Far above any count, size or duration a document may name; those are checked later.
MAX_NUMBER = 10 ** 18


def load_document(text: Union[str, bytes], what: str) -> Any:
    """The values of a JSON or YAML document; InvalidInput names `what` and the problem."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    size = len(text.encode('utf-8', 'replace'))
    if size > MAX_BYTES:
        raise InvalidInput('%s: %d bytes, more than the %d bytes a document may have'
                           % (what, size, MAX_BYTES))
    try:
        try:
            data = json.loads(text)
        except ValueError:
            data = yaml.safe_load(text)
    except RecursionError:
        raise InvalidInput('%s: nested too deeply' % what)
    except (yaml.YAMLError, ValueError) as e:
        raise InvalidInput('%s: not JSON or YAML: %s' % (what, (str(e).splitlines() or
                                                                [type(e).__name__])[0]))
    if expanded_size(data, MAX_VALUES) > MAX_VALUES:
        raise InvalidInput('%s: its aliases stand for more than %d values (or for a value '
                           'that contains itself)' % (what, MAX_VALUES))
    wild = wild_number(data)
    if wild is not None:
        raise InvalidInput('%s: the number %s is out of range (at most %d)'
                           % (what, wild, MAX_NUMBER))
    return data


def wild_number(data: Any) -> Optional[str]:
    """A number of `data` beyond MAX_NUMBER, infinite or NaN, as text (its first digits)."""
    todo: List[Any] = [data]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
        elif isinstance(value, (list, tuple, set)):
            todo.extend(value)
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int) and abs(value) > MAX_NUMBER:
            return '%s...' % leading_digits(value)
        elif isinstance(value, float) and (not math.isfinite(value) or
                                           abs(value) > MAX_NUMBER):
            return str(value)
    return None


def leading_digits(value: int) -> str:
    """Its first decimal digits; in hex when it has too many (a YAML hex or binary integer
    has no digit limit, and its decimal text past 4300 digits raises ValueError)."""
    try:
        return str(value)[:20]
    except ValueError:
        return '%s (%d bits)' % (hex(value)[:20], value.bit_length())


def expanded_size(data: Any, limit: int) -> int:
    """How many values `data` holds, each alias counted again; stops past `limit`."""
    count = 0
    todo: List[Any] = [data]
    while todo and count <= limit:
        value = todo.pop()
        count += 1
        if isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
        elif isinstance(value, (list, tuple, set)):
            todo.extend(value)
    return count
