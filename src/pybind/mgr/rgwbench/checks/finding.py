"""A finding: something about the cluster that endangers a run or skews its figures."""
import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..serial import OMIT_EMPTY, OMIT_NONE, load


class Level(enum.Enum):
    refuse = 'refuse'   # a run must not start
    skews = 'skews'     # figures would be stored, but marked
    info = 'info'       # worth knowing; does not skew


# Most serious first, as the text shows them.
LEVEL_ORDER = (Level.refuse, Level.skews, Level.info)


@dataclass(frozen=True)
class Finding:
    id: str                     # stable, kebab-case
    level: Level
    summary: str                # what is wrong, and why it matters, in one line
    evidence: Tuple[str, ...]   # the values seen, each with where (daemon, option, pool)
    fix: str                    # the command an operator runs
    # Where a run or a load saw it: the workload (of a variant) it was seen before or
    # during; neither: before the run started, so every workload. `seconds`: of the
    # measured window it was seen in (a check during the workload).
    variant: Optional[str] = field(default=None, metadata=OMIT_NONE)
    workload: Optional[str] = field(default=None, metadata=OMIT_NONE)
    seconds: Tuple[int, ...] = field(default=(), metadata=OMIT_EMPTY)

    @property
    def marks(self) -> bool:
        """Whether it marks the figures it was seen with (info does not)."""
        return self.level != Level.info

    def where(self) -> str:
        """When it was seen, as the reports say it."""
        place = ' / '.join(p for p in (self.variant, self.workload) if p)
        if self.seconds:
            return '%sseconds %s of the measured window' % (
                place + ', ' if place else '', seconds_text(self.seconds))
        return 'before %s' % place if place else 'before the start'


def seconds_text(seconds: Sequence[int]) -> str:
    """`0, 1, 2, 5, 7, 8` -> `0-2, 5, 7-8`."""
    spans: List[List[int]] = []
    for s in sorted(set(seconds)):
        if spans and s == spans[-1][1] + 1:
            spans[-1][1] = s
        else:
            spans.append([s, s])
    return ', '.join('%d' % a if a == b else '%d-%d' % (a, b) for a, b in spans)


def ordered(found: Sequence[Finding]) -> Tuple[Finding, ...]:
    """Most serious first; within a level, in the order the checks found them."""
    return tuple(sorted(found, key=lambda f: LEVEL_ORDER.index(f.level)))


def findings_to_text(items: Sequence[Union[Finding, Dict[str, Any]]]) -> str:
    """What `ceph rgwbench check` prints."""
    found = ordered([i if isinstance(i, Finding) else load(Finding, i) for i in items])
    if not found:
        return 'no findings: nothing seen that would skew or endanger a run'
    counts = ', '.join('%d %s' % (n, level.value) for level in LEVEL_ORDER
                       for n in [sum(1 for f in found if f.level == level)] if n)
    lines = ['%d finding%s (%s)' % (len(found), '' if len(found) == 1 else 's', counts)]
    for f in found:
        lines.append('')
        lines.extend(finding_lines(f))
    return '\n'.join(lines)


def finding_lines(f: Finding, indent: str = '', when: bool = False) -> List[str]:
    """A finding as `check` and the reports print it; when it was seen if `when`
    or if a run or a load saw it before or during a workload."""
    lines = ['%s[%s] %s: %s' % (indent, f.level.value, f.id, f.summary)]
    if when or f.variant is not None or f.workload is not None or f.seconds:
        lines.append('%s  when: %s' % (indent, f.where()))
    lines.extend('%s  seen: %s' % (indent, e) for e in f.evidence)
    if f.fix:
        lines.append('%s  fix:  %s' % (indent, f.fix))
    return lines
