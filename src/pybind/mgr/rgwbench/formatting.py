"""Output formats shared by every read command."""
import enum
import json
from typing import Any, Callable, List, Sequence

import yaml

from .errors import InvalidInput


class OutputFormat(enum.Enum):
    plain = 'plain'
    json = 'json'
    json_pretty = 'json-pretty'
    yaml = 'yaml'


def parse_format(text: str) -> OutputFormat:
    """The `format` argument of a command (`-f` of the ceph CLI), checked."""
    try:
        return OutputFormat(text)
    except ValueError:
        raise InvalidInput('unsupported output format %r: use one of %s'
                           % (text, ', '.join(f.value for f in OutputFormat)))


def render(data: Any, fmt: OutputFormat, plain: Callable[[Any], str]) -> str:
    if fmt == OutputFormat.json:
        return json.dumps(data, sort_keys=True)
    if fmt == OutputFormat.json_pretty:
        return json.dumps(data, sort_keys=True, indent=2)
    if fmt == OutputFormat.yaml:
        return yaml.safe_dump(data, default_flow_style=False, sort_keys=True)
    return plain(data)


def number(value: Any) -> str:
    """A figure, with as many digits as its size calls for."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return '-'
    if isinstance(value, int):
        return '{:,}'.format(value)
    size = abs(value)
    if size >= 1000:
        return '{:,.0f}'.format(value)
    if size >= 100:
        return '%.1f' % value
    if size >= 1:
        return '%.2f' % value
    return '%.3f' % value


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], indent: str = '') -> str:
    """A plain-text table with columns as wide as their widest cell."""
    cells: List[List[str]] = [list(headers)] + [['-' if c is None else str(c) for c in r]
                                                for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return '\n'.join(indent + line for line in lines)
