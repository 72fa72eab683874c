"""Virtualenvs of test servers (PyKMIP, OpenBao's wheel) in the cache folder: made
once with the host's python3 and pinned requirements, under a lock, and made
again when the pins change (their ready mark holds the pins they were made with)."""
import fcntl
import os
import shutil
import subprocess
from typing import Callable, List, Type

from .chroot import cache_dir
from .cluster import ClusterError

HOST_PYTHON = '/usr/bin/python3'
READY_MARK = 'rgwbench-requirements.txt'


def run_step(argv: List[str], what: str, error: Type[ClusterError] = ClusterError,
             timeout: float = 600) -> str:
    """A program's output; `error` naming the step and its last lines when it fails."""
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout,
                              env=dict(os.environ, PYTHONWARNINGS='ignore'))
    except subprocess.TimeoutExpired:
        raise error('%s did not finish within %ds' % (what, timeout))
    if proc.returncode != 0:
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        last = lines[-1] if lines else 'no output'
        raise error('%s failed: %s\n%s' % (what, last, '\n'.join(lines[-30:-1])))
    return proc.stdout


def cached_venv(name: str, requirements: List[str], check: Callable[[str], None],
                log: Callable[[str], None], error: Type[ClusterError]) -> str:
    """The virtualenv `<cache>/<name>-venv` with `requirements` installed; `check(venv)`
    proves a new one works before it is marked ready."""
    venv = os.path.join(cache_dir(), '%s-venv' % name)
    wanted = '\n'.join(requirements) + '\n'

    def ready() -> bool:
        try:
            with open(os.path.join(venv, READY_MARK)) as f:
                return f.read() == wanted
        except OSError:
            return False

    if ready():
        return venv
    os.makedirs(cache_dir(), exist_ok=True)
    with open(os.path.join(cache_dir(), 'build-%s.lock' % name), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready():
            return venv
        log('installing %s into %s (once)' % (' '.join(requirements), venv))
        if os.path.exists(venv):
            shutil.rmtree(venv)
        if subprocess.run([HOST_PYTHON, '-c', 'import ensurepip'],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            log('installing python3-venv with apt')
            run_step(['apt-get', 'install', '-y', '-qq', '--no-install-recommends',
                      'python3-venv'], 'apt-get install python3-venv', error)
        run_step([HOST_PYTHON, '-m', 'venv', venv], 'python3 -m venv', error)
        run_step([os.path.join(venv, 'bin', 'pip'), 'install', '-q',
                  '--disable-pip-version-check'] + requirements,
                 'pip install ' + ' '.join(requirements), error)
        check(venv)
        with open(os.path.join(venv, READY_MARK), 'w') as f:
            f.write(wanted)
    return venv
