"""The composition root: every collaborator of the module, built once and wired together.

`module.py` declares options and commands; this is where the services they
call are made from the mgr (the key/value store, the orchestrator, the maps),
and where the order of recovery after a failover is kept.
"""
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

import orchestrator
from ceph.deployment.service_spec import ServiceSpec
from mgr_util import build_url

from .runs.activity import ActivityGuard, Going
from .agents.agent_hosts import AgentPlacing
from .agents.channel import AgentChannel
from .agents.coordinator import DEADMAN_S
from .agents.sources import enrolment_sources
from .agents.workload_runs import AgentWorkloads
from .certs.cephadm_store import forget_left_certificate
from .certs.pem import self_signed_certificate
from .checks import MgrClusterView
from .checks.capacity_guard import CapacityGuard
from .checks.gate import RunChecks
from .checks.reshard_watch import ReshardWatch
from .cluster.access import ClusterAccess
from .cluster.step_times import StepTimeStore
from .cluster.credentials import CredentialStore
from .cluster.events import ClusterRunEvents
from .cluster.orchestration import orchestrator_state, rgw_service_under_test, wait_for_backend
from .cluster.rgw_admin import RadosgwAdmin, RadosgwZones
from .cluster.rgw_daemons import endpoint_urls
from .cluster.sampled_daemons import (ServerDaemon, ServerDaemons, ingress_haproxies,
                                      server_daemons)
from .panel.service import Panel
from .profiles import ProfileStore
from .results.store import ResultStore
from .runs.engine import RunCluster, RunEngine
from .runs.loads import LoadService
from .runs.starter import RunStarter
from .settings.applier import SettingsApplier
from .settings.base import SettingContext
from .settings.registry import all_settings
from .settings.session import SettingsSession
from .status import ceph_version_number

if TYPE_CHECKING:  # cheroot is loaded only where the panel runs
    from .panel.app import PanelApp
    from .panel.server import PanelServer


class Services:
    """The module's services, made from the mgr module `mgr` (a MgrModule with the
    orchestrator client mixed in)."""

    def __init__(self, mgr: Any, *, panel_backend: Callable[['Services'], Any]) -> None:
        self.mgr = mgr
        self.log = mgr.log
        self._agent_cert: Optional[Tuple[str, str]] = None
        self.credentials = CredentialStore(mgr)
        self.step_times = StepTimeStore(mgr)
        self.placing = AgentPlacing(
            mgr, raise_if_exception=orchestrator.raise_if_exception,
            has_backend=lambda: orchestrator_state(mgr).backend is not None,
            rgw_service_names=lambda: self.rgw_service_names(self.cluster_access()),
            rgw_service=lambda names: self.rgw_service(self.cluster_access(), names),
            server_daemons=self.server_daemons,
            image=lambda: str(mgr.get_module_option('agent_image') or
                              mgr.get_ceph_option('container_image') or ''))
        capacity = CapacityGuard(
            mgr, lambda: float(mgr.get_module_option('capacity_margin') or 0.0))
        self.checks = RunChecks(view=MgrClusterView(mgr), keep_objects=self.keep_objects,
                                log=self.log, prefill_time=lambda: float(
                                    mgr.get_module_option('prefill_time') or 0))
        # How a load and a run's workloads run on agents (a load never keeps its objects).
        agents = AgentWorkloads(
            make_channel=self.agent_channel, server_daemons=self.server_daemons,
            log=self.log, keep_objects=self.keep_objects,
            new_capacity_check=capacity.new_check, deadman_s=self.deadman_s,
            processes_max=self.processes_max, agent_sources=self.agent_sources,
            new_pg_watch=self.checks.pg_watch, bucket_admin=RadosgwAdmin(mgr),
            new_reshard_watch=lambda buckets: ReshardWatch(RadosgwAdmin(mgr), buckets,
                                                           log=self.log))
        self.loads = LoadService(store=mgr, credentials=self.credentials,
                                 endpoints=self.rgw_endpoints, agents=agents,
                                 make_launcher=self.placing.launcher, log=self.log,
                                 checks=self.checks)
        self.settings = SettingsSession(mgr, self.settings_applier, self.log,
                                        changed=lambda: self.events.publish())
        self.events = ClusterRunEvents(mgr, self.log,
                                       standing=self.settings.standing_health_checks)
        self.profiles = ProfileStore(mgr, all_settings())
        self.results = ResultStore(mgr, lambda: int(mgr.get_module_option('keep_results')
                                                    or 50))
        self.runs = RunEngine(
            store=mgr, results=self.results, credentials=self.credentials,
            cluster=RunCluster(make_applier=self.settings_applier,
                               ceph_version=self.ceph_version,
                               checks=self.checks,
                               rgw_daemons=lambda: len(self.placing.rgw_hosts()),
                               agent_hosts=self.placing.hosts,
                               step_times=self.step_times.medians,
                               gave_up=self.settings.give_up),
            agents=agents, make_launcher=self.placing.launcher,
            events=self.events, log=self.log)
        self.activity = ActivityGuard(probes={
            Going.RUN: lambda: _field(self.runs.active(), 'run_id'),
            Going.LOAD: lambda: _field(self.loads.active(), 'load_id'),
            Going.SETTINGS_CHANGING: lambda: (_field(self.settings.in_place(), 'journal_id')
                                              if self.settings.changing() else None),
            Going.SETTINGS_IN_PLACE: lambda: _field(self.settings.in_place(), 'journal_id'),
        })
        self.starter = RunStarter(profiles=self.profiles, engine=self.runs,
                                  activity=self.activity, known_hosts=self.placing.known_hosts)
        self.panel = Panel(mgr, panel_backend(self), self.panel_server, build_url, self.log)

    # -- after a failover or crash -------------------------------------------------
    def recover(self, stopping: threading.Event, backend_wait_s: float) -> None:
        """Put back whatever a load, a run or settings changed before the mgr stopped."""
        # Each clean-up on its own: one that fails must not keep the journals (the
        # settings) from being put back.
        if self.loads.leftovers.pending() or self.runs.leftovers.pending():
            # their agents' services are removed through the backend, which may load
            # after this module
            wait_for_backend(self.mgr, stopping, backend_wait_s)
        for what, recover in (('load', lambda: self.loads.recover(self.remove_service)),
                              ('run', lambda: self.runs.recover(self.remove_service))):
            try:
                recover()
            except Exception:
                self.log.exception('cleaning up after an interrupted %s failed', what)
        self.settings.recover(stopping)

    def remove_leftovers(self) -> None:
        """What could not be removed yet (the orchestrator not answering just after a
        failover, a local agent on another host), tried again."""
        try:
            if self.loads.leftovers.pending():
                self.loads.recover(self.remove_service)
            if self.runs.leftovers.pending():
                self.runs.leftovers.remove(self.remove_service, self.credentials.get(),
                                           self.log)
        except Exception:
            self.log.exception('removing what an interrupted workload left failed')

    # -- what the services read from the mgr ----------------------------------------
    def ceph_version(self) -> str:
        return ceph_version_number(self.mgr.version)

    def about(self) -> Dict[str, Any]:
        return {'ceph_version': self.ceph_version(), 'ceph_release': self.mgr.release_name}

    def keep_objects(self) -> bool:
        return bool(self.mgr.get_module_option('keep_objects'))

    def processes_max(self) -> int:
        return int(self.mgr.get_module_option('agent_processes_max') or 0)

    def deadman_s(self) -> float:
        return float(self.mgr.get_module_option('agent_deadman_timeout') or DEADMAN_S)

    def agent_sources(self, agents: List[str]) -> Optional[Mapping[str, FrozenSet[str]]]:
        if not self.mgr.get_module_option('agent_source_check'):
            return None
        return enrolment_sources(self.mgr, self.orch_host_addresses, agents, self.log.warning)

    def orch_host_addresses(self) -> Dict[str, str]:
        return {h.hostname: str(h.addr or h.hostname)
                for h in orchestrator.raise_if_exception(self.mgr.get_hosts())}

    def panel_server(self, app: 'PanelApp') -> 'PanelServer':
        # cheroot is loaded only where the panel runs: in the mgr, not in unit tests.
        from .panel.server import PanelServer
        return PanelServer(app, self.log)

    def rgw_endpoints(self) -> List[str]:
        return endpoint_urls(self.mgr.get('service_map'))

    def server_daemons(self) -> ServerDaemons:
        haproxies: List[ServerDaemon] = []
        try:
            service = self.rgw_service(self.cluster_access())
            haproxies = ingress_haproxies(self.mgr, orchestrator.raise_if_exception, service)
        except Exception as e:  # no orchestrator, or no one RGW service: no ingress either
            self.log.debug('no HAProxy daemons to count: %s', e)
        return server_daemons(self.mgr.get('service_map'),
                              str((self.mgr.get('mon_map') or {}).get('fsid') or ''),
                              haproxies)

    def remove_service(self, service_name: str) -> None:
        orchestrator.raise_if_exception(self.mgr.remove_service(service_name))

    def cluster_access(self) -> ClusterAccess:
        return ClusterAccess(self.mgr, orchestrator.raise_if_exception, ServiceSpec.from_json,
                             timeout_s=float(self.mgr.get_module_option('ready_timeout')
                                             or 600),
                             log=self.log.info, users=RadosgwAdmin(self.mgr),
                             zones=RadosgwZones(self.mgr),
                             spec_replaced=forget_left_certificate,
                             step_took=self.step_times.took)

    @staticmethod
    def rgw_service_names(cluster: ClusterAccess) -> List[str]:
        return [ServiceSpec.from_json(s).service_name() for s in cluster.services('rgw')]

    def rgw_service(self, cluster: ClusterAccess, names: Optional[List[str]] = None) -> str:
        return rgw_service_under_test(str(self.mgr.get_module_option('rgw_service') or ''),
                                      self.rgw_service_names(cluster) if names is None
                                      else names)

    def settings_applier(self) -> SettingsApplier:
        cluster = self.cluster_access()
        ctx = SettingContext(cluster=cluster, rgw_service=lambda: self.rgw_service(cluster),
                             option=self.mgr.get_module_option, secrets=self.mgr,
                             release=int(self.ceph_version().split('.')[0]))
        return SettingsApplier(ctx, all_settings(), log=self.log.info)

    def agent_channel(self) -> AgentChannel:
        if self._agent_cert is None:
            self._agent_cert = self_signed_certificate('rgwbench-agent-endpoint')
        cert, key = self._agent_cert
        address = str(self.mgr.get_module_option('agent_address') or self.mgr.get_mgr_ip() or
                      socket.gethostbyname(socket.gethostname()))
        return AgentChannel(address, int(self.mgr.get_module_option('agent_port') or 0),
                            cert, key)


def _field(state: Optional[Dict[str, Any]], key: str) -> Optional[str]:
    return None if state is None else str(state.get(key) or '?')
