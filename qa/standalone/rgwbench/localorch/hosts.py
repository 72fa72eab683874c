"""The hosts of the local cluster, as `cluster start` recorded them."""
import json
import os
from typing import Any, Dict, List, NamedTuple, Optional

import orchestrator


class Host(NamedTuple):
    name: str
    addr: str
    # The network namespace the host is, or None for the machine's own.
    netns: Optional[str]

    def argv(self, argv: List[str]) -> List[str]:
        """A command line that runs `argv` on this host."""
        if self.netns:
            return ['ip', 'netns', 'exec', self.netns] + argv
        return argv


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
