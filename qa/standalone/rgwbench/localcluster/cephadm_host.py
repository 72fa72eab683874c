"""What cephadm expects of a host and this machine lacks: systemctl, a podman
that works here, and a sysctl that changes nothing.

cephadm deploys each daemon as a systemd unit whose ExecStart runs podman; this
machine has no systemd as PID 1, no journald, no udevd, hybrid cgroups (podman
needs runc and cgroupfs) and a lower process limit than cephadm asks for. A
cephadm cluster (cephadm_cluster.py) puts three small programs first in the
PATH of cephadm and of its SSH sessions, each calling a function here:

- `systemctl`: starts, stops and reports the units cephadm writes under
  /etc/systemd/system (forking services with a pid file, templated
  `ceph-<fsid>@<daemon>` instances), keeping its own state in the cluster's
  folder; reports a time-sync service as running, which cephadm checks for.
  A unit with `Restart=` (cephadm's daemons: on-failure, after 10 s, at most
  5 times in 30 min) gets a supervisor process that starts it again when its
  main process is gone while it should run, as systemd would (any end counts
  as a failure: the supervisor is not its parent and cannot see its status).
- `podman`: the machine's podman with the options it needs here.
- `sysctl`: cephadm applies its kernel settings with `sysctl --system`, which
  would apply every sysctl file of the machine; here it applies only the two
  its ingress files set (INGRESS_SYSCTLS), which `cluster stop` puts back, so
  a cluster leaves no kernel value changed behind.
"""
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

# Kernel settings cephadm sets on a host it deploys HAProxy or keepalived to (its
# sysctl.d file goes with the cluster; the values stay until put back).
INGRESS_SYSCTLS = ('net/ipv4/ip_forward', 'net/ipv4/ip_nonlocal_bind')

UNIT_DIRS = ('/etc/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system')
UNIT_KINDS = ('service', 'target', 'socket', 'timer', 'slice', 'mount', 'path')
# cephadm refuses a host without time sync.
ALWAYS_ACTIVE = frozenset(('chrony.service', 'chronyd.service'))
PODMAN = '/usr/bin/podman'
# The most this machine lets a container's root have.
ULIMITS = ('nofile=20000:20000', 'nproc=20000:20000')


def _unit_name(name: str) -> str:
    return name if name.rsplit('.', 1)[-1] in UNIT_KINDS else name + '.service'


@dataclass
class Unit:
    """The [Service] section of a unit, with its specifiers replaced."""
    name: str
    kind: str = 'simple'
    pid_file: str = ''
    start_pre: List[str] = field(default_factory=list)
    start: List[str] = field(default_factory=list)
    stop: List[str] = field(default_factory=list)
    stop_post: List[str] = field(default_factory=list)
    restart: str = 'no'
    restart_s: float = 0.1
    start_limit_burst: int = 5
    start_limit_s: float = 10.0


def seconds(text: str) -> float:
    """A systemd time span: 10s, 100ms, 30min, 1h, or a number of seconds."""
    units = {'ms': 0.001, 's': 1, 'sec': 1, 'min': 60, 'm': 60, 'h': 3600, '': 1}
    total = 0.0
    for number, unit in re.findall(r'([0-9.]+)\s*([a-z]*)', text.strip().lower()):
        total += float(number) * units.get(unit, 1)
    return total


def _unit_files(name: str) -> Tuple[List[str], str]:
    candidates = [name]
    instance = ''
    templated = re.match(r'^(.*)@(.*)\.(service|target)$', name)
    if templated:
        instance = templated.group(2)
        candidates.insert(0, '%s@.%s' % (templated.group(1), templated.group(3)))
    files: List[str] = []
    for candidate in candidates:
        for directory in UNIT_DIRS:
            path = os.path.join(directory, candidate)
            if os.path.exists(path):
                files.append(path)
                break
        for directory in UNIT_DIRS:
            drop_ins = os.path.join(directory, candidate + '.d')
            if os.path.isdir(drop_ins):
                files += sorted(os.path.join(drop_ins, f) for f in os.listdir(drop_ins)
                                if f.endswith('.conf'))
    return files, instance


def read_unit(name: str) -> Optional[Unit]:
    files, instance = _unit_files(name)
    if not files:
        return None
    unit = Unit(name=name)
    lists = {'ExecStartPre': unit.start_pre, 'ExecStart': unit.start,
             'ExecStop': unit.stop, 'ExecStopPost': unit.stop_post}

    def expand(text: str) -> str:
        return (text.replace('%i', instance).replace('%n', name).replace('%t', '/run')
                .replace('%%', '%'))
    for path in files:
        section = ''
        with open(path) as f:
            for raw in f:
                line = raw.strip()
                if line.startswith('['):
                    section = line
                if section != '[Service]' or '=' not in line or line.startswith('#'):
                    continue
                key, value = line.split('=', 1)
                if key in lists:
                    if value:
                        lists[key].append(expand(value))
                    else:
                        lists[key].clear()
                elif key == 'Type':
                    unit.kind = value
                elif key == 'PIDFile':
                    unit.pid_file = expand(value)
                elif key == 'Restart':
                    unit.restart = value
                elif key == 'RestartSec':
                    unit.restart_s = seconds(value)
                elif key == 'StartLimitBurst':
                    unit.start_limit_burst = int(value)
                elif key in ('StartLimitInterval', 'StartLimitIntervalSec'):
                    unit.start_limit_s = seconds(value)
    return unit


def _spawn_supervisor(name: str) -> None:
    """`systemctl supervise NAME` in a session of its own, outliving this command."""
    subprocess.Popen([sys.executable, os.path.abspath(sys.argv[0]), 'supervise', name],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended and not yet reaped, does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


class Systemctl:
    def __init__(self, state_dir: str,
                 spawn_supervisor: Callable[[str], None] = _spawn_supervisor,
                 poll_s: float = 1.0) -> None:
        self.state_dir = state_dir
        self.enabled_dir = os.path.join(state_dir, 'enabled')
        self.spawn_supervisor = spawn_supervisor
        self.poll_s = poll_s
        os.makedirs(self.enabled_dir, exist_ok=True)

    def _log(self, name: str, text: str) -> None:
        with open(self._path(name, '.log'), 'a') as log:
            log.write('# %s %s\n' % (time.strftime('%H:%M:%S'), text))

    def _supervisor_pid(self, name: str) -> Optional[int]:
        try:
            with open(self._path(name, '.supervisor')) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if alive(pid) else None

    def supervise(self, name: str) -> int:
        """Start the unit again whenever it is gone while it should run (its `.wanted`
        mark, which `stop` removes), within its start limit; ends when it should not run."""
        unit = read_unit(name)
        if unit is None:
            return 0
        with open(self._path(name, '.supervisor'), 'w') as f:
            f.write(str(os.getpid()))
        starts: List[float] = []
        try:
            while os.path.exists(self._path(name, '.wanted')):
                time.sleep(self.poll_s)
                if self.is_active(name):
                    continue
                time.sleep(unit.restart_s)
                # stopped meanwhile, or started again by someone else
                if not os.path.exists(self._path(name, '.wanted')) or self.is_active(name):
                    continue
                now = time.monotonic()
                starts = [t for t in starts if now - t < unit.start_limit_s] + [now]
                if len(starts) > unit.start_limit_burst:
                    self._log(name, 'supervisor: start limit hit; %s stays down' % name)
                    os.unlink(self._path(name, '.wanted'))
                    return 1
                self._log(name, 'supervisor: %s is gone; starting it again' % name)
                self._start_unit(name, unit)
        finally:
            if self._supervisor_pid(name) in (None, os.getpid()):
                try:
                    os.unlink(self._path(name, '.supervisor'))
                except FileNotFoundError:
                    pass
        return 0

    def supervisors(self) -> List[int]:
        """The supervisors still running (a cluster's stop ends them)."""
        found = []
        for entry in os.listdir(self.state_dir):
            if entry.endswith('.supervisor'):
                pid = self._supervisor_pid(entry[:-len('.supervisor')])
                if pid is not None:
                    found.append(pid)
        return found

    def _path(self, name: str, suffix: str) -> str:
        return os.path.join(self.state_dir, name + suffix)

    def _run(self, name: str, commands: List[str], wait: bool = True) -> int:
        with open(self._path(name, '.log'), 'a') as log:
            for command in commands:
                may_fail = command.startswith('-')
                command = command.lstrip('-@+!')
                log.write('# %s %s\n' % (time.strftime('%H:%M:%S'), command))
                log.flush()
                proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=log, start_new_session=True)
                if not wait:
                    with open(self._path(name, '.mainpid'), 'w') as f:
                        f.write(str(proc.pid))
                    continue
                if proc.wait() != 0 and not may_fail:
                    return 1
        return 0

    def is_active(self, name: str) -> bool:
        if name in ALWAYS_ACTIVE:
            return True
        if name.endswith('.target'):
            return os.path.exists(self._path(name, '.started'))
        unit = read_unit(name)
        if unit is None:
            return False
        try:
            with open(unit.pid_file or self._path(name, '.mainpid')) as f:
                return alive(int(f.read().strip()))
        except (OSError, ValueError):
            return False

    def start(self, name: str) -> int:
        if name.endswith('.target'):
            open(self._path(name, '.started'), 'w').close()
            return 0
        if self.is_active(name):
            return 0
        unit = read_unit(name)
        if unit is None:
            sys.stderr.write('Failed to start %s: Unit %s not found.\n' % (name, name))
            return 5
        code = self._start_unit(name, unit)
        if code == 0 and unit.restart not in ('', 'no'):
            open(self._path(name, '.wanted'), 'w').close()
            if self._supervisor_pid(name) is None:
                self.spawn_supervisor(name)
        return code

    def _start_unit(self, name: str, unit: Unit) -> int:
        forking = unit.kind in ('forking', 'oneshot')
        if self._run(name, unit.start_pre) or self._run(name, unit.start, wait=forking):
            sys.stderr.write('Job for %s failed; see %s\n' % (name, self._path(name, '.log')))
            return 1
        if forking and unit.pid_file:
            for _ in range(50):
                if os.path.exists(unit.pid_file):
                    break
                time.sleep(0.1)
        return 0

    def stop(self, name: str) -> int:
        if name.endswith('.target'):
            if os.path.exists(self._path(name, '.started')):
                os.unlink(self._path(name, '.started'))
            return 0
        unit = read_unit(name)
        if unit is None:
            return 0
        if os.path.exists(self._path(name, '.wanted')):
            os.unlink(self._path(name, '.wanted'))
        if self.is_active(name):
            self._run(name, unit.stop)
        main_pid = self._path(name, '.mainpid')
        if os.path.exists(main_pid):
            try:
                with open(main_pid) as f:
                    os.killpg(int(f.read()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
            os.unlink(main_pid)
        self._run(name, ['-' + c.lstrip('-') for c in unit.stop_post])
        return 0

    def main(self, argv: List[str]) -> int:
        options = [a for a in argv if a.startswith('-')]
        words = [a for a in argv if not a.startswith('-')]
        if not words:
            return 0
        verb, units = words[0], [_unit_name(u) for u in words[1:]]
        quiet = '-q' in options or '--quiet' in options
        if verb in ('daemon-reload', 'reset-failed', 'mask', 'unmask', 'kill', 'show'):
            return 0
        if verb in ('enable', 'disable'):
            for name in units:
                mark = os.path.join(self.enabled_dir, name)
                if verb == 'enable':
                    open(mark, 'w').close()
                    if '--now' in options and self.start(name):
                        return 1
                else:
                    if os.path.exists(mark):
                        os.unlink(mark)
                    if '--now' in options:
                        self.stop(name)
            return 0
        if verb == 'start':
            return max([self.start(name) for name in units] + [0])
        if verb == 'stop':
            for name in units:
                self.stop(name)
            return 0
        if verb in ('restart', 'try-restart', 'reload-or-restart'):
            for name in units:
                self.stop(name)
                if self.start(name):
                    return 1
            return 0
        if verb in ('is-active', 'status', 'is-enabled'):
            code = 0
            for name in units:
                if verb == 'is-enabled':
                    yes = name in ALWAYS_ACTIVE or os.path.exists(
                        os.path.join(self.enabled_dir, name))
                    words_shown = ('enabled', 'disabled')
                else:
                    yes = self.is_active(name)
                    words_shown = ('active', 'inactive')
                if not quiet:
                    print(words_shown[0] if yes else words_shown[1])
                if not yes:
                    code = 1 if verb == 'is-enabled' else 3
            return code
        if verb == 'is-failed':
            return 1
        if verb == 'supervise' and len(units) == 1:
            return self.supervise(units[0])
        sys.stderr.write('systemctl: %s is not supported here\n' % verb)
        return 1


def _fake_udev(directory: str) -> None:
    """The udev database ceph-volume reads, for every block device (no udevd here)."""
    data = os.path.join(directory, 'data')
    os.makedirs(data, exist_ok=True)
    for name in os.listdir('/sys/class/block'):
        try:
            with open('/sys/class/block/%s/dev' % name) as f:
                major, minor = f.read().strip().split(':')
        except (OSError, ValueError):
            continue
        kind = ('partition' if os.path.exists('/sys/class/block/%s/partition' % name)
                else 'disk')
        with open(os.path.join(data, 'b%s:%s' % (major, minor)), 'w') as f:
            f.write('E:DEVNAME=/dev/%s\nE:DEVTYPE=%s\nE:SUBSYSTEM=block\n'
                    'E:MAJOR=%s\nE:MINOR=%s\n' % (name, kind, major, minor))


def podman_argv(argv: List[str], udev_dir: str) -> Optional[List[str]]:
    """The machine's podman command line for cephadm's; None when nothing is to run."""
    out: List[str] = []
    verb = ''
    i = 0
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else ''
        if not verb and not arg.startswith('-'):
            verb = arg
            out.append(arg)
            if verb in ('run', 'create'):
                for limit in ULIMITS:
                    out += ['--ulimit', limit]
                out += ['--env', 'CEPH_VOLUME_ALLOW_LOOP_DEVICES=1']
            i += 1
            continue
        if verb in ('run', 'create'):
            if arg == '--log-driver' and value == 'journald':
                out += ['--log-driver', 'k8s-file']
                i += 2
                continue
            if arg == '--log-driver=journald':
                out.append('--log-driver=k8s-file')
                i += 1
                continue
            if arg == '--cgroups=split':
                i += 1
                continue
            if arg == '--ulimit':
                i += 2
                continue
            if arg.startswith('--ulimit='):
                i += 1
                continue
            if arg in ('-v', '--volume'):
                source = value.split(':')[0]
                if source == '/run/udev' and not os.path.exists('/run/udev/data'):
                    _fake_udev(udev_dir)
                    out += [arg, '%s:/run/udev:ro' % udev_dir]
                    i += 2
                    continue
                if source.startswith('/run/') and not os.path.exists(source):
                    i += 2
                    continue
            arg = (arg.replace('-log-to-journald=true', '-log-to-journald=false')
                   .replace('-log-to-stderr=false', '-log-to-stderr=true'))
        out.append(arg)
        i += 1
    base = [PODMAN, '--runtime', 'runc', '--cgroup-manager', 'cgroupfs',
            '--events-backend', 'file']
    if verb == 'pull':
        # No registry: an image that is here is pulled.
        images = [a for a in out[out.index('pull') + 1:] if not a.startswith('-')]
        if images and subprocess.run(base + ['image', 'exists', images[-1]]).returncode == 0:
            return None
    return base + out


def podman(argv: List[str], udev_dir: str) -> int:
    final = podman_argv(argv, udev_dir)
    if final is None:
        return 0
    os.execv(final[0], final)
    return 1


def sysctl(argv: List[str], folder: str = '/etc/sysctl.d') -> int:
    if argv[:1] == ['--system']:
        for name, value in ingress_sysctls(folder).items():
            subprocess.run(['/usr/sbin/sysctl', '-q', '-w', '%s=%s' % (name, value)],
                           check=False)
        return 0
    os.execv('/usr/sbin/sysctl', ['sysctl'] + argv)
    return 1


def ingress_sysctls(folder: str) -> Dict[str, str]:
    """What cephadm's files for HAProxy and keepalived set among INGRESS_SYSCTLS.

    Of `sysctl --system` only these are applied: HAProxy binds the VIP before
    keepalived has raised it (ip_nonlocal_bind), and without it the daemon ends
    at its start (seen: the ingress never served). `cluster stop` puts them back.
    """
    wanted = {n.replace('/', '.') for n in INGRESS_SYSCTLS}
    found: Dict[str, str] = {}
    for name in sorted(os.listdir(folder)):
        if not re.match(r'^90-ceph-.*-(haproxy|keepalived)\.conf$', name):
            continue
        with open(os.path.join(folder, name)) as f:
            for line in f:
                key, eq, value = line.partition('=')
                if eq and key.strip() in wanted:
                    found[key.strip()] = value.strip()
    return found


def write_programs(bin_dir: str, state_dir: str) -> Dict[str, str]:
    """The three programs, in bin_dir; returns their paths by name."""
    os.makedirs(bin_dir, exist_ok=True)
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    calls = {
        'systemctl': 'Systemctl(%r).main(sys.argv[1:])' % os.path.join(state_dir, 'systemd'),
        'podman': 'podman(sys.argv[1:], %r)' % os.path.join(state_dir, 'udev'),
        'sysctl': 'sysctl(sys.argv[1:])',
    }
    paths = {}
    for name, call in calls.items():
        path = os.path.join(bin_dir, name)
        with open(path, 'w') as f:
            f.write('#!/usr/bin/python3\nimport sys\nsys.path.insert(0, %r)\n'
                    'from localcluster.cephadm_host import *  # noqa\n'
                    'sys.exit(%s)\n' % (package_dir, call))
        os.chmod(path, 0o755)
        paths[name] = path
    return paths
