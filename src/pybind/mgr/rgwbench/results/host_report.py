"""The server figures of a run as its reports show them under their tables.

Daemons: per workload and variant, each kind of daemon counted (RGW, HAProxy,
the cluster's OSDs on the sampled hosts): how many, their CPU cores and RSS
summed, and the mean per daemon (the figures the studies quote per RGW).

Hosts: per workload and variant, each host the agents sampled: its CPU (% of all its
cores: mean over the measured window, busiest second), each interface's
throughput each way against its link speed (``unknown`` where the kernel does
not know it) and the CPU of the cluster's OSDs on it. Runs stored before
these figures have no rows.
"""
import textwrap
from typing import Iterator, List, Optional, Sequence, Tuple

from ..formatting import table
from .host_findings import MIB
from .model import NicFigures, Run, ServerFigures, WorkloadResult

HEADERS = ('WORKLOAD', 'VARIANT', 'HOST', 'CPUS', 'CPU%', 'PEAK%', 'NIC', 'RX MiB/s',
           'TX MiB/s', 'LINK', 'OSD CPU')
DAEMON_HEADERS = ('WORKLOAD', 'VARIANT', 'DAEMONS', 'COUNT', 'CPU cores', 'CPU/DAEMON',
                  'RSS MiB', 'MiB/DAEMON')
DAEMON_KINDS = (('rgw', 'RGW'), ('haproxy', 'HAProxy'), ('osd', 'OSD'))
#: the keys of the rows in JSON (`results show --layout seeds -f json`)
KEYS = ('workload', 'variant', 'host', 'cpus', 'cpu_pct_mean', 'cpu_pct_peak', 'nic',
        'rx_mib_s', 'tx_mib_s', 'link_mbit', 'osd_cpu_cores')
LEGEND = ('hosts: CPU% and PEAK%: of all the host\'s cores, the mean over the measured window '
          'and its busiest second; NIC throughput from /proc/net/dev (loopback left out); '
          'LINK: /sys/class/net/<if>/speed in Mb/s, unknown where the kernel does not say; '
          'OSD CPU: cores of the cluster\'s OSDs on the host.')


def _num(value: Optional[float], digits: int = 1) -> str:
    return '-' if value is None else '%.*f' % (digits, value)


def _nic_cells(nic: Optional[NicFigures]) -> List[str]:
    if nic is None:
        return ['-', '-', '-', '-']
    return [str(nic.name),
            _num(None if nic.rx_bytes_s is None else nic.rx_bytes_s / MIB, 2),
            _num(None if nic.tx_bytes_s is None else nic.tx_bytes_s / MIB, 2),
            str(nic.speed_mbit) if nic.speed_mbit else 'unknown']


def _measured(run: Run) -> Iterator[Tuple[List[str], WorkloadResult]]:
    """Per workload, then variant: (their names, what it measured), failures left out."""
    for name in run.workload_names():
        for variant in run.variants:
            entry = variant.workload(name)
            if entry is not None and not entry.error:
                yield [str(name), str(variant.name)], entry


def host_rows(run: Run) -> List[List[str]]:
    """Rows of HEADERS: per workload, variant and host, one per interface (the host's
    figures on its first)."""
    rows: List[List[str]] = []
    for names, entry in _measured(run):
        for host in entry.figures.host_figures or []:
            osd = host.osd
            first = names + [str(host.host), '-' if host.cpus is None else str(host.cpus),
                             _num(host.cpu_pct_mean), _num(host.cpu_pct_peak)]
            tail = ['-' if osd is None else _num(osd.cpu_cores, 2)]
            nics: List[Optional[NicFigures]] = list(host.nics or []) or [None]
            for i, nic in enumerate(nics):
                lead = first if i == 0 else [''] * len(first)
                rows.append(lead + _nic_cells(nic) + (tail if i == 0 else ['']))
    return rows


def daemon_rows(run: Run) -> List[List[str]]:
    """Rows of DAEMON_HEADERS: per workload, variant and kind of daemon counted."""
    rows: List[List[str]] = []
    for names, entry in _measured(run):
        for key, label in DAEMON_KINDS:
            found: Optional[ServerFigures] = getattr(entry.figures, key)
            if found is not None:
                rows.append(names + [
                    label, '-' if found.daemons is None else str(found.daemons),
                    _num(found.cpu_cores, 3), _num(found.per_daemon_mean('cpu_cores'), 3),
                    _num(found.rss_mib), _num(found.per_daemon_mean('rss_mib'))])
    return rows


DAEMONS_LEGEND = ('daemons: CPU cores and RSS summed over the daemons counted, and their mean '
                  'per daemon; OSD: the cluster\'s OSDs on the hosts the agents sampled.')


def _markdown(title: str, headers: Sequence[str], rows: List[List[str]],
              legend: str) -> List[str]:
    return (['', '%s:' % title, '', '| ' + ' | '.join(headers) + ' |',
             '|' + '|'.join([' --- '] * 3 + [' ---: '] * (len(headers) - 3)) + '|']
            + ['| ' + ' | '.join(c.replace('|', '\\|') for c in row) + ' |' for row in rows]
            + ['', legend])


def hosts_text(run: Run, daemons: bool = True) -> List[str]:
    """The daemons' (unless not ``daemons``) and the hosts' tables under a text report
    (none without figures)."""
    lines: List[str] = []
    for title, headers, rows, legend in tables(run, daemons):
        lines += ['', '%s:' % title.lower(), table(list(headers), rows)]
        lines += textwrap.wrap(legend, width=90, subsequent_indent='   ')
    return lines


def hosts_markdown(run: Run, daemons: bool = True) -> List[str]:
    lines: List[str] = []
    for title, headers, rows, legend in tables(run, daemons):
        lines += _markdown(title, headers, rows, legend)
    return lines


def tables(run: Run, daemons: bool = True
           ) -> List[Tuple[str, Sequence[str], List[List[str]], str]]:
    """(title, headers, rows, legend) of the daemons' (unless not ``daemons``: the seeds
    layout has their rows) and the hosts' tables that have rows."""
    found: List[Tuple[str, Sequence[str], List[List[str]], str]] = []
    for title, headers, rows, legend in (
            ('Daemons', DAEMON_HEADERS, daemon_rows(run) if daemons else [], DAEMONS_LEGEND),
            ('Hosts', HEADERS, host_rows(run), LEGEND)):
        if rows:
            found.append((title, headers, rows, legend))
    return found
