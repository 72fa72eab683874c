"""Where the tests look for secrets while rgwbench works: what a read-only `ceph`
user reads, what a process list on any host shows, what the mgr logs.

The hosts of a test cluster are network namespaces of this machine, and agents'
containers are its processes: one process list shows every host's.
"""
import glob
import os
import re
import subprocess
from typing import Dict, Mapping, Sequence

from conftest import Cluster

# An agent's token (`secrets.token_urlsafe(32)`, as the panel's session cookie and CSRF
# token are): 43 URL-safe characters, known only to the agent and the mgr, so a test
# looks for its shape: a run of exactly 43 such characters with an upper case letter, a
# lower case one and a digit (no name, id or key of a test cluster has that shape: its
# mgr logs were scanned for it; CherryPy's log of a failed request's headers, with the
# panel's cookie, was found so).
AGENT_TOKEN = re.compile(r'(?<![A-Za-z0-9_+/-])'
                         r'(?=[A-Za-z0-9_-]{0,42}[A-Z])(?=[A-Za-z0-9_-]{0,42}[a-z])'
                         r'(?=[A-Za-z0-9_-]{0,42}[0-9])[A-Za-z0-9_-]{43}'
                         r'(?![A-Za-z0-9_+/=-])')


def looks(c: Cluster, module_reads: Sequence[Sequence[str]]) -> Dict[str, str]:
    """One look at each place: the orchestrator's specs and daemons, the process
    list, and the module's read commands `module_reads` (each in JSON)."""
    seen = {'orch ls --export': c.ceph('orch', 'ls', '--export').stdout,
            'orch ps': c.ceph('orch', 'ps', '-f', 'json').stdout,
            'ps -ef': subprocess.run(['ps', '-eo', 'args'], stdout=subprocess.PIPE,
                                     universal_newlines=True).stdout}
    for args in module_reads:
        proc = c.ceph_reply(*args, '-f', 'json')
        seen['ceph ' + ' '.join(args)] = proc.stdout + proc.stderr
    return seen


def add(seen: Dict[str, str], more: Mapping[str, str]) -> None:
    for name, text in more.items():
        seen[name] = seen.get(name, '') + text


def mgr_logs(c: Cluster) -> Dict[str, str]:
    found = {}
    for log in glob.glob(os.path.join(c.dir, 'log', 'mgr.*.log')):
        with open(log, errors='replace') as f:
            found[os.path.basename(log)] = f.read()
    return found


def assert_none_shown(seen: Mapping[str, str], secrets: Mapping[str, str]) -> None:
    """No secret of `secrets` (what it is: its value), and nothing shaped as an agent's
    token, shows in any of `seen`. (Not the word `Bearer`: the process list is this
    machine's, where other tests send wrong tokens on purpose.)"""
    assert secrets and all(secrets.values()), secrets
    for name, text in seen.items():
        for what, secret in secrets.items():
            assert secret not in text, '%s shows in %s: %s' % (
                what, name, where_shown(text, secret))
        tokens = AGENT_TOKEN.findall(text)
        assert not tokens, 'what looks like an agent token shows in %s: %s' % (
            name, tokens[:3])
        # The agents' launch config in their spec names no code (placed agents have none).
        assert '"codes"' not in text.replace('\\"', '"'), \
            'agent codes show in %s' % name


def where_shown(text: str, secret: str) -> str:
    """The lines of `text` that hold `secret`, the secret itself masked: what tells
    a failure's reader which code wrote it."""
    lines = [line.replace(secret, '<secret>')[:400]
             for line in text.splitlines() if secret in line]
    return '%d line(s), first: %s' % (len(lines), ' | '.join(lines[:3]))
