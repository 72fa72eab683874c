"""Starting a run of a profile, with the overrides of `plan`, `run`, the panel or the
dashboard: one way for all of them, through the activity guard."""
from typing import Any, Callable, Dict, Iterable, Mapping, Tuple

from .activity import Activity, ActivityGuard
from ..errors import InvalidInput
from ..profiles import Profile, ProfileStore, with_overrides
from ..profiles.placement import placement_hosts
from ..profiles.sweeps import sweeps_of
from ..serial import dump
from .engine import RunEngine
from .plan_text import run_plan_to_text


class RunStarter:
    def __init__(self, *, profiles: ProfileStore, engine: RunEngine, activity: ActivityGuard,
                 known_hosts: Callable[[], Iterable[str]]) -> None:
        self.profiles = profiles
        self.engine = engine
        self.activity = activity
        self.known_hosts = known_hosts

    def profile(self, profile: str, overrides: Mapping[str, Any]) -> Profile:
        """The profile with the overrides given (None or '': as the profile says), each
        checked by with_overrides and named as the CLI names it when refused."""
        given = {k: v for k, v in overrides.items() if v is not None and v != ''}
        placement = given.pop('placement', None)
        hosts = placement_hosts(placement, self.known_hosts)
        return with_overrides(self.profiles.get(profile), placement=hosts, **given)

    def plan(self, profile: str, overrides: Mapping[str, Any]) -> Tuple[Dict[str, Any], str]:
        """What a run would do, as data and as the text `ceph rgwbench plan` prints."""
        chosen = self.profile(profile, overrides)
        plan = self.engine.plan(chosen)
        sweeps = sweeps_of(chosen)
        if sweeps:
            plan['sweeps'] = dump(sweeps)
        return plan, run_plan_to_text(plan)

    def start(self, profile: str, overrides: Mapping[str, Any], *, confirmed: bool,
              force: bool = False) -> str:
        """Start a run unless something else changes the cluster; its id."""
        chosen = self.profile(profile, overrides)
        if not confirmed:
            raise InvalidInput('a run changes settings and restarts daemons of this cluster '
                               'while it lasts; see `ceph rgwbench plan --profile %s` and '
                               'add --yes-i-really-mean-it' % chosen.name)
        return self.activity.start(Activity.RUN, lambda: self.engine.start(chosen, force=force))
