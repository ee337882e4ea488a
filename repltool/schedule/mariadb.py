"""MariaDB's parallel replica applier (``slave_parallel_mode``), simulated.

MySQL's LOGICAL_CLOCK model (:mod:`repltool.schedule.logical_clock`) does
not apply to MariaDB logs: they carry no ``last_committed`` /
``sequence_number`` but a group-commit id and ``flags2`` in each GTID event,
and MariaDB's applier (``sql/rpl_parallel.cc``, ``sql/rpl_parallel.h``) uses
them its own way.  The facts this model follows:

* **Threads.**  ``slave_parallel_threads`` worker threads form one pool.
  Each replication domain (``gtid_domain_id``; every domain is 0 in
  ``minimal`` mode) owns a cyclic array of ``slave_domain_parallel_threads``
  slots (0 or more than the pool: the pool size) and gives each new event
  group to the *next* slot, round robin (``choose_thread``), whatever that
  thread is doing: a thread runs its queue in order, each group through its
  commit.  A slot keeps its thread while the thread has queued work; an idle
  thread goes back to the pool, and the SQL driver thread waits for a free
  pool thread when it needs one.  It also waits while the chosen thread has
  more than ``slave_parallel_max_queued`` bytes queued.  The driver thread
  reads the relay log in order, so any of these waits holds back every
  domain.
* **Commit order** is kept per domain (``wait_for_prior_commit``); different
  domains commit out of order.
* **Group commit orderers (GCO).**  A new GCO starts when the mode says so;
  its groups start only once every earlier group of the domain has *started*
  its commit (``mark_start_commit``: at the XID / COMMIT, before waiting for
  the prior commit; for a standalone group - DDL - and an XA PREPARE group,
  which have neither, only when they finished).
  ``minimal``: every group is a new GCO (only commits overlap).
  ``conservative``: a new GCO whenever ``commit_id`` changes or is absent
  (groups that group-committed on the primary run together).
  ``optimistic`` / ``aggressive``: one GCO for everything but DDL: a GCO
  with DDL (``FL_DDL``) is a switch point before and after.  ``FL_WAITED``
  only matters in ``optimistic``; it is not looked at in ``conservative``.
* **Speculation** (optimistic, aggressive): a group that is not
  ``FL_TRANSACTIONAL`` (it could not be rolled back), or - optimistic only -
  lacks ``FL_ALLOW_PARALLEL`` (``skip_parallel_replication``) or has
  ``FL_WAITED`` (it waited for a row lock on the primary), waits for the
  prior group's commit before it starts (``SPECULATE_WAIT``); later groups
  still run in parallel with it.
* **Conflicts** (:attr:`MariaTransaction.conflicts`, e.g. from the write
  sets :mod:`repltool.writeset` extracts) only cost time when the two groups
  overlap.  Row locks are taken as the group starts.  When the earlier group
  of the domain started first, the later one waits for its commit; when the
  later one holds the lock, the earlier one's lock request makes InnoDB kill
  the later one (``thd_rpl_deadlock_check``), which rolls back, waits for the
  prior commit (``retry_event_group``) and runs again: a *retry*.  Across
  domains nothing is killed; the later group just waits.
* ``none`` (or 0 threads): the SQL thread applies everything itself, one
  group after the other.

Costs come from the usual cost models (:mod:`repltool.schedule.cost`): they
read ``cost``, ``rows``, ``size``, ``events`` and ``gtid`` and replace
``cost``, which :class:`MariaTransaction` has too.  Nothing here imports
click or rich.
"""

from __future__ import annotations

import dataclasses
import math
import os
from array import array
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from ..binlog.constants import (MARIA_FL_ALLOW_PARALLEL, MARIA_FL_DDL, MARIA_FL_STANDALONE,
                                MARIA_FL_TRANSACTIONAL, MARIA_FL_WAITED)
from ..errors import SimulationError, UsageError
from ..positions import Position
from .sweep import knee

if TYPE_CHECKING:
    from ..binlog.damage import DamageLog
    from ..binlog.transactions import Transaction
    from ..binlog.window import Window
    from ..writeset import TrxWriteset

#: MariaDB's upper bound for ``slave_parallel_threads``.
MAX_THREADS = 16383
#: ``slave_parallel_max_queued`` default (bytes).
DEFAULT_MAX_QUEUED = 131072

#: MariaDB's names for what the simulation varies, for output.
VARIABLES = {
    "mode": "slave_parallel_mode",
    "threads": "slave_parallel_threads",
    "domain_threads": "slave_domain_parallel_threads",
    "max_queued": "slave_parallel_max_queued",
}


class ParallelMode(str, Enum):
    """``slave_parallel_mode``; members compare in MariaDB's enum order."""

    NONE = "none"
    MINIMAL = "minimal"
    CONSERVATIVE = "conservative"
    OPTIMISTIC = "optimistic"
    AGGRESSIVE = "aggressive"

    @property
    def rank(self) -> int:
        """Position in ``enum_slave_parallel_mode`` (none = 0 ... aggressive = 4)."""
        return _RANK[self.value]


_RANK = {"none": 0, "minimal": 1, "conservative": 2, "optimistic": 3, "aggressive": 4}


#: What ``mariadbd --verbose --help`` of MariaDB 10.11 reports as the default.
DEFAULT_MODE = ParallelMode.CONSERVATIVE


@dataclass(frozen=True, slots=True)
class MariaTransaction:
    """One event group of a MariaDB relay log, as the SQL driver thread sees it.

    :param cost: time a worker needs to apply it, from a cost model.
    :param domain_id: the GTID's replication domain.
    :param flags2: the GTID event's ``flags2`` (``FL_STANDALONE`` 0x01,
        ``FL_GROUP_COMMIT_ID`` 0x02, ``FL_TRANSACTIONAL`` 0x04,
        ``FL_ALLOW_PARALLEL`` 0x08, ``FL_WAITED`` 0x10, ``FL_DDL`` 0x20).
    :param commit_id: the group-commit id, None without ``FL_GROUP_COMMIT_ID``.
    :param conflicts: relay indexes of earlier groups it takes a row lock
        of (only the latest matter; commit order does the rest).
    """

    cost: float = 0.0
    domain_id: int = 0
    flags2: int = MARIA_FL_TRANSACTIONAL | MARIA_FL_ALLOW_PARALLEL
    commit_id: int | None = None
    conflicts: tuple[int, ...] = ()
    gtid: str | None = None
    pos: Position | None = None
    size: int = 0
    rows: int = 0
    events: int = 0
    kind: str = "dml"
    commit_ts: int | None = None        # never logged by MariaDB; for the cost models


@dataclass(frozen=True, slots=True)
class MariaConfig:
    """Parameters of one simulated MariaDB replica.

    :param mode: ``slave_parallel_mode``.
    :param threads: ``slave_parallel_threads`` (0: the SQL thread applies).
    :param domain_threads: ``slave_domain_parallel_threads`` (0: ``threads``).
    :param max_queued: ``slave_parallel_max_queued`` in bytes.
    :param trace: record one :class:`MariaSpan` per group.
    """

    mode: ParallelMode = DEFAULT_MODE
    threads: int = 4
    domain_threads: int = 0
    max_queued: int = DEFAULT_MAX_QUEUED
    trace: bool = False

    def check(self) -> None:
        """Raise :class:`~repltool.errors.UsageError` on impossible values."""
        if not isinstance(self.mode, ParallelMode):
            raise UsageError(f"unknown slave_parallel_mode {self.mode!r}")
        if not 0 <= self.threads <= MAX_THREADS:
            raise UsageError(f"slave_parallel_threads must be in 0..{MAX_THREADS}, "
                             f"got {self.threads}")
        if not 0 <= self.domain_threads <= MAX_THREADS:
            raise UsageError(f"slave_domain_parallel_threads must be in 0..{MAX_THREADS}, "
                             f"got {self.domain_threads}")
        if self.max_queued < 0:
            raise UsageError(f"slave_parallel_max_queued must be >= 0, got {self.max_queued}")

    @property
    def serial(self) -> bool:
        """The SQL thread applies everything itself (``none`` or no threads)."""
        return self.mode is ParallelMode.NONE or self.threads == 0

    @property
    def slots(self) -> int:
        """Threads one domain may occupy (``rpl_parallel::find``)."""
        dt = self.domain_threads
        return self.threads if dt == 0 or dt > self.threads else dt


@dataclass(frozen=True, slots=True)
class MariaSpan:
    """What happened to one group.

    ``speculation`` is ``"no"``, ``"optimistic"`` or ``"wait"``
    (``rpl_group_info::speculation``); ``start`` is when the worker began
    it (after the GCO and speculation waits), ``exec_start`` when the run
    that succeeded began (later after a lock wait or a retry), ``commit``
    when it committed.  ``thread`` is -1 for the SQL thread.
    """

    index: int
    gtid: str | None
    domain_id: int
    thread: int
    gco: int
    speculation: str
    dispatch: float
    start: float
    exec_start: float
    end: float
    commit: float
    retried: bool = False
    pos: Position | None = None


@dataclass(frozen=True, slots=True)
class MariaWaits:
    """Time spent waiting, by cause.

    ``no_thread`` and ``queue_full`` are SQL driver thread time (no free pool
    thread; the chosen thread had more than ``slave_parallel_max_queued``
    queued); the others are summed over groups: ``gco`` (prior groups had not
    started their commit), ``prior_commit`` (``SPECULATE_WAIT``),
    ``lock`` (a row lock of an earlier group), ``retry`` (run lost to a
    deadlock kill plus the wait for the prior commit), ``commit_order``
    (finished, waiting for the prior commit).
    """

    no_thread: float = 0.0
    queue_full: float = 0.0
    gco: float = 0.0
    prior_commit: float = 0.0
    lock: float = 0.0
    retry: float = 0.0
    commit_order: float = 0.0


@dataclass(frozen=True, slots=True)
class MariaResult:
    """Outcome of one simulated run (times in the cost model's unit).

    :param speedup: serial makespan over this one; set by :func:`sweep_mariadb`.
    """

    config: MariaConfig
    transactions: int
    makespan: float
    total_cost: float
    utilisation: tuple[float, ...]
    waits: MariaWaits
    gcos: int
    retries: int
    domains: int
    trace: tuple[MariaSpan, ...] | None = None
    speedup: float | None = None

    @property
    def threads(self) -> int:
        """``slave_parallel_threads`` of the run."""
        return self.config.threads

    @property
    def mode(self) -> ParallelMode:
        """``slave_parallel_mode`` of the run."""
        return self.config.mode


@dataclass(frozen=True, slots=True)
class MariaSweep:
    """One run per thread count, against the serial SQL thread.

    :param serial_makespan: ``slave_parallel_threads = 0`` (the baseline).
    :param bound: the best makespan of the mode: over the runs and one with
        a thread per group (more threads can be slower: more retries).
    :param recommended: the knee (:func:`~repltool.schedule.sweep.knee`).
    """

    results: tuple[MariaResult, ...]
    serial_makespan: float
    bound: float
    ideal_speedup: float
    recommended: int
    threshold: float = 0.05
    cost_model: str = ""

    @property
    def mode(self) -> ParallelMode:
        """``slave_parallel_mode`` of the sweep."""
        return self.results[0].config.mode if self.results else DEFAULT_MODE


# ---- the simulation ----

def _check_cost(trx: MariaTransaction, index: int) -> float:
    cost = trx.cost
    if not (isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0):
        gtid = f" ({trx.gtid})" if trx.gtid else ""
        raise SimulationError(f"transaction #{index}{gtid}: cost must be a finite number "
                              f">= 0, got {cost!r}", pos=trx.pos)
    return float(cost)


@dataclass
class _Domain:
    """``rpl_parallel_entry``: one replication domain's applier state."""

    slots: list[int | None]
    rr: int = -1                        # rpl_thread_idx
    gco: int = -1                       # id of the current GCO
    gco_flags: int = 0
    gco_wait: float = 0.0               # when its groups may start
    last_commit_id: int = 0
    marks_max: float = 0.0              # latest mark_start_commit of the groups so far
    last_commit: float = 0.0            # commit time of the previous group
    last_index: int = -1
    started: bool = False


_MULTI_BATCH = 0x01
_FORCE_SWITCH = 0x02


@dataclass
class _Thread:
    """A pool thread: who owns it, when it is free, what it has queued."""

    owner: tuple[int, int] | None = None
    free_at: float = 0.0                # commit of the last group queued to it
    queued: deque[tuple[float, int]] = dataclasses.field(default_factory=deque)
    queued_bytes: int = 0
    busy: float = 0.0

    def drain(self, now: float) -> None:
        """Forget the groups whose events were all applied by ``now``."""
        queued = self.queued
        while queued and queued[0][0] <= now:
            self.queued_bytes -= queued.popleft()[1]


def simulate_mariadb(transactions: Iterable[MariaTransaction],
                     config: MariaConfig = MariaConfig()) -> MariaResult:
    """Simulate one MariaDB replica configuration over ``transactions`` (relay order).

    One pass; every decision depends on earlier groups only, as in the SQL
    driver thread.  Memory: 24 bytes per group (start and commit times and
    domain, for the conflicts) plus the queues of the threads.

    :raises SimulationError: on an invalid cost.
    :raises UsageError: on an invalid ``config``.
    """
    config.check()
    if config.serial:
        return _serial(transactions, config)
    rank = config.mode.rank
    minimal = rank <= _RANK["minimal"]
    speculative = rank >= _RANK["optimistic"]
    aggressive = rank >= _RANK["aggressive"]
    pool = [_Thread() for _ in range(config.threads)]
    domains: dict[int, _Domain] = {}
    starts = array("d")                 # per index: when the group's lock run began
    commits = array("d")
    domain_of = array("q")
    spans: list[MariaSpan] | None = [] if config.trace else None
    now = 0.0                           # the SQL driver thread
    w = dict.fromkeys(("no_thread", "queue_full", "gco", "prior_commit", "lock", "retry",
                       "commit_order"), 0.0)
    total = 0.0
    gcos = retries = 0
    makespan = 0.0
    for index, trx in enumerate(transactions):
        cost = _check_cost(trx, index)
        total += cost
        flags = trx.flags2
        dom_id = 0 if minimal else trx.domain_id
        dom = domains.get(dom_id)
        if dom is None:
            dom = domains[dom_id] = _Domain(slots=[None] * config.slots)
        # -- choose_thread: the next slot, its thread if still ours, else a pool thread
        dom.rr = (dom.rr + 1) % len(dom.slots)
        tid = dom.slots[dom.rr]
        if tid is None or pool[tid].owner != (dom_id, dom.rr) or pool[tid].free_at <= now:
            if tid is not None and pool[tid].owner == (dom_id, dom.rr):
                pool[tid].owner = None           # went idle: back to the pool
            tid = _free_thread(pool, now)
            if tid is None:
                until = min(t.free_at for t in pool)
                w["no_thread"] += until - now
                now = until
                tid = _free_thread(pool, now)
                assert tid is not None
            pool[tid].owner = (dom_id, dom.rr)
            pool[tid].queued.clear()
            pool[tid].queued_bytes = 0
            dom.slots[dom.rr] = tid
        thread = pool[tid]
        thread.drain(now)
        while thread.queued_bytes > config.max_queued:
            until = thread.queued[0][0]
            w["queue_full"] += until - now
            now = until
            thread.drain(now)
        dispatch = now
        # -- do_event: GCO and speculation
        new_gco = True
        speculation = "no"
        force = _FORCE_SWITCH if flags & MARIA_FL_DDL else 0
        commit_id = trx.commit_id if trx.commit_id is not None else None
        if dom.started:
            gflags = dom.gco_flags
            if (minimal or commit_id is None
                    or dom.last_commit_id != commit_id):
                gflags |= _MULTI_BATCH
            gflags |= force
            if not gflags & _MULTI_BATCH:
                new_gco = False
            elif speculative and not gflags & _FORCE_SWITCH:
                new_gco = False
                if (not flags & MARIA_FL_TRANSACTIONAL or (
                        (not flags & MARIA_FL_ALLOW_PARALLEL or flags & MARIA_FL_WAITED)
                        and not aggressive)):
                    speculation = "wait"
                else:
                    speculation = "optimistic"
            dom.gco_flags = gflags
        dom.last_commit_id = commit_id if commit_id is not None else 0
        if new_gco:
            dom.gco += 1
            gcos += 1
            dom.gco_flags = force
            dom.gco_wait = dom.marks_max
        dom.started = True
        # -- the worker: its queue, the GCO wait, the speculation wait
        ready = max(dispatch, thread.free_at)
        start = max(ready, dom.gco_wait)
        w["gco"] += start - ready
        if speculation == "wait" and dom.last_commit > start:
            w["prior_commit"] += dom.last_commit - start
            start = dom.last_commit
        # -- row locks of earlier groups still running
        exec_start = start
        retried = False
        for other in trx.conflicts:
            if not 0 <= other < index:
                continue
            other_commit = commits[other]
            if other_commit <= exec_start:
                continue
            if domain_of[other] == dom_id and starts[other] > exec_start:
                # we hold the lock; the earlier group's request kills us: retry
                # after the prior commit (retry_event_group)
                retried = True
                continue
            w["lock"] += other_commit - exec_start
            exec_start = other_commit
        if retried:
            retries += 1
            prior = max(dom.last_commit, exec_start)
            w["retry"] += prior - exec_start
            exec_start = prior
        end = exec_start + cost
        commit = max(end, dom.last_commit)
        w["commit_order"] += commit - end
        # mark_start_commit: at the XID / COMMIT; a standalone group (DDL) and an XA
        # PREPARE group (no XID) only mark it in finish_event_group, after committing
        mark = commit if flags & MARIA_FL_STANDALONE or trx.kind == "xa-prepare" else end
        dom.marks_max = max(dom.marks_max, mark)
        dom.last_commit = commit
        dom.last_index = index
        thread.free_at = commit
        thread.busy += cost
        thread.queued.append((end, trx.size))
        thread.queued_bytes += trx.size
        starts.append(exec_start)
        commits.append(commit)
        domain_of.append(dom_id)
        makespan = max(makespan, commit)
        if spans is not None:
            spans.append(MariaSpan(index, trx.gtid, trx.domain_id, tid, dom.gco, speculation,
                                   dispatch, start, exec_start, end, commit, retried, trx.pos))
    util = tuple((t.busy / makespan) if makespan > 0 else 0.0 for t in pool)
    return MariaResult(config=config, transactions=len(commits), makespan=makespan,
                       total_cost=total, utilisation=util, waits=MariaWaits(**w), gcos=gcos,
                       retries=retries, domains=len(domains),
                       trace=tuple(spans) if spans is not None else None)


def _free_thread(pool: list[_Thread], now: float) -> int | None:
    """The lowest-numbered pool thread that is idle at ``now``."""
    for tid, thread in enumerate(pool):
        if thread.owner is None or thread.free_at <= now:
            return tid
    return None


def _serial(transactions: Iterable[MariaTransaction], config: MariaConfig) -> MariaResult:
    """The SQL thread applies each group itself, in relay order."""
    now = total = 0.0
    count = 0
    spans: list[MariaSpan] | None = [] if config.trace else None
    domains: set[int] = set()
    for index, trx in enumerate(transactions):
        cost = _check_cost(trx, index)
        domains.add(trx.domain_id)
        if spans is not None:
            spans.append(MariaSpan(index, trx.gtid, trx.domain_id, -1, 0, "no", now, now, now,
                                   now + cost, now + cost, False, trx.pos))
        now += cost
        total += cost
        count += 1
    return MariaResult(config=config, transactions=count, makespan=now, total_cost=total,
                       utilisation=(1.0 if now > 0 else 0.0,), waits=MariaWaits(), gcos=0,
                       retries=0, domains=len(domains),
                       trace=tuple(spans) if spans is not None else None)


def sweep_mariadb(transactions: Sequence[MariaTransaction], threads: Iterable[int],
                  config: MariaConfig = MariaConfig(), *, threshold: float = 0.05,
                  cost_model: str = "") -> MariaSweep:
    """Simulate each ``slave_parallel_threads`` count against the serial SQL thread.

    The speed-up of a run is the serial makespan (``slave_parallel_threads
    = 0``) over its own; ``bound`` is the best makespan of the runs and of
    one with a thread per group (at most :data:`MAX_THREADS`).

    :raises UsageError: on an empty or invalid thread list.
    """
    counts = sorted(set(threads))
    if not counts:
        raise UsageError("no thread counts to simulate")
    base = dataclasses.replace(config, trace=False)
    serial = simulate_mariadb(transactions, dataclasses.replace(base, threads=0)).makespan
    runs = []
    for count in counts:
        run = simulate_mariadb(transactions, dataclasses.replace(base, threads=count))
        runs.append(dataclasses.replace(
            run, speedup=(serial / run.makespan) if run.makespan > 0 else 1.0))
    bound = min([serial] + [r.makespan for r in runs])
    if base.mode is not ParallelMode.NONE:
        wide = max(1, min(MAX_THREADS, len(transactions)))
        bound = min(bound, simulate_mariadb(transactions, dataclasses.replace(
            base, threads=wide, domain_threads=0)).makespan)
    return MariaSweep(results=tuple(runs), serial_makespan=serial, bound=bound,
                      ideal_speedup=(serial / bound) if bound > 0 else 1.0,
                      recommended=knee([(r.threads, r.makespan) for r in runs], threshold),
                      threshold=threshold, cost_model=cost_model)


# ---- from logs ----

def maria_transactions(paths: Sequence[str | os.PathLike[str]], *,
                       verify_checksum: bool = True, conflicts: bool = True,
                       schema_paths: Sequence[str | os.PathLike[str]] = (),
                       warnings: list[str] | None = None,
                       schema_db: str | None = None,
                       window: Window | None = None,
                       damage: DamageLog | None = None) -> Iterator[MariaTransaction]:
    """Read MariaDB logs into :class:`MariaTransaction` values (costs 0).

    ``domain_id`` comes from the GTID, ``flags2`` / ``commit_id`` as logged,
    ``rows`` is the number of rows events.  With ``conflicts`` the write set
    of each group is extracted (:func:`repltool.writeset.read_writesets`)
    and a group conflicts with the latest earlier writer of each of its keys;
    a table written without a usable key counts as one key (the applier
    scans and locks it), and FK parent keys count as written (the safe
    side: a parent S-lock only conflicts with a writer).  Truncated groups
    are skipped (the applier discards them).  With a ``window``
    (:meth:`repltool.binlog.window.Window.select`), only its groups, as if the logs
    held only them.  With ``damage`` (``--keep-going``) damaged regions are skipped and
    recorded in it; a group they cut is skipped as the applier discards a group without
    its end (its part after the region too, which has no GTID event).
    """
    names = [os.fspath(p) for p in paths]
    windowed = window is not None and window.active
    if windowed or damage is not None:
        from dataclasses import replace

        from ..binlog import read_events
        from ..binlog.transactions import group_transactions
        from ..writeset import READ_OPTIONS, iter_writesets, load_schema
        events = read_events(names, replace(READ_OPTIONS, verify_checksum=verify_checksum,
                                            keep_going=damage is not None))
        trxs = group_transactions(events if damage is None else damage.count(events),
                                  keep_events=True)
        if damage is not None:
            from ..binlog.damage import cut_tails
            trxs = cut_tails(trxs)
        if windowed:
            assert window is not None
            trxs = window.select(trxs, names)
        schema = load_schema([os.fspath(p) for p in schema_paths], default_db=schema_db) \
            if schema_paths and conflicts else None
        pairs: Iterable[tuple[Transaction, TrxWriteset | None]] = (
            iter_writesets(trxs, schema) if conflicts else ((t, None) for t in trxs))
    elif conflicts:
        from ..writeset import read_writesets
        schema = None
        if schema_paths:
            from ..writeset import load_schema
            schema = load_schema([os.fspath(p) for p in schema_paths], default_db=schema_db)
        pairs = read_writesets(names, schema, verify_checksum=verify_checksum)
    else:
        from ..binlog import ReadOptions, read_transactions
        from ..binlog.transactions import GROUPING_TYPES
        pairs = ((t, None) for t in read_transactions(
            names, ReadOptions(verify_checksum=verify_checksum, types=GROUPING_TYPES)))
    writer: dict[object, int] = {}
    index = 0
    for trx, ws in pairs:
        if trx.truncated:
            continue
        yield _to_maria(trx, ws, writer, index)
        index += 1


def _to_maria(trx: Transaction, ws: TrxWriteset | None, writer: dict[object, int],
              index: int) -> MariaTransaction:
    gtid = trx.gtid
    domain = 0
    if gtid and "-" in gtid and ":" not in gtid:
        head = gtid.split("-", 1)[0]
        domain = int(head) if head.isdigit() else 0
    flags = trx.maria_flags
    if flags is None:           # not a MariaDB group: run it after the prior commit
        flags = MARIA_FL_TRANSACTIONAL
    found: set[int] = set()
    if ws is not None:
        keys: list[object] = list(ws.hashes)
        keys.extend(("table", name) for name in ws.missing_key_tables)
        for key in keys:
            earlier = writer.get(key)
            if earlier is not None and earlier != index:
                found.add(earlier)
            writer[key] = index
    return MariaTransaction(
        domain_id=domain, flags2=flags, commit_id=trx.commit_id, conflicts=tuple(sorted(found)),
        gtid=gtid, pos=trx.start, size=trx.size, rows=sum(n for _, n in trx.rows_events),
        events=trx.num_events, kind=trx.kind)


def is_mariadb_log(paths: Sequence[str | os.PathLike[str]]) -> bool:
    """True when the first group of the logs is a MariaDB one (GTID event 162)."""
    from ..binlog import read_transactions
    for trx in read_transactions([os.fspath(p) for p in paths]):
        return trx.maria_flags is not None      # MariaDB 10+ opens every group with one
    return False


# ---- measured against predicted ----

@dataclass(frozen=True, slots=True)
class Measurement:
    """One apply time a real replica measured: ``mode`` with ``threads``."""

    mode: ParallelMode
    threads: int
    seconds: float


def read_measurements(path: str | os.PathLike[str]) -> list[Measurement]:
    """Read ``mode,threads,seconds`` rows (a header and ``#`` lines are skipped).

    One row must be the serial baseline (``threads`` 0, or mode ``none``).

    :raises InputError: when the file cannot be read.
    :raises UsageError: on a malformed row, naming ``FILE:LINE``.
    """
    import csv
    from ..errors import InputError
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read measurements {path}: {exc}") from exc
    out: list[Measurement] = []
    for line, row in enumerate(rows, start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) != 3:
            raise UsageError(f"{path}:{line}: expected 'mode,threads,seconds', got {row!r}")
        mode_text, threads_text, seconds_text = (c.strip() for c in row)
        if not out and mode_text.lower() == "mode":
            continue
        try:
            mode = ParallelMode(mode_text.lower())
        except ValueError:
            raise UsageError(f"{path}:{line}: unknown slave_parallel_mode {mode_text!r}") from None
        try:
            threads, seconds = int(threads_text), float(seconds_text)
        except ValueError:
            raise UsageError(f"{path}:{line}: threads must be an integer and seconds a "
                             f"number, got {threads_text!r}, {seconds_text!r}") from None
        if not 0 <= threads <= MAX_THREADS or not math.isfinite(seconds) or seconds <= 0:
            raise UsageError(f"{path}:{line}: threads must be in 0..{MAX_THREADS} and "
                             "seconds > 0")
        out.append(Measurement(mode, threads, seconds))
    if not any(m.threads == 0 or m.mode is ParallelMode.NONE for m in out):
        raise UsageError(f"{path}: no serial baseline row (threads 0 or mode none)")
    return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """Predicted against measured speed-up for one ``(mode, threads)``."""

    mode: ParallelMode
    threads: int
    measured_seconds: float
    measured_speedup: float
    predicted_speedup: float
    predicted_makespan: float

    @property
    def error(self) -> float:
        """``predicted / measured - 1`` (positive: the model is optimistic)."""
        return self.predicted_speedup / self.measured_speedup - 1.0


def compare_measurements(transactions: Sequence[MariaTransaction],
                         measurements: Sequence[Measurement],
                         config: MariaConfig = MariaConfig()) -> list[Comparison]:
    """Predict each measured configuration; speed-ups against the serial row.

    The measured baseline is the mean of the serial rows; each parallel row
    is compared with the simulation of its mode and thread count.
    """
    serial_rows = [m.seconds for m in measurements
                   if m.threads == 0 or m.mode is ParallelMode.NONE]
    if not serial_rows:
        raise UsageError("measurements: no serial baseline (threads 0 or mode none)")
    base = sum(serial_rows) / len(serial_rows)
    serial = simulate_mariadb(transactions, dataclasses.replace(config, threads=0,
                                                                trace=False)).makespan
    out: list[Comparison] = []
    for m in measurements:
        if m.threads == 0 or m.mode is ParallelMode.NONE:
            continue
        run = simulate_mariadb(transactions, dataclasses.replace(
            config, mode=m.mode, threads=m.threads, trace=False))
        out.append(Comparison(m.mode, m.threads, m.seconds, base / m.seconds,
                              (serial / run.makespan) if run.makespan > 0 else 1.0,
                              run.makespan))
    return out




# ---- the report ``repltool schedule`` prints for MariaDB logs ----

@dataclass(frozen=True)
class MariaReport:
    """One mode swept over thread counts, and what the logs held."""

    files: tuple[str, ...]
    sweep: MariaSweep
    config: MariaConfig
    cost_model: str
    cost_description: str
    transactions: int
    domains: int
    commit_groups: int
    flag_counts: dict[str, int]
    conflicting: int
    comparisons: tuple[Comparison, ...] = ()
    warnings: tuple[str, ...] = ()


_FLAG_NAMES = (("waited", MARIA_FL_WAITED), ("ddl", MARIA_FL_DDL),
               ("non_transactional", -MARIA_FL_TRANSACTIONAL),
               ("no_allow_parallel", -MARIA_FL_ALLOW_PARALLEL))


def maria_reports(paths: Sequence[str | os.PathLike[str]], threads: Sequence[int],
                  modes: Sequence[ParallelMode], cost_model: object, *,
                  config: MariaConfig = MariaConfig(), verify_checksum: bool = True,
                  schema_paths: Sequence[str | os.PathLike[str]] = (),
                  measurements: Sequence[Measurement] = (),
                  threshold: float = 0.05, schema_db: str | None = None,
                  window: Window | None = None,
                  damage: DamageLog | None = None) -> list[MariaReport]:
    """Read MariaDB logs once and sweep ``threads`` in each of ``modes``.

    :param cost_model: a :class:`~repltool.schedule.cost.CostModel`.
    :param measurements: the user's replica measurements; the report of each
        mode carries the comparisons of that mode's rows.
    :param damage: read with ``keep_going``: damaged regions are skipped and recorded
        in it, the groups they cut are left out (as the applier discards them).
    :raises ReplToolError: from reading, the cost model or the simulation.
    """
    import warnings as _w
    with _w.catch_warnings(record=True) as caught:
        _w.simplefilter("always")
        sims = list(cost_model.apply(maria_transactions(  # type: ignore[attr-defined]
            paths, verify_checksum=verify_checksum, schema_paths=schema_paths,
            schema_db=schema_db, window=window, damage=damage)))
    notes = tuple(dict.fromkeys(str(c.message) for c in caught))
    groups = 0
    previous: tuple[int, int | None] | None = None
    flags = dict.fromkeys((name for name, _ in _FLAG_NAMES), 0)
    for t in sims:
        key = (t.domain_id, t.commit_id)
        if t.commit_id is None or key != previous:
            groups += 1
        previous = key
        for name, bit in _FLAG_NAMES:
            flags[name] += bool(t.flags2 & bit) if bit > 0 else not t.flags2 & -bit
    model_name = getattr(cost_model, "name", "")
    description = getattr(cost_model, "description", "")
    out = []
    for mode in modes:
        cfg = dataclasses.replace(config, mode=mode, trace=False)
        sw = sweep_mariadb(sims, threads, cfg, threshold=threshold, cost_model=model_name)
        rows = [m for m in measurements if m.mode is mode or m.threads == 0
                or m.mode is ParallelMode.NONE]
        comps = tuple(compare_measurements(sims, rows, cfg)) if any(
            m.mode is mode and m.threads > 0 for m in rows) else ()
        out.append(MariaReport(
            files=tuple(os.fspath(p) for p in paths), sweep=sw, config=cfg,
            cost_model=model_name, cost_description=description, transactions=len(sims),
            domains=len({t.domain_id for t in sims}), commit_groups=groups,
            flag_counts=flags, conflicting=sum(1 for t in sims if t.conflicts),
            comparisons=comps, warnings=notes))
    return out


def maria_recommendation(report: MariaReport) -> str:
    """The sentence naming the MariaDB settings to use."""
    sw = report.sweep
    k = sw.recommended
    counts = [r.threads for r in sw.results]
    mode = report.config.mode.value
    if report.config.mode is ParallelMode.NONE:
        return "slave_parallel_mode = none applies serially: thread counts make no difference"
    if k == counts[-1] and len(counts) > 1:
        return (f"speed-up still grows up to {k} threads (the largest count tried): "
                f"slave_parallel_threads = {k} with slave_parallel_mode = {mode}, or try more")
    return (f"more than {k} thread{'s' if k != 1 else ''} gains < {sw.threshold:.0%}: "
            f"slave_parallel_threads = {k} with slave_parallel_mode = {mode}")


def maria_report_to_dict(report: MariaReport) -> dict[str, object]:
    """The JSON form: MariaDB's variable names for what was simulated."""
    sw, cfg = report.sweep, report.config
    return {
        "files": list(report.files),
        "applier": "mariadb",
        "slave_parallel_mode": cfg.mode.value,
        "variables": {
            "slave_parallel_mode": cfg.mode.value,
            "slave_domain_parallel_threads": cfg.domain_threads,
            "slave_parallel_max_queued": cfg.max_queued,
            "slave_parallel_threads": [r.threads for r in sw.results],
        },
        "transactions": report.transactions,
        "domains": report.domains,
        "commit_groups": report.commit_groups,
        "flags": dict(report.flag_counts),
        "conflicting_transactions": report.conflicting,
        "cost_model": report.cost_model,
        "cost_description": report.cost_description,
        "total_cost": sw.results[0].total_cost if sw.results else 0.0,
        "serial_makespan": sw.serial_makespan,
        "best_makespan": sw.bound,
        "ideal_speedup": sw.ideal_speedup,
        "recommended": {"slave_parallel_threads": sw.recommended,
                        "slave_parallel_mode": cfg.mode.value},
        "recommendation": maria_recommendation(report),
        "knee_threshold": sw.threshold,
        "runs": [{"slave_parallel_threads": r.threads, "makespan": r.makespan,
                  "speedup": r.speedup, "gcos": r.gcos, "retries": r.retries,
                  "utilisation": (sum(r.utilisation) / len(r.utilisation))
                  if r.utilisation else 0.0,
                  "waits": dataclasses.asdict(r.waits)} for r in sw.results],
        "measured": [{"slave_parallel_mode": c.mode.value, "slave_parallel_threads": c.threads,
                      "measured_seconds": c.measured_seconds,
                      "measured_speedup": c.measured_speedup,
                      "predicted_speedup": c.predicted_speedup,
                      "predicted_makespan": c.predicted_makespan, "error": c.error}
                     for c in report.comparisons],
        "warnings": list(report.warnings),
    }


__all__ = [
    "Comparison", "DEFAULT_MAX_QUEUED", "DEFAULT_MODE", "MAX_THREADS", "MariaConfig",
    "MariaReport", "MariaResult", "MariaSpan", "MariaSweep", "MariaTransaction", "MariaWaits",
    "Measurement", "ParallelMode", "VARIABLES", "compare_measurements", "is_mariadb_log",
    "maria_recommendation", "maria_report_to_dict", "maria_reports", "maria_transactions",
    "read_measurements", "simulate_mariadb", "sweep_mariadb",
]
