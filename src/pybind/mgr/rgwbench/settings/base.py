"""What every setting under test provides, and the view plans are made against."""
import abc
import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ..errors import InvalidInput
from ..serial import OMIT_NONE, of, view
from ..cluster.kvstore import SecretStore
from .changes import CONFIG, SERVICE, Change
from ..cluster.access import ClusterAccess, NotReady


# Settings keep what they generate (keys, certificates) in the module's store.
Secrets = SecretStore


class PlanView:
    """The cluster as it will be once the changes planned so far are made.

    Settings plan one after another against this view, so that two settings
    that both change the RGW spec (TLS and daemons per host, say) compose.
    """

    def __init__(self, cluster: ClusterAccess) -> None:
        self.cluster = cluster
        self.planned: List[Change] = []

    def config_value(self, who: str, option: str) -> Optional[str]:
        for change in reversed(self.planned):
            if change.kind == CONFIG and change.target == '%s/%s' % (who, option):
                return None if change.after is None else str(change.after)
        return self.cluster.config_value(who, option)

    def service_spec(self, service_name: str) -> Optional[Dict[str, Any]]:
        for change in reversed(self.planned):
            if change.kind == SERVICE and change.target == service_name:
                return copy.deepcopy(change.after)
        return self.cluster.service_spec(service_name)

    def add(self, changes: List[Change]) -> None:
        self.planned.extend(changes)


class ClientSide(NamedTuple):
    """How workloads reach and use the cluster under a variant."""
    rgw: Tuple[str, ...] = ()             # the RGW daemons' URLs to use (none: plain HTTP)
    ingress: Tuple[str, ...] = ()         # the frontends of an ingress the variant put in place
    ca_bundle: Optional[str] = None       # PEM the agents trust for HTTPS
    sse: Dict[str, Any] = {}              # Job fields: sse_c_key, sse_kms_key_id, sse_s3
    targets: Tuple[str, ...] = ()         # where the load went (targets.resolve_targets)
    placement: Optional[str] = None       # the placement target of the workloads' buckets

    def shown(self) -> 'ClientShown':
        return view(ClientShown, self)


@dataclass(frozen=True)
class ClientShown:
    """A ClientSide as run records and `settings show` keep it: no key material."""
    # the first target, as records before there were several had it
    endpoint: Optional[str] = field(metadata=of(lambda c: c.targets[0] if c.targets else None))
    targets: Tuple[str, ...]
    ca_bundle: bool = field(metadata=of(lambda c: bool(c.ca_bundle)))
    sse: List[str] = field(metadata=of(lambda c: sorted(c.sse)))     # the Job fields set
    # a name, not key material: tests and reports use it
    sse_kms_key_id: Optional[str] = field(metadata=of(lambda c: c.sse.get('sse_kms_key_id')))
    placement: Optional[str] = field(default=None, metadata=OMIT_NONE)   # data-pool's target


class SettingContext(NamedTuple):
    """What settings need besides the cluster: the module's options and stored secrets."""
    cluster: ClusterAccess
    rgw_service: Callable[[], str]          # the RGW service under test
    option: Callable[[str], Any]            # a module option's value
    secrets: Secrets
    release: int                            # Ceph's major version
    # --force of the command: change what a setting would otherwise refuse to (a KMS
    # backend other users rely on)
    force: bool = False


@dataclass(frozen=True)
class Chosen:
    """The value a setting puts in place for a value chosen from the cluster (`sse=auto`),
    and why, in one line that a plan shows."""
    value: Any
    why: str


class Setting(abc.ABC):
    """One setting under test: parsed, planned, verified, and how clients use it."""

    name: str = ''
    values: str = ''           # what `parse` takes, for help texts and errors
    summary: str = ''

    @abc.abstractmethod
    def parse(self, raw: Any) -> Any:
        """The value in its normal form; InvalidInput naming the setting when it is wrong."""

    @abc.abstractmethod
    def plan(self, ctx: SettingContext, view: PlanView, value: Any) -> List[Change]:
        """The changes that put the value in place (none when it already is)."""

    def choose(self, ctx: SettingContext, value: Any) -> Optional[Chosen]:
        """For a value that stands for one chosen from the cluster as it is (`auto`), that
        value and why; None: the value is put in place as it is."""
        return None

    def notes(self, ctx: SettingContext, value: Any) -> List[str]:
        """What an operator should know before it is applied."""
        return []

    def verify(self, ctx: SettingContext, value: Any) -> None:
        """Raise SettingNotInEffect when the cluster does not really run with the value."""

    def client(self, ctx: SettingContext, value: Any, client: ClientSide) -> ClientSide:
        """How workloads reach the cluster with this value in place."""
        return client

    def bad(self, raw: Any, why: str = '') -> InvalidInput:
        return InvalidInput('%s: %r is not valid%s (expected %s)' % (
            self.name, raw, ': ' + why if why else '', self.values))


class SettingNotInEffect(InvalidInput):
    """A setting was applied but the running daemons do not show it."""


# How long a setting may take to show after its changes: a daemon reports its
# config to the mgr every few seconds, and a restarted one serves a moment later.
VERIFY_TIMEOUT_S = 60.0


def poll(ctx: SettingContext, what: str, check: Callable[[], Optional[str]]) -> None:
    """Until check() is None, for a short while; SettingNotInEffect with the last problem."""
    try:
        ctx.cluster.wait_for(what, check, timeout_s=VERIFY_TIMEOUT_S)
    except NotReady as e:
        raise SettingNotInEffect(str(e))


def on_off(setting: Setting, raw: Any) -> bool:
    """Booleans as operators write them: on/off, true/false, yes/no, 1/0."""
    text = str(raw).strip().lower()
    if text in ('on', 'true', 'yes', '1', 'enabled'):
        return True
    if text in ('off', 'false', 'no', '0', 'disabled'):
        return False
    raise setting.bad(raw)
