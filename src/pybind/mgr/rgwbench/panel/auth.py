"""Who may use the panel: the operator's password, kept hashed, and sessions that expire.

The password is set (`ceph rgwbench panel password set -i <file>`) or
generated (`... password generate`, shown once) through the CLI and kept as
PBKDF2-HMAC-SHA256 with a random salt. A login opens a session: a random
token in an HttpOnly cookie and a CSRF token that every state-changing
request must send back. Sessions live in the active mgr's memory, end after
`panel_session_timeout`, on logout, and all at once when the password
changes; after a failover the operator logs in again.
"""
import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from typing import Callable, Dict, NamedTuple, Optional

from ..errors import InvalidInput
from ..cluster.kvstore import Store

PASSWORD_KEY = 'panel/password'
ITERATIONS = 200000
MIN_LENGTH = 12
MAX_LENGTH = 1024


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode('ascii')


class PasswordStore:
    """The panel's one password, as a salted PBKDF2 hash in the module's store."""

    def __init__(self, store: Store, iterations: int = ITERATIONS) -> None:
        self.store = store
        self.iterations = iterations

    def set(self, password: str) -> None:
        password = password.rstrip('\r\n')
        if len(password) < MIN_LENGTH:
            raise InvalidInput('the panel password needs at least %d characters' % MIN_LENGTH)
        if len(password) > MAX_LENGTH:
            raise InvalidInput('the panel password may have at most %d characters'
                               % MAX_LENGTH)
        salt = secrets.token_bytes(16)
        digest = hashlib.pbkdf2_hmac('sha256', password.encode('utf-8'), salt, self.iterations)
        self.store.set_store(PASSWORD_KEY, json.dumps({
            'scheme': 'pbkdf2-sha256', 'iterations': self.iterations,
            'salt': _b64(salt), 'hash': _b64(digest)}))

    def generate(self) -> str:
        password = secrets.token_urlsafe(18)
        self.set(password)
        return password

    def remove(self) -> bool:
        had = self.store.get_store(PASSWORD_KEY) is not None
        self.store.set_store(PASSWORD_KEY, None)
        return had

    def _stored(self) -> Optional[Dict[str, str]]:
        text = self.store.get_store(PASSWORD_KEY)
        if not text:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if isinstance(data, dict) and data.get('scheme') == 'pbkdf2-sha256':
            return dict(data)
        return None

    def is_set(self) -> bool:
        return self._stored() is not None

    def version(self) -> str:
        """Changes whenever the password does (sessions of an older one end)."""
        stored = self._stored()
        return stored['salt'] if stored else ''

    def verify(self, password: str) -> bool:
        stored = self._stored()
        if stored is None or len(password) > MAX_LENGTH:
            return False
        digest = hashlib.pbkdf2_hmac('sha256', password.encode('utf-8'),
                                     base64.b64decode(stored['salt']),
                                     int(stored['iterations']))
        return hmac.compare_digest(digest, base64.b64decode(stored['hash']))


class Session(NamedTuple):
    token: str
    csrf: str
    expires: float
    password_version: str


class Sessions:
    """Open sessions by token; each one ends at a fixed time after its login."""

    def __init__(self, timeout_s: Callable[[], float],
                 clock: Callable[[], float] = time.time) -> None:
        self.timeout_s = timeout_s
        self.clock = clock
        self._lock = threading.Lock()
        self._by_key: Dict[str, Session] = {}

    @staticmethod
    def _key(token: str) -> str:
        # Kept by hash, so that a lookup does not compare the secret itself.
        return hashlib.sha256(token.encode('utf-8')).hexdigest()

    def open(self, password_version: str) -> Session:
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32),
                          self.clock() + self.timeout_s(), password_version)
        with self._lock:
            now = self.clock()
            for key in [k for k, s in self._by_key.items() if s.expires <= now]:
                del self._by_key[key]
            self._by_key[self._key(session.token)] = session
        return session

    def find(self, token: Optional[str], password_version: str) -> Optional[Session]:
        """The open session of `token`, if it has not expired and the password is the same."""
        if not token:
            return None
        with self._lock:
            key = self._key(token)
            session = self._by_key.get(key)
            if session is None:
                return None
            if session.expires <= self.clock() or session.password_version != password_version:
                del self._by_key[key]
                return None
            return session

    def close(self, token: str) -> None:
        with self._lock:
            self._by_key.pop(self._key(token), None)

    def close_all(self) -> None:
        with self._lock:
            self._by_key.clear()

    def count(self) -> int:
        now = self.clock()
        with self._lock:
            return sum(1 for s in self._by_key.values() if s.expires > now)


def same_token(given: Optional[str], expected: str) -> bool:
    """A constant-time comparison of a token a request sent with the expected one."""
    return bool(given) and hmac.compare_digest(str(given).encode('utf-8'),
                                               expected.encode('utf-8'))
