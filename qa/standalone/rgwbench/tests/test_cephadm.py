"""rgwbench on a real cephadm cluster (Tentacle): the release's own cephadm and mgr
module, every daemon in podman, the module installed as the docs tell an operator.

One cephadm cluster may run on a machine at a time (its mgr's fixed ports): these
tests share one, and `cluster stop` must leave none of cephadm's marks behind.
"""
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from conftest import (OPTIONS, SMALL_LOAD_ARGS, Cluster, free_ports, new_cluster_dir,
                      kmip, openbao, wait_for, wait_pgs_clean, wait_settings)
from localcluster.cephadm_cluster import BRIDGE, HOST_ADDR, INGRESS_SYSCTLS, OWNER_FILE
from localcluster.processes import stat_fields
from helpers import (CLK_TCK, DURATION_S, FAST, WARMUP_S, Watch, ca_file_of, kept_on_purpose,
                     new_prefix, run_json, s3_client, s3_round_trip, served_certificate, wait_load,
                     wait_run)

# CI runs these on Tentacle's cephadm; RGWBENCH_CEPHADM_RELEASE=pacific runs them on
# Pacific's (bookworm's 16.2.15), one cephadm cluster at a time either way.
RELEASE = os.environ.get('RGWBENCH_CEPHADM_RELEASE', 'tentacle')
# An address of the cluster's bridge network that no daemon has: keepalived raises it.
VIP = '198.51.100.77'
ROOT_KEYS = '/root/.ssh/authorized_keys'


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def _marks_of(fsid: str) -> List[str]:
    """What cephadm put on this machine for the cluster that is still there."""
    found = [p for p in ('/var/lib/ceph/' + fsid, '/var/log/ceph/' + fsid,
                         '/run/cephadm/%s.lock' % fsid, '/etc/logrotate.d/ceph-' + fsid)
             if os.path.lexists(p)]
    for folder in ('/etc/systemd/system', '/etc/sysctl.d'):
        found += [os.path.join(folder, n) for n in os.listdir(folder) if fsid in n]
    found += [n for n in _podman(['ps', '-a', '--format', '{{.Names}}']).split() if fsid in n]
    return found


def _podman(args: List[str]) -> str:
    return subprocess.run(['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs'] + args,
                          stdout=subprocess.PIPE, universal_newlines=True).stdout


def _command_line(pid: int) -> str:
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().replace(b'\0', b' ').decode(errors='replace')
    except OSError:   # gone meanwhile
        return ''


def _stop_one_left_by_a_test() -> None:
    """Stop the cephadm cluster an earlier run of these tests left (one killed before its
    fixture could stop it: CI ends a shard over its budget so): one machine has room for
    one. A developer's cluster (a folder of their own) and one whose tests still run are
    left alone."""
    try:
        with open(OWNER_FILE) as f:
            owner = f.read().strip()
    except FileNotFoundError:
        return
    ours = os.path.basename(owner).startswith('rgwbench-cephadm-') and \
        os.path.dirname(owner) == tempfile.gettempdir()
    mine, pid = set(), os.getpid()
    while pid > 1:   # this process and those that started it
        mine.add(pid)
        pid = int((stat_fields(pid) or ['', '0'])[1])
    others = [pid for pid in map(int, filter(str.isdigit, os.listdir('/proc')))
              if pid not in mine and 'test_cephadm' in _command_line(pid)]
    if ours and not others and os.path.exists(os.path.join(owner, 'cluster.json')):
        print('stopping the cephadm cluster an earlier run left in %s' % owner)
        Cluster(RELEASE, owner).tool('stop', check=False)


@pytest.fixture(scope='module')
def cephadm() -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.fail('the integration tests need root (they start a real cluster)')
    _stop_one_left_by_a_test()
    directory = new_cluster_dir('cephadm')
    os.rmdir(directory)
    keys_before = _read(ROOT_KEYS)
    sysctls_before = {n: _read('/proc/sys/' + n) for n in INGRESS_SYSCTLS}
    c = Cluster(RELEASE, directory)
    fsid = ''
    try:
        # Each stage has a deadline of its own (the tool logs each stage's length); past
        # 900 s a start on a loaded machine was still going, and killing it lost it all.
        c.start('--orchestrator', 'cephadm', '--osds', '2', timeout=1800)
        fsid = c.ceph('fsid').stdout.strip()
        # As on a cluster that has served S3: RGW makes its data and log pools at the
        # first upload, which the runs' snapshots before them must already hold.
        s3 = c.s3()
        run_json(s3['url'], s3, '--op', 'put', '--ops', '1', '--concurrency', '1',
                 '--bucket-prefix', new_prefix('first'), '--cleanup', '--no-proc-stats')
        unclean = wait_pgs_clean(c, timeout=300)
        assert unclean is None, unclean
        yield c
    finally:
        c.close_session()
        stopped = c.tool('stop', check=False)
        bridge = subprocess.run(['ip', 'link', 'show', BRIDGE], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode
        loops = subprocess.run(['losetup', '-a'], stdout=subprocess.PIPE,
                               universal_newlines=True).stdout
        left = _marks_of(fsid) if fsid else []
        keys_after = _read(ROOT_KEYS)
        sysctls_after = {n: _read('/proc/sys/' + n) for n in INGRESS_SYSCTLS}
        if os.environ.get('RGWBENCH_KEEP_CLUSTERS') != '1':
            c.tool('destroy', check=False)
        assert stopped.returncode == 0, stopped.stderr
        assert not left, left
        assert bridge != 0, 'the bridge is still there'
        assert directory not in loops, loops
        assert keys_after == keys_before
        assert sysctls_after == sysctls_before


def test_every_daemon_is_a_cephadm_daemon_in_a_container(cephadm: Cluster) -> None:
    daemons = cephadm.ceph_json('orch', 'ps')
    kinds = {d['daemon_type'] for d in daemons}
    assert {'mon', 'mgr', 'osd', 'rgw'} <= kinds, kinds
    fsid = cephadm.ceph('fsid').stdout.strip()
    names = _podman(['ps', '--format', '{{.Names}}']).split()
    for daemon in daemons:
        assert daemon['status_desc'] == 'running', daemon
        assert daemon.get('container_id'), daemon
        # cephadm's container name: ceph-<fsid>-<type>-<id>, dots as dashes
        name = 'ceph-%s-%s-%s' % (fsid, daemon['daemon_type'],
                                  daemon['daemon_id'].replace('.', '-'))
        assert name in names, (name, names)
    assert cephadm.ceph_json('orch', 'status')['backend'] == 'cephadm'


def test_the_module_is_mounted_through_the_mgr_spec_and_enabled(cephadm: Cluster) -> None:
    spec = cephadm.ceph_json('orch', 'ls', '--service_type', 'mgr', '--export')[0]
    mounts = [a for a in spec.get('extra_container_args', []) if 'rgwbench' in a]
    assert len(mounts) == 1 and mounts[0].endswith(
        ':/usr/share/ceph/mgr/rgwbench:ro'), spec
    modules = cephadm.ceph_json('mgr', 'module', 'ls')
    assert 'rgwbench' in modules['enabled_modules']


def test_status_sees_the_rgw_cephadm_runs(cephadm: Cluster) -> None:
    status = cephadm.ceph_json('rgwbench', 'status')
    assert status['rgw_daemons'], status
    cephadm.wait_rgw_registered()


def store_credentials(c: Cluster) -> None:
    """The cluster's test user as the S3 credentials runs and loads sign with."""
    s3 = c.s3()
    proc = c.ceph_input(json.dumps({'access_key': s3['access_key'],
                                    'secret_key': s3['secret_key']}),
                        'rgwbench', 'credentials', 'set')
    assert proc.returncode == 0, proc.stderr


def cert_store(c: Cluster, keys: List[str]) -> Dict[str, Any]:
    found = {}
    for key in keys:
        if key.startswith('mgr/cephadm/cert_store'):
            held = json.loads(c.ceph('config-key', 'get', key).stdout or '{}')
            if held:
                found[key] = held
    return found


def snapshot(c: Cluster, run_ids: List[str]) -> Dict[str, Any]:
    """What a run must put back: settings, specs, keys, identities, data, daemons."""
    def admin(*args: str) -> Any:
        return json.loads(c.tool('radosgw-admin', '--', *args).stdout)
    keys = json.loads(c.ceph('config-key', 'ls').stdout)
    return {
        'config': c.ceph_json('config', 'dump'),
        'specs': c.ceph('orch', 'ls', '--export').stdout,
        # What the module keeps on purpose (results, closed journals, the last settings
        # apply, generated certificates: see helpers.KEPT_PREFIXES) and other modules'
        # own state are left out; the config itself is compared above.
        'keys': sorted(k for k in keys if not any(r in k for r in run_ids)
                       and not kept_on_purpose(k)
                       and (k.startswith('mgr/rgwbench/') or not k.startswith('mgr/'))),
        # cephadm's own certificate store (Tentacle), where the specs' certificates go;
        # a certificate removed from it leaves its store object empty ('{}').
        'certificates': cert_store(c, keys),
        'auth': sorted((e['entity'], json.dumps(e['caps'], sort_keys=True))
                       for e in c.ceph_json('auth', 'ls')['auth_dump']),
        'users': sorted(admin('user', 'list')),
        'buckets': sorted(admin('bucket', 'list')),
        'pools': sorted(p['pool_name'] for p in c.ceph_json('osd', 'pool', 'ls', 'detail')),
        'containers': sorted((d['daemon_type'], d['daemon_id'])
                             for d in c.ceph_json('orch', 'ps')),
    }


def test_a_quick_run_with_agents_in_containers_puts_everything_back(
        cephadm: Cluster) -> None:
    # A run refuses to start while PGs are not active+clean: a mgr that took over (the
    # module's install redeploys the mgrs) knows none of them until the OSDs report.
    unclean = wait_pgs_clean(cephadm, timeout=300)
    assert unclean is None, unclean
    before = snapshot(cephadm, [])
    store_credentials(cephadm)
    fsid = cephadm.ceph('fsid').stdout.strip()
    # cephadm names a custom container's: ceph-<fsid>-container-<service id>-<host>...
    agents: Dict[str, str] = {}

    def spot_agents() -> None:
        for line in _podman(['ps', '--format', '{{.Names}} {{.ImageID}}']).splitlines():
            # a container being made or removed may show no image yet
            found = line.split()
            if len(found) == 2 and found[0].startswith('ceph-%s-container-' % fsid):
                agents[found[0]] = found[1]
    try:
        run_id = cephadm.ceph('rgwbench', 'run', '--profile', 'quick', *FAST,
                              *SMALL_LOAD_ARGS, '--yes-i-really-mean-it').stdout.strip()
        record = wait_run(cephadm, run_id, meanwhile=spot_agents, every_s=1)
    finally:
        cephadm.ceph('rgwbench', 'credentials', 'rm', check=False)
    assert record['state'] == 'complete', record.get('error')
    for variant in record['variants']:
        assert variant['error'] is None, variant
        for workload in variant['workloads']:
            assert workload['ops'] > 0 and workload['errors'] == 0, workload
    # The agents were cephadm custom containers of the cluster's own image.
    image = cephadm.ceph('config', 'get', 'mgr', 'container_image').stdout.strip()
    image_id = _podman(['image', 'inspect', '--format', '{{.Id}}', image]).strip()
    # podman ps shows an image id's first 12 digits
    assert agents and all(image_id.startswith(a) for a in agents.values()), (agents, image)
    assert_as_before(cephadm, before, [run_id])


def test_osd_restarts_on_an_unmanaged_osd_service_are_refused_before_any_change(
        cephadm: Cluster) -> None:
    """cephadm accepts `orch daemon restart` for an unmanaged service's daemons and
    never does it: msgr2 secure mode is refused, not left waiting."""
    before = snapshot(cephadm, [])
    # Tentacle's `daemon add osd` names the service osd.default, Pacific's osd; Pacific
    # has no `orch set-unmanaged`: the exported spec is applied with the flag.
    spec = cephadm.ceph_json('orch', 'ls', '--service_type', 'osd', '--export')[0]
    service = spec['service_name']
    applied = cephadm.ceph_input(json.dumps(dict(spec, unmanaged=True)), 'orch', 'apply')
    assert applied.returncode == 0, applied.stderr
    try:
        refused = cephadm.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on',
                               '--yes-i-really-mean-it', check=False)
        assert refused.returncode == 16, refused  # EBUSY
        assert refused.stderr.strip().splitlines() == [
            'Error EBUSY: refusing to change the cluster: these settings restart every OSD, '
            'which cannot be done now: cephadm restarts no daemon of an unmanaged service '
            '(%s); make it managed (its spec applied without unmanaged, where it adds no '
            'OSD you do not want) or leave out the settings that restart OSDs' % service
        ], refused.stderr
        assert cephadm.ceph_json('rgwbench', 'status')['settings_in_place'] is None
    finally:
        applied = cephadm.ceph_input(json.dumps(spec), 'orch', 'apply')
        assert applied.returncode == 0, applied.stderr
    assert_as_before(cephadm, before, [])


def container_host_pids(c: Cluster, fsid: str, daemon_type: str,
                        program: str) -> Dict[str, List[int]]:
    """Each daemon of a type: the host pids of its program in its container, as podman
    sees it (HAProxy runs a master and a worker)."""
    found: Dict[str, List[int]] = {}
    for daemon in c.ceph_json('orch', 'ps', '--daemon_type', daemon_type):
        container = 'ceph-%s-%s-%s' % (fsid, daemon_type, daemon['daemon_id'].replace('.', '-'))
        for line in _podman(['top', container, 'hpid', 'comm']).splitlines()[1:]:
            pid, comm = line.split(None, 1)
            if comm.strip() == program:
                found.setdefault('%s.%s' % (daemon_type, daemon['daemon_id']), []).append(
                    int(pid))
    return found


# /proc counts CPU in ticks of 10 ms, and each end of a window is read to a tick or so:
# a daemon the load used for fewer ticks than this cannot be compared within 20 %.
MEASURABLE_TICKS = 20


def assert_agrees_with_proc(per_daemon: List[Dict[str, Any]], watch: Watch,
                            start: float) -> None:
    """Each daemon's CPU and RSS in a load's result is what the host's /proc said of its
    processes over the same window, within 20 %."""
    assert sorted(d['daemon'] for d in per_daemon) == sorted(watch.pids), per_daemon
    for daemon in per_daemon:
        seen = watch.cores(daemon['daemon'], start, start + DURATION_S)
        assert seen * CLK_TCK * DURATION_S >= MEASURABLE_TICKS, (
            '%s used %.4f cores by /proc over the window: the load through it did too '
            'little to compare' % (daemon['daemon'], seen))
        assert daemon['rss_mib'] > 0, daemon
        resident = watch.rss_mib(daemon['daemon'], start, start + DURATION_S)
        print('%s: %.4f cores, %.1f MiB; /proc: %.4f cores, %.1f MiB' % (
            daemon['daemon'], daemon['cpu_cores'], daemon['rss_mib'], seen, resident))
        assert daemon['cpu_cores'] == pytest.approx(seen, rel=0.2), (daemon, seen)
        assert daemon['rss_mib'] == pytest.approx(resident, rel=0.2), (daemon, resident)


def watched_load(c: Cluster, watch: Watch, *endpoint: str, concurrency: int = 8) -> Any:
    """A short PUT load while `watch` reads /proc; its record."""
    store_credentials(c)
    watch.start()
    try:
        load_id = c.ceph('rgwbench', 'load', '--op', 'put', '--size', '4KiB',
                         '--concurrency', str(concurrency), '--duration', str(DURATION_S),
                         '--warmup', str(WARMUP_S), *endpoint).stdout.strip()
        record = wait_load(c, load_id, timeout=600)
    finally:
        watch.done.set()
        watch.join()
        c.ceph('rgwbench', 'credentials', 'rm')
    assert record['state'] == 'complete', record['error']
    result = record['result']
    assert result['ops'] > 0 and result['errors'] == 0, result
    return record


def test_each_rgw_containers_cpu_and_rss_agree_with_the_hosts_proc(cephadm: Cluster) -> None:
    """The samplers find RGW in its container by cephadm's names; the CPU and RSS a load
    reports for it are what /proc says of that process over the same window."""
    rgws = container_host_pids(cephadm, cephadm.ceph('fsid').stdout.strip(), 'rgw', 'radosgw')
    assert rgws, 'no radosgw process in the RGW containers'
    watch = Watch(rgws)
    result = watched_load(cephadm, watch)['result']
    assert_agrees_with_proc(result['rgw']['per_daemon'], watch, result['start_at'] + WARMUP_S)


def test_haproxy_containers_cpu_and_rss_agree_with_the_hosts_proc(cephadm: Cluster) -> None:
    """A load through a keepalived ingress (plain HTTP at the VIP): the HAProxy daemons'
    CPU and RSS, found in cephadm's containers, are what /proc says of their processes,
    and so are RGW's behind them; then everything is put back."""
    # Settings are refused while PGs are not active+clean (a mgr that just took over
    # knows none of them until the OSDs report), as for a run.
    unclean = wait_pgs_clean(cephadm, timeout=300)
    assert unclean is None, unclean
    fsid = cephadm.ceph('fsid').stdout.strip()
    before = snapshot(cephadm, [])
    loads: List[str] = []  # kept on purpose: a load's record stays until removed
    with ingress_at_vip(cephadm) as frontend:
        cephadm.ceph('rgwbench', 'settings', 'apply', 'tls@ingress=http',
                     '--yes-i-really-mean-it')
        shown = wait_settings(cephadm, ['applied'], 900)
        url = 'http://%s:%d' % (VIP, frontend)
        assert shown['client']['endpoint'] == url, shown['client']
        haproxies = container_host_pids(cephadm, fsid, 'haproxy', 'haproxy')
        assert haproxies, 'no haproxy process in the ingress containers'
        rgws = container_host_pids(cephadm, fsid, 'rgw', 'radosgw')
        watch = Watch({**haproxies, **rgws})
        # HAProxy only relays: more requests in flight than for RGW alone give it enough
        # CPU to measure.
        record = watched_load(cephadm, watch, '--endpoint', url, concurrency=32)
        loads.append(record['load_id'])
        assert record['targets'] == [url], record['targets']
        result = record['result']
        start = result['start_at'] + WARMUP_S
        per_daemon = result['haproxy']['per_daemon'] + result['rgw']['per_daemon']
        assert_agrees_with_proc(per_daemon, watch, start)
        cephadm.ceph('rgwbench', 'settings', 'revert')
        wait_settings(cephadm, ['reverted'], 900)
    assert_as_before(cephadm, before, loads)
    assert VIP not in bridge_addresses(), 'the VIP stayed on the bridge'


@contextlib.contextmanager
def ingress_at_vip(c: Cluster) -> Iterator[int]:
    """The module's ingress options set to the test's VIP and two free ports (the
    frontend's given); afterwards whatever the test left in place is put back and the
    options removed."""
    frontend, monitor = free_ports(HOST_ADDR, 2)
    for option, value in zip(OPTIONS, ('%s/24' % VIP, str(frontend), str(monitor))):
        c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/%s' % option, value)
    try:
        yield frontend
    finally:
        settings_put_back(c)
        for option, default in zip(OPTIONS, ('', '0', '0')):
            c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/%s' % option, default)
            c.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/%s' % option)


def settings_put_back(c: Cluster) -> None:
    """Whatever a failed test left in place, put back: the module has nothing in place
    and is putting nothing back (a failed apply puts itself back)."""
    shown = c.ceph('rgwbench', 'settings', 'show', '-f', 'json', check=False)
    if shown.returncode == 0 and json.loads(shown.stdout)['state'] in ('applying', 'applied'):
        wait_settings(c, ['applied', 'failed'], 900)
        c.ceph('rgwbench', 'settings', 'revert', check=False)
    wait_for('nothing in place', lambda: c.ceph_json('rgwbench', 'status')[
        'settings_in_place'] is None, timeout=900)


def bridge_addresses() -> str:
    return subprocess.run(['ip', '-o', 'addr', 'show', 'dev', BRIDGE], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout


def test_tls_at_rgw_and_at_a_keepalived_ingress_then_everything_put_back(
        cephadm: Cluster, tmp_path: Any) -> None:
    """The RGW spec gets its certificate and an ingress is deployed in front of it:
    HAProxy and keepalived in containers, the VIP on the host's bridge; S3 over HTTPS
    at both; then specs, cephadm's certificate store and daemons as they were."""
    before = snapshot(cephadm, [])
    assert VIP not in bridge_addresses()
    with ingress_at_vip(cephadm) as frontend:
        cephadm.ceph('rgwbench', 'settings', 'apply', 'tls@rgw=on', 'tls@ingress=https',
                     '--yes-i-really-mean-it')
        shown = wait_settings(cephadm, ['applied'], 900)
        url = 'https://%s:%d' % (VIP, frontend)
        assert shown['client']['endpoint'] == url, shown['client']
        cert = cephadm.ceph_json('rgwbench', 'certificate', 'show')
        ca_file = ca_file_of(cert, str(tmp_path))
        assert served_certificate(url, ca_file) == cert['fingerprint_sha256']
        # RGW itself now serves TLS at its own address, with a name the CA vouches for.
        rgw_url = cephadm.s3()['url'].replace('http://', 'https://')
        served_certificate(rgw_url, ca_file)
        ingress = cephadm.ceph_json('orch', 'ps', '--service_name', 'ingress.rgw.default')
        running = {d['daemon_type']: d['status_desc'] for d in ingress}
        assert running == {'haproxy': 'running', 'keepalived': 'running'}, running
        assert VIP in bridge_addresses(), 'keepalived did not raise the VIP'
        s3_round_trip(cephadm, url, ca_file)
        s3_round_trip(cephadm, rgw_url, ca_file)
        cephadm.ceph('rgwbench', 'settings', 'revert')
        wait_settings(cephadm, ['reverted'], 900)
    assert_as_before(cephadm, before, [])
    assert VIP not in bridge_addresses(), 'the VIP stayed on the bridge'
    s3_round_trip(cephadm, cephadm.s3()['url'], None)


def osd_containers(fsid: str) -> Dict[str, str]:
    """Each OSD's container id: a restart through cephadm's unit makes a new container."""
    found = {}
    for line in _podman(['ps', '--format', '{{.Names}} {{.ID}}']).splitlines():
        name, _, container = line.partition(' ')
        if name.startswith('ceph-%s-osd-' % fsid):
            found[name.rsplit('-', 1)[1]] = container
    return found


def test_msgr2_secure_mode_restarts_each_osd_through_cephadm_and_back(
        cephadm: Cluster) -> None:
    fsid = cephadm.ceph('fsid').stdout.strip()
    before = snapshot(cephadm, [])
    first = osd_containers(fsid)
    assert sorted(first) == ['0', '1'], first
    try:
        cephadm.ceph('rgwbench', 'settings', 'apply', 'msgr2-secure=on',
                     '--yes-i-really-mean-it')
        wait_settings(cephadm, ['applied'], 900)
        applied = osd_containers(fsid)
        assert sorted(applied) == sorted(first) and all(
            applied[n] != first[n] for n in first), (first, applied)
        for osd in first:
            for option in ('ms_cluster_mode', 'ms_service_mode'):
                running = cephadm.ceph('config', 'show', 'osd.' + osd, option).stdout.strip()
                assert running == 'secure', (osd, option, running)
        cephadm.ceph('rgwbench', 'settings', 'revert')
        wait_settings(cephadm, ['reverted'], 900)
    finally:
        settings_put_back(cephadm)
    reverted = osd_containers(fsid)
    assert all(reverted[n] != applied[n] for n in first), (applied, reverted)
    for osd in first:
        running = cephadm.ceph('config', 'show', 'osd.' + osd, 'ms_cluster_mode').stdout.strip()
        assert running != 'secure', (osd, running)
    unclean = wait_pgs_clean(cephadm, timeout=300)
    assert unclean is None, unclean
    assert_as_before(cephadm, before, [])


def test_rgw_cpus_limits_each_rgw_container_through_its_spec_and_back(
        cephadm: Cluster) -> None:
    # The setting is refused while PGs peer (after the TLS test's RGW redeploys, alone).
    unclean = wait_pgs_clean(cephadm, timeout=300)
    assert unclean is None, unclean
    fsid = cephadm.ceph('fsid').stdout.strip()
    before = snapshot(cephadm, [])

    def nano_cpus() -> List[int]:
        found = []
        for daemon in cephadm.ceph_json('orch', 'ps', '--daemon_type', 'rgw'):
            container = 'ceph-%s-rgw-%s' % (fsid, daemon['daemon_id'].replace('.', '-'))
            found.append(int(_podman(['inspect', '--format', '{{.HostConfig.NanoCpus}}',
                                      container]).strip() or -1))
        return found
    assert nano_cpus() == [0]
    try:
        cephadm.ceph('rgwbench', 'settings', 'apply', 'rgw-cpus=1', '--yes-i-really-mean-it')
        wait_settings(cephadm, ['applied'], 900)
        spec = cephadm.ceph_json('orch', 'ls', '--service_name', 'rgw.default', '--export')[0]
        assert '--cpus=1' in spec['extra_container_args'], spec
        # cephadm redeployed the RGW with podman's --cpus: a CFS quota of one core
        assert nano_cpus() == [10 ** 9]
        cephadm.ceph('rgwbench', 'settings', 'revert')
        wait_settings(cephadm, ['reverted'], 900)
    finally:
        settings_put_back(cephadm)
    assert nano_cpus() == [0]
    assert_as_before(cephadm, before, [])


def readable_by_rgw(c: Cluster, paths: List[str]) -> None:
    """The files made the image's ceph user's (167 upstream, 64045 in Debian's build), as
    an operator must make them readable by RGW in its container."""
    fsid = c.ceph('fsid').stdout.strip()
    rgw = 'ceph-%s-rgw-%s' % (fsid, c.ceph_json('orch', 'ps', '--daemon_type', 'rgw')[0][
        'daemon_id'].replace('.', '-'))
    uid, gid = _podman(['exec', rgw, 'stat', '-c', '%u %g', '/var/lib/ceph']).split()
    for path in paths:
        os.chown(path, int(uid), int(gid))


@contextlib.contextmanager
def sse_options(c: Cluster, options: Dict[str, str]) -> Iterator[None]:
    """The module's SSE options and the S3 credentials for a test; afterwards whatever it
    applied is put back and the options and credentials are removed."""
    store_credentials(c)
    for option, value in options.items():
        c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/' + option, value)
    try:
        yield
    finally:
        settings_put_back(c)
        for option in options:
            c.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/' + option)
        c.ceph('rgwbench', 'credentials', 'rm')


def applied_mounts(c: Cluster, sse: str) -> List[str]:
    """`settings apply sse=...` done; the mounts the RGW spec has then."""
    c.ceph('rgwbench', 'settings', 'apply', 'sse=' + sse, '--yes-i-really-mean-it')
    shown = wait_settings(c, ['applied'], 900)
    assert shown['state'] == 'applied', shown
    spec = c.ceph_json('orch', 'ls', '--service_name', 'rgw.default', '--export')[0]
    return [a for a in spec.get('extra_container_args') or [] if a.startswith('--volume')]


def assert_as_before(c: Cluster, before: Dict[str, Any], run_ids: List[str]) -> None:
    c.wait_rgw_registered()
    after = snapshot(c, run_ids)
    for part in before:
        assert after[part] == before[part], part


def test_kms_kmip_mounts_the_certificates_into_rgw_and_puts_everything_back(
        cephadm: Cluster) -> None:
    """SSE-KMS with the cluster's KMIP server: the CA, RGW's certificate and key are
    mounted into RGW's container by the module's RGW spec; the apply's check writes and
    reads an SSE-KMS object through RGW; then everything is as before."""
    info = json.loads(kmip(cephadm.dir, 'start').stdout)
    key_name = new_prefix('kmip')
    kmip(cephadm.dir, 'create-key', key_name)
    files = [info['ca'], info['client_cert'], info['client_key']]
    readable_by_rgw(cephadm, files)
    before = snapshot(cephadm, [])
    options = {'sse_kmip_addr': info['addr'], 'sse_kmip_ca_path': info['ca'],
               'sse_kmip_client_cert': info['client_cert'],
               'sse_kmip_client_key': info['client_key'], 'sse_kmip_key_id': key_name}
    try:
        with sse_options(cephadm, options):
            assert applied_mounts(cephadm, 'kms-kmip') == [
                '--volume=%s:%s:ro' % (f, f) for f in files]
            cephadm.ceph('rgwbench', 'settings', 'revert')
            wait_settings(cephadm, ['reverted'], 900)
    finally:
        kmip(cephadm.dir, 'stop', check=False)
    assert_as_before(cephadm, before, [])


# SSE-S3 is Quincy's (17.2.4) on: Pacific's RGW encrypts through Vault with SSE-KMS.
VAULT_SSE = 'kms-vault' if RELEASE == 'pacific' else 'sse-s3'


def test_sse_through_openbao_mounts_the_token_file_into_rgw_and_puts_everything_back(
        cephadm: Cluster) -> None:
    """SSE through Vault's transit engine (OpenBao on the host; SSE-S3, or SSE-KMS on
    Pacific): RGW's container sees the token file only because the module mounts it
    through the RGW spec; RGW encrypts with a key in OpenBao and reads the object back;
    then the spec, options and daemons are as before."""
    info = json.loads(openbao(cephadm.dir, 'start').stdout)
    token_file = info['token_file']
    readable_by_rgw(cephadm, [token_file])
    before = snapshot(cephadm, [])
    options = {'sse_vault_addr': info['addr'], 'sse_vault_token_file': token_file}
    if VAULT_SSE == 'kms-vault':
        options['sse_vault_key_id'] = new_prefix('vault')
        openbao(cephadm.dir, 'create-key', options['sse_vault_key_id'])
    try:
        with sse_options(cephadm, options):
            keys_before = json.loads(openbao(cephadm.dir, 'keys').stdout)
            plan = cephadm.ceph('rgwbench', 'settings', 'plan', 'sse=' + VAULT_SSE).stdout
            assert 'mounting %s read-only' % token_file in plan, plan
            assert 'uid 167' in plan, plan
            assert applied_mounts(cephadm, VAULT_SSE) == [
                '--volume=%s:%s:ro' % (token_file, token_file)]
            vault_round_trip(cephadm, keys_before, options.get('sse_vault_key_id'))
            cephadm.ceph('rgwbench', 'settings', 'revert')
            wait_settings(cephadm, ['reverted'], 900)
    finally:
        openbao(cephadm.dir, 'stop', check=False)
    assert_as_before(cephadm, before, [])


def vault_round_trip(c: Cluster, keys_before: List[str], key_id: Optional[str]) -> None:
    """An object written encrypted through RGW reads back. With SSE-S3 RGW made its
    bucket's key in OpenBao; with SSE-KMS it used the key named and made none."""
    client = s3_client(c)
    bucket = new_prefix('sse-vault')
    plaintext = b'rgwbench sse through vault on cephadm ' * 1000
    asked = {'ServerSideEncryption': 'AES256'} if key_id is None else {
        'ServerSideEncryption': 'aws:kms', 'SSEKMSKeyId': key_id}
    client.create_bucket(Bucket=bucket)
    try:
        written = client.put_object(Bucket=bucket, Key='encrypted', Body=plaintext, **asked)
        assert written['ServerSideEncryption'] == asked['ServerSideEncryption'], written
        assert client.get_object(Bucket=bucket, Key='encrypted')['Body'].read() == plaintext
        made = set(json.loads(openbao(c.dir, 'keys').stdout)) - set(keys_before)
        if key_id is None:
            assert made, 'RGW made no key in OpenBao'
        else:
            assert not made, made  # SSE-KMS uses the key named, it makes none
    finally:
        client.delete_object(Bucket=bucket, Key='encrypted')
        client.delete_bucket(Bucket=bucket)


FAILOVER_PROFILE: Dict[str, Any] = {
    'name': 'cephadm-failover', 'baseline': 'as-is',
    'variants': [{'name': 'as-is', 'settings': {}},
                 {'name': 'tls-rgw', 'settings': {'tls@rgw': True}}],
    'workloads': [{'name': 'put-4KiB', 'op': 'put', 'size': '4KiB', 'duration': 20,
                   'warmup': 1, 'concurrency': 2, 'rate': 20}]}


def wait_for_workload(c: Cluster, variant: str) -> None:
    """Until the active run's workload of that variant runs."""
    deadline = time.monotonic() + 900
    while True:
        active = c.ceph_json('rgwbench', 'status')['active_run']
        current = (active or {}).get('current') or {}
        if current.get('workload') and current.get('variant') == variant:
            return
        assert active is not None and time.monotonic() < deadline, active
        time.sleep(1)


def start_tls_run(c: Cluster) -> Tuple[Dict[str, Any], str]:
    """The snapshot before, and the run of FAILOVER_PROFILE started with the test user."""
    # A mgr cephadm redeployed a moment ago knows no PG yet (a run refuses to start).
    unclean = wait_pgs_clean(c, timeout=300)
    assert unclean is None, unclean
    before = snapshot(c, [])
    store_credentials(c)
    proc = c.ceph_input(json.dumps(FAILOVER_PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    return before, c.ceph('rgwbench', 'run', '--profile', FAILOVER_PROFILE['name'],
                          '--yes-i-really-mean-it').stdout.strip()


def test_a_failover_mid_run_puts_the_rgw_spec_and_its_certificate_back(
        cephadm: Cluster) -> None:
    """`ceph mgr fail` while TLS at RGW (an RGW spec cephadm redeploys, a certificate
    in its store) is in place: the standby, a cephadm mgr container that mounts the
    module too, ends the run and puts the spec back."""
    before, run_id = start_tls_run(cephadm)
    try:
        wait_for_workload(cephadm, 'tls-rgw')
        rgw_spec = cephadm.ceph_json('orch', 'ls', '--service_type', 'rgw', '--export')[0]
        assert rgw_spec['spec'].get('ssl') is True, rgw_spec
        failed = cephadm.fail_over_mgr()
        record = wait_run(cephadm, run_id, timeout=900)
        assert record['state'] == 'failed' and 'mgr restarted' in record['error'], record
        assert cephadm.ceph_json('mgr', 'stat')['active_name'] != failed
        deadline = time.monotonic() + 600
        while any(k.endswith('rgwbench/journal/active')
                  for k in json.loads(cephadm.ceph('config-key', 'ls').stdout)):
            assert time.monotonic() < deadline, 'the journal of the run is still open'
            time.sleep(2)
    finally:
        cephadm.ceph('rgwbench', 'profile', 'rm', FAILOVER_PROFILE['name'], check=False)
        cephadm.ceph('rgwbench', 'credentials', 'rm', check=False)
    assert_as_before(cephadm, before, [run_id])


def test_an_rgw_killed_mid_workload_is_started_again_by_its_unit_and_all_is_put_back(
        cephadm: Cluster) -> None:
    """kill -9 of radosgw in its container while the TLS variant's workload runs: its
    unit starts it again (the host's systemd; here the shim's supervisor), the run ends,
    and the spec, certificate and everything else are put back."""
    fsid = cephadm.ceph('fsid').stdout.strip()
    before, run_id = start_tls_run(cephadm)
    try:
        wait_for_workload(cephadm, 'tls-rgw')
        killed = container_host_pids(cephadm, fsid, 'rgw', 'radosgw')
        assert len(killed) == 1 and all(len(p) == 1 for p in killed.values()), killed
        for pids in killed.values():
            os.kill(pids[0], signal.SIGKILL)
        wait_for('radosgw started again by its unit', lambda: all(
            container_host_pids(cephadm, fsid, 'rgw', 'radosgw').get(name) not in (None, pids)
            for name, pids in killed.items()), timeout=300)
        record = wait_run(cephadm, run_id, timeout=900)
        assert record['state'] in ('complete', 'failed'), record
    finally:
        # A run left going would refuse the next test's (or this one's rerun's) changes.
        cephadm.ceph('rgwbench', 'abort', check=False)
        wait_run(cephadm, run_id, timeout=900)
        cephadm.ceph('rgwbench', 'profile', 'rm', FAILOVER_PROFILE['name'], check=False)
        cephadm.ceph('rgwbench', 'credentials', 'rm', check=False)
    assert_as_before(cephadm, before, [run_id])
