"""The damaged regions a ``keep_going`` read skipped, collected as the events stream past."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Iterator

from .events import DAMAGED_TYPE, DamagedBody, Event

if TYPE_CHECKING:
    from .transactions import Transaction

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


def cut_tails(transactions: Iterable[Transaction]) -> Iterator[Transaction]:
    """The transactions of a ``keep_going`` read, the rest of each group a damaged region
    cut marked truncated too.

    A damaged region ends the group it cuts (truncated); the events after the region,
    up to that group's end, come as groups without a GTID event: they are the same
    group's tail, which an applier that lost the group's start never runs.  Only after
    a cut group that had a GTID (in a log without GTIDs nothing tells a tail from a
    transaction).
    """
    cut = False
    for trx in transactions:
        if cut and trx.gtid is None:
            trx = dataclasses.replace(trx, truncated=True)
        else:
            cut = trx.truncated and trx.gtid is not None
        yield trx


__all__ = ["DamageLog", "KEPT", "cut_tails"]
