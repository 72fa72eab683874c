"""The local orchestrator backend: `ceph orch` calls that really change daemons.

Each test leaves the session cluster as it found it (the rgw.default spec of
`cluster start`, no other service).
"""
import errno
import json
import os
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Optional

import pytest
import yaml

from conftest import Cluster, answers, free_ports, one_line, wait_for
from helpers import cluster_argv

VIP = '127.0.0.77'


def refused(url: str) -> bool:
    try:
        urllib.request.urlopen(url + '/', timeout=5)
    except (urllib.error.URLError, OSError):
        return True
    return False


def peer_certificate(host: str, port: int) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection((host, port), timeout=5) as sock:
        with context.wrap_socket(sock) as tls:
            cert = tls.getpeercert(binary_form=True)
    assert cert is not None
    return cert


@pytest.fixture(scope='module')
def pki(tmp_path_factory: Any) -> Dict[str, str]:
    """A self-signed certificate for loopback and the ingress VIP, and a second one."""
    folder = tmp_path_factory.mktemp('pki')
    found = {}
    for name in ('good', 'other'):
        key, cert = str(folder / (name + '.key')), str(folder / (name + '.crt'))
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
                        '-keyout', key, '-out', cert, '-subj', '/CN=rgwbench-%s' % name,
                        '-addext', 'subjectAltName=IP:127.0.0.1,IP:%s' % VIP],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(cert) as c, open(key) as k:
            found[name + '_pem'] = c.read() + k.read()
        found[name + '_cert'] = cert
    with open(found['good_cert']) as c, open(str(folder / 'other.key')) as k:
        found['mismatched_pem'] = c.read() + k.read()
    der = ssl.PEM_cert_to_DER_cert(open(found['good_cert']).read())
    found['good_der'] = der.hex()
    return found


def orch_ps(cluster: Cluster, **filters: str) -> List[Dict[str, Any]]:
    args = ['orch', 'ps', '--refresh']
    for key, value in filters.items():
        args += ['--' + key, value]
    out = cluster.ceph(*args, '-f', 'json').stdout
    return json.loads(out) if out.strip().startswith('[') else []


def exported(cluster: Cluster) -> List[Dict[str, Any]]:
    return list(yaml.safe_load_all(cluster.ceph('orch', 'ls', '--export').stdout))


def rgw_spec(cluster: Cluster) -> Dict[str, Any]:
    (spec,) = [s for s in exported(cluster) if s['service_name'] == 'rgw.default']
    return spec


def apply(cluster: Cluster, spec: Dict[str, Any],
          check: bool = True) -> 'subprocess.CompletedProcess[str]':
    proc = subprocess.run(
        [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'cluster'),
         'ceph', '--dir', cluster.dir, '--', 'orch', 'apply', '-i', '-'],
        input=yaml.safe_dump(spec), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def rgw_pids(cluster: Cluster) -> Dict[str, int]:
    procs = {}
    for daemon in orch_ps(cluster, daemon_type='rgw'):
        name = '%s.%s' % (daemon['daemon_type'], daemon['daemon_id'])
        with open(os.path.join(cluster.dir, 'pids', name + '.pid')) as f:
            procs[name] = int(f.read().split()[0])
    return procs


@pytest.fixture
def restore_rgw(cluster: Cluster) -> Iterator[Dict[str, Any]]:
    """The original rgw.default spec; applied again after the test."""
    original = rgw_spec(cluster)
    url = cluster.s3()['url']
    yield original
    apply(cluster, original)
    wait_for('plain HTTP S3 back', lambda: answers(url))
    cluster.wait_rgw_registered()


def test_rgw_tls_through_the_orchestrator(cluster: Cluster, pki: Dict[str, str],
                                          restore_rgw: Dict[str, Any]) -> None:
    url = cluster.s3()['url']
    port = int(url.rsplit(':', 1)[1])
    assert answers(url)
    tls = dict(restore_rgw)
    tls['spec'] = dict(tls['spec'], ssl=True, rgw_frontend_ssl_certificate=pki['good_pem'])
    assert 'Scheduled rgw.default update' in apply(cluster, tls).stdout
    https = 'https://127.0.0.1:%d' % port
    wait_for('HTTPS with the spec certificate', lambda: answers(https, pki['good_cert']))
    assert peer_certificate('127.0.0.1', port).hex() == pki['good_der']
    assert refused(url), 'plain HTTP still answers'
    # What cephadm does: the frontend in the config database, the cert in config-key.
    config = cluster.ceph_json('config', 'dump')
    frontends = [c['value'] for c in config if c['name'] == 'rgw_frontends']
    assert frontends == ['beast ssl_port=%d ssl_certificate=config://rgw/cert/rgw.default '
                         'tcp_nodelay=1' % port]
    assert cluster.ceph('config-key', 'get', 'rgw/cert/rgw.default').stdout.strip() == \
        pki['good_pem'].strip()
    assert rgw_spec(cluster)['spec']['ssl'] is True

    apply(cluster, restore_rgw)
    wait_for('plain HTTP back', lambda: answers(url))
    assert refused(https)
    assert rgw_spec(cluster) == restore_rgw


def test_ingress_terminates_tls_in_front_of_plain_rgw(cluster: Cluster,
                                                      pki: Dict[str, str]) -> None:
    rgw_url = cluster.s3()['url']
    frontend, monitor = free_ports(VIP, 2)
    spec = {'service_type': 'ingress', 'service_id': 'rgw.default',
            'placement': {'count': 1},
            'spec': {'backend_service': 'rgw.default', 'virtual_ip': VIP + '/8',
                     'frontend_port': frontend, 'monitor_port': monitor,
                     'ssl': True, 'ssl_cert': pki['good_pem']}}
    apply(cluster, spec)
    try:
        ingress = 'https://%s:%d' % (VIP, frontend)
        wait_for('S3 through HAProxy over TLS', lambda: answers(ingress, pki['good_cert']))
        assert peer_certificate(VIP, frontend).hex() == pki['good_der']
        assert answers(rgw_url), 'RGW behind the ingress stays plain HTTP'
        (haproxy,) = orch_ps(cluster, daemon_type='haproxy')
        assert haproxy['status_desc'] == 'running'
        assert haproxy['ports'] == [frontend, monitor]
        (svc,) = [s for s in json.loads(cluster.ceph('orch', 'ls', '-f', 'json').stdout)
                  if s['service_name'] == 'ingress.rgw.default']
        assert svc['status']['running'] == 1
        assert svc['status']['virtual_ip'] == VIP + '/8'
        # HAProxy's own health checks see the backend as up.
        with urllib.request.urlopen('http://%s:%d/health' % (VIP, monitor), timeout=5) as r:
            assert r.status == 200
        # Requests really go through HAProxy: its forwarded-for header reaches RGW's
        # clients as a TLS session with HAProxy's certificate, checked above; and
        # stopping RGW makes the ingress fail.
        names = ['rgw.%s' % d['daemon_id'] for d in orch_ps(cluster, daemon_type='rgw')]
        for name in names:
            cluster.ceph('orch', 'daemon', 'stop', name)
        wait_for('ingress to fail without RGW', lambda: not answers(ingress, pki['good_cert']))
        assert [d['status_desc'] for d in orch_ps(cluster, daemon_type='rgw')] == \
            ['stopped'] * len(names)
        for name in names:
            cluster.ceph('orch', 'daemon', 'start', name)
        wait_for('ingress back with RGW', lambda: answers(ingress, pki['good_cert']))
        cluster.wait_rgw_registered()
    finally:
        cluster.ceph('orch', 'rm', 'ingress.rgw.default')
    wait_for('HAProxy gone', lambda: orch_ps(cluster, daemon_type='haproxy') == [])
    assert refused('http://%s:%d' % (VIP, frontend))
    assert not [s for s in exported(cluster) if s['service_type'] == 'ingress']


def test_container_service_runs_its_process(cluster: Cluster) -> None:
    hosts = [h['hostname'] for h in cluster.ceph_json('orch', 'host', 'ls')]
    spec = {'service_type': 'container', 'service_id': 'probe',
            'placement': {'hosts': hosts},
            'spec': {'image': 'quay.io/ceph/ceph:v18', 'entrypoint': 'python3',
                     'extra_entrypoint_args': ['probe.py'],
                     'envs': ['PROBE_WORD=alive'],
                     'files': {'probe.py': 'import os, time\n'
                                           'open("probe.out", "w").write('
                                           'os.environ["PROBE_WORD"] + " " + os.getcwd())\n'
                                           'time.sleep(3600)\n'}}}
    apply(cluster, spec)
    try:
        daemons = wait_for('the container daemons', lambda: [
            d for d in orch_ps(cluster, service_name='container.probe')
            if d['status_desc'] == 'running'] or None)
        assert sorted(d['hostname'] for d in daemons) == sorted(hosts)
        for daemon in daemons:
            name = 'container.%s' % daemon['daemon_id']
            folder = os.path.join(cluster.dir, 'orch', name)
            out = wait_for('the probe output', lambda: os.path.exists(
                os.path.join(folder, 'probe.out')) and open(
                os.path.join(folder, 'probe.out')).read())
            assert out == 'alive %s' % folder
            with open(os.path.join(cluster.dir, 'pids', name + '.pid')) as f:
                pid = int(f.read().split()[0])
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                assert f.read().split(b'\0')[:2] == [b'python3', b'probe.py']
    finally:
        cluster.ceph('orch', 'rm', 'container.probe')
    wait_for('the container daemons gone',
             lambda: orch_ps(cluster, service_name='container.probe') == [])


def test_osd_restart_keeps_every_object(cluster: Cluster) -> None:
    pool = 'rgwbench-restart'
    cluster.ceph('osd', 'pool', 'create', pool, '8')
    try:
        payloads = {'obj-%d' % i: os.urandom(4096 + i) for i in range(20)}
        for name, data in payloads.items():
            subprocess.run(cluster_argv(cluster, 'rados', '-p', pool, 'put', name, '-'),
                           input=data, check=True, timeout=60)
        (osd,) = [d for d in orch_ps(cluster, daemon_type='osd')][:1]
        before = osd_pid(cluster, 0)
        out = cluster.ceph('orch', 'daemon', 'restart', 'osd.0').stdout
        assert "Scheduled to restart osd.0 on host '%s'" % osd['hostname'] in out
        wait_for('osd.0 up again', lambda: osd_pid(cluster, 0) not in (None, before) and
                 cluster.ceph_json('osd', 'dump')['osds'][0]['up'] == 1, 120)
        for name, data in payloads.items():
            got = subprocess.run(cluster_argv(cluster, 'rados', '-p', pool, 'get', name, '-'),
                                 stdout=subprocess.PIPE, check=True, timeout=60).stdout
            assert got == data, name
    finally:
        cluster.ceph('osd', 'pool', 'rm', pool, pool, '--yes-i-really-really-mean-it')


def osd_pid(cluster: Cluster, osd: int) -> Optional[int]:
    try:
        with open(os.path.join(cluster.dir, 'pids', 'osd.%d.pid' % osd)) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError):
        return None
    return pid if os.path.exists('/proc/%d' % pid) else None


def test_listings_look_like_cephadm(cluster: Cluster) -> None:
    services = json.loads(cluster.ceph('orch', 'ls', '-f', 'json').stdout)
    by_name = {s['service_name']: s for s in services}
    assert {'mon', 'mgr', 'rgw.default'} <= set(by_name)
    rgw = by_name['rgw.default']
    port = int(cluster.s3()['url'].rsplit(':', 1)[1])
    assert rgw['service_type'] == 'rgw' and rgw['service_id'] == 'default'
    assert rgw['status']['running'] == rgw['status']['size'] >= 1
    assert rgw['status']['ports'] == [port]
    assert rgw['spec']['rgw_frontend_port'] == port

    text = cluster.ceph('orch', 'ls').stdout.splitlines()
    assert text[0].split() == ['NAME', 'PORTS', 'RUNNING', 'REFRESHED', 'AGE', 'PLACEMENT']
    (row,) = [line for line in text if line.startswith('rgw.default ')]
    assert '?:%d' % port in row and '1/1' in row

    ps = cluster.ceph('orch', 'ps').stdout.splitlines()
    assert ps[0].split()[:5] == ['NAME', 'HOST', 'PORTS', 'STATUS', 'REFRESHED']
    names = {line.split()[0] for line in ps[1:]}
    assert {'mon.a', 'mgr.x', 'osd.0'} <= names
    assert any(n.startswith('rgw.default.') for n in names)

    # `ls --export` gives specs that apply as they are, changing nothing.
    specs = exported(cluster)
    assert [s['service_name'] for s in specs] == sorted(s['service_name'] for s in specs)
    pids = rgw_pids(cluster)
    apply(cluster, rgw_spec(cluster))
    time.sleep(3)
    assert rgw_pids(cluster) == pids
    assert exported(cluster) == specs


@pytest.mark.parametrize('change, message', [
    ({'ssl': True}, 'rgw_frontend_ssl_certificate is empty'),
    ({'ssl': True, 'rgw_frontend_ssl_certificate': 'mismatched_pem'},
     'not a certificate with its matching private key'),
    ({'rgw_frontend_port': 'mon_port'}, 'is already in use'),
])
def test_bad_rgw_specs_change_nothing(cluster: Cluster, pki: Dict[str, str],
                                      change: Dict[str, Any], message: str) -> None:
    before_spec, before_pids = rgw_spec(cluster), rgw_pids(cluster)
    before_config = cluster.ceph_json('config', 'dump')
    bad = dict(before_spec)
    values = dict(change)
    if values.get('rgw_frontend_ssl_certificate') in pki:
        values['rgw_frontend_ssl_certificate'] = pki[values['rgw_frontend_ssl_certificate']]
    if values.get('rgw_frontend_port') == 'mon_port':
        values['rgw_frontend_port'] = json.loads(cluster.tool('info').stdout)['mon_port']
    bad['spec'] = dict(bad['spec'], **values)
    proc = apply(cluster, bad, check=False)
    assert proc.returncode == errno.EINVAL
    assert message in one_line(proc.stderr)
    time.sleep(2)
    assert rgw_spec(cluster) == before_spec
    assert rgw_pids(cluster) == before_pids
    assert cluster.ceph_json('config', 'dump') == before_config
    assert answers(cluster.s3()['url'])


def test_unknown_service_is_an_error(cluster: Cluster) -> None:
    proc = cluster.ceph('orch', 'rm', 'rgw.nothere', check=False)
    assert proc.returncode == errno.EINVAL
    assert 'Invalid service name "rgw.nothere"' in one_line(proc.stderr)
    proc = cluster.ceph('orch', 'daemon', 'restart', 'rgw.nothere.a', check=False)
    assert proc.returncode == errno.EINVAL
    assert 'Unable to find rgw.nothere.a daemon(s)' in one_line(proc.stderr)


def test_service_restart_restarts_every_daemon(cluster: Cluster) -> None:
    before = rgw_pids(cluster)
    out = cluster.ceph('orch', 'restart', 'rgw.default').stdout
    assert all("Scheduled to restart %s" % name in out for name in before)
    after = rgw_pids(cluster)
    assert set(after) == set(before)
    assert all(after[n] != before[n] for n in before)
    wait_for('S3 after the restart', lambda: answers(cluster.s3()['url']))
    cluster.wait_rgw_registered()
