"""PEM text for a TLS library that loads certificates and keys from paths only.

Python's ssl module, and the panel's cheroot server through it, take a certificate and
its private key as file names. Here each text goes to an anonymous file in
memory (memfd, given as /proc/self/fd/N): never on a disk, never in shared
temp space, gone when closed or when the process ends, however it ends. Where
memfd is missing, a folder of the process's own (mode 0700, files 0600) that
close() removes takes its place.
"""
import os
import shutil
import tempfile
from typing import List, Optional, Tuple


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


class PemFiles:
    """Paths to PEM texts, valid until close(); load them right away, then close."""

    def __init__(self) -> None:
        self._fds: List[int] = []
        self._folder: Optional[str] = None

    def path(self, name: str, text: str) -> str:
        data = text.encode('utf-8')
        memfd_create = getattr(os, 'memfd_create', None)
        if memfd_create is not None and os.path.isdir('/proc/self/fd'):
            fd = memfd_create('rgwbench-%s' % name)  # close-on-exec: no child inherits it
            self._fds.append(fd)
            _write_all(fd, data)
            return '/proc/self/fd/%d' % fd
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix='rgwbench-pem-')  # mode 0700
        path = os.path.join(self._folder, name + '.pem')
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        return path

    def fds(self) -> Tuple[int, ...]:
        """The memory files, for a child process to keep at the same numbers (pass_fds)."""
        return tuple(self._fds)

    def close(self) -> None:
        """Forget every text (idempotent)."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __enter__(self) -> 'PemFiles':
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
