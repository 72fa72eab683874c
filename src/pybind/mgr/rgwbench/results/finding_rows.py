"""A run's findings as its tables show them: the rows they cover, and the lines under them.

A finding seen before the run started covers every row; one seen before or
during a workload of a variant covers that row. Only `refuse` and `skews`
findings mark a row: `info` ones skew nothing.
"""
from typing import List, Optional

from ..checks.finding import Finding, finding_lines, ordered
from .model import Run

#: what a row a finding covers carries after its variant's name
MARK = '!'


def covers(finding: Finding, variant: Optional[str], workload: Optional[str]) -> bool:
    return finding.marks and finding.variant in (None, variant) \
        and finding.workload in (None, workload)


def marked(run: Run, variant: Optional[str], workload: Optional[str]) -> bool:
    """Whether a finding of the run covers its row of `variant` and `workload`."""
    return any(covers(f, variant, workload) for f in run.findings or [])


def findings_lines(run: Run) -> List[str]:
    """What the text table prints under itself: every finding, most serious first."""
    found = ordered(run.findings or [])
    if not found:
        return []
    lines = ['findings (%s marks the rows they cover; `ceph rgwbench check` describes '
             'each):' % MARK]
    for finding in found:
        lines += finding_lines(finding, indent='  ', when=True)
    return lines
