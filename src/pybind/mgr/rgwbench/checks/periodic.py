"""Something done every so often on a thread of its own, while a workload runs."""
import threading
from typing import Any, Callable, Optional


class Periodic:
    """While entered, calls `tick()` every `every_s` seconds, until one returns True.

    A tick that raises is logged (at debug level: what it reads from the mgr
    may be missing a moment) and the next one comes as usual.
    """

    def __init__(self, tick: Callable[[], bool], every_s: float, name: str,
                 log: Optional[Any] = None) -> None:
        self.tick = tick
        self.every_s = every_s
        self.name = name
        self.log = log
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> 'Periodic':
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        self._thread.join(self.every_s + 5.0)

    def _run(self) -> None:
        while not self._done.wait(self.every_s):
            try:
                if self.tick():
                    return
            except Exception as e:
                if self.log:
                    self.log.debug('%s: %s', self.name, e)
