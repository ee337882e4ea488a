"""Logs -> transaction summaries through the compiled core (the ``stats`` hot loop).

:func:`scan_summaries` yields a :class:`~repltool.binlog.transactions.TransactionSummary`
per transaction, the very values ``group_transactions(read_events(...))`` gives, read
by the active engine (:mod:`repltool.binlog.engine`): the compiled core
(:mod:`repltool.binlog._core`) walks events, checks CRC32s and groups transactions in
C; this module reads the files in chunks, hands it every Format_description and
Rotate event through the general code (:func:`~repltool.binlog.reader.apply_format_description`,
:class:`~repltool.binlog.transactions.Segments`) and decodes the GTID layouts the core
leaves to the general decoders.  With the pure-Python engine there is no scan here:
:class:`~repltool.binlog.engine.Unsupported` is raised at once, and the caller reads
with the general reader (the one grouper,
:func:`~repltool.binlog.transactions.group_transactions`).

The core raises :class:`~repltool.binlog.engine.Unsupported` where the input
leaves its subset (another event type, a damaged or truncated event, an unusual
FDE); the caller then reads the logs with the general reader, which gives the exact
result or error.
"""

from __future__ import annotations

import copy
import os
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple
from uuid import UUID

from ..errors import ReplToolError
from ..positions import Position
from . import structs as S
from .constants import BINLOG_MAGIC, HEADER_LEN, ChecksumAlg, EventType
from .decode import DecodeContext
from .engine import Unsupported, compiled_core
from .events import Event, GtidBody, MariaGtidBody
from .fastdecode import FAST_DECODERS
from .reader import (
    CHUNK, FileInfo, ReadOptions, apply_format_description, events_in, open_log, read_events,
    resume_events, structs_for,
)
if TYPE_CHECKING:                     # pragma: no cover
    from .split import Span
from .transactions import (
    GroupingState, Segments, Transaction, TransactionSummary, classify_query, event_roles,
    group_transactions,
)

if TYPE_CHECKING:
    from .window import WindowCursor

_MASK64 = (1 << 64) - 1
_GTID_CODES = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT,
                         EventType.GTID_TAGGED_LOG_EVENT})
_ZERO_SID = bytes(16)
_new = tuple.__new__
#: a Transaction built field by field (``_transaction``): what its ``__init__`` does,
#: in half the time (``captured`` builds one per transaction of ``dump --writesets``
#: and ``certify``)
_TRX_FIELDS = ("start", "end", "end_offset", "gtid", "last_committed", "sequence_number",
               "server_id", "thread_id", "size", "num_events", "timestamp", "end_timestamp",
               "kind", "truncated", "compressed", "tables", "rows_events", "segment",
               "relay_log", "immediate_commit_timestamp", "original_commit_timestamp",
               "transaction_length", "gtid_flags", "delta16_saturated", "commit_id",
               "maria_flags", "events", "row_counts")
_bare = object.__new__
if set(_TRX_FIELDS) != set(Transaction.__dataclass_fields__):
    raise RuntimeError("repltool.binlog.corescan: Transaction's fields changed")


def _setter_function(cls: type, fields: tuple[str, ...]) -> Callable[[tuple[Any, ...]], Any]:
    """``lambda values: cls(**dict(zip(fields, values)))`` for a frozen slots dataclass
    whose fields are ``fields``: the slots set one by one, unrolled (half the time of
    a loop over the setters, a third of ``__init__``'s; one call per transaction)."""
    names = [f"v{i}" for i in range(len(fields))]
    env: dict[str, Any] = {"_bare": _bare, "_cls": cls}
    lines = ["def build(values):", "    trx = _bare(_cls)", f"    {', '.join(names)}, = values"]
    for i, name in enumerate(fields):
        env[f"_s{i}"] = cls.__dict__[name].__set__
        lines.append(f"    _s{i}(trx, v{i})")
    lines.append("    return trx")
    # code made of the field names above only
    exec(compile("\n".join(lines), f"<{cls.__name__} builder>", "exec"), env)
    return env["build"]  # type: ignore[no-any-return]


#: ``Transaction(**dict(zip(_TRX_FIELDS, values)))``
_transaction = _setter_function(Transaction, _TRX_FIELDS)

#: event_roles() name -> the core's role (the reader's special types are left out)
_ROLE_OF = {
    "ignored": "IGNORED", "gtid": "GTID", "maria-gtid": "MARIA_GTID", "query": "QUERY",
    "table-map": "TABLE_MAP", "rows": "ROWS", "end": "END", "xa-prepare": "XA_PREPARE",
    "incident": "INCIDENT", "no-open": "PLAIN_NOOPEN", "plain": "PLAIN",
}
#: types the core hands back (or never takes): the reader treats them specially
_READER_SPECIAL = frozenset({
    EventType.START_EVENT_V3, EventType.START_ENCRYPTION_EVENT,
    EventType.TRANSACTION_PAYLOAD_EVENT, EventType.QUERY_COMPRESSED_EVENT,
    EventType.EXECUTE_LOAD_QUERY_EVENT,
})
#: types the capture mode (:func:`scan_writeset_groups`) hands to the general reader:
#: its transactions carry no events, and ``certify`` must see a GR View_change
#: (:func:`repltool.certify.source.is_view_change` looks at the events)
CAPTURE_REFUSED = frozenset({int(EventType.VIEW_CHANGE_EVENT)})
#: the types whose bodies the capture mode hands back (their layout must not change
#: under an open transaction)
_CAPTURED = (EventType.TABLE_MAP_EVENT, EventType.WRITE_ROWS_EVENT_V1,
             EventType.UPDATE_ROWS_EVENT_V1, EventType.DELETE_ROWS_EVENT_V1,
             EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT,
             EventType.DELETE_ROWS_EVENT, EventType.PARTIAL_UPDATE_ROWS_EVENT)
#: types a :class:`CheckScan` hands to the driver (decoded) and its watcher: ``check``
#: reads their GTID sets (G002)
_WATCHED = frozenset({int(EventType.PREVIOUS_GTIDS_LOG_EVENT), int(EventType.GTID_LIST_EVENT)})
#: what classify_query returns -> the core's codes
_CLASSES = {"begin": 0, "commit": 1, "rollback": 2, "xa-rollback": 3, "xa-commit": 4,
            "xa-end": 5, "statement": 5}


def core_roles(core) -> bytes:  # type: ignore[no-untyped-def]
    """The core's 256-byte type table, derived from the grouper's :func:`event_roles`."""
    roles = bytearray(256)            # 0: unsupported
    for tc, role in event_roles().items():
        if tc > 255 or tc in _READER_SPECIAL:
            continue
        if role == "segment":
            name = "FDE" if tc == EventType.FORMAT_DESCRIPTION_EVENT else "PYTHON"
        elif role == "gtid" and tc == EventType.GTID_TAGGED_LOG_EVENT:
            name = "GTID_PY"
        elif role == "query" and tc != EventType.QUERY_EVENT:
            continue
        else:
            name = _ROLE_OF.get(role)
            if name is None:
                continue
        roles[tc] = core.ROLES[name]
    return bytes(roles)


def scan_summaries(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                   verify_checksum: bool = True, info: list[FileInfo] | None = None,
                   counts: dict[str, tuple[Counter[int], Counter[int]]] | None = None
                   ) -> Iterator[TransactionSummary]:
    """A summary per transaction of the logs (one ordered read), by the compiled core.

    :param info: a :class:`~repltool.binlog.reader.FileInfo` is appended per file.
    :param counts: filled with ``path -> (events by type code, bytes by type code)``,
        in first-seen order, as ``stats`` counts them (complete once a file is read).
    :raises Unsupported: where the logs leave the core's subset, and with the
        pure-Python engine (start over with the general reader).
    """
    for batch in scan_summary_batches(paths, verify_checksum=verify_checksum, info=info,
                                      counts=counts):
        yield from batch


def scan_summary_batches(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                         verify_checksum: bool = True, info: list[FileInfo] | None = None,
                         counts: dict[str, tuple[Counter[int], Counter[int]]] | None = None,
                         count_rows: bool = False) -> Iterator[list[TransactionSummary]]:
    """:func:`scan_summaries` in lists (of up to a chunk's transactions), in order.

    :param count_rows: fill ``row_counts`` (:class:`repltool.binlog.rowcount.RowCounter`).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    core = compiled_core()
    if core is None:
        raise Unsupported("the pure-Python engine reads with the general reader")
    if count_rows:
        # the core's records carry Rows events per table, not rows: only its
        # accumulate mode (scan_totals) counts rows
        raise Unsupported("row counts: the compiled core adds them up in scan_totals only")
    scan = _CoreScan(core, paths, verify_checksum)
    try:
        for i, path in enumerate(paths):
            yield from scan.file(i, info, counts)
        scan.core.finish()
        yield scan.records()
    except ReplToolError as exc:
        raise Unsupported(str(exc)) from exc


class TransactionStart(NamedTuple):
    """Where a transaction starts, its GTID and kind (:class:`WritesetGroups` with
    ``starts_only``: what a ``dump --writesets`` line needs): the fields of
    :class:`~repltool.binlog.transactions.Transaction` of the same names."""

    start: Position
    gtid: str | None
    kind: str


class ClockTransaction(NamedTuple):
    """What ``schedule`` (:func:`scan_clock_transactions`) and ``check``
    (:class:`CheckScan`) read of a transaction: the fields of
    :class:`~repltool.binlog.transactions.Transaction` of the same names."""

    start: Position
    end: Position
    gtid: str | None
    last_committed: int | None
    sequence_number: int | None
    size: int
    num_events: int
    truncated: bool
    rows_events: tuple[tuple[str, int], ...]
    immediate_commit_timestamp: int | None
    maria_flags: int | None = None
    delta16_saturated: bool = False

    @property
    def spans_files(self) -> bool:
        return self.start.file != self.end.file


class CheckScan:
    """The ``check`` hot loop: the transactions of the logs as the compiled core reads
    them (:class:`ClockTransaction` lists, in order), every CRC32 verified.

    ``watch`` gets every Format_description, Rotate, Previous_gtids and GTID_LIST
    event the core walks (decoded by the general code), as the walk meets them: ahead
    of the transactions of the same chunk.  Where the logs leave the core's subset
    (a CRC32 mismatch, an unknown type, a GR View_change, damage, a Transaction_payload
    ...) the iteration ends after the transactions completed before that point and
    :attr:`rest` says where the general reader continues (:class:`Handover`); :attr:`counts`
    then holds the events the core counted per path before it.

    :raises Unsupported: when the compiled engine is not active.
    """

    def __init__(self, paths: list[str],
                 watch: Callable[[Iterable[Event]], Iterable[Event]],
                 span: Span | None = None) -> None:
        """``span``: one part of the (single) file, as :func:`scan_totals` reads it (the
        :attr:`rest` is then read up to the part's end)."""
        core = compiled_core()
        if core is None:
            raise Unsupported("the compiled engine is not active")
        roles = bytearray(core_roles(core))
        for tc in _WATCHED:
            roles[tc] = core.ROLES["PYTHON"]
        # C006 looks at the View_change event of a (0, 0) transaction
        roles[EventType.VIEW_CHANGE_EVENT] = 0
        self.paths = paths
        self.scan = _CoreScan(core, paths, True, watch,  # type: ignore[arg-type]
                              roles=bytes(roles))
        self.scan.clock = True
        self.scan.span = span
        self.info: list[FileInfo] = []
        self.counts: dict[str, tuple[Counter[int], Counter[int]]] = {}
        self.rest: Handover | None = None
        #: how many transactions the core completed (tests: the core path ran)
        self.transactions = 0

    def __iter__(self) -> Iterator[list[ClockTransaction]]:
        scan = self.scan
        try:
            for i in range(len(self.paths)):
                for batch in scan.file(i, self.info, self.counts):
                    self.transactions += len(batch)
                    yield batch             # type: ignore[misc]
            scan.core.finish()
        except (Unsupported, ReplToolError) as exc:
            self.rest = scan.handover(exc, self.info, self.counts)
        batch = scan.records()
        if batch:
            self.transactions += len(batch)
            yield batch                     # type: ignore[misc]


def scan_clock_transactions(
        paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], options: ReadOptions,
        *, watch: Callable[[Iterable[Event]], Iterator[Event]] | None = None,
        info: list[FileInfo] | None = None,
        span: Span | None = None) -> Iterator[ClockTransaction | Transaction] | None:
    """Every transaction of the logs, in order, as the compiled core reads them:
    :class:`ClockTransaction` tuples; where the logs leave the core's subset, the
    general reader goes on from the last transaction boundary (``options``) and
    yields :class:`~repltool.binlog.transactions.Transaction` objects.  ``None``
    when the pure-Python engine is active.

    :param watch: an event-stream watcher (``watch(events)`` yields them unchanged):
        it sees every Format_description and Rotate event, and every event the
        general reader reads.
    :param span: one part of the (single) file, as :func:`scan_totals` reads it.
    """
    paths = _path_list(paths)
    core = compiled_core()
    if core is None:
        return None
    scan = _CoreScan(core, paths, options.verify_checksum, watch)
    scan.span = span
    return _clock_transactions(scan, options, info)


def _clock_transactions(scan: _CoreScan, options: ReadOptions, info: list[FileInfo] | None
                        ) -> Iterator[ClockTransaction | Transaction]:
    scan.clock = True
    try:
        for i in range(len(scan.paths)):
            for batch in scan.file(i, info, None):
                yield from batch
        scan.core.finish()
        yield from scan.records()
        return
    except (Unsupported, ReplToolError) as exc:
        rest = scan.handover(exc, info, None)
    yield from scan.records()           # what the core completed before it stopped
    events = rest.events(options, info)
    if scan.span is not None:
        from .split import within
        events = within(events, scan.paths[0], scan.span.end)
    if scan.watch is not None:
        events = _watch_unseen(scan.watch, events, rest.index, rest.seen_to)
    yield from group_transactions(events, state=rest.state())


def _watch_unseen(watch: Callable[[Iterable[Event]], Iterator[Event]], events: Iterator[Event],
                  index: int, seen_to: tuple[int, int]) -> Iterator[Event]:
    """``events`` (from file ``index`` on), those before ``seen_to`` (file index,
    offset: the FDEs and Rotates there went to ``watch`` during the core's walk)
    passed on unwatched."""
    first = True
    for ev in events:
        if ev.pos.offset == 4 and ev.pos.payload_offset is None and not first:
            index += 1                      # every file's first event is at offset 4
        first = False
        if (index, ev.pos.offset) < seen_to:
            yield ev
        else:
            yield from watch((ev,))


class TopEntry(NamedTuple):
    """One transaction of a top list, as ``stats`` lists it."""

    value: int              # size or duration
    number: int             # the transaction's place in the read (0 = first)
    gtid: str | None
    file: str
    pos: int
    size: int
    duration: int
    num_events: int


class FileTotals(NamedTuple):
    """What ``repltool stats`` adds up over the transactions that start in one file
    (see :func:`scan_totals`); kinds and tables in first-seen order."""

    transactions: int
    transaction_bytes: int
    truncated: int
    last_truncated: bool
    kinds: list[tuple[str, int]]
    #: n, barriers, windows, last_committed of the current window (None: none yet),
    #: its length, the longest, delta16-saturated, inconsistent
    clock: tuple[int, int, int, int | None, int, int, int, int]
    distance: list[tuple[int, int]]     # a distance of each bucket -> count
    commit_id_run: tuple[int | None, int]   # the open run of one commit_id: id, length
    commit_id_groups: list[tuple[int, int]]  # closed runs: length -> count
    tables: list[tuple[str, int]]
    biggest: list[TopEntry]
    longest: list[TopEntry]
    #: the first transaction's timestamp, the last one's end timestamp (None: none)
    times: tuple[int, int] | None
    #: the first and the last GTID (None: no transaction with a GTID)
    gtids: tuple[str | None, str | None] | None
    #: rows per table (``count_rows``): (db.table, inserted, updated, deleted, unwalked
    #: Rows events), in first-seen order
    row_counts: list[tuple[str, int, int, int, int]] = []
    #: with a window: (type code, events, bytes) of the window's transactions, in
    #: first-seen order (None without a window: the file's counts say it)
    types: list[tuple[int, int, int]] | None = None


class _WindowStop(Exception):
    """The window's cursor stopped: the read ends there, as the general reader's does."""


class WindowView(NamedTuple):
    """What :class:`~repltool.binlog.window.WindowCursor` reads of a transaction the
    core accumulates (the fields of :class:`~repltool.binlog.transactions.Transaction`
    of the same names)."""

    gtid: str | None
    maria_flags: int | None
    start: Position
    end: Position
    end_offset: int
    timestamp: int


class CoreTotals(NamedTuple):
    """What :func:`scan_totals` returns."""

    #: per unique path: the figures of the transactions the core completed
    totals: dict[str, FileTotals]
    transactions: int               # how many (all files)
    #: where the general reader must continue (``None``: the core read everything)
    rest: Handover | None


def scan_totals(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                top: int, verify_checksum: bool = True, info: list[FileInfo] | None = None,
                counts: dict[str, tuple[Counter[int], Counter[int]]] | None = None,
                progress: Callable[[int], None] | None = None,
                clock_only: bool = False, count_rows: bool = False,
                window: WindowCursor | None = None,
                span: Span | None = None) -> CoreTotals | None:
    """``stats``' per-file figures, added up by the compiled core (no per-transaction
    Python work); ``None`` when the pure-Python engine is active.

    One ordered read of the logs, as :func:`scan_summaries`; a transaction counts
    for the file it starts in (a path named twice is one file).  Where the logs
    leave the core's subset, the result holds the figures of the transactions
    before that point and a :class:`Handover` that says where the general reader
    continues (``info`` and ``counts`` then describe what the core read up to it).

    :param top: the size of the biggest / longest lists.
    :param progress: called after every chunk with the bytes read so far.
    :param clock_only: add up only what ``stats --clock-only`` reports (transactions,
        bytes, clocks, the biggest list).
    :param count_rows: add up rows per table and kind (every row image walked,
        :class:`repltool.binlog.rowcount.RowCounter` called by the core per Table_map
        and Rows event).
    :param window: add up only the transactions this cursor takes (its window must not
        need events: no ``--database``/``--table``), and their events by type
        (``FileTotals.types``); the cursor's state says where a hand-over goes on.
    :param span: one part of the (single) file (:mod:`repltool.binlog.split`): the
        events from ``span.start`` to ``span.end`` after the file's Format_description,
        which is read but not counted; a hand-over then says where the part ends.
    """
    paths = _path_list(paths)
    core = compiled_core()
    if core is None:
        return None
    scan = _CoreScan(core, paths, verify_checksum)
    unique = list(dict.fromkeys(paths))
    where = {p: i for i, p in enumerate(unique)}
    scan.core.accumulate([where[p] for p in paths], max(top, 0), clock_only)
    if window is not None:
        if window.window.needs_events:
            raise ValueError("a window with --database/--table needs the general reader")
        scan.core.window(scan.window_hook(window))
    if count_rows:
        from .rowcount import RowCounter
        scan.counter = counter = RowCounter()
        scan.core.row_hook = counter.core_rows
        scan.core.tm_hook = counter.table_map_bytes
    scan.progress = progress
    scan.span = span
    rest = None
    try:
        for i, path in enumerate(paths):
            for _ in scan.file(i, info, counts):
                pass
        scan.core.finish()
    except _WindowStop:
        pass                        # nothing after the window's end is read
    except (Unsupported, ReplToolError) as exc:
        rest = scan.handover(exc, info, counts)
    return CoreTotals({p: scan.totals(i) for i, p in enumerate(unique)},
                      scan.core.transactions(), rest)


@dataclass
class Handover:
    """Where the general reader takes over from the core: at ``offset`` of
    ``paths[index]``, a transaction boundary (the start of the transaction the core
    could not finish, or the event it stopped at), with the grouper's state there.
    :meth:`events` and :meth:`state` give the rest of the read; the result is the
    same as a general read from the start.  ``reason``: why the core stopped."""

    paths: list[str]
    index: int
    offset: int
    info: FileInfo
    segments: Segments
    table_names: dict[int, str]
    reason: str
    #: (file index, offset) of the event the core stopped at: everything before it
    #: was walked (and its FDEs and Rotates seen by the driver)
    seen_to: tuple[int, int] = (0, 0)
    #: count_rows: the row counter's table definitions by table id, as the table names
    row_tables: dict[int, Any] | None = None

    def events(self, options: ReadOptions, info: list[FileInfo] | None = None
               ) -> Iterator[Event]:
        """The events from the hand-over point to the end of the last file."""
        if info is not None:
            info.append(self.info)
        yield from resume_events(self.info, self.offset, options)
        yield from read_events(self.paths[self.index + 1:], options, info)

    def state(self) -> GroupingState:
        """The grouper's state at the hand-over point."""
        return GroupingState(self.segments, self.table_names, self.info.fde, self.row_tables)


class _CoreScan:
    """The driver's state across the files of one read."""

    def __init__(self, core, paths: list[str], verify: bool,  # type: ignore[no-untyped-def]
                 watch: Callable[[Iterable[Event]], Iterator[Event]] | None = None,
                 capture: bool = False, roles: bytes | None = None) -> None:
        self.mod = core
        self.watch = watch
        self.clock = False              # records() builds ClockTransaction tuples
        #: capture: the core keeps each transaction's Table_map and Rows bodies
        #: (``GroupCapture``), and the records are taken before any event goes to
        #: the driver (a batch then never spans a Format_description)
        self.capture = capture
        roles = bytearray(core_roles(core) if roles is None else roles)
        if capture:
            for tc in CAPTURE_REFUSED:
                roles[tc] = 0
        self.core = (core.GroupCapture if capture else core.Scanner)(
            bytes(roles), classify_query, _CLASSES)
        self.segment_names: list[str] = []
        self.light = False          # capture mode: summaries instead of transactions
        self.starts_only = False    # capture mode: TransactionStart tuples instead
        self.paths = paths
        self.verify = verify
        self.seg = Segments()
        self.segments: dict[str, int] = {}
        self.prefixes: list[str] = []
        #: Table_map body -> ``db.table`` (captured: a transaction's ``tables``)
        self.table_texts: dict[bytes, str] = {}
        self.names: list[str] = []
        self.objects: dict[int, GtidBody] = {}
        self.n_objects = 0
        self.structs = None
        self.progress: Callable[[int], None] | None = None
        self.done = 0                   # bytes of the files read before this one
        # for a hand-over: each file's FileInfo, what take_counts gave per file, the
        # state before each FDE / Rotate (file index, offset, segments, FileInfo copy),
        # the event being walked by python_event, the position of a stop
        self.infos: list[FileInfo] = []
        self.taken: list[list[tuple[int, int, int]]] = []
        self.snapshots: list[tuple[int, int, Segments, FileInfo]] = []
        self.in_python: tuple[int, int] | None = None
        self.stop = 0
        self.counter: Any = None        # scan_totals(count_rows=True): its RowCounter
        self.span: Span | None = None   # scan_totals(span=): one part of a single file

    # ---- one file ----

    def file(self, idx: int, info: list[FileInfo] | None,
             counts: dict[str, tuple[Counter[int], Counter[int]]] | None
             ) -> Iterator[list[TransactionSummary]]:
        core = self.core
        path = self.paths[idx]
        fi = FileInfo(path, 0)
        if info is not None:
            info.append(fi)
        self.infos.append(fi)
        self.stop = 0
        fh, fi.size = open_log(path)
        with fh:
            if fh.read(4) != BINLOG_MAGIC:
                raise Unsupported("no binlog magic", Position(path, 0))
            core.start_file(idx)
            span = self.span
            win = _Window(fh, 4, span.end if span is not None else None)
            feed = core.feed
            off = 0
            while True:
                status, off = feed(win.view, off, win.base)
                self.stop = win.base + off
                if status == 2:                      # ST_PYTHON
                    if self.capture:
                        batch = self.records()
                        if batch:
                            yield batch
                    end = core.pending_end
                    self.in_python = (win.base + off, win.base + end)
                    self.python_event(fi, bytes(win.view[off:end]), win.base + off)
                    self.in_python = None
                    off = end
                    if span is not None and span.start > win.base + off:
                        # a later part: the Format_description is read, not counted
                        core.take_counts()
                        self.snapshots.clear()
                        win.seek(span.start)
                        off = 0
                    continue
                if status == 3:                      # ST_UNSUPPORTED
                    raise Unsupported(core.reason, Position(path, win.base + off))
                batch = self.records()
                if batch:
                    yield batch
                elif self.progress is not None:
                    self.progress(self.done + win.base + off)
                if len(self.objects) > 4096:
                    self._prune_objects()
                if len(self.snapshots) > 64:
                    self._prune_snapshots()
                need = CHUNK
                if status == 1 and off + HEADER_LEN <= len(win.view):
                    size = int.from_bytes(win.view[S.HEADER.span("event_size", off)], "little")
                    if win.base + off + size > fi.size:
                        raise Unsupported("event runs past the end of the file",
                                          Position(path, win.base + off))
                    need = max(CHUNK, size)
                if not win.more(off, need):
                    off = 0
                    if len(win.view):
                        raise Unsupported("truncated event", Position(path, win.base))
                    break
                off = 0
            base, off = win.base, off
            fi.end_offset = base + off
        self.done += fi.size
        taken = core.take_counts()
        self.taken.append(taken)
        if counts is not None:
            types, nbytes = counts.setdefault(path, (Counter(), Counter()))
            for tc, n, nb in taken:
                types[tc] += n
                nbytes[tc] += nb

    def python_event(self, fi: FileInfo, raw: bytes, p: int) -> None:
        """An FDE, a Rotate or a GTID the core left to the general code."""
        core = self.core
        ts, tc, sid, _, log_pos, flags = S.COMMON_HEADER.unpack_from(raw)
        size = len(raw)
        pos = Position(fi.path, p, None)
        if tc == EventType.FORMAT_DESCRIPTION_EVENT or tc == EventType.ROTATE_EVENT:
            self.snapshots.append((len(self.infos) - 1, p, self.seg.copy(), copy.copy(fi)))
        if tc == EventType.FORMAT_DESCRIPTION_EVENT:
            fde = apply_format_description(fi, raw, pos, verify_checksum=self.verify)
            structs = structs_for(fde)
            if self.capture and self.structs is not None and any(
                    structs.post_header(t, 0) != self.structs.post_header(t, 0)
                    for t in _CAPTURED):
                # an open transaction's events were captured under the old layout
                raise Unsupported("Format_description changes the Table_map/Rows layout", pos)
            self.structs = structs
            if self.counter is not None:
                self.counter.set_structs(structs)
            # the core decodes Query and Table_map bodies itself: only their standard
            # layouts; GTID types the table makes opaque (MariaDB's zero lengths) are
            # deferred to python_event, which keeps them opaque as the reader does
            if (fde.binlog_version != 4 or structs.lenient
                    or structs.post_header(EventType.QUERY_EVENT, 13) != 13
                    or structs.post_header(EventType.TABLE_MAP_EVENT, 8) != 8):
                raise Unsupported("Format_description outside the compiled engine's subset",
                                  pos)
            crc_on = fde.checksum_alg == ChecksumAlg.CRC32
            core.set_format(crc_on, self.verify,
                            bytes(sorted(t for t in structs.opaque if t in _GTID_CODES)))
            self._see(Event(pos, ts, tc, sid, size, log_pos, flags, fde, None))
            return
        body_end = len(raw) - 4 if self._crc_on(fi) else len(raw)
        data = raw[HEADER_LEN:body_end]
        decoder = FAST_DECODERS.get(tc)
        body = None
        if decoder is not None and tc not in self.structs.opaque:
            body = decoder(data, DecodeContext(self.structs, pos, tc))
        if tc == EventType.ROTATE_EVENT:
            self._see(Event(pos, ts, tc, sid, size, log_pos, flags, body, None))
            return
        if tc in _WATCHED:
            # (CheckScan) decoded by the general reader's code, for the watcher only
            assert self.watch is not None
            for ev in events_in(fi, raw, p, ReadOptions(verify_checksum=False)):
                for _ in self.watch((ev,)):
                    pass
            return
        self._open_gtid(fi.path, p, size, ts, sid, body)

    @staticmethod
    def _crc_on(fi: FileInfo) -> bool:
        return fi.fde is not None and fi.fde.checksum_alg == ChecksumAlg.CRC32

    def _see(self, ev: Event) -> None:
        """An FDE or Rotate: the segment rule, and the caller's watcher."""
        self.seg.see(ev)
        self._segment()
        if self.watch is not None:
            for _ in self.watch((ev,)):
                pass

    def _segment(self) -> None:
        name = self.seg.current
        idx = self.segments.get(name)
        if idx is None:
            idx = self.segments[name] = len(self.segments)
            self.segment_names.append(name)
        self.core.set_segment(idx, self.seg.relay)

    def _open_gtid(self, path: str, p: int, size: int, ts: int, sid: int, body: object) -> None:
        m = self.mod
        kind, obj, gno, flags, lc, sn, domain, mflags, commit_id = 0, 0, 0, 0, 0, 0, 0, -1, -1
        state = m.STATES["START"]
        if isinstance(body, MariaGtidBody):
            kind, gno, domain, mflags = m.GTID_MARIA, _signed(body.seq_no), body.domain_id, \
                body.flags2
            flags |= m.HAS_MARIA
            if body.flags2 & 0x02 and body.commit_id is not None:
                commit_id = _signed(body.commit_id)
                flags |= m.HAS_COMMIT_ID
            state = m.STATES["STANDALONE" if body.flags2 & 0x01 else "OPEN"]
        elif isinstance(body, GtidBody):
            kind, obj = m.GTID_OBJECT, self.n_objects
            self.objects[obj] = body
            self.n_objects += 1
            if body.lt_type is not None:
                lc, sn = body.last_committed, body.sequence_number
                flags |= m.HAS_CLOCK
            if body.delta16_saturated:
                flags |= m.SATURATED
        try:
            self.core.open_gtid(p, size, ts, sid, kind, obj, gno, flags, lc, sn, domain,
                                mflags, commit_id, 0, 0, 0, state)
        except OverflowError as exc:        # a value beyond int64: the general reader's
            raise Unsupported(f"GTID value out of range ({exc})",
                              Position(path, p)) from exc

    def _prune_snapshots(self) -> None:
        """Forget the states before the point a hand-over would start from."""
        at = self.core.open_start()
        if at is None:
            self.snapshots.clear()
        else:
            self.snapshots = [s for s in self.snapshots if (s[0], s[1]) >= at]

    # ---- handing over ----

    def handover(self, exc: Exception, info: list[FileInfo] | None,
                 counts: dict[str, tuple[Counter[int], Counter[int]]] | None,
                 at: tuple[int, int] | None = None) -> Handover:
        """Where and in what state the general reader continues after the core
        stopped with ``exc``; ``info`` and ``counts`` are cut back to what lies
        before that point.  ``at``: (file index, offset) of an earlier transaction
        boundary to continue from (capture mode: a transaction of the batch being
        consumed, which never spans a Format_description or Rotate); default: the
        start of the transaction the core left open, or its stop."""
        cur = len(self.infos) - 1
        # the stop: the event python_event failed on (the core counted it) or the one
        # the core stopped at (not counted)
        counted_end = self.in_python[1] if self.in_python is not None else self.stop
        if at is None:
            at = self.core.open_start()
        index, offset = at if at is not None else (cur, self.stop)
        # the state at (index, offset): the first snapshot at or after it was taken
        # before anything changed it; none in that file: the file's own state is
        later = [s for s in self.snapshots if (s[0], s[1]) >= (index, offset)]
        fi = self.infos[index]
        seg = self.seg.copy()
        if later:
            seg = later[0][2]
            if later[0][0] == index:
                fi = later[0][3]
        # counts: what the core counted from the hand-over point on is counted again by
        # the general reader
        if cur not in range(len(self.taken)):
            self.taken.append(self.core.take_counts())
            if counts is not None:
                types, nbytes = counts.setdefault(self.paths[cur], (Counter(), Counter()))
                for tc, n, nb in self.taken[cur]:
                    types[tc] += n
                    nbytes[tc] += nb
        if counts is not None:
            for i in range(index, cur + 1):
                end = counted_end if i == cur else self.infos[i].size
                types, nbytes = counts[self.paths[i]]
                for tc, n, nb in _headers(self.paths[i], offset if i == index else 4, end):
                    types[tc] -= n
                    nbytes[tc] -= nb
            for path in list(counts):
                types, nbytes = counts[path]
                counts[path] = (+types, +nbytes)
                if not counts[path][0] and path not in self.paths[:index + 1]:
                    del counts[path]
        if info is not None:
            del info[len(info) - (cur + 1) + index:]
        names = self.core.names
        tables = {tid: _table_text(names[n]) for tid, n in self.core.table_ids().items()
                  if n >= 0}
        return Handover(self.paths, index, offset, fi, seg, tables,
                        getattr(exc, "reason", str(exc)), (cur, self.stop),
                        self.counter.tables if self.counter is not None else None)

    def _prune_objects(self) -> None:
        """Accumulate mode: forget the GTID objects no top entry refers to."""
        live = self.core.live_objects()
        self.objects = {k: v for k, v in self.objects.items() if k in live}

    # ---- accumulate mode -> totals ----

    def totals(self, i: int) -> FileTotals:
        r = self.core.acc_result(i)
        self.names.extend(_table_text(k) for k in self.core.names[len(self.names):])
        names = self.names
        tables = [(names[n] if n >= 0 else "?", c) for n, c in r["tables"]]
        return FileTotals(
            r["trx"], r["trx_bytes"], r["truncated"], r["last_truncated"], r["kinds"],
            r["clock"], r["dist"], r["run"],
            r["groups"], tables, self._top(r["biggest"]), self._top(r["longest"]),
            r["times"], r["gtids"] and (self._record_gtid(r["gtids"][0]),
                                        self._record_gtid(r["gtids"][1])),
            [(names[n] if n >= 0 else "?", *c) for n, *c in r["rows"]], r["types"])

    def window_hook(self, cursor: WindowCursor) -> Callable[[bytes], bool]:
        """Accumulate mode with a window: the core's question for each group."""
        F = self.mod.FIELDS.index
        i_file, i_start, i_end_file, i_end_pos, i_end_off, i_ts, i_gk, i_sid, i_gno, \
            i_domain, i_server, i_flags, i_mflags = map(F, (
                "file", "start", "end_file", "end_pos", "end_offset", "timestamp",
                "gtid_kind", "sid", "gno", "domain_id", "server_id", "flags", "maria_flags"))
        has_maria = self.mod.HAS_MARIA
        paths = self.paths
        gtid_of = self._gtid
        take = cursor.take

        def hook(raw: bytes) -> bool:
            r = memoryview(raw).cast("q")
            if take(WindowView(
                    gtid_of(r[i_gk], r[i_sid], r[i_gno], r[i_domain], r[i_server]),
                    r[i_mflags] if r[i_flags] & has_maria else None,
                    Position(paths[r[i_file]], r[i_start], None),
                    Position(paths[r[i_end_file]], r[i_end_pos], None), r[i_end_off],
                    r[i_ts])):
                return True
            if cursor.stopped:
                raise _WindowStop()
            return False
        return hook

    def _record_gtid(self, raw: bytes) -> str | None:
        rec = memoryview(raw).cast("q").tolist()
        F = self.mod.FIELDS.index
        return self._gtid(rec[F("gtid_kind")], rec[F("sid")], rec[F("gno")],
                          rec[F("domain_id")], rec[F("server_id")])

    def _top(self, raw: bytes) -> list[TopEntry]:
        m = self.mod
        nf = len(m.FIELDS)
        vals = memoryview(raw).cast("q").tolist()
        F = m.FIELDS.index
        out = []
        for j in range(0, len(vals), nf + 2):
            rec = vals[j + 2:j + 2 + nf]
            ts, end_ts = rec[F("timestamp")], rec[F("end_timestamp")]
            out.append(TopEntry(
                vals[j], vals[j + 1],
                self._gtid(rec[F("gtid_kind")], rec[F("sid")], rec[F("gno")],
                           rec[F("domain_id")], rec[F("server_id")]),
                self.paths[rec[F("file")]], rec[F("start")], rec[F("size")],
                end_ts - ts if end_ts > ts else 0, rec[F("num_events")]))
        return out

    def _take_gtid(self, gk: int, sid_i: int, gno: int, server_id: int,
                   domain: int) -> str | None:
        """A completed record's GTID text; a kind-3 GTID's object is taken off
        ``objects`` (each record's object is read once, in order)."""
        if gk == 1:
            return "ANONYMOUS" if gno == 0 and self.core.sids[sid_i] == _ZERO_SID else \
                f"{self.prefixes[sid_i]}{gno}"
        if gk == 2:
            return f"{domain}-{server_id}-{gno & _MASK64}"
        if gk == 3:
            return self.objects.pop(sid_i).gtid_text
        return None

    def _gtid(self, gk: int, sid_i: int, gno: int, domain: int, server_id: int) -> str | None:
        """A record's GTID text (as :meth:`records` writes it)."""
        if gk == 1:
            sid = self.core.sids[sid_i]
            return "ANONYMOUS" if gno == 0 and sid == _ZERO_SID else f"{UUID(bytes=sid)}:{gno}"
        if gk == 2:
            return f"{domain}-{server_id}-{gno & _MASK64}"
        if gk == 3:
            return self.objects[sid_i].gtid_text
        return None

    # ---- records -> summaries ----

    def records(self) -> list[TransactionSummary]:
        """The transactions the core completed since the last call (capture mode:
        see :meth:`captured`)."""
        recs, rows = self.core.take()
        if self.capture:
            if self.starts_only:
                groups = self.core.take_groups()
                return list(zip(self.starts(recs), (ev for ev, _ in groups)))
            if self.light:
                groups = self.core.take_groups()
                return list(zip(self.summaries(recs, rows), (ev for ev, _ in groups)))
            return self.captured(recs, rows)  # type: ignore[return-value]
        return self.summaries(recs, rows)

    def starts(self, recs: bytes) -> list[TransactionStart]:
        """The :class:`TransactionStart` of each record of ``recs``."""
        if not recs:
            return []
        m = self.mod
        nf = len(m.FIELDS)
        vals = memoryview(recs).cast("q").tolist()
        F = m.FIELDS.index
        sids, paths, kinds = self.core.sids, self.paths, m.KINDS
        take_gtid = self._take_gtid
        prefixes = self.prefixes
        if len(prefixes) < len(sids):
            prefixes.extend(f"{UUID(bytes=s)}:" for s in sids[len(prefixes):])
        out: list[TransactionStart] = []
        add = out.append
        for f_file, start, kind, gk, sid_i, gno, server_id, domain in zip(*(
                vals[F(name)::nf] for name in ("file", "start", "kind", "gtid_kind", "sid", "gno",
                                               "server_id", "domain_id"))):
            gtid = take_gtid(gk, sid_i, gno, server_id, domain)
            add(_new(TransactionStart, (_new(Position, (paths[f_file], start, None)), gtid,
                                        kinds[kind])))
        return out

    def summaries(self, recs: bytes, rows: bytes) -> list[TransactionSummary]:
        """The summaries of the records ``recs`` (and their ``rows`` pairs)."""
        if not recs:
            return []
        out: list[TransactionSummary] = []
        add = out.append
        m = self.mod
        nf = len(m.FIELDS)
        vals = memoryview(recs).cast("q").tolist()
        pairs = memoryview(rows).cast("q").tolist()
        kinds = m.KINDS
        paths = self.paths
        has_clock, has_maria, has_cid, sat, trunc = (m.HAS_CLOCK, m.HAS_MARIA, m.HAS_COMMIT_ID,
                                                     m.SATURATED, m.TRUNCATED)
        prefixes = self.prefixes
        names = self.names
        if len(names) < len(self.core.names):
            names.extend(_table_text(k) for k in self.core.names[len(names):])
        if len(prefixes) < len(self.core.sids):
            prefixes.extend(f"{UUID(bytes=s)}:" for s in self.core.sids[len(prefixes):])
        objects = self.objects
        take_gtid = self._take_gtid
        F = m.FIELDS.index
        cols = [vals[F(name)::nf] for name in (
            "file", "start", "size", "num_events", "timestamp", "end_timestamp", "kind",
            "flags", "gtid_kind", "sid", "gno", "last_committed", "sequence_number",
            "server_id", "domain_id", "maria_flags", "commit_id", "rows_from", "rows_n")]
        clock_mode = self.clock
        if clock_mode:
            ends = zip(vals[F("end_file")::nf], vals[F("end_pos")::nf],
                       vals[F("immediate_commit_timestamp")::nf])
            has_ict = m.HAS_ICT
        for (f_file, start, size, count, ts, end_ts, kind, flags, gk, sid_i, gno, lc, sn,
             server_id, domain, mflags, commit_id, rows_from, rows_n) in zip(*cols):
            if gk == 3:                 # a tagged GTID: its object (clock mode reads it)
                obj = objects.pop(sid_i)
                gtid = obj.gtid_text
            else:
                gtid = take_gtid(gk, sid_i, gno, server_id, domain)
            if rows_n == 1:
                k = rows_from * 2
                n = pairs[k]
                rows_events = ((names[n] if n >= 0 else "?", pairs[k + 1]),)
            elif rows_n:
                k = rows_from * 2
                rows_events = tuple((names[pairs[j]] if pairs[j] >= 0 else "?", pairs[j + 1])
                                    for j in range(k, k + rows_n * 2, 2))
            else:
                rows_events = ()
            clock = flags & has_clock
            if clock_mode:
                e_file, e_pos, ict = next(ends)
                if gk == 3:
                    ict = obj.immediate_commit_timestamp
                elif not flags & has_ict:
                    ict = None
                add(_new(ClockTransaction, (
                    _new(Position, (paths[f_file], start, None)),
                    _new(Position, (paths[e_file], e_pos, None)), gtid,
                    lc if clock else None, sn if clock else None, size, count,
                    bool(flags & trunc), rows_events, ict,
                    mflags if flags & has_maria else None, bool(flags & sat))))
                continue
            add(_new(TransactionSummary, (
                _new(Position, (paths[f_file], start, None)), gtid,
                lc if clock else None, sn if clock else None, size, count, kinds[kind],
                bool(flags & trunc), end_ts - ts if end_ts > ts else 0, rows_events,
                bool(flags & sat), mflags if flags & has_maria else None,
                commit_id & _MASK64 if flags & has_cid else None, ts, end_ts, ())))
        return out


    def captured(self, recs: bytes, rows: bytes) -> list[tuple[Transaction, list[Any]]]:
        """Capture mode: ``(transaction, events)`` per record, the transaction the
        general grouper's (without its events), ``events`` its Table_map and Rows
        events as ``(type code, file offset, body bytes, file index)``."""
        groups = self.core.take_groups()
        if not recs:
            return []
        m = self.mod
        nf = len(m.FIELDS)
        vals = memoryview(recs).cast("q").tolist()
        pairs = memoryview(rows).cast("q").tolist()
        names = self.names
        if len(names) < len(self.core.names):
            names.extend(_table_text(k) for k in self.core.names[len(names):])
        sids = self.core.sids
        if len(self.prefixes) < len(sids):
            self.prefixes.extend(f"{UUID(bytes=s)}:" for s in sids[len(self.prefixes):])
        F = m.FIELDS.index
        (f_file, f_start, f_end_file, f_end_pos, f_end_off, f_size, f_count, f_ts, f_end_ts,
         f_kind, f_flags, f_gk, f_sid, f_gno, f_lc, f_sn, f_server, f_thread, f_domain,
         f_mflags, f_cid, f_seg, f_rows_from, f_rows_n, f_ict, f_oct, f_tlen) = (
            F(name) for name in m.FIELDS)
        kinds, paths, segs = m.KINDS, self.paths, self.segment_names
        out: list[tuple[Transaction, list[Any]]] = []
        tm = int(EventType.TABLE_MAP_EVENT)
        texts = self.table_texts
        if len(texts) > 4096:
            texts.clear()
        text_of = texts.get
        HAS_CLOCK, HAS_ICT, HAS_TRX_LEN, HAS_COMMIT_ID = \
            m.HAS_CLOCK, m.HAS_ICT, m.HAS_TRX_LEN, m.HAS_COMMIT_ID
        HAS_THREAD, TRUNCATED, RELAY = m.HAS_THREAD, m.TRUNCATED, m.RELAY
        for j, (events, gflags) in zip(range(0, len(vals), nf), groups):
            r = vals[j:j + nf]
            flags, gk = r[f_flags], r[f_gk]
            ict = oct_ = tlen = cid = mflags = gtid_flags = None
            saturated = False
            lc = sn = None
            if flags & HAS_CLOCK:
                lc, sn = r[f_lc], r[f_sn]
            if gk == 1:
                sid_i, gno = r[f_sid], r[f_gno]
                gtid = "ANONYMOUS" if gno == 0 and sids[sid_i] == _ZERO_SID else \
                    f"{self.prefixes[sid_i]}{gno}"
                if flags & HAS_ICT:
                    ict, oct_ = r[f_ict], r[f_oct]
                if flags & HAS_TRX_LEN:
                    tlen = r[f_tlen]
                gtid_flags = gflags
            elif gk == 2:
                gtid = f"{r[f_domain]}-{r[f_server]}-{r[f_gno] & _MASK64}"
                if flags & HAS_COMMIT_ID:
                    cid = r[f_cid] & _MASK64
                mflags = r[f_mflags]
            elif gk == 3:
                g = self.objects.pop(r[f_sid])
                gtid = g.gtid_text
                if g.lt_type is None:
                    lc = sn = None
                ict, oct_ = g.immediate_commit_timestamp, g.original_commit_timestamp
                tlen, gtid_flags = g.transaction_length, g.gtid_flags
                saturated = g.delta16_saturated
            else:
                gtid = None
            k, nr = r[f_rows_from] * 2, r[f_rows_n]
            if nr == 1:
                n = pairs[k]
                rows_events = ((names[n] if n >= 0 else "?", pairs[k + 1]),)
            elif nr:
                rows_events = tuple((names[pairs[i]] if pairs[i] >= 0 else "?", pairs[i + 1])
                                    for i in range(k, k + nr * 2, 2))
            else:
                rows_events = ()
            seen: list[str] = []
            for ev in events:
                if ev[0] == tm:
                    body = ev[2]
                    text = text_of(body)
                    if text is None:
                        text = texts[body] = _table_text(body[8:])
                    if text not in seen:
                        seen.append(text)
            out.append((_transaction((
                _new(Position, (paths[r[f_file]], r[f_start], None)),
                _new(Position, (paths[r[f_end_file]], r[f_end_pos], None)),
                r[f_end_off], gtid, lc, sn, r[f_server],
                r[f_thread] if flags & HAS_THREAD else None, r[f_size], r[f_count],
                r[f_ts], r[f_end_ts], kinds[r[f_kind]], bool(flags & TRUNCATED), False,
                tuple(seen), rows_events, segs[r[f_seg]], bool(flags & RELAY), ict, oct_,
                tlen, gtid_flags, saturated, cid, mflags, (), ())), events))
        return out


def scan_writeset_groups(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                         verify_checksum: bool = True, summaries: bool = False
                         ) -> Iterator[tuple[Any, list[tuple[Any, list[Any]]]]]:
    """The transactions of the logs with their Table_map and Rows events, grouped
    by the compiled core (the ``dump --writesets`` / ``certify`` hot loop):
    :class:`WritesetGroups`' batches.

    :raises Unsupported: where the logs leave the core's subset (the caller reads
        them with the general reader), or when the compiled engine is not active.
    """
    groups = WritesetGroups(paths, verify_checksum=verify_checksum, summaries=summaries)
    yield from groups
    if groups.error is not None:
        exc = groups.error
        if isinstance(exc, Unsupported):
            raise exc
        raise Unsupported(str(exc)) from exc


class WritesetGroups:
    """The transactions of the logs with their Table_map and Rows events, grouped
    by the compiled core; iterating yields ``(structs, batch)``: ``structs`` the
    :class:`~repltool.binlog.structs.BinlogStructs` of the Format_description the
    batch's events were written under, ``batch`` a list of ``(transaction,
    events)`` (:meth:`_CoreScan.captured`), in log order.  The transactions equal
    ``group_transactions(read_events(...))``'s, without their events; with
    ``summaries``, their :class:`~repltool.binlog.transactions.TransactionSummary`;
    with ``starts_only``, their :class:`TransactionStart`.

    Where the logs leave the core's subset the iteration ends after the
    transactions completed before that point, and :attr:`rest` says where the
    general reader continues (:class:`Handover`: the start of the transaction the
    core could not finish).  A consumer that cannot finish a transaction of the
    batch it holds (a Rows event its keying rejects) asks :meth:`hand_over` for
    the hand-over at that transaction's start instead.

    :raises Unsupported: when the compiled engine is not active.
    """

    def __init__(self, paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                 verify_checksum: bool = True, summaries: bool = False,
                 starts_only: bool = False) -> None:
        self.paths = _path_list(paths)
        core = compiled_core()
        if core is None:
            raise Unsupported("the compiled engine is not active")
        self.scan = _CoreScan(core, self.paths, verify_checksum, capture=True)
        self.scan.light = summaries
        self.scan.starts_only = starts_only
        #: where the general reader continues, once the iteration stopped early, and
        #: what stopped it
        self.rest: Handover | None = None
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[tuple[Any, list[tuple[Any, list[Any]]]]]:
        scan = self.scan
        try:
            for i, _ in enumerate(self.paths):
                for batch in scan.file(i, None, None):
                    yield scan.structs, batch
            scan.core.finish()
        except (Unsupported, ReplToolError) as exc:
            self.rest = scan.handover(exc, None, None)
            self.error = exc
        batch = scan.records()      # what the core completed (before it stopped)
        if batch:
            yield scan.structs, batch

    def hand_over(self, trx: Any, file_index: int, reason: str) -> Handover:
        """The hand-over at the start of ``trx``, a transaction of the batch last
        yielded, whose events lie in file ``file_index`` or before."""
        path, offset = trx.start.file, trx.start.offset
        index = file_index
        while self.paths[index] != path:
            index -= 1
        return self.scan.handover(Unsupported(reason), None, None, at=(index, offset))


class _Window:
    """A file read through one reused buffer: ``view`` holds the bytes from file
    offset ``base`` on (no per-chunk allocation, only the unread tail moves)."""

    def __init__(self, fh, base: int,  # type: ignore[no-untyped-def]
                 limit: int | None = None) -> None:
        self.fh = fh
        self.buf = bytearray(2 * CHUNK)
        self.base = base
        self.limit = limit              # no byte at or past this offset is read
        n = fh.readinto(memoryview(self.buf)[:self._cap(base, CHUNK)])
        self.view = memoryview(self.buf)[:n]

    def _cap(self, at: int, need: int) -> int:
        return need if self.limit is None else max(0, min(need, self.limit - at))

    def more(self, off: int, need: int) -> bool:
        """Drop the bytes before ``off``, read up to ``need`` more; False at the end of
        the file (``view`` then holds the unread tail)."""
        keep = len(self.view) - off
        if keep + need > len(self.buf):
            buf = bytearray(keep + need)
            buf[:keep] = self.view[off:]
            self.view.release()
            self.buf = buf
            mv = memoryview(buf)
        else:
            mv = memoryview(self.buf)
            mv[:keep] = self.view[off:]         # memoryview assignment: memmove
            self.view.release()
        self.base += off
        n = self.fh.readinto(mv[keep:keep + self._cap(self.base + keep, need)])
        self.view = mv[:keep + n]
        return n > 0

    def seek(self, offset: int) -> None:
        """Continue at file ``offset`` (nothing kept)."""
        self.view.release()
        self.fh.seek(offset)
        self.base = offset
        mv = memoryview(self.buf)
        n = self.fh.readinto(mv[:self._cap(offset, CHUNK)])
        self.view = mv[:n]


_TYPE_AT = S.HEADER.offsets["type_code"]
_SIZE_AT, _SIZE_END = S.HEADER.offsets["event_size"], S.HEADER.ends["event_size"]


def _headers(path: str, start: int, end: int) -> list[tuple[int, int, int]]:
    """``(type code, events, bytes)`` of the complete events in ``[start, end)`` of a
    file the core walked (headers only)."""
    types: Counter[int] = Counter()
    nbytes: Counter[int] = Counter()
    fh, _ = open_log(path)
    with fh:
        fh.seek(start)
        data = fh.read(max(0, end - start))
    p = 0
    while p + HEADER_LEN <= len(data):
        size = int.from_bytes(data[p + _SIZE_AT:p + _SIZE_END], "little")
        if size < HEADER_LEN or p + size > len(data):
            break
        tc = data[p + _TYPE_AT]
        types[tc] += 1
        nbytes[tc] += size
        p += size
    return [(tc, n, nbytes[tc]) for tc, n in types.items()]


def _path_list(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _table_text(key: bytes) -> str:
    """``db.table`` of a Table_map key (length, db, NUL, length, table) as fast_table_map
    decodes the names."""
    dl = key[0]
    db = key[1:1 + dl].decode("utf-8", "replace")
    table = key[dl + 3:dl + 3 + key[dl + 2]].decode("utf-8", "replace")
    return f"{db}.{table}"
