"""What systemd does for cephadm's daemons, done for a local cluster: a crashed mgr starts again.

cephadm's units restart a daemon that ended by a crash. The cluster tool's
daemons are plain processes, so without this a crash stays: Pacific's
ceph-mgr can abort in cephx_verify_authorizer (`FAILED ceph_assert(ckh)`)
when clients connect as it becomes active, and a cluster whose only mgr
did so answers no `ceph` command again. Only a crash is undone: a daemon a
test killed, or one `cluster stop` ended, stays down.
"""
import os
import re
import sys
import time
from typing import Callable, List, Optional, Tuple

# Lines the daemon writes itself start with a timestamp; the dump of recent
# events after a crash repeats older lines behind an indent (`  -778> ...`).
_OWN_LINE = re.compile(r'^\d{4}-\d\d-\d\dT')
CRASH_MARK = '*** Caught signal'
ASSERT_MARK = 'FAILED ceph_assert'
# The crash of Pacific's mgr that the keeper is for (in cephx_verify_authorizer).
KNOWN_CRASH = 'FAILED ceph_assert(ckh)'


def crashed_since_start(log_path: str, program: str, last_bytes: int = 4 << 20) -> Optional[str]:
    """The crash line of the daemon's last run, None when that run did not crash."""
    started = ', process %s, pid ' % program
    try:
        with open(log_path, 'rb') as f:
            f.seek(max(0, os.path.getsize(log_path) - last_bytes))
            lines = f.read().decode(errors='replace').splitlines()
    except OSError:
        return None
    crash: Optional[str] = None
    failed: Optional[str] = None  # the assert that ended the run, if one did
    for line in lines:
        if not _OWN_LINE.match(line):
            if ASSERT_MARK in line and failed is None:
                failed = line.strip()
            continue
        if started in line:
            crash, failed = None, None
        elif ASSERT_MARK in line:
            failed = failed or line.split(' -1 ', 1)[-1].strip()
        elif CRASH_MARK in line and crash is None:
            crash = ('%s: %s' % (line.split(' -1 ', 1)[-1].strip(), failed) if failed
                     else line.split(' -1 ', 1)[-1].strip())
    return crash


def keep(folder_exists: Callable[[], bool],
         crashed_mgrs: Callable[[], List[Tuple[str, str]]],
         start_mgr: Callable[[str], None], log: Callable[[str], None],
         every_s: float = 1.0) -> None:
    """Until the cluster's folder is gone: start again each mgr that crashed."""
    while folder_exists():
        for mgr, cause in crashed_mgrs():
            log('mgr.%s crashed (%s); starting it again, as systemd would' % (mgr, cause))
            start_mgr(mgr)
        time.sleep(every_s)


def stderr_log(line: str) -> None:
    sys.stdout.write('%s %s\n' % (time.strftime('%Y-%m-%dT%H:%M:%S'), line))
    sys.stdout.flush()


def unexpected_crashes(keeper_out: str) -> List[str]:
    """The crashes the keeper undid, other than the one it is for, from its output."""
    try:
        with open(keeper_out, errors='replace') as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [line for line in lines if ' crashed (' in line and KNOWN_CRASH not in line]
