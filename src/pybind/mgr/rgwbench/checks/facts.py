"""The cluster as the checks see it: the view's data, read once and typed."""
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..cluster.rgw_daemons import rgw_daemons
from ..cluster.events import HEALTH_CHECK as OWN_HEALTH_CHECK
from .view import ClusterView

# RGW's default zone names its data pool `<zone>.rgw.buckets.data`.
DATA_POOL_SUFFIX = 'buckets.data'


@dataclass(frozen=True)
class ConfigEntry:
    """One `ceph config dump` entry."""
    section: str
    option: str
    value: str
    mask: str = ''
    runtime: bool = True   # takes effect without a restart

    @property
    def who(self) -> str:
        """The `who` of `ceph config set/rm`."""
        return '%s/%s' % (self.section, self.mask) if self.mask else self.section


@dataclass(frozen=True)
class Daemon:
    """A daemon the central configuration reaches."""
    entity: str   # client.rgw.default.vm.a, osd.0
    host: str
    frontends: Tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.entity.split('.')[0]

    @property
    def label(self) -> str:
        """As `ceph orch ps` names it: rgw.default.vm.a, osd.0."""
        return self.entity[len('client.'):] if self.entity.startswith('client.') \
            else self.entity

    def sections(self) -> List[str]:
        """The config sections that reach it, least specific first."""
        found = ['global', self.kind]
        parts = self.entity.split('.')
        for n in range(1, len(parts) + 1):
            prefix = '.'.join(parts[:n])
            if prefix not in found:
                found.append(prefix)
        return found


@dataclass(frozen=True)
class Pool:
    id: int
    name: str
    size: int
    raw_factor: float          # raw bytes written per client byte
    pg_num: int
    pg_num_target: int
    pgp_num: int
    pgp_num_target: int
    autoscale_mode: str
    applications: Tuple[str, ...]

    @property
    def rgw(self) -> bool:
        return 'rgw' in self.applications or '.rgw.' in self.name or \
            self.name.startswith('.rgw')

    @property
    def rgw_data(self) -> bool:
        return self.rgw and self.name.endswith(DATA_POOL_SUFFIX)


@dataclass(frozen=True)
class OSD:
    id: int
    up: bool
    in_: bool
    reweight: float
    states: Tuple[str, ...]
    kb: int
    kb_avail: int
    rotational: Optional[bool]

    @property
    def used_ratio(self) -> float:
        return 1.0 - self.kb_avail / float(self.kb) if self.kb > 0 else 0.0

    @property
    def holds_data(self) -> bool:
        return self.up and self.in_ and self.reweight > 0 and self.kb > 0


@dataclass(frozen=True)
class HealthCheck:
    code: str
    severity: str
    message: str
    detail: Tuple[str, ...]


@dataclass(frozen=True)
class Facts:
    rgws: Tuple[Daemon, ...]
    osds: Tuple[OSD, ...]
    config: Tuple[ConfigEntry, ...]
    pools: Tuple[Pool, ...]
    nearfull_ratio: float
    full_ratio: float
    health_status: str
    health_checks: Tuple[HealthCheck, ...]
    pg_states: Dict[str, int]               # state -> PGs, over all pools
    max_avail: Dict[str, int]               # pool name -> bytes it can still take
    option_default: Callable[[str], Optional[str]]

    # -- the configuration a daemon runs with ----------------------------------------
    def effective(self, option: str, daemon: Daemon) -> Optional[ConfigEntry]:
        """The central config entry that sets `option` for `daemon` (None: its default).

        The most specific section wins; within one, an entry with a mask that
        matches wins over one without. Masks other than `host:` are taken to match.
        """
        sections = daemon.sections()
        best: Optional[Tuple[float, ConfigEntry]] = None
        for entry in self.config:
            if entry.option != option or entry.section not in sections:
                continue
            if entry.mask.startswith('host:') and entry.mask[5:] != daemon.host:
                continue
            rank = sections.index(entry.section) + (0.5 if entry.mask else 0.0)
            if best is None or rank >= best[0]:
                best = (rank, entry)
        return best[1] if best else None

    def value(self, option: str, daemon: Daemon) -> Optional[str]:
        entry = self.effective(option, daemon)
        return entry.value if entry is not None else self.option_default(option)

    def osd_daemons(self) -> List[Daemon]:
        return [Daemon(entity='osd.%d' % o.id, host='') for o in self.osds if o.up]

    def rgw_or_generic(self) -> List[Daemon]:
        """The RGW daemons; with none in the service map, one that any would be."""
        return list(self.rgws) or [Daemon(entity='client.rgw', host='')]

    def data_osds(self) -> List[OSD]:
        return [o for o in self.osds if o.holds_data]


# -- reading -------------------------------------------------------------------------------

def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _config(dump: Sequence[Dict[str, Any]]) -> Tuple[ConfigEntry, ...]:
    return tuple(ConfigEntry(section=str(e.get('section', '')), option=str(e.get('name', '')),
                             value=str(e.get('value', '')), mask=str(e.get('mask') or ''),
                             runtime=bool(e.get('can_update_at_runtime', True)))
                 for e in dump)


def _raw_factor(pool: Dict[str, Any], ec_profiles: Dict[str, Any]) -> float:
    if _int(pool.get('type'), 1) == 3:  # erasure coded
        profile = ec_profiles.get(str(pool.get('erasure_code_profile', ''))) or {}
        k, m = _int(profile.get('k'), 0), _int(profile.get('m'), 0)
        if k > 0:
            return (k + m) / float(k)
    return float(max(1, _int(pool.get('size'), 1)))


def _pools(osd_map: Dict[str, Any]) -> Tuple[Pool, ...]:
    ec_profiles = osd_map.get('erasure_code_profiles') or {}
    found = []
    for p in osd_map.get('pools') or []:
        pg_num = _int(p.get('pg_num'))
        pgp_num = _int(p.get('pg_placement_num'), pg_num)
        found.append(Pool(
            id=_int(p.get('pool')), name=str(p.get('pool_name', '')),
            size=_int(p.get('size'), 1), raw_factor=_raw_factor(p, ec_profiles),
            pg_num=pg_num, pg_num_target=_int(p.get('pg_num_target'), pg_num),
            pgp_num=pgp_num, pgp_num_target=_int(p.get('pg_placement_num_target'), pgp_num),
            autoscale_mode=str(p.get('pg_autoscale_mode', '')),
            applications=tuple(sorted(p.get('application_metadata') or {}))))
    return tuple(found)


def _osds(osd_map: Dict[str, Any], stats: Sequence[Dict[str, Any]],
          metadata: Dict[str, Dict[str, Any]]) -> Tuple[OSD, ...]:
    by_id = {_int(s.get('osd'), -1): s for s in stats}
    found = []
    for o in osd_map.get('osds') or []:
        osd = _int(o.get('osd'), -1)
        space = by_id.get(osd, {})
        rotational = str((metadata.get(str(osd)) or {}).get('rotational', ''))
        found.append(OSD(
            id=osd, up=bool(_int(o.get('up'))), in_=bool(_int(o.get('in'))),
            reweight=float(o.get('weight', 1.0) or 0.0),
            states=tuple(str(s) for s in o.get('state') or ()),
            kb=_int(space.get('kb')), kb_avail=_int(space.get('kb_avail')),
            rotational={'1': True, '0': False}.get(rotational)))
    return tuple(found)


def _health(health: Dict[str, Any]) -> Tuple[HealthCheck, ...]:
    found = []
    for code, check in sorted((health.get('checks') or {}).items()):
        # The warning a run of this module raises while it goes is no finding about it.
        if check.get('muted') or code == OWN_HEALTH_CHECK:
            continue
        found.append(HealthCheck(
            code=str(code), severity=str(check.get('severity', '')),
            message=str((check.get('summary') or {}).get('message', '')),
            detail=tuple(str(d.get('message', '')) for d in check.get('detail') or ())))
    return tuple(found)


def _rgws(service_map: Dict[str, Any]) -> Tuple[Daemon, ...]:
    # RGW registers in the map under its name without `client.rgw.`.
    return tuple(Daemon(entity='client.rgw.%s' % d.name, host=d.host,
                        frontends=tuple(d.frontends))
                 for d in rgw_daemons(service_map))


def read_facts(view: ClusterView) -> Facts:
    osd_map = view.osd_map()
    health = view.health()
    return Facts(
        rgws=_rgws(view.service_map()),
        osds=_osds(osd_map, view.osd_stats(), view.osd_metadata()),
        config=_config(view.config_dump()),
        pools=_pools(osd_map),
        nearfull_ratio=float(osd_map.get('nearfull_ratio') or 0.85),
        full_ratio=float(osd_map.get('full_ratio') or 0.95),
        health_status=str(health.get('status', '')),
        health_checks=_health(health),
        pg_states={str(k): _int(v) for k, v in (view.pg_summary().get('all') or {}).items()},
        max_avail={str(p.get('name')): _int((p.get('stats') or {}).get('max_avail'))
                   for p in view.df().get('pools') or []},
        option_default=view.option_default)
