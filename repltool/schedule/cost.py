"""Cost models: how long a replica worker needs to apply a transaction.

A cost model turns transactions into transactions with ``cost`` set.  All
models have a short ``name`` and a one-line ``description`` for output, and
an ``apply(transactions)`` method that is a lazy, one-pass map, so the
reader's transaction stream can flow straight into the simulator::

    trxs = assign_costs(read_sim_transactions(...), LinearCost())

The numbers are models, not measurements: the linear defaults are round
guesses for a small OLTP row change on an SSD-backed InnoDB replica.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import InputError, SimulationError, UsageError
from .logical_clock import describe

#: The largest ``--cost csv:`` file read (~5 million ``gtid,seconds`` rows).
COST_LIMIT = 256 << 20
from .model import SimTransaction


class CostModel(Protocol):
    """What the simulator needs from a cost model."""

    name: str

    @property
    def description(self) -> str:
        """One line saying how costs are computed, for output."""
        ...

    def apply(self, transactions: Iterable[SimTransaction]) -> Iterator[SimTransaction]:
        """Yield each transaction with its ``cost`` set."""
        ...


def assign_costs(transactions: Iterable[SimTransaction],
                 model: CostModel) -> Iterator[SimTransaction]:
    """Set ``cost`` on every transaction with ``model`` (lazy, one pass)."""
    return model.apply(transactions)


@dataclass(frozen=True)
class ConstantCost:
    """Every transaction costs ``seconds``."""

    seconds: float = 0.001
    name: str = "constant"

    @property
    def description(self) -> str:
        """One line for output."""
        return f"{self.seconds:g} s per transaction"

    def apply(self, transactions: Iterable[SimTransaction]) -> Iterator[SimTransaction]:
        """Yield each transaction with ``cost = seconds``."""
        for trx in transactions:
            yield dataclasses.replace(trx, cost=self.seconds)


@dataclass(frozen=True)
class LinearCost:
    """``per_transaction + per_row*rows + per_byte*size + per_event*events``.

    Defaults: 50 µs per transaction (begin, commit, group commit share),
    10 µs per row change, 5 ns per byte (about 200 MB/s of event decoding)
    and 2 µs per event.
    """

    per_transaction: float = 50e-6
    per_row: float = 10e-6
    per_byte: float = 5e-9
    per_event: float = 2e-6
    name: str = "linear"

    @property
    def description(self) -> str:
        """One line for output."""
        return (f"{self.per_transaction:g} s/trx + {self.per_row:g} s/row + "
                f"{self.per_byte:g} s/byte + {self.per_event:g} s/event")

    def cost(self, trx: SimTransaction) -> float:
        """The cost of one transaction."""
        return (self.per_transaction + self.per_row * trx.rows
                + self.per_byte * trx.size + self.per_event * trx.events)

    def apply(self, transactions: Iterable[SimTransaction]) -> Iterator[SimTransaction]:
        """Yield each transaction with its linear cost."""
        for trx in transactions:
            yield dataclasses.replace(trx, cost=self.cost(trx))


@dataclass(frozen=True)
class CommitTimestampCost:
    """Cost from 8.0 ``immediate_commit_timestamp`` (microseconds).

    The cost of a transaction is the time since the previous transaction's
    commit on the immediate source, ``max(floor, (ts_k - ts_(k-1)) / 1e6)``
    seconds; the first transaction costs ``floor``.  It measures how fast
    the source committed, which is an upper bound on what one replica
    worker needs only when the source was saturated; clock steps and
    out-of-order commits (negative differences) are clamped to ``floor``.

    :raises SimulationError: (from ``apply``) when a transaction has no
        ``commit_ts`` (5.7 sources, or a pre-8.0.1 Gtid event).
    """

    floor: float = 1e-6
    name: str = "commit-timestamps"

    @property
    def description(self) -> str:
        """One line for output."""
        return f"difference of immediate_commit_timestamp, at least {self.floor:g} s"

    def apply(self, transactions: Iterable[SimTransaction]) -> Iterator[SimTransaction]:
        """Yield each transaction with the gap to the previous commit."""
        previous: int | None = None
        for index, trx in enumerate(transactions):
            if trx.commit_ts is None:
                raise SimulationError(f"{describe(trx, index)}: no "
                                      "immediate_commit_timestamp for the "
                                      "commit-timestamps cost model", pos=trx.pos)
            cost = self.floor
            if previous is not None:
                cost = max(self.floor, (trx.commit_ts - previous) / 1e6)
            previous = trx.commit_ts
            yield dataclasses.replace(trx, cost=cost)


@dataclass(frozen=True)
class CsvCost:
    """Costs from a user CSV of ``gtid,seconds`` rows.

    A header row whose second field is not a number is skipped; blank lines
    and lines starting with ``#`` are ignored.

    :param costs: GTID to seconds.
    :param default: cost of a transaction not in the table; None makes it an
        error.
    """

    costs: dict[str, float]
    default: float | None = None
    source: str = "<dict>"
    name: str = "csv"

    @classmethod
    def from_file(cls, path: str | Path, default: float | None = None) -> CsvCost:
        """Read ``gtid,seconds`` rows from ``path``.

        :raises InputError: when the file cannot be read.
        :raises UsageError: on a malformed row, naming ``FILE:LINE``.
        """
        from ..outputs import read_text_bounded
        text = read_text_bounded(path, COST_LIMIT, "cost file")
        try:
            rows = list(csv.reader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise InputError(f"cost file {path}: {exc}") from None
        return cls(costs=_parse_rows(rows, str(path)), default=default, source=str(path))

    @property
    def description(self) -> str:
        """One line for output."""
        miss = "error" if self.default is None else f"{self.default:g} s"
        return f"{len(self.costs)} GTIDs from {self.source}, missing: {miss}"

    def apply(self, transactions: Iterable[SimTransaction]) -> Iterator[SimTransaction]:
        """Yield each transaction with its cost from the table.

        :raises SimulationError: for a GTID missing from the table when no
            default is set.
        """
        for index, trx in enumerate(transactions):
            cost = self.costs.get(trx.gtid) if trx.gtid is not None else None
            if cost is None:
                if self.default is None:
                    raise SimulationError(f"{describe(trx, index)}: not in cost file "
                                          f"{self.source}", pos=trx.pos)
                cost = self.default
            yield dataclasses.replace(trx, cost=cost)


def _parse_rows(rows: list[list[str]], source: str) -> dict[str, float]:
    costs: dict[str, float] = {}
    header_seen = False
    for line, row in enumerate(rows, start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) != 2:
            raise UsageError(f"{source}:{line}: expected 'gtid,seconds', got {row!r}")
        gtid, text = row[0].strip(), row[1].strip()
        try:
            seconds = float(text)
        except ValueError:
            if not costs and not header_seen:
                header_seen = True           # a header row
                continue
            raise UsageError(f"{source}:{line}: {text!r} is not a number") from None
        if not math.isfinite(seconds) or seconds < 0:
            raise UsageError(f"{source}:{line}: cost must be >= 0, got {text}")
        costs[gtid] = seconds
    return costs
