"""A KMIP server of the cluster (PyKMIP), for RGW's SSE-KMS `kmip` backend.

PyKMIP runs from a virtualenv of its own in the cache folder, made once with
the host's python3 and pinned versions. Its CA, server and client
certificates, configuration, key database and log live in the cluster's
`kmip/` folder, which radosgw sees at the same path on every release (a
chroot's radosgw through the cluster folder's bind mount). The server is a
process of the cluster's process table, so `cluster stop` ends it too.
"""
import argparse
import json
import os
import re
import socket
import ssl
import sys
import time
from typing import Any, Callable, Dict, List, Optional

from .chroot import cache_dir
from .cluster import ClusterError, LocalCluster
from .processes import _bindable, free_port
from .venvs import cached_venv, run_step

# PyKMIP 0.11 with the newest SQLAlchemy and cryptography works today but
# warns of APIs those remove; these are the versions checked with it on
# Python 3.11.
REQUIREMENTS = ['PyKMIP==0.11.0', 'SQLAlchemy==1.4.54', 'cryptography==44.0.3']
PROCESS = 'kmip'
FOLDER = 'kmip'
CLIENT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'kmip_client.py')
# A KMIP Name that an S3 key id can also carry (RGW looks keys up by Name).
KEY_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$')


class KmipError(ClusterError):
    pass


def venv_dir() -> str:
    return os.path.join(cache_dir(), 'kmip-venv')


def _run(argv: List[str], what: str, timeout: float = 600) -> str:
    return run_step(argv, what, KmipError, timeout)


def ensure_venv(log: Callable[[str], None]) -> str:
    """The PyKMIP virtualenv, made (or made again for new pins) under a lock."""
    def check(venv: str) -> None:
        _run([os.path.join(venv, 'bin', 'python'), '-c',
              'import kmip.services.server, kmip.pie.client'], 'importing PyKMIP')
    return cached_venv('kmip', REQUIREMENTS, check, log, KmipError)


# -- certificates ----------------------------------------------------------------------

def _openssl(args: List[str]) -> None:
    _run(['openssl'] + args, 'openssl ' + args[0], timeout=120)


class KmipServer:
    """The KMIP server of one cluster folder."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.dir = os.path.join(cluster.dir, FOLDER)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _require_cluster(self) -> None:
        if not self.cluster.exists:
            raise KmipError('no cluster in %s: run `cluster start` first' % self.cluster.dir)

    # -- state ---------------------------------------------------------------------------
    def _port(self) -> Optional[int]:
        try:
            with open(self.path('kmip.json')) as f:
                return int(json.load(f)['port'])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save_port(self, port: int) -> None:
        tmp = self.path('kmip.json.tmp')
        with open(tmp, 'w') as f:
            json.dump({'port': port}, f)
        os.rename(tmp, self.path('kmip.json'))

    @property
    def running(self) -> bool:
        return self.cluster.procs.running(PROCESS) and self._port() is not None

    def info(self) -> Dict[str, str]:
        self._require_cluster()
        port = self._port()
        if port is None or not self.cluster.procs.running(PROCESS):
            raise KmipError('no KMIP server runs for the cluster in %s: run `cluster kmip '
                            'start`' % self.cluster.dir)
        return {'addr': '127.0.0.1:%d' % port, 'ca': self.path('ca.crt'),
                'client_cert': self.path('client.crt'), 'client_key': self.path('client.key')}

    # -- start ---------------------------------------------------------------------------
    def start(self) -> Dict[str, str]:
        self._require_cluster()
        if self.running and self._accepts_tls(self._port() or 0):
            return self.info()
        venv = ensure_venv(self.cluster.log)
        os.makedirs(self.dir, exist_ok=True)
        self._ensure_certificates()
        port = self._port()
        if port is None or not _bindable(port):
            port = free_port(self._cluster_ports(), owner=self.cluster.dir)
        self._write_config(port)
        self._save_port(port)
        self.cluster.procs.stop([PROCESS])
        self.cluster.log('starting the KMIP server on 127.0.0.1:%d' % port)
        self.cluster.procs.start(PROCESS, [
            os.path.join(venv, 'bin', 'pykmip-server'), '-f', self.path('server.conf'),
            '-l', self.path('server.log')], env={'PYTHONWARNINGS': 'ignore'}, cwd=self.dir)
        deadline = time.monotonic() + 90
        while not self._accepts_tls(port):
            if not self.cluster.procs.running(PROCESS):
                raise KmipError('the KMIP server exited:\n%s'
                                % self.cluster.procs.output_tail(PROCESS))
            if time.monotonic() > deadline:
                raise KmipError('the KMIP server did not accept TLS connections on '
                                '127.0.0.1:%d within 90s' % port)
            time.sleep(0.5)
        return self.info()

    def stop(self) -> List[str]:
        self._require_cluster()
        return self.cluster.procs.stop([PROCESS])

    def _cluster_ports(self) -> List[int]:
        state = self.cluster.state
        ports = [int(state.get('mon_port', 0))]
        rgw = int(state.get('rgw_port', 0))
        ports += [rgw + i for i in range(int(state.get('rgws_per_host', 1)))]
        return ports

    def _ensure_certificates(self) -> None:
        names = ('ca.crt', 'server.crt', 'server.key', 'client.crt', 'client.key')
        if all(os.path.exists(self.path(n)) for n in names):
            return
        self.cluster.log('making a CA, a server and a client certificate in %s' % self.dir)
        config = self.path('openssl.cnf')
        with open(config, 'w') as f:
            f.write('[req]\ndistinguished_name = dn\nprompt = no\n[dn]\n'
                    '[ca]\nbasicConstraints = critical,CA:TRUE\n'
                    'keyUsage = critical,keyCertSign,cRLSign\n'
                    'subjectKeyIdentifier = hash\n'
                    '[server]\nbasicConstraints = CA:FALSE\n'
                    'keyUsage = critical,digitalSignature,keyEncipherment\n'
                    'extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1\n'
                    # PyKMIP takes a client only with this usage (its enable_tls_client_auth).
                    '[client]\nbasicConstraints = CA:FALSE\n'
                    'keyUsage = critical,digitalSignature,keyEncipherment\n'
                    'extendedKeyUsage = clientAuth\n')
        days = '3650'
        _openssl(['req', '-x509', '-config', config, '-extensions', 'ca', '-newkey', 'rsa:2048',
                  '-nodes', '-days', days, '-subj', '/CN=rgwbench KMIP test CA',
                  '-keyout', self.path('ca.key'), '-out', self.path('ca.crt')])
        # The client's common name is the identity PyKMIP records as a key's owner.
        for name, subject in (('server', '/CN=127.0.0.1'), ('client', '/CN=rgwbench-rgw')):
            csr = self.path(name + '.csr')
            _openssl(['req', '-new', '-config', config, '-newkey', 'rsa:2048', '-nodes',
                      '-subj', subject, '-keyout', self.path(name + '.key'), '-out', csr])
            _openssl(['x509', '-req', '-in', csr, '-CA', self.path('ca.crt'),
                      '-CAkey', self.path('ca.key'), '-set_serial',
                      str(int.from_bytes(os.urandom(8), 'big')), '-days', days,
                      '-extfile', config, '-extensions', name,
                      '-out', self.path(name + '.crt')])
            os.unlink(csr)
        for name in ('ca.key', 'server.key', 'client.key'):
            os.chmod(self.path(name), 0o600)

    def _write_config(self, port: int) -> None:
        with open(self.path('server.conf'), 'w') as f:
            f.write('\n'.join([
                '[server]',
                'hostname=127.0.0.1',
                'port=%d' % port,
                'certificate_path=%s' % self.path('server.crt'),
                'key_path=%s' % self.path('server.key'),
                'ca_path=%s' % self.path('ca.crt'),
                'auth_suite=TLS1.2',
                'enable_tls_client_auth=True',
                'logging_level=INFO',
                'database_path=%s' % self.path('pykmip.db'),
                '']))

    def _tls_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(self.path('ca.crt'))
        context.load_cert_chain(self.path('client.crt'), self.path('client.key'))
        return context

    def _accepts_tls(self, port: int) -> bool:
        """Whether a TLS handshake with the client certificate succeeds."""
        if not port:
            return False
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=5) as sock:
                with self._tls_context().wrap_socket(sock, server_hostname='127.0.0.1'):
                    return True
        except (OSError, ssl.SSLError):
            return False

    # -- keys ----------------------------------------------------------------------------
    def create_key(self, key_name: str) -> Dict[str, Any]:
        """A 256-bit AES key named `key_name` (the one there is, if it exists)."""
        info = self.info()
        python = os.path.join(venv_dir(), 'bin', 'python')
        out = _run([python, '-I', CLIENT_SCRIPT, '--addr', info['addr'], '--ca', info['ca'],
                    '--cert', info['client_cert'], '--key', info['client_key'],
                    '--name', key_name], 'the KMIP client', timeout=120)
        try:
            found: Dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise KmipError('the KMIP client printed no result:\n%s' % out[-2000:])
        return found


# -- command line ----------------------------------------------------------------------

def key_name(text: str) -> str:
    if not KEY_NAME.match(text):
        raise argparse.ArgumentTypeError(
            '%r is not a key name: use 1 to 128 letters, digits, ".", "_", ":", "/" or "-", '
            'beginning with a letter or digit' % text)
    return text


def add_parser(sub: Any, with_dir: Callable[[argparse.ArgumentParser],
                                            argparse.ArgumentParser]) -> None:
    kmip = sub.add_parser('kmip', help='a KMIP server (PyKMIP) for RGW SSE-KMS, as JSON')
    kmip_sub = kmip.add_subparsers(dest='kmip_command', metavar='KMIP_COMMAND',
                                   parser_class=type(kmip))
    kmip_sub.required = True
    with_dir(kmip_sub.add_parser('start', help=(
        'start the KMIP server of the cluster (installing PyKMIP once); prints its address '
        'and the CA, client certificate and client key RGW needs')))
    with_dir(kmip_sub.add_parser('info', help='the running KMIP server, as `start` prints it'))
    with_dir(kmip_sub.add_parser('stop', help='stop the KMIP server'))
    create = with_dir(kmip_sub.add_parser('create-key', help=(
        'create a 256-bit AES key with this Name in the KMIP server (or find the one there '
        'is); prints its unique id')))
    create.add_argument('key_name', metavar='KEYNAME', type=key_name)


def command(cluster: LocalCluster, args: argparse.Namespace) -> None:
    server = KmipServer(cluster)
    if args.kmip_command == 'start':
        if os.geteuid() != 0:
            raise KmipError('kmip start needs root (it installs PyKMIP into %s)' % cache_dir())
        print(json.dumps(server.start(), indent=2))
    elif args.kmip_command == 'info':
        print(json.dumps(server.info(), indent=2))
    elif args.kmip_command == 'stop':
        for name in server.stop():
            print('stopped %s' % name)
    elif args.kmip_command == 'create-key':
        found = server.create_key(args.key_name)
        if not found.get('created'):
            sys.stderr.write('cluster: key %s exists; its id is printed\n' % args.key_name)
        print(found['uid'])
