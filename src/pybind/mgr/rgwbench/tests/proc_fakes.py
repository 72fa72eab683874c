"""A fake /proc for tests of the sampling of server processes: a process's files, and the
fsids of this cluster and of another."""
import os
from typing import Sequence


def fake_proc(root: str, pid: int, comm: str, utime: int, stime: int, rss_kib: int,
              argv: Sequence[str] = (), cgroup: str = "0::/user.slice\n",
              started: int = 0) -> None:
    d = os.path.join(root, str(pid))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "comm"), "w") as f:
        f.write(comm + "\n")
    fields = (["S"] + ["0"] * 10 + [str(utime), str(stime)] + ["0"] * 6 + [str(started)]
              + ["0"] * 23)
    with open(os.path.join(d, "stat"), "w") as f:
        # a command name with spaces and parentheses, as the kernel allows
        f.write("%d (%s) %s\n" % (pid, comm + " (x) y", " ".join(fields)))
    with open(os.path.join(d, "status"), "w") as f:
        f.write("Name:\t%s\nVmPeak:\t 999 kB\nVmRSS:\t %d kB\nThreads:\t3\n" % (comm, rss_kib))
    with open(os.path.join(d, "cmdline"), "wb") as f:
        f.write(b"".join(a.encode() + b"\0" for a in (argv or [comm])))
    with open(os.path.join(d, "cgroup"), "w") as f:
        f.write(cgroup)


FSID = "5b5c7a9e-0000-4000-8000-000000000001"
OTHER_FSID = "5b5c7a9e-0000-4000-8000-000000000002"
