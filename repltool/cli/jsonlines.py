"""JSON lines written in batches: one write per 256 lines, not one per line.

``dump --writesets`` and ``certify --format jsonl`` print a line per transaction;
a stream's ``write`` per line (encoding included) cost more than building the
line.  :class:`LineBatch` joins short lines and writes a long one by itself (in
pieces when very long), each through :func:`repltool.escape.json_safe`.
"""

from __future__ import annotations

from typing import Callable

from ..escape import json_safe

#: a line longer than this (characters) is written in pieces
LONG_LINE = 1 << 20
#: one at least this long (a buffered stream's buffer) is written by itself, not batched
OWN_WRITE = 1 << 13
#: short lines joined into one write
BATCH = 256


class LineBatch:
    """Lines handed to ``emit`` (a ``str`` writer) in batches; :meth:`flush` at the end
    (what was added before an error is still written).

    Example::

        >>> out = []
        >>> lines = LineBatch(out.append)
        >>> lines.add('{"a": 1}'); lines.add('{"b": "\\u202e"}'); lines.flush()
        >>> out
        ['{"a": 1}\\n{"b": "\\\\u202e"}\\n']
    """

    __slots__ = ("_emit", "_batch")

    def __init__(self, emit: Callable[[str], object]) -> None:
        self._emit = emit
        self._batch: list[str] = []

    def add(self, text: str) -> None:
        """One line (without its newline)."""
        if len(text) < OWN_WRITE:
            batch = self._batch
            batch.append(text)
            if len(batch) >= BATCH:
                self.flush()
            return
        # longer than the stream's buffer: written on its own (one copy, the encoding;
        # not joined with others first), in pieces when very long (three copies less)
        self.flush()
        emit = self._emit
        for at in range(0, len(text), LONG_LINE):
            emit(json_safe(text[at:at + LONG_LINE]))
        emit("\n")

    def flush(self) -> None:
        """Write the lines held."""
        batch = self._batch
        if batch:
            batch.append("")
            self._emit(json_safe("\n".join(batch)))
            batch.clear()
