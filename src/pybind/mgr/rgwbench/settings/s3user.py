"""A run's own S3 user, when no credentials are stored.

Such a run makes one user for itself in the run's journal, written down
before it is made; the journal's last undo removes it with its buckets and
objects (`radosgw-admin user rm --purge-data`) at the run's end, after a
failure or an abort, and, after a mgr failover, when the module starts again
and puts the unfinished journal back. Each variant's own undo leaves it.
Its keys stay in memory while the run goes: never in the journal, the store
or a log.
"""
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ..errors import Busy
from .journal import Journal
from ..cluster.rgw_admin import S3Keys, UserAdmin
from .changes import user_change

UID_PREFIX = 'rgwbench-'


@dataclass(frozen=True)
class UserPlan:
    """Which S3 user a run signs with, as `plan` says it."""
    temporary: bool
    uid: Optional[str]


def user_plan(stored: Optional[Dict[str, str]]) -> UserPlan:
    if stored is not None:
        return UserPlan(temporary=False, uid=None)
    return UserPlan(temporary=True, uid=user_id('<run id>'))


def user_plan_to_text(plan: Dict[str, Any]) -> str:
    if not plan['temporary']:
        return 'S3 user: the stored credentials'
    return ('S3 user: none stored; the run creates a temporary one, %s, and removes '
            'it with its data at its end' % plan['uid'])


def user_id(journal_id: str) -> str:
    """The user of a run's journal (`rgwbench-<run id>`): it says what made it."""
    return UID_PREFIX + journal_id


def display_name(run_id: str) -> str:
    return 'rgwbench run %s: temporary, removed with its data by the run' % run_id


def create_user(journal: Journal, admin: UserAdmin, run_id: str) -> S3Keys:
    """A new user for the journal's changes, written down before it is made.

    Refused when the user exists already: the journal's undo removes the user
    with its data, and must never meet a user that was not made here.
    """
    uid = user_id(journal.journal_id)
    if admin.user_exists(uid):
        raise Busy('S3 user %s exists already; rgwbench only removes users it made' % uid)
    change = user_change(uid, display_name(run_id))
    step = journal.record(change.kind, change.target, None, change.after)
    journal.check_owner('make the change %s' % change.summary)
    keys = admin.create_user(uid, change.after['display_name'])
    journal.made(step)
    return keys
