"""Where a byte came from: the type every event, transaction and error carries."""

from __future__ import annotations

from typing import NamedTuple


class Position(NamedTuple):
    """A byte offset in a named log file (immutable).

    ``offset`` is decimal and refers to the first byte of an event, like
    mysqlbinlog's ``# at N``.  ``payload_offset`` is set for events that live
    inside a Transaction_payload event: it is the offset of the inner event in
    the decompressed payload, while ``offset`` is the payload event's own
    position in the file.

    A NamedTuple rather than a frozen dataclass: one is built for every event
    read, and tuple construction costs a fifth of a frozen dataclass's.

    Example::

        >>> str(Position("binlog.000001", 4))
        'binlog.000001:4'
        >>> str(Position("binlog.000001", 274, 71))
        'binlog.000001:274+71'
    """

    file: str
    offset: int
    payload_offset: int | None = None

    def __str__(self) -> str:
        if self.payload_offset is None:
            return f"{self.file}:{self.offset}"
        return f"{self.file}:{self.offset}+{self.payload_offset}"
