"""An agent samples other users' daemons in /proc with no privilege: its container drops
every capability and runs as nobody (agents/launchers.py CONTAINER_ARGS)."""
import json
import os
import stat
import subprocess
import tempfile
import time
from typing import Any, Dict, Iterator

import pytest

from rgwbench.agents.launchers import AGENT_UID, CONTAINER_ARGS
from rgwbench.loadgen import proc


@pytest.fixture
def root_owned_rgw() -> Iterator[int]:
    """A process of this (other) user whose program is `radosgw`, named client.rgw.a."""
    with tempfile.TemporaryDirectory() as folder:
        program = os.path.join(folder, 'radosgw')
        with open(program, 'w') as f:
            f.write('#!/bin/sh\nwhile :; do sleep 1; done\n')
        os.chmod(program, stat.S_IRWXU)
        daemon = subprocess.Popen([program, '-n', 'client.rgw.a'])
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.command_line(daemon.pid)[-2:] != [
                    '-n', 'client.rgw.a']:
                time.sleep(0.05)
            yield daemon.pid
        finally:
            daemon.kill()
            daemon.wait()


def sampled_as(uid: int) -> Dict[str, Any]:
    """What the agent's sampling finds, run in a child with `uid` (no capability left once
    a root process takes another uid)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's outcome is the pipe's)
        try:
            os.close(read_end)
            if os.getuid() == 0:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            (pid,) = proc.find_daemons([proc.Daemon('rgw.a', 'h')])['rgw.a']
            found = {'uid': os.getuid(), 'pid': pid, 'ticks': proc.process_ticks(pid),
                     'rss_kib': proc.rss_kib(pid)}
            os.write(write_end, json.dumps(found).encode())
        except BaseException as e:
            os.write(write_end, json.dumps({'error': repr(e)}).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        answer = json.loads(f.read() or '{}')
    os.waitpid(child, 0)
    return answer


def test_the_agent_container_has_no_capability_and_runs_as_nobody() -> None:
    assert '--cap-drop=ALL' in CONTAINER_ARGS
    assert '--security-opt=no-new-privileges' in CONTAINER_ARGS
    assert '--user=%d:%d' % (AGENT_UID, AGENT_UID) in CONTAINER_ARGS and AGENT_UID != 0
    assert not [a for a in CONTAINER_ARGS if a.startswith('--cap-add') or a == '--privileged']


def test_proc_sampling_of_another_users_daemon_needs_no_capability(
        root_owned_rgw: int) -> None:
    """As an agent running as nobody: it finds the daemon by its name, and reads its CPU
    time and RSS (the test runs as root, so the daemon is another user's; a test run by
    a plain user samples its own process as that user)."""
    found = sampled_as(AGENT_UID)
    assert 'error' not in found, found
    assert found['pid'] == root_owned_rgw
    assert found['uid'] == (AGENT_UID if os.getuid() == 0 else os.getuid())
    assert found['ticks'] is not None and found['rss_kib'] is not None
