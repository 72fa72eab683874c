"""The sampled hosts of a run as its reports show them: a row per host and interface.

Per workload and variant, each host the agents sampled: its CPU (% of all its
cores: mean over the measured window, busiest second), each interface's
throughput each way against its link speed (``unknown`` where the kernel does
not know it) and the CPU of the cluster's OSDs on it. Runs stored before
these figures have no rows.
"""
from typing import List, Optional

from ..formatting import table
from .host_findings import MIB
from .model import NicFigures, Run

HEADERS = ('WORKLOAD', 'VARIANT', 'HOST', 'CPUS', 'CPU MEAN %', 'CPU PEAK %', 'NIC',
           'RX MiB/s', 'TX MiB/s', 'LINK Mb/s', 'OSDS', 'OSD CPU')
#: the keys of the rows in JSON (`results show --layout seeds -f json`)
KEYS = ('workload', 'variant', 'host', 'cpus', 'cpu_pct_mean', 'cpu_pct_peak', 'nic',
        'rx_mib_s', 'tx_mib_s', 'link_mbit', 'osds', 'osd_cpu_cores')
LEGEND = ('hosts: CPU as % of all the host\'s cores (mean over the measured window, busiest '
          'second); NIC throughput from /proc/net/dev (loopback left out); LINK: '
          '/sys/class/net/<if>/speed, unknown where the kernel does not say; OSD CPU: cores '
          'of the cluster\'s OSDs on the host.')


def _num(value: Optional[float], digits: int = 1) -> str:
    return '-' if value is None else '%.*f' % (digits, value)


def _nic_cells(nic: Optional[NicFigures]) -> List[str]:
    if nic is None:
        return ['-', '-', '-', '-']
    return [str(nic.name),
            _num(None if nic.rx_bytes_s is None else nic.rx_bytes_s / MIB, 2),
            _num(None if nic.tx_bytes_s is None else nic.tx_bytes_s / MIB, 2),
            str(nic.speed_mbit) if nic.speed_mbit else 'unknown']


def host_rows(run: Run) -> List[List[str]]:
    """Rows of HEADERS: per workload, variant and host, one per interface (the host's
    figures on its first)."""
    rows: List[List[str]] = []
    for name in run.workload_names():
        for variant in run.variants:
            entry = variant.workload(name)
            if entry is None or entry.error:
                continue
            for host in entry.figures.host_figures or []:
                osd = host.osd
                first = [str(name), str(variant.name), str(host.host),
                         '-' if host.cpus is None else str(host.cpus),
                         _num(host.cpu_pct_mean), _num(host.cpu_pct_peak)]
                tail = ['-' if osd is None or osd.daemons is None else str(osd.daemons),
                        '-' if osd is None else _num(osd.cpu_cores, 2)]
                nics: List[Optional[NicFigures]] = list(host.nics or []) or [None]
                for i, nic in enumerate(nics):
                    lead = first if i == 0 else [''] * len(first)
                    rows.append(lead + _nic_cells(nic) + (tail if i == 0 else ['', '']))
    return rows


def hosts_text(run: Run) -> List[str]:
    """The hosts' table under a text report (nothing for a run without host figures)."""
    rows = host_rows(run)
    if not rows:
        return []
    return ['', 'hosts:', table(list(HEADERS), rows), LEGEND]


def hosts_markdown(run: Run) -> List[str]:
    rows = host_rows(run)
    if not rows:
        return []
    return (['', 'Hosts:', '', '| ' + ' | '.join(HEADERS) + ' |',
             '|' + '|'.join([' --- '] * 3 + [' ---: '] * (len(HEADERS) - 3)) + '|']
            + ['| ' + ' | '.join(c.replace('|', '\\|') for c in row) + ' |' for row in rows]
            + ['', LEGEND])
