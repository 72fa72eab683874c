"""Where load agents run: a process on the active mgr's host, or a container
service that the orchestrator places on chosen hosts."""
import base64
import errno
import functools
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import time
import uuid
from typing import Any, Dict, List, Optional, Protocol, Sequence

from ..errors import RGWBenchError
from ..loadgen import bundle

AGENT_SERVICE_ID = 'rgwbench-agent'
AGENT_SERVICE = 'container.' + AGENT_SERVICE_ID
AGENT_MOUNT = '/var/lib/rgwbench-agent'
# A local agent's folder: this prefix and 12 hex digits, in the temporary folder.
LOCAL_FOLDER_PREFIX = 'rgwbench-agent-'
_LOCAL_FOLDER = re.compile(r'rgwbench-agent-[0-9a-f]{12}\Z')
# For the container runtime (CustomContainerSpec.args, in every release from Pacific
# on): the host's network, and its processes, so that the agent finds the RGW and
# HAProxy daemons of its host in /proc by their names. cephadm runs every container
# with `--init` (mgr/cephadm/container_init), which podman refuses beside
# `--pid=host` ("PID namespace isn't private"): the spec's arguments come after
# cephadm's, so `--init=false` turns it off for the agents only.
# And no privilege: the agent reads the stat, status, cmdline, comm and cgroup files of
# other processes in /proc, which every user may read (it never reads
# /proc/<pid>/io, which would need CAP_SYS_PTRACE or the daemon's own uid), sends S3
# over ordinary sockets and writes only its own folder and the temporary one. So it
# runs with no capability at all, cannot gain one, and as the user that owns its files:
# cephadm writes a custom container's files and folders owned by the spec's uid and gid
# (CustomContainerSpec's default, 65534: nobody, which every image can run as).
AGENT_UID = 65534
CONTAINER_ARGS = ('--net=host', '--pid=host', '--init=false', '--cap-drop=ALL',
                  '--security-opt=no-new-privileges', '--user=%d:%d' % (AGENT_UID, AGENT_UID))
# What the orchestrator says of a live agent's container: cephadm says `starting`
# from its deployment until its next refresh of the host, minutes later.
ALIVE_STATUSES = (None, 'running', 'starting')
# The files of the agents' spec, as JSON: the rest of the spec fits in what 64 KiB leaves.
MAX_SPEC_FILES_BYTES = 60000

_BOOTSTRAP = '''\
# rgwbench load agent: unpacks the load engine and runs it as an agent.
import base64, io, os, shutil, sys, tarfile, tempfile
ENGINE = """%s"""
try:  # beside this file, so that removing the agent's folder removes the engine too
    where = tempfile.mkdtemp(prefix="engine-", dir=os.path.dirname(os.path.abspath(__file__)))
except OSError:
    where = tempfile.mkdtemp(prefix="rgwbench-engine-")
try:
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(ENGINE)), mode="r:xz") as tar:
        tar.extractall(where)
    sys.path.insert(0, where)
    from loadgen.agent import main
    status = main(sys.argv[1:])
finally:
    shutil.rmtree(where, ignore_errors=True)
sys.exit(status)
'''


@functools.lru_cache(maxsize=1)
def bootstrap_script() -> str:
    """One Python file carrying the engine, for hosts that have only python3 (made once
    per mgr: it takes about 0.3 CPU s, and the sources do not change while it runs).

    The engine travels as text (xz-compressed, base64) because container
    service files are text, and without its comments because orchestrator specs
    are kept in values of at most 64 KiB (see MAX_SPEC_FILES_BYTES).
    """
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode='w:xz') as tar:
        for name, source in bundle.package_sources(bundle.needed_by('agent.py')):
            data = source.encode('utf-8')
            member = tarfile.TarInfo('loadgen/' + name)
            member.size, member.mode = len(data), 0o644
            tar.addfile(member, io.BytesIO(data))
    return _BOOTSTRAP % base64.b64encode(packed.getvalue()).decode()


def spec_files(config: Dict[str, Any]) -> Dict[str, str]:
    """The files of the agents' container service: the engine and its configuration.

    The orchestrator keeps a spec in one value of the cluster's config-key store,
    at most 64 KiB (mon_config_key_max_entry_size); a larger one is only logged as
    not stored, and a mgr that takes over then knows nothing of the agents.
    """
    files = {'agent/agent.py': bootstrap_script(), 'agent/agent.json': json.dumps(config)}
    size = len(json.dumps(files))
    if size > MAX_SPEC_FILES_BYTES:
        raise RGWBenchError('the agents\' container spec would be %d bytes; the '
                            'orchestrator keeps at most 64 KiB a spec' % size, errno.EFBIG)
    return files


MGR_PROCESS, ORCHESTRATOR = 'mgr-process', 'orchestrator'


class AgentLauncher(Protocol):
    # How the agents are started: MGR_PROCESS or ORCHESTRATOR.
    started_by: str

    @property
    def samplers(self) -> Sequence[str]:
        """Those of agent_ids() that only sample their host's RGW and HAProxy daemons."""

    def agent_ids(self) -> List[str]: ...

    def launch(self, config: Dict[str, Any]) -> None: ...

    def problem(self, agent: str) -> Optional[str]:
        """What is known of an agent that did not report, if anything."""

    def remove(self) -> None: ...

    def leftovers(self) -> Dict[str, Any]:
        """What would be left if the mgr vanished now (see `remove_leftovers`)."""


def loading_agents(launcher: AgentLauncher) -> List[str]:
    """The agents of a launcher that send load (not those that only sample)."""
    return [a for a in launcher.agent_ids() if a not in launcher.samplers]


class LocalLauncher:
    """One agent, a process on the active mgr's host, working in a folder of its own."""
    started_by = MGR_PROCESS
    samplers: Sequence[str] = ()

    def __init__(self, host: Optional[str] = None) -> None:
        self.host = host or socket.gethostname()
        # Known before the launch, so that it can be journaled first.
        self.folder = os.path.join(tempfile.gettempdir(),
                                   LOCAL_FOLDER_PREFIX + uuid.uuid4().hex[:12])
        self.proc: Optional[subprocess.Popen] = None

    def agent_ids(self) -> List[str]:
        return [self.host]

    def leftovers(self) -> Dict[str, Any]:
        # The host too: a mgr on another host cannot end this process.
        return {'folder': self.folder, 'host': self.host}

    def launch(self, config: Dict[str, Any]) -> None:
        os.mkdir(self.folder, 0o700)
        with open(os.path.join(self.folder, 'agent.py'), 'w') as f:
            f.write(bootstrap_script())
        with open(os.path.join(self.folder, 'agent.json'), 'w') as f:
            json.dump(config, f)
        os.chmod(os.path.join(self.folder, 'agent.json'), 0o600)
        with open(os.path.join(self.folder, 'agent.log'), 'wb') as out:
            self.proc = subprocess.Popen(
                ['python3', 'agent.py', '--config', 'agent.json'], cwd=self.folder,
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env=dict(os.environ, NODE_NAME=self.host))

    def problem(self, agent: str) -> Optional[str]:
        if self.proc is None or self.proc.poll() is None:
            return None
        try:
            with open(os.path.join(self.folder, 'agent.log'), errors='replace') as f:
                tail = f.read().strip().splitlines()[-1:]
        except OSError:
            tail = []
        return 'agent process exited with status %d%s' % (
            self.proc.returncode, (': ' + tail[0]) if tail else '')

    def remove(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


class Orchestrator(Protocol):
    """The orchestrator calls an OrchestratorLauncher makes (OrchestratorClientMixin)."""

    def apply(self, specs: List[Any], no_overwrite: bool = False) -> Any: ...

    def remove_service(self, service_name: str, force: bool = False) -> Any: ...

    def list_daemons(self, service_name: Optional[str] = None, daemon_type: Optional[str] = None,
                     daemon_id: Optional[str] = None, host: Optional[str] = None,
                     refresh: bool = False) -> Any: ...


class OrchestratorLauncher:
    """Agents as a custom container service on the given hosts.

    The container runs python3 from the image (the cluster's Ceph image has
    it) on the engine shipped in the spec's files.
    """
    started_by = ORCHESTRATOR

    def __init__(self, orch: Orchestrator, hosts: List[str], image: str,
                 raise_if_exception: Any, samplers: Sequence[str] = ()) -> None:
        self.orch = orch
        # The agents that load, then those that only sample (hosts of RGW or HAProxy
        # daemons that the placement leaves without an agent).
        self.samplers = [h for h in samplers if h not in hosts]
        self.hosts = list(hosts) + self.samplers
        self.image = image
        self.raise_if_exception = raise_if_exception
        self.service_name = AGENT_SERVICE

    def agent_ids(self) -> List[str]:
        return list(self.hosts)

    def leftovers(self) -> Dict[str, Any]:
        return {'service': self.service_name}

    def spec(self, config: Dict[str, Any]) -> Any:
        from ceph.deployment.service_spec import CustomContainerSpec, PlacementSpec
        # `ceph orch ls --export` shows the spec to read-only users: no code in it (its
        # agents enrol from their hosts' addresses, see AgentRun.enrol).
        config = {k: v for k, v in config.items() if k != 'codes'}
        return CustomContainerSpec(
            service_id=AGENT_SERVICE_ID, placement=PlacementSpec(hosts=self.hosts),
            image=self.image, entrypoint='python3',
            extra_entrypoint_args=[AGENT_MOUNT + '/agent.py',
                                   '--config', AGENT_MOUNT + '/agent.json'],
            args=list(CONTAINER_ARGS), dirs=['agent'], uid=AGENT_UID, gid=AGENT_UID,
            files=spec_files(config),
            volume_mounts={'agent': AGENT_MOUNT})

    def launch(self, config: Dict[str, Any]) -> None:
        self.raise_if_exception(self.orch.apply([self.spec(config)]))

    def _daemons(self) -> List[Any]:
        return list(self.raise_if_exception(
            self.orch.list_daemons(service_name=self.service_name, refresh=True)) or [])

    def problem(self, agent: str) -> Optional[str]:
        for daemon in self._daemons():
            if daemon.hostname == agent and daemon.status_desc not in ALIVE_STATUSES:
                return 'agent container on %s is %s' % (agent, daemon.status_desc)
        return None

    def remove(self, timeout: float = 60) -> None:
        try:
            self.raise_if_exception(self.orch.remove_service(self.service_name))
        except Exception as e:
            if not service_already_gone(e):
                raise
        deadline = time.monotonic() + timeout
        while self._daemons() and time.monotonic() < deadline:
            time.sleep(1)


class LocalWithSamplers:
    """The local agent that loads, and agents the orchestrator places only to sample the
    RGW and HAProxy daemons of the hosts other than the mgr's."""
    started_by = MGR_PROCESS

    def __init__(self, local: LocalLauncher, sampling: OrchestratorLauncher) -> None:
        self.local = local
        self.sampling = sampling

    @property
    def samplers(self) -> Sequence[str]:
        return self.sampling.agent_ids()

    def agent_ids(self) -> List[str]:
        return self.local.agent_ids() + self.sampling.agent_ids()

    def leftovers(self) -> Dict[str, Any]:
        return dict(self.local.leftovers(), **self.sampling.leftovers())

    def launch(self, config: Dict[str, Any]) -> None:
        self.local.launch(config)
        self.sampling.launch(config)

    def problem(self, agent: str) -> Optional[str]:
        if agent in self.local.agent_ids():
            return self.local.problem(agent)
        return self.sampling.problem(agent)

    def remove(self) -> None:
        try:
            self.sampling.remove()
        finally:
            self.local.remove()


def processes_in(folder: str) -> List[int]:
    """Pids of the processes working in a folder (an agent and its workers)."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if os.readlink('/proc/%s/cwd' % entry) == folder:
                    found.append(int(entry))
            except OSError:
                continue
    return found


class NotReachable(Exception):
    """A local agent left on another host than the one this mgr runs on."""


class NotOurs(Exception):
    """A leftover record names a service or folder no launcher of this module makes."""


def own_folder(folder: str) -> bool:
    """Whether a folder is one a LocalLauncher makes (see LOCAL_FOLDER_PREFIX)."""
    return os.path.dirname(os.path.normpath(folder)) == os.path.normpath(
        tempfile.gettempdir()) and bool(_LOCAL_FOLDER.match(os.path.basename(folder)))


def service_already_gone(error: Exception) -> bool:
    """Whether the orchestrator refused a removal because the service does not exist.

    Just after a failover the backend module may not be loaded yet: the mgr then
    answers "Module not found" (an ImportError), which says nothing of the service.
    """
    if isinstance(error, ImportError):
        return False
    return 'Invalid service name' in str(error) or 'not found' in str(error).lower()


def remove_leftovers(leftovers: Dict[str, Any], remove_service: Any,
                     timeout: float = 10, here: Optional[str] = None) -> None:
    """Remove what a launcher left when the mgr vanished: a local agent or a service.

    A local agent of a mgr on another host cannot be reached from here
    (NotReachable): its dead-man switch ends it, and its folder is removed
    once a mgr on its host finds it.

    Only what a launcher makes is removed: the agents' service, and a folder of a local
    agent in the temporary folder; any other name (a record someone wrote into the
    config-key store) is refused, NotOurs, and left as it is.
    """
    service, folder = leftovers.get('service'), leftovers.get('folder')
    if service and service != AGENT_SERVICE:
        raise NotOurs('service %r is not the agents\' (%s): not removed'
                      % (service, AGENT_SERVICE))
    if folder and not own_folder(str(folder)):
        raise NotOurs('folder %r is not a local agent\'s (%s<12 hex digits> in %s): not '
                      'removed' % (folder, LOCAL_FOLDER_PREFIX, tempfile.gettempdir()))
    if service:
        try:
            remove_service(leftovers['service'])
        except Exception as e:
            if not service_already_gone(e):
                raise
    if not folder:
        return
    host, here = leftovers.get('host'), here or socket.gethostname()
    if host and host != here:
        raise NotReachable(
            'the local agent in %s ran on host %s, this mgr runs on %s: it cannot be '
            'reached from here (it stops by itself once the mgr stops answering it)'
            % (folder, host, here))
    deadline = time.monotonic() + timeout
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_in(folder):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        while processes_in(folder) and time.monotonic() < deadline:
            time.sleep(0.2)
    shutil.rmtree(folder, ignore_errors=True)
