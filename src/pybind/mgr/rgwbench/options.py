"""The module's options: what an operator sets with `ceph config set mgr mgr/rgwbench/...`."""
from typing import List

from mgr_module import Option

from .agents.coordinator import DEADMAN_S
from .checks.capacity_guard import DEFAULT_MARGIN
from .checks.gate import DEFAULT_PREFILL_S
from .panel.service import DEFAULT_PORT
from .settings.sse import MODULE_OPTIONS as SSE_MODULE_OPTIONS

OPTIONS: List[Option] = [
    Option('agent_address', type='str', default='',
           desc='address the agent endpoint listens on (default: the mgr\'s own)'),
    Option('agent_port', type='int', default=0, min=0, max=65535,
           desc='TCP port of the agent endpoint while a load runs (0: any free port)'),
    Option('agent_deadman_timeout', type='secs', default=DEADMAN_S, min=10, max=3600,
           desc='an agent stops its load and exits once the agent endpoint has not '
                'answered it for this long (the mgr died or failed over)'),
    Option('agent_source_check', type='bool', default=True,
           desc='an agent enrols only from an address the cluster knows for its host '
                '(its code is in the agents\' spec, which `ceph orch ls --export` '
                'shows); off for agent hosts reached from other addresses'),
    Option('agent_image', type='str', default='',
           desc='container image of placed agents (default: the cluster\'s '
                'container_image); it needs python3'),
    Option('rgw_service', type='str', default='',
           desc='the RGW service settings change (default: the only one the '
                'orchestrator manages)'),
    Option('ready_timeout', type='secs', default=600, min=10,
           desc='how long to wait for daemons to be back after a change'),
    Option('keep_results', type='int', default=50, min=1, max=1000,
           desc='how many finished runs to keep in the config-key store'),
    Option('capacity_margin', type='float', default=DEFAULT_MARGIN, min=0.0, max=0.5,
           desc='a workload that writes stops once an OSD is this close to its nearfull '
                'ratio (0.05: 5 percentage points below it)'),
    Option('prefill_time', type='secs', default=DEFAULT_PREFILL_S, min=0, max=86400,
           desc='a GET workload that names no `objects` reads a working set twice the '
                'caches in front of the disks, prefilled for at most this long (0: '
                'the engine\'s default working set, 1000 objects up to 1 GiB per agent)'),
    Option('keep_objects', type='bool', default=False,
           desc='keep the buckets and objects of a run\'s workloads (default: removed '
                'after each workload)'),
    Option('rgw_ssl_port', type='int', default=0, min=0, max=65535,
           desc='port RGW serves HTTPS on under tls@rgw=on (0: the port its spec '
                'serves now)'),
    Option('agent_processes_max', type='int', default=8, min=1, max=64,
           desc='the most load engine processes an agent runs when a workload leaves '
                'it to the cores of its host (processes 0)'),
    Option('ingress_virtual_ip', type='str', default='',
           desc='virtual IP(s) (with /prefix, comma separated: one per RGW host) of the '
                'ingress tls@ingress puts in front of RGW (default: an existing '
                'ingress\'s; outside loopback nothing is chosen: a plan without it is '
                'refused)'),
    Option('config_allow', type='str', default='',
           desc='<who>/<option> entries (comma separated, * patterns) the config setting may '
                'change besides the options of the study'),
    Option('ingress_frontend_port', type='int', default=0, min=0, max=65535,
           desc='port the ingress of tls@ingress serves S3 on (0: an existing '
                'ingress\'s, else the first free from 443, or 8080 for HTTP)'),
    Option('ingress_monitor_port', type='int', default=0, min=0, max=65535,
           desc='HAProxy monitor port of the ingress of tls@ingress (0: an existing '
                'ingress\'s, else the first free from 1967)'),
    Option('panel_address', type='str', default='',
           desc='address the web panel listens on (default: the active manager\'s own '
                'address; :: or 0.0.0.0 for every address)'),
    Option('panel_port', type='int', default=DEFAULT_PORT, min=1, max=65535,
           desc='TCP port of the web panel'),
    Option('panel_ssl', type='bool', default=True,
           desc='serve the web panel over HTTPS (with `panel certificate set`, or a '
                'self-signed certificate)'),
    Option('panel_session_timeout', type='secs', default=28800, min=60,
           desc='how long a login to the web panel lasts'),
] + [Option(opt, type='str', default=default, desc=desc)
     for opt, default, desc in SSE_MODULE_OPTIONS]
