"""The damaged regions a ``keep_going`` read skipped, collected as the events stream past."""

from __future__ import annotations

from typing import Iterable, Iterator

from .events import DAMAGED_TYPE, DamagedBody, Event

#: How many damaged regions a :class:`DamageLog` keeps (it counts them all).
KEPT = 50


class DamageLog:
    """Counts (and keeps the first :data:`KEPT` of) the DAMAGED_REGION pseudo-events of a
    read with ``ReadOptions(keep_going=True)``.

    ``first`` is the exception class name of the first damage (what the exit status
    follows), ``n`` the number of regions, ``regions`` their bodies.
    """

    def __init__(self) -> None:
        self.first: str | None = None
        self.n = 0
        self.regions: list[DamagedBody] = []

    def count(self, events: Iterable[Event]) -> Iterator[Event]:
        """Yield ``events`` unchanged, recording the damaged regions among them."""
        for ev in events:
            if ev.type_code == DAMAGED_TYPE:
                self.n += 1
                if isinstance(ev.body, DamagedBody):
                    if self.first is None:
                        self.first = ev.body.error
                    if len(self.regions) < KEPT:
                        self.regions.append(ev.body)
            yield ev


__all__ = ["DamageLog", "KEPT"]
