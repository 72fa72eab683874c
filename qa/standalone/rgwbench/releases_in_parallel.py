#!/usr/bin/env python3
"""Run the integration tests of each release at the same time, in shards of one pytest each.

    releases_in_parallel.py JUNIT_DIR [pytest arguments...]

Most of a test's time is spent waiting for daemons (restarts, failovers,
PGs), not computing, so releases and shards share the machine well. Given
the test folder, each release runs as a few shards of about the same length:
the files OWN_SHARD names (the fault loop, the nine-RGW run, the runs, the
multi-host tests, the loads and hostile input, the checks and TLS/SSE
settings), the other files whose tests use the two-OSD cluster (settings and
failovers: restart-heavy), and the rest, each shard starting only the
clusters its tests use. Given test files, each release runs them in one
pytest. Each shard's output goes to a log of its own, printed whole when it
ends; the exit status is that of the first shard that failed (0 when none did).

Tests marked `quiet` (their check holds only where the machine's own noise is
below what they measure) run in a shard of their own per release, started once
at most two other shards are still running; the cephadm tests start once at
most ten do (STARTS_AMONG). A shard still running when
the integration tests have taken RGWBENCH_BUDGET seconds (default 4300) is
interrupted as Ctrl-C would (its fixtures stop their clusters, pytest prints
where each test was) and killed 180 s later: CI ends in its time, and says which
shard and test it cut.

RGWBENCH_RELEASES (default "pacific,tentacle") lists the releases;
RGWBENCH_PHASES names a file each shard's time is added to (a line of
"name, seconds, exit status", tab-separated), for `./dev test`'s time table;
the tests a shard ran twice are listed in JUNIT_DIR/reruns-RELEASE-SHARD.txt.
"""
import dataclasses
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

QUIET = 'quiet'
CEPHADM = 'cephadm'
# Tests on this cluster restart OSDs and RGWs and fail mgrs over.
RESTART_HEAVY_FIXTURE = 'two_osds'
# Files long enough to be a shard (on clusters of their own), beside the others
# rather than after them, and the checks and the TLS/SSE settings on a cluster of
# their own. Since CI is no longer starved (open-loop test loads, memstore), the
# shards wait more than they compute: CI's length is its longest shard. Measured
# in CI (seconds, c49175d): Tentacle's nine-RGW run ~920 and its fault loop ~850,
# once one shard of ~1790; the multi-host tests ~900 before the runs' ~1000. So
# each of those four has a shard of its own; of the two-RGW tests (each on
# clusters of their own) the server figures go with the multi-host tests (the
# loads' shard was then the last, at ~1350), the targets with the restarts. The fault
# cases have a shard of their own: in the restarts' shard that shard was the last by
# far, and beside the fault loop (CI, 7b7f080: the cases ~1700 s, then the loop's five
# rounds ~300 s each) the faults' shard came to the integration tests' budget.
OWN_SHARD = {'test_fault_loop.py': 'faults', 'test_fault_cases.py': 'fault-cases',
             'test_scale.py': 'scale',
             'test_targets.py': 'restarts', 'test_server_figures.py': 'hosts',
             'test_runs.py': 'runs', 'test_sse_openbao_run.py': 'runs',
             'test_run_own_user.py': 'hosts', 'test_hosts.py': 'hosts',
             'test_load.py': 'loads', 'test_hostile_input.py': 'loads',
             'test_check.py': 'checks', 'test_settings_sse.py': 'checks',
             'test_settings_tls.py': 'checks', 'test_workload_fields.py': 'checks',
             'test_cephadm.py': CEPHADM}
# Files that test one release whatever the shard's: run in that release's shards only.
# A cephadm cluster is bootstrapped from Tentacle's cephadm and image (one per machine).
# SSE-S3, which the `sse` built-in runs against OpenBao, is Quincy's (17.2.4) on.
ONE_RELEASE = {'test_cephadm.py': 'tentacle', 'test_sse_openbao_run.py': 'tentacle'}

# A failed test is run once more, after a pause: a dozen clusters share two cores
# (CI at load 30-70), and a test that times a daemon or a load fails now and then
# when its process waited a minute for a CPU. What fails twice fails the shard; what
# passed the second time is still named at CI's end (junit_total.py).
RERUNS = ['--reruns', '1', '--reruns-delay', '15']

# Shards that start late: once at most this many other shards still run. The quiet
# tests need the machine's own noise low. A cephadm bootstrap, its OSDs and its mgr
# redeploy in the first minutes of CI, when every other shard starts its clusters,
# ran past 900 s (CI, 8f60803: twice, then 305 s at the end; locally once, then 618 s);
# once the first shards have ended (local CI, 24bdb8a: started at 1656 s with ten
# others running) it took 533 s, and the shard 910 s, ending before the fault shards.
STARTS_AMONG = {QUIET: 2, CEPHADM: 10}
BUDGET_S = 4300
KILL_AFTER_S = 180


def shards(pytest_args: List[str], release: str = '') -> Dict[str, List[str]]:
    """Shard name to pytest arguments: the folder split in two, or the arguments as given."""
    folders = [a for a in pytest_args if os.path.isdir(a)]
    if len(folders) != 1 or any(a.split('::')[0].endswith('.py') for a in pytest_args):
        return {'all': pytest_args}
    options = [a for a in pytest_args if a not in folders]
    found: Dict[str, List[str]] = {'restarts': [], 'others': []}
    quiet: List[str] = []
    for path in sorted(glob.glob(os.path.join(folders[0], 'test_*.py'))):
        only = ONE_RELEASE.get(os.path.basename(path))
        if only and release and only != release:
            continue
        with open(path) as f:
            text = f.read()
        if re.search(r'^@pytest\.mark\.%s$' % QUIET, text, re.MULTILINE):
            quiet.append(path)
        own = OWN_SHARD.get(os.path.basename(path))
        if own:
            found.setdefault(own, []).append(path)
            continue
        found['restarts' if RESTART_HEAVY_FIXTURE in text else 'others'].append(path)
    chosen = {name: options + ['-m', 'not %s' % QUIET] + files
              for name, files in found.items() if files}
    if quiet:
        chosen[QUIET] = options + ['-m', QUIET] + quiet
    return chosen


def interrupt(proc: 'subprocess.Popen[bytes]', since: float) -> None:
    """Ctrl-C to the shard's pytest, then, KILL_AFTER_S later, SIGKILL to its group."""
    if not since:
        proc.send_signal(signal.SIGINT)
    elif time.monotonic() - since > KILL_AFTER_S:
        os.killpg(proc.pid, signal.SIGKILL)


@dataclasses.dataclass
class Shard:
    name: str
    proc: 'subprocess.Popen[bytes]'
    log: str
    interrupted_at: float = 0.0


@dataclasses.dataclass
class Waiting:
    release: str
    kind: str
    args: List[str]


def ready(waiting: List[Waiting], running: int) -> List[Waiting]:
    """The waiting shards that start now, with `running` shards running: all those
    whose STARTS_AMONG allows that many (the quiet ones of both releases together)."""
    return [w for w in waiting if running <= STARTS_AMONG[w.kind]]


def heed_ctrl_c() -> None:
    """SIGINT back to its default in a shard: CI's runner may start `./dev test` with
    it ignored, which every child inherits, and a shard's pytest would then let the
    budget's Ctrl-C pass unseen (seen in CI: killed 180 s later, its clusters left)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(release: str, shard: str, args: List[str], junit_dir: str) -> Shard:
    name = '%s %s' % (release, shard)
    out = tempfile.NamedTemporaryFile('w', prefix='rgwbench-%s-%s-' % (release, shard),
                                      suffix='.log', delete=False)
    junit = os.path.join(junit_dir, 'integration-%s-%s.xml' % (release, shard))
    command = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider',
               '--durations=15', '--junitxml=%s' % junit] + RERUNS
    reruns = os.path.join(junit_dir, 'reruns-%s-%s.txt' % (release, shard))
    # A session of its own: a shard over the budget is killed with every process it
    # started, and only the shard's pytest gets the Ctrl-C.
    proc = subprocess.Popen(command + args, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=heed_ctrl_c,
                            env=dict(os.environ, RGWBENCH_RELEASES=release,
                                     RGWBENCH_RERUNS=reruns))
    out.close()
    print('integration tests of %s started (pid %d)' % (name, proc.pid), flush=True)
    return Shard(name, proc, out.name)


def main(argv: List[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__ or '')
        return 2
    junit_dir, pytest_args = argv[0], argv[1:]
    releases = [r for r in os.environ.get('RGWBENCH_RELEASES', 'pacific,tentacle').split(',')
                if r]
    budget = float(os.environ.get('RGWBENCH_BUDGET', BUDGET_S))
    os.makedirs(junit_dir, exist_ok=True)
    running: List[Shard] = []
    waiting: List[Waiting] = []
    for release in releases:
        for kind, args in shards(pytest_args, release).items():
            if kind in STARTS_AMONG:
                waiting.append(Waiting(release, kind, args))
            else:
                running.append(start(release, kind, args, junit_dir))
    status = 0
    began = time.monotonic()
    try:
        while running or waiting:
            now = ready(waiting, len(running))
            running += [start(w.release, w.kind, w.args, junit_dir) for w in now]
            waiting = [w for w in waiting if w not in now]
            over = time.monotonic() - began > budget
            for shard in list(running):
                if shard.proc.poll() is None:
                    if over:
                        if not shard.interrupted_at:
                            print('%s: interrupted, the integration tests are over their '
                                  'budget of %.0f s' % (shard.name, budget), flush=True)
                        interrupt(shard.proc, shard.interrupted_at)
                        shard.interrupted_at = shard.interrupted_at or time.monotonic()
                    continue
                running.remove(shard)
                took = time.monotonic() - began
                returncode = shard.proc.returncode or (1 if shard.interrupted_at else 0)
                print('=' * 30, '%s: exit %d after %.0f s%s' % (
                    shard.name, returncode, took,
                    ' (interrupted: over the budget)' if shard.interrupted_at else ''),
                    '=' * 30)
                with open(shard.log, errors='replace') as f:
                    sys.stdout.write(f.read())
                sys.stdout.flush()
                os.unlink(shard.log)
                if os.environ.get('RGWBENCH_PHASES'):
                    with open(os.environ['RGWBENCH_PHASES'], 'a') as phases:
                        phases.write('  integration %s\t%d\t%d\n' % (shard.name, took,
                                                                     returncode))
                if returncode and not status:
                    status = returncode
            if over and waiting:
                print('not started, over the budget: %s' % ', '.join(
                    '%s %s' % (w.release, w.kind) for w in waiting), flush=True)
                waiting = []
                status = status or 1
            time.sleep(1)
    except KeyboardInterrupt:
        for shard in running:
            shard.proc.send_signal(signal.SIGINT)
        raise
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
