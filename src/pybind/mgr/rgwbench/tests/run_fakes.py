"""Runs and loads for tests: the engine over a fake cluster whose RGWs are S3 stubs, agents
as threads (Setup), and a load service as the module builds one."""
import logging
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from rgwbench.tests.agent_fakes import ThreadLauncher
from checks_fakes import FakeView
from fixtures import MemoryStore
from rgwbench.tests.fixtures import FakeCluster
from rgwbench.tests.settings_fakes import applier

from rgwbench.agents.channel import AgentChannel
from rgwbench.agents.launchers import AgentLauncher
from rgwbench.agents.workload_runs import AgentWorkloads
from rgwbench.checks.during import PgWatch
from rgwbench.checks.gate import RunChecks
from rgwbench.cluster.credentials import CredentialStore
from rgwbench.cluster.rgw_daemons import Endpoint, RGWDaemon
from rgwbench.cluster.sampled_daemons import ServerDaemons
from rgwbench.profiles import parse_profile
from rgwbench.results.store import ResultStore
from rgwbench.runs.engine import RunCluster, RunEngine
from rgwbench.runs.loads import LoadService
from rgwbench.settings.registry import all_settings
from rgwbench.tests.s3stub import StubS3


PROFILE = {'name': 'tiny', 'baseline': 'as-is',
           'variants': [{'name': 'as-is', 'settings': {}},
                        {'name': 'threads', 'settings': {
                            'config': {'client.rgw/rgw_thread_pool_size': 128}}}],
           # In open loop: a few requests, each of them ending in the window even when CI
           # leaves the test a sliver of a core (closed, it took a core for nothing more).
           'workloads': [{'name': 'put-4KiB', 'op': 'put', 'size': '4KiB', 'concurrency': 2,
                          'duration': 2, 'warmup': 0, 'rate': 40}]}


class Events:
    def __init__(self) -> None:
        self.seen: List[Tuple[str, ...]] = []

    def started(self, run_id: str, profile: str) -> None:
        self.seen.append(('started', run_id))

    def update(self, run_id: str, message: str, fraction: float,
               changed: List[str]) -> None:
        assert 0.0 <= fraction < 1.0
        self.seen.append(('update', message, ' / '.join(changed)))

    def finished(self, run_id: str, state: str, message: str) -> None:
        self.seen.append(('finished', state))


class ServingCluster(FakeCluster):
    """The fake cluster whose RGW daemons (one per host, or as rgw-per-host says) serve S3.

    Daemon i of the host is served by stub i of `stubs`.
    """

    def __init__(self, stubs: Sequence[StubS3]) -> None:
        super().__init__()
        self.stubs = stubs

    def services(self, service_type: Optional[str] = None) -> List[Dict[str, Any]]:
        return [spec for spec in self.specs.values()
                if service_type in (None, spec['service_type'])]

    def rgw_daemons(self) -> List[RGWDaemon]:
        return [RGWDaemon(d.daemon_id, 'h1', 'default', version=None, frontends=[],
                          endpoints=[Endpoint('http', '127.0.0.1',
                                              self.stubs[i % len(self.stubs)].port)],
                          pid=7 + i, key=str(4100 + i))
                for i, d in enumerate(self.daemons('rgw.default'))]


class Setup:
    def __init__(self, stub: StubS3, certificate: Tuple[str, str],
                 behaviour: Optional[Dict[str, str]] = None,
                 more_rgws: Sequence[StubS3] = (), checks: Optional[RunChecks] = None,
                 events: Optional[Events] = None,
                 rgw_daemons: Callable[[], int] = lambda: 1,
                 step_times: Callable[[], Mapping[str, float]] = dict) -> None:
        self.store = MemoryStore()
        self.cluster = ServingCluster([stub] + list(more_rgws))
        self.events = events or Events()
        self.launchers: List[ThreadLauncher] = []
        self.results = ResultStore(self.store, lambda: 10)
        credentials = CredentialStore(self.store)
        credentials.set('access_key: AK\nsecret_key: SK')

        def launcher(placement: Optional[List[str]]) -> ThreadLauncher:
            made = ThreadLauncher(placement or ['mgr-host'], behaviour)
            self.launchers.append(made)
            return made
        self.keep_objects = False
        log = logging.getLogger('test')
        self.engine = RunEngine(
            store=self.store, results=self.results, credentials=credentials,
            cluster=RunCluster(make_applier=lambda: applier(self.cluster),
                               ceph_version=lambda: '16.2.15', checks=checks,
                               rgw_daemons=rgw_daemons, step_times=step_times),
            agents=AgentWorkloads(
                make_channel=lambda: AgentChannel('127.0.0.1', 0, *certificate),
                server_daemons=ServerDaemons, log=log, keep_objects=lambda: self.keep_objects,
                new_pg_watch=(lambda: None) if checks is None else checks.pg_watch),
            make_launcher=launcher, events=self.events, log=log)

    def profile(self, **changes: Any) -> Any:
        return parse_profile(dict(PROFILE, **changes), all_settings())

    def fail_from(self, progress_starting: str, call: str) -> None:
        """The fake cluster fails `call` from the run's first progress message that starts
        with `progress_starting` on."""
        progress = self.events.update

        def update(run_id: str, message: str, fraction: float, changed: List[str]) -> None:
            if message.startswith(progress_starting):
                self.cluster.fail_on = call
            progress(run_id, message, fraction, changed)
        self.events.update = update  # type: ignore[method-assign]


class Log:
    def exception(self, *args: Any) -> None:
        pass

    def warning(self, *args: Any) -> None:
        pass

    def info(self, *args: Any) -> None:
        pass


class BlockingLauncher:
    """Never lets its agent start, so that a load stays in progress."""
    started_by = 'mgr-process'
    samplers: Sequence[str] = ()

    def __init__(self) -> None:
        self.removed = threading.Event()

    def agent_ids(self) -> List[str]:
        return ['host-a']

    def launch(self, config: Dict[str, Any]) -> None:
        pass

    def problem(self, agent: str) -> Optional[str]:
        return None

    def remove(self) -> None:
        self.removed.set()

    def leftovers(self) -> Dict[str, Any]:
        return {'service': 'container.rgwbench-agent'}


def load_service(store: MemoryStore, endpoints: List[str],
                 make_launcher: Callable[[Optional[List[str]]], AgentLauncher],
                 make_channel: Callable[[], Any],
                 checks: Optional[RunChecks] = None) -> LoadService:
    """A load service built as the module builds one (PGs watched when `checks` are on)."""
    log = Log()
    agents = AgentWorkloads(make_channel=make_channel, server_daemons=ServerDaemons, log=log,
                            new_pg_watch=(lambda: None) if checks is None else checks.pg_watch)
    return LoadService(store=store, credentials=CredentialStore(store),
                       endpoints=lambda: endpoints, agents=agents, make_launcher=make_launcher,
                       log=log, checks=checks)


def load_ended(loads: LoadService, within_s: float = 60.0) -> bool:
    """Whether the load in progress, if any, ended within `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while loads.active() is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def checks_on(view: FakeView) -> RunChecks:
    return RunChecks(view=view, new_pg_watch=lambda: PgWatch(view.pg_summary, every_s=0.05))
