"""Per-file and total statistics of logs: what ``repltool stats`` reports.

Streaming: every counter is updated as events and transactions pass, so memory
depends on the number of distinct tables and the ``top`` size, not on the log.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from dataclasses import dataclass
from datetime import timezone, tzinfo
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from .binlog.clock import inconsistent
from .binlog.constants import EventType, type_name
from .binlog.events import DAMAGED_TYPE, DamagedBody, Event
from .binlog.corescan import FileTotals, Handover, scan_totals
from .binlog.engine import Unsupported
from .binlog.reader import FileInfo, ReadOptions, read_events
from .binlog.rowcount import ROW_COUNT_FIELDS
from .binlog.transactions import (
    GROUPING_TYPES, Transaction, TransactionSummary, group_transactions,
)
from .paths import Paths, path_list

if TYPE_CHECKING:
    from .binlog.split import Span
    from .binlog.window import Window, WindowCursor


def distance_bucket(distance: int) -> str:
    """Bucket label of ``sequence_number - last_committed``: 1, 2, 3-4, 5-8, ... .

    Example::

        >>> [distance_bucket(d) for d in (1, 2, 3, 5, 9, 100)]
        ['1', '2', '3-4', '5-8', '9-16', '65-128']
    """
    if distance <= 2:
        return str(max(distance, 0))
    hi = 1 << (distance - 1).bit_length()
    return f"{hi // 2 + 1}-{hi}"


@dataclass(frozen=True, slots=True)
class TopTransaction:
    gtid: str | None
    file: str
    pos: int
    size: int
    duration: int
    num_events: int


@dataclass(frozen=True, slots=True)
class ClockStats:
    """Logical-clock parallelism measures over the transactions that carry a clock."""

    transactions: int
    barriers: int                      # last_committed == 0
    barrier_share: float
    distance: dict[str, int]           # bucket of sequence_number - last_committed -> count
    windows: int                       # runs of consecutive transactions sharing last_committed
    mean_window: float
    max_window: int
    delta16_saturated: int
    inconsistent: int                  # sequence_number <= last_committed (not 0,0)


@dataclass(frozen=True, slots=True)
class FileStats:
    file: str
    size: int
    server_version: str | None
    binlog_version: int | None
    relay_log: bool
    in_use: bool
    checksum: str | None
    events: int
    event_types: dict[str, int]
    event_bytes: dict[str, int]
    transactions: int
    transaction_kinds: dict[str, int]
    truncated_transactions: int
    transaction_bytes: int
    damaged_regions: int               # --keep-going: ranges skipped
    damaged_bytes: int
    damage: tuple[DamagedBody, ...]    # the first 50 damaged ranges, in order
    clock: ClockStats
    commit_id_groups: dict[str, int]   # MariaDB: group size -> number of groups
    tables: dict[str, int]             # db.table -> rows events
    #: db.table -> {"inserted", "updated", "deleted": rows; "unwalked_events": Rows events
    #: whose rows could not be counted (unknown table or images)}, busiest first
    rows: dict[str, dict[str, int]]
    biggest: tuple[TopTransaction, ...]
    longest: tuple[TopTransaction, ...]
    first_gtid: str | None = None      # of the first / last transaction that has one
    last_gtid: str | None = None
    first_timestamp: int | None = None  # the first transaction's first event (UTC seconds)
    last_timestamp: int | None = None   # the last transaction's last event


@dataclass(frozen=True, slots=True)
class LogStats:
    files: tuple[FileStats, ...]
    total: FileStats


_BUCKETS: dict[int, str] = {}


class _ClockAcc:
    __slots__ = ("n", "barriers", "dist", "windows", "cur_lc", "cur_len", "max_len",
                 "saturated", "bad")

    def __init__(self) -> None:
        self.n = self.barriers = self.windows = self.cur_len = self.max_len = 0
        self.saturated = self.bad = 0
        self.dist: Counter[str] = Counter()
        self.cur_lc: int | None = None

    def add(self, lc: int, sn: int, saturated: bool) -> None:
        self.n += 1
        if lc == 0:
            self.barriers += 1
        if inconsistent(lc, sn):
            self.bad += 1
        d = sn - lc
        label = _BUCKETS.get(d)
        if label is None:
            label = distance_bucket(d)
            if len(_BUCKETS) < 65536:
                _BUCKETS[d] = label
        self.dist[label] += 1
        if saturated:
            self.saturated += 1
        if lc == self.cur_lc:
            self.cur_len += 1
            if self.cur_len > self.max_len:
                self.max_len = self.cur_len
        else:
            self.windows += 1
            self.cur_lc = lc
            self.cur_len = 1
            if not self.max_len:
                self.max_len = 1

    def result(self) -> ClockStats:
        return ClockStats(self.n, self.barriers, self.barriers / self.n if self.n else 0.0,
                          dict(sorted(self.dist.items(), key=lambda kv: _bucket_key(kv[0]))),
                          self.windows, self.n / self.windows if self.windows else 0.0,
                          self.max_len, self.saturated, self.bad)


def _bucket_key(label: str) -> int:
    return int(label.split("-")[0])


class _FileAcc:
    """Accumulates one file's (or the total's) figures.

    ``tiebreak`` numbers the transactions in stream order (shared by the files
    of one read) so that, among equal sizes or durations, earlier transactions
    win the top lists; :meth:`shift` renumbers a part that was read on its own
    (``repltool.distributed``) as if it had been read after ``offset`` others.
    """

    def __init__(self, top: int, tiebreak: Iterator[int] | None = None) -> None:
        self.top = top
        self.tiebreak = tiebreak if tiebreak is not None else itertools.count()
        self.last_truncated = False
        self.types: Counter[int] = Counter()
        self.bytes: Counter[int] = Counter()
        self.kinds: Counter[str] = Counter()
        self.tables: Counter[str] = Counter()
        self.rows: dict[str, list[int]] = {}     # table -> inserted, updated, deleted, unwalked
        self.groups: Counter[str] = Counter()
        self.trx = self.truncated = self.trx_bytes = 0
        self.clock = _ClockAcc()
        self.damage: list[DamagedBody] = []
        self.biggest: list[tuple[int, int, TopTransaction]] = []
        self.longest: list[tuple[int, int, TopTransaction]] = []
        self._run_id: int | None = None
        self._run_len = 0
        self.gtids: tuple[str | None, str | None] | None = None     # first, last
        self.times: tuple[int, int] | None = None                   # first, last

    def _range(self, t: Transaction | TransactionSummary) -> None:
        """The file's GTID and time range (``trx`` already counts ``t``)."""
        self.times = (t.timestamp if self.times is None else self.times[0], t.end_timestamp)
        if t.gtid is not None:
            self.gtids = (t.gtid if self.gtids is None else self.gtids[0], t.gtid)

    def transaction(self, t: Transaction | TransactionSummary) -> None:
        self.trx += 1
        size = t.size
        self.trx_bytes += size
        self._range(t)
        self.kinds[t.kind] += 1
        truncated = t.truncated
        if truncated:
            self.truncated += 1
        lc, sn = t.last_committed, t.sequence_number
        if lc is not None and sn is not None:
            self.clock.add(lc, sn, t.delta16_saturated)
        if t.rows_events:
            tables = self.tables
            for table, n in t.rows_events:
                tables[table] += n
        if t.row_counts:
            self.add_rows(t.row_counts)
        if t.maria_flags is not None:
            self._commit_id(t)
        self.last_truncated = truncated
        tie = -next(self.tiebreak)      # earlier transactions win ties
        # (value, tie) decides alone (ties are unique): build the entry only if it gets in
        top = None
        duration = t.duration
        for heap, value in ((self.biggest, size), (self.longest, duration)):
            if len(heap) < self.top or (heap and (value, tie) > heap[0][:2]):
                if top is None:
                    top = TopTransaction(t.gtid, t.start.file, t.start.offset, size,
                                         duration, t.num_events)
                self._push(heap, (value, tie, top))

    def add_rows(self, counts: Iterable[tuple[str, int, int, int, int]]) -> None:
        """Add (table, inserted, updated, deleted, unwalked events) figures."""
        rows = self.rows
        for table, i, u, d, x in counts:
            acc = rows.get(table)
            if acc is None:
                rows[table] = [i, u, d, x]
            else:
                acc[0] += i
                acc[1] += u
                acc[2] += d
                acc[3] += x

    def absorb(self, t: FileTotals, clock_only: bool = False) -> None:
        """Take over figures the compiled core added up (this accumulator is fresh):
        what :meth:`transaction` (or, ``clock_only``, :meth:`clock_record`) would hold
        after the same transactions."""
        self.trx, self.trx_bytes, self.truncated = t.transactions, t.transaction_bytes, \
            t.truncated
        self.last_truncated = t.last_truncated
        self.times, self.gtids = t.times, t.gtids
        self.kinds.update(dict(t.kinds))
        c = self.clock
        (c.n, c.barriers, c.windows, c.cur_lc, c.cur_len, c.max_len, c.saturated,
         c.bad) = t.clock
        c.dist.update({distance_bucket(d): n for d, n in t.distance})
        self._run_id, self._run_len = t.commit_id_run
        for size, count in t.commit_id_groups:
            self.groups[str(size)] += count
        for table, count in t.tables:
            self.tables[table] += count
        self.add_rows(t.row_counts)
        for heap, entries in ((self.biggest, t.biggest), (self.longest, t.longest)):
            heap.extend((e.value, -e.number, TopTransaction(
                e.gtid, e.file, e.pos, e.size, e.duration, e.num_events)) for e in entries)
            heapq.heapify(heap)

    def clock_record(self, r: Transaction | TransactionSummary) -> None:
        """A transaction as ``stats --clock-only`` counts it (no kinds, tables or
        longest list)."""
        self.trx += 1
        size = r.size
        self.trx_bytes += size
        self._range(r)
        lc, sn = r.last_committed, r.sequence_number
        if lc is not None and sn is not None:
            self.clock.add(lc, sn, r.delta16_saturated)
        tie = -next(self.tiebreak)
        heap = self.biggest
        # as transaction(): (size, tie) decides alone, the entry is built only if it gets in
        if len(heap) < self.top or (heap and (size, tie) > heap[0][:2]):
            self._push(heap, (size, tie, TopTransaction(r.gtid, r.start.file, r.start.offset,
                                                        size, r.duration, r.num_events)))

    def _commit_id(self, t: Transaction | TransactionSummary) -> None:
        """MariaDB's commit-id runs (``t.maria_flags`` is not None)."""
        cid = t.commit_id
        if cid is not None and cid == self._run_id:
            self._run_len += 1
            return
        self.flush_group()
        self._run_id, self._run_len = cid, 1

    def flush_group(self) -> None:
        if self._run_len:
            self.groups[str(self._run_len)] += 1
        self._run_id, self._run_len = None, 0

    def shift(self, offset: int) -> None:
        """Renumber the top lists as if ``offset`` transactions had been read before."""
        self.biggest = [(a, tie - offset, t) for a, tie, t in self.biggest]
        self.longest = [(a, tie - offset, t) for a, tie, t in self.longest]

    def add(self, other: _FileAcc) -> None:
        """Add ``other``'s figures (what every union of accumulators shares: types,
        kinds, tables, rows, ranges, counts, clocks, the top lists)."""
        self.types.update(other.types)
        self.bytes.update(other.bytes)
        self.kinds.update(other.kinds)
        self.tables.update(other.tables)
        self.add_rows((t, *c) for t, c in other.rows.items())
        self.damage.extend(other.damage[:max(0, 50 - len(self.damage))])
        if other.times is not None:
            self.times = (other.times[0] if self.times is None else self.times[0],
                          other.times[1])
        if other.gtids is not None:
            self.gtids = (other.gtids[0] if self.gtids is None else self.gtids[0],
                          other.gtids[1])
        self.trx += other.trx
        self.truncated += other.truncated
        self.trx_bytes += other.trx_bytes
        c, d = self.clock, other.clock
        c.n += d.n
        c.barriers += d.barriers
        c.dist.update(d.dist)
        c.windows += d.windows
        c.max_len = max(c.max_len, d.max_len)
        c.saturated += d.saturated
        c.bad += d.bad
        for item in other.biggest:
            self._push(self.biggest, item)
        for item in other.longest:
            self._push(self.longest, item)

    def extend(self, later: _FileAcc) -> None:
        """Add the figures of a later part of the same file, read on its own and
        :meth:`shift`-ed after this one (see :func:`join_parts` for when this is exact)."""
        self.add(later)
        if later.trx:
            self.last_truncated = later.last_truncated
        if later.clock.n:
            self.clock.cur_lc, self.clock.cur_len = later.clock.cur_lc, later.clock.cur_len

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["tiebreak"] = None        # a counter does not travel; a shipped part is finished
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.tiebreak = itertools.count()

    def _push(self, heap: list[tuple[int, int, TopTransaction]],
              item: tuple[int, int, TopTransaction]) -> None:
        if len(heap) < self.top:
            heapq.heappush(heap, item)
        elif heap and item > heap[0]:          # --top 0: nothing is listed
            heapq.heapreplace(heap, item)

    def result(self, file: str, size: int, fi: FileInfo | None) -> FileStats:
        self.flush_group()
        fde = fi.first_fde if fi else None
        return FileStats(
            file=file, size=size,
            server_version=fde.server_version if fde else None,
            binlog_version=fde.binlog_version if fde else None,
            relay_log=bool(fi and fi.relay_log), in_use=bool(fi and fi.in_use),
            checksum=_checksum_name(fi),
            events=sum(self.types.values()),
            event_types={type_name(k): v for k, v in self.types.most_common()},
            event_bytes={type_name(k): v for k, v in self.bytes.most_common()},
            transactions=self.trx, transaction_kinds=dict(self.kinds.most_common()),
            truncated_transactions=self.truncated, transaction_bytes=self.trx_bytes,
            damaged_regions=self.types.get(DAMAGED_TYPE, 0),
            damaged_bytes=self.bytes.get(DAMAGED_TYPE, 0), damage=tuple(self.damage),
            clock=self.clock.result(),
            commit_id_groups=dict(sorted(self.groups.items(), key=lambda kv: int(kv[0]))),
            tables=dict(self.tables.most_common()),
            rows=_rows_dict(self.rows),
            biggest=tuple(x[2] for x in sorted(self.biggest, reverse=True)),
            longest=tuple(x[2] for x in sorted(self.longest, reverse=True)),
            first_gtid=self.gtids[0] if self.gtids else None,
            last_gtid=self.gtids[1] if self.gtids else None,
            first_timestamp=self.times[0] if self.times else None,
            last_timestamp=self.times[1] if self.times else None)


def _rows_dict(rows: dict[str, list[int]]) -> dict[str, dict[str, int]]:
    """Per table, busiest first (rows, then Rows events not walked; ties: first seen)."""
    order = sorted(rows.items(), key=lambda kv: (-(kv[1][0] + kv[1][1] + kv[1][2]), -kv[1][3]))
    return {table: dict(zip(ROW_COUNT_FIELDS, c)) for table, c in order}


def _checksum_name(fi: FileInfo | None) -> str | None:
    if fi is None or fi.fde is None:
        return None
    return {0: "NONE", 1: "CRC32", 255: "UNDEF", None: "NONE (pre-5.6.1)"}.get(
        fi.fde.checksum_alg, str(fi.fde.checksum_alg))


@dataclass(slots=True)
class FilePart:
    """One input file's figures before they are finished (:func:`finish_stats`).

    What ``repltool.distributed`` computes on an executor and merges on the
    driver.  ``open_end``: the last transaction that starts in this file is
    truncated, so read alone the file may end inside a group that continues
    in the next file (a relay log); ``unknown_tables``: a rows event whose
    table id no Table_map *of the same read* named (a name from an earlier
    file may apply).  Either means the file must be read together with its
    neighbour to give the figures of one ordered read.
    """

    path: str
    acc: _FileAcc
    info: FileInfo | None

    @property
    def open_end(self) -> bool:
        return self.acc.last_truncated

    @property
    def unknown_tables(self) -> bool:
        return "?" in self.acc.tables

    @property
    def transactions(self) -> int:
        return self.acc.trx


def accumulate_stats(paths: Paths, *, verify_checksum: bool = True,
                     top: int = 5, keep_going: bool = False,
                     sink: Callable[[Transaction], None] | None = None,
                     progress: Callable[[int], None] | None = None,
                     window: Window | None = None,
                     span: Span | None = None) -> list[FilePart]:
    """Read the logs as one ordered sequence; one unfinished :class:`FilePart` per path.

    With the compiled engine the core reads and adds up (no per-event objects) and
    hands over to the general reader where the logs leave its subset; the pure-Python
    engine, a ``sink`` and ``keep_going`` read with the general reader
    (:func:`~repltool.binlog.transactions.group_transactions` over
    :func:`~repltool.binlog.reader.read_events`) - the figures are the same either way.

    :param sink: also called with every transaction, in order.
    :param progress: called now and then with the bytes of input read so far.
    :param window: only the transactions in this window
        (:meth:`repltool.binlog.window.Window.select`); the events by type are then
        those of these transactions.  Positions, datetimes and GTIDs are served by the
        compiled core (its per-group verdicts); ``--database``/``--table`` (and the
        pure-Python engine, ``sink``, ``keep_going``) by the general reader.
    :param span: only this part of the (single) file (:mod:`repltool.binlog.split`);
        :func:`join_parts` joins the parts of a file.

    :raises ReplToolError: as :func:`~repltool.binlog.read_events` does;
        :class:`~repltool.binlog.split.SplitMismatch` when an event crosses ``span.end``.
    """
    paths = path_list(paths)
    if span is not None and (len(paths) != 1 or keep_going or
                             (window is not None and window.active)):
        raise ValueError("accumulate_stats: a span is one part of one file, read "
                         "without keep_going or a window")
    if window is not None and window.active:
        if sink is None and not keep_going and not window.needs_events:
            cursor = window.cursor(paths)
            parts = _accumulate_window_core(paths, verify_checksum, top, progress, cursor)
            if parts is not None:
                return parts
        return _accumulate_general(paths, verify_checksum, top, keep_going, sink, progress,
                                   window=window)
    return _accumulate(paths, verify_checksum, top, keep_going, sink, progress, span=span)


def _accumulate_window_core(paths: list[str], verify_checksum: bool, top: int,
                            progress: Callable[[int], None] | None,
                            cursor: WindowCursor) -> list[FilePart] | None:
    """The compiled core's figures of the window's transactions (None: the pure-Python
    engine is active); where the core hands over, the general reader goes on with the
    cursor's state."""
    infos: list[FileInfo] = []
    tiebreak = itertools.count()
    per_file: dict[str, _FileAcc] = {p: _FileAcc(top, tiebreak) for p in paths}
    core = scan_totals(paths, top=top, verify_checksum=verify_checksum, info=infos,
                       counts={}, progress=progress, count_rows=True, window=cursor)
    if core is None:
        return None
    for path, t in core.totals.items():
        acc = per_file[path]
        acc.absorb(t)
        for tc, n, nbytes in t.types or ():
            acc.types[tc] += n
            acc.bytes[tc] += nbytes
    next(itertools.islice(tiebreak, core.transactions, None), None)
    parts = _parts(paths, per_file, {}, infos, top, tiebreak)
    if core.rest is None or cursor.stopped:
        return parts
    return _accumulate_general(paths, verify_checksum, top, False, None, progress,
                               resume=(core.rest, per_file, tiebreak, infos),
                               window=cursor.window, cursor=cursor)


def _accumulate(paths: list[str], verify_checksum: bool, top: int, keep_going: bool,
                sink: Callable[[Transaction], None] | None,
                progress: Callable[[int], None] | None,
                clock_only: bool = False, span: Span | None = None) -> list[FilePart]:
    if not keep_going:
        try:
            return _accumulate_fast(paths, verify_checksum, top, sink, progress, clock_only,
                                    span)
        except Unsupported:
            pass
    return _accumulate_general(paths, verify_checksum, top, keep_going, sink, progress,
                               clock_only, span=span)


def _accumulate_fast(paths: list[str], verify_checksum: bool, top: int,
                     sink: Callable[[Transaction], None] | None,
                     progress: Callable[[int], None] | None,
                     clock_only: bool = False, span: Span | None = None) -> list[FilePart]:
    """The compiled core's figures (it adds them up itself); where it hands over, the
    general reader goes on.  Raises :class:`Unsupported` with a ``sink`` (it takes whole
    transactions: the general reader's) and with the pure-Python engine."""
    if sink is not None:
        raise Unsupported("a sink takes the general reader's transactions")
    infos: list[FileInfo] = []
    tiebreak = itertools.count()
    per_file: dict[str, _FileAcc] = {p: _FileAcc(top, tiebreak) for p in paths}
    counts: dict[str, tuple[Counter[int], Counter[int]]] = {}
    core = scan_totals(paths, top=top, verify_checksum=verify_checksum, info=infos,
                       counts=counts, progress=progress, clock_only=clock_only,
                       count_rows=not clock_only, span=span)
    if core is None:
        raise Unsupported("the pure-Python engine reads with the general reader")
    for path, t in core.totals.items():
        per_file[path].absorb(t, clock_only)
    next(itertools.islice(tiebreak, core.transactions, None), None)
    parts = _parts(paths, per_file, counts, infos, top, tiebreak)
    if core.rest is None:
        return parts
    # the general reader goes on where the core stopped (not from the start)
    return _accumulate_general(paths, verify_checksum, top, False, None, progress,
                               clock_only, resume=(core.rest, per_file, tiebreak, infos),
                               span=span)


def _parts(paths: list[str], per_file: dict[str, _FileAcc],
           counts: dict[str, tuple[Counter[int], Counter[int]]], infos: list[FileInfo],
           top: int, tiebreak: Iterator[int]) -> list[FilePart]:
    for path, (types, nbytes) in counts.items():
        acc = per_file.setdefault(path, _FileAcc(top, tiebreak))
        acc.types.update(types)
        acc.bytes.update(nbytes)
    by_name = {fi.path: fi for fi in infos}
    return [FilePart(p, per_file[p], by_name.get(p)) for p in paths]


def _done_bytes(infos: list[FileInfo], offset: int) -> int:
    return sum(fi.size for fi in infos[:-1]) + offset


def _accumulate_general(paths: list[str], verify_checksum: bool, top: int, keep_going: bool,
                        sink: Callable[[Transaction], None] | None,
                        progress: Callable[[int], None] | None, clock_only: bool = False,
                        resume: tuple[Handover, dict[str, _FileAcc], Iterator[int],
                                      list[FileInfo]] | None = None,
                        window: Window | None = None,
                        cursor: WindowCursor | None = None,
                        span: Span | None = None) -> list[FilePart]:
    """The general reader's figures; ``resume``: go on from where the compiled core
    handed over, with its accumulators, transaction numbers and file infos;
    ``window``: only the window's transactions (and their events) count (``cursor``:
    with the verdicts so far of the read handed over)."""
    # a plain read (the whole files, no window): the reader counts the events by type
    plain = resume is None and span is None and not keep_going and not window
    opts = ReadOptions(verify_checksum=verify_checksum, types=GROUPING_TYPES, keep_raw=True,
                       keep_going=keep_going, count_types=plain)
    from .binlog.split import span_read, within     # parts (--spark) only
    if plain:
        return _accumulate_plain(paths, opts, top, sink, progress, clock_only)
    if resume is None:
        infos: list[FileInfo] = []
        tiebreak = itertools.count()
        per_file: dict[str, _FileAcc] = {p: _FileAcc(top, tiebreak) for p in paths}
        if span is None:
            events, state = read_events(paths, opts, infos), None
        else:
            events, state = span_read(paths[0], span, opts, infos)
    else:
        rest, per_file, tiebreak, infos = resume
        events = rest.events(opts, infos)
        if span is not None:
            events = within(events, paths[0], span.end)
        state = rest.state()

    def tap(events: Iterable[Event]) -> Iterator[Event]:
        cur_file = None
        types: Counter[int] = Counter()
        sizes: Counter[int] = Counter()
        n = 0
        for ev in events:
            pos = ev.pos
            if pos.file != cur_file:
                cur_file = pos.file
                acc = per_file.setdefault(cur_file, _FileAcc(top, tiebreak))
                types, sizes = (Counter(), Counter()) if window else (acc.types, acc.bytes)
            types[ev.type_code] += 1
            if pos.payload_offset is None:
                sizes[ev.type_code] += ev.event_size
            if ev.type_code == DAMAGED_TYPE and len(acc.damage) < 50:
                acc.damage.append(ev.body)  # type: ignore[arg-type]
            n += 1
            if progress is not None and not n & 8191:
                progress(_done_bytes(infos, pos.offset))
            yield ev

    trxs = group_transactions(tap(events), keep_events=bool(window), state=state,
                              count_rows=not clock_only,
                              count_tables=not clock_only or bool(window))
    for trx in window.select(trxs, paths, cursor) if window else trxs:
        if window:                      # only the events of the window's transactions
            acc = per_file[trx.start.file]
            for ev in trx.events:
                acc.types[ev.type_code] += 1
                if ev.pos.payload_offset is None:
                    acc.bytes[ev.type_code] += ev.event_size
        if clock_only:
            per_file[trx.start.file].clock_record(trx)
        else:
            per_file[trx.start.file].transaction(trx)
        if sink is not None:
            sink(trx)
    by_name = {fi.path: fi for fi in infos}
    return [FilePart(p, per_file[p], by_name.get(p)) for p in paths]


def _accumulate_plain(paths: list[str], opts: ReadOptions, top: int,
                      sink: Callable[[Transaction], None] | None,
                      progress: Callable[[int], None] | None,
                      clock_only: bool) -> list[FilePart]:
    """:func:`_accumulate_general` of whole files without a window: the reader
    counts the events by type (``opts.count_types``), the grouper's transactions
    are added up as they come."""
    infos: list[FileInfo] = []
    tiebreak = itertools.count()
    per_file: dict[str, _FileAcc] = {p: _FileAcc(top, tiebreak) for p in paths}
    n = 0
    acc = None
    cur_file = None
    # --clock-only: no table names (clock_record reads none); every event is still
    # read, CRC-checked and decoded as without it (the same errors)
    for trx in group_transactions(read_events(paths, opts, infos),
                                  count_rows=not clock_only, count_tables=not clock_only):
        file = trx.start.file
        if file != cur_file:
            cur_file = file
            acc = per_file.setdefault(file, _FileAcc(top, tiebreak))
            add = acc.clock_record if clock_only else acc.transaction
        add(trx)
        if sink is not None:
            sink(trx)
        n += 1
        if progress is not None and not n & 1023:
            progress(_done_bytes(infos, trx.start.offset))
    for fi in infos:
        if fi.counts is not None:
            acc = per_file.setdefault(fi.path, _FileAcc(top, tiebreak))
            acc.types.update(fi.counts[0])
            acc.bytes.update(fi.counts[1])
    by_name = {fi.path: fi for fi in infos}
    return [FilePart(p, per_file[p], by_name.get(p)) for p in paths]


def join_parts(parts: Sequence[FilePart], spans: Sequence[Span]) -> FilePart | None:
    """One file's unfinished figures from its parts, each read alone by
    :func:`accumulate_stats` with its span (:func:`repltool.binlog.split.split_spans`),
    in file order: the figures one read of the file gives.

    ``None`` when the parts cannot be joined exactly (the file must be read whole):
    a part before the last ends inside a transaction, a later part has rows events
    of a table no Table_map of its own named, the previous part's last
    ``last_committed`` equals the boundary's (a commit window would cross it), or a
    part has MariaDB commit-id groups.  The parts' accumulators are changed.
    """
    first = parts[0]
    acc = first.acc
    count = acc.trx
    for i, (part, span) in enumerate(zip(parts[1:], spans[1:]), 1):
        prev = parts[i - 1]
        if (prev.open_end or part.unknown_tables or span.clock is None
                or acc.clock.cur_lc == span.clock):
            return None
        part.acc.shift(count)
        acc.extend(part.acc)
        count += part.acc.trx
    if any(p.acc.groups or p.acc._run_len for p in parts):
        return None
    return FilePart(first.path, acc, first.info)


def finish_stats(parts: Sequence[FilePart], top: int = 5) -> LogStats:
    """Per-file and total figures from parts in input order (merged as one read would).

    Parts of the same path must share their accumulator (as
    :func:`accumulate_stats` returns them); the total counts each once.
    """
    files = tuple(p.acc.result(p.path, p.info.size if p.info else 0, p.info) for p in parts)
    unique = list({id(p.acc): p.acc for p in parts}.values())
    total = _merge(unique, top)
    single = parts[0].info if len(parts) == 1 else None
    tot = total.result("TOTAL", sum(f.size for f in files), single)
    return LogStats(files, tot)


def compute_stats(paths: Paths, *, verify_checksum: bool = True,
                  top: int = 5, keep_going: bool = False,
                  progress: Callable[[int], None] | None = None,
                  window: Window | None = None) -> LogStats:
    """Read the logs (as one ordered sequence) and return per-file and total figures.

    Logical clocks restart in every binlog file, so clock figures are computed
    per file and the total adds them up.

    :raises ReplToolError: as :func:`~repltool.binlog.read_events` does.
    """
    return finish_stats(accumulate_stats(paths, verify_checksum=verify_checksum, top=top,
                                         keep_going=keep_going, progress=progress,
                                         window=window), top)


def compute_clock_stats(paths: Paths, *,
                        verify_checksum: bool = True, top: int = 5) -> LogStats:
    """Only transactions, bytes, logical clocks and the biggest transactions.

    The same read as :func:`compute_stats` (every event is walked and, unless
    ``verify_checksum`` is off, CRC-checked); kinds, truncated transactions, tables
    and the longest transactions are not added up.

    :raises ReplToolError: as :func:`~repltool.binlog.read_events` does.
    """
    return finish_stats(_accumulate(path_list(paths), verify_checksum, top, False, None,
                                    None, clock_only=True), top)


def _merge(accs: list[_FileAcc], top: int) -> _FileAcc:
    total = _FileAcc(top)
    for a in accs:
        a.flush_group()
        total.add(a)
        total.groups.update(a.groups)
    return total


def stats_to_dict(stats: LogStats, tz: tzinfo | None = None) -> dict[str, Any]:
    """JSON-ready form of :class:`LogStats` (what ``stats --format json`` prints).

    ``first_timestamp``/``last_timestamp`` stay Unix seconds; each is followed by
    ``first_datetime``/``last_datetime``, the same instant in ISO 8601 with the UTC
    offset of ``tz`` (UTC when not given), or None.
    """
    import dataclasses
    from .binlog.window import iso_datetime
    zone = timezone.utc if tz is None else tz

    def one(f: FileStats) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in dataclasses.asdict(f).items():
            d[k] = v
            if k in ("first_timestamp", "last_timestamp"):
                d[k[:-len("timestamp")] + "datetime"] = (
                    None if v is None else iso_datetime(v, zone))
        return d

    return {"files": [one(f) for f in stats.files], "total": one(stats.total)}


__all__ = ["ClockStats", "FilePart", "FileStats", "LogStats", "TopTransaction",
           "accumulate_stats", "compute_stats", "finish_stats", "join_parts",
           "distance_bucket", "stats_to_dict", "EventType"]
