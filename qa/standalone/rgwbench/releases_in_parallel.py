#!/usr/bin/env python3
"""Run the integration tests of each release at the same time, one pytest per release.

    releases_in_parallel.py JUNIT_DIR [pytest arguments...]

Most of a test's time is spent waiting for daemons (restarts, failovers,
PGs), not computing, so the releases share the machine well. Each release's
output goes to a log of its own, printed whole when it ends; the exit status
is that of the first release that failed (0 when none did).
RGWBENCH_RELEASES (default "pacific,tentacle") lists the releases.
"""
import os
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple


def main(argv: List[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__ or '')
        return 2
    junit_dir, pytest_args = argv[0], argv[1:]
    releases = [r for r in os.environ.get('RGWBENCH_RELEASES', 'pacific,tentacle').split(',')
                if r]
    os.makedirs(junit_dir, exist_ok=True)
    running: Dict[str, Tuple[subprocess.Popen, str]] = {}
    for release in releases:
        out = tempfile.NamedTemporaryFile('w', prefix='rgwbench-%s-' % release,
                                          suffix='.log', delete=False)
        command = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider',
                   '--junitxml=%s' % os.path.join(junit_dir, 'integration-%s.xml' % release)]
        proc = subprocess.Popen(command + pytest_args, stdout=out, stderr=subprocess.STDOUT,
                                env=dict(os.environ, RGWBENCH_RELEASES=release))
        out.close()
        running[release] = (proc, out.name)
        print('integration tests of %s started (pid %d)' % (release, proc.pid), flush=True)
    status = 0
    began = time.monotonic()
    while running:
        for release, (proc, log) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[release]
            took = time.monotonic() - began
            print('=' * 30, '%s: exit %d after %.0f s' % (release, proc.returncode, took),
                  '=' * 30)
            with open(log, errors='replace') as f:
                sys.stdout.write(f.read())
            sys.stdout.flush()
            os.unlink(log)
            if proc.returncode and not status:
                status = proc.returncode
        time.sleep(1)
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
