#!/usr/bin/env python3
"""Run one profile several times on a started local cluster and tell what each run marked.

For the long checks no CI can afford: how often an A/A run (a profile whose
variants change nothing) marks a figure significant, and whether a profile
takes the cluster to ``nearfull``. Per run it prints the figures marked
significant (variant, workload, figure, change and its interval), the
fullest OSD seen while the run went on, and any nearfull or full health
check; at the end, how many runs marked nothing. One JSON line per run goes
to ``--out`` and each run's whole record (``results export``: histograms and
per-second series, from which its comparison can be computed again) to
``--save`` if given.

    qa/standalone/rgwbench/cluster start --dir /tmp/aa --release tentacle
    qa/standalone/rgwbench/repeat_runs.py --dir /tmp/aa --profile calibrate --runs 10

The cluster must have S3 credentials stored or let a run make its own user.
``--profile-file`` stores a profile (YAML or JSON) first; ``--`` passes the
rest to ``rgwbench run`` (overrides such as ``--duration 10``).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence

CLUSTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cluster')
FULL_CHECKS = ('OSD_NEARFULL', 'OSD_BACKFILLFULL', 'OSD_FULL', 'POOL_NEARFULL', 'POOL_FULL')


@dataclass
class Marked:
    variant: str
    workload: str
    figure: str
    change: Optional[float]
    low: Optional[float]
    high: Optional[float]
    method: Optional[str]


@dataclass
class RunSeen:
    run_id: str
    state: str
    seconds: float
    marked: List[Marked] = field(default_factory=list)
    fullest_osd_pct: float = 0.0
    full_checks: List[str] = field(default_factory=list)
    stopped: List[str] = field(default_factory=list)
    error: Optional[str] = None


class Ceph:
    def __init__(self, folder: str) -> None:
        self.folder = folder

    def run(self, *args: str, stdin: Optional[bytes] = None) -> 'subprocess.CompletedProcess[str]':
        proc = subprocess.run([CLUSTER, 'ceph', '--dir', self.folder, '--'] + list(args)
                              + (['-i', '-'] if stdin is not None else []),
                              input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=300)
        return subprocess.CompletedProcess(proc.args, proc.returncode,
                                           proc.stdout.decode(), proc.stderr.decode())

    def json(self, *args: str) -> Any:
        proc = self.run(*args, '-f', 'json')
        if proc.returncode != 0:
            raise RuntimeError('ceph %s: %s' % (' '.join(args), proc.stderr.strip()))
        return json.loads(proc.stdout)


def fullest_osd_pct(ceph: Ceph) -> float:
    nodes = ceph.json('osd', 'df').get('nodes') or []
    return max((float(n.get('utilization') or 0.0) for n in nodes), default=0.0)


def full_checks(ceph: Ceph) -> List[str]:
    checks = ceph.json('health', 'detail').get('checks') or {}
    return sorted(name for name in checks if name in FULL_CHECKS)


def marked_figures(record: Dict[str, Any]) -> List[Marked]:
    out = []
    for row in record.get('comparison') or []:
        for name, found in sorted((row.get('intervals') or {}).items()):
            if found.get('significant'):
                out.append(Marked(variant=str(row.get('variant')),
                                  workload=str(row.get('workload')), figure=name,
                                  change=row.get(name), low=found.get('low'),
                                  high=found.get('high'), method=found.get('method')))
    return out


def stopped_workloads(record: Dict[str, Any]) -> List[str]:
    return ['%s/%s: %s' % (v.get('name'), w.get('name'), w.get('stopped'))
            for v in record.get('variants') or [] for w in v.get('workloads') or []
            if w.get('stopped')]


def one_run(ceph: Ceph, profile: str, extra: Sequence[str], timeout_s: float,
            save: Optional[str]) -> RunSeen:
    started = time.monotonic()
    proc = ceph.run('rgwbench', 'run', '--profile', profile, *extra, '--yes-i-really-mean-it')
    if proc.returncode != 0:
        return RunSeen(run_id='', state='refused', seconds=0.0, error=proc.stderr.strip())
    run_id = proc.stdout.strip()
    seen = RunSeen(run_id=run_id, state='running', seconds=0.0)
    while True:
        seen.fullest_osd_pct = max(seen.fullest_osd_pct, fullest_osd_pct(ceph))
        seen.full_checks = sorted(set(seen.full_checks) | set(full_checks(ceph)))
        shown = ceph.run('rgwbench', 'results', 'show', run_id, '-f', 'json')
        record = json.loads(shown.stdout) if shown.returncode == 0 else {}
        if record.get('state', 'running') != 'running':
            break
        if time.monotonic() - started > timeout_s:
            ceph.run('rgwbench', 'abort')
            seen.error = 'still running after %d s: aborted' % timeout_s
        time.sleep(2)
    seen.state = str(record['state'])
    seen.seconds = round(time.monotonic() - started, 1)
    seen.marked = marked_figures(record)
    seen.stopped = stopped_workloads(record)
    seen.error = seen.error or record.get('error')
    if save:
        exported = ceph.run('rgwbench', 'results', 'export', run_id)
        with open(os.path.join(save, run_id + '.json'), 'w') as f:
            f.write(exported.stdout)
    return seen


def describe(index: int, total: int, seen: RunSeen) -> str:
    lines = ['run %d/%d %s: %s in %.0f s, fullest OSD %.1f %%%s, %d figure(s) marked'
             % (index, total, seen.run_id or '-', seen.state, seen.seconds,
                seen.fullest_osd_pct,
                ' (' + ', '.join(seen.full_checks) + ')' if seen.full_checks else '',
                len(seen.marked))]
    lines += ['    %s / %s %s: %+.1f %% [%s, %s] (%s)'
              % (m.variant, m.workload, m.figure, m.change or 0.0, m.low, m.high, m.method)
              for m in seen.marked]
    lines += ['    stopped: ' + s for s in seen.stopped]
    if seen.error:
        lines.append('    error: ' + seen.error)
    return '\n'.join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--dir', required=True, help='the cluster folder')
    parser.add_argument('--profile', required=True, help='the profile to run (its name)')
    parser.add_argument('--profile-file', help='store this profile first (YAML or JSON)')
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--timeout', type=float, default=3600, help='per run, in seconds')
    parser.add_argument('--out', help='append one JSON line per run here')
    parser.add_argument('--save', help="a folder for each run's whole record")
    parser.add_argument('extra', nargs='*', help='after --: more arguments of `rgwbench run`')
    args = parser.parse_args(argv)
    ceph = Ceph(args.dir)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
    if args.profile_file:
        with open(args.profile_file, 'rb') as f:
            stored = ceph.run('rgwbench', 'profile', 'set', stdin=f.read())
        if stored.returncode != 0:
            print('profile set: ' + stored.stderr.strip(), file=sys.stderr)
            return 1
    quiet = 0
    for index in range(1, args.runs + 1):
        seen = one_run(ceph, args.profile, args.extra, args.timeout, args.save)
        print(describe(index, args.runs, seen), flush=True)
        if args.out:
            with open(args.out, 'a') as f:
                f.write(json.dumps(asdict(seen)) + '\n')
        quiet += seen.state == 'complete' and not seen.marked
    print('%s: %d of %d runs complete with no figure marked significant'
          % (args.profile, quiet, args.runs))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
