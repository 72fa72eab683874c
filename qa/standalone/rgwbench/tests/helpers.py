"""The integration tests' shared steps: waiting for runs, loads and settings, what a run or
a fault may change on the cluster, S3 and the engine reached from outside, certificates.

Test files take what they share from here (and their fixtures from conftest), never from
each other.
"""
import hashlib
import importlib.util
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import boto3
from botocore.config import Config

from conftest import DATA_POOL, HERE, Cluster, rados_objects, wait_pgs_clean
from localcluster.cluster import ORCH_BACKEND
from localcluster.processes import stat_fields


# -- runs and loads ----------------------------------------------------------------------------

FAST = ['--duration', '4', '--warmup', '1']


def wait_run(c: Cluster, run_id: str, timeout: float = 900,
             meanwhile: Optional[Callable[[], None]] = None,
             every_s: float = 2) -> Dict[str, Any]:
    """The run's record once it has ended and the module has let it go; `meanwhile` is
    called every `every_s` until then.

    An aborted or failed run's record says so before the module has put everything
    back: until then `status` still names it, and another run is refused (EBUSY)."""
    deadline = time.monotonic() + timeout
    while True:
        record: Optional[Dict[str, Any]] = c.try_ceph_json('rgwbench', 'results', 'show',
                                                           run_id)
        if record is not None and record['state'] != 'running':
            shown = c.try_ceph_json('rgwbench', 'status')
            if shown is not None and (shown['active_run'] or {}).get('run_id') != run_id:
                return record
        assert time.monotonic() < deadline, 'run %s still running' % run_id
        if meanwhile is not None:
            meanwhile()
        time.sleep(every_s)


def run_state(c: Cluster, run_id: str) -> Optional[str]:
    record = c.try_ceph_json('rgwbench', 'results', 'show', run_id)
    return None if record is None else str(record['state'])


def wait_load(cluster: Cluster, load_id: str, timeout: float = 180) -> Dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        record: Dict[str, Any] = cluster.ceph_json('rgwbench', 'load', 'show', load_id)
        if record['state'] != 'running':
            return record
        assert time.monotonic() < deadline, 'load %s still running' % load_id
        time.sleep(1)


def wait_idle(c: Cluster, timeout: float = 600) -> None:
    """Until the module says nothing is in progress, in place or left to remove."""
    deadline = time.monotonic() + timeout
    while True:
        shown = c.try_ceph_json('rgwbench', 'status')
        if shown is not None and not shown['run_in_progress'] and \
                shown['active_run'] is None and shown['active_load'] is None and \
                shown['settings_in_place'] is None and not shown.get('leftovers'):
            return
        assert time.monotonic() < deadline, 'the module is still busy: %s' % shown
        time.sleep(2)


def agent_folders(cluster: Cluster) -> List[str]:
    """What a local agent and its engine unpack under the mgr's temporary folder.

    Each mgr of a local cluster has a folder of its own (TMPDIR), so the
    agents of other clusters on this machine are not counted.
    """
    found = []
    for tmp in json.loads(cluster.tool('info').stdout)['mgr_tmp'].values():
        found += [os.path.join(tmp, d) for d in os.listdir(tmp)
                  if d.startswith(('rgwbench-agent-', 'rgwbench-engine-'))]
    return sorted(found)


def agent_processes(c: Cluster) -> List[Tuple[int, str]]:
    """(pid, cwd) of the processes working in an agent folder of this cluster (a mgr's
    local agent, or the folder of an agent container the orchestrator started)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink('/proc/%s/cwd' % entry)
        except OSError:
            continue
        if c.dir in cwd and 'rgwbench-agent' in cwd:  # a mgr's process or a container
            found.append((int(entry), cwd))
    return sorted(found)


# -- what a run or a fault may change, and waiting until it is back ----------------------------

def snapshot(c: Cluster) -> Dict[str, Any]:
    return {'config': c.ceph_json('config', 'dump'),
            'specs': c.ceph_json('orch', 'ls', '--export'),
            'daemons': sorted((d['daemon_type'], d['daemon_id'])
                              for d in c.ceph_json('orch', 'ps'))}


def settings_snapshot(c: Cluster) -> Dict[str, Any]:
    """What a setting may change: the config database, the specs, the daemons."""
    daemons = sorted((d['daemon_type'], d['daemon_id'], d.get('status_desc'))
                     for d in c.ceph_json('orch', 'ps'))
    return {'config': c.ceph_json('config', 'dump'),
            'specs': c.ceph_json('orch', 'ls', '--export'),
            'daemons': daemons,
            'osd_modes': running_modes(c)}


def running_modes(c: Cluster) -> Dict[str, str]:
    modes = {}
    for osd in c.ceph_json('osd', 'ls'):
        for option in ('ms_cluster_mode', 'ms_service_mode'):
            modes['osd.%d/%s' % (osd, option)] = c.ceph(
                'config', 'show', 'osd.%d' % osd, option).stdout.strip()
    return modes


def wait_settled(c: Cluster, before: Dict[str, Any], timeout: float = 180) -> None:
    """Until the cluster is as it was (RGW back in the service map, daemons running)."""
    c.wait_rgw_registered()
    deadline = time.monotonic() + timeout
    while snapshot(c)['daemons'] != before['daemons'] and time.monotonic() < deadline:
        time.sleep(2)


def wait_clean(c: Cluster, timeout: float = 180) -> None:
    stuck = wait_pgs_clean(c, timeout)
    if stuck is not None:
        raise AssertionError('PGs %s after %.0f s:\n%s' % (
            stuck, timeout, c.unclean_pgs_report()))


# The options the variant changes, as the daemons that run with them report them.
TOUCHED = ('osd/ms_cluster_mode', 'osd/ms_service_mode', 'rgw/ms_client_mode',
           'rgw/rgw_thread_pool_size', 'rgw/rgw_frontends')


# What the module keeps in the config-key store on purpose after a run, left
# out of the comparison:
#   result/<run>/..., result_index/<run>  the run's result, kept until `results rm`;
#   journal/history/<run>                 the summary of a closed journal (the last 20);
#   panel/generated/<mgr>                 the panel's self-signed certificate, made the
#                                         first time a mgr serves the panel (a failover
#                                         can make a standby serve it for the first time).
#   tls/generated                         the self-signed certificate of the TLS settings,
#                                         stored the first time one is applied and used
#                                         by every run after (a plan does not store it).
#   settings/state                        what the last `settings apply` did, shown by
#                                         `settings show` until the next one.
# And outside the module: config-history/ (the monitors' log of every `config set`,
# which grows by design; the config itself is compared as `config dump` and as the
# `config/` keys), mgr/progress/ (the progress module keeps completed events), and
# the test orchestrator's daemon records (mgr/<backend>/daemon/), whose start times
# change with every restart: what they describe is compared as `orch ps`; and
# mgr/devicehealth/ (its last scrape's time, which it writes again after a failover).
KEPT_PREFIXES = tuple('mgr/rgwbench/' + p for p in (
    'result/', 'result_index/', 'journal/history/', 'panel/generated/', 'tls/generated',
    'step_times',
    'settings/state')) + (
    'config-history/', 'mgr/progress/', 'mgr/%s/daemon/' % ORCH_BACKEND, 'mgr/devicehealth/')


def kept_on_purpose(key: str) -> bool:
    return key.startswith(KEPT_PREFIXES)


def config_keys(c: Cluster) -> Dict[str, str]:
    dump: Dict[str, str] = json.loads(c.ceph('config-key', 'dump').stdout)
    return {k: v for k, v in dump.items() if not kept_on_purpose(k)}


def fault_snapshot(c: Cluster) -> Dict[str, Any]:
    """Everything a run may change and must put back."""
    snap = snapshot(c)  # config dump, specs, daemons
    snap['daemons'] = sorted((d['daemon_type'], d['daemon_id'], d.get('status_desc'))
                             for d in c.ceph_json('orch', 'ps'))
    running = {}
    # One `config show-with-defaults` a daemon (by its name: an RGW's key in the service map
    # changes when it restarts).
    daemons = [('osd.%d' % osd, 'osd.%d' % osd) for osd in c.ceph_json('osd', 'ls')] + [
        ('rgw.%s' % d['name'], 'rgw.%s' % d['key'])
        for d in c.ceph_json('rgwbench', 'status')['rgw_daemons']]
    for name, who in daemons:
        shown = {o['name']: o['value'] for o in c.ceph_json('config', 'show-with-defaults', who)}
        for option in TOUCHED:
            if name.startswith(option.split('/')[0] + '.'):
                running['%s/%s' % (name, option.split('/')[1])] = shown.get(
                    option.split('/')[1])
    snap.update(
        running=running,
        users=sorted(json.loads(c.tool('radosgw-admin', '--', 'user', 'list').stdout)),
        buckets=sorted(json.loads(c.tool('radosgw-admin', '--', 'bucket', 'list').stdout)),
        config_keys=config_keys(c),
        agent_folders=agent_folders(c),
        agent_processes=agent_processes(c))
    return snap


def differences(before: Dict[str, Any], after: Dict[str, Any]) -> List[str]:
    found = []
    for part in sorted(set(before) | set(after)):
        old, new = before.get(part), after.get(part)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            for key in sorted(set(old) | set(new)):
                if old.get(key) != new.get(key):
                    # config-key values can hold keys and certificates: names only
                    shown = ((old.get(key), new.get(key)) if part != 'config_keys' else
                             ('present' if key in old else 'absent',
                              'present' if key in new else 'absent'))
                    found.append('%s %s: %r -> %r' % (part, key, *shown))
        elif isinstance(old, list) and isinstance(new, list):
            gone = [x for x in old if x not in new]
            added = [x for x in new if x not in old]
            found.append('%s: gone %s, added %s' % (part, gone, added))
        else:
            found.append('%s: %r -> %r' % (part, old, new))
    return found


def wait_unchanged(c: Cluster, before: Dict[str, Any], timeout: float = 180) -> List[str]:
    """The differences left once the cluster has had `timeout` to settle (none: equal).

    Restarted daemons take a moment to show in the service map and `orch ps`. Not
    `wait_settled`: it compares `snapshot`'s daemons, (type, id), with these, which have
    their status too, and so always waited its whole 180 s.
    """
    c.wait_rgw_registered()
    deadline = time.monotonic() + timeout
    while True:
        found = differences(before, fault_snapshot(c))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(3)


def set_module_options(c: Cluster, options: Dict[str, str]) -> None:
    """The module's options set; an empty value removes the option."""
    for option, value in options.items():
        if value:
            c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/%s' % option, value)
        else:
            # The mgr keeps a removed module option's last value until it is set again:
            # set to its default (empty) first, then removed.
            c.ceph('config', 'set', 'mgr', 'mgr/rgwbench/%s' % option, '')
            c.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/%s' % option)


# -- the cluster's S3 and tools ----------------------------------------------------------------

def buckets(cluster: Cluster) -> List[str]:
    # Asked again once: Tentacle's `radosgw-admin bucket list` once hung for half an
    # hour in CI while the cluster and the module answered everything else.
    try:
        found = cluster.tool('radosgw-admin', '--', 'bucket', 'list', timeout=180)
    except subprocess.TimeoutExpired:
        found = cluster.tool('radosgw-admin', '--', 'bucket', 'list', timeout=180)
    return json.loads(found.stdout)


def rgwbench_buckets(c: Cluster) -> List[str]:
    return [b for b in buckets(c) if b.startswith('rgwbench-')]


def users(c: Cluster) -> List[str]:
    return sorted(json.loads(c.tool('radosgw-admin', '--', 'user', 'list').stdout))


def s3_client(cluster: Cluster, url: Optional[str] = None) -> Any:
    """boto3 as the test user, at the cluster's S3 URL or at `url` (HTTPS: any certificate,
    which the TLS settings' tests check)."""
    import boto3
    from botocore.config import Config

    s3 = cluster.s3()
    config = Config(request_checksum_calculation='when_required',
                    response_checksum_validation='when_required',
                    s3={'addressing_style': 'path'}, signature_version='s3v4',
                    retries={'total_max_attempts': 1}, connect_timeout=10, read_timeout=60)
    return boto3.client('s3', endpoint_url=url or s3['url'], aws_access_key_id=s3['access_key'],
                        aws_secret_access_key=s3['secret_key'], region_name='us-east-1',
                        config=config, verify=False if url else None)


def raw_head(cluster: Cluster, bucket: str, key: str) -> bytes:
    """The bytes RADOS holds in a small object's head: its data as stored."""
    stats = json.loads(cluster.tool('radosgw-admin', '--', 'bucket', 'stats', '--bucket',
                                    bucket, timeout=120).stdout)
    name = '%s_%s' % (stats['marker'], key)
    assert name in rados_objects(cluster)
    # Into the cluster folder: a chroot's rados sees it at the same path.
    path = os.path.join(cluster.dir, 'raw-%s' % uuid.uuid4().hex[:8])
    try:
        cluster.tool('rados', '--', '-p', DATA_POOL, 'get', name, path, timeout=120)
        with open(path, 'rb') as f:
            return f.read()
    finally:
        if os.path.exists(path):
            os.unlink(path)


def osd_utilization(cluster: Cluster) -> float:
    """The fullest OSD's use of its store, 0 to 1."""
    nodes = cluster.ceph_json('osd', 'df')['nodes']
    return max(float(n['utilization']) for n in nodes) / 100


def cluster_argv(cluster: Cluster, program: str, *args: str) -> List[str]:
    info = json.loads(cluster.tool('info').stdout)
    prefix = [] if info['release'] == 'pacific' else [
        'chroot', '/var/cache/rgwbench/chroot-%s' % info['release']]
    if os.environ.get('RGWBENCH_CACHE') and prefix:
        prefix[1] = os.path.join(os.environ['RGWBENCH_CACHE'], 'chroot-' + info['release'])
    return prefix + [program, '-c', info['conf']] + list(args)


def ceph_input(c: Cluster, text: str, *args: str) -> None:
    proc = c.ceph_input(text, *args)
    assert proc.returncode == 0, proc.stderr


# -- the engine run from outside the module ----------------------------------------------------

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))


LOADGEN = os.path.join(REPO, 'src', 'pybind', 'mgr', 'rgwbench', 'loadgen')


def _engine() -> Any:
    """The engine as a package of its own name (it needs nothing but the stdlib)."""
    name = 'rgwbench_loadgen_under_test'
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(LOADGEN, '__init__.py'), submodule_search_locations=[LOADGEN])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def engine_module(sub: str) -> Any:
    """A module of the engine (`payload`, `s3`, ...), loaded from this tree."""
    _engine()
    return importlib.import_module('rgwbench_loadgen_under_test.' + sub)


def loadgen(endpoint: str, s3: Dict[str, Any], *args: str,
            timeout: float = 240) -> 'subprocess.CompletedProcess[str]':
    argv = [sys.executable, LOADGEN, '--endpoint', endpoint, '--access-key=' + s3['access_key'],
            '--secret-key=' + s3['secret_key']] + list(args)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)


def run_json(endpoint: str, s3: Dict[str, Any], *args: str) -> Dict[str, Any]:
    proc = loadgen(endpoint, s3, '--json', *args)
    assert proc.returncode == 0, 'loadgen %s failed (%d): %s' % (
        ' '.join(args), proc.returncode, proc.stderr[-2000:])
    result: Dict[str, Any] = json.loads(proc.stdout)
    return result


def new_prefix(tag: str) -> str:
    return 'lg-%s-%s' % (tag, uuid.uuid4().hex[:8])


# -- the servers' CPU read in /proc while a load runs ------------------------------------------

#: the warm-up and the measured seconds of a load whose servers' CPU is checked
WARMUP_S, DURATION_S = 2, 8


CLK_TCK = os.sysconf('SC_CLK_TCK')


def cpu_ticks(pid: int) -> Optional[int]:
    """A process's user and system CPU so far, in clock ticks; None when it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else int(fields[11]) + int(fields[12])


PAGE_KIB = os.sysconf('SC_PAGE_SIZE') // 1024


def rss_kib(pid: int) -> Optional[int]:
    """A process's resident set now, in KiB (statm's second field); None when it is gone."""
    try:
        with open('/proc/%d/statm' % pid) as f:
            return int(f.read().split()[1]) * PAGE_KIB
    except (OSError, IndexError, ValueError):
        return None


class Watch(threading.Thread):
    """(time, CPU ticks, RSS KiB) of each daemon's processes, summed, four times a
    second, while a load runs; a daemon is one pid or several (HAProxy's master and
    worker)."""

    def __init__(self, pids: Mapping[str, Union[int, Sequence[int]]]) -> None:
        super().__init__(daemon=True)
        self.pids = {name: [found] if isinstance(found, int) else list(found)
                     for name, found in pids.items()}
        self.samples: Dict[str, List[Tuple[float, int, int]]] = {name: [] for name in pids}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.25):
            for name, pids in self.pids.items():
                ticks = [cpu_ticks(pid) for pid in pids]
                rss = [rss_kib(pid) for pid in pids]
                # a sample counts only with every process of the daemon in it
                if None not in ticks and None not in rss:
                    self.samples[name].append(
                        (time.time(), sum(t or 0 for t in ticks), sum(r or 0 for r in rss)))

    def cores(self, name: str, start: float, end: float) -> float:
        """CPU cores between two times, the ticks at each read off the samples around it."""
        def at(when: float) -> float:
            series = self.samples[name]
            before = [s for s in series if s[0] <= when][-1]
            after = [s for s in series if s[0] >= when][0]
            if after[0] == before[0]:
                return float(before[1])
            share = (when - before[0]) / (after[0] - before[0])
            return before[1] + share * (after[1] - before[1])
        return (at(end) - at(start)) / CLK_TCK / (end - start)

    def rss_mib(self, name: str, start: float, end: float) -> float:
        """The mean RSS of the samples between two times, in MiB."""
        inside = [s[2] for s in self.samples[name] if start <= s[0] <= end]
        assert inside, 'no sample of %s between %s and %s' % (name, start, end)
        return sum(inside) / len(inside) / 1024.0


# -- certificates ------------------------------------------------------------------------------

def fingerprint(der: bytes) -> str:
    digest = hashlib.sha256(der).hexdigest().upper()
    return ':'.join(digest[i:i + 2] for i in range(0, len(digest), 2))


def served_certificate(url: str, ca_file: str) -> str:
    """The fingerprint of what url serves, over a handshake that verifies with ca_file."""
    host, port = url.split('://')[1].rsplit(':', 1)
    context = ssl.create_default_context(cafile=ca_file)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    return fingerprint(der)


def make_pems(folder: str) -> Dict[str, str]:
    found = {}
    for tag in ('a', 'b'):
        key, cert = os.path.join(folder, tag + '.key'), os.path.join(folder, tag + '.crt')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days',
                        '2', '-keyout', key, '-out', cert, '-subj', '/CN=rgwbench-%s' % tag,
                        '-addext', 'subjectAltName=IP:127.0.0.1'], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(cert) as c, open(key) as k:
            found[tag + '_cert'], found[tag + '_key'] = c.read(), k.read()
    return found


def s3_round_trip(c: Cluster, endpoint: str, ca_file: Optional[str]) -> None:
    s3 = c.s3()
    client = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id=s3['access_key'],
                          aws_secret_access_key=s3['secret_key'], region_name='us-east-1',
                          verify=ca_file if ca_file else False,
                          config=Config(request_checksum_calculation='when_required',
                                        response_checksum_validation='when_required',
                                        retries={'max_attempts': 2}))
    bucket = 'tls-%s' % uuid.uuid4().hex[:10]
    client.create_bucket(Bucket=bucket)
    try:
        body = os.urandom(10000)
        client.put_object(Bucket=bucket, Key='obj', Body=body)
        assert client.get_object(Bucket=bucket, Key='obj')['Body'].read() == body
        listed = client.list_objects_v2(Bucket=bucket)['Contents']
        assert [o['Key'] for o in listed] == ['obj']
        client.delete_object(Bucket=bucket, Key='obj')
    finally:
        client.delete_bucket(Bucket=bucket)


def ca_file_of(shown: Dict[str, Any], folder: str) -> str:
    path = os.path.join(folder, 'ca.pem')
    with open(path, 'w') as f:
        f.write(shown['ca_bundle'])
    return path
