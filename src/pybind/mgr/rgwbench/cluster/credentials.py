"""The S3 credentials rgwbench's load uses, kept in the module's store, never shown."""
import json
from typing import Any, Dict, Optional

from ..documents import load_document
from ..errors import InvalidInput, NotFound
from .kvstore import SecretStore, get_secret, set_secret

KEY = 'credentials/s3'


def parse_credentials(text: str) -> Dict[str, str]:
    """`access_key`, `secret_key` and an optional `ca_bundle` (PEM), from JSON or YAML."""
    data: Any = load_document(text, 'credentials')
    if not isinstance(data, dict):
        raise InvalidInput('credentials: expected a mapping with access_key and secret_key')
    unknown = sorted(set(data) - {'access_key', 'secret_key', 'ca_bundle'})
    if unknown:
        raise InvalidInput('credentials: unknown field %s' % ', '.join(unknown))
    for field in ('access_key', 'secret_key'):
        if not isinstance(data.get(field), str) or not data[field].strip():
            raise InvalidInput('credentials: %s is missing or empty' % field)
    found = {k: str(v).strip() for k, v in data.items() if k != 'ca_bundle'}
    if data.get('ca_bundle'):
        if 'BEGIN CERTIFICATE' not in str(data['ca_bundle']):
            raise InvalidInput('credentials: ca_bundle is not a PEM certificate')
        found['ca_bundle'] = str(data['ca_bundle'])
    return found


class CredentialStore:
    """Written and read as a secret (kvstore.SecretStore): never through set_store."""

    def __init__(self, store: SecretStore) -> None:
        self.store = store

    def set(self, text: str) -> Dict[str, str]:
        creds = parse_credentials(text)
        set_secret(self.store, KEY, json.dumps(creds))
        return creds

    def get(self) -> Optional[Dict[str, str]]:
        stored = get_secret(self.store, KEY)
        return json.loads(stored) if stored else None

    def require(self) -> Dict[str, str]:
        creds = self.get()
        if creds is None:
            raise NotFound('no S3 credentials: set them with '
                           '`ceph rgwbench credentials set -i <file>`')
        return creds

    def remove(self) -> bool:
        had = self.get() is not None
        set_secret(self.store, KEY, None)
        return had

    def describe(self) -> Dict[str, Any]:
        """What may be shown: never the secret key."""
        creds = self.get()
        if creds is None:
            return {'configured': False}
        return {'configured': True, 'access_key': creds['access_key'],
                'ca_bundle': 'ca_bundle' in creds}


def credentials_to_text(info: Dict[str, Any]) -> str:
    if not info['configured']:
        return 'no credentials stored'
    return 'access key %s%s' % (info['access_key'],
                                ', with a CA bundle' if info['ca_bundle'] else '')
