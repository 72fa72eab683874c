"""The agents' container spec fits the orchestrator's store of specs."""
import errno
import json
import os
import subprocess
import sys

import pytest

from rgwbench.agents.launchers import MAX_SPEC_FILES_BYTES, bootstrap_script, spec_files
from rgwbench.errors import RGWBenchError
from rgwbench.loadgen import bundle


def test_the_agents_spec_fits_what_the_orchestrator_stores() -> None:
    # The orchestrator keeps a spec in a config-key value of at most 64 KiB: a larger one
    # is only logged as not stored (a 68 KiB spec was, on every load of a test cluster),
    # and a mgr that takes over knows nothing of the agents. Room is left for the
    # configuration of many agents.
    config = {'server': 'https://192.168.100.200:41535', 'fingerprint': 'f' * 64,
              'codes': {'host-%03d.example.com' % n: 'c' * 32 for n in range(100)},
              'deadman_s': 60.0}
    files = spec_files(config)
    assert len(json.dumps(files)) <= MAX_SPEC_FILES_BYTES
    assert len(json.dumps(bootstrap_script())) < 52000


def test_a_spec_past_the_store_is_refused_before_it_is_applied() -> None:
    config = {'codes': {'host-%05d' % n: 'c' * 32 for n in range(5000)}}
    with pytest.raises(RGWBenchError, match='the orchestrator keeps at most 64 KiB a spec') as e:
        spec_files(config)
    assert e.value.errno == -errno.EFBIG   # one line with its errno, as every refusal


def test_the_agents_engine_is_what_an_agent_imports() -> None:
    # Only the agent's modules travel (not the command line nor the builder): the spec's
    # room is the engine's. What it needs is what importing the agent loads.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    loaded = subprocess.run(
        [sys.executable, '-c', 'import sys, loadgen.agent; print(" ".join(sorted('
         'm.__file__.rsplit("/", 1)[1] for n, m in sys.modules.items() '
         'if n.split(".")[0] == "loadgen")))'],
        cwd=here, capture_output=True, text=True, check=True).stdout.split()
    assert bundle.needed_by('agent.py') == sorted(loaded)
    assert 'cli.py' not in loaded and 'bundle.py' not in loaded
