"""A custom container service (CustomContainerSpec) run as a plain process, or in podman.

On a cluster started with --containers it runs under podman (podman.py) with
the spec's container arguments; otherwise as follows.

The command is the spec's entrypoint with its `extra_entrypoint_args`; `files`
are written into the daemon's folder, which is the process's working
directory; `volume_mounts` are bind-mounted at their container paths in a
mount namespace of the process's own; `envs` are its environment. The image,
uid/gid and the container runtime's own `args` have no process equivalent.
"""
import os
import shlex
from typing import Any, Dict, List, Tuple

import orchestrator

from .context import DaemonKind
from .hosts import Host
from .state import DaemonRecord


def _arg_text(arg: Any) -> List[str]:
    """A plain string, or an ArgumentSpec of newer releases."""
    if isinstance(arg, str):
        return [arg]
    text = str(getattr(arg, 'argument', arg))
    return text.split() if getattr(arg, 'split', False) else [text]


class ContainerKind(DaemonKind):
    daemon_type = 'container'
    # A container whose process ends is left ended (cephadm's units restart
    # only on failure, and a job container ends by design).
    restart_when_dead = False

    def ports(self, spec: Any, rank: int) -> List[int]:
        return [int(p) for p in (spec.ports or [])]

    def validate(self, spec: Any, placed: List[Tuple[Host, int]]) -> None:
        if not spec.entrypoint:
            raise orchestrator.OrchestratorValidationError(
                '%s: this orchestrator runs the entrypoint as a process; set entrypoint'
                % spec.service_name())
        self.check_ports(spec, placed)

    def files(self, spec: Any, daemon: DaemonRecord) -> Dict[str, str]:
        found = {}
        for name, content in (spec.files or {}).items():
            found[name] = '\n'.join(content) if isinstance(content, list) else str(content)
        return found

    def env(self, spec: Any, daemon: DaemonRecord) -> Dict[str, str]:
        pairs = (e.split('=', 1) for e in (spec.envs or []) if '=' in e)
        return {k: v for k, v in pairs}

    def argv(self, spec: Any, daemon: DaemonRecord) -> List[str]:
        command = shlex.split(spec.entrypoint)
        for arg in getattr(spec, 'extra_entrypoint_args', None) or []:
            command += _arg_text(arg)
        mounts = (spec.volume_mounts or {}).items()
        folder = self.ctx.daemon_dir(daemon.name)
        if self.ctx.containers is not None:
            return self.ctx.containers.argv(
                daemon.name, command, workdir=folder,
                mounts=[(s if os.path.isabs(s) else os.path.join(folder, s), t)
                        for s, t in mounts],
                env_names=sorted(self.env(spec, daemon)) + ['NODE_NAME'],
                args=[a for arg in (spec.args or []) for a in _arg_text(arg)])
        if not mounts:
            return command
        script = []
        for source, target in mounts:
            # Decided from the spec, not the disk, so the command stays the same
            # before and after the files are written.
            is_dir = source.strip('/') in [d.strip('/') for d in (spec.dirs or [])] or any(
                f.startswith(source.rstrip('/') + '/') for f in (spec.files or {}))
            source = source if os.path.isabs(source) else os.path.join(folder, source)
            if not is_dir and not os.path.isdir(source):
                script.append('mkdir -p %s && touch %s' % (
                    shlex.quote(os.path.dirname(target)), shlex.quote(target)))
            else:
                script.append('mkdir -p %s' % shlex.quote(target))
            script.append('mount --bind %s %s' % (shlex.quote(source), shlex.quote(target)))
        script.append('exec "$@"')
        return (['unshare', '--mount', '--propagation', 'private', 'sh', '-ec',
                 ' && '.join(script), 'container'] + command)
