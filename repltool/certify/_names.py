"""Bounded memory of which GTID got which sequence number (for ``depends_on``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

RECENT = 1024
"""How many most recent sequence numbers are always remembered."""


class SeqNames:
    """Map ``sequence_number -> gtid`` without growing with the log.

    The caller says which sequence numbers may still be referred to (those
    stored in the write-set history or certification info); everything else
    older than the last :data:`RECENT` numbers is forgotten at compaction, so
    memory follows the history size, not the log length.
    """

    __slots__ = ("_names", "_base", "_limit", "_live")

    def __init__(self, limit: int, live: Callable[[], Iterable[int]]) -> None:
        """:param limit: compaction threshold (about the history size).
        :param live: returns the sequence numbers that must be kept.
        """
        self._names: dict[int, str | None] = {}
        self._base = 2 * limit + 2 * RECENT
        self._limit = self._base
        self._live = live

    def record(self, seq: int, gtid: str | None) -> None:
        self._names[seq] = gtid
        if len(self._names) > self._limit:
            keep = set(self._live())
            newest = max(self._names)
            self._names = {s: g for s, g in self._names.items()
                           if s in keep or s > newest - RECENT}
            self._limit = max(self._base, 2 * len(self._names))

    def get(self, seq: int) -> str | None:
        return self._names.get(seq)

    def clear(self) -> None:
        self._names.clear()
