"""S3 users and buckets made and removed with radosgw-admin, run by the mgr with its own
identity.

radosgw-admin makes the keys and prints them on its standard output, the
only place they are read from: they never go into an argv, an exception
message or a log line. Its standard error is quoted in errors (it carries
no keys).

A workload's buckets are removed here with their objects at once
(`--bypass-gc`): deleted over S3, their data would stay on the OSDs until
RGW's garbage collection, hours later (`rgw_gc_obj_min_wait`), and the
next workload would find the cluster that much fuller. radosgw-admin
refuses that flag in a multisite zonegroup (tails there go through GC),
and the caller then deletes over S3.
"""
import errno
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol, Tuple

from ..errors import RGWBenchError

CREATE_TIMEOUT_S = 60
# It runs as the mgr: without these it would try the mgr's own admin socket and
# write into the mgr's log file.
QUIET = ['--admin-socket', '', '--log-file', '/dev/null']
# What `user info` says of a user that does not exist (its exit status is EINVAL).
NO_SUCH_USER = 'no user info saved'
# RGW's ERR_NO_SUCH_BUCKET, as radosgw-admin prints it and (mod 256) exits with.
NO_SUCH_BUCKET = 2002
# Only buckets rgwbench names are ever removed with their objects.
BUCKET_PREFIX = 'rgwbench-'
# Removing a user's data goes object by object.
REMOVE_TIMEOUT_S = 1800
# A bucket's removal is given this, and this much more for each object it holds, up to
# REMOVE_TIMEOUT_S: a radosgw-admin that hangs (CI once saw `bucket list` hang for half an
# hour) holds the workload's clean-up no longer than that before the S3 clean-up runs.
BUCKET_RM_BASE_S = 60
BUCKET_RM_PER_OBJECT_S = 0.02


@dataclass(frozen=True)
class S3Keys:
    """A user's keys, as the load signs with them; the secret is left out of repr."""
    uid: str
    access_key: str
    secret_key: str = field(repr=False)

    def credentials(self) -> Dict[str, str]:
        """The keys as the stored credentials look (what jobs are made from)."""
        return {'access_key': self.access_key, 'secret_key': self.secret_key}


@dataclass(frozen=True)
class BucketShards:
    """A bucket's index shards and objects, as `bucket stats` says them."""
    bucket: str
    shards: Optional[int]
    objects: int


@dataclass(frozen=True)
class QueuedReshard:
    """A bucket in RGW's reshard queue: its index shards now and the shards it is to get
    (None: the entry does not say)."""
    bucket: str
    shards: Optional[int]
    new_shards: Optional[int]

    @property
    def reduces(self) -> bool:
        """A reshard to fewer shards (Tentacle, not Pacific: a bucket that lost most of its
        objects)."""
        return self.shards is not None and self.new_shards is not None and \
            self.new_shards < self.shards


class UserAdmin(Protocol):
    """Makes and removes S3 users (radosgw-admin through the mgr, or a fake in tests)."""

    def user_exists(self, uid: str) -> bool: ...

    def create_user(self, uid: str, display_name: str) -> S3Keys: ...

    def remove_user(self, uid: str) -> None: ...


class BucketAdmin(Protocol):
    """Removes a bucket with its objects, their space freed at once (or a fake in tests)."""

    def remove_bucket(self, bucket: str) -> Optional[int]: ...


class ToolRunner(Protocol):
    """What MgrModule offers to run a Ceph tool as the mgr (its keyring and name)."""

    def tool_exec(self, args: List[str], timeout: int = 10,
                  stdin: Optional[bytes] = None) -> Tuple[int, str, str]: ...

    def get_ceph_conf_path(self) -> str: ...


class RadosgwAdminError(RGWBenchError):
    pass


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ''


def keys_from_output(uid: str, stdout: str) -> S3Keys:
    """The user's S3 keys from what `radosgw-admin user create` printed."""
    try:
        info: Any = json.loads(stdout)
        found = [k for k in info.get('keys') or [] if k.get('user') == uid] \
            or list(info.get('keys') or [])
        return S3Keys(uid=uid, access_key=str(found[0]['access_key']),
                      secret_key=str(found[0]['secret_key']))
    except (ValueError, AttributeError, LookupError, TypeError):
        # What it printed is not quoted: it may hold the keys.
        raise RadosgwAdminError('radosgw-admin user create --uid %s printed no S3 keys' % uid)


class RadosgwAdmin:
    """radosgw-admin through the mgr's `tool_exec`: the mgr's keyring, name and ceph.conf."""

    def __init__(self, mgr: ToolRunner, *, create_timeout_s: int = CREATE_TIMEOUT_S,
                 remove_timeout_s: int = REMOVE_TIMEOUT_S) -> None:
        self.mgr = mgr
        self.create_timeout_s = create_timeout_s
        self.remove_timeout_s = remove_timeout_s

    def _subcommand(self, args: List[str], timeout_s: int) -> Tuple[int, str, str]:
        # tool_exec takes the tool's name off the list it is given: a new list each time.
        argv = ['radosgw-admin', '-c', self.mgr.get_ceph_conf_path()] + QUIET + args
        return self.mgr.tool_exec(argv, timeout=timeout_s)

    def _failed(self, what: str, ret: int, stderr: str) -> RadosgwAdminError:
        return RadosgwAdminError('`radosgw-admin %s` failed (%d): %s' % (
            what, ret, _last_line(stderr) or 'no message'), abs(ret) or errno.EIO)

    def user_exists(self, uid: str) -> bool:
        # The output (the user's keys, if it exists) is not read.
        ret, _, err = self._subcommand(['user', 'info', '--uid', uid], self.create_timeout_s)
        if ret == 0:
            return True
        if abs(ret) == errno.ENOENT or NO_SUCH_USER in err:
            return False
        raise self._failed('user info --uid %s' % uid, ret, err)

    def create_user(self, uid: str, display_name: str) -> S3Keys:
        ret, out, err = self._subcommand(['user', 'create', '--uid', uid,
                                          '--display-name', display_name],
                                         self.create_timeout_s)
        if ret != 0:
            raise self._failed('user create --uid %s' % uid, ret, err)
        return keys_from_output(uid, out)

    def remove_user(self, uid: str) -> None:
        """Remove the user with its buckets and objects; a user already gone is fine."""
        if not self.user_exists(uid):
            return
        what = 'user rm --uid %s --purge-data' % uid
        ret, _, err = self._subcommand(['user', 'rm', '--uid', uid, '--purge-data'],
                                       self.remove_timeout_s)
        if ret != 0:
            raise self._failed(what, ret, err)
        if self.user_exists(uid):
            raise RadosgwAdminError('`radosgw-admin %s` left the user in place' % what)

    def remove_bucket(self, bucket: str) -> Optional[int]:
        """Remove one of rgwbench's buckets with its objects, bypassing RGW's GC: how many
        objects it held, or None when there was no such bucket."""
        if not bucket.startswith(BUCKET_PREFIX):
            raise RadosgwAdminError('bucket %s is not one rgwbench made' % bucket, errno.EPERM)
        stats = self._bucket_stats(bucket)
        if stats is None:
            return None
        objects = objects_in(stats)
        what = 'bucket rm --bucket %s --purge-objects --bypass-gc' % bucket
        timeout_s = min(self.remove_timeout_s,
                        int(BUCKET_RM_BASE_S + objects * BUCKET_RM_PER_OBJECT_S))
        ret, _, err = self._subcommand(['bucket', 'rm', '--bucket', bucket, '--purge-objects',
                                        '--bypass-gc'], timeout_s)
        if ret != 0:
            raise self._failed(what, ret, err)
        # Writes that land while it removes the objects keep the bucket (a cut-off run's
        # agent may still be sending): it must be gone, or the caller deletes over S3.
        if self._bucket_stats(bucket) is not None:
            raise RadosgwAdminError('`radosgw-admin %s` left the bucket in place' % what)
        return objects

    def _bucket_stats(self, bucket: str) -> Optional[str]:
        """What `bucket stats` prints of the bucket, or None when there is no such bucket."""
        ret, stats, err = self._subcommand(['bucket', 'stats', '--bucket', bucket],
                                           self.create_timeout_s)
        if ret == 0:
            return stats
        if abs(ret) in (errno.ENOENT, NO_SUCH_BUCKET, NO_SUCH_BUCKET % 256) or \
                '(%d)' % NO_SUCH_BUCKET in err:
            return None
        raise self._failed('bucket stats --bucket %s' % bucket, ret, err)

    def bucket_shards(self, bucket: str) -> Optional[BucketShards]:
        """A bucket's index shards and objects now (None: there is no such bucket)."""
        stats = self._bucket_stats(bucket)
        if stats is None:
            return None
        return BucketShards(bucket=bucket, shards=shards_in(stats), objects=objects_in(stats))

    def reshard_queue(self) -> List[QueuedReshard]:
        """The buckets in RGW's reshard queue (`reshard list`)."""
        ret, out, err = self._subcommand(['reshard', 'list'], self.create_timeout_s)
        if ret != 0:
            raise self._failed('reshard list', ret, err)
        try:
            entries: Any = json.loads(out or '[]')
            # tentative_: the reshard thread may choose another count (Pacific 16.2.15 and
            # Tentacle print it so; earlier releases new_num_shards)
            return [QueuedReshard(bucket=str(e['bucket_name']),
                                  shards=count_in(e, 'old_num_shards'),
                                  new_shards=count_in(e, 'tentative_new_num_shards',
                                                      'new_num_shards'))
                    for e in entries if e.get('bucket_name')]
        except (ValueError, AttributeError, TypeError, KeyError):
            raise RadosgwAdminError('`radosgw-admin reshard list` printed no list')


def count_in(entry: Dict[str, Any], *keys: str) -> Optional[int]:
    """The first of `keys` an entry has, as a whole number (None: none of them)."""
    for key in keys:
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def shards_in(stats: str) -> Optional[int]:
    """How many index shards `bucket stats` says the bucket has (None: it does not say)."""
    try:
        found = json.loads(stats).get('num_shards')
        return None if found is None else int(found)
    except (ValueError, AttributeError, TypeError):
        return None


def objects_in(stats: str) -> int:
    """How many objects `bucket stats` counts (0 when it does not say)."""
    try:
        usage = json.loads(stats).get('usage') or {}
        return int((usage.get('rgw.main') or {}).get('num_objects') or 0)
    except (ValueError, AttributeError, TypeError):
        return 0


@dataclass(frozen=True)
class ZonePlacement:
    """The zonegroup and zone RGW serves, with its default placement's pools."""
    zonegroup: str
    zone: str
    realm: bool                  # a realm (and so a period to commit) is configured
    default_id: str              # the zonegroup's default placement target
    index_pool: str              # the default placement's
    data_extra_pool: str
    targets: Tuple[str, ...]     # the zonegroup's placement ids
    data_pools: Dict[str, str]   # a zone placement id: its STANDARD data pool


def zone_placement(zonegroup: Dict[str, Any], zone: Dict[str, Any]) -> ZonePlacement:
    """What `zonegroup get` and `zone get` say of the placement targets."""
    pools = {str(p.get('key')): dict(p.get('val') or {})
             for p in zone.get('placement_pools') or []}
    default_id = str(zonegroup.get('default_placement') or 'default-placement')
    default = pools.get(default_id) or {}
    data = {key: str(((val.get('storage_classes') or {}).get('STANDARD') or {})
                     .get('data_pool') or val.get('data_pool') or '')
            for key, val in pools.items()}
    names = {str(t.get('name')) for t in zonegroup.get('placement_targets') or []}
    return ZonePlacement(
        zonegroup=str(zonegroup.get('name') or 'default'),
        zone=str(zone.get('name') or 'default'), realm=bool(zonegroup.get('realm_id')),
        default_id=default_id, index_pool=str(default.get('index_pool') or ''),
        data_extra_pool=str(default.get('data_extra_pool') or ''),
        targets=tuple(sorted(names)), data_pools=data)


class ZoneAdmin(Protocol):
    """Reads and changes the placement targets of RGW's zonegroup and zone."""

    def zone_placement(self) -> ZonePlacement: ...

    def add_placement(self, placement_id: str, data_pool: str) -> None: ...

    def remove_placement(self, placement_id: str) -> None: ...


class RadosgwZones(RadosgwAdmin):
    """Placement targets with radosgw-admin (the zonegroup's and the zone's, together)."""

    def _checked(self, args: List[str]) -> str:
        ret, out, err = self._subcommand(args, self.create_timeout_s)
        if ret != 0:
            raise self._failed(' '.join(args), ret, err)
        return out

    def _json(self, args: List[str]) -> Dict[str, Any]:
        out = self._checked(args)
        try:
            return dict(json.loads(out))
        except (ValueError, TypeError):
            raise RadosgwAdminError('`radosgw-admin %s` printed no JSON' % ' '.join(args))

    def zone_placement(self) -> ZonePlacement:
        return zone_placement(self._json(['zonegroup', 'get']), self._json(['zone', 'get']))

    def _commit(self, found: ZonePlacement) -> None:
        if found.realm:
            self._checked(['period', 'update', '--commit'])

    def add_placement(self, placement_id: str, data_pool: str) -> None:
        found = self.zone_placement()
        self._checked(['zonegroup', 'placement', 'add', '--rgw-zonegroup', found.zonegroup,
                       '--placement-id', placement_id])
        args = ['zone', 'placement', 'add', '--rgw-zone', found.zone, '--placement-id',
                placement_id, '--data-pool', data_pool, '--index-pool', found.index_pool]
        if found.data_extra_pool:
            args += ['--data-extra-pool', found.data_extra_pool]
        self._checked(args)
        self._commit(found)

    def remove_placement(self, placement_id: str) -> None:
        """Remove it from the zone, then the zonegroup; a target already gone is fine."""
        found = self.zone_placement()
        if placement_id in found.data_pools:
            self._checked(['zone', 'placement', 'rm', '--rgw-zone', found.zone,
                           '--placement-id', placement_id])
        if placement_id in found.targets:
            self._checked(['zonegroup', 'placement', 'rm', '--rgw-zonegroup',
                           found.zonegroup, '--placement-id', placement_id])
        if placement_id in found.data_pools or placement_id in found.targets:
            self._commit(found)
