"""`rgw-cpus`: each RGW daemon held to N cores, the way cephadm does it: `--cpus=N` among
the RGW spec's `extra_container_args`, which the container runtime turns into a CPU
quota. The operator's other container arguments stay as they are."""
from typing import Any, List, Optional

from ..errors import NotSupported
from .base import PlanView, Setting, SettingContext, SettingNotInEffect
from .changes import Change, service_change
from ..cluster.spec_fields import ARGS, argument_text
from .container_args import takes_container_args

CPUS = '--cpus'
# A CFS quota of less than a hundredth of a core is below what the kernel takes (1 ms
# per 100 ms period); above that, two decimals are what `--cpus` is written with.
MIN_CPUS, MAX_CPUS = 0.01, 1024.0


def cpus_text(cores: float) -> str:
    return '%g' % cores


def cpus_argument(cores: float) -> str:
    return '%s=%s' % (CPUS, cpus_text(cores))


def _is_cpus(text: str) -> bool:
    word = text.strip().split(None, 1)[0] if text.strip() else ''
    return word == CPUS or word.startswith(CPUS + '=')


def with_cpus(args: List[Any], cores: float) -> List[Any]:
    """`args` with the one `--cpus` the setting wants: in the place of the first one there
    (`--cpus=N`, `--cpus N`, or `--cpus` followed by its value as the next item), at the
    end otherwise. Every other argument is kept as the operator wrote it."""
    kept: List[Any] = []
    placed = False
    skip_value = False
    for item in args:
        if skip_value:
            skip_value = False
            continue
        text = argument_text(item).strip()
        if _is_cpus(text):
            skip_value = text == CPUS
            if not placed:
                kept.append(cpus_argument(cores))
                placed = True
            continue
        kept.append(item)
    return kept if placed else kept + [cpus_argument(cores)]


def cpus_of(args: List[Any]) -> Optional[str]:
    """The value of the `--cpus` among these arguments, as written (None: there is none)."""
    for index, item in enumerate(args):
        text = argument_text(item).strip()
        if not _is_cpus(text):
            continue
        if '=' in text.split(None, 1)[0]:
            return text.split(None, 1)[0].split('=', 1)[1]
        rest = text.split(None, 1)[1:]
        if rest:
            return rest[0].strip()
        return argument_text(args[index + 1]).strip() if index + 1 < len(args) else None
    return None


class RGWCpus(Setting):
    """`rgw-cpus`: the cores each RGW daemon may use, the container runtime's `--cpus`."""

    name = 'rgw-cpus'
    values = 'a number of cores from 0.01 to 1024, fractions allowed (0.5, 1.5)'
    summary = "hold each RGW daemon to N cores (--cpus=N in the RGW spec's container args)"

    def parse(self, raw: Any) -> float:
        if isinstance(raw, bool):
            raise self.bad(raw)
        try:
            cores = float(str(raw).strip())
        except ValueError:
            raise self.bad(raw)
        if not MIN_CPUS <= cores <= MAX_CPUS:
            raise self.bad(raw)
        if round(cores, 2) != cores:
            raise self.bad(raw, 'at most two decimals')
        return cores

    def plan(self, ctx: SettingContext, view: PlanView, value: float) -> List[Change]:
        if not takes_container_args(ctx.cluster.spec_from_json):
            raise NotSupported(
                "rgw-cpus: this Ceph release's service spec has no %s (Pacific 16.2.11, "
                'Quincy 17.2.4, Reef and later have it); nothing changed' % ARGS)
        service = ctx.rgw_service()
        spec = view.service_spec(service)
        if spec is None:
            raise self.bad(value, 'no service %s' % service)
        args = list(spec.get(ARGS) or [])
        wanted = with_cpus(args, value)
        if wanted == args:
            return []
        spec[ARGS] = wanted
        return [service_change(service, spec, 'ceph orch apply %s with %s %s (other '
                               'container arguments kept)'
                               % (service, ARGS, cpus_argument(value)))]

    def verify(self, ctx: SettingContext, value: float) -> None:
        spec = ctx.cluster.service_spec(ctx.rgw_service()) or {}
        found = cpus_of(list(spec.get(ARGS) or []))
        try:
            held = found is not None and float(found) == value
        except ValueError:
            held = False
        if not held:
            raise SettingNotInEffect('the spec of %s has %s %s, not %s' % (
                ctx.rgw_service(), CPUS, found or 'none', cpus_text(value)))
