"""MTS checkpoints and crash recovery (WL#5599, spec §6e) over a simulated trace.

Replays a trace (:class:`~repltool.schedule.model.Span` list in relay order)
up to a crash and reconstructs what MySQL would have persisted:

* dispatch (``Log_event::get_slave_worker``, ``sql/log_event.cc``): the group
  gets ``checkpoint_seqno = rli_checkpoint_seqno++``; the first group a worker
  gets after a checkpoint carries that checkpoint and ``shifted``, the number
  of groups the checkpoints purged since the worker was last notified;
* worker commit (``Slave_worker::commit_positions``, ``sql/rpl_rli_pdb.cc``):
  a group carrying a checkpoint shifts ``group_executed`` right by
  ``shifted``; then bit ``checkpoint_seqno`` is set;
* coordinator checkpoint (``mta_checkpoint_routine``, ``sql/rpl_replica.cc``)
  every ``checkpoint_period``, when ``rli_checkpoint_seqno >=
  checkpoint_group`` before a dispatch (the GAQ is full), and before a
  barrier: purge the done groups at the GAQ head, ``rli_checkpoint_seqno -=
  purged``, every worker's pending shift ``+= purged``;
* recovery (``mts_recovery_groups``, ``sql/rpl_replica.cc``): for each worker
  whose last group is at or after the checkpoint, ``c`` = groups from the
  checkpoint to that group; bits ``[checkpoint_seqno+1-c .. checkpoint_seqno]``
  of its bitmap are OR-ed into the recovery bitmap at ``[0 .. c-1]``; the
  first ``max c`` groups after the checkpoint are skipped when their bit is
  set and re-executed otherwise (the gaps).

Simplifications: the period timer fires at exact multiples of
``checkpoint_period`` (MySQL checks it when the coordinator reads an event);
checkpoints that purge nothing are not recorded; recovery with GTID
auto-positioning (where MySQL skips this and relies on GTIDs) is not modelled.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import SimulationError, UsageError
from ..positions import Position
from .model import Span


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A coordinator checkpoint that purged ``purged`` groups.

    ``index`` is the relay index of the first group not purged (where a
    restart begins); ``pos`` is the position of the last purged group.
    ``reason`` is ``"period"``, ``"gaq-full"`` or ``"barrier"``.
    """

    time: float
    index: int
    purged: int
    reason: str
    pos: Position | None = None


@dataclass(frozen=True, slots=True)
class JobGroup:
    """A dispatched group as the GAQ holds it (``Slave_job_group``).

    ``shifted`` and ``checkpoint_index`` are None unless the group carries
    checkpoint information to its worker.  ``commit`` is None if the group
    had not committed at the crash.
    """

    index: int
    worker: int
    checkpoint_seqno: int
    shifted: int | None
    checkpoint_index: int | None
    dispatch: float
    commit: float | None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """A worker's persisted recovery state (``mysql.slave_worker_info``).

    ``group_executed`` is the bitmap as an int (bit i = checkpoint_seqno i);
    ``checkpoint_index`` is the checkpoint the worker knows about;
    ``last_group`` is the relay index of its last committed group.
    """

    worker: int
    group_executed: int
    checkpoint_seqno: int | None
    last_group: int | None
    checkpoint_index: int


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What a restart after the crash would do.

    ``checkpoint_index`` is where the coordinator restarts; of the next
    ``recovery_group_cnt`` groups, ``skipped`` are already applied and
    ``gaps`` must be re-executed.
    """

    crash_time: float
    checkpoint_group: int
    checkpoint_index: int
    checkpoint_pos: Position | None
    checkpoints: tuple[Checkpoint, ...]
    groups: tuple[JobGroup, ...]
    workers: tuple[WorkerInfo, ...]
    recovery_bitmap: int
    recovery_group_cnt: int
    skipped: tuple[int, ...]
    gaps: tuple[int, ...]


def format_bitmap(bits: int, width: int) -> str:
    """Render a bitmap as WL#5599 does: bit 0 first, space separated.

    >>> format_bitmap(0b100001, 6)
    '1 0 0 0 0 1'
    """
    return " ".join("1" if bits >> i & 1 else "0" for i in range(width))


class _Replay:
    """Coordinator and worker bookkeeping while replaying the trace."""

    def __init__(self, trace: Sequence[Span], workers: int, group: int) -> None:
        self.trace, self.group = trace, group
        self.gaq: deque[int] = deque()
        self.done: set[int] = set()
        self.seqno = 0                         # rli_checkpoint_seqno
        self.cp_index = 0
        self.checkpoints: list[Checkpoint] = []
        self.notified = [False] * workers
        self.pending_shift = [0] * workers
        self.bitmap = [0] * workers
        self.w_seqno: list[int | None] = [None] * workers
        self.w_last: list[int | None] = [None] * workers
        self.w_cp = [0] * workers
        self.carried: dict[int, tuple[int | None, int | None]] = {}   # index -> (shifted, cp index)
        self.group_seqno: dict[int, int] = {}

    def checkpoint(self, time: float, reason: str) -> int:
        purged = 0
        while self.gaq and self.gaq[0] in self.done:
            self.gaq.popleft()
            purged += 1
        if purged:
            self.cp_index += purged
            self.seqno -= purged
            for w in range(len(self.notified)):
                self.notified[w] = False
                self.pending_shift[w] += purged
            self.checkpoints.append(Checkpoint(time, self.cp_index, purged, reason,
                                               self.trace[self.cp_index - 1].pos))
        return purged

    def dispatch(self, index: int, span: Span) -> None:
        if span.barrier and self.gaq:
            self.checkpoint(span.dispatch, "barrier")
            if self.gaq:
                raise SimulationError(f"trace group #{index}: barrier dispatched "
                                      "before every earlier group committed")
        if self.seqno >= self.group and not self.checkpoint(span.dispatch, "gaq-full"):
            raise SimulationError(f"trace group #{index}: GAQ full "
                                  f"({self.group}) and its head is not done")
        w = span.worker
        self.group_seqno[index] = self.seqno
        self.seqno += 1
        self.gaq.append(index)
        if not self.notified[w]:
            self.carried[index] = (self.pending_shift[w], self.cp_index)
            self.pending_shift[w], self.notified[w] = 0, True

    def commit(self, index: int, span: Span) -> None:
        w = span.worker
        if index in self.carried:
            shifted, carried_cp = self.carried[index]
            self.bitmap[w] >>= shifted or 0
            self.w_cp[w] = carried_cp or 0
        seqno = self.group_seqno[index]
        self.bitmap[w] |= 1 << seqno
        self.w_seqno[w], self.w_last[w] = seqno, index
        self.done.add(index)


def recover(trace: Sequence[Span], *, workers: int | None = None,
            checkpoint_group: int = 512, checkpoint_period: float | None = 0.3,
            crash_time: float | None = None, gtid: str | None = None,
            index: int | None = None) -> RecoveryReport:
    """Replay checkpoints up to a crash and compute the recovery plan.

    Give exactly one of ``crash_time`` (everything at or before it
    happened), ``gtid`` or ``index`` (crash right after that transaction's
    commit).

    :param trace: spans in relay order, e.g. ``simulate(...).trace``.
    :param workers: number of workers (default: highest worker id + 1).
    :param checkpoint_period: seconds between timed checkpoints, None for
        none (checkpoints then happen only when the GAQ is full or at a
        barrier).
    :raises UsageError: on a bad crash specification.
    :raises SimulationError: when the trace is not in relay order or
        contradicts the GAQ rules.
    """
    crash = _crash_time(trace, crash_time, gtid, index)
    if checkpoint_group < 1:
        raise UsageError(f"checkpoint_group must be >= 1, got {checkpoint_group}")
    count = workers if workers is not None else 1 + max((s.worker for s in trace), default=0)
    replay = _Replay(trace, count, checkpoint_group)
    commits: list[tuple[float, int]] = []
    period = checkpoint_period if checkpoint_period and checkpoint_period > 0 else None
    ticks = [1]

    def advance(until: float) -> None:
        """Apply commits and timed checkpoints at or before ``until``."""
        while True:
            tick = ticks[0] * period if period else float("inf")
            commit = commits[0][0] if commits else float("inf")
            if min(tick, commit) > until:
                return
            if commit <= tick:
                _, i = heapq.heappop(commits)
                replay.commit(i, trace[i])
            else:
                replay.checkpoint(tick, "period")
                ticks[0] += 1
                # until the next commit (or `until`) nothing changes: the ticks in
                # between purge nothing, so jump over them (a crash at 1e308 s
                # would otherwise count ticks forever)
                k = min(commit, until) / period
                if math.isfinite(k):
                    ticks[0] = max(ticks[0], math.ceil(k))
                elif not commits:
                    return

    _check_order(trace)
    for i, span in enumerate(trace):
        if span.dispatch > crash:
            break
        advance(span.dispatch)
        replay.dispatch(i, span)
        heapq.heappush(commits, (span.commit, i))
    advance(crash)
    return _report(replay, crash)


def _check_order(trace: Sequence[Span]) -> None:
    last = float("-inf")
    for i, span in enumerate(trace):
        if span.dispatch < last or span.commit < span.dispatch:
            raise SimulationError(f"trace group #{i}: spans are not in relay order "
                                  "(dispatch times must not decrease)")
        last = span.dispatch


def _crash_time(trace: Sequence[Span], crash_time: float | None, gtid: str | None,
                index: int | None) -> float:
    given = [x is not None for x in (crash_time, gtid, index)]
    if sum(given) != 1:
        raise UsageError("give exactly one of crash_time, gtid or index")
    if crash_time is not None:
        return crash_time
    if gtid is not None:
        for span in trace:
            if span.gtid == gtid:
                return span.commit
        raise UsageError(f"GTID {gtid} is not in the trace")
    if index is None or not 0 <= index < len(trace):
        raise UsageError(f"transaction index {index} is not in the trace")
    return trace[index].commit


def _report(replay: _Replay, crash: float) -> RecoveryReport:
    cp = replay.cp_index
    recovery, cnt = 0, 0
    infos = []
    for w, last in enumerate(replay.w_last):
        seqno = replay.w_seqno[w]
        infos.append(WorkerInfo(w, replay.bitmap[w], seqno, last, replay.w_cp[w]))
        if last is None or seqno is None or last < cp:
            continue
        c = last - cp + 1
        low = seqno + 1 - c
        if low < 0:                                   # pragma: no cover - a replay bug
            raise RuntimeError(f"worker {w} bitmap does not cover the checkpoint")
        recovery |= (replay.bitmap[w] >> low) & ((1 << c) - 1)
        cnt = max(cnt, c)
    groups = []
    for i, seqno in replay.group_seqno.items():
        shifted, carried_cp = replay.carried.get(i, (None, None))
        span = replay.trace[i]
        groups.append(JobGroup(i, span.worker, seqno, shifted, carried_cp, span.dispatch,
                               span.commit if i in replay.done else None))
    skipped = tuple(cp + i for i in range(cnt) if recovery >> i & 1)
    gaps = tuple(cp + i for i in range(cnt) if not recovery >> i & 1)
    pos = replay.trace[cp - 1].pos if cp else None
    return RecoveryReport(crash, replay.group, cp, pos, tuple(replay.checkpoints),
                          tuple(groups), tuple(infos), recovery, cnt, skipped, gaps)
