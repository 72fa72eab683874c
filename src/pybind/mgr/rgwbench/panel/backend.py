"""What the panel shows and does, taken from the module's own services."""
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..profiles import ProfileStore
from ..results.model import Run, RunSummary
from ..results.store import ResultStore
from ..runs.engine import RunEngine


class ModuleBackend:
    """The panel's view of the module: the same services the CLI commands use."""

    def __init__(self, about: Callable[[], Dict[str, Any]], results: ResultStore,
                 runs: RunEngine, profiles: ProfileStore,
                 plan: Callable[[str, Dict[str, str]], Tuple[Dict[str, Any], str]],
                 start_run: Callable[[str, Dict[str, str]], str]) -> None:
        self.about = about
        self.results = results
        self.engine = runs
        self.profile_store = profiles
        self.plan = plan
        self.start_run = start_run

    def runs(self) -> List[RunSummary]:
        return self.results.summaries()

    def run(self, run_id: str) -> Run:
        return self.results.load(run_id)

    def active_run(self) -> Optional[Dict[str, Any]]:
        return self.engine.active()

    def profiles(self) -> List[Dict[str, Any]]:
        return [info.to_dict() for info in self.profile_store.ls()]

    def abort_run(self) -> str:
        return self.engine.abort()
