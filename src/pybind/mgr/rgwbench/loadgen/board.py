"""Live totals of the worker processes, in memory they share with the parent.

Each process writes its own slot (ops, bytes, errors, summed latency, done)
about once a second; the parent sums the slots for the progress line.  The
mapping is anonymous and made before the fork, so the children share it.
"""

import mmap
import struct
from typing import Tuple


class Board:
    """Live totals of every process, in shared memory (for the progress line)."""

    _FMT = "<5d"
    _SIZE = struct.calcsize(_FMT)

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.mem = mmap.mmap(-1, max(1, processes) * self._SIZE)

    def write(self, index: int, values: Tuple[int, int, int, int], done: bool) -> None:
        struct.pack_into(self._FMT, self.mem, index * self._SIZE,
                         float(values[0]), float(values[1]), float(values[2]),
                         float(values[3]), 1.0 if done else 0.0)

    def totals(self) -> Tuple[int, int, int, int]:
        ops = nbytes = errors = lat = 0.0
        for i in range(self.processes):
            a, b, c, d, _ = struct.unpack_from(self._FMT, self.mem, i * self._SIZE)
            ops += a
            nbytes += b
            errors += c
            lat += d
        return int(ops), int(nbytes), int(errors), int(lat)
