"""The `sse` built-in run end to end against a real OpenBao (Vault API, transit engine).

With the module's Vault options naming the cluster's OpenBao, `sse: auto` is SSE-S3 on
Tentacle: RGW makes a key per bucket in OpenBao's transit engine and encrypts every
object with it. Pacific's RGW has no SSE-S3 (its `sse: auto` is SSE-KMS through Vault,
which test_settings_sse.py checks through OpenBao), so this runs on Tentacle only.

While the run goes the test reads, as the run's S3 user, an object a variant wrote under
SSE-S3: RGW answers it as encrypted with AES256 and gives back the bytes the engine
wrote; the bucket's key is listed by OpenBao's own HTTP API. Afterwards the cluster
(config, specs, daemons, users, buckets, pools, config keys) is as before.
"""
import hashlib
import json
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Optional

import pytest
from botocore.exceptions import BotoCoreError, ClientError

from conftest import Cluster, openbao, wait_pgs_clean
from helpers import (FAST, differences, engine_module, fault_snapshot, s3_client,
                     set_module_options, wait_run, wait_unchanged)

VAULT_OPTIONS = ('sse_vault_addr', 'sse_vault_token_file')
# The engine's bodies (loadgen/payload.py): without --verify, every object of a size is
# the pattern of the job's seed (1 unless set) from offset 0.
ENGINE_SEED = 1


@pytest.fixture
def vault(runs: Cluster) -> Iterator[Dict[str, str]]:
    """The cluster's OpenBao, named by the module's Vault options (removed at the end)."""
    info: Dict[str, str] = json.loads(openbao(runs.dir, 'start').stdout)
    try:
        set_module_options(runs, {'sse_vault_addr': info['addr'],
                                  'sse_vault_token_file': info['token_file']})
        yield info
    finally:
        set_module_options(runs, {o: '' for o in VAULT_OPTIONS})
        openbao(runs.dir, 'stop', check=False)


def transit_keys(vault: Dict[str, str]) -> List[str]:
    """The transit engine's keys, as OpenBao's HTTP API lists them to its root token."""
    with open(vault['token_file']) as f:
        token = f.read().strip()
    request = urllib.request.Request('%s/v1/transit/keys' % vault['addr'], method='LIST',
                                     headers={'X-Vault-Token': token})
    try:
        with urllib.request.urlopen(request, timeout=15) as resp:
            return sorted(json.loads(resp.read().decode())['data']['keys'])
    except urllib.error.HTTPError as e:
        if e.code == 404:   # no key at all
            return []
        raise


def pools(c: Cluster) -> List[str]:
    return sorted(c.ceph_json('osd', 'pool', 'ls'))


class EncryptedRead:
    """One object of the run read back while it runs, and its bucket's key in OpenBao."""

    def __init__(self, c: Cluster, vault: Dict[str, str]) -> None:
        self.c = c
        self.vault = vault
        self.clients: Dict[str, Any] = {}
        self.pattern = engine_module('payload').Pattern(ENGINE_SEED)
        self.read: Optional[Dict[str, Any]] = None

    def look(self) -> None:
        if self.read is not None:
            return
        # Where RGW serves now: each variant has its own scheme (TLS at RGW or not).
        shown = self.c.try_ceph_json('rgwbench', 'status') or {}
        urls = [e['url'] for d in shown.get('rgw_daemons', []) for e in d['endpoints']]
        if not urls:
            return
        client = self.clients.setdefault(urls[0], s3_client(self.c, urls[0]))
        try:
            for bucket in client.list_buckets().get('Buckets', []):
                if bucket['Name'].startswith('rgwbench-') and self._read(client, bucket['Name']):
                    return
        except (ClientError, BotoCoreError):
            pass   # RGW restarting between variants, a bucket the run removed meanwhile

    def _read(self, client: Any, bucket: str) -> bool:
        listed = client.list_objects_v2(Bucket=bucket, MaxKeys=1).get('Contents')
        if not listed:
            return False
        got = client.get_object(Bucket=bucket, Key=listed[0]['Key'])
        body = got['Body'].read()
        if got.get('ServerSideEncryption') != 'AES256':
            return False   # the baseline's
        keys_then = transit_keys(self.vault)
        stats = self.c.tool('radosgw-admin', '--', 'bucket', 'stats', '--bucket', bucket,
                            check=False, timeout=120)
        if stats.returncode != 0:
            return False
        self.read = {
            'bucket': bucket, 'key': listed[0]['Key'], 'size': len(body),
            'sha256': hashlib.sha256(body).hexdigest(),
            'written_sha256': self.pattern.sha256_hex(len(body), 0),
            'bucket_id': json.loads(stats.stdout)['id'], 'keys_then': keys_then}
        return True


@pytest.mark.releases('tentacle')
def test_the_sse_builtin_runs_sse_s3_with_the_key_in_openbao_and_puts_it_all_back(
        runs: Cluster, vault: Dict[str, str]) -> None:
    # RGW's bucket pools exist before the snapshot (RGW makes them at its first bucket,
    # and they stay): a bucket made and removed, and their PGs clean before the run.
    client = s3_client(runs)
    client.create_bucket(Bucket='sse-openbao-pools')
    client.put_object(Bucket='sse-openbao-pools', Key='o', Body=b'x')
    client.delete_object(Bucket='sse-openbao-pools', Key='o')
    client.delete_bucket(Bucket='sse-openbao-pools')
    assert wait_pgs_clean(runs, 180) is None
    plan = runs.ceph('rgwbench', 'plan', '--profile', 'sse').stdout
    assert 'sse=auto -> sse-s3 (SSE-S3, Vault at %s, transit engine)' % vault['addr'] in plan
    before, pools_before = fault_snapshot(runs), pools(runs)
    keys_before = transit_keys(vault)
    # Small objects, 4 writers at 10 a second and 20 objects to read: what is checked is
    # that the run encrypts, reads back and puts back, not how fast.
    run_id = runs.ceph('rgwbench', 'run', '--profile', 'sse', *FAST, '--sizes', '64KiB',
                       '--concurrency', '4', '--rate', '10', '--objects', '20',
                       '--yes-i-really-mean-it').stdout.strip()
    watch = EncryptedRead(runs, vault)
    try:
        record = wait_run(runs, run_id, timeout=1200, meanwhile=watch.look, every_s=1)
    finally:
        if runs.ceph_json('rgwbench', 'status')['active_run'] is not None:
            runs.ceph('rgwbench', 'abort', check=False)
            wait_run(runs, run_id)
    assert record['state'] == 'complete', record.get('error')
    print('run %s: %s' % (run_id, json.dumps(
        [{'variant': v['name'], 'settings': v['settings'], 'client': v['client'],
          'workloads': [{k: w.get(k) for k in ('name', 'ops', 'errors', 'bytes')}
                        for w in v['workloads']]} for v in record['variants']])))
    # The record says what ran: SSE-S3 in both SSE variants, the baseline without.
    ran = {v['name']: v['settings'].get('sse') for v in record['variants']}
    assert ran == {'tls-msgr2': None, 'sse-rgw': 'sse-s3', 'sse-ingress': 'sse-s3'}, ran
    for variant in record['variants']:
        assert variant['error'] is None, variant
        assert all(c['state'] == 'undone' for c in variant['changes']), variant['changes']
        for workload in variant['workloads']:
            assert workload['ops'] > 0 and workload['errors'] == 0, (variant['name'], workload)
    # Read back decrypted: the bytes the engine wrote, answered as SSE-S3.
    print('read while running: %s' % watch.read)
    assert watch.read is not None, 'no SSE-S3 object was found to read while the run went'
    assert watch.read['size'] == 64 * 1024
    assert watch.read['sha256'] == watch.read['written_sha256']
    # Its bucket's key lived in OpenBao (RGW names it by the bucket's id), and RGW
    # removed it with the bucket.
    assert watch.read['bucket_id'] in watch.read['keys_then'], watch.read
    assert watch.read['bucket_id'] not in keys_before
    assert transit_keys(vault) == keys_before
    assert wait_unchanged(runs, before) == []
    assert differences({'pools': pools_before}, {'pools': pools(runs)}) == []
