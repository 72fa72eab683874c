"""`ceph rgwbench run` with no S3 credentials stored: the run's own S3 user comes and goes."""
import json
from typing import Iterator

import pytest
from conftest import SMALL_LOAD_ARGS, Cluster
from helpers import FAST, users, wait_run


@pytest.fixture
def no_credentials(two_osds: Cluster) -> Iterator[Cluster]:
    """No credentials stored while the test runs; the cluster's test user's put back after."""
    shown = two_osds.ceph_json('rgwbench', 'credentials', 'show')
    s3 = two_osds.s3()
    if shown['configured']:
        assert shown['access_key'] == s3['access_key'], 'credentials of an unknown user'
        two_osds.ceph('rgwbench', 'credentials', 'rm')
    yield two_osds
    if shown['configured']:
        proc = two_osds.ceph_input(json.dumps({'access_key': s3['access_key'],
                                               'secret_key': s3['secret_key']}),
                                   'rgwbench', 'credentials', 'set')
        assert proc.returncode == 0, proc.stderr


def test_a_run_without_credentials_leaves_the_users_as_they_were(
        no_credentials: Cluster) -> None:
    c = no_credentials
    c.wait_rgw_registered()
    before = users(c)
    plan = c.ceph_json('rgwbench', 'plan', '--profile', 'quick', *FAST)
    assert plan['s3_user']['temporary'] and plan['problems'] == [], plan
    assert 'temporary' in c.ceph('rgwbench', 'plan', '--profile', 'quick').stdout
    assert users(c) == before
    run_id = c.ceph('rgwbench', 'run', '--profile', 'quick', *FAST, *SMALL_LOAD_ARGS,
                    '--yes-i-really-mean-it').stdout.strip()
    record = wait_run(c, run_id)
    assert record['state'] == 'complete', record.get('error')
    for variant in record['variants']:
        for workload in variant['workloads']:
            assert workload['ops'] > 0 and workload['errors'] == 0, workload
    assert record['changes'] == [{'kind': 'user', 'target': 'rgwbench-%s' % run_id,
                                  'state': 'undone', 'error': None}], record['changes']
    assert users(c) == before
