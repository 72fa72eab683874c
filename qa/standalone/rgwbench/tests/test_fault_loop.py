"""The fault loop: short runs cut by one fault each, and the cluster always put back.

Each round starts a short run of a profile whose first variant touches the three
kinds of setting (a config option, the RGW spec: TLS at RGW, and msgr2 secure
mode, which restarts the OSDs), whose second changes nothing, and whose one
workload reads a prefill (the run holds its buckets until the variant ends),
injects one fault at a random moment of it, and waits until the module says it
is idle. The faults:

* ``mgr``: `kill -9` the active mgr (the standby takes over; the killed one is
  started again, as systemd would);
* ``radosgw``: `kill -9` a radosgw (the orchestrator starts it again);
* ``agent``: `kill -9` the load agent while it runs;
* ``orchestrator``: the orchestrator fails its next call (the test backend's
  `orch/fail-next-call` file, see localorch/module.py).

After every round the cluster must be as before it (see `fault_snapshot`), and
the run must have ended `complete`, `failed` or `aborted` (a fault may come
after its end) with its result readable.

    RGWBENCH_FAULT_ROUNDS   rounds per release (default 5: each kind of fault once, then one more),
                            more for soak runs
    RGWBENCH_FAULT_SEED     the random seed (default: a new one, printed)

On the `two_osds` cluster: msgr2 secure mode restarts OSDs one at a time, and
a mgr failover needs a standby.
"""
import json
import os
import random
import signal
import time
from typing import Any, Callable, Counter, Dict, List, Tuple

from conftest import Cluster
from localcluster.processes import ProcessTable
from helpers import (agent_processes, fault_snapshot, run_state, wait_clean, wait_idle, wait_run,
                     wait_unchanged)

ROUNDS = int(os.environ.get('RGWBENCH_FAULT_ROUNDS') or 5)
PROFILE_NAME = 'fault-loop'
THREADS = 96
# The baseline: the shortest variant that still applies and puts back a config
# option, an RGW spec and msgr2 secure mode; then one that changes nothing, so a
# fault may also cut the run between two variants (the run's one journal, and its
# user and buckets, carried from the one to the other).
PROFILE: Dict[str, Any] = {
    'name': PROFILE_NAME, 'baseline': 'three-kinds',
    'variants': [{'name': 'three-kinds', 'settings': {
        'config': {'client.rgw/rgw_thread_pool_size': THREADS},
        'tls@rgw': 'on', 'msgr2-secure': 'on'}},
        {'name': 'as-is', 'settings': {}}],
    'workloads': [{'name': 'get-4KiB', 'op': 'get', 'size': '4KiB', 'duration': 3,
                   'warmup': 1, 'concurrency': 4, 'objects': 200}]}
FAULTS = ('mgr', 'radosgw', 'agent', 'orchestrator')
# A run lasts 90 to 120 s on this machine class: a fault is
# injected within that (later ones land after the end, which is allowed).
HORIZON_S = 90
# The test backend fails its next call while this file is in the cluster folder.
FAIL_NEXT_CALL = os.path.join('orch', 'fail-next-call')


def status(c: Cluster) -> Dict[str, Any]:
    shown: Dict[str, Any] = c.ceph_json('rgwbench', 'status')
    return shown


# -- the faults: each returns what it hit, in a few words ---------------------
def kill_mgr(c: Cluster, run_id: str, rng: random.Random) -> str:
    active = c.ceph_json('mgr', 'stat')['active_name']
    pid = ProcessTable(c.dir).pid('mgr.' + active)
    assert pid, 'no pid for mgr.%s' % active
    os.kill(pid, signal.SIGKILL)
    # The monitors would notice after mon_mgr_beacon_grace (30 s); telling them
    # spares CI that wait, and the mgr still died without cleaning anything up.
    c.ceph('mgr', 'fail', active, check=False)
    c.start()  # the killed mgr starts again, as systemd would start it, as a standby
    return 'mgr.%s killed (%s)' % (active, run_state(c, run_id))


def kill_radosgw(c: Cluster, run_id: str, rng: random.Random) -> str:
    rgws = sorted(d['daemon_id'] for d in c.ceph_json('orch', 'ps', '--daemon_type', 'rgw'))
    name = 'rgw.' + rng.choice(rgws)
    # it may be restarting (a setting redeploys it): the kill comes once it runs again
    procs, deadline = ProcessTable(c.dir), time.monotonic() + 60
    while not procs.running(name) and time.monotonic() < deadline:
        time.sleep(0.5)
    pid = procs.pid(name)
    if not pid or not procs.running(name):
        return '%s not running (%s)' % (name, run_state(c, run_id))
    os.kill(pid, signal.SIGKILL)
    return '%s killed (%s)' % (name, run_state(c, run_id))


def kill_agent(c: Cluster, run_id: str, rng: random.Random) -> str:
    # an agent exists while a workload runs: wait for one, then for a moment of it
    deadline = time.monotonic() + 240
    while True:
        agents = [(pid, cwd) for pid, cwd in agent_processes(c) if is_agent_main(pid)]
        if agents or run_state(c, run_id) != 'running' or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    if not agents:
        return 'no agent (run %s)' % run_state(c, run_id)
    time.sleep(rng.uniform(0, 4))
    pid, cwd = agents[0]
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return 'agent %d ended before the kill (%s)' % (pid, run_state(c, run_id))
    return 'agent %d killed (%s)' % (pid, run_state(c, run_id))


def is_agent_main(pid: int) -> bool:
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return b'agent.py' in f.read()
    except OSError:
        return False


def fail_orchestrator_call(c: Cluster, run_id: str, rng: random.Random) -> str:
    path = os.path.join(c.dir, FAIL_NEXT_CALL)
    with open(path, 'w'):
        pass
    # Nothing here asks the orchestrator until the module has taken the failure
    # or the run has ended (`results show` does not ask it).
    while os.path.exists(path) and run_state(c, run_id) == 'running':
        time.sleep(0.5)
    taken = not os.path.exists(path)
    return 'orchestrator call failed (%s)' % run_state(c, run_id) if taken else \
        'orchestrator not called before the end'


INJECT: Dict[str, Callable[[Cluster, str, random.Random], str]] = {
    'mgr': kill_mgr, 'radosgw': kill_radosgw, 'agent': kill_agent,
    'orchestrator': fail_orchestrator_call}


def one_round(c: Cluster, kind: str, rng: random.Random) -> Tuple[str, List[str]]:
    """One run, one fault; what it hit, and the differences it left."""
    before = fault_snapshot(c)
    run_id = c.ceph('rgwbench', 'run', '--profile', PROFILE_NAME,
                    '--yes-i-really-mean-it').stdout.strip()
    if kind != 'agent':
        time.sleep(rng.uniform(0, HORIZON_S))
    hit = INJECT[kind](c, run_id, rng)
    if rng.random() < 0.5 and run_state(c, run_id) == 'running':
        # an abort right after the fault: a path of its own, and a short round
        aborted = c.ceph('rgwbench', 'abort', check=False)
        hit += ', abort: %s' % ('sent' if aborted.returncode == 0 else
                                'refused (%d)' % aborted.returncode)
    record = wait_run(c, run_id, timeout=600)
    wait_idle(c)
    path = os.path.join(c.dir, FAIL_NEXT_CALL)
    if os.path.exists(path):
        os.unlink(path)  # not taken: it must not fail the snapshot's own calls
    found = wait_unchanged(c, before)
    if record['state'] not in ('complete', 'failed', 'aborted'):
        found.append('run %s ended %s' % (run_id, record['state']))
    hit = '%s -> run %s %s after %.0f s%s' % (
        hit, run_id, record['state'], record['finished'] - record['started'],
        ': %s' % record.get('error') if record.get('error') else '')
    return hit, found


UNREMOVED_PROFILE: Dict[str, Any] = {
    'name': 'agents-unremoved', 'baseline': 'as-is',
    'variants': [{'name': 'as-is', 'settings': {}}],
    'workloads': [{'name': 'get-4KiB', 'op': 'get', 'size': '4KiB', 'duration': 2,
                   'warmup': 0, 'concurrency': 2, 'objects': 20}]}


def test_agents_the_orchestrator_failed_to_remove_are_removed_later(two_osds: Cluster) -> None:
    """The agents' service whose removal failed at the workload's end, while the run held
    its buckets for later variants, is owed until the serve loop removes it."""
    c = two_osds
    proc = c.ceph_input(json.dumps(UNREMOVED_PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    wait_clean(c)
    wait_idle(c)
    before = fault_snapshot(c)
    path = os.path.join(c.dir, FAIL_NEXT_CALL)
    with open(path, 'w') as f:
        f.write('remove_service\n')
    try:
        run_id = c.ceph('rgwbench', 'run', '--profile', UNREMOVED_PROFILE['name'],
                        '--yes-i-really-mean-it').stdout.strip()
        record = wait_run(c, run_id, timeout=600)
        assert not os.path.exists(path), 'the agents\' service was never removed'
        assert record['state'] in ('complete', 'failed'), record
        # Owed until the serve loop's next try removes it.
        wait_idle(c)
        assert wait_unchanged(c, before) == []
    finally:
        if os.path.exists(path):
            os.unlink(path)
        c.ceph('rgwbench', 'profile', 'rm', UNREMOVED_PROFILE['name'], check=False)


def test_faults_at_random_moments_leave_the_cluster_as_it_was(
        two_osds: Cluster, capsys: Any) -> None:
    c = two_osds
    seed = int(os.environ.get('RGWBENCH_FAULT_SEED') or random.SystemRandom().randrange(10**6))
    rng = random.Random(seed)
    with capsys.disabled():
        print('\nfault loop on %s: %d rounds, seed %d (RGWBENCH_FAULT_SEED=%d repeats it)'
              % (c.release, ROUNDS, seed, seed), flush=True)
    proc = c.ceph_input(json.dumps(PROFILE), 'rgwbench', 'profile', 'set')
    assert proc.returncode == 0, proc.stderr
    # Planning makes the self-signed TLS certificate the runs use and keeps it:
    # made before the first snapshot, it is part of every one.
    c.ceph('rgwbench', 'plan', '--profile', PROFILE_NAME)
    wait_clean(c)
    wait_idle(c)
    order: List[str] = []
    survived, failures = 0, []
    kinds: Counter[str] = Counter()
    began = time.monotonic()
    try:
        for number in range(1, ROUNDS + 1):
            if not order:  # every kind once in each group of four rounds, in a random order
                order = rng.sample(FAULTS, len(FAULTS))
            kind = order.pop()
            kinds[kind] += 1
            started = time.monotonic()
            hit, found = one_round(c, kind, rng)
            survived += not found
            line = 'round %d/%d: %s: %s (%.0f s)%s' % (
                number, ROUNDS, kind, hit, time.monotonic() - started,
                ''.join('\n    differs: ' + d for d in found))
            with capsys.disabled():
                print(line, flush=True)
            if found:
                failures.append(line)
                break  # a cluster left changed would make every later round differ too
            wait_clean(c)
    finally:
        with capsys.disabled():
            print('faults survived: %d/%d on %s (%s) in %.0f s, seed %d' % (
                survived, ROUNDS, c.release,
                ', '.join('%s %d' % kv for kv in sorted(kinds.items())),
                time.monotonic() - began, seed), flush=True)
        c.ceph('rgwbench', 'profile', 'rm', PROFILE_NAME, check=False)
    assert not failures, '\n'.join(failures)
    assert survived == ROUNDS
