"""Findings of a workload's hosts: one whose CPU or network link was saturated.

A saturated host limits what the workload measured whatever the variant set:
the run measured the host, not the setting. CPU: the busiest second of the
host at or above ``CPU_PEAK_PCT`` of all its cores. A link: the busier
direction of an interface at or above ``LINK_SHARE`` of its speed (interfaces
whose speed the kernel does not know are never judged, and say so).
"""
from typing import List, Optional

from ..checks.finding import Finding, Level
from .model import HostFigures, NicFigures, WorkloadResult

CPU_PEAK_PCT = 90.0
LINK_SHARE = 0.9
MIB = float(1 << 20)
SUMMARY = 'a host was saturated while the workload ran: the run measured the host, not ' \
          'the setting'


def link_text(nic: NicFigures) -> str:
    """An interface's throughput each way, and its share of the link (or `unknown`)."""
    share = nic.busiest_share()
    return '%s rx %.1f MiB/s tx %.1f MiB/s of %s' % (
        nic.name, (nic.rx_bytes_s or 0.0) / MIB, (nic.tx_bytes_s or 0.0) / MIB,
        'unknown link speed' if share is None
        else '%d Mb/s (%.0f%%)' % (nic.speed_mbit or 0, 100 * share))


def _evidence(host: HostFigures) -> List[str]:
    found = []
    if host.cpu_pct_peak is not None and host.cpu_pct_peak >= CPU_PEAK_PCT:
        found.append('host %s: CPU peak %.1f%% of its %s cores (mean %s%%)' % (
            host.host, host.cpu_pct_peak, host.cpus if host.cpus else '?',
            '?' if host.cpu_pct_mean is None else '%.1f' % host.cpu_pct_mean))
    for nic in host.nics or []:
        share: Optional[float] = nic.busiest_share()
        if share is not None and share >= LINK_SHARE:
            found.append('host %s: %s' % (host.host, link_text(nic)))
    return found


def host_findings(entry: WorkloadResult) -> List[Finding]:
    """A finding when a host of the workload ran its CPU or a link at their limit (in
    any of its repeats: their mean may hide a saturated one)."""
    evidence: List[str] = []
    for one in entry.repeats or [entry]:
        for host in one.figures.host_figures or []:
            evidence += [line for line in _evidence(host) if line not in evidence]
    if not evidence:
        return []
    return [Finding(id='host-saturated', level=Level.skews, summary=SUMMARY,
                    evidence=tuple(evidence),
                    fix='more or larger RGW hosts, or a lighter workload (concurrency, '
                        'object size); compare the variants on hosts that have headroom')]
