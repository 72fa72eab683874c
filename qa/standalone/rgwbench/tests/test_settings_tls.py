"""tls@rgw and tls@ingress on a real cluster: applied through the orchestrator, checked
from outside (the certificate, S3 with boto3), put back exactly; and refusals.

With the module options set, the ingress VIP is 127.0.0.1 and its ports free
ones (the options are removed at the end); without them, the module chooses
an unused 127.x address and free ports itself.
"""
import errno
import json
import os
import re
import socket
import struct
import urllib.request
from typing import Any, Dict, Iterator, Tuple

import pytest

from conftest import OPTIONS, Cluster, free_ports, one_line, wait_settings
from helpers import ca_file_of, make_pems, s3_round_trip, served_certificate

VIP = '127.0.0.1'


def snapshot(c: Cluster) -> Dict[str, Any]:
    """What the settings may change: the config database, the specs, the daemons' names."""
    c.wait_rgw_registered()
    return {'config': c.ceph_json('config', 'dump'),
            'specs': c.ceph_json('orch', 'ls', '--export'),
            'daemons': sorted(d['daemon_type'] + '.' + d['daemon_id']
                              for d in c.ceph_json('orch', 'ps'))}


def apply(c: Cluster, *settings: str) -> Dict[str, Any]:
    c.ceph('rgwbench', 'settings', 'apply', *settings, '--yes-i-really-mean-it')
    return wait_settings(c, ['applied'], 300)


def revert(c: Cluster) -> None:
    c.ceph('rgwbench', 'settings', 'revert')
    wait_settings(c, ['reverted'], 300)


@pytest.fixture
def ingress_options(cluster: Cluster) -> Iterator[Tuple[int, int]]:
    frontend, monitor = free_ports(VIP, 2)
    for option, value in zip(OPTIONS, ('%s/32' % VIP, str(frontend), str(monitor))):
        cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/%s' % option, value)
    yield frontend, monitor
    # Pacific's mgr keeps a removed module option's last value: back to the default first.
    for option, default in zip(OPTIONS, ('', '0', '0')):
        cluster.ceph('config', 'set', 'mgr', 'mgr/rgwbench/%s' % option, default)
        cluster.ceph('config', 'rm', 'mgr', 'mgr/rgwbench/%s' % option)


@pytest.fixture
def settled(cluster: Cluster) -> Iterator[None]:
    """Nothing in place before a test; whatever a failed test left is put back after it."""
    yield
    shown = cluster.ceph('rgwbench', 'settings', 'show', '-f', 'json', check=False)
    if shown.returncode == 0 and json.loads(shown.stdout)['state'] in ('applying', 'applied'):
        wait_settings(cluster, ['applied', 'failed'], 300)
        if cluster.ceph('rgwbench', 'settings', 'revert', check=False).returncode == 0:
            wait_settings(cluster, ['reverted', 'failed'], 300)


def certificate(c: Cluster) -> Dict[str, Any]:
    shown: Dict[str, Any] = c.ceph_json('rgwbench', 'certificate', 'show')
    assert 'PRIVATE KEY' not in json.dumps(shown)
    return shown


def haproxy_owns(port: int, address: str) -> bool:
    """Whether a process named haproxy listens on the address and port (or on every
    address at that port; loopback host: our namespace). Other clusters on this
    machine may run an ingress at the same port, on a VIP of their own."""
    inodes = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                host, _, hex_port = fields[1].rpartition(':')
                if fields[3] != '0A' or int(hex_port, 16) != port:
                    continue
                if table.endswith('tcp'):
                    bound = socket.inet_ntoa(struct.pack('<I', int(host, 16)))
                    if bound not in (address, '0.0.0.0'):
                        continue
                elif int(host, 16) != 0:
                    continue  # an IPv6 address of its own: not the VIP
                inodes.add(fields[9])
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/comm' % pid) as f:
                if f.read().strip() != 'haproxy':
                    continue
            for fd in os.listdir('/proc/%s/fd' % pid):
                link = os.readlink('/proc/%s/fd/%s' % (pid, fd))
                if link.startswith('socket:[') and link[8:-1] in inodes:
                    return True
        except OSError:
            continue
    return False


# -- applied, checked from outside, put back -------------------------------------------------
def test_tls_at_rgw(cluster: Cluster, settled: None, tmp_path: Any) -> None:
    plain = cluster.s3()['url']
    port = int(plain.rsplit(':', 1)[1])
    before = snapshot(cluster)
    shown = apply(cluster, 'tls@rgw=on')
    https = 'https://127.0.0.1:%d' % port
    assert shown['client']['endpoint'] == https and shown['client']['ca_bundle'] is True
    cert = certificate(cluster)
    assert cert['source'] == 'generated' and 'IP:127.0.0.1' in cert['sans']
    ca_file = ca_file_of(cert, str(tmp_path))
    assert served_certificate(https, ca_file) == cert['fingerprint_sha256']
    s3_round_trip(cluster, https, ca_file)
    spec = [s for s in cluster.ceph_json('orch', 'ls', '--export')
            if s['service_name'] == 'rgw.default'][0]
    assert spec['spec']['ssl'] is True and spec['spec']['rgw_frontend_port'] == port
    # nothing to do twice
    proc = cluster.ceph('rgwbench', 'settings', 'apply', 'tls@rgw=on',
                        '--yes-i-really-mean-it', check=False)
    assert proc.returncode == errno.EBUSY or proc.returncode == errno.EINVAL
    revert(cluster)
    assert snapshot(cluster) == before
    s3_round_trip(cluster, plain, None)


@pytest.mark.parametrize('mode', ['https', 'http'])
def test_tls_at_ingress(cluster: Cluster, settled: None, ingress_options: Tuple[int, int],
                        tmp_path: Any, mode: str) -> None:
    frontend, monitor = ingress_options
    before = snapshot(cluster)
    shown = apply(cluster, 'tls@ingress=%s' % mode)
    url = '%s://%s:%d' % (mode, VIP, frontend)
    assert shown['client']['endpoint'] == url
    assert shown['client']['ca_bundle'] is (mode == 'https')
    (haproxy,) = [d for d in cluster.ceph_json('orch', 'ps', '--daemon_type', 'haproxy')]
    assert haproxy['status_desc'] == 'running' and haproxy['ports'] == [frontend, monitor]
    assert haproxy_owns(frontend, VIP), 'no haproxy process listens on %d' % frontend
    ca_file = None
    if mode == 'https':
        cert = certificate(cluster)
        ca_file = ca_file_of(cert, str(tmp_path))
        assert served_certificate(url, ca_file) == cert['fingerprint_sha256']
        spec = [s for s in cluster.ceph_json('orch', 'ls', '--export')
                if s['service_type'] == 'ingress'][0]['spec']
        assert spec['ssl'] is True and 'PRIVATE KEY' in spec['ssl_key']
    s3_round_trip(cluster, url, ca_file)
    # RGW itself stays as it was behind the ingress.
    s3_round_trip(cluster, cluster.s3()['url'], None)
    revert(cluster)
    assert snapshot(cluster) == before
    assert not haproxy_owns(frontend, VIP)


def test_the_operators_certificate_is_checked_and_served(cluster: Cluster, settled: None,
                                                         tmp_path: Any) -> None:
    pems = make_pems(str(tmp_path))
    before = snapshot(cluster)
    proc = cluster.ceph_input(pems['a_cert'] + pems['b_key'],
                              'rgwbench', 'certificate', 'set')
    assert proc.returncode == errno.EINVAL
    assert 'the private key does not match the certificate (subject commonName=rgwbench-a)' \
        in one_line(proc.stderr)
    shown = cluster.ceph('rgwbench', 'certificate', 'show', '-f', 'json', check=False)
    assert shown.returncode == errno.ENOENT or json.loads(shown.stdout)['source'] == 'generated'

    # Written around the check, straight into the module's store: refused when used.
    proc = cluster.ceph_input(pems['a_cert'] + pems['b_key'],
                              'config-key', 'set', 'mgr/rgwbench/tls/certificate')
    assert proc.returncode == 0, proc.stderr
    try:
        for verb in (['plan'], ['apply', '--yes-i-really-mean-it']):
            proc = cluster.ceph('rgwbench', 'settings', *verb, 'tls@rgw=on', check=False)
            assert proc.returncode == errno.EINVAL, proc.stderr
            assert 'does not match the certificate' in one_line(proc.stderr)
    finally:
        cluster.ceph('config-key', 'rm', 'mgr/rgwbench/tls/certificate')
    assert snapshot(cluster) == before

    # A good one is what RGW then serves.
    proc = cluster.ceph_input(pems['a_cert'] + pems['a_key'], 'rgwbench', 'certificate', 'set')
    assert proc.returncode == 0, proc.stderr
    try:
        cert = certificate(cluster)
        assert cert['source'] == 'operator' and cert['subject'] == 'commonName=rgwbench-a'
        state = apply(cluster, 'tls@rgw=on')
        ca_file = ca_file_of(cert, str(tmp_path))
        assert served_certificate(state['client']['endpoint'], ca_file) == \
            cert['fingerprint_sha256']
        revert(cluster)
    finally:
        assert cluster.ceph('rgwbench', 'certificate', 'rm').stdout.strip() == \
            'certificate removed'
    assert snapshot(cluster) == before


def test_an_ingress_port_in_use_is_refused_by_the_plan(cluster: Cluster, settled: None,
                                                       ingress_options: Tuple[int, int]) -> None:
    frontend, _ = ingress_options
    before = snapshot(cluster)
    with socket.socket() as busy:
        busy.bind((VIP, frontend))
        busy.listen(1)
        for verb in (['plan'], ['apply', '--yes-i-really-mean-it']):
            proc = cluster.ceph('rgwbench', 'settings', *verb, 'tls@ingress=https',
                                check=False)
            assert proc.returncode == errno.EINVAL, proc.stderr
            assert '%s:%d is already in use; set mgr/rgwbench/ingress_frontend_port' % (
                VIP, frontend) in one_line(proc.stderr)
    assert snapshot(cluster) == before


def test_an_ingress_the_orchestrator_refuses_puts_everything_back(
        cluster: Cluster, settled: None, ingress_options: Tuple[int, int]) -> None:
    """The port is taken but not listening: the plan cannot see it, the orchestrator can.
    RGW has been switched to HTTPS by then, and is put back."""
    frontend, _ = ingress_options
    before = snapshot(cluster)
    with socket.socket() as taken:
        taken.bind((VIP, frontend))
        cluster.ceph('rgwbench', 'settings', 'apply', 'tls@rgw=on', 'tls@ingress=https',
                     '--yes-i-really-mean-it')
        shown = wait_settings(cluster, ['failed'], 300)
    assert 'already in use' in shown['error'], shown
    assert [(c['target'], c['state']) for c in shown['changes']] == [
        ('rgw/cert/rgw.default', 'undone'), ('rgw.default', 'undone'),
        ('ingress.rgw.default', 'undone')]
    assert snapshot(cluster) == before
    assert cluster.ceph_json('orch', 'ps', '--daemon_type', 'haproxy') == []
    proc = cluster.ceph('rgwbench', 'settings', 'revert', check=False)
    assert proc.returncode == errno.ENOENT and 'no settings are in place' in one_line(
        proc.stderr)


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


def test_tls_at_ingress_without_options_chooses_its_address_and_ports(
        cluster: Cluster, settled: None, tmp_path: Any) -> None:
    """No ingress option is set: the plan shows the VIP and ports it chose, the apply
    serves there, and the revert takes the ingress and its address away."""
    for option in OPTIONS:
        assert cluster.ceph('config', 'get', 'mgr', 'mgr/rgwbench/%s' % option
                            ).stdout.strip() in ('', '0')
    before = snapshot(cluster)
    plan = cluster.ceph('rgwbench', 'settings', 'plan', 'tls@ingress=https').stdout
    found = re.search(r'HAProxy at (127\.[0-9.]+)/8 on (\S+), port (\d+) \(monitor (\d+)\) '
                      r'\[chosen from the cluster', plan)
    assert found, plan
    vip, host, frontend, monitor = found.group(1), found.group(2), int(found.group(3)), \
        int(found.group(4))
    assert not vip.startswith('127.0.0.') and frontend != monitor
    assert not answers(vip, frontend) and not answers(vip, monitor)
    # `plan --profile tls` shows the same for its tls-ingress variant
    profile_plan = cluster.ceph('rgwbench', 'plan', '--profile', 'tls').stdout
    assert 'HAProxy at %s/8 on %s, port %d (monitor %d)' % (vip, host, frontend, monitor) \
        in profile_plan, profile_plan
    assert snapshot(cluster) == before  # plans change nothing

    shown = apply(cluster, 'tls@ingress=https')
    url = 'https://%s:%d' % (vip, frontend)
    assert shown['client']['endpoint'] == url and shown['client']['targets'] == [url]
    (spec,) = [s for s in cluster.ceph_json('orch', 'ls', '--export')
               if s['service_type'] == 'ingress']
    assert spec['placement'] == {'hosts': [host]}
    assert (spec['spec']['virtual_ip'], spec['spec']['frontend_port'],
            spec['spec']['monitor_port']) == ('%s/8' % vip, frontend, monitor)
    (haproxy,) = cluster.ceph_json('orch', 'ps', '--daemon_type', 'haproxy')
    assert haproxy['status_desc'] == 'running' and haproxy['ports'] == [frontend, monitor]
    assert haproxy_owns(frontend, vip) and haproxy_owns(monitor, vip)
    cert = certificate(cluster)
    assert 'IP:%s' % vip in cert['sans']
    ca_file = ca_file_of(cert, str(tmp_path))
    assert served_certificate(url, ca_file) == cert['fingerprint_sha256']
    s3_round_trip(cluster, url, ca_file)
    with urllib.request.urlopen('http://%s:%d/health' % (vip, monitor), timeout=10) as r:
        assert r.status == 200

    revert(cluster)
    assert snapshot(cluster) == before
    assert cluster.ceph_json('orch', 'ps', '--daemon_type', 'haproxy') == []
    assert not haproxy_owns(frontend, vip) and not haproxy_owns(monitor, vip)
    assert not answers(vip, frontend) and not answers(vip, monitor)


def test_certificate_commands_without_input(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'certificate', 'set', check=False)
    assert proc.returncode == errno.EINVAL and '-i <pem>' in one_line(proc.stderr)
    proc = cluster.ceph_input('not a pem', 'rgwbench', 'certificate', 'set')
    assert proc.returncode == errno.EINVAL and 'no certificate' in one_line(proc.stderr)
    assert cluster.ceph('rgwbench', 'certificate', 'rm').stdout.strip() == \
        'no certificate was set'
