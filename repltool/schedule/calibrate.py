"""Fit the linear cost model to apply times a real replica measured.

A replica applying a log serially (MariaDB ``slave_parallel_threads = 0``,
MySQL ``replica_parallel_workers = 0``) spends the sum of its transactions'
costs, so every serial measurement of a log is one linear equation in the
coefficients of :class:`~repltool.schedule.cost.LinearCost`::

    seconds = per_transaction * n + per_row * rows + per_byte * bytes + per_event * events

:func:`fit_linear_cost` solves the equations of several measured logs (of
different shapes: rows per transaction, sizes) in the least-squares sense,
with every coefficient >= 0, for the coefficients named in ``fit`` (the others
stay 0).  The result prints as ``--cost linear:T,R,B,E``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .cost import LinearCost

#: The coefficients of :class:`LinearCost`, in ``linear:T,R,B,E`` order.
COEFFICIENTS = ("per_transaction", "per_row", "per_byte", "per_event")


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured serial apply: totals of the log and the seconds it took."""

    transactions: int
    rows: int
    size: int
    events: int
    seconds: float

    @classmethod
    def of(cls, transactions: Iterable[Any], seconds: float) -> Sample:
        """Totals of ``transactions`` (anything with ``rows``, ``size``, ``events``)."""
        n = rows = size = events = 0
        for t in transactions:
            n += 1
            rows += t.rows
            size += t.size
            events += t.events
        return cls(n, rows, size, events, seconds)

    def features(self) -> tuple[float, float, float, float]:
        return (float(self.transactions), float(self.rows), float(self.size),
                float(self.events))


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    scale = max((abs(v) for row in a for v in row), default=0.0)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) <= 1e-9 * scale:
            return None                 # (nearly) singular: the data do not determine it
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit_linear_cost(samples: Sequence[Sample],
                    fit: Sequence[str] = ("per_transaction", "per_row")) -> LinearCost:
    """Non-negative least squares over the coefficients in ``fit``.

    Every subset of ``fit`` is solved by the normal equations and the
    feasible (all >= 0) solution with the smallest squared error wins: exact
    for the handful of coefficients there are.  Relative errors are
    minimised (each equation is divided by its measured seconds), so a
    short and a long measurement weigh alike.

    :raises UsageError: without samples, with an unknown coefficient name, or
        when no subset can be solved.
    """
    if not samples:
        raise UsageError("no measurements to fit the cost model to")
    bad = [f for f in fit if f not in COEFFICIENTS]
    if bad or not fit:
        raise UsageError(f"unknown cost coefficient(s) {bad}: expected {COEFFICIENTS}")
    cols = [COEFFICIENTS.index(f) for f in dict.fromkeys(fit)]
    rows = [([s.features()[c] / s.seconds for c in cols], 1.0) for s in samples
            if s.seconds > 0]
    best: tuple[float, dict[int, float]] | None = None
    for k in range(len(cols), 0, -1):
        for subset in itertools.combinations(range(len(cols)), k):
            a = [[sum(r[0][i] * r[0][j] for r in rows) for j in subset] for i in subset]
            b = [sum(r[0][i] * r[1] for r in rows) for i in subset]
            x = _solve(a, b)
            if x is None or any(v < 0 for v in x):
                continue
            err = sum((sum(r[0][i] * v for i, v in zip(subset, x)) - r[1]) ** 2 for r in rows)
            if best is None or err < best[0] - 1e-15:
                best = (err, dict(zip(subset, x)))
    if best is None:
        raise UsageError("the measurements do not determine the cost coefficients")
    values = dict.fromkeys(COEFFICIENTS, 0.0)
    for i, v in best[1].items():
        values[COEFFICIENTS[cols[i]]] = v
    return LinearCost(**values)


def cost_spec(model: LinearCost) -> str:
    """The ``--cost`` argument that rebuilds ``model``.

    >>> cost_spec(LinearCost(0.001, 0.02, 0.0, 0.0))
    'linear:0.001,0.02,0,0'
    """
    return "linear:" + ",".join(f"{getattr(model, c):.6g}" for c in COEFFICIENTS)


__all__ = ["COEFFICIENTS", "Sample", "cost_spec", "fit_linear_cost"]
