"""Agents and radosgw in real podman containers, as cephadm runs them.

On a cluster started with `--containers`, the orchestrator runs the load
agents (a custom container with `--net=host --pid=host`) and radosgw (in a
PID namespace of its own) under podman. The pid each radosgw registers in the
service map is then its pid inside its container, not the host's: the
module's per-daemon figures must still be those of the right process, which
this test reads itself from the host's /proc over the same window.
"""
import json
import os
import subprocess
import threading
import time
from typing import Any, Dict, Iterator, Optional, Set

import pytest

from conftest import RELEASES, Cluster, own_cluster
from helpers import Watch, ceph_input

WARMUP_S, DURATION_S = 2, 8
PODMAN = ['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs']


def host_pid_of_rgw(c: Cluster, daemon_id: str) -> int:
    """The host pid of the radosgw of this daemon id in this cluster, by its command line."""
    conf = os.path.join(c.dir, 'ceph.conf')
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                argv = f.read().decode(errors='replace').split('\0')
        except OSError:
            continue
        if os.path.basename(argv[0]) == 'radosgw' and conf in argv and \
                'client.rgw.%s' % daemon_id in argv:
            found.append(int(entry))
    assert len(found) == 1, 'radosgw of %s: pids %s' % (daemon_id, found)
    return found[0]


def service_map_pids(c: Cluster) -> Dict[str, int]:
    """The pid each RGW daemon registered, by daemon id."""
    daemons = c.ceph_json('service', 'dump')['services']['rgw']['daemons']
    return {str(d['metadata']['id']): int(d['metadata']['pid'])
            for key, d in daemons.items() if key != 'summary' and isinstance(d, dict)}


def containers(c: Cluster, fsid: Optional[str] = None) -> Set[str]:
    """The names of this cluster's running podman containers."""
    fsid = fsid or json.loads(c.tool('info').stdout)['fsid']
    out = subprocess.run(PODMAN + ['ps', '--format', '{{.Names}}', '--filter',
                                   'label=rgwbench.cluster=%s' % fsid[:8]],
                         stdout=subprocess.PIPE, universal_newlines=True, timeout=60).stdout
    return set(out.split())


class ContainersSeen(threading.Thread):
    """Every container of the cluster seen running while it is on: an agent's lives only
    as long as its workload, shorter than a few `ceph` commands on a busy machine."""

    def __init__(self, c: Cluster) -> None:
        super().__init__(daemon=True)
        self.c, self.fsid = c, json.loads(c.tool('info').stdout)['fsid']
        self.seen: Set[str] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.seen |= containers(self.c, self.fsid)


@pytest.fixture(scope='module', params=RELEASES)
def in_containers(request: Any) -> Iterator[Cluster]:
    """A cluster of two RGW daemons run in podman containers, credentials stored."""
    with own_cluster(request.param, 'podman-%s' % request.param, '--rgws', '2',
                     '--containers') as c:
        s3 = c.s3()
        ceph_input(c, '{"access_key": "%s", "secret_key": "%s"}' % (
            s3['access_key'], s3['secret_key']), 'rgwbench', 'credentials', 'set')
        yield c


def test_agents_and_rgws_in_containers_measure_the_right_processes(
        in_containers: Cluster) -> None:
    c = in_containers
    rgw_ids = [d['daemon_id'] for d in c.ceph_json('orch', 'ps', '--daemon_type', 'rgw')]
    assert len(rgw_ids) == 2
    c.wait_rgw_registered()
    host_pids = {i: host_pid_of_rgw(c, i) for i in rgw_ids}
    registered = service_map_pids(c)
    for i in rgw_ids:
        # A PID namespace of its own: the service map's pid is not the host's.
        assert registered[i] != host_pids[i], (registered, host_pids)
    assert {n for n in containers(c) if '-rgw.' in n} == {
        n for n in containers(c) if n.endswith(tuple('.' + i for i in rgw_ids))}
    assert len([n for n in containers(c) if '-rgw.' in n]) == 2, containers(c)
    (host,) = [h['hostname'] for h in c.ceph_json('orch', 'host', 'ls')]
    watch = Watch({'rgw.' + i: pid for i, pid in host_pids.items()})
    watch.start()
    spotted = ContainersSeen(c)
    spotted.start()
    try:
        load_id = c.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                         '--concurrency', '8', '--duration', str(DURATION_S),
                         '--warmup', str(WARMUP_S), '--placement', host).stdout.strip()
        deadline = time.monotonic() + 240
        record = c.ceph_json('rgwbench', 'load', 'show', load_id)
        while record['state'] == 'running':
            assert time.monotonic() < deadline, 'load still running'
            time.sleep(1)
            record = c.ceph_json('rgwbench', 'load', 'show', load_id)
    finally:
        watch.done.set()
        spotted.done.set()
        watch.join()
        spotted.join()
    agent_containers = sorted(n for n in spotted.seen if 'rgwbench-agent' in n)
    assert record['state'] == 'complete', record['error']
    assert agent_containers, 'no agent ran in a podman container'
    result = record['result']
    assert result['ops'] > 0 and result['errors'] == 0
    rgw = result['rgw']
    assert sorted(d['daemon'] for d in rgw['per_daemon']) == sorted(
        'rgw.' + i for i in rgw_ids)
    start = result['start_at'] + WARMUP_S
    for daemon in rgw['per_daemon']:
        assert daemon['cpu_cores'] > 0 and daemon['rss_mib'] > 0, daemon
        seen = watch.cores(daemon['daemon'], start, start + DURATION_S)
        assert daemon['cpu_cores'] == pytest.approx(seen, rel=0.2), (daemon, seen)
    (server,) = result['server'].values()
    assert server['radosgw']['counted_by'] == 'daemon'
    assert sorted(server['radosgw']['pids']) == sorted(host_pids.values())
    # Nothing of the load is left running in a container.
    assert not [n for n in containers(c) if 'rgwbench-agent' in n]


def test_a_container_command_line_names_its_environment_but_shows_no_value() -> None:
    """podman takes each value from its own environment: a process list shows none."""
    from localcluster.containers import Containers
    made = Containers('/cluster', 'abcd1234', '/release-root', host_root='/proc/42/root')
    argv = made.argv('container.agent.h1', ['python3', 'agent.py'],
                     mounts=[('/cluster/orch/agent', '/var/lib/agent')],
                     env_names=['NODE_NAME', 'TOKEN'], args=['--net=host', '--pid=host'])
    assert argv[:2] == ['chroot', '/proc/42/root'] and argv[2] == 'podman'
    assert argv[-3:] == ['/release-root:O', 'python3', 'agent.py']
    assert ['--env', 'TOKEN'] == argv[argv.index('TOKEN') - 1:argv.index('TOKEN') + 1]
    assert not [a for a in argv if '=' in a and a.split('=', 1)[0] in ('TOKEN', 'NODE_NAME')]
    assert '--pid=host' in argv and argv.count('--net=host') == 1
    assert '/cluster:/cluster' in argv and '/cluster/orch/agent:/var/lib/agent' in argv
    assert argv.index('--rootfs') == len(argv) - 4
