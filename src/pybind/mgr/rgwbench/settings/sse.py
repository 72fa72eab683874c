"""`sse`: server-side encryption of the objects workloads write.

Values and what they change (every RGW option at `client.rgw`, followed by a
restart of the RGW service; every change journaled and put back):

* ``kms-testing``: SSE-KMS with RGW's `testing` backend and a 256-bit key
  rgwbench makes once and keeps in its store (added to any keys already in
  ``rgw_crypt_s3_kms_encryption_keys``); clients send that key's id.
* ``kms-kmip``: SSE-KMS with a KMIP server, from the module's ``sse_kmip_*``
  options; clients send ``sse_kmip_key_id``.
* ``kms-vault``: SSE-KMS with HashiCorp Vault, from the ``sse_vault_*``
  options; clients send ``sse_vault_key_id``.
* ``sse-c``: keys from the client (a random 256-bit key rgwbench keeps); no
  option besides ``rgw_crypt_require_ssl``.
* ``sse-s3``: SSE-S3 with Vault (``rgw_crypt_sse_s3_*``), Quincy 17.2.4 on.
* ``off``: no change; clients send no SSE headers.
* ``auto``: one of the above, chosen when the variant is planned (see
  ``ServerSideEncryption.choose``): ``sse-s3`` when Vault is configured (the
  module's ``sse_vault_addr``, and ``sse_vault_token_file`` with token auth;
  the transit engine) and every RGW takes SSE-S3; else ``kms-vault`` when Vault
  is configured with ``sse_vault_key_id``; else ``kms-testing``. The plan says
  which and why; a run's record keeps the value that ran.

RGW refuses SSE over plain HTTP while ``rgw_crypt_require_ssl`` is true (its
default). The rule: ``rgw_crypt_require_ssl`` is kept when RGW can tell that
clients of the variant reach it over TLS, that is when the RGW spec, as the
settings planned before this one leave it (TLS settings come first), has
``ssl``; or when a planned service change makes an ingress with ``ssl`` and
RGW trusts the proxy's word (``rgw_trust_forwarded_https`` true at
client.rgw). Otherwise it is set to false: behind an ingress that terminates
TLS, RGW sees plain HTTP from HAProxy and would refuse every SSE request.
"""
import base64
import json
import os
import re
import socket
import ssl
import uuid
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from ..cluster.credentials import CredentialStore
from ..errors import InvalidInput, NotSupported
from ..cluster.kvstore import get_secret, set_secret
from ..loadgen.errors import LoadgenError, ProtocolError
from ..loadgen.s3 import Endpoint, S3Client, describe_error, make_ssl_context
from ..loadgen.sigv4 import Signer
from ..loadgen.sse import SSE
from ..cluster.pending import pending
from .base import (Chosen, ClientSide, PlanView, Setting, SettingContext, SettingNotInEffect,
                   poll)
from .changes import SERVICE, Change, config_change, service_change
from ..cluster.spec_fields import ARGS
from .container_args import takes_container_args, with_mounts
from .daemon_settings import config_problem, rgw_restart, same_value
from ..cluster.secret_options import shown

RGW = 'client.rgw'
# Where RGW finds Vault's transit engine mounted at its default path, when the
# operator gives no prefix: RGW joins the address, the prefix and the key id, and
# without one it asks Vault for /<key> (seen with OpenBao: an SSE-S3 write failed
# with NoSuchKey). Under this prefix RGW uses the engine's data keys, for SSE-S3
# (a key per bucket, which RGW makes) and SSE-KMS (the key the client names); the
# older `.../export/encryption-key` prefix needs exportable keys and a version in
# the key id (seen: an SSE-KMS write of a key id without one failed with 400).
TRANSIT_PREFIX = '/v1/transit'
AUTO = 'auto'
VALUES = ('kms-testing', 'kms-kmip', 'kms-vault', 'sse-c', 'sse-s3', 'off', AUTO)
KEYS_STORE = 'settings/sse/keys'
KEY_NAMES = ('testing_key_id', 'testing_key', 'sse_c_key')
SSE_S3_SINCE = (17, 2, 4)
VERSION = re.compile(r'(\d+)\.(\d+)\.(\d+)')

# The module's options for the KMS backends: (name, default, description).
MODULE_OPTIONS: List[Tuple[str, str, str]] = [
    ('sse_kmip_addr', '', 'sse=kms-kmip: address (host:port) of the KMIP server RGW uses'),
    ('sse_kmip_ca_path', '', 'sse=kms-kmip: CA certificate of the KMIP server, a path on '
                             'every RGW host'),
    ('sse_kmip_client_cert', '', 'sse=kms-kmip: RGW\'s client certificate, a path on every '
                                 'RGW host'),
    ('sse_kmip_client_key', '', 'sse=kms-kmip: RGW\'s client key, a path on every RGW host'),
    ('sse_kmip_key_id', '', 'sse=kms-kmip: the key id (the KMIP Name) clients send'),
    ('sse_vault_addr', '', 'sse=kms-vault and sse-s3: address of Vault, e.g. '
                           'http://vault:8200'),
    ('sse_vault_auth', 'token', 'sse=kms-vault and sse-s3: token or agent'),
    ('sse_vault_secret_engine', 'transit', 'sse=kms-vault and sse-s3: kv or transit '
                                           '(SSE-S3 takes transit)'),
    ('sse_vault_token_file', '', 'sse=kms-vault and sse-s3 with auth token: the token file, '
                                 'a path on every RGW host'),
    ('sse_vault_prefix', '', 'sse=kms-vault and sse-s3: URL prefix of keys in Vault (for the '
                             'transit engine by default /v1/transit)'),
    ('sse_vault_key_id', '', 'sse=kms-vault: the key id clients send'),
]

KMIP_OPTIONS = [('rgw_crypt_kmip_addr', 'sse_kmip_addr'),
                ('rgw_crypt_kmip_ca_path', 'sse_kmip_ca_path'),
                ('rgw_crypt_kmip_client_cert', 'sse_kmip_client_cert'),
                ('rgw_crypt_kmip_client_key', 'sse_kmip_client_key')]
# The options whose values are files RGW reads: under cephadm RGW runs in a container
# that sees none of the host's files unless its spec mounts them.
FILE_OPTIONS = ('rgw_crypt_kmip_ca_path', 'rgw_crypt_kmip_client_cert',
                'rgw_crypt_kmip_client_key', 'rgw_crypt_vault_token_file',
                'rgw_crypt_sse_s3_vault_token_file')
MODES = {'kms-testing': 'SSE-KMS', 'kms-kmip': 'SSE-KMS', 'kms-vault': 'SSE-KMS',
         'sse-c': 'SSE-C', 'sse-s3': 'SSE-S3'}
BACKEND = {'kms-testing': ('rgw_crypt_s3_kms_backend', 'testing'),
           'kms-kmip': ('rgw_crypt_s3_kms_backend', 'kmip'),
           'kms-vault': ('rgw_crypt_s3_kms_backend', 'vault'),
           'sse-s3': ('rgw_crypt_sse_s3_backend', 'vault')}
CHECK_BYTES = 8192
CHECK_TIMEOUT_S = 30


def parse_version(text: Optional[str]) -> Optional[Tuple[int, int, int]]:
    """(major, minor, patch) of `ceph version 17.2.4 (...) quincy (stable)`."""
    found = VERSION.search(text or '')
    if not found:
        return None
    return (int(found.group(1)), int(found.group(2)), int(found.group(3)))


def keeps_require_ssl(ctx: SettingContext, view: PlanView) -> bool:
    """Whether RGW knows its clients come over TLS (see the module's docstring)."""
    spec = view.service_spec(ctx.rgw_service())
    if spec is not None and _ssl(spec):
        return True
    ingress = any(change.kind == SERVICE and isinstance(change.after, dict)
                  and change.after.get('service_type') == 'ingress' and _ssl(change.after)
                  for change in view.planned)
    trusted = view.config_value(RGW, 'rgw_trust_forwarded_https')
    return ingress and trusted is not None and same_value(trusted, 'true')


def backend_in_use(ctx: SettingContext, view: PlanView, option: str,
                   wanted: str) -> Optional[str]:
    """Where a KMS backend other than `wanted` is configured (None: none is).

    Unset, SSE-KMS's backend is Barbican: in use once its URL is set."""
    sections = ['global', RGW, 'client.rgw.%s' % ctx.rgw_service().split('.', 1)[-1]]
    for who in sections:
        value = view.config_value(who, option)
        if value and not same_value(value, wanted):
            return '%s/%s is %s' % (who, option, value)
    if option == 'rgw_crypt_s3_kms_backend' and not any(
            view.config_value(who, option) for who in sections):
        for who in sections:
            if view.config_value(who, 'rgw_barbican_url'):
                return '%s/rgw_barbican_url is set, with the default backend barbican' % who
    return None


def _ssl(spec: Dict[str, Any]) -> bool:
    return bool((spec.get('spec') or {}).get('ssl') or spec.get('ssl'))


class ServerSideEncryption(Setting):
    name = 'sse'
    values = ', '.join(VALUES)
    summary = ('server-side encryption: SSE-KMS (testing, KMIP or Vault backend), SSE-C or '
               'SSE-S3; RGW options set and RGWs restarted')

    def parse(self, raw: Any) -> str:
        text = str(raw).strip().lower()
        if text not in VALUES:
            raise self.bad(raw)
        return text

    # -- keys rgwbench keeps -----------------------------------------------------------
    def _keys(self, ctx: SettingContext, keep: bool = False) -> Dict[str, str]:
        """The testing backend's key and the SSE-C key: made once, then always the same.

        A plan only holds keys it makes in memory (a dry run stores nothing);
        `keep`, once the keys are in place, stores them.
        """
        stored = get_secret(ctx.secrets, KEYS_STORE)
        keys: Dict[str, str] = json.loads(stored) if stored else {}
        if all(keys.get(k) for k in KEY_NAMES):
            return keys
        held = pending(ctx.secrets)
        keys = held.get(KEYS_STORE) or {
            'testing_key_id': 'rgwbench-%s' % uuid.uuid4().hex[:12],
            'testing_key': base64.b64encode(os.urandom(32)).decode('ascii'),
            'sse_c_key': base64.b64encode(os.urandom(32)).decode('ascii')}
        held[KEYS_STORE] = keys
        if keep:
            set_secret(ctx.secrets, KEYS_STORE, json.dumps(keys))
            held.pop(KEYS_STORE, None)
        return keys

    def _option(self, ctx: SettingContext, option: str) -> str:
        return str(ctx.option(option) or '').strip()

    def _require(self, ctx: SettingContext, value: str, options: List[str]) -> None:
        for option in options:
            if not self._option(ctx, option):
                raise self.bad(value, 'set mgr/rgwbench/%s first (`ceph config set mgr '
                                      'mgr/rgwbench/%s ...`)' % (option, option))

    # -- planning ----------------------------------------------------------------------
    def _vault(self, ctx: SettingContext, value: str, prefix: str) -> Dict[str, str]:
        needed = ['sse_vault_addr']
        if self._option(ctx, 'sse_vault_auth') == 'token':
            needed.append('sse_vault_token_file')
        if value == 'kms-vault':
            needed.append('sse_vault_key_id')
        self._require(ctx, value, needed)
        wanted = {prefix + 'addr': self._option(ctx, 'sse_vault_addr'),
                  prefix + 'auth': self._option(ctx, 'sse_vault_auth') or 'token',
                  prefix + 'secret_engine':
                  self._option(ctx, 'sse_vault_secret_engine') or 'transit'}
        if self._option(ctx, 'sse_vault_auth') == 'token':
            wanted[prefix + 'token_file'] = self._option(ctx, 'sse_vault_token_file')
        chosen = self._option(ctx, 'sse_vault_prefix') or (
            TRANSIT_PREFIX if wanted[prefix + 'secret_engine'] == 'transit' else '')
        if chosen:
            wanted[prefix + 'prefix'] = chosen
        return wanted

    def _sse_s3_missing(self, ctx: SettingContext) -> Optional[str]:
        """Why RGW cannot do SSE-S3 (None: every RGW daemon can)."""
        if ctx.release >= 18:
            return None
        running = None
        if ctx.release >= 16:
            versions = [parse_version(d.version) for d in ctx.cluster.rgw_daemons()]
            known = [v for v in versions if v is not None]
            running = min(known) if known else None
        if running is None or running < SSE_S3_SINCE:
            return 'SSE-S3 needs RGW 17.2.4 (Quincy) or newer; this cluster runs %s' % (
                '%d.%d.%d' % running if running else 'Ceph %d' % ctx.release)
        return None

    def _refuse_old_sse_s3(self, ctx: SettingContext) -> None:
        missing = self._sse_s3_missing(ctx)
        if missing:
            raise self.bad('sse-s3', missing)

    def choose(self, ctx: SettingContext, value: Any) -> Optional[Chosen]:
        """`auto`: SSE-S3 through Vault, as the benchmark this module's `sse` profile
        follows measured it, where the cluster can; else the closest it can do.

        Vault counts as configured when the module's options name it (those `sse-s3`
        needs); RGW's own Vault options are not taken, since applying a value sets them
        from the module's (a plan that finds them only says so)."""
        if value != AUTO:
            return None
        chosen, how, why = self._auto(ctx)
        return Chosen(chosen, 'sse=auto -> %s (%s): %s' % (chosen, how, why))

    def _auto(self, ctx: SettingContext) -> Tuple[str, str, str]:
        """(value, the KMS it uses, why)."""
        token = self._option(ctx, 'sse_vault_auth') in ('', 'token')
        unset = [o for o in ['sse_vault_addr'] + (['sse_vault_token_file'] if token else [])
                 if not self._option(ctx, o)]
        testing = "SSE-KMS, RGW's testing backend, no KMS round trip"
        if unset:
            return 'kms-testing', testing, 'no Vault is configured (%s unset%s)' % (
                ', '.join('mgr/rgwbench/%s' % o for o in unset), self._rgw_vault(ctx))
        engine = self._option(ctx, 'sse_vault_secret_engine') or 'transit'
        vault = 'Vault at %s, %s engine' % (self._option(ctx, 'sse_vault_addr'), engine)
        missing = self._sse_s3_missing(ctx)
        if missing is None and engine == 'transit':
            return 'sse-s3', 'SSE-S3, ' + vault, \
                "Vault is configured (mgr/rgwbench/sse_vault_*) and RGW takes SSE-S3"
        why_not = missing or 'RGW takes SSE-S3 keys from the transit engine only'
        key_id = self._option(ctx, 'sse_vault_key_id')
        if key_id:
            return 'kms-vault', 'SSE-KMS, %s, key %s' % (vault, key_id), \
                '%s; Vault is configured with a key for SSE-KMS' % why_not
        return 'kms-testing', testing, \
            '%s, and mgr/rgwbench/sse_vault_key_id is unset for SSE-KMS through Vault' % why_not

    def _rgw_vault(self, ctx: SettingContext) -> str:
        """Where RGW's own options name a Vault the module's options do not, as a plan
        says it."""
        for option in ('rgw_crypt_sse_s3_vault_addr', 'rgw_crypt_vault_addr'):
            addr = ctx.cluster.config_value(RGW, option)
            if addr:
                return "; RGW's %s is %s: set mgr/rgwbench/sse_vault_* to use it" % (
                    option, addr)
        return ''

    def wanted_options(self, ctx: SettingContext, view: PlanView,
                       value: str) -> Dict[str, str]:
        """The client.rgw options the value needs, besides rgw_crypt_require_ssl."""
        wanted: Dict[str, str] = {}
        if value in BACKEND:
            option, backend = BACKEND[value]
            if value == 'sse-s3':
                self._refuse_old_sse_s3(ctx)
            in_use = backend_in_use(ctx, view, option, backend)
            if in_use and not ctx.force:
                raise InvalidInput(
                    'sse=%s: RGW\'s %s is in use (%s): switching it to %s would make the '
                    'cluster\'s users\' encrypted reads and writes fail while the variant '
                    'runs; refused (--force switches it anyway)' % (value, option, in_use,
                                                                    backend))
            wanted[option] = backend
        if value == 'kms-testing':
            keys = self._keys(ctx)
            ours = '%s=%s' % (keys['testing_key_id'], keys['testing_key'])
            present = (view.config_value(RGW, 'rgw_crypt_s3_kms_encryption_keys') or '').split()
            # Keys already there stay: objects written with them can still be read.
            mine = [k for k in present if k.split('=', 1)[0] != keys['testing_key_id']]
            wanted['rgw_crypt_s3_kms_encryption_keys'] = ' '.join(mine + [ours])
        elif value == 'kms-kmip':
            self._require(ctx, value, [m for _, m in KMIP_OPTIONS] + ['sse_kmip_key_id'])
            wanted.update({o: self._option(ctx, m) for o, m in KMIP_OPTIONS})
        elif value == 'kms-vault':
            wanted.update(self._vault(ctx, value, 'rgw_crypt_vault_'))
        elif value == 'sse-s3':
            wanted.update(self._vault(ctx, value, 'rgw_crypt_sse_s3_vault_'))
        return wanted

    def plan(self, ctx: SettingContext, view: PlanView, value: str) -> List[Change]:
        if value == AUTO:
            value = self._auto(ctx)[0]
        if value == 'off':
            return []
        wanted = self.wanted_options(ctx, view, value)
        if not keeps_require_ssl(ctx, view):
            wanted['rgw_crypt_require_ssl'] = 'false'
        changes = [self._change(option, wanted[option]) for option in sorted(wanted)
                   if view.config_value(RGW, option) != wanted[option]]
        mounts = self._mounts(ctx, view, files_of(wanted))
        return mounts + changes + [rgw_restart(ctx)] if changes else mounts

    def _mounts(self, ctx: SettingContext, view: PlanView, paths: List[str]) -> List[Change]:
        """The RGW spec with each file mounted into its containers (cephadm), if needed."""
        if not paths or ctx.cluster.backend() != 'cephadm':
            return []
        service = ctx.rgw_service()
        spec = view.service_spec(service)
        if spec is None:
            return []
        args = list(spec.get(ARGS) or [])
        wanted = with_mounts(args, paths)
        if wanted == args:
            return []
        if not takes_container_args(ctx.cluster.spec_from_json):
            raise NotSupported(
                "sse: RGW runs in cephadm's containers, which see %s only if the RGW spec "
                "mounts them, and this Ceph release's service spec has no %s; nothing "
                'changed' % (', '.join(paths), ARGS))
        spec[ARGS] = wanted
        return [service_change(service, spec, 'ceph orch apply %s with %s mounting %s '
                               'read-only (other container arguments kept)'
                               % (service, ARGS, ', '.join(paths)))]

    def _change(self, option: str, value: str) -> Change:
        # Plans are shown and kept: a secret (the KMS keys) is named, never shown.
        return replace(config_change(RGW, option, value),
                       summary='ceph config set %s %s %s' % (RGW, option, shown(option, value)))

    def notes(self, ctx: SettingContext, value: str) -> List[str]:
        notes = []
        if value == 'kms-testing':
            notes.append('the testing backend keeps its key in `ceph config` '
                         '(rgw_crypt_s3_kms_encryption_keys): for benchmarks only')
        if value == 'sse-s3' and (self._option(ctx, 'sse_vault_secret_engine') or
                                  'transit') != 'transit':
            notes.append('RGW takes SSE-S3 keys from the transit engine of Vault only')
        files = self._files(ctx, value)
        if files and ctx.cluster.backend() == 'cephadm':
            notes.append('RGW reads %s in its container as the image\'s ceph user (uid 167 in '
                         'Ceph\'s images): each must be readable by that uid on every RGW host '
                         '(RGW refuses a Vault token file it cannot read: AccessDenied)'
                         % ', '.join(files))
        if value != 'off' and CredentialStore(ctx.secrets).get() is None:
            notes.append('no S3 credentials are stored (`ceph rgwbench credentials set`): '
                         'the check after applying reads RGW\'s options only and writes no '
                         'object with %s' % MODES[value])
        return notes

    def _files(self, ctx: SettingContext, value: str) -> List[str]:
        """The files the value has RGW read, from the module's options."""
        if value == 'kms-kmip':
            names = [m for _, m in KMIP_OPTIONS if m != 'sse_kmip_addr']
        elif value in ('kms-vault', 'sse-s3') and self._option(ctx, 'sse_vault_auth') in (
                '', 'token'):
            names = ['sse_vault_token_file']
        else:
            names = []
        return [self._option(ctx, n) for n in names if self._option(ctx, n)]

    # -- clients -----------------------------------------------------------------------
    def client_sse(self, ctx: SettingContext, value: str) -> Dict[str, Any]:
        """The loadgen Job fields a workload sets for the value."""
        if value == 'kms-testing':
            return {'sse_kms_key_id': self._keys(ctx)['testing_key_id']}
        if value == 'kms-kmip':
            return {'sse_kms_key_id': self._option(ctx, 'sse_kmip_key_id')}
        if value == 'kms-vault':
            return {'sse_kms_key_id': self._option(ctx, 'sse_vault_key_id')}
        if value == 'sse-c':
            return {'sse_c_key': self._keys(ctx)['sse_c_key']}
        if value == 'sse-s3':
            return {'sse_s3': True}
        return {}

    def client(self, ctx: SettingContext, value: str, client: ClientSide) -> ClientSide:
        sse = self.client_sse(ctx, value)
        return client._replace(sse=sse) if sse else client

    # -- verifying ---------------------------------------------------------------------
    def verify(self, ctx: SettingContext, value: str) -> None:
        if value == 'off':
            return
        if value in ('kms-testing', 'sse-c'):
            self._keys(ctx, keep=True)  # in place now: keys a plan made are stored
        if value in BACKEND:
            option, backend = BACKEND[value]
            poll(ctx, '%s to use %s' % (RGW, backend),
                 lambda: config_problem(ctx, RGW, option, backend))
        creds = CredentialStore(ctx.secrets).get()
        if creds is None:
            return  # notes() says so
        sse = SSE.from_settings(customer_key=self.client_sse(ctx, value).get('sse_c_key'),
                                kms_key_id=self.client_sse(ctx, value).get('sse_kms_key_id'),
                                sse_s3=value == 'sse-s3')
        # A restarted daemon reports its running config a moment after it serves: until
        # then it may still show the value it ran with before.
        endpoints: List[Tuple[str, Dict[str, str]]] = []

        def endpoints_ready() -> Optional[str]:
            try:
                endpoints[:] = self._check_endpoints(ctx)
            except SettingNotInEffect as e:
                return str(e)
            return None
        poll(ctx, 'every RGW daemon to take SSE', endpoints_ready)
        for url, headers in endpoints:
            check_write(url, creds, sse, headers, MODES[value], value)

    def _check_endpoints(self, ctx: SettingContext) -> List[Tuple[str, Dict[str, str]]]:
        """One endpoint of each RGW daemon, and the headers it needs for SSE.

        Plain HTTP when RGW takes SSE over it; else HTTPS when the daemon serves
        it; else plain HTTP as a proxy that terminates TLS would send it, when
        RGW trusts such a proxy (TLS at an ingress).
        """
        found: List[Tuple[str, Dict[str, str]]] = []
        for daemon in ctx.cluster.rgw_daemons():
            key = 'rgw.%s' % daemon.key
            require = ctx.cluster.running_config(key, 'rgw_crypt_require_ssl')
            plain = [e for e in daemon.endpoints if e.scheme == 'http']
            secure = [e for e in daemon.endpoints if e.scheme == 'https']
            if plain and require is not None and same_value(require, 'false'):
                found.append((plain[0].url, {}))
            elif secure:
                found.append((secure[0].url, {}))
            elif plain:
                trusted = ctx.cluster.running_config(key, 'rgw_trust_forwarded_https')
                if trusted is None or not same_value(trusted, 'true'):
                    raise SettingNotInEffect(
                        '%s serves plain HTTP only and takes SSE only over TLS '
                        '(rgw_crypt_require_ssl is true)' % daemon.name)
                found.append((plain[0].url, {'X-Forwarded-Proto': 'https'}))
        if not found:
            raise SettingNotInEffect('no RGW daemon lists an endpoint in the service map')
        return found


def files_of(wanted: Dict[str, str]) -> List[str]:
    """The files RGW is told to read, in the order of FILE_OPTIONS."""
    return [wanted[o] for o in FILE_OPTIONS if wanted.get(o)]


def check_write(url: str, creds: Dict[str, str], sse: SSE, extra: Dict[str, str],
                mode: str, value: str) -> None:
    """Write an object with SSE through `url`, read it back equal, delete it."""
    endpoint = Endpoint(url)
    tls: Optional[ssl.SSLContext] = None
    if endpoint.tls:
        # What is checked here is encryption at rest; the TLS setting checks certificates.
        tls = make_ssl_context(insecure=True)
    client = S3Client(endpoint, Signer(creds['access_key'], creds['secret_key']),
                      tls=tls, timeout=float(CHECK_TIMEOUT_S))
    bucket = 'rgwbench-sse-check-%s' % uuid.uuid4().hex[:10]
    path = '/%s/object' % bucket
    data = os.urandom(CHECK_BYTES)
    what = 'sse=%s: writing an object with %s through %s' % (value, mode, url)
    created = False
    try:
        resp = client.request('PUT', '/' + bucket, headers=extra)
        if resp.status != 200:
            raise SettingNotInEffect('%s: creating bucket %s failed: %s'
                                     % (what, bucket, describe_error(resp)))
        created = True
        resp = client.request('PUT', path, headers=dict(extra, **sse.write), data=data)
        if resp.status != 200:
            raise SettingNotInEffect('%s failed: %s%s' % (what, describe_error(resp), hint(
                value)))
        if not encrypted(resp.headers, sse):
            raise SettingNotInEffect('%s: RGW stored it without encryption (no %s in its '
                                     'answer)' % (what, mode))
        resp = client.request('GET', path, headers=dict(extra, **sse.read))
        if resp.status != 200 or resp.body != data:
            raise SettingNotInEffect('%s: reading it back %s' % (
                what, 'gave other bytes' if resp.status == 200 else
                'failed: %s' % describe_error(resp)))
    except socket.timeout:
        raise SettingNotInEffect('%s failed: RGW did not answer within %ds%s'
                                 % (what, CHECK_TIMEOUT_S, hint(value)))
    except (OSError, ProtocolError, LoadgenError) as e:
        raise SettingNotInEffect('%s failed: %s: %s%s' % (what, type(e).__name__, e,
                                                          hint(value)))
    finally:
        if created:
            try:
                client.request('DELETE', path, headers=extra)
                client.request('DELETE', '/' + bucket, headers=extra)
            except (OSError, ProtocolError, LoadgenError):
                pass
        client.close()


def encrypted(headers: Dict[str, str], sse: SSE) -> bool:
    if sse.mode == 'sse-c':
        return headers.get('x-amz-server-side-encryption-customer-algorithm') == 'AES256'
    wanted = 'aws:kms' if sse.mode == 'sse-kms' else 'AES256'
    return headers.get('x-amz-server-side-encryption') == wanted


def hint(value: str) -> str:
    if value == 'kms-kmip':
        return ' (does the KMIP server at mgr/rgwbench/sse_kmip_addr answer RGW, and does ' \
               'it have the key mgr/rgwbench/sse_kmip_key_id?)'
    if value in ('kms-vault', 'sse-s3'):
        return ' (does Vault at mgr/rgwbench/sse_vault_addr answer RGW, does it have ' \
               'the key, and can RGW read its token file?)'
    return ''
