"""Values the replica-applier simulation consumes and produces.

Everything here is a frozen dataclass: inputs (:class:`SimTransaction`),
parameters (:class:`SimConfig`) and results (:class:`SimResult`,
:class:`Span`, :class:`WaitTimes`, :class:`SweepResult`).  Field names use
MySQL's vocabulary (``last_committed``, ``sequence_number``, GAQ, LWM).

Times are in simulated seconds; the unit is whatever the cost model uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from ..errors import UsageError
from ..positions import Position

#: MySQL's upper bound for ``replica_parallel_workers``.
MAX_WORKERS = 1024


class Policy(str, Enum):
    """How the coordinator picks a worker for the next transaction.

    ``AT_MOST_ONE`` is what MySQL does (``Mts_submode_logical_clock::
    get_free_worker`` in ``sql/rpl_mta_submode.cc``): the lowest-id worker
    whose job queue is empty, so a worker holds at most one transaction that
    it has not started.  ``FIRST_AVAILABLE`` is WL#7165's alternative "B":
    the coordinator waits for the first worker that is idle (nothing running,
    nothing queued); ties go to the lowest id.
    """

    AT_MOST_ONE = "at-most-one"
    FIRST_AVAILABLE = "first-available"


@dataclass(frozen=True, slots=True)
class SimTransaction:
    """One transaction of the relay log, as the coordinator sees it.

    :param last_committed: ``last_committed`` of the Gtid event (0 if none).
    :param sequence_number: ``sequence_number`` of the Gtid event (0 if none).
    :param cost: time a worker needs to apply it, from a cost model.
    :param pos: where the transaction's Gtid event is, for messages.
    :param new_source_file: a source Rotate (new source binlog) precedes this
        transaction: sequence numbers restart and it is a barrier.
    :param size: bytes of the transaction (for the linear cost model).
    :param rows: rows changed (for the linear cost model).
    :param events: number of events (for the linear cost model).
    :param commit_ts: ``immediate_commit_timestamp`` in microseconds (8.0).
    """

    last_committed: int
    sequence_number: int
    cost: float = 0.0
    pos: Position | None = None
    gtid: str | None = None
    new_source_file: bool = False
    size: int = 0
    rows: int = 0
    events: int = 0
    commit_ts: int | None = None


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Parameters of one simulated applier.

    :param workers: ``replica_parallel_workers``.
    :param policy: worker selection, see :class:`Policy`.
    :param preserve_commit_order: ``replica_preserve_commit_order``: a
        transaction commits only after every previously dispatched one did.
    :param coordinator_overhead: coordinator time spent per transaction after
        it has chosen a worker (reading and enqueueing the events).
    :param checkpoint_group: GAQ capacity (``replica_checkpoint_group``).
        MySQL accepts 32..524280; smaller values are allowed here so that
        examples can show the GAQ filling up.
    :param dequeue_at: for ``AT_MOST_ONE``, when a worker's job queue becomes
        empty again: ``"start"`` (the whole transaction is dequeued when the
        worker starts it, the default) or ``"end"`` (events are dequeued as
        they are applied, so the queue empties when the last event, the
        commit, is dequeued: at the end of execution, before any commit-order
        wait).  Real transactions with many events behave like ``"end"``.
    :param lenient: turn inconsistent timestamps into barriers plus warnings
        instead of raising :class:`~repltool.errors.SimulationError`.
    :param trace: record one :class:`Span` per transaction.
    """

    workers: int = 4
    policy: Policy = Policy.AT_MOST_ONE
    preserve_commit_order: bool = True
    coordinator_overhead: float = 0.0
    checkpoint_group: int = 512
    dequeue_at: Literal["start", "end"] = "start"
    lenient: bool = False
    trace: bool = False

    def check(self) -> None:
        """Raise :class:`~repltool.errors.UsageError` on impossible values."""
        if not 1 <= self.workers <= MAX_WORKERS:
            raise UsageError(f"workers must be in 1..{MAX_WORKERS}, got {self.workers}")
        if not isinstance(self.policy, Policy):
            raise UsageError(f"unknown worker policy {self.policy!r}")
        if not self.coordinator_overhead >= 0.0:
            raise UsageError("coordinator_overhead must be >= 0, got "
                             f"{self.coordinator_overhead}")
        if self.dequeue_at not in ("start", "end"):
            raise UsageError(f"dequeue_at must be 'start' or 'end', got {self.dequeue_at!r}")
        if self.checkpoint_group < 1:
            raise UsageError(f"checkpoint_group must be >= 1, got {self.checkpoint_group}")


@dataclass(frozen=True, slots=True)
class Span:
    """One line of the trace: what happened to one transaction.

    ``dispatch`` is when the coordinator finished handing it to ``worker``
    (after its overhead), ``start``/``end`` bound its execution and
    ``commit`` is when it was marked done in the GAQ (later than ``end``
    only when it waited for commit order).
    """

    worker: int
    sequence_number: int
    gtid: str | None
    dispatch: float
    start: float
    end: float
    commit: float
    barrier: bool = False
    pos: Position | None = None


@dataclass(frozen=True, slots=True)
class WaitTimes:
    """Waiting time split by cause.

    The first four are coordinator time, attributed in the order the
    coordinator checks its conditions (GAQ slot, then barrier or LWM, then a
    worker); ``commit_order`` is the total time workers spent between the end
    of execution and their commit.
    """

    gaq_full: float = 0.0
    barrier: float = 0.0
    lwm: float = 0.0
    no_free_worker: float = 0.0
    commit_order: float = 0.0


@dataclass(frozen=True, slots=True)
class SimResult:
    """Outcome of one simulated run.

    :param makespan: time of the last commit.
    :param total_cost: sum of transaction costs.
    :param speedup: makespan with one worker divided by this makespan; only
        set by :func:`~repltool.schedule.sweep.sweep`.
    :param utilisation: per worker, executing time / makespan.
    :param barriers: number of transactions scheduled as a new group.
    :param warnings: inconsistencies tolerated in lenient mode.
    :param trace: one :class:`Span` per transaction in relay order, or None.
    """

    config: SimConfig
    transactions: int
    makespan: float
    total_cost: float
    utilisation: tuple[float, ...]
    waits: WaitTimes
    barriers: int
    warnings: tuple[str, ...] = ()
    trace: tuple[Span, ...] | None = None
    speedup: float | None = None

    @property
    def workers(self) -> int:
        """``replica_parallel_workers`` of the run."""
        return self.config.workers

    @property
    def policy(self) -> Policy:
        """Worker selection policy of the run."""
        return self.config.policy


@dataclass(frozen=True, slots=True)
class SweepResult:
    """A run per worker count, the dependency bound and the recommendation.

    :param results: one :class:`SimResult` per requested worker count,
        ascending, each with ``speedup`` set.
    :param critical_path: longest cost-weighted path of the dependency DAG
        (see :func:`~repltool.schedule.sweep.critical_path`).
    :param ideal_speedup: ``total_cost / critical_path``.
    :param recommended: the knee, see :func:`~repltool.schedule.sweep.knee`.
    :param cost_model: name of the cost model, for output.
    """

    results: tuple[SimResult, ...]
    baseline_makespan: float
    critical_path: float
    ideal_speedup: float
    recommended: int
    threshold: float = 0.05
    cost_model: str = field(default="")


def seconds(value: float) -> str:
    """A duration with a readable unit, three significant digits.

    >>> seconds(0.0057), seconds(2.5), seconds(0.0), seconds(12.345e-6)
    ('5.7ms', '2.5s', '0', '12.3µs')
    """
    if value == 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value / 1e-9:.3g}ns"
