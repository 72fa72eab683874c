"""`ceph rgwbench status` against what the real cluster has."""
import errno
import re
import urllib.request

from conftest import Cluster, one_line


def test_module_is_enabled(cluster: Cluster) -> None:
    modules = cluster.ceph_json('mgr', 'module', 'ls')
    assert 'rgwbench' in modules['enabled_modules']


def test_status_json_matches_the_cluster(cluster: Cluster) -> None:
    cluster.wait_rgw_registered()
    status = cluster.ceph_json('rgwbench', 'status')
    versions = cluster.ceph_json('versions')
    (running,) = versions['overall']
    assert status['ceph_version'] in running
    assert status['ceph_release'] == cluster.release
    assert re.match(r'^\d+\.\d+\.\d+$', status['module_version'])
    assert status['run_in_progress'] is False and status['active_run'] is None

    s3 = cluster.s3()
    port = int(s3['url'].rsplit(':', 1)[1])
    (daemon,) = status['rgw_daemons']
    assert [(e['scheme'], e['port']) for e in daemon['endpoints']] == [('http', port)]
    assert daemon['endpoints'][0]['url'] == s3['url']
    assert daemon['host'] == cluster.ceph_json('node', 'ls')['osd'].popitem()[0]
    # The endpoint the module reports is the one that really answers S3.
    with urllib.request.urlopen(daemon['endpoints'][0]['url'] + '/', timeout=10) as resp:
        assert resp.status == 200
        assert b'ListAllMyBucketsResult' in resp.read()


def test_status_reports_the_orchestrator_backend(cluster: Cluster) -> None:
    status = cluster.ceph_json('rgwbench', 'status')
    assert status['orchestrator'] == {'backend': 'test_orchestrator', 'available': True,
                                      'message': ''}


def test_status_without_an_orchestrator_backend(cluster: Cluster) -> None:
    # (`config rm` of the option is not seen by a running Pacific mgr.)
    cluster.ceph('orch', 'set', 'backend', '')
    try:
        status = cluster.ceph_json('rgwbench', 'status')
        assert status['orchestrator']['backend'] is None
        assert status['orchestrator']['available'] is False
        assert 'ceph orch set backend' in status['orchestrator']['message']
        # The RGW daemons come from the service map, not from the orchestrator.
        assert status['rgw_daemons'][0]['endpoints'][0]['url'] == cluster.s3()['url']
    finally:
        cluster.ceph('orch', 'set', 'backend', 'test_orchestrator')


def test_status_plain(cluster: Cluster) -> None:
    text = cluster.ceph('rgwbench', 'status').stdout
    assert text.startswith('rgwbench ')
    assert '(%s)' % cluster.release in text
    assert cluster.s3()['url'] in text


def test_status_bad_format_is_refused(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'status', '-f', 'xml', check=False)
    assert proc.returncode == errno.EINVAL
    assert "unsupported output format 'xml'" in one_line(proc.stderr)


def test_status_unknown_argument_is_refused(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'status', '--verbose-please', check=False)
    assert proc.returncode == errno.EINVAL
    assert proc.stdout == ''
