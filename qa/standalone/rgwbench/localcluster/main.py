"""Command line of the local test cluster."""
import argparse
import json
import os
import subprocess
import sys
from typing import List, NoReturn, Optional

from . import cephadm_cluster, dashboard, hostpackages, kmip, openbao, releases
from .chroot import ChrootError
from .cluster import OBJECTSTORES, ClusterError, LocalCluster, default_dir

ORCHESTRATORS = ('local', cephadm_cluster.ORCHESTRATOR)


class OneLineParser(argparse.ArgumentParser):
    """Errors as one line on stderr and exit status 2, as the ceph CLI gives them."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, '%s: error: %s\n' % (self.prog, message))


# The cluster's own command-line tools, run through `cluster <tool>`.
TOOLS = ('ceph', 'radosgw-admin', 'rados')


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog='cluster', description=(
        'A real Ceph cluster (mon, mgr, OSDs, radosgw) as plain processes on this '
        'machine, with the rgwbench mgr module enabled.'))
    sub = parser.add_subparsers(dest='command', metavar='COMMAND', parser_class=OneLineParser)
    sub.required = True

    def with_dir(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument('--dir', default=default_dir(),
                       help='the cluster folder (default: $RGWBENCH_CLUSTER_DIR or %(default)s)')
        return p

    def positive(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError('%r is not a number' % text)
        if value < 1:
            raise argparse.ArgumentTypeError('must be at least 1, got %d' % value)
        return value

    start = with_dir(sub.add_parser('start', help='create or restart a cluster and wait for it'))
    start.add_argument('--release', default='pacific', choices=sorted(releases.RELEASES))
    start.add_argument('--hosts', type=positive, default=None, help=(
        'hosts (default 1, or what the cluster has): host 1 is this machine, hosts 2..N '
        'are network namespaces on a bridge of the cluster, each with its own address'))
    start.add_argument('--osds', type=positive, default=1)
    start.add_argument('--rgws', type=positive, default=1)
    start.add_argument('--mgrs', type=positive, default=1,
                       help='mgr daemons (a second one is a standby for failover tests)')
    start.add_argument('--objectstore', choices=OBJECTSTORES, default=None, help=(
        "the OSDs' object store (default bluestore, or what the cluster has): bluestore "
        'on a file keeps data across any stop; memstore keeps it in RAM, costs far less '
        'CPU per write (for benchmarks of clients) and keeps data only across a clean '
        '`stop`'))
    start.add_argument('--containers', action='store_true', default=None, help=(
        'run what cephadm runs in containers (the agents\' custom containers, radosgw) '
        'under podman, radosgw in a PID namespace of its own (default: processes, or '
        'what the cluster has)'))
    start.add_argument('--orchestrator', choices=ORCHESTRATORS, default=None, help=(
        'local (default, or what the cluster has): daemons as processes, the test '
        'orchestrator; cephadm: the release\'s own cephadm bootstraps the cluster from '
        'an image built from the release (Tentacle), every daemon in podman, the '
        'rgwbench module mounted through the mgr spec; one per machine'))
    install = sub.add_parser('install', help="install a release's packages (or chroot) only")
    install.add_argument('--release', default='pacific', choices=sorted(releases.RELEASES))
    install.add_argument('--tests', action='store_true',
                         help='also what the tests run (Chromium and its driver)')
    tab = with_dir(sub.add_parser('dashboard', help=(
        "the Ceph Dashboard with rgwbench's tab: the release's dashboard patched and its "
        'frontend built (cached; printed: its folder); Pacific: its REST API only, in the '
        "frontend its package has")))
    tab.add_argument('--release', choices=dashboard.RELEASES, help=(
        "the release's dashboard (default: with --serve the cluster's release, else "
        'tentacle)'))
    tab.add_argument('--check', action='store_true', help=(
        "instead: the patch's controller tests, its openapi.yaml against the generated "
        'one, and its jest specs'))
    tab.add_argument('--serve', action='store_true', help=(
        'also load it into the cluster at --dir in place of the release\'s dashboard, '
        'over plain HTTP (printed: its URL)'))
    tab.add_argument('--port', type=positive, default=8080,
                     help='the dashboard\'s port with --serve (default %(default)s)')
    with_dir(sub.add_parser('stop', help='end every process the cluster started'))
    with_dir(sub.add_parser('keep', help='start again each mgr that crashes (`start` runs '
                                         'it in the background)'))
    with_dir(sub.add_parser('destroy', help='stop the cluster and remove its folder'))
    with_dir(sub.add_parser('s3-endpoints', help='RGW URLs and the test user keys, as JSON'))
    with_dir(sub.add_parser('info', help='the cluster state, as JSON'))
    kmip.add_parser(sub, with_dir)
    openbao.add_parser(sub, with_dir)
    for tool in TOOLS:
        p = with_dir(sub.add_parser(tool, help='run %s against the cluster' % tool))
        p.add_argument('args', nargs=argparse.REMAINDER,
                       help='arguments for %s, after --' % tool)
    return parser


SERVICES = ('kmip', 'openbao')


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        cluster = LocalCluster(getattr(args, 'dir', default_dir()))
        # A KMIP or OpenBao server is a process of the cluster's folder on this host,
        # whatever runs the cluster.
        if args.command not in SERVICES and (
                cluster.state.get('orchestrator') == cephadm_cluster.ORCHESTRATOR or
                getattr(args, 'orchestrator', None) == cephadm_cluster.ORCHESTRATOR):
            return _cephadm_command(args, cephadm_cluster.CephadmCluster(
                cluster.dir, cluster.state))
        if args.command in ('start', 'install', 'dashboard') and os.geteuid() != 0:
            raise ClusterError('%s needs root (it installs packages)' % args.command)
        if args.command in ('start', 'install'):
            hostpackages.ensure(hostpackages.HOST, releases.stderr_log)
        if args.command == 'install':
            if args.tests:
                hostpackages.ensure(hostpackages.TESTS, releases.stderr_log)
            release = releases.get(args.release)
            release.ensure_installed(releases.stderr_log)
            print(release.root)
        elif args.command == 'start':
            cluster.start(args.release, args.hosts, args.osds, args.rgws, args.mgrs,
                          args.objectstore, args.containers)
            print(json.dumps(cluster.s3_endpoints()['endpoints']))
        elif args.command == 'dashboard':
            served = cluster.state.get('release') if args.serve else None
            if args.release is None:
                args.release = served or 'tentacle'
            elif served is not None and args.release != served:
                raise ClusterError("the cluster at %s runs %s, not %s: it serves only its own "
                                   "release's dashboard" % (cluster.dir, served, args.release))
            hostpackages.ensure(hostpackages.HOST, releases.stderr_log)
            hostpackages.ensure(hostpackages.DASHBOARD, releases.stderr_log)
            releases.get(args.release).ensure_installed(releases.stderr_log)
            if args.check:
                print(dashboard.check(args.release, releases.stderr_log).tree)
            else:
                build = dashboard.ensure_built(args.release, releases.stderr_log)
                if args.serve:
                    dashboard.ensure_python_packages(args.release, releases.stderr_log)
                    print(cluster.serve_dashboard(build.tree, args.port))
                else:
                    print(build.tree)
        elif args.command == 'stop':
            for name in cluster.stop():
                print('stopped %s' % name)
        elif args.command == 'keep':
            cluster.keep()
        elif args.command == 'destroy':
            cluster.destroy()
        elif args.command == 's3-endpoints':
            print(json.dumps(cluster.s3_endpoints(), indent=2))
        elif args.command == 'info':
            print(json.dumps(dict(cluster.state, dir=cluster.dir, conf=cluster.conf,
                                  root=cluster.release.root,
                                  mgr_tmp={m: cluster.mgr_tmp(m)
                                           for m in cluster.state.get('mgrs', [])},
                                  tools={t: cluster.tool_argv(t, []) for t in TOOLS},
                                  ceph_session=cluster.ceph_session_argv()),
                             indent=2))
        elif args.command == 'kmip':
            kmip.command(cluster, args)
        elif args.command == 'openbao':
            openbao.command(cluster, args)
        else:
            tool_args = args.args[1:] if args.args[:1] == ['--'] else args.args
            return subprocess.call(cluster.tool_argv(args.command, tool_args))
    except (ClusterError, ChrootError, releases.ReleaseError, hostpackages.InstallError,
            dashboard.DashboardError) as e:
        return _error(e)
    except KeyboardInterrupt:
        return 130
    return 0


def _cephadm_command(args: argparse.Namespace, cluster: cephadm_cluster.CephadmCluster) -> int:
    """The commands of a cephadm cluster (`kmip` and `openbao` are the local cluster's)."""
    try:
        if args.command == 'start':
            if os.geteuid() != 0:
                raise ClusterError('start needs root (it installs packages)')
            if cluster.exists and args.orchestrator == 'local':
                raise ClusterError('%s holds a cephadm cluster; --orchestrator cannot change '
                                   'it: destroy it first, or use another --dir' % cluster.dir)
            hostpackages.ensure(hostpackages.HOST, releases.stderr_log)
            cluster.start(cluster.state.get('release', args.release), args.osds)
            print(json.dumps(cluster.s3_endpoints()['endpoints']))
        elif not cluster.exists:
            raise ClusterError('no cluster in %s: run `cluster start` first' % cluster.dir)
        elif args.command == 'stop':
            for name in cluster.stop():
                print('removed %s' % name)
        elif args.command == 'destroy':
            cluster.destroy()
        elif args.command == 's3-endpoints':
            print(json.dumps(cluster.s3_endpoints(), indent=2))
        elif args.command == 'info':
            print(json.dumps(cluster.info(), indent=2))
        elif args.command in TOOLS:
            tool_args = args.args[1:] if args.args[:1] == ['--'] else args.args
            return subprocess.call(cluster.tool_argv(args.command, tool_args))
        else:
            raise ClusterError('%s is not a command of a cephadm cluster' % args.command)
    except (ClusterError, ChrootError, releases.ReleaseError, hostpackages.InstallError) as e:
        return _error(e)
    except KeyboardInterrupt:
        return 130
    return 0


def _error(e: Exception) -> int:
    first, _, rest = str(e).partition('\n')
    sys.stderr.write('cluster: error: %s\n' % first)
    if rest:
        sys.stderr.write(rest + '\n')
    return 1
