"""radosgw daemons from an RGWSpec, configured the way cephadm configures them."""
import os
import ssl
import tempfile
from typing import Any, List, Optional, Tuple

import orchestrator

from .context import DaemonKind, digest
from .hosts import Host
from .state import DaemonRecord
from .tool import NoCpuController

CPUS = '--cpus'


def certificate_text(spec: Any) -> str:
    cert = spec.rgw_frontend_ssl_certificate
    if isinstance(cert, list):
        cert = '\n'.join(cert)
    return str(cert or '')


def check_pem(pem: str, what: str) -> None:
    """A PEM with a certificate and its matching key, as beast and HAProxy need it."""
    with tempfile.NamedTemporaryFile('w', suffix='.pem') as f:
        f.write(pem)
        f.flush()
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(f.name)
        except (ssl.SSLError, OSError) as e:
            raise orchestrator.OrchestratorValidationError(
                '%s is not a certificate with its matching private key: %s' % (what, e))


def _argument_words(arg: Any) -> List[str]:
    """An item of extra_container_args as the runtime gets it: a string as it is on
    Pacific, an ArgumentSpec of newer releases split or not."""
    if isinstance(arg, str):
        return [arg]
    text = str(getattr(arg, 'argument', arg))
    return text.split() if getattr(arg, 'split', False) else [text]


def container_cpus(spec: Any) -> Optional[float]:
    """The cores the spec's `--cpus` holds each daemon to (None: no limit), as podman
    reads `--cpus=N` and `--cpus N`."""
    words = [w for arg in getattr(spec, 'extra_container_args', None) or []
             for w in _argument_words(arg)]
    for index, word in enumerate(words):
        if word == CPUS and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith(CPUS + '='):
            value = word.split('=', 1)[1]
        else:
            continue
        try:
            cores = float(value)
        except ValueError:
            cores = 0.0
        if not cores > 0:
            raise orchestrator.OrchestratorValidationError(
                '%s: %s %r is not a number of cores above 0' % (spec.service_name(), CPUS,
                                                                value))
        return cores
    return None


class RGWKind(DaemonKind):
    daemon_type = 'rgw'

    def __init__(self, ctx: Any, extra_frontend_args: str) -> None:
        super().__init__(ctx)
        self.extra_frontend_args = extra_frontend_args

    def base_port(self, spec: Any) -> int:
        return int(spec.rgw_frontend_port or (443 if spec.ssl else 80))

    def ports(self, spec: Any, rank: int) -> List[int]:
        return [self.base_port(spec) + rank]

    def validate(self, spec: Any, placed: List[Tuple[Host, int]]) -> None:
        if spec.ssl:
            if not certificate_text(spec):
                raise orchestrator.OrchestratorValidationError(
                    '%s: ssl is set but rgw_frontend_ssl_certificate is empty'
                    % spec.service_name())
            check_pem(certificate_text(spec), 'rgw_frontend_ssl_certificate')
        if container_cpus(spec) is not None and self.ctx.containers is None:
            # As a process, the daemon is held by a cgroup of this orchestrator's making.
            try:
                self.ctx.cpu_quotas.check()
            except NoCpuController as e:
                raise orchestrator.OrchestratorValidationError(
                    '%s: %s needs a CPU quota, which this orchestrator sets in a cgroup: %s'
                    % (spec.service_name(), CPUS, e))
        self.check_ports(spec, placed)

    def frontend(self, spec: Any, daemon: DaemonRecord) -> str:
        port = daemon.ports[0]
        args = [spec.rgw_frontend_type or 'beast']
        if spec.ssl:
            args += ['ssl_port=%d' % port,
                     'ssl_certificate=config://rgw/cert/%s' % spec.service_name()]
        else:
            args.append('port=%d' % port)
        args += list(getattr(spec, 'rgw_frontend_extra_args', None) or [])
        args += self.extra_frontend_args.split()
        return ' '.join(args)

    def entity(self, daemon: DaemonRecord) -> str:
        return 'client.rgw.%s' % daemon.daemon_id

    def keyring_path(self, daemon: DaemonRecord) -> str:
        return os.path.join(self.ctx.daemon_dir(daemon.name), 'keyring')

    def argv(self, spec: Any, daemon: DaemonRecord) -> List[str]:
        command = ['radosgw', '-f', '-c', self.ctx.conf, '-n', self.entity(daemon),
                   '--keyring', self.keyring_path(daemon),
                   '--rgw-data', self.ctx.daemon_dir(daemon.name)]
        cores = container_cpus(spec)
        if self.ctx.containers is not None:
            # A PID namespace of its own, as cephadm's: it registers its pid in there.
            return self.ctx.containers.argv(
                daemon.name, command, args=['%s=%g' % (CPUS, cores)] if cores else [])
        if cores is not None:
            return self.ctx.cpu_quotas.join_argv(daemon.name, command)
        return command

    def before_start(self, spec: Any, daemon: DaemonRecord) -> None:
        cores = container_cpus(spec)
        if cores is not None and self.ctx.containers is None:
            self.ctx.cpu_quotas.hold(daemon.name, cores)

    def after_start(self, spec: Any, daemon: DaemonRecord) -> None:
        if container_cpus(spec) is None and self.ctx.containers is None:
            # The spec lost its --cpus: the daemon started outside its old cgroup.
            self.ctx.cpu_quotas.release(daemon.name)

    def config_digest(self, spec: Any, daemon: DaemonRecord) -> str:
        # The frontend lives in the config database, not on the command line. The
        # container arguments only where there are some, so that a daemon without any
        # keeps its digest: as cephadm does, a change of them redeploys the daemons.
        args = [w for arg in getattr(spec, 'extra_container_args', None) or []
                for w in _argument_words(arg)]
        return digest([super().config_digest(spec, daemon), self.frontend(spec, daemon),
                       certificate_text(spec) if spec.ssl else ''] + ([args] if args else []))

    def prepare(self, spec: Any, daemon: DaemonRecord) -> None:
        keyring = self.ctx.command(prefix='auth get-or-create', entity=self.entity(daemon),
                                   caps=['mon', 'allow *', 'mgr', 'allow rw',
                                         'osd', 'allow rwx tag rgw *=*'])
        with open(self.keyring_path(daemon), 'w') as f:
            f.write(keyring)
        if spec.ssl:
            self.ctx.command(prefix='config-key set', key='rgw/cert/%s' % spec.service_name(),
                             val=certificate_text(spec))
        self.ctx.command(prefix='config set', who=self.entity(daemon), name='rgw_frontends',
                         value=self.frontend(spec, daemon))

    def remove(self, spec: Any, daemon: DaemonRecord) -> None:
        self.ctx.cpu_quotas.release(daemon.name)
        self.ctx.mon.mon_command({'prefix': 'config rm', 'who': self.entity(daemon),
                                  'name': 'rgw_frontends'})
        self.ctx.mon.mon_command({'prefix': 'auth rm', 'entity': self.entity(daemon)})

    def remove_service(self, spec: Any) -> None:
        self.ctx.mon.mon_command({'prefix': 'config-key rm',
                                  'key': 'rgw/cert/%s' % spec.service_name()})
