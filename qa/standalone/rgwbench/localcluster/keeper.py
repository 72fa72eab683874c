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
from typing import Callable, List, Optional

# Lines the daemon writes itself start with a timestamp; the dump of recent
# events after a crash repeats older lines behind an indent (`  -778> ...`).
_OWN_LINE = re.compile(r'^\d{4}-\d\d-\d\dT')
CRASH_MARK = '*** Caught signal'


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
    for line in lines:
        if not _OWN_LINE.match(line):
            continue
        if started in line:
            crash = None
        elif CRASH_MARK in line:
            crash = line.strip()
    return crash


def keep(folder_exists: Callable[[], bool], crashed_mgrs: Callable[[], List[str]],
         start_mgr: Callable[[str], None], log: Callable[[str], None],
         every_s: float = 1.0) -> None:
    """Until the cluster's folder is gone: start again each mgr that crashed."""
    while folder_exists():
        for mgr in crashed_mgrs():
            log('mgr.%s crashed; starting it again, as systemd would' % mgr)
            start_mgr(mgr)
        time.sleep(every_s)


def stderr_log(line: str) -> None:
    sys.stdout.write('%s %s\n' % (time.strftime('%Y-%m-%dT%H:%M:%S'), line))
    sys.stdout.flush()
