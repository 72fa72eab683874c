"""RGW SSE-KMS with the `kmip` backend, against the cluster's own KMIP server.

`cluster kmip start` runs PyKMIP as a process of the cluster; the module
points RGW at it through `ceph config` at client.rgw, writes and reads
objects with boto3, and looks at what RADOS stores. The RGW options are put
back and RGW restarted before the module ends, whatever happened, and the
KMIP server is stopped. Traffic goes to 127.0.0.1 only.
"""
import json
import os
import subprocess
import uuid
from typing import Any, Dict, Iterator

import pytest

from conftest import (CLUSTER, Cluster, client_rgw_options, kmip, new_cluster_dir, one_line,
                      restart_rgw)
from helpers import raw_head, s3_client

KMIP_OPTIONS = ('rgw_crypt_s3_kms_backend', 'rgw_crypt_kmip_addr', 'rgw_crypt_kmip_ca_path',
                'rgw_crypt_kmip_client_cert', 'rgw_crypt_kmip_client_key',
                'rgw_crypt_kmip_kms_key_template', 'rgw_crypt_require_ssl')


@pytest.fixture(scope='module')
def kmip_rgw(cluster: Cluster, kmip_server: Dict[str, str]) -> Iterator[Dict[str, str]]:
    """RGW with SSE-KMS from the KMIP server, over plain HTTP; undone afterwards."""
    before = client_rgw_options(cluster, KMIP_OPTIONS)
    key_name = 'rgwbench-kmip-%s' % uuid.uuid4().hex[:8]
    uid = kmip(cluster.dir, 'create-key', key_name).stdout.strip()
    wanted = {'rgw_crypt_s3_kms_backend': 'kmip',
              'rgw_crypt_kmip_addr': kmip_server['addr'],
              'rgw_crypt_kmip_ca_path': kmip_server['ca'],
              'rgw_crypt_kmip_client_cert': kmip_server['client_cert'],
              'rgw_crypt_kmip_client_key': kmip_server['client_key'],
              'rgw_crypt_require_ssl': 'false'}
    try:
        for name, value in wanted.items():
            cluster.ceph('config', 'set', 'client.rgw', name, value)
        restart_rgw(cluster)
        yield {'key_name': key_name, 'uid': uid}
    finally:
        for name in KMIP_OPTIONS:
            if name in before:
                cluster.ceph('config', 'set', 'client.rgw', name, before[name])
            else:
                cluster.ceph('config', 'rm', 'client.rgw', name)
        restart_rgw(cluster)
        assert client_rgw_options(cluster, KMIP_OPTIONS) == before


def test_kmip_server_start_is_idempotent_and_keys_are_unique(
        cluster: Cluster, kmip_server: Dict[str, str]) -> None:
    assert kmip_server['addr'].startswith('127.0.0.1:')
    for name in ('ca', 'client_cert', 'client_key'):
        assert kmip_server[name].startswith(os.path.join(cluster.dir, 'kmip') + os.sep)
        assert os.path.isfile(kmip_server[name])
    with open(os.path.join(cluster.dir, 'pids', 'kmip.pid')) as f:
        pid = f.read().split()[0]
    assert json.loads(kmip(cluster.dir, 'start').stdout) == kmip_server
    assert json.loads(kmip(cluster.dir, 'info').stdout) == kmip_server
    with open(os.path.join(cluster.dir, 'pids', 'kmip.pid')) as f:
        assert f.read().split()[0] == pid
    # One key per name: RGW takes a name only when it is unique.
    name = 'rgwbench-once-%s' % uuid.uuid4().hex[:8]
    first = kmip(cluster.dir, 'create-key', name)
    again = kmip(cluster.dir, 'create-key', name)
    assert first.stdout.strip() and again.stdout.strip() == first.stdout.strip()
    assert 'exists' in one_line(again.stderr)
    other = kmip(cluster.dir, 'create-key', name + '-2').stdout.strip()
    assert other != first.stdout.strip()


def test_kmip_refuses_bad_input(cluster: Cluster, kmip_server: Dict[str, str],
                                tmp_path: Any) -> None:
    for args in (('create-key', 'has space'), ('create-key', '-x'), ('create-key',),
                 ('no-such-command',)):
        proc = kmip(cluster.dir, *args, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
        one_line(proc.stderr)
    proc = subprocess.run([CLUSTER, 'kmip'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.returncode == 2
    one_line(proc.stderr)
    empty = new_cluster_dir('nokmip')
    try:
        for command in ('start', 'info', 'create-key'):
            extra = ('some-key',) if command == 'create-key' else ()
            proc = kmip(empty, command, *extra, check=False)
            assert proc.returncode == 1
            assert 'no cluster in' in one_line(proc.stderr)
        assert os.listdir(empty) == []
    finally:
        os.rmdir(empty)


def test_sse_kms_with_kmip_round_trip_and_encrypted_at_rest(
        cluster: Cluster, kmip_rgw: Dict[str, str]) -> None:
    key_name = kmip_rgw['key_name']
    client = s3_client(cluster)
    bucket = 'kmip-%s' % uuid.uuid4().hex[:8]
    plaintext = (b'rgwbench kmip plaintext %s ' % uuid.uuid4().hex.encode()) * 2000
    client.create_bucket(Bucket=bucket)
    try:
        client.put_object(Bucket=bucket, Key='encrypted', Body=plaintext,
                          ServerSideEncryption='aws:kms', SSEKMSKeyId=key_name)
        got = client.get_object(Bucket=bucket, Key='encrypted')
        assert got['Body'].read() == plaintext
        assert got['ServerSideEncryption'] == 'aws:kms'
        assert got['SSEKMSKeyId'] == key_name
        head = client.head_object(Bucket=bucket, Key='encrypted')
        assert head['ContentLength'] == len(plaintext)

        # The method works: an object written without SSE is stored as sent.
        client.put_object(Bucket=bucket, Key='plain', Body=plaintext)
        assert raw_head(cluster, bucket, 'plain') == plaintext
        raw = raw_head(cluster, bucket, 'encrypted')
        assert len(raw) >= len(plaintext), len(raw)
        for piece in (plaintext, plaintext[:64], plaintext[-64:], b'rgwbench kmip plaintext'):
            assert piece not in raw

        # RGW asked the KMIP server: it located the key by its name.
        with open(os.path.join(cluster.dir, 'kmip', 'server.log')) as f:
            assert 'Processing operation: Locate' in f.read()

        # A key id the KMIP server does not have is refused, and nothing is stored.
        from botocore.exceptions import ClientError
        with pytest.raises(ClientError) as refused:
            client.put_object(Bucket=bucket, Key='unknown-key', Body=plaintext,
                              ServerSideEncryption='aws:kms',
                              SSEKMSKeyId='no-such-key-%s' % uuid.uuid4().hex[:8])
        status = refused.value.response['ResponseMetadata']['HTTPStatusCode']
        assert 400 <= status < 500, refused.value.response
        listed = client.list_objects_v2(Bucket=bucket).get('Contents', [])
        assert sorted(o['Key'] for o in listed) == ['encrypted', 'plain']
    finally:
        for o in client.list_objects_v2(Bucket=bucket).get('Contents', []):
            client.delete_object(Bucket=bucket, Key=o['Key'])
        client.delete_bucket(Bucket=bucket)
