"""Simulate MySQL's multi-threaded replica applier in LOGICAL_CLOCK mode.

Library entry points::

    simulate(transactions, SimConfig(workers=8)) -> SimResult
    sweep(transactions, parse_workers("1-16"), SimConfig()) -> SweepResult
    critical_path(transactions) -> float
    recover(trace, workers=..., crash_time=...) -> RecoveryReport

Costs come from a cost model (:mod:`repltool.schedule.cost`) applied to
:class:`SimTransaction` values before simulating.  Nothing here imports
click or rich.
"""

from __future__ import annotations

from collections.abc import Iterable

from .cost import (CommitTimestampCost, ConstantCost, CostModel, CsvCost, LinearCost,
                   assign_costs)
from .fastpath import simulate_fast
from .logical_clock import clock_leq, simulate_events
from .model import (Policy, SimConfig, SimResult, SimTransaction, Span, SweepResult,
                    WaitTimes)
from .recovery import (Checkpoint, JobGroup, RecoveryReport, WorkerInfo, format_bitmap,
                       recover)
from .sweep import critical_path, knee, parse_workers, sweep


def simulate(transactions: Iterable[SimTransaction], config: SimConfig = SimConfig()) -> SimResult:
    """Simulate one applier configuration over ``transactions`` (relay order).

    One pass, bounded memory, any iterable (:func:`simulate_fast`).  The
    discrete-event reference model it is tested against is
    :func:`simulate_events` (it needs a sequence); both give the same result.

    :raises SimulationError: on inconsistent timestamps (unless
        ``config.lenient``) or an invalid cost.
    :raises UsageError: on an invalid ``config``.
    """
    return simulate_fast(transactions, config)


__all__ = [
    "Checkpoint", "CommitTimestampCost", "ConstantCost", "CostModel", "CsvCost",
    "JobGroup", "LinearCost", "Policy", "RecoveryReport", "SimConfig", "SimResult",
    "SimTransaction", "Span", "SweepResult", "WaitTimes", "WorkerInfo", "assign_costs",
    "clock_leq", "critical_path", "format_bitmap", "knee", "parse_workers", "recover",
    "simulate", "simulate_events", "simulate_fast", "sweep",
]
