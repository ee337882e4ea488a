"""Simulator input kept as columns: what ``schedule`` holds for a whole log.

The sweep replays the same transactions once per worker count, so they are
kept; as :class:`~repltool.schedule.model.SimTransaction` objects (each with
its Position and GTID text) that cost ~500 bytes per transaction.
:class:`SimColumns` stores the same values in int64/float64 arrays (~90 bytes
per transaction: GTIDs as an interned prefix and a number, positions as a file
index and an offset) and rebuilds an equal ``SimTransaction`` on demand;
:func:`~repltool.schedule.fastpath.simulate_fast` reads the clock columns
directly.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any, overload

from ..positions import Position
from .logical_clock import check_cost
from .model import SimTransaction

__all__ = ["SimColumns"]

_NONE = -(1 << 63)          # commit_ts absent


def _split_gtid(text: str) -> tuple[str, int]:
    """(prefix, number) with prefix + str(number) == text; number -1: kept whole."""
    i = len(text)
    while i and text[i - 1].isdigit():
        i -= 1
    digits = text[i:]
    if digits and len(digits) < 19 and (digits == "0" or digits[0] != "0"):
        return text[:i], int(digits)
    return text, -1


class SimColumns(Sequence[SimTransaction]):
    """A sequence of simulator transactions stored column-wise (see the module doc)."""

    def __init__(self, transactions: Iterable[SimTransaction] = ()) -> None:
        self.last_committed = array("q")
        self.sequence_number = array("q")
        self.cost = array("d")
        self.new_source_file = bytearray()
        self._size = array("q")
        self._rows = array("q")
        self._events = array("q")
        self._commit_ts = array("q")
        self._file = array("i")
        self._offset = array("q")
        self._prefix = array("i")
        self._gno = array("q")
        self._files: list[str] = []
        self._prefixes: list[str] = []
        self._index: dict[str, int] = {}            # file names and GTID prefixes
        self._payload: dict[int, int] = {}          # rare: positions inside a payload
        for trx in transactions:
            self.append(trx)

    def _intern(self, names: list[str], text: str) -> int:
        key = ("f" if names is self._files else "g") + text
        i = self._index.get(key)
        if i is None:
            i = self._index[key] = len(names)
            names.append(text)
        return i

    def append(self, trx: SimTransaction) -> None:
        """Add one transaction (its cost must be a number: else check_cost says why)."""
        n = len(self.sequence_number)
        try:
            cost = float(trx.cost)
        except (TypeError, ValueError):
            check_cost(trx, n)
            raise
        self.last_committed.append(trx.last_committed)
        self.sequence_number.append(trx.sequence_number)
        self.cost.append(cost)
        self.new_source_file.append(1 if trx.new_source_file else 0)
        self._size.append(trx.size)
        self._rows.append(trx.rows)
        self._events.append(trx.events)
        self._commit_ts.append(_NONE if trx.commit_ts is None else trx.commit_ts)
        pos = trx.pos
        if pos is None:
            self._file.append(-1)
            self._offset.append(0)
        else:
            self._file.append(self._intern(self._files, pos.file))
            self._offset.append(pos.offset)
            if pos.payload_offset is not None:
                self._payload[n] = pos.payload_offset
        if trx.gtid is None:
            self._prefix.append(-1)
            self._gno.append(0)
        else:
            prefix, gno = _split_gtid(trx.gtid)
            self._prefix.append(self._intern(self._prefixes, prefix))
            self._gno.append(gno)

    def __len__(self) -> int:
        return len(self.sequence_number)

    _ARRAYS = ("last_committed", "sequence_number", "cost", "_size", "_rows", "_events",
               "_commit_ts", "_file", "_offset", "_prefix", "_gno")

    def __getstate__(self) -> dict[str, Any]:
        # pickled compact (``schedule --spark`` sends one per unit): zlib-compressed arrays
        state = {name: (getattr(self, name).typecode,
                        zlib.compress(getattr(self, name).tobytes(), 1))
                 for name in self._ARRAYS}
        state.update(new_source_file=zlib.compress(bytes(self.new_source_file), 1),
                     _files=self._files, _prefixes=self._prefixes, _payload=self._payload)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in self._ARRAYS:
            code, data = state[name]
            a = array(code)
            a.frombytes(zlib.decompress(data))
            setattr(self, name, a)
        self.new_source_file = bytearray(zlib.decompress(state["new_source_file"]))
        self._files, self._prefixes = state["_files"], state["_prefixes"]
        self._payload = state["_payload"]
        self._index = {**{"f" + t: i for i, t in enumerate(self._files)},
                       **{"g" + t: i for i, t in enumerate(self._prefixes)}}

    def extend_columns(self, other: SimColumns) -> None:
        """Append every transaction of ``other`` (as ``append`` of each would)."""
        n = len(self)
        for name in ("last_committed", "sequence_number", "cost", "_size", "_rows", "_events",
                     "_commit_ts", "_offset", "_gno"):
            getattr(self, name).extend(getattr(other, name))
        self.new_source_file += other.new_source_file
        for mine, theirs, col in ((self._files, other._files, "_file"),
                                  (self._prefixes, other._prefixes, "_prefix")):
            table = [self._intern(mine, t) for t in theirs]
            values = getattr(other, col)
            if table == list(range(len(table))):
                getattr(self, col).extend(values)
            else:
                getattr(self, col).extend(array("i", [table[i] if i >= 0 else -1
                                                      for i in values]))
        self._payload.update({n + i: off for i, off in other._payload.items()})

    def _get(self, i: int) -> SimTransaction:
        f = self._file[i]
        pos = None if f < 0 else Position(self._files[f], self._offset[i], self._payload.get(i))
        p = self._prefix[i]
        gtid = None
        if p >= 0:
            gno = self._gno[i]
            gtid = self._prefixes[p] + (str(gno) if gno >= 0 else "")
        ts = self._commit_ts[i]
        return SimTransaction(
            last_committed=self.last_committed[i], sequence_number=self.sequence_number[i],
            cost=self.cost[i], pos=pos, gtid=gtid,
            new_source_file=bool(self.new_source_file[i]), size=self._size[i],
            rows=self._rows[i], events=self._events[i], commit_ts=None if ts == _NONE else ts)

    @overload
    def __getitem__(self, i: int) -> SimTransaction: ...

    @overload
    def __getitem__(self, i: slice) -> list[SimTransaction]: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._get(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("SimColumns index out of range")
        return self._get(i)

    def __iter__(self) -> Iterator[SimTransaction]:
        for i in range(len(self)):
            yield self._get(i)

    def clock_rows(self) -> Iterator[tuple[int, int, float, int, None]]:
        """(last_committed, sequence_number, cost, new_source_file, None) per transaction."""
        return zip(self.last_committed, self.sequence_number, self.cost,
                   self.new_source_file, repeat(None))


def clock_rows(transactions: Iterable[SimTransaction]
               ) -> Iterator[tuple[int, int, float, int, SimTransaction | None]]:
    """The clock columns of any simulator input, with the object when there is one."""
    if isinstance(transactions, SimColumns):
        return transactions.clock_rows()
    return ((t.last_committed, t.sequence_number, t.cost, t.new_source_file, t)
            for t in transactions)


def transaction_at(transactions: Sequence[SimTransaction] | Iterable[SimTransaction],
                   trx: SimTransaction | None, index: int) -> SimTransaction:
    """``trx``, or the ``index``-th transaction rebuilt from columns."""
    if trx is not None:
        return trx
    assert isinstance(transactions, SimColumns)
    return transactions[index]
