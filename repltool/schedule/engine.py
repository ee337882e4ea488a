"""A tiny deterministic discrete-event core, in the spirit of SimPy's ``core.py``.

The queue is a heap of ``(time, priority, counter, callback)``: callbacks run
in time order, then by priority (lower first), then in the order they were
scheduled, so a run is a pure function of its input.  Processes are
generators that yield either an absolute time (``float``) to sleep until, or a
:class:`Signal` to wait for; :class:`Signal.fire` wakes every waiter at the
current time, each at its own priority.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Generator

#: State changes (execution ends, commits) happen before decisions.
URGENT = 0
#: The coordinator decides after every state change of the same instant.
LATE = 1

Callback = Callable[[], None]
Process = Generator["float | Signal", None, None]


class Engine:
    """The event loop: a clock and a heap of pending callbacks."""

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, int, Callback]] = []
        self._counter = itertools.count()

    def at(self, time: float, callback: Callback, priority: int = URGENT) -> None:
        """Run ``callback`` at absolute ``time`` (never in the past)."""
        if time < self.now:
            raise RuntimeError(f"cannot schedule at {time} < now {self.now}")
        heapq.heappush(self._heap, (time, priority, next(self._counter), callback))

    def process(self, gen: Process, priority: int = URGENT) -> None:
        """Start a generator process now; it resumes with ``priority``."""
        def step() -> None:
            try:
                target = next(gen)
            except StopIteration:
                return
            if isinstance(target, Signal):
                target.wait(step, priority)
            else:
                self.at(target, step, priority)
        self.at(self.now, step, priority)

    def run(self) -> float:
        """Process callbacks until none is left; return the final time."""
        heap = self._heap
        while heap:
            self.now, _, _, callback = heapq.heappop(heap)
            callback()
        return self.now


class Signal:
    """A broadcast condition: waiters resume once, at the instant it fires."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._waiters: list[tuple[Callback, int]] = []

    def wait(self, callback: Callback, priority: int = URGENT) -> None:
        """Resume ``callback`` at the next :meth:`fire`."""
        self._waiters.append((callback, priority))

    def fire(self) -> None:
        """Wake every waiter now, in the order they started waiting."""
        waiters, self._waiters = self._waiters, []
        for callback, priority in waiters:
            self._engine.at(self._engine.now, callback, priority)
