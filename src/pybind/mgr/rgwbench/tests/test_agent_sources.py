"""An agent enrols only from an address the cluster knows for its host."""
from typing import Dict, Tuple

from rgwbench.tests.agent_fakes import Launcher, Mgr, ThreadLauncher, enrol, job

from rgwbench.agents.channel import AgentChannel
from rgwbench.agents.coordinator import AGENT_FAILED, AgentRun
from rgwbench.loadgen.workload import Job
from rgwbench.agents.sources import bare_ip, host_addresses, ips_in, mgr_host_addresses
from rgwbench.tests.s3stub import StubS3

OSD_METADATA = {
    '0': {'hostname': 'node1', 'front_addr': '[v2:10.0.0.11:6800/12,v1:10.0.0.11:6801/12]',
          'back_addr': '[v2:192.168.0.11:6802/12,v1:192.168.0.11:6803/12]'},
    '1': {'hostname': 'node2.example', 'front_addr': '10.0.0.12:6800/7',
          'back_addr': '[v2:[fd00::12]:6802/7]'},
}
SERVICE_MAP = {'services': {'rgw': {'daemons': {
    'summary': '',
    '4123': {'addr': '10.0.1.13:0/3345', 'metadata': {'hostname': 'node3'}}}}}}


def test_the_addresses_in_cephs_address_texts() -> None:
    assert ips_in('[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]') == {'10.0.0.1'}
    assert ips_in('10.0.0.2:6800/123') == {'10.0.0.2'}
    assert ips_in('[v2:[fd00::1]:6800/1]') == {'fd00::1'}
    assert ips_in('10.0.0.3') == {'10.0.0.3'} and ips_in('') == set()
    assert ips_in('node1.example:6789') == set()
    assert bare_ip('::ffff:10.0.0.4') == '10.0.0.4' and bare_ip('node1') is None


def test_a_hosts_addresses_are_its_orchestrator_address_and_its_daemons() -> None:
    found = host_addresses(
        orch_hosts={'node1': '10.0.0.11', 'node2': 'node2.example', 'node3': '10.0.1.13'},
        osd_metadata=OSD_METADATA, service_map=SERVICE_MAP, own_host='node1.example',
        own_addresses=['10.0.0.11'], resolve=lambda name: ['10.0.0.12', '::ffff:10.0.2.12'])
    allowed = found.of(['node1', 'node2', 'node3', 'node4'])
    assert allowed['node1'] == {'10.0.0.11', '192.168.0.11', '127.0.0.1', '::1'}
    assert allowed['node2'] == {'10.0.0.12', '10.0.2.12', 'fd00::12'}
    assert allowed['node3'] == {'10.0.1.13'}
    assert allowed['node4'] == frozenset()


def test_without_an_orchestrator_the_daemons_addresses_still_serve() -> None:
    def no_orchestrator() -> Dict[str, str]:
        raise RuntimeError('No orchestrator configured')
    mgr = Mgr({'osd_metadata': OSD_METADATA, 'service_map': SERVICE_MAP,
               'mgr_map': {'active_addrs': {'addrvec': [{'addr': '10.0.0.21:6800'}]}}})
    allowed = mgr_host_addresses(mgr, no_orchestrator).of(['node1', 'node3'])
    assert allowed['node1'] == {'10.0.0.11', '192.168.0.11'}
    assert allowed['node3'] == {'10.0.1.13'}


def test_a_placed_agent_from_another_address_is_refused_and_may_still_enrol() -> None:
    run = AgentRun(Job(op='put', concurrency=1), Launcher(),  # type: ignore[arg-type]
                   sources={'node1': frozenset({'10.0.0.11', '::1'})}, ready_timeout_s=0.1)
    # A placed agent has no code (its spec is readable): none is made for it.
    assert run._codes == {}
    code = ''
    # whoever read the agents' spec, on another host
    assert run.enrol('node1', code, '10.9.9.9') is None
    assert run.agents['node1']['state'] != AGENT_FAILED and run.refused is None
    # the agent itself, later, from its host (an IPv4-mapped source counts as IPv4)
    token = run.enrol('node1', code, '::ffff:10.0.0.11')
    assert token is not None and run.authorized('node1', token)


def test_an_enrolment_replayed_from_elsewhere_revokes_nothing() -> None:
    run = AgentRun(Job(op='put', concurrency=1), Launcher(),  # type: ignore[arg-type]
                   sources={'node1': frozenset({'10.0.0.11'})})
    code = ''
    token = run.enrol('node1', code, '10.0.0.11')
    assert token is not None
    assert run.enrol('node1', code, '10.9.9.9') is None
    assert run.authorized('node1', token) and run.refused is None
    # from the agent's own host, a second enrolment revokes its token
    assert run.enrol('node1', code, '10.0.0.11') is None
    assert not run.authorized('node1', token) and run.refused


def test_an_agent_that_only_came_from_elsewhere_fails_saying_where_from() -> None:
    run = AgentRun(Job(op='put', concurrency=1), Launcher(),  # type: ignore[arg-type]
                   sources={'node1': frozenset({'10.0.0.11'})}, ready_timeout_s=0.1,
                   check_every_s=0.05)
    assert run.enrol('node1', '', '172.16.0.5') is None
    error = run._problem('node1')
    assert "it enrolled from 172.16.0.5 (the host's: 10.0.0.11), not an address of " \
        'its host' in error and 'agent_source_check false' in error


def test_without_sources_an_agent_enrols_from_anywhere() -> None:
    run = AgentRun(Job(op='put', concurrency=1), Launcher())  # type: ignore[arg-type]
    assert run.enrol('node1', '', '10.9.9.9') is not None


def test_the_channel_tells_the_run_where_an_enrolment_came_from(
        stub: StubS3, certificate: Tuple[str, str]) -> None:  # noqa: F811
    for allowed, status in (({'10.0.0.11'}, 401), ({'10.0.0.11', '127.0.0.1'}, 200)):
        agent_run = AgentRun(job(stub), ThreadLauncher(['host-a']),
                             sources={'host-a': frozenset(allowed)})
        channel = AgentChannel('127.0.0.1', 0, *certificate)
        channel.open(agent_run)
        try:
            assert enrol(channel, agent_run._codes['host-a'], 'host-a')[0] == status
        finally:
            channel.close()
