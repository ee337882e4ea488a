"""Binlog group commit, simulated: who commits together, and each one's commit parent.

The model follows MySQL 8.0's ordered commit and WL#7165's commit-order clock
(format-spec §6a; ``sql/binlog.cc`` ordered_commit, ``sql/rpl_trx_tracking.cc``):

* ``clients`` sessions each run one transaction at a time: think time, then the
  statements (execution time grows with the rows touched), then *prepare*.
  At prepare the transaction captures ``last_committed`` = the highest
  sequence number committed so far (``max_committed_transaction``).
* Row locks: a transaction that touches a row another in-flight transaction
  holds cannot prepare before that one has committed (InnoDB lock wait), so
  conflicting transactions never share a commit parent.
* The flush stage is a pipeline: when it is free, the leader takes every
  transaction prepared by then as one group, assigns consecutive sequence
  numbers in queue order, writes them (flush time grows with the bytes) and
  syncs (``sync_us``, plus ``binlog_group_commit_sync_delay``); meanwhile the
  previous group may still be in its commit stage.  A group's members commit
  (``max_committed`` moves to its last sequence number) at the end of its
  commit stage, and only then do their sessions start their next transaction.

Times are integer microseconds.  Everything is driven by the seeded RNG, so a
seed reproduces the same groups.
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterator

from .workload import Plan


@dataclass(frozen=True)
class ClockConfig:
    clients: int = 8
    think_us: int = 2_000              # mean think time between a session's transactions
    exec_us: int = 300                 # base execution time of a transaction
    row_us: int = 40                   # extra execution time per planned row lock
    flush_us: int = 40                 # flush stage base cost per group
    flush_bytes_per_us: int = 400      # write speed of the flush stage
    sync_us: int = 400                 # fsync of the binlog (sync_binlog=1)
    sync_delay_us: int = 0             # binlog_group_commit_sync_delay
    commit_us: int = 15                # engine commit per member
    lock_grant_us: int = 20            # a lock waiter resumes this long after the commit


class GroupCommit:
    """Drives sessions through prepare / flush / commit; yields the commit groups.

    :param plan: called as ``plan(thread_id, start_us)`` when a session starts a
        transaction; returns its :class:`~repltool.synth.workload.Plan`.
    :param size_of: estimated bytes of a planned transaction (flush time).
    """

    def __init__(self, config: ClockConfig, rng: random.Random,
                 plan: Callable[[int, int], Plan], size_of: Callable[[Plan], int],
                 start_us: int, first_thread_id: int = 10) -> None:
        self.cfg = config
        self.rng = rng
        self.plan = plan
        self.size_of = size_of
        self.ready: list[tuple[int, int, Plan]] = []     # (ready_us, tiebreak, plan)
        self.tiebreak = 0
        self.locks: dict[tuple[int, int], Plan] = {}
        self.flush_free = start_us
        self.last_commit = start_us
        self.seq = 0
        self.commit_times: list[int] = []               # commit_us of each group, increasing
        self.commit_seqs: list[int] = []                # its last sequence number
        self.trimmed_seq = 0
        for i in range(config.clients):
            self._start(first_thread_id + i, start_us + int(rng.random() * config.think_us))

    def _start(self, thread_id: int, t: int) -> None:
        p = self.plan(thread_id, t)
        cfg = self.cfg
        p.ready_us = t + cfg.exec_us + cfg.row_us * len(p.locks) \
            + int(self.rng.expovariate(1.0 / cfg.exec_us))
        locks = self.locks
        for key in p.locks:
            holder = locks.get(key)
            if holder is not None and holder is not p:
                if holder.commit_us >= 0:
                    p.ready_us = max(p.ready_us, holder.commit_us + cfg.lock_grant_us)
                elif p not in holder.waiters:
                    holder.waiters.append(p)
                    p.waits += 1
            locks[key] = p
        if p.waits == 0:
            self._push(p)

    def _push(self, p: Plan) -> None:
        self.tiebreak += 1
        heapq.heappush(self.ready, (p.ready_us, self.tiebreak, p))

    def _committed_at(self, t: int) -> int:
        """max_committed_transaction at time ``t``."""
        i = bisect_right(self.commit_times, t)
        return self.commit_seqs[i - 1] if i else self.trimmed_seq

    def groups(self) -> Iterator[list[Plan]]:
        """Commit groups, in flush order, for ever (the caller stops)."""
        cfg, rng, ready = self.cfg, self.rng, self.ready
        pop = heapq.heappop
        while True:
            t = max(self.flush_free, ready[0][0])
            group: list[Plan] = []
            while ready and ready[0][0] <= t:
                group.append(pop(ready)[2])
            nbytes = 0
            for p in group:
                p.lc_abs = self._committed_at(p.ready_us)
                self.seq += 1
                p.seq_abs = self.seq
                nbytes += self.size_of(p)
            flush = cfg.flush_us + nbytes // cfg.flush_bytes_per_us
            for k, p in enumerate(group):
                p.flush_us = t + flush * (k + 1) // len(group)
            synced = t + flush + cfg.sync_us + cfg.sync_delay_us
            self.flush_free = synced
            commit = max(self.last_commit, synced) + cfg.commit_us * len(group)
            self.last_commit = commit
            self.commit_times.append(commit)
            self.commit_seqs.append(self.seq)
            if len(self.commit_times) > 8192:
                self.trimmed_seq = self.commit_seqs[4095]
                del self.commit_times[:4096], self.commit_seqs[:4096]
            yield group
            locks = self.locks
            for p in group:
                p.commit_us = commit
                for key in p.locks:
                    if locks.get(key) is p:
                        del locks[key]
                for w in p.waiters:
                    w.ready_us = max(w.ready_us, commit + cfg.lock_grant_us)
                    w.waits -= 1
                    if w.waits == 0:
                        self._push(w)
                p.waiters = []
                self._start(p.thread_id, commit + int(rng.expovariate(1.0 / cfg.think_us)))
