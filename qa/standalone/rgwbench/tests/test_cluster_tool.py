"""The `cluster` entry point itself: errors, idempotence, side by side, stop."""
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import types
import urllib.request
from typing import Any, List, Optional, Set

import pytest

from conftest import (CLUSTER, RELEASES, Cluster, active_mgr_pid, new_cluster_dir, one_line,
                      processes_of)


def run(*args: str) -> 'subprocess.CompletedProcess[str]':
    return subprocess.run([CLUSTER] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=60)


@pytest.mark.parametrize('args, message', [
    (['start', '--release', 'octopus'], "invalid choice: 'octopus'"),
    (['start', '--frobnicate'], 'unrecognized arguments: --frobnicate'),
    (['start', '--osds', '0'], 'must be at least 1'),
    (['launch'], "invalid choice: 'launch'"),
])
def test_bad_input_is_one_line_and_nonzero(args: List[str], message: str,
                                           tmp_path: pathlib.Path) -> None:
    proc = run(*args, '--dir', str(tmp_path))
    assert proc.returncode != 0
    assert message in one_line(proc.stderr)
    assert os.listdir(str(tmp_path)) == []


def test_commands_on_a_missing_cluster_fail_clearly(tmp_path: pathlib.Path) -> None:
    proc = run('s3-endpoints', '--dir', str(tmp_path / 'none'))
    assert proc.returncode == 1
    assert 'no cluster in' in one_line(proc.stderr)


class DyingProcesses:
    """A process table whose daemons in `dead` have exited."""

    def __init__(self, dead: Set[str]) -> None:
        self.dead = dead

    def names(self) -> List[str]:
        return ['mgr.x', 'mon.a', 'osd.0']

    def running(self, name: str) -> bool:
        return name not in self.dead

    def output_tail(self, name: str, lines: int = 15) -> str:
        return '%s: Aborted' % name


PACIFIC_CRASH = """\
2026-11-24T05:25:59.727+0000 7fdb3aa9d440  0 ceph version 16.2.15 (618f) pacific (stable), \
process ceph-mgr, pid 10846
2026-11-24T05:26:04.919+0000 7fdb379876c0 -1 ./src/auth/Crypto.h: In function 'int \
CryptoKey::decrypt(...) const' thread 7fdb379876c0 time 2026-11-24T05:26:04.922213+0000
./src/auth/Crypto.h: 162: FAILED ceph_assert(ckh)
2026-11-24T05:26:04.923+0000 7fdb379876c0 -1 *** Caught signal (Aborted) **
--- begin dump of recent events ---
  -778> 2026-11-24T05:25:59.727+0000 7fdb3aa9d440  0 ceph version 16.2.15 (618f) pacific \
(stable), process ceph-mgr, pid 10846
     0> 2026-11-24T05:26:04.923+0000 7fdb379876c0 -1 *** Caught signal (Aborted) **
--- end dump of recent events ---
"""


def test_a_crash_is_told_from_a_kill_and_from_a_run_after_it(tmp_path: pathlib.Path) -> None:
    from localcluster.keeper import crashed_since_start
    log = tmp_path / 'mgr.x.log'
    log.write_text(PACIFIC_CRASH)
    # The dump repeats the start line behind an indent: the run still crashed.
    assert crashed_since_start(str(log), 'ceph-mgr') == \
        '*** Caught signal (Aborted) **: ./src/auth/Crypto.h: 162: FAILED ceph_assert(ckh)'
    # Started again after the crash: that run has not crashed.
    log.write_text(PACIFIC_CRASH + '2026-11-24T05:26:06.000+0000 7f 0 ceph version 16.2.15 '
                   '(618f) pacific (stable), process ceph-mgr, pid 11000\n')
    assert crashed_since_start(str(log), 'ceph-mgr') is None
    # A daemon killed (SIGKILL) writes nothing: no crash.
    log.write_text(PACIFIC_CRASH.splitlines(True)[0])
    assert crashed_since_start(str(log), 'ceph-mgr') is None
    # A signal with no assert before it is named by itself.
    log.write_text(PACIFIC_CRASH.replace('FAILED ceph_assert(ckh)', 'something'))
    assert crashed_since_start(str(log), 'ceph-mgr') == '*** Caught signal (Aborted) **'
    assert crashed_since_start(str(tmp_path / 'none.log'), 'ceph-mgr') is None


def test_a_daemon_that_runs_is_not_started_a_second_time(tmp_path: pathlib.Path) -> None:
    """As systemd starts a unit that runs: nothing happens (a mgr resumed in the middle
    of a restart another mgr has finished started a second radosgw, which found its
    port taken and ended, leaving the first one running and recorded nowhere)."""
    from localcluster.processes import ProcessTable
    procs = ProcessTable(str(tmp_path))
    first = procs.start('rgw.a', ['sleep', '60'])
    try:
        assert procs.start('rgw.a', ['sleep', '60']) == first
        assert procs.pid('rgw.a') == first
    finally:
        assert procs.stop(['rgw.a'], timeout=5) == ['rgw.a']
    # Stopped, it starts again.
    second = procs.start('rgw.a', ['sleep', '60'])
    assert second != first
    procs.stop(['rgw.a'], timeout=5)


def test_a_restart_whose_caller_dies_between_the_stop_and_the_start_still_starts(
        tmp_path: pathlib.Path) -> None:
    """As `systemctl restart`: seen in CI, a mgr failed over while its test orchestrator
    restarted an OSD left the OSD stopped. The caller here is killed while the daemon,
    deaf to SIGTERM, takes its stop grace to end."""
    from localcluster.processes import ProcessTable
    procs = ProcessTable(str(tmp_path))
    deaf = ['sh', '-c', 'trap "" TERM; while :; do sleep 0.2; done']
    first = procs.start('osd.9', deaf)
    caller = subprocess.Popen([sys.executable, '-c', (
        'import sys; sys.path.insert(0, %r)\n'
        'from localcluster.processes import ProcessTable\n'
        'ProcessTable(%r).restart("osd.9", %r, timeout=3)') % (
            os.path.dirname(CLUSTER), str(tmp_path), deaf)])
    try:
        time.sleep(1.5)  # the stop is under way: SIGTERM sent, the grace not over
        assert procs.pid('osd.9') == first
        caller.kill()
        caller.wait()
        deadline = time.monotonic() + 30
        while procs.pid('osd.9') in (None, first):
            assert time.monotonic() < deadline, 'osd.9 left stopped'
            time.sleep(0.2)
    finally:
        procs.stop(['osd.9'], timeout=1)
    assert not os.path.exists('/proc/%d' % first) or \
        open('/proc/%d/stat' % first).read().split()[2] == 'Z'


def test_a_mgr_that_crashes_while_the_cluster_starts_is_waited_for_not_called_dead(
        tmp_path: pathlib.Path) -> None:
    from localcluster.cluster import ClusterError, LocalCluster
    local: Any = LocalCluster(str(tmp_path), log=lambda line: None)
    local.down_grace_s = 0
    local.procs = DyingProcesses({'mgr.x'})
    crashed = [('x', '*** Caught signal (Aborted) **')]
    local.crashed_mgrs = lambda: list(crashed)
    # The keeper starts it again; until then the start waits.
    answers = iter([False, False, True])
    local._wait('the module', lambda: next(answers), 30)
    # A mgr that was killed, or any other daemon that exits, is the cluster's end.
    crashed.clear()
    for dead in ('mgr.x', 'osd.0'):
        local.procs.dead = {dead}
        with pytest.raises(ClusterError, match='waiting for the module: %s exited' % dead):
            local._wait('the module', lambda: False, 30)


def test_a_mgr_that_crashes_is_started_again_and_one_killed_stays_down(
        cluster: Cluster) -> None:
    crashed = active_mgr_pid(cluster)
    os.kill(crashed, signal.SIGABRT)  # what Ceph's own ceph_assert ends in
    deadline = time.monotonic() + 180
    while True:
        assert time.monotonic() < deadline, 'the crashed mgr was not started again'
        # Until the mgr the mon names active has a process, and a new one: the mon may
        # still name the crashed one (a CI found no process of the active mgr so).
        try:
            active: Optional[int] = active_mgr_pid(cluster)
        except AssertionError:
            active = None
        if active not in (None, crashed) and cluster.ceph_json('mgr', 'stat').get('available'):
            break
        time.sleep(1)
    kept = os.path.join(cluster.dir, 'out', 'keeper.out')
    with open(kept) as f:
        said = f.read()
    assert 'crashed (*** Caught signal (Aborted) **); starting it again' in said, said
    # The crash this test caused is no crash of the cluster's (the fixture fails on those).
    with open(kept, 'w') as f:
        f.write(''.join(line for line in said.splitlines(True) if 'crashed (' not in line))
    assert active is not None
    os.kill(active, signal.SIGKILL)
    try:
        time.sleep(5)  # the keeper looks every second
        assert mgr_pids(cluster) == []
    finally:
        cluster.start()
    assert cluster.ceph_json('mgr', 'stat').get('available')


def mgr_pids(cluster: Cluster) -> List[int]:
    found = []
    for pid in processes_of(cluster.dir):
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            continue
        if os.path.basename(argv[0]) == b'ceph-mgr':
            found.append(pid)
    return found


def test_start_twice_keeps_the_cluster(cluster: Cluster) -> None:
    before = cluster.s3()
    pids = sorted(processes_of(cluster.dir))
    cluster.start()
    assert cluster.s3() == before
    assert sorted(processes_of(cluster.dir)) == pids


def test_release_mismatch_is_refused(cluster: Cluster) -> None:
    other = 'tentacle' if cluster.release == 'pacific' else 'pacific'
    proc = cluster.tool('start', '--release', other, check=False)
    assert proc.returncode == 1
    assert 'already holds a %s cluster' % cluster.release in one_line(proc.stderr)


def test_two_clusters_side_by_side_and_stop_ends_only_its_own(cluster: Cluster) -> None:
    second = Cluster(cluster.release, new_cluster_dir('second'))
    try:
        second.start()
        first_url, second_url = cluster.s3()['url'], second.s3()['url']
        assert first_url != second_url
        fsid = cluster.ceph_json('fsid')['fsid']
        assert second.ceph_json('fsid')['fsid'] != fsid
        # `start` returns once the mgr lists its radosgw: a run could start now.
        assert second.ceph_json('rgwbench', 'status')['rgw_daemons'][0][
            'endpoints'][0]['url'] == second_url
        assert processes_of(second.dir)

        stopped = second.tool('stop').stdout.split('\n')
        assert 'stopped mon.a' in stopped and 'stopped rgw.' in ' '.join(stopped)
        assert processes_of(second.dir) == []
        # The first cluster is untouched.
        assert processes_of(cluster.dir)
        with urllib.request.urlopen(first_url + '/', timeout=10) as resp:
            assert resp.status == 200
        assert cluster.ceph_json('fsid')['fsid'] == fsid
    finally:
        second.destroy()


@pytest.mark.parametrize('release', RELEASES)
def test_memstore_cluster_serves_s3_and_stops(release: str) -> None:
    c = Cluster(release, new_cluster_dir('memstore'))
    os.rmdir(c.dir)  # `start` wants a new or empty folder
    try:
        c.start('--objectstore', 'memstore')
        assert c.ceph_json('osd', 'metadata', '0')['osd_objectstore'] == 'memstore'
        with urllib.request.urlopen(c.s3()['url'] + '/', timeout=10) as resp:
            assert resp.status == 200
        # The store is the cluster's: another one is refused, not mixed in.
        proc = c.tool('start', '--release', release, '--objectstore', 'bluestore',
                      check=False)
        assert proc.returncode == 1
        assert 'already holds a cluster on memstore' in one_line(proc.stderr)
        assert 'stopped osd.0' in c.tool('stop').stdout.split('\n')
        assert processes_of(c.dir) == []
    finally:
        c.destroy()


def test_a_daemon_that_exits_is_named_with_its_own_cause_and_how_to_start_afresh(
        tmp_path: pathlib.Path) -> None:
    """A full OSD file ends the OSD with `bluefs enospc` and a long backtrace."""
    from localcluster.cluster import ClusterError, LocalCluster
    local: Any = LocalCluster(str(tmp_path), log=lambda _: None)
    local.down_grace_s = 0
    local.procs = DyingProcesses({'osd.0'})
    (tmp_path / 'log').mkdir()
    backtrace = ''.join(' %d: (ceph::__ceph_abort(char const*)+0x%x) [0x55]\n' % (i, i)
                        for i in range(30))
    (tmp_path / 'log' / 'osd.0.log').write_text(
        '2026-11-23T07:00:00.000 7f osd.0 starting\n'
        '2026-11-23T07:00:01.000 7f 1 bluefs _allocate unable to allocate 0x400000 on bdev 1,'
        ' free 0x0\n'
        '2026-11-23T07:00:01.001 7f -1 bluefs _flush_range_F allocated: 0x0 offset: 0x0'
        ' length: 0x41a\n'
        '2026-11-23T07:00:01.002 7f -1 bluefs enospc\n' + backtrace)
    with pytest.raises(ClusterError) as raised:
        local._wait('radosgw to answer S3 requests', lambda: False, 30)
    message = str(raised.value)
    first = message.splitlines()[0]
    assert first.startswith('waiting for radosgw to answer S3 requests: osd.0 exited: ')
    assert 'bluefs enospc' in first
    assert 'its disk file is full' in message
    assert 'cluster destroy --dir %s' % tmp_path in message
    assert '__ceph_abort' not in message
    assert len(message.splitlines()) <= 4


def test_a_daemon_the_orchestrator_restarts_while_start_waits_is_not_called_dead(
        tmp_path: pathlib.Path) -> None:
    """The fault loop's `cluster start` (bringing back a killed mgr) once met an OSD
    that the orchestrator was restarting, and called the cluster dead."""
    from localcluster.cluster import ClusterError, LocalCluster
    local: Any = LocalCluster(str(tmp_path), log=lambda _: None)
    local.down_grace_s = 3
    local.procs = DyingProcesses({'osd.0'})
    calls = iter(range(3))

    def restarted() -> bool:
        call = next(calls)
        if call == 1:
            local.procs.dead.discard('osd.0')  # back a second later
        return call == 2
    local._wait('all OSDs up', restarted, 30)
    # down for longer than the grace: dead, and named
    local.procs.dead.add('osd.0')
    with pytest.raises(ClusterError, match='waiting for all OSDs up: osd.0 exited'):
        local._wait('all OSDs up', lambda: False, 30)


def test_clusters_started_side_by_side_are_never_given_the_same_port(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A port chosen for one cluster stays its own until its daemons bind it.

    Clusters of the releases' test shards start at the same time; one chose
    its RGW port, another chose the same before radosgw bound it, and the
    orchestrator refused the second's RGW ("port ... is already in use").
    """
    from localcluster import processes
    monkeypatch.setattr(processes, 'PORT_CLAIMS', str(tmp_path / 'claims.json'))
    first, second = tmp_path / 'first', tmp_path / 'second'
    first.mkdir()
    second.mkdir()
    drawn = iter([24000, 24000, 24001, 24003, 24000])
    # Only the tool's draws (random.randint itself serves every thread of the process),
    # and claims under test, not the machine's ports: both releases' runs of this test
    # once saw 24000 or 24001 taken.
    monkeypatch.setattr(processes, 'random', types.SimpleNamespace(
        randint=lambda low, high: next(drawn)))
    monkeypatch.setattr(processes, '_bindable', lambda port: True)
    # Two ports in a row for the first cluster (its RGWs), none bound yet.
    assert processes.free_port(count=2, owner=str(first)) == 24000
    # 24000 and 24001 are the first's: the second is given the next free draw.
    assert processes.free_port(owner=str(second)) == 24003
    # The first may be given its own port again (a restart reuses its ports).
    assert processes.free_port(owner=str(first)) == 24000
    # A claim lasts as long as its cluster's folder.
    first.rmdir()
    drawn = iter([24001])
    assert processes.free_port(owner=str(second)) == 24001


def test_a_cluster_that_stops_leaves_the_shared_root_mounted_for_one_that_starts(
        tmp_path: pathlib.Path) -> None:
    """A cluster of a chroot release that stopped while another was starting took the
    root's /sys from under the other's `mount -t sysfs` (a Tentacle start failed in CI):
    the root's system mounts go only with the last cluster's paths."""
    from localcluster import chroot
    root, repo, first, second = (tmp_path / n for n in ('root', 'repo', 'first', 'second'))
    for folder in (root, repo, first, second):
        folder.mkdir()

    def mounted() -> Set[str]:
        real = str(root.resolve())
        return {p[len(real):] for p in chroot._mountpoints() if p.startswith(real + '/')}

    try:
        chroot.mount_into(str(root), [str(first)], [str(repo)])
        # The second has mounted its folder and runs nothing yet; the first stops.
        chroot.mount_into(str(root), [str(second)], [str(repo)])
        chroot.unmount_from(str(root), [str(first)], [str(repo)])
        assert str(first) not in mounted()
        assert {'/proc', '/sys', '/dev', str(second), str(repo)} <= mounted()
        assert chroot.other_clusters_paths(str(root), [str(repo)]) == [
            str(root.resolve()) + str(second)]
        # A folder removed without a stop holds nothing up; the last one's stop
        # takes everything.
        third = tmp_path / 'third'
        third.mkdir()
        chroot.mount_into(str(root), [str(third)], [str(repo)])
        third.rmdir()
        chroot.unmount_from(str(root), [str(second)], [str(repo)])
        assert mounted() == set()
    finally:
        chroot._unmount_all_under(str(root))


def test_the_cephadm_hosts_sysctl_applies_only_the_ingress_settings_cephadm_wrote(
        tmp_path: pathlib.Path) -> None:
    from localcluster.cephadm_host import ingress_sysctls
    (tmp_path / '90-ceph-f-haproxy.conf').write_text(
        '# created by cephadm\n\nnet.ipv4.ip_nonlocal_bind = 1\n')
    (tmp_path / '90-ceph-f-keepalived.conf').write_text(
        'net.ipv4.ip_forward = 1\nnet.ipv4.ip_nonlocal_bind = 1\n')
    (tmp_path / '90-ceph-f-osd.conf').write_text('kernel.pid_max = 4194304\n')
    (tmp_path / '99-other-haproxy.conf').write_text('net.ipv4.ip_forward = 0\n')
    assert ingress_sysctls(str(tmp_path)) == {'net.ipv4.ip_nonlocal_bind': '1',
                                              'net.ipv4.ip_forward': '1'}


@pytest.mark.parametrize('source, flags', [
    ("p.add_argument('--no-cgroups-split', action='store_true')", ['--no-cgroups-split']),
    ("container_args.append('--cgroups=split')", []),
])
def test_cephadm_is_told_not_to_split_cgroups_only_where_it_knows_the_flag(
        source: str, flags: List[str], tmp_path: pathlib.Path) -> None:
    """Tentacle's cephadm has the flag; Pacific's has none and refuses it (its podman
    arguments lose `--cgroups=split` in the host's podman shim instead)."""
    from localcluster.cephadm_cluster import _without_cgroups_split
    program = tmp_path / 'cephadm'
    program.write_text('#!/usr/bin/python3\n%s\n' % source)
    assert _without_cgroups_split(str(program)) == flags


def _fake_cgroups(root: pathlib.Path, version: int) -> pathlib.Path:
    """A cgroup tree's files as a cpu controller of this version shows them."""
    if version == 2:
        (root / 'cgroup.controllers').write_text('cpuset cpu io memory pids\n')
        (root / 'cgroup.subtree_control').write_text('cpu memory\n')
        return root
    (root / 'cpu').mkdir()
    (root / 'cpu' / 'cpu.cfs_quota_us').write_text('-1\n')
    return root / 'cpu'


@pytest.mark.parametrize('version', [1, 2])
def test_a_cpu_quota_is_written_as_the_controller_of_each_version_reads_it(
        tmp_path: pathlib.Path, version: int) -> None:
    from localcluster.cpu_quota import CpuQuotas
    mount = _fake_cgroups(tmp_path, version)
    quotas = CpuQuotas('3b92947c', root=str(tmp_path))
    quotas.hold('rgw.a', 1.5)
    group = mount / 'rgwbench-3b92947c' / 'rgw.a'
    if version == 2:
        assert (group / 'cpu.max').read_text() == '150000 100000'
        assert (mount / 'rgwbench-3b92947c' / 'cgroup.subtree_control').read_text() == '+cpu'
    else:
        assert (group / 'cpu.cfs_quota_us').read_text() == '150000'
        assert (group / 'cpu.cfs_period_us').read_text() == '100000'
    assert quotas.cores('rgw.a') == 1.5 and quotas.cores('rgw.b') is None
    assert quotas.join_argv('rgw.a', ['radosgw', '-f']) == [
        'sh', '-c', 'echo $$ > "$0" && exec "$@"', str(group / 'cgroup.procs'),
        'radosgw', '-f']


def test_no_cpu_controller_is_refused_clearly(tmp_path: pathlib.Path) -> None:
    from localcluster.cpu_quota import CpuQuotas, NoCpuController
    with pytest.raises(NoCpuController, match='no cgroup cpu controller is mounted under'):
        CpuQuotas('x', root=str(tmp_path)).hold('rgw.a', 1)
    (tmp_path / 'cgroup.controllers').write_text('cpu memory\n')
    (tmp_path / 'cgroup.subtree_control').write_text('memory\n')
    with pytest.raises(NoCpuController, match='not enabled for the cgroups under'):
        CpuQuotas('x', root=str(tmp_path)).check()
    assert CpuQuotas('y', root=str(tmp_path / 'none')).release_all() == []


def test_the_cephadm_hosts_systemctl_starts_a_unit_again_that_died_as_systemd_would(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit with Restart= is started again after its process ends while it should
    run, within its start limit; after `stop` it stays down and its supervisor ends."""
    from localcluster import cephadm_host
    units = tmp_path / 'units'
    units.mkdir()
    (units / 'sleeper.service').write_text(
        '[Service]\nExecStart=sleep 600\nRestart=on-failure\nRestartSec=100ms\n'
        'StartLimitBurst=2\nStartLimitInterval=30min\n')
    monkeypatch.setattr(cephadm_host, 'UNIT_DIRS', (str(units),))
    supervisors: List[threading.Thread] = []

    def spawn(name: str) -> None:
        supervisors.append(threading.Thread(target=systemctl.supervise, args=(name,)))
        supervisors[-1].start()
    systemctl = cephadm_host.Systemctl(str(tmp_path / 'state'), spawn_supervisor=spawn,
                                       poll_s=0.05)

    def main_pid() -> int:
        return int((tmp_path / 'state' / 'sleeper.service.mainpid').read_text())

    def wait_new_pid(old: int) -> int:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if systemctl.is_active('sleeper.service') and main_pid() != old:
                return main_pid()
            time.sleep(0.05)
        raise AssertionError('not started again')
    try:
        assert systemctl.main(['start', 'sleeper']) == 0
        first = main_pid()
        os.killpg(first, signal.SIGKILL)
        second = wait_new_pid(first)
        os.killpg(second, signal.SIGKILL)
        third = wait_new_pid(second)
        assert len(supervisors) == 1
        # a third death within the interval is over the limit of two starts: it stays down
        os.killpg(third, signal.SIGKILL)
        supervisors[0].join(10)
        assert not supervisors[0].is_alive()
        assert not systemctl.is_active('sleeper.service')
        # started and stopped by hand: down for good, the new supervisor gone
        assert systemctl.main(['start', 'sleeper']) == 0
        fourth = main_pid()
        assert systemctl.main(['stop', 'sleeper']) == 0
        supervisors[-1].join(10)
        assert not supervisors[-1].is_alive() and len(supervisors) == 2
        assert not systemctl.is_active('sleeper.service')
        assert systemctl.supervisors() == []
        assert fourth not in (first, second, third)
    finally:
        systemctl.main(['stop', 'sleeper'])
