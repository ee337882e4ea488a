"""The LOGICAL_CLOCK coordinator and its workers, as a discrete-event model.

This is the readable reference model of ``Mts_submode_logical_clock``
(``sql/rpl_mta_submode.cc``, ``sql/rpl_mta_submode.h``), the GAQ
(``Slave_committed_queue`` in ``sql/rpl_rli_pdb.cc``) and the commit order
manager (``sql/rpl_replica_commit_order_manager.cc``), following spec §6d:

* one coordinator reads the relay log in order and never looks ahead: when
  the next transaction cannot be scheduled it waits (head-of-line blocking);
* it first needs a GAQ slot (capacity ``checkpoint_group``); then, for a new
  group (barrier, :func:`classify`), it waits until every dispatched
  transaction is done and resets the LWM; otherwise it waits until
  ``clock_leq(last_committed, LWM)`` or the GAQ is empty;
* then it waits for a worker (:class:`~repltool.schedule.model.Policy`),
  spends ``coordinator_overhead`` and enqueues the transaction;
* a worker runs its queue in order; with ``preserve_commit_order`` it commits
  only after the previously dispatched transaction committed; a commit marks
  the GAQ entry done, and done entries are purged from the head at once, the
  LWM becoming the ``sequence_number`` of the last purged entry.

:mod:`repltool.schedule.fastpath` computes the same results without events;
the test-suite checks that both agree.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field

from ..errors import SimulationError
from .engine import LATE, Engine, Process, Signal
from .model import Policy, SimConfig, SimResult, SimTransaction, Span, WaitTimes


# ---- rules shared with the fast path ----

def clock_leq(a: int, b: int) -> bool:
    """``clock_leq`` of ``sql/rpl_mta_submode.h``: 0 precedes everything.

    >>> clock_leq(0, 5), clock_leq(5, 0), clock_leq(3, 5), clock_leq(6, 5)
    (True, False, True, False)
    """
    if a == 0:
        return True
    if b == 0:
        return False
    return a <= b


def describe(trx: SimTransaction, index: int) -> str:
    """Name a transaction in messages: its relay index and GTID."""
    gtid = f" ({trx.gtid})" if trx.gtid else ""
    return f"transaction #{index}{gtid}"


def classify(trx: SimTransaction, index: int, last_seq: int, lenient: bool,
             warnings: list[str]) -> tuple[bool, int]:
    """Decide ``is_new_group`` for ``trx`` as ``schedule_next_event`` does.

    A transaction is a barrier when it is the first one, follows a source
    Rotate (``new_source_file``), has ``sequence_number == 0`` or
    ``last_committed == 0``, leaves a gap (``sequence_number >
    last_seq + 1``) or follows a transaction with ``sequence_number == 0``.
    As in MySQL the consistency checks are skipped for the first
    transaction of each source file (it is a barrier anyway); negative
    values are always rejected.

    :param last_seq: ``sequence_number`` of the previous transaction.
    :param lenient: record a warning in ``warnings`` and schedule the
        transaction as a barrier instead of raising.
    :returns: ``(is_new_group, last_seq for the next transaction)``.
    :raises SimulationError: on inconsistent timestamps, unless lenient.
    """
    lc, sn = trx.last_committed, trx.sequence_number
    first_event = index == 0 or trx.new_source_file
    problem = None
    if lc < 0 or sn < 0:
        problem = (f"negative logical timestamp: last_committed ({lc}), "
                   f"sequence_number ({sn})")
    elif not first_event and lc != 0 and sn <= lc:
        problem = ("inconsistent logical timestamps: "
                   f"sequence_number ({sn}) <= last_committed ({lc})")
    elif not first_event and sn != 0 and sn <= last_seq:
        problem = ("inconsistent logical timestamps: "
                   f"sequence_number ({sn}) <= previous sequence_number ({last_seq})")
    if problem is not None:
        if not lenient:
            raise SimulationError(f"{describe(trx, index)}: {problem}", pos=trx.pos)
        where = f"{trx.pos}: " if trx.pos is not None else ""
        warnings.append(f"{where}{describe(trx, index)}: {problem}; "
                        "scheduled as a barrier")
        return True, max(sn, 0)
    # ``first_event or is_barrier(lc, sn, last_seq)`` and above ``inconsistent(lc, sn)``
    # (repltool.binlog.clock), inline: classify runs once per transaction and simulated
    # configuration, and the calls cost 1.7% of ``schedule`` (bench/results/segrule.md);
    # tests/binlog/test_clock_rules.py holds these copies to the rules
    barrier = (first_event or sn == 0 or lc == 0 or sn > last_seq + 1
               or last_seq == 0)
    return barrier, sn


def check_cost(trx: SimTransaction, index: int) -> None:
    """Reject a cost that is negative, infinite or NaN."""
    cost = trx.cost
    if not (isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0):
        raise SimulationError(f"{describe(trx, index)}: cost must be a finite "
                              f"number >= 0, got {cost!r}", pos=trx.pos)


def build_result(config: SimConfig, transactions: int, makespan: float,
                 total_cost: float, busy: Sequence[float], waits: WaitTimes,
                 barriers: int, warnings: Sequence[str],
                 trace: Sequence[Span] | None) -> SimResult:
    """Assemble a :class:`SimResult` (shared by both simulators)."""
    util = tuple((b / makespan) if makespan > 0 else 0.0 for b in busy)
    return SimResult(config=config, transactions=transactions, makespan=makespan,
                     total_cost=total_cost, utilisation=util, waits=waits,
                     barriers=barriers, warnings=tuple(warnings),
                     trace=tuple(trace) if trace is not None else None)


# ---- the event-driven model ----

@dataclass(eq=False)
class _Job:
    """A GAQ entry (``Slave_job_group``) plus what the trace needs."""

    index: int
    trx: SimTransaction
    barrier: bool
    worker: int = -1
    dispatch: float = 0.0
    start: float = 0.0
    end: float = 0.0
    commit: float = 0.0
    done: bool = False


@dataclass(eq=False)
class _Worker:
    """A worker thread: its job queue, what it runs and how long it worked."""

    wid: int
    has_job: Signal
    queue: deque[_Job] = field(default_factory=deque)
    running: _Job | None = None
    drained: bool = False            # the running job's last event was dequeued
    busy: float = 0.0


class LogicalClockApplier:
    """One coordinator and ``config.workers`` workers on an :class:`Engine`."""

    def __init__(self, transactions: Sequence[SimTransaction], config: SimConfig) -> None:
        config.check()
        self.config = config
        self.transactions = transactions
        self.env = Engine()
        self.changed = Signal(self.env)      # coordinator: something may be possible now
        self.committed = Signal(self.env)    # workers waiting for commit order
        self.workers = [_Worker(w, Signal(self.env)) for w in range(config.workers)]
        self.gaq: deque[_Job] = deque()
        self.lwm = 0                         # sequence_number of the last purged entry
        self.next_commit = 0                 # relay index allowed to commit (commit order)
        self.jobs: list[_Job] = []
        self.warnings: list[str] = []
        self.waits = {"gaq_full": 0.0, "barrier": 0.0, "lwm": 0.0, "no_free_worker": 0.0}

    def run(self) -> SimResult:
        """Simulate every transaction and summarise the run."""
        for worker in self.workers:
            self.env.process(self._worker(worker))
        self.env.process(self._coordinator(), priority=LATE)
        self.env.run()
        if not all(job.done for job in self.jobs):   # pragma: no cover - a model bug
            raise RuntimeError("simulation stalled before every transaction committed")
        return self._result()

    # ---- coordinator ----

    def _coordinator(self) -> Process:
        last_seq = 0
        for index, trx in enumerate(self.transactions):
            check_cost(trx, index)
            barrier, last_seq = classify(trx, index, last_seq, self.config.lenient,
                                         self.warnings)
            yield from self._wait_until(
                lambda: len(self.gaq) < self.config.checkpoint_group, "gaq_full")
            if barrier:
                yield from self._wait_until(lambda: not self.gaq, "barrier")
                self.lwm = 0                 # gaq->lwm.sequence_number = SEQ_UNINIT
            else:
                lc = trx.last_committed
                yield from self._wait_until(
                    lambda: not self.gaq or clock_leq(lc, self.lwm), "lwm")
            job = _Job(index, trx, barrier)
            self.gaq.append(job)
            self.jobs.append(job)
            worker = yield from self._choose_worker()
            yield self.env.now + self.config.coordinator_overhead
            job.worker, job.dispatch = worker.wid, self.env.now
            worker.queue.append(job)
            worker.has_job.fire()
            yield self.env.now           # let this instant's worker events run first

    def _wait_until(self, ready: Callable[[], bool],
                    cause: str) -> Generator[Signal, None, None]:
        """Block until ``ready()``; charge the time to ``cause``."""
        since = self.env.now
        while not ready():
            yield self.changed
        self.waits[cause] += self.env.now - since

    def _choose_worker(self) -> Generator[Signal, None, _Worker]:
        since = self.env.now
        while (worker := self._free_worker()) is None:
            yield self.changed
        self.waits["no_free_worker"] += self.env.now - since
        return worker

    def _free_worker(self) -> _Worker | None:
        """The lowest-id worker the policy allows, or None.

        At-most-one needs an empty job queue; with ``dequeue_at="end"`` the
        running job counts as queued until its execution ends.
        First-available needs an idle worker.
        """
        policy, drain = self.config.policy, self.config.dequeue_at
        for worker in self.workers:
            if worker.queue:
                continue
            if worker.running is None or (policy is Policy.AT_MOST_ONE and (
                    drain == "start" or worker.drained)):
                return worker
        return None

    # ---- workers ----

    def _worker(self, worker: _Worker) -> Process:
        env = self.env
        while True:
            while not worker.queue:
                yield worker.has_job
            job = worker.queue.popleft()
            worker.running, job.start = job, env.now
            self.changed.fire()              # its queue is empty again
            job.end = env.now + job.trx.cost
            yield job.end
            worker.drained = True
            self.changed.fire()
            while self.config.preserve_commit_order and self.next_commit != job.index:
                yield self.committed
            self._commit(job)
            worker.running, worker.drained = None, False
            worker.busy += job.trx.cost

    def _commit(self, job: _Job) -> None:
        """Mark ``job`` done, purge the GAQ head and advance the LWM."""
        job.commit, job.done = self.env.now, True
        self.next_commit = max(self.next_commit, job.index + 1)
        while self.gaq and self.gaq[0].done:
            self.lwm = self.gaq.popleft().trx.sequence_number
        self.committed.fire()
        self.changed.fire()

    # ---- summary ----

    def _result(self) -> SimResult:
        jobs = self.jobs
        makespan = max((job.commit for job in jobs), default=0.0)
        commit_wait = 0.0
        for job in jobs:
            commit_wait += job.commit - job.end
        waits = WaitTimes(commit_order=commit_wait, **self.waits)
        trace = None
        if self.config.trace:
            trace = [Span(j.worker, j.trx.sequence_number, j.trx.gtid, j.dispatch,
                          j.start, j.end, j.commit, j.barrier, j.trx.pos) for j in jobs]
        total = 0.0
        for job in jobs:
            total += job.trx.cost
        return build_result(self.config, len(jobs), makespan, total,
                            [w.busy for w in self.workers], waits,
                            sum(job.barrier for job in jobs), self.warnings, trace)


def simulate_events(transactions: Sequence[SimTransaction],
                    config: SimConfig = SimConfig()) -> SimResult:
    """Simulate with the discrete-event model (slow, the reference).

    :raises SimulationError: on inconsistent timestamps (unless
        ``config.lenient``) or an invalid cost.
    :raises UsageError: on an invalid ``config``.
    """
    return LogicalClockApplier(transactions, config).run()
