"""`ceph rgwbench settings apply sse=...` in the real mgr: RGW encrypts what it stores,
and `settings revert` leaves `ceph config` and the orchestrator's specs exactly as before.

The module checks an SSE write itself with the S3 credentials it stores; this
test stores them (and removes them at the end: other tests expect none), then
writes and reads with boto3 and reads the stored bytes back from RADOS.
"""
import errno
import json
import time
import uuid
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from conftest import Cluster, kmip, one_line, openbao
from helpers import raw_head, s3_client, set_module_options

KMIP_OPTIONS = ('sse_kmip_addr', 'sse_kmip_ca_path', 'sse_kmip_client_cert',
                'sse_kmip_client_key', 'sse_kmip_key_id')
VAULT_OPTIONS = ('sse_vault_addr', 'sse_vault_token_file', 'sse_vault_key_id')


@pytest.fixture(scope='module')
def credentials(cluster: Cluster) -> Iterator[Dict[str, Any]]:
    had = cluster.ceph_json('rgwbench', 'credentials', 'show')['configured']
    s3 = cluster.s3()
    if not had:
        proc = cluster.ceph_input(json.dumps({'access_key': s3['access_key'],
                                              'secret_key': s3['secret_key']}),
                                  'rgwbench', 'credentials', 'set', timeout=60)
        assert proc.returncode == 0, proc.stderr
    try:
        yield s3
    finally:
        if not had:
            cluster.ceph('rgwbench', 'credentials', 'rm')


def snapshot(cluster: Cluster) -> Tuple[Any, Any]:
    return (cluster.ceph_json('config', 'dump'),
            cluster.ceph_json('orch', 'ls', '--export'))


def wait_settings(cluster: Cluster, timeout: float = 900) -> Dict[str, Any]:
    """The settings state once nothing is being applied or put back any more."""
    deadline = time.monotonic() + timeout
    while True:
        state: Dict[str, Any] = cluster.ceph_json('rgwbench', 'settings', 'show')
        # A put-back that left something ends with this progress, reverting or failed.
        left = state['progress'].startswith('not everything')
        busy = not left and (state['state'] in ('applying', 'reverting') or (
            state['state'] == 'failed' and state['progress'] != 'put back'))
        if not busy:
            return state
        assert time.monotonic() < deadline, 'settings still %s: %s' % (
            state['state'], state['progress'])
        time.sleep(2)


def apply(cluster: Cluster, *settings: str) -> Dict[str, Any]:
    cluster.ceph('rgwbench', 'settings', 'apply', *settings, '--yes-i-really-mean-it')
    return wait_settings(cluster)


def revert_and_compare(cluster: Cluster, before: Tuple[Any, Any]) -> None:
    cluster.ceph('rgwbench', 'settings', 'revert')
    state = wait_settings(cluster)
    assert state['state'] == 'reverted', state
    cluster.wait_rgw_registered()
    assert snapshot(cluster) == before


def round_trip_encrypted(cluster: Cluster, key_id: str) -> None:
    """PUT with SSE-KMS and the key id, GET it back equal; RADOS holds no plaintext."""
    client = s3_client(cluster)
    bucket = 'sse-%s' % uuid.uuid4().hex[:8]
    plaintext = (b'rgwbench sse plaintext %s ' % uuid.uuid4().hex.encode()) * 2000
    client.create_bucket(Bucket=bucket)
    try:
        client.put_object(Bucket=bucket, Key='encrypted', Body=plaintext,
                          ServerSideEncryption='aws:kms', SSEKMSKeyId=key_id)
        got = client.get_object(Bucket=bucket, Key='encrypted')
        assert got['Body'].read() == plaintext
        assert got['ServerSideEncryption'] == 'aws:kms'
        assert got['SSEKMSKeyId'] == key_id
        raw = raw_head(cluster, bucket, 'encrypted')
        assert len(raw) >= len(plaintext), len(raw)
        for piece in (plaintext, plaintext[:64], plaintext[-64:], b'rgwbench sse plaintext'):
            assert piece not in raw
        # the method sees plaintext where there is some
        client.put_object(Bucket=bucket, Key='plain', Body=plaintext)
        assert raw_head(cluster, bucket, 'plain') == plaintext
    finally:
        for o in client.list_objects_v2(Bucket=bucket).get('Contents', []):
            client.delete_object(Bucket=bucket, Key=o['Key'])
        client.delete_bucket(Bucket=bucket)


def buckets(cluster: Cluster) -> List[str]:
    return list(json.loads(cluster.tool('radosgw-admin', '--', 'bucket', 'list').stdout))


def test_kms_testing_encrypts_and_is_put_back(
        cluster: Cluster, credentials: Dict[str, Any]) -> None:
    before = snapshot(cluster)
    buckets_before = buckets(cluster)
    state = apply(cluster, 'sse=kms-testing')
    try:
        assert state['state'] == 'applied', state.get('error')
        key_id = state['client']['sse_kms_key_id']
        assert key_id.startswith('rgwbench-') and state['client']['sse'] == ['sse_kms_key_id']
        applied = {o['name']: o['value'] for o in cluster.ceph_json('config', 'dump')
                   if o['section'] == 'client.rgw'}
        assert applied['rgw_crypt_s3_kms_backend'] == 'testing'
        assert applied['rgw_crypt_require_ssl'] == 'false'
        assert applied['rgw_crypt_s3_kms_encryption_keys'].startswith(key_id + '=')
        # the plan names the key, it does not show it
        key = applied['rgw_crypt_s3_kms_encryption_keys'].split('=', 1)[1]
        assert key not in cluster.ceph('rgwbench', 'settings', 'show', '-f', 'json').stdout
        cluster.wait_rgw_registered()
        round_trip_encrypted(cluster, key_id)
    finally:
        revert_and_compare(cluster, before)
    # the module's own check left no bucket behind
    assert buckets(cluster) == buckets_before


def test_sse_c_is_checked_and_put_back(cluster: Cluster, credentials: Dict[str, Any]) -> None:
    before = snapshot(cluster)
    state = apply(cluster, 'sse=sse-c')
    try:
        assert state['state'] == 'applied', state.get('error')
        assert state['client']['sse'] == ['sse_c_key']
        assert [c['target'] for c in state['changes']] == [
            'client.rgw/rgw_crypt_require_ssl', 'rgw.default']
    finally:
        revert_and_compare(cluster, before)


@pytest.fixture
def kmip_options(cluster: Cluster, kmip_server: Dict[str, str]) -> Iterator[Dict[str, str]]:
    key_name = 'rgwbench-sse-%s' % uuid.uuid4().hex[:8]
    kmip(cluster.dir, 'create-key', key_name)
    options = {'sse_kmip_addr': kmip_server['addr'], 'sse_kmip_ca_path': kmip_server['ca'],
               'sse_kmip_client_cert': kmip_server['client_cert'],
               'sse_kmip_client_key': kmip_server['client_key'], 'sse_kmip_key_id': key_name}
    set_module_options(cluster, options)
    try:
        yield options
    finally:
        set_module_options(cluster, {o: '' for o in KMIP_OPTIONS})


def test_kms_kmip_refused_without_options(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'settings', 'plan', 'sse=kms-kmip', check=False)
    assert proc.returncode == errno.EINVAL
    assert 'set mgr/rgwbench/sse_kmip_addr first' in one_line(proc.stderr)


def test_kms_kmip_encrypts_and_is_put_back(
        cluster: Cluster, credentials: Dict[str, Any], kmip_options: Dict[str, str]) -> None:
    before = snapshot(cluster)
    state = apply(cluster, 'sse=kms-kmip')
    try:
        assert state['state'] == 'applied', state.get('error')
        assert state['client']['sse_kms_key_id'] == kmip_options['sse_kmip_key_id']
        cluster.wait_rgw_registered()
        round_trip_encrypted(cluster, kmip_options['sse_kmip_key_id'])
    finally:
        revert_and_compare(cluster, before)


def test_kms_kmip_at_a_wrong_address_fails_and_puts_back(
        cluster: Cluster, credentials: Dict[str, Any], kmip_options: Dict[str, str]) -> None:
    # Nothing listens on the discard port of loopback.
    set_module_options(cluster, {'sse_kmip_addr': '127.0.0.1:9'})
    before = snapshot(cluster)
    state = apply(cluster, 'sse=kms-kmip')
    print('error of the failed apply: %s' % state.get('error'))
    assert state['state'] == 'failed' and state['progress'] == 'put back', state
    assert 'sse=kms-kmip: writing an object with SSE-KMS through http' in state['error']
    assert 'mgr/rgwbench/sse_kmip_addr' in state['error']
    assert all(c['state'] == 'undone' for c in state['changes']), state['changes']
    cluster.wait_rgw_registered()
    assert snapshot(cluster) == before


def test_sse_s3_refused_on_pacific_planned_on_newer(cluster: Cluster) -> None:
    proc = cluster.ceph('rgwbench', 'settings', 'plan', 'sse=sse-s3', check=False)
    if cluster.release == 'pacific':
        assert proc.returncode == errno.EINVAL
        assert 'SSE-S3 needs RGW 17.2.4 (Quincy) or newer; this cluster runs 16.2.' in \
            one_line(proc.stderr)
        return
    # No Vault here: refused until its address is known, then planned.
    assert proc.returncode == errno.EINVAL
    assert 'set mgr/rgwbench/sse_vault_addr first' in one_line(proc.stderr)
    options = {'sse_vault_addr': 'http://127.0.0.1:8200',
               'sse_vault_token_file': '/etc/ceph/vault.token'}
    set_module_options(cluster, options)
    try:
        plans = cluster.ceph_json('rgwbench', 'settings', 'plan', 'sse=sse-s3')
    finally:
        set_module_options(cluster, {o: '' for o in options})
    targets = [c['target'] for c in plans[0]['changes']]
    for option in ('rgw_crypt_sse_s3_backend', 'rgw_crypt_sse_s3_vault_addr',
                   'rgw_crypt_sse_s3_vault_auth', 'rgw_crypt_sse_s3_vault_secret_engine',
                   'rgw_crypt_sse_s3_vault_token_file', 'rgw_crypt_require_ssl'):
        assert 'client.rgw/%s' % option in targets
    assert targets[-1] == 'rgw.default'


@pytest.fixture
def vault_options(cluster: Cluster, openbao_server: Dict[str, str]) -> Iterator[Dict[str, str]]:
    """The mgr's Vault options naming the cluster's OpenBao and a transit key of its own."""
    key_name = 'rgwbench-sse-%s' % uuid.uuid4().hex[:8]
    openbao(cluster.dir, 'create-key', key_name)
    options = {'sse_vault_addr': openbao_server['addr'],
               'sse_vault_token_file': openbao_server['token_file'],
               'sse_vault_key_id': key_name}
    set_module_options(cluster, options)
    try:
        yield options
    finally:
        set_module_options(cluster, {o: '' for o in VAULT_OPTIONS})


def transit_keys(cluster: Cluster) -> List[str]:
    return list(json.loads(openbao(cluster.dir, 'keys').stdout))


def test_kms_vault_through_openbao_transit_encrypts_and_is_put_back(
        cluster: Cluster, credentials: Dict[str, Any], vault_options: Dict[str, str]) -> None:
    before = snapshot(cluster)
    state = apply(cluster, 'sse=kms-vault')
    try:
        assert state['state'] == 'applied', state.get('error')
        applied = {o['name']: o['value'] for o in cluster.ceph_json('config', 'dump')
                   if o['section'] == 'client.rgw'}
        assert applied['rgw_crypt_s3_kms_backend'] == 'vault'
        assert applied['rgw_crypt_vault_prefix'] == '/v1/transit'
        # the token file is named, never shown
        shown = cluster.ceph('rgwbench', 'settings', 'show', '-f', 'json').stdout
        assert openbao_token(cluster) not in shown
        cluster.wait_rgw_registered()
        round_trip_encrypted(cluster, vault_options['sse_vault_key_id'])
    finally:
        revert_and_compare(cluster, before)


def openbao_token(cluster: Cluster) -> str:
    with open(json.loads(openbao(cluster.dir, 'info').stdout)['token_file']) as f:
        return f.read().strip()


def test_sse_s3_through_openbao_transit_makes_a_key_per_bucket_and_is_put_back(
        cluster: Cluster, credentials: Dict[str, Any], vault_options: Dict[str, str]) -> None:
    if cluster.release == 'pacific':
        proc = cluster.ceph('rgwbench', 'settings', 'plan', 'sse=sse-s3', check=False)
        assert proc.returncode == errno.EINVAL, proc
        return
    before = snapshot(cluster)
    keys_before = transit_keys(cluster)
    state = apply(cluster, 'sse=sse-s3')
    try:
        assert state['state'] == 'applied', state.get('error')
        client = s3_client(cluster)
        bucket = 'sse-s3-%s' % uuid.uuid4().hex[:8]
        plaintext = (b'rgwbench sse-s3 plaintext %s ' % uuid.uuid4().hex.encode()) * 2000
        client.create_bucket(Bucket=bucket)
        try:
            written = client.put_object(Bucket=bucket, Key='encrypted', Body=plaintext,
                                        ServerSideEncryption='AES256')
            assert written['ServerSideEncryption'] == 'AES256'
            got = client.get_object(Bucket=bucket, Key='encrypted')
            assert got['Body'].read() == plaintext
            raw = raw_head(cluster, bucket, 'encrypted')
            assert plaintext[:64] not in raw and b'rgwbench sse-s3 plaintext' not in raw
            # RGW made the bucket's key in OpenBao's transit engine, named for the bucket
            bucket_id = json.loads(cluster.tool('radosgw-admin', '--', 'bucket', 'stats',
                                                '--bucket', bucket).stdout)['id']
            assert sorted(set(transit_keys(cluster)) - set(keys_before)) == [bucket_id]
        finally:
            client.delete_object(Bucket=bucket, Key='encrypted')
            client.delete_bucket(Bucket=bucket)
    finally:
        revert_and_compare(cluster, before)


def chosen_lines(cluster: Cluster) -> List[str]:
    """What `plan --profile sse` says it chose for `sse: auto`."""
    plan = cluster.ceph('rgwbench', 'plan', '--profile', 'sse').stdout
    return [line for line in plan.splitlines() if line.startswith('sse=auto -> ')]


def test_sse_auto_without_vault_takes_the_testing_backend(cluster: Cluster) -> None:
    assert chosen_lines(cluster) == [
        "sse=auto -> kms-testing (SSE-KMS, RGW's testing backend, no KMS round trip): no "
        'Vault is configured (mgr/rgwbench/sse_vault_addr, mgr/rgwbench/sse_vault_token_file '
        'unset)']


def test_sse_auto_takes_vault_once_it_is_configured(
        cluster: Cluster, vault_options: Dict[str, str]) -> None:
    """On Tentacle SSE-S3 through OpenBao, on Pacific SSE-KMS through it: said by `plan
    --profile sse` and planned by `settings plan sse=auto`."""
    vault = 'Vault at %s, transit engine' % vault_options['sse_vault_addr']
    if cluster.release == 'pacific':
        wanted, line = 'kms-vault', (
            'sse=auto -> kms-vault (SSE-KMS, %s, key %s): SSE-S3 needs RGW 17.2.4 (Quincy) '
            'or newer; this cluster runs 16.2.' % (vault, vault_options['sse_vault_key_id']))
    else:
        wanted, line = 'sse-s3', ('sse=auto -> sse-s3 (SSE-S3, %s): Vault is configured '
                                  '(mgr/rgwbench/sse_vault_*) and RGW takes SSE-S3' % vault)
    found = chosen_lines(cluster)
    assert len(found) == 1 and found[0].startswith(line), found
    (planned,) = cluster.ceph_json('rgwbench', 'settings', 'plan', 'sse=auto')
    assert planned['value'] == wanted and planned['chosen'] == found[0]
