"""Ceph options whose values are secrets, and how settings show them: never in full.

The one list every log line, plan and error message of the settings goes by.
A value is kept where it must be (the journal, to put it back; `ceph config`
itself); wherever it is shown, it is masked.
"""
import re
from typing import Any, Dict, Iterable, List, Optional

HIDDEN = '<secret>'

SECRET_OPTIONS = frozenset({
    'key',                                      # a client's cephx key
    'rgw_crypt_s3_kms_encryption_keys',         # SSE-KMS testing backend: id=key ...
    'rgw_crypt_default_encryption_key',
    'rgw_crypt_kmip_password', 'rgw_crypt_kmip_client_key',
    'rgw_crypt_vault_token_file', 'rgw_crypt_sse_s3_vault_token_file',
    'rgw_keystone_admin_password', 'rgw_keystone_admin_password_path',
    'rgw_keystone_admin_token', 'rgw_keystone_admin_token_path',
    'rgw_keystone_barbican_password', 'rgw_ldap_secret', 'rgw_opa_token', 'rgw_sts_key',
})
# Besides the list, an option whose name says it holds a secret ...
_SECRET_NAME = re.compile(r'password|secret|token|(^|_)keys?$')
# ... unless it only names where or how a secret is used.
NOT_SECRET = frozenset({'rgw_crypt_vault_secret_engine', 'rgw_crypt_sse_s3_vault_secret_engine'})

_PRIVATE_KEY = re.compile(r'-----BEGIN ([A-Z ]*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----',
                          re.S)
KMS_KEYS = 'rgw_crypt_s3_kms_encryption_keys'


def is_secret(option: str) -> bool:
    name = option.rsplit('/', 1)[-1].strip().lower()
    return name not in NOT_SECRET and (name in SECRET_OPTIONS or
                                       bool(_SECRET_NAME.search(name)))


def shown(option: str, value: Optional[str]) -> Optional[str]:
    """The value as logs and plans show it: a secret's is hidden (a KMS key's id stays)."""
    if value is None or not is_secret(option):
        return value
    if option.rsplit('/', 1)[-1] == KMS_KEYS:
        return ' '.join('%s=%s' % (pair.split('=', 1)[0], HIDDEN) for pair in value.split())
    return HIDDEN


def secret_parts(option: str, value: Optional[str]) -> List[str]:
    """What of a value must not appear in a message (nothing when it is no secret)."""
    if value is None or not is_secret(option) or not value.strip():
        return []
    parts = [value.strip()]
    if option.rsplit('/', 1)[-1] == KMS_KEYS:
        parts += [pair.split('=', 1)[1] for pair in value.split() if '=' in pair]
    return sorted({p for p in parts if p}, key=len, reverse=True)


def masked(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without the given secrets and without any PEM private key."""
    text = _PRIVATE_KEY.sub('<private key>', text)
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return text


def masked_settings(settings: Dict[str, Any]) -> Dict[str, Any]:
    """Settings as they may be shown: the `config` setting's secret options' values hidden
    (the mapping, or its `who/option:value,...` text)."""
    config = settings.get('config')
    if config is None:
        return dict(settings)
    if isinstance(config, dict):
        shown_config: Any = {key: shown(str(key), None if value is None else str(value))
                             for key, value in config.items()}
    else:
        parts = []
        for item in str(config).split(','):
            key, eq, value = item.partition(':')
            parts.append('%s:%s' % (key, shown(key, value.strip())) if eq else item)
        shown_config = ','.join(parts)
    return dict(settings, config=shown_config)


def masked_profile(doc: Dict[str, Any]) -> Dict[str, Any]:
    """A profile's document (serial.dump of a Profile) as it may be shown: each variant's settings
    masked as masked_settings does."""
    variants = doc.get('variants')
    if not isinstance(variants, list):
        return dict(doc)
    return dict(doc, variants=[
        dict(v, settings=masked_settings(v['settings']))
        if isinstance(v, dict) and isinstance(v.get('settings'), dict) else v
        for v in variants])
