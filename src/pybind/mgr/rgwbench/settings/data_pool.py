"""`data-pool`: where a variant's workloads store their objects, a pool of its own kind
(`replica:N`, or `ec:K+M[:osd|host]`) behind an RGW placement target of its own.

The setting creates (each journaled, removed again when the variant ends): for EC an
erasure-code profile and its CRUSH rule, then the data pool, then the placement target
in RGW's zonegroup and zone (the default placement's index and extra pools), and
restarts RGW, which reads its zonegroup when it starts. The default placement and every
other pool stay as they are: only the variant's buckets, created with the target's
LocationConstraint, go to the new pool."""
import re
from dataclasses import dataclass
from typing import Any, Dict, List

from ..cluster.storage import CRUSH_RULE, EC_PROFILE, PG_NUM, PLACEMENT, POOL
from ..errors import InvalidInput
from .base import ClientSide, PlanView, Setting, SettingContext, SettingNotInEffect
from .changes import Change, storage_change
from .daemon_settings import rgw_restart

REPLICA = re.compile(r'^replica:(\d+)\Z')
EC = re.compile(r'^ec:(\d+)\+(\d+)(?::(osd|host))?\Z')
MAX_REPLICAS, MIN_K, MIN_M, MAX_CHUNKS = 10, 2, 1, 20
FAILURE_DOMAINS = ('osd', 'host')


@dataclass(frozen=True)
class Layout:
    """A data pool's kind: `size` replicas, or `k` data and `m` coding chunks."""
    size: int = 0
    k: int = 0
    m: int = 0
    failure_domain: str = 'host'

    @property
    def erasure(self) -> bool:
        return self.k > 0

    @property
    def text(self) -> str:
        """The setting's normal form, as runs keep it."""
        if self.erasure:
            return 'ec:%d+%d:%s' % (self.k, self.m, self.failure_domain)
        return 'replica:%d' % self.size

    @property
    def name(self) -> str:
        """What the profile, the rule and the placement target are called."""
        if self.erasure:
            return 'rgwbench-ec%d-%d-%s' % (self.k, self.m, self.failure_domain)
        return 'rgwbench-replica%d' % self.size

    @property
    def pool(self) -> str:
        return self.name.replace('-', '.', 1) + '.data'


def layout_of(text: str) -> Layout:
    """A normal form (DataPool.parse) as a Layout."""
    found = REPLICA.match(text)
    if found:
        return Layout(size=int(found.group(1)))
    found = EC.match(text)
    if not found:
        raise ValueError('not a data-pool value: %r' % text)
    return Layout(k=int(found.group(1)), m=int(found.group(2)),
                  failure_domain=found.group(3) or 'host')


class DataPool(Setting):
    name = 'data-pool'
    values = 'replica:N (1 to 10) or ec:K+M[:osd|host] (K >= 2, M >= 1, K+M <= 20; host ' \
             'by default)'
    summary = ("workloads' buckets in a pool of their own kind, through an RGW placement "
               'target (created, removed with its data at the end)')

    def parse(self, raw: Any) -> str:
        text = str(raw).strip().lower()
        try:
            layout = layout_of(text)
        except ValueError:
            raise self.bad(raw)
        if layout.erasure and (layout.k < MIN_K or layout.m < MIN_M or
                               layout.k + layout.m > MAX_CHUNKS):
            raise self.bad(raw)
        if not layout.erasure and not 1 <= layout.size <= MAX_REPLICAS:
            raise self.bad(raw)
        return layout.text

    def _refuse_what_cannot_be_held(self, ctx: SettingContext, layout: Layout) -> None:
        up = ctx.cluster.up_osds_by_host()
        osds, hosts = sum(up.values()), sum(1 for n in up.values() if n)
        if not layout.erasure:
            needed, have, what = layout.size, osds, 'OSDs up'
        elif layout.failure_domain == 'osd':
            needed, have, what = layout.k + layout.m, osds, 'OSDs up'
        else:
            needed, have, what = layout.k + layout.m, hosts, 'hosts with an OSD up'
        if needed > have:
            raise InvalidInput('%s: %s needs %d %s, the cluster has %d; nothing changed'
                               % (self.name, layout.text, needed, what, have))

    def _refuse_names_in_use(self, ctx: SettingContext, layout: Layout,
                             kinds: List[str]) -> None:
        names = {EC_PROFILE: layout.name, CRUSH_RULE: layout.name, POOL: layout.pool,
                 PLACEMENT: layout.name}
        for kind in kinds:
            if ctx.cluster.storage_state(kind, names[kind]) is not None:
                raise InvalidInput('%s: %s %s exists already (an earlier run\'s, not put '
                                   'back?); it is not the module\'s to change; nothing changed'
                                   % (self.name, kind, names[kind]))

    def plan(self, ctx: SettingContext, view: PlanView, value: str) -> List[Change]:
        layout = layout_of(value)
        self._refuse_what_cannot_be_held(ctx, layout)
        zone = ctx.cluster.zone_placement()
        if not zone.index_pool:
            raise InvalidInput('%s: zone %s has no index pool for its default placement %s; '
                               'nothing changed' % (self.name, zone.zone, zone.default_id))
        kinds = ([EC_PROFILE, CRUSH_RULE] if layout.erasure else []) + [POOL, PLACEMENT]
        self._refuse_names_in_use(ctx, layout, kinds)
        changes: List[Change] = []
        if layout.erasure:
            profile = {'k': str(layout.k), 'm': str(layout.m),
                       'crush-failure-domain': layout.failure_domain}
            changes += [
                storage_change(EC_PROFILE, layout.name, profile,
                               'ceph osd erasure-code-profile set %s %s' % (
                                   layout.name, ' '.join('%s=%s' % kv
                                                         for kv in sorted(profile.items())))),
                storage_change(CRUSH_RULE, layout.name, {'profile': layout.name},
                               'ceph osd crush rule create-erasure %s %s'
                               % (layout.name, layout.name))]
            pool: Dict[str, Any] = {'type': 'erasure', 'profile': layout.name,
                                    'rule': layout.name}
            kind = 'erasure %s %s' % (layout.name, layout.name)
        else:
            pool = {'type': 'replicated', 'size': layout.size}
            kind = 'replicated, size %d' % layout.size
        extra = ' --data-extra-pool %s' % zone.data_extra_pool if zone.data_extra_pool else ''
        return changes + [
            storage_change(POOL, layout.pool, pool,
                           'ceph osd pool create %s %d %s, application rgw (removed with '
                           'its data when the variant ends)' % (layout.pool, PG_NUM, kind)),
            storage_change(PLACEMENT, layout.name, {'data_pool': layout.pool},
                           'radosgw-admin zonegroup placement add --rgw-zonegroup %s '
                           '--placement-id %s; zone placement add --rgw-zone %s --placement-id '
                           '%s --data-pool %s --index-pool %s%s%s'
                           % (zone.zonegroup, layout.name, zone.zone, layout.name,
                              layout.pool, zone.index_pool, extra,
                              '; period update --commit' if zone.realm else '')),
            rgw_restart(ctx)]

    def notes(self, ctx: SettingContext, value: str) -> List[str]:
        layout = layout_of(value)
        return ['buckets of this variant go to pool %s (placement target %s); the pool is '
                'removed with its objects when the variant ends' % (layout.pool, layout.name)]

    def verify(self, ctx: SettingContext, value: str) -> None:
        layout = layout_of(value)
        zone = ctx.cluster.zone_placement()
        if zone.data_pools.get(layout.name) != layout.pool or layout.name not in zone.targets:
            raise SettingNotInEffect('placement target %s is not in zonegroup %s and zone %s '
                                     'with data pool %s' % (layout.name, zone.zonegroup,
                                                            zone.zone, layout.pool))

    def client(self, ctx: SettingContext, value: str, client: ClientSide) -> ClientSide:
        return client._replace(placement=layout_of(value).name)
