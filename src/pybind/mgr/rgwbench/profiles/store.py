"""Built-in profiles and the operator's own, kept in the module's store."""
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Sequence, Tuple, Union

from ..errors import InvalidInput, NotFound
from ..cluster.kvstore import Store
from ..cluster.secret_options import masked_profile
from ..serial import FLAT, dump, load
from ..settings.base import Setting
from .builtin import BUILTIN_DOCUMENTS, builtin_names, builtin_profiles
from .estimates import estimate_seconds
from .parsing import NAME, parse_profile
from .types import Profile

STORE_PREFIX = 'profile/'
# Values in the config-key store are limited to 64 KiB.
MAX_STORED = 60000


@dataclass(frozen=True)
class ProfileInfo:
    """A profile as `profile ls` and `profile show` present it."""
    profile: Profile = field(metadata=FLAT)
    builtin: bool
    COMPUTED: ClassVar[Tuple[str, ...]] = ('estimated_s',)

    @property
    def estimated_s(self) -> int:
        return round(estimate_seconds(self.profile))

    def shown(self) -> 'ProfileInfo':
        """As read-only users see it: a secret option's value of `config` masked."""
        return ProfileInfo(load(Profile, masked_profile(dump(self.profile))), self.builtin)


class ProfileStore:
    """Built-in profiles and the operator's own, kept under `profile/<name>`."""

    def __init__(self, store: Store, settings: Sequence[Setting]) -> None:
        self.store = store
        self.settings = list(settings)

    def builtins(self) -> List[Profile]:
        return builtin_profiles(self.settings)

    def ls(self) -> List[ProfileInfo]:
        found = [ProfileInfo(p, True) for p in self.builtins()]
        taken = {info.profile.name for info in found}
        for key, text in sorted(self.store.get_store_prefix(STORE_PREFIX).items()):
            name = key[len(STORE_PREFIX):]
            if name in taken:
                continue
            try:
                found.append(ProfileInfo(load(Profile, json.loads(text)), False))
            except (ValueError, KeyError, TypeError):
                continue  # not a profile this module wrote
        return found

    def info(self, name: str) -> ProfileInfo:
        if name in builtin_names():
            return ProfileInfo(self._builtin(name), True)
        stored = self.store.get_store(STORE_PREFIX + name) if NAME.match(name) else None
        if stored is None:
            raise NotFound('no profile %r: `ceph rgwbench profile ls` lists them' % name)
        # Checked again: the settings it names may have changed since it was stored.
        return ProfileInfo(parse_profile(stored, self.settings), False)

    def get(self, name: str) -> Profile:
        return self.info(name).profile

    def set(self, text: Union[str, bytes, Dict[str, Any]]) -> Profile:
        profile = parse_profile(text, self.settings)
        if profile.name in builtin_names():
            raise InvalidInput('profile %s: a built-in profile has this name; choose another '
                               'name' % profile.name)
        stored = json.dumps(dump(profile), separators=(',', ':'))
        if len(stored) > MAX_STORED:
            raise InvalidInput('profile %s: too large to store (%d bytes, at most %d)'
                               % (profile.name, len(stored), MAX_STORED))
        self.store.set_store(STORE_PREFIX + profile.name, stored)
        return profile

    def rm(self, name: str) -> None:
        if name in builtin_names():
            raise InvalidInput('profile %s is built in and cannot be removed' % name)
        if not NAME.match(name) or self.store.get_store(STORE_PREFIX + name) is None:
            raise NotFound('no profile %r: `ceph rgwbench profile ls` lists them' % name)
        self.store.set_store(STORE_PREFIX + name, None)

    def _builtin(self, name: str) -> Profile:
        doc = next(d for d in BUILTIN_DOCUMENTS if d['name'] == name)
        return parse_profile(doc, self.settings)
