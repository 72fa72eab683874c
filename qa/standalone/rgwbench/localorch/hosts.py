"""The hosts of the local cluster, as `cluster start` recorded them."""
import json
import os
import subprocess
from typing import Any, Dict, List, NamedTuple, Optional

import orchestrator

# Where `ip netns` keeps named network namespaces; `cluster start` makes it
# visible inside a release's chroot too.
NETNS_DIR = '/run/netns'

# Exit status 3 when the address and port cannot be bound.
_BIND_CHECK = '''import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind((sys.argv[1], int(sys.argv[2])))
except OSError:
    sys.exit(3)
'''


class Host(NamedTuple):
    name: str
    addr: str
    # The network namespace the host is, or None for the machine's own.
    netns: Optional[str]

    def argv(self, argv: List[str]) -> List[str]:
        """A command line that runs `argv` on this host.

        On a namespaced host the program gets the host's network namespace
        and a UTS namespace of its own that carries the host's name, so that
        it reports that name (in its service map metadata, say) as a program
        on a real host would. nsenter rather than `ip netns exec`: the latter
        needs `/` to be a mount point, which it is not inside a chroot.
        nsenter, unshare and sh each exec the next, so the pid stays the
        program's own.
        """
        if not self.netns:
            return argv
        return (['nsenter', '--net=%s/%s' % (NETNS_DIR, self.netns), '--',
                 'unshare', '--uts', '--',
                 'sh', '-c', 'echo "$0" > /proc/sys/kernel/hostname && exec "$@"', self.name]
                + argv)

    def can_bind(self, ip: str, port: int) -> Optional[bool]:
        """Whether a TCP port can be bound on this host; None if that cannot be told."""
        try:
            proc = subprocess.run(self.argv(['python3', '-c', _BIND_CHECK, ip, str(port)]),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return {0: True, 3: False}.get(proc.returncode)


def load_cluster(cluster_dir: str) -> Dict[str, Any]:
    try:
        with open(os.path.join(cluster_dir, 'cluster.json')) as f:
            state: Dict[str, Any] = json.load(f)
            return state
    except (OSError, ValueError) as e:
        raise orchestrator.OrchestratorError('cannot read the local cluster in %r: %s'
                                             % (cluster_dir, e))


def load_hosts(cluster_dir: str) -> List[Host]:
    return [Host(h['name'], h['addr'], h.get('netns'))
            for h in load_cluster(cluster_dir)['hosts']]
