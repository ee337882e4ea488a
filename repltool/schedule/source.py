"""From logs to simulator input, and the report ``repltool schedule`` prints.

The reader's :class:`~repltool.binlog.Transaction` values become
:class:`~repltool.schedule.SimTransaction` values here::

    rotations = SourceRotations()
    trxs = group_transactions(rotations.watch(read_events(paths, options)))
    sims = list(transactions_to_sim(trxs, LinearCost(), relay=rotations))

Logical clocks restart in every *source* binlog file (format spec §7 gotcha
8), and the coordinator treats the first transaction after a source
rotation as a barrier (spec §6d rule 8).  Where a source file begins depends
on the kind of log:

* a binlog: at every file change of the input;
* a relay log: after a Rotate that is not the relay log's own (flag
  ``LOG_EVENT_RELAY_LOG_F`` 0x40 clear) and whose ``server_id`` differs from
  the replica's (the ``server_id`` of the relay file's own FDE), seen outside
  a transaction: the source's fake Rotate on (re)connection, its end-of-binlog
  Rotate, and the receiver's ``server_id`` 0 "rotate to source position".  A
  relay-file boundary alone is *not* a source rotation: the numbering goes on
  in the next relay file.  :class:`SourceRotations` finds these Rotates while
  the events stream past, by the rule
  :meth:`~repltool.binlog.transactions.Segments.see` states; without it
  (``relay=None``) every input file counts as a new source file, which is
  right for binlogs and too pessimistic (one barrier per relay file) for
  relay logs.

Nothing here imports click or rich.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..binlog import ReadOptions, read_events, read_transactions
from ..binlog.constants import EventType
from ..binlog.corescan import ClockTransaction, scan_clock_transactions
from ..binlog.damage import cut_tails
from ..binlog.events import Event
from ..binlog.transactions import GROUPING_TYPES, Segments, Transaction, group_transactions
from ..errors import SimulationError, UsageError
from ..paths import Paths, path_list
from ..positions import Position
from .columns import SimColumns
from .cost import CommitTimestampCost, ConstantCost, CostModel, CsvCost, LinearCost
from .fastpath import simulate_fast
from .model import SimConfig, SimResult, SimTransaction, SweepResult
from .recovery import RecoveryReport, recover
from .sweep import sweep

if TYPE_CHECKING:
    from ..binlog.damage import DamageLog
    from ..binlog.window import Window

#: Added to the linear model's description: its ``rows`` input is approximate.
ROWS_CAVEAT = ("rows = number of rows events (row images are not decoded yet, "
               "so a multi-row event counts once)")


# ---- source rotations ----

class SourceRotations:
    """Watch an event stream for the points where a new *source* binlog begins.

    :meth:`watch` passes events through unchanged and records, per input
    file, whether it is a relay log and where the source Rotates are.  The
    marks are consumed by :func:`transactions_to_sim` in stream order, so
    the transaction stream must be produced from the watched events (it is,
    lazily: a transaction is yielded only after its events went past).
    """

    def __init__(self) -> None:
        self.relay_files: dict[str, bool] = {}
        self._order: dict[str, int] = {}
        self._marks: deque[tuple[int, int]] = deque()
        self._segments = Segments()         # the relay segment rule, stated there

    def watch(self, events: Iterable[Event]) -> Iterator[Event]:
        """Yield ``events`` unchanged, recording source rotations."""
        segments = self._segments
        for ev in events:
            file = ev.pos.file
            if file not in self._order:
                self._order[file] = len(self._order)
                self.relay_files[file] = False
            tc = ev.type_code
            if tc == EventType.FORMAT_DESCRIPTION_EVENT:
                segments.see(ev)            # the file's own (first) FDE says if it is relay
                self.relay_files[file] = segments.relay
            elif (tc == EventType.ROTATE_EVENT and self.relay_files[file]
                    and segments.see(ev)):
                self._marks.append((self._order[file], ev.pos.offset))
            yield ev

    def key(self, pos: Position) -> tuple[int, int]:
        """Stream order of a position (file order, then offset)."""
        return (self._order.get(pos.file, -1), pos.offset)

    def is_relay(self, file: str) -> bool:
        """Whether ``file`` was seen and is a relay log."""
        return self.relay_files.get(file, False)

    def rotated_before(self, trx: Transaction | ClockTransaction,
                       previous_end: Position | None) -> bool:
        """Whether a source Rotate lies between ``previous_end`` and ``trx``.

        Marks up to ``trx.start`` are consumed; a mark inside the previous
        transaction (a Rotate inside a group, which MySQL ignores) does not
        count.
        """
        start = self.key(trx.start)
        after = self.key(previous_end) if previous_end is not None else (-1, -1)
        found = False
        while self._marks and self._marks[0] <= start:
            if self._marks.popleft() > after:
                found = True
        return found


# ---- mapping ----

@dataclass
class SourceStats:
    """Counters :func:`transactions_to_sim` fills in while it runs."""

    transactions: int = 0
    truncated_skipped: int = 0
    without_clock: int = 0
    source_files: int = 0
    relay_log: bool = False
    warnings: list[str] = field(default_factory=list)


def _no_clock_error(trx: Transaction | ClockTransaction, index: int) -> SimulationError:
    gtid = f" ({trx.gtid})" if trx.gtid else ""
    return SimulationError(
        f"transaction #{index}{gtid} carries no logical clock (last_committed/"
        "sequence_number): MySQL 5.6, GTID-less and MariaDB logs cannot be "
        "simulated as logged (MariaDB commit ids are not MySQL logical clocks); "
        "simulate clocks re-computed from the write sets instead: --retag writeset "
        "(or --compare all)",
        pos=trx.start)


def transactions_to_sim(transactions: Iterable[Transaction | ClockTransaction],
                        cost_model: CostModel | None = None, *,
                        relay: SourceRotations | None = None, lenient: bool = False,
                        stats: SourceStats | None = None) -> Iterator[SimTransaction]:
    """Map reader transactions to simulator transactions (lazy, one pass).

    ``last_committed``/``sequence_number`` are taken as logged; ``size``,
    ``events`` (``num_events``) and ``commit_ts``
    (``immediate_commit_timestamp``) are copied; ``rows`` is the number of
    rows events (see :data:`ROWS_CAVEAT`); ``new_source_file`` is set on the
    first transaction of each source binlog (see the module docstring).
    Truncated transactions (the applier discards them) are skipped and
    counted in ``stats.truncated_skipped``.

    :param cost_model: applied to the result when given.
    :param relay: the watcher the transactions' events went through; None
        treats every file change as a new source file.
    :param lenient: schedule a transaction without a logical clock as a
        barrier (MySQL's ``SEQ_UNINIT``) with a warning, instead of raising;
        a log in which *no* transaction has a clock is an error anyway.
    :param stats: filled in as the transactions go by.
    :raises SimulationError: on a transaction without a logical clock.
    """
    sims = _map(transactions, relay, lenient, stats if stats is not None else SourceStats())
    return cost_model.apply(sims) if cost_model is not None else sims


def _map(transactions: Iterable[Transaction | ClockTransaction],
         relay: SourceRotations | None, lenient: bool,
         stats: SourceStats) -> Iterator[SimTransaction]:
    previous_file: str | None = None
    previous_end: Position | None = None
    pending_new = True          # the first transaction read begins a source file
    clocked = 0
    first_clockless: SimulationError | None = None
    for trx in transactions:
        file = trx.start.file
        if relay is not None and relay.is_relay(file):
            stats.relay_log = True
            new = relay.rotated_before(trx, previous_end)
        else:
            if relay is not None:
                relay.rotated_before(trx, previous_end)     # drop stale marks
            new = file != previous_file
        previous_file, previous_end = file, trx.end
        pending_new = pending_new or new
        if trx.truncated:
            stats.truncated_skipped += 1
            continue
        index = stats.transactions
        lc, sn = trx.last_committed, trx.sequence_number
        if lc is None or sn is None:
            error = _no_clock_error(trx, index)
            if not lenient:
                raise error
            first_clockless = first_clockless or error
            stats.without_clock += 1
            lc = sn = 0
        else:
            clocked += 1
        stats.source_files += pending_new
        stats.transactions += 1
        yield SimTransaction(
            last_committed=lc, sequence_number=sn, pos=trx.start, gtid=trx.gtid,
            new_source_file=pending_new, size=trx.size,
            rows=sum(count for _, count in trx.rows_events), events=trx.num_events,
            commit_ts=trx.immediate_commit_timestamp)
        pending_new = False
    if first_clockless is not None:
        if not clocked:
            raise first_clockless
        stats.warnings.append(f"{stats.without_clock} transactions without a logical "
                              "clock scheduled as barriers")


def read_sim_transactions(paths: Paths,
                          cost_model: CostModel | None = None, *,
                          verify_checksum: bool = True, lenient: bool = False,
                          stats: SourceStats | None = None,
                          window: Window | None = None,
                          damage: DamageLog | None = None) -> Iterator[SimTransaction]:
    """Read logs (binlogs or relay logs) straight into simulator transactions.

    :param window: only the transactions in this window
        (:meth:`repltool.binlog.window.Window.select`); the first one begins a
        source file (a barrier), as the first of a log would.
    :param damage: read with ``keep_going``: damaged regions are skipped and recorded
        in it; the transactions they cut are truncated (skipped, as the applier would).

    :raises ReplToolError: as :func:`~repltool.binlog.read_events` and
        :func:`transactions_to_sim`.
    """
    rotations = SourceRotations()
    options = ReadOptions(verify_checksum=verify_checksum, types=GROUPING_TYPES,
                          keep_going=damage is not None)
    names = path_list(paths)
    transactions: Iterable[Transaction] | None = None
    if window is None and damage is None:
        # the compiled core, or (pure-Python engine) the general reader
        transactions = scan_clock_transactions(names, options, watch=rotations.watch)
    if transactions is None:
        events = rotations.watch(read_events(names, options))
        if damage is not None:
            events = damage.count(events)
        transactions = group_transactions(
            events, keep_events=window is not None and window.needs_events)
        if damage is not None:
            transactions = cut_tails(transactions)
        if window is not None:
            transactions = window.select(transactions, names)
    return transactions_to_sim(transactions, cost_model, relay=rotations,
                               lenient=lenient, stats=stats)


# ---- cost models by name ----

def parse_cost(spec: str) -> CostModel:
    """A cost model from ``constant[:SECONDS]``, ``linear[:T,R,B,E]``, ``commit-ts`` or ``csv:FILE``.

    ``linear:T,R,B,E`` sets the linear model's seconds per transaction, row,
    byte and event (missing ones are 0), e.g. coefficients
    :func:`~repltool.schedule.calibrate.fit_linear_cost` fitted.

    :raises UsageError: on an unknown name or a bad number.
    :raises InputError: when the CSV file cannot be read.

    Example::

        >>> parse_cost("constant:0.5")
        ConstantCost(seconds=0.5, name='constant')
    """
    name, sep, arg = spec.partition(":")
    name = name.strip().lower()
    if name == "constant":
        if not sep:
            return ConstantCost()
        try:
            seconds = float(arg)
        except ValueError:
            raise UsageError(f"--cost {spec!r}: {arg!r} is not a number of seconds") from None
        if not math.isfinite(seconds) or seconds < 0:
            raise UsageError(f"--cost {spec!r}: seconds must be >= 0")
        return ConstantCost(seconds)
    if name == "linear" and not sep:
        return LinearCost()
    if name == "linear":
        return _linear(spec, arg)
    if name in ("commit-ts", "commit-timestamps") and not sep:
        return CommitTimestampCost()
    if name == "csv" and arg:
        return CsvCost.from_file(arg)
    raise UsageError(f"--cost {spec!r}: expected constant[:SECONDS], linear[:T,R,B,E], "
                     "commit-ts or csv:FILE")


def _linear(spec: str, arg: str) -> LinearCost:
    """``linear:T,R[,B[,E]]``: seconds per transaction, row, byte and event."""
    parts = [p.strip() for p in arg.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if not 1 <= len(values) <= 4 or not all(math.isfinite(v) and v >= 0 for v in values):
        raise UsageError(f"--cost {spec!r}: expected linear:T,R,B,E (seconds per "
                         "transaction, row, byte, event; numbers >= 0)")
    values += [0.0] * (4 - len(values))
    return LinearCost(*values)


def cost_description(model: CostModel) -> str:
    """The model's one-line description, with the caveats of its inputs."""
    text = model.description
    if isinstance(model, LinearCost):
        text += f"; {ROWS_CAVEAT}"
    return text


# ---- the report ----

@dataclass(frozen=True)
class CrashSpec:
    """``--crash-at``: exactly one of a time, a GTID or a relay index."""

    time: float | None = None
    gtid: str | None = None
    index: int | None = None

    @classmethod
    def parse(cls, text: str) -> CrashSpec:
        """``#INDEX``, a number of seconds, or anything else as a GTID.

        >>> CrashSpec.parse("#12"), CrashSpec.parse("0.25").time
        (CrashSpec(time=None, gtid=None, index=12), 0.25)
        """
        text = text.strip()
        if text.startswith("#"):
            if not text[1:].isdigit():
                raise UsageError(f"--crash-at {text!r}: expected #INDEX (a relay index >= 0)")
            return cls(index=int(text[1:]))
        try:
            seconds = float(text)
        except ValueError:
            if not text:
                raise UsageError("--crash-at: empty value") from None
            return cls(gtid=text)
        if not math.isfinite(seconds) or seconds < 0:
            raise UsageError(f"--crash-at {text!r}: time must be >= 0")
        return cls(time=seconds)


@dataclass(frozen=True)
class ScheduleReport:
    """Everything ``repltool schedule`` shows.

    ``detail`` is the run with the recommended worker count, with its trace,
    when a timeline or a recovery was asked for.
    """

    files: tuple[str, ...]
    sweep: SweepResult
    cost_model: str
    cost_description: str
    config: SimConfig
    stats: SourceStats
    detail: SimResult | None = None
    recovery: RecoveryReport | None = None
    checkpoint_period: float | None = None
    clocks: str = "recorded"        # "recorded", or the certify mode that re-tagged them


def certified_sim_transactions(paths: Sequence[str | os.PathLike[str]], mode: str,
                               cost_model: CostModel | None = None, *,
                               verify_checksum: bool = True,
                               schema_paths: Sequence[str | os.PathLike[str]] = (),
                               schema_db: str | None = None,
                               stats: SourceStats | None = None,
                               window: Window | None = None,
                               damage: DamageLog | None = None) -> Iterator[SimTransaction]:
    """Simulator input with the logical clocks :mod:`repltool.certify` computes.

    The logs are read once; each transaction's write set is extracted and
    certified in ``mode`` (``writeset``, ``writeset-session``,
    ``group-replication``, ``commit-order``); the computed
    ``(last_committed, sequence_number)`` replace the logged ones.  Writeset
    modes restart their numbering in every clock segment (a new source file for
    the applier); group-replication numbering runs across files (one segment).
    MariaDB logs, which carry no MySQL clock, are certified with the serial
    baseline: every transaction depends on its predecessor unless its write
    set proves otherwise.  Transactions certification gives no number (GR
    local or rolled back) are not applied and are left out.
    """
    from ..certify import Baseline, CertifyOptions, Mode
    from ..certify.report import CertifyRun

    st = stats if stats is not None else SourceStats()
    mode_ = Mode(mode)

    def sims() -> Iterator[SimTransaction]:
        run = CertifyRun(paths, mode_, CertifyOptions(baseline=Baseline.SERIAL)
                         if clockless(paths) else None,
                         verify_checksum=verify_checksum, schema_paths=schema_paths,
                         window=window, schema_db=schema_db, damage=damage)
        st.warnings.extend(w for w in run.warnings if w not in st.warnings)
        previous: str | None = None
        for trx, result in run:
            if result.computed is None:
                continue
            segment = trx.segment or trx.start.file
            new = previous is None or (mode_ is not Mode.GROUP_REPLICATION
                                       and segment != previous)
            if new:
                st.source_files += 1
            previous = segment
            st.transactions += 1
            lc, sn = result.computed
            yield SimTransaction(lc, sn, pos=trx.start, gtid=trx.gtid, new_source_file=new,
                                 size=trx.size, rows=sum(n for _, n in trx.rows_events),
                                 events=trx.num_events,
                                 commit_ts=trx.immediate_commit_timestamp)
        st.truncated_skipped += run.truncated_skipped

    return cost_model.apply(sims()) if cost_model is not None else sims()


def clockless(paths: Sequence[str | os.PathLike[str]]) -> bool:
    """True when the first transaction of the logs carries no MySQL logical clock."""
    for trx in read_transactions([os.fspath(p) for p in paths]):
        return trx.last_committed is None
    return False


def schedule_report(paths: Paths, workers: Sequence[int],
                    config: SimConfig, cost_model: CostModel, *,
                    verify_checksum: bool = True, trace: bool = False,
                    crash: CrashSpec | None = None, checkpoint_period: float | None = 0.3,
                    threshold: float = 0.05, retag: str | None = None,
                    schema_paths: Sequence[str | os.PathLike[str]] = (),
                    window: Window | None = None,
                    schema_db: str | None = None,
                    damage: DamageLog | None = None) -> ScheduleReport:
    """Read the logs, sweep ``workers``, and optionally replay a crash.

    ``window``: simulate only the transactions in it; ``damage``: read with ``keep_going``
    (see :func:`read_sim_transactions`).

    The trace (``trace=True`` or a ``crash``) comes from one more run with
    the recommended worker count.

    :raises ReplToolError: from reading, mapping, simulating or recovering.
    """
    paths = path_list(paths)
    stats = SourceStats()
    # kept for the sweep as int64/float64 columns, not objects (SimColumns)
    if retag is not None:
        sims = SimColumns(certified_sim_transactions(paths, retag, cost_model,
                                                     verify_checksum=verify_checksum,
                                                     schema_paths=schema_paths, stats=stats,
                                                     window=window, schema_db=schema_db,
                                                     damage=damage))
    else:
        sims = SimColumns(read_sim_transactions(paths, cost_model,
                                                verify_checksum=verify_checksum,
                                                lenient=config.lenient, stats=stats,
                                                window=window, damage=damage))
    return report_from_sims(paths, sims, stats, workers, config, cost_model, trace=trace,
                            crash=crash, checkpoint_period=checkpoint_period,
                            threshold=threshold, clocks=retag or "recorded")


def report_from_sims(paths: Sequence[str | os.PathLike[str]], sims: Sequence[SimTransaction],
                     stats: SourceStats, workers: Sequence[int], config: SimConfig,
                     cost_model: CostModel, *, trace: bool = False,
                     crash: CrashSpec | None = None, checkpoint_period: float | None = 0.3,
                     threshold: float = 0.05, clocks: str = "recorded") -> ScheduleReport:
    """Sweep ``workers`` over simulator input already built (shared with ``--spark``)."""
    result = sweep(sims, workers, config, threshold=threshold, cost_model=cost_model.name)
    stats.warnings.extend(w for r in result.results for w in r.warnings
                          if w not in stats.warnings)
    detail = recovery = None
    if trace or crash is not None:
        detail = simulate_fast(sims, dataclasses.replace(config, workers=result.recommended,
                                                         trace=True))
    if crash is not None and detail is not None and detail.trace is not None:
        if not detail.trace:
            raise UsageError("--crash-at: there are no transactions to crash in")
        recovery = recover(detail.trace, workers=detail.workers,
                           checkpoint_group=config.checkpoint_group,
                           checkpoint_period=checkpoint_period, crash_time=crash.time,
                           gtid=crash.gtid, index=crash.index)
    return ScheduleReport(
        files=tuple(os.fspath(p) for p in paths), sweep=result, cost_model=cost_model.name,
        clocks=clocks,
        cost_description=cost_description(cost_model), config=config, stats=stats,
        detail=detail, recovery=recovery, checkpoint_period=checkpoint_period)


def report_to_dict(report: ScheduleReport) -> dict[str, Any]:
    """The JSON form of a report (times in seconds)."""
    sw, cfg, st = report.sweep, report.config, report.stats
    out: dict[str, Any] = {
        "files": list(report.files),
        "transactions": st.transactions,
        "truncated_skipped": st.truncated_skipped,
        "without_clock": st.without_clock,
        "source_files": st.source_files,
        "relay_log": st.relay_log,
        "clocks": report.clocks,
        "cost_model": report.cost_model,
        "cost_description": report.cost_description,
        "config": {"policy": cfg.policy.value,
                   "preserve_commit_order": cfg.preserve_commit_order,
                   "coordinator_overhead": cfg.coordinator_overhead,
                   "checkpoint_group": cfg.checkpoint_group, "lenient": cfg.lenient},
        "total_cost": sw.results[0].total_cost if sw.results else 0.0,
        "critical_path": sw.critical_path,
        "ideal_speedup": sw.ideal_speedup,
        "baseline_makespan": sw.baseline_makespan,
        "recommended_workers": sw.recommended,
        "knee_threshold": sw.threshold,
        "runs": [_run_to_dict(r) for r in sw.results],
        "warnings": list(st.warnings),
    }
    if report.recovery is not None and report.detail is not None:
        out["recovery"] = recovery_to_dict(report.recovery, report.detail,
                                           report.checkpoint_period)
    return out


def _run_to_dict(run: SimResult) -> dict[str, Any]:
    util = run.utilisation
    return {
        "workers": run.workers, "policy": run.policy.value, "makespan": run.makespan,
        "speedup": run.speedup,
        "utilisation": (sum(util) / len(util)) if util else 0.0,
        "worker_utilisation": list(util), "barriers": run.barriers,
        "waits": dataclasses.asdict(run.waits),
    }


def recovery_to_dict(rec: RecoveryReport, run: SimResult,
                     period: float | None) -> dict[str, Any]:
    """The JSON form of a recovery plan; groups are named by relay index and GTID."""
    trace = run.trace or ()

    def group(i: int) -> dict[str, Any]:
        span = trace[i]
        return {"index": i, "gtid": span.gtid,
                "pos": str(span.pos) if span.pos is not None else None}

    return {
        "workers": run.workers, "crash_time": rec.crash_time,
        "checkpoint_group": rec.checkpoint_group, "checkpoint_period": period,
        "checkpoint": {"index": rec.checkpoint_index,
                       "pos": str(rec.checkpoint_pos) if rec.checkpoint_pos else None,
                       "time": rec.checkpoints[-1].time if rec.checkpoints else None,
                       "reason": rec.checkpoints[-1].reason if rec.checkpoints else None},
        "checkpoints": len(rec.checkpoints),
        "worker_info": [{"worker": w.worker, "checkpoint_seqno": w.checkpoint_seqno,
                         "last_group": w.last_group, "checkpoint_index": w.checkpoint_index,
                         "group_executed": w.group_executed} for w in rec.workers],
        "recovery_bitmap": rec.recovery_bitmap,
        "recovery_group_cnt": rec.recovery_group_cnt,
        "skipped": [group(i) for i in rec.skipped],
        "gaps": [group(i) for i in rec.gaps],
    }


__all__ = ["CrashSpec", "ROWS_CAVEAT", "ScheduleReport", "SourceRotations", "SourceStats",
           "cost_description", "parse_cost", "read_sim_transactions", "recovery_to_dict",
           "report_to_dict", "schedule_report", "transactions_to_sim"]
