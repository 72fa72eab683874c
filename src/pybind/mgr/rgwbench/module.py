"""The rgwbench mgr module: options, commands and the serve loop; work is delegated."""
import json
import threading
from typing import Any, Dict, List, Optional

from mgr_module import HandleCommandResult, MgrModule, Option

from .cli import RGWBenchCLICommand, read_command
from .formatting import parse_format, render
from .orchestration import orchestrator_state
from .status import build_status, ceph_version_number, status_to_text

ACTIVE_RUN_KEY = 'run/active'


class Module(MgrModule):
    CLICommand = RGWBenchCLICommand
    COMMANDS: List[Any] = []
    MODULE_OPTIONS: List[Option] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopping = threading.Event()

    def serve(self) -> None:
        self._stopping.wait()

    def shutdown(self) -> None:
        self._stopping.set()

    def _active_run(self) -> Optional[Dict[str, Any]]:
        stored = self.get_store(ACTIVE_RUN_KEY)
        return json.loads(stored) if stored else None

    @read_command('rgwbench status')
    def _cmd_status(self, format: str = 'plain') -> HandleCommandResult:
        """Show the module version, the Ceph release, the orchestrator, RGW daemons and runs"""
        fmt = parse_format(format)
        status = build_status(ceph_version_number(self.version), self.release_name,
                              orchestrator_state(self), self.get('service_map'),
                              self._active_run())
        return HandleCommandResult(stdout=render(status, fmt, status_to_text))
