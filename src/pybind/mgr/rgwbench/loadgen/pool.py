"""Worker processes: fork, collect results through pipes, forward signals.

With ``processes > 1`` the load runs in forked children, one
``ProcessRun`` each (so the load can use more than one core).  Each child
sends its raw result as JSON through a pipe and its live totals through a
shared ``Board``; the parent ticks the ``Reporter`` and forwards SIGINT and
SIGTERM to the children.  A child whose parent is gone stops.
"""

import json
import os
import select
import signal
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

from .board import Board
from .process import ProcessRun
from .progress import Reporter
from .schedule import NS, Schedule
from .workload import Job


def on_signals(halt: Callable[[], None]) -> Dict[signal.Signals, Any]:
    """SIGINT/SIGTERM call ``halt`` once (a second one interrupts for real).

    Only possible in the main thread; elsewhere nothing is installed.
    """
    seen = [0]

    def handler(signum: int, frame: Any) -> None:
        seen[0] += 1
        if seen[0] > 1:
            raise KeyboardInterrupt()
        halt()

    previous: Dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:
        pass  # not the main thread
    return previous


def restore_signals(previous: Dict[signal.Signals, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _fork_process(job: Job, index: int, schedule: Schedule, board: Board) -> Tuple[int, int]:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(wfd)
        return pid, rfd
    # child
    code = 0
    try:
        os.close(rfd)
        parent = os.getppid()
        run = ProcessRun(job, index, schedule)
        on_signals(run.halt)

        def tick(r: ProcessRun) -> None:
            board.write(index, r.live(), False)
            if os.getppid() != parent:
                r.stop.set()  # the coordinator is gone

        run.tick = tick
        out = run.run()
        board.write(index, run.live(), True)
    except BaseException as exc:
        out = {"fatal": "%s: %s" % (type(exc).__name__, exc)}
        code = 1
    try:
        data = json.dumps(out).encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(wfd, view)
            view = view[n:]
        os.close(wfd)
    finally:
        os._exit(code)


def run_forked(job: Job, schedule: Schedule, reporter: Reporter) -> List[Dict[str, Any]]:
    """Run the job in ``job.processes`` children; their raw results, in order."""
    board = Board(job.processes)
    sys.stdout.flush()
    sys.stderr.flush()
    children: List[Tuple[int, int]] = []
    for i in range(job.processes):
        children.append(_fork_process(job, i, schedule, board))
    chunks: Dict[int, List[bytes]] = {fd: [] for _, fd in children}
    open_fds = set(chunks)
    interrupted = False

    def forward() -> None:
        for pid, _ in children:
            try:
                os.kill(pid, signal.SIGINT)
            except OSError:
                pass

    old_handlers = on_signals(forward)
    try:
        next_tick = time.perf_counter_ns()
        while open_fds:
            timeout = max(0.0, (next_tick - time.perf_counter_ns()) / NS)
            try:
                ready, _, _ = select.select(list(open_fds), [], [], timeout)
            except InterruptedError:
                ready = []
            for fd in ready:
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    open_fds.discard(fd)
                    os.close(fd)
            now = time.perf_counter_ns()
            if now >= next_tick:
                reporter.tick(board.totals())
                next_tick = schedule.next_tick(now)
    except KeyboardInterrupt:
        interrupted = True
        forward()
        raise
    finally:
        restore_signals(old_handlers)
        for pid, _ in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if interrupted:
            for fd in open_fds:
                os.close(fd)
    out = []
    for _, fd in children:
        text = b"".join(chunks[fd])
        try:
            out.append(json.loads(text.decode("utf-8")))
        except ValueError:
            out.append({"fatal": "worker process ended without a result"})
    return out
