"""Run the rules over logs: one pass, files in the order given, damage contained per file.

The files are read as one ordered stream (a transaction may continue into the
next relay file), but a format error in one file only ends *that* file: it
becomes a finding (S001-S009) and the check goes on with the next file, whose
events start a fresh stream.  CRC32 footers are verified here rather than by the
reader, so a mismatch is a finding and reading continues after the event.

Clock segments (format-spec §3.2, §6c, §6d, gotcha 8): sequence numbers restart
in every binlog file; in a relay log they restart at source Rotates (a Rotate not
flagged LOG_EVENT_RELAY_LOG_F from another server than the relay log's writer:
:meth:`repltool.binlog.transactions.Segments.see`), not at relay-file boundaries; in a Group
Replication applier relay log they never restart, except at a certifier start,
which writes (1, 2).
"""

from __future__ import annotations

import math
import os
import zlib
from array import array
from collections import deque
from copy import copy
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from ..binlog import EventFlag, EventType, FileInfo, ReadOptions, read_events, type_name
from ..binlog import structs as S
from ..binlog.clock import inconsistent, is_barrier
from ..binlog.corescan import CheckScan, Handover, scan_clock_transactions
from ..binlog.damage import DamageLog
from ..binlog.engine import compiled_core
from ..binlog.reader import events_in, open_log, resume_events
from ..binlog.events import (
    DAMAGED_TYPE, DamagedBody, Event, GtidBody, GtidListBody, PreviousGtidsBody,
)
from ..binlog.split import Span
from ..binlog.transactions import (GROUPING_TYPES, SEGMENT_EVENTS, Segments, Transaction,
                                   group_transactions)
from ..errors import (
    ChecksumMismatch, EncryptedLog, InputError, LogFormatError, NoFormatDescription,
    NotABinlog, ReplToolError, TruncatedLog, UnsupportedLog,
)
from ..paths import Paths, path_list
from .config import CheckConfig
from .model import TOTAL, CheckPart, CheckReport, FileResult, Finding, SpanEdge, Totals
from .rules import FATAL_RULES, RULES, WRITESET_RULES, Severity
from .writesets import (
    SKIP_REASON, LogPairs, PairsEnded, RowWritesetProvider, WritesetProvider, builtin_provider,
)

if TYPE_CHECKING:
    from ..binlog.window import Window

_T = EventType
_KNOWN = frozenset(int(t) for t in EventType)
_FLAGS = S.HEADER.span("flags")
_GTID_TYPES = frozenset({_T.GTID_LOG_EVENT, _T.ANONYMOUS_GTID_LOG_EVENT,
                         _T.GTID_TAGGED_LOG_EVENT})
#: the bodies check reads (START_ENCRYPTION: its S007 names the key version)
CHECK_READ_TYPES = GROUPING_TYPES | {_T.PREVIOUS_GTIDS_LOG_EVENT, _T.GTID_LIST_EVENT,
                                     _T.START_ENCRYPTION_EVENT}
_BUILTIN = object()


def check_files(paths: Paths,
                config: CheckConfig | None = None, *,
                writesets: WritesetProvider | None | object = _BUILTIN,
                reader: Callable[..., Iterator[Event]] | None = None,
                window: Window | None = None,
                damage: DamageLog | None = None) -> CheckReport:
    """Check logs and return every finding.

    :param paths: the files, in order (the last one may be the active log).
    :param config: rules, severities and thresholds (default: all rules).
    :param writesets: the write-set provider for W001/W002; by default the
        log's own row events (:class:`~repltool.check.writesets.RowWritesetProvider`).
        ``None`` skips those rules, visibly.
    :param reader: reads one file's events, like ``read_events(path, options,
        info)`` (the default); for events read elsewhere (``check --spark``
        replays per-file digests).  The caller then checks that the files
        can be opened.
    :param window: report only the findings inside this window
        (:meth:`repltool.binlog.window.Window.select`): those located in one of
        its transactions.  The whole logs are still read and checked (rules need
        what came before: GTIDs already seen, clocks); findings about whole files
        or the whole input (no offset) are left out.
    :param damage: read with ``keep_going``: a damaged region is skipped (the reader
        resynchronises at the next event whose CRC32 verifies), recorded here and
        reported as a finding of its structure rule at its offset, and the check goes
        on in the same file.
    :raises InputError: a file does not exist or cannot be opened (nothing is checked).
    """
    paths = path_list(paths)
    names = [os.fspath(p) for p in paths]
    if reader is None:
        for name in names:
            require_readable(name)
    provider = builtin_provider() if writesets is _BUILTIN else writesets
    checker = _Checker(names, config or CheckConfig(), provider,  # type: ignore[arg-type]
                       reader or read_events, window, damage)
    if not checker.lazy:
        return checker.run()
    try:
        return checker.run()
    except PairsEnded:
        # the fused write-set read stopped where the event-fed provider reads on (it
        # counts a failure): the whole check again, on the general reader
        assert isinstance(provider, RowWritesetProvider)
        return _Checker(names, config or CheckConfig(), provider.fresh(), read_events,
                        window, damage, fused=False).run()


def require_readable(path: str) -> None:
    """:raises InputError: ``path`` is a directory, cannot be opened, or is not a regular
    file (a FIFO is refused at once, not waited on)."""
    from ..outputs import open_regular
    os.close(open_regular(path))


_RULE_OF = ((NotABinlog, "S001"), (NoFormatDescription, "S002"), (ChecksumMismatch, "S003"),
            (TruncatedLog, "S004"), (EncryptedLog, "S007"), (UnsupportedLog, "S008"))


def _rule_of(exc: ReplToolError) -> str:
    """The structure rule a reader error becomes."""
    for cls, code in _RULE_OF:
        if isinstance(exc, cls):
            return code
    return "S009"


class _Span:
    """Work and span of the logical clock, as the replica's scheduler reads it (§6d).

    A transaction waits for every earlier one of its segment whose
    sequence_number <= its last_committed; a barrier (lc = 0, seq = 0, the
    first of a segment, a sequence gap, the one after a (0, 0)) waits for
    everything before, and everything after it waits for it.
    """

    def __init__(self) -> None:
        self.work = self.depth = 0
        # Between barriers sequence numbers go up by one (anything else is a
        # barrier), so the k-th transaction since the last barrier has number
        # first_sn + k, and only the prefix maxima of the depths are needed.  Each
        # is the one before or one more (a depth is at most one more than an earlier
        # depth), so they are kept as bits (bit k: prefix maximum k is one more than
        # k-1) in 64-bit words, with the count of set bits before each word: 0.25
        # bytes per transaction of a barrier-free stretch, not 8.
        self._first_sn = 0
        self._words = array("Q")
        self._ones_before = array("q")
        self._ones = 0                  # set bits so far
        self._n = 0                     # prefix maxima kept
        self._base = 0                  # prefix maximum 0 (the barrier's depth)
        self._prev: int | None = None

    def new_segment(self) -> None:
        self._prev = None

    def _pref(self, i: int) -> int:
        """Prefix maximum ``i`` (0 <= i < _n)."""
        w = i >> 6
        return (self._base + self._ones_before[w]
                + (self._words[w] & ((2 << (i & 63)) - 1)).bit_count())

    def add(self, lc: int, sn: int) -> None:
        self.work += 1
        prev = self._prev
        # ``prev is None or is_barrier(lc, sn, prev)`` (repltool.binlog.clock), inline:
        # twice per transaction, the call cost 7-13% of this method (bench/results/segrule.md);
        # tests/binlog/test_clock_rules.py holds this copy to the rule
        if lc == 0 or sn == 0 or not prev or sn > prev + 1 or sn <= prev:
            depth = self.depth + 1
            del self._words[:]
            del self._ones_before[:]
            self._ones = 0
            self._n = 0
            self._first_sn = sn
            self._base = depth
        else:
            i = min(lc - self._first_sn, self._n - 1)
            depth = (self._pref(i) if i >= 0 else self._base) + 1
        k = self._n
        if k & 63 == 0:
            self._words.append(0)
            self._ones_before.append(self._ones)
        if k and depth > self._base + self._ones:      # the prefix maximum grows by one
            self._words[k >> 6] |= 1 << (k & 63)
            self._ones += 1
        self._n = k + 1
        self.depth = max(self.depth, depth)
        self._prev = sn


@dataclass
class _Note:
    """What the event tap learnt about a GTID event before its transaction is complete."""

    segment: int
    view_change: bool = False


class _File:
    """Per-file state while the check runs."""

    def __init__(self, index: int, path: str) -> None:
        self.index, self.path = index, path
        self.fi: FileInfo | None = None
        self.events = self.transactions = 0
        self.stopped: str | None = None
        self.stopped_at: int | None = None
        self.clocked = self.barriers = self.saturated = 0
        self.span = _Span()
        self.previous: dict[object, int] | None = None   # (uuid, tag) / domain -> last gno
        self.last_gno: dict[object, int] = {}
        self.gtid_kind: str | None = None                 # "anonymous" | "gtid"
        self.mixed = False
        self.nokey: dict[str, tuple[int, int]] = {}       # table -> (count, first offset)
        self.first_gno: dict[object, tuple[int, str, int]] = {}   # key -> (gno, GTID, offset)
        self.first_kind: tuple[str, int] | None = None    # the first GTID's kind, offset

    @property
    def relay(self) -> bool:
        return bool(self.fi and self.fi.relay_log)

    def result(self) -> FileResult:
        fi, fde = self.fi, (self.fi.first_fde if self.fi else None)
        return FileResult(
            file=self.path, size=fi.size if fi else 0, events=self.events,
            transactions=self.transactions,
            server_version=fde.server_version if fde else None,
            relay_log=self.relay, in_use=bool(fi and fi.in_use), stopped=self.stopped,
            stopped_at=self.stopped_at,
            unreadable=self.stopped in FATAL_RULES or (self.stopped is not None
                                                      and self.events == 0))


class _Checker:
    def __init__(self, paths: list[str], cfg: CheckConfig,
                 provider: WritesetProvider | None,
                 reader: Callable[..., Iterator[Event]] = read_events,
                 window: Window | None = None, damage: DamageLog | None = None,
                 fused: bool = True) -> None:
        """``fused``: the compiled core and the lazy write-set read may read (False:
        the general reader, events fed to the provider)."""
        self.paths, self.cfg, self.provider = paths, cfg, provider
        self.reader = reader
        self.damage = damage
        self.window = window if window is not None and window.active else None
        # the window's transactions, per file: starts and ends, in file order
        self.inside: dict[str, tuple[list[int], list[float]]] = {}
        selected = cfg.selected()
        self.skipped: dict[str, str] = {}
        if provider is None:
            self.skipped.update({c: SKIP_REASON for c in selected if c in WRITESET_RULES})
        off = cfg.not_enabled() | set(self.skipped)
        self.active = [c for c in selected if c not in off]
        self.on = frozenset(self.active)
        self.findings: list[Finding] = []
        self.files: dict[str, _File] = {}
        self.notes: dict[object, _Note] = {}
        self.segment = 0
        #: the clock segment rule (a binlog file, a relay log's source Rotate), fed the
        #: FDEs and Rotates; ``segment`` counts the segments it begins (and the streams)
        self.segments = Segments()
        self.cur_segment: int | None = None
        self.prev_sn: int | None = None
        self.gr: bool | None = {"yes": True, "no": False}.get(cfg.gr_applier)
        self.total = _Span()
        self.total_barriers = 0
        self.seen = _Committed()                         # complete GTIDs -> where
        #: the runs of a binlog read from its files may keep every 64th offset only:
        #: the others are read again where a finding names one (:meth:`_reread`)
        self.sparse = reader is read_events and damage is None
        self.rereads = 0                                 # blocks read again (tests)
        self._blocks: dict[tuple[int, int, object], dict[int, int]] = {}
        self._heads: dict[int, FileInfo] = {}            # file index -> after its FDE
        self.reread_size = 1 << 16                       # bytes a re-read reads first
        #: blocks the compiled core read again (None: the general reader re-reads)
        self.core_rereads: int | None = 0 if compiled_core() is not None else None
        self.truncated: list[Transaction] = []
        self.safety: object = None                       # W001's SafetyChecker
        self._cert: tuple[Any, Any, Any] = (None, None, None)  # certify's classes, Reason.KEY
        self.violations: list[object] = []
        self.ws_unknown = 0
        self.last_gtid_pos: object = None
        self.duplicates: list[tuple[object, int, int, int]] | None = None  # check_part: G001s
        self.w001_first: tuple[int, int] | None = None   # check_part: first clock W001 saw
        self.w001_last: int | None = None
        #: check_span: the span's edge state (:class:`_Edge`); the grouper's state at
        #: the span's start
        self.edge: _Edge | None = None
        self.group_state: Any = None
        #: check_span with the compiled core: the span the core and the lazy write-set
        #: read read (:class:`repltool.binlog.split.Span`)
        self.span: Any = None
        plain = bool(fused and reader is read_events and damage is None
                     and len(set(paths)) == len(paths))
        #: the row-decoding provider reads a stream's write sets itself, lazily
        #: (:meth:`RowWritesetProvider.reading`), in both engines: only once a
        #: transaction asks for one (W001/W002 need a MySQL clock), so a stream
        #: without one (MariaDB, MySQL 5.6 and older) has its rows never keyed and
        #: their warnings never given.  Else (--keep-going, --spark parts, a path
        #: named twice, the restart after the lazy read stopped) it is fed the events
        #: of the transactions with a clock as they stream (:func:`_clocked_only`).
        self.lazy = plain and isinstance(provider, RowWritesetProvider)
        ws_events = (provider is not None and getattr(provider, "needs_events", False)
                     and not self.lazy)
        # a provider with feed() folds each transaction's events as they stream (of
        # the transactions with a MySQL clock: the only ones it is asked about)
        feed = getattr(provider, "feed", None) if ws_events else None
        self.tap = _clocked_only(feed) if feed is not None else None
        self.keep_events = ((bool(ws_events) and self.tap is None)
                            or bool(window and window.needs_events))
        self.opts = ReadOptions(verify_checksum=False, types=None if ws_events else CHECK_READ_TYPES,
                                keep_going=damage is not None)
        # the compiled core reads (CheckScan), unless the events themselves are needed
        # (a window's, a provider's without a fused read) or a path repeats
        self.core = (plain and self.window is None and compiled_core() is not None
                     and not ws_events)
        #: transactions the core completed (tests: the core path ran)
        self.core_transactions = 0
        self._pending: deque[tuple[int, int, Event]] = deque()
        self._index = {p: i for i, p in enumerate(paths)}

    # ---- driving ----

    def run(self) -> CheckReport:
        i = 0
        while i < len(self.paths):
            if self.core:
                i = self._core_stream(i)
                continue
            stream = _Stream(self, i)
            transactions = group_transactions(stream.events(), keep_events=self.keep_events,
                                              tap=self.tap,
                                              state=self.group_state if i == 0 else None)
            provider = self._lazy_provider(i)
            try:
                if self.window is None:
                    for trx in transactions:
                        self.transaction(trx)
                else:
                    checked = self._checked(transactions)
                    for trx in self.window.select(checked, self.paths):
                        starts, ends = self.inside.setdefault(trx.start.file, ([], []))
                        starts.append(trx.start.offset)
                        ends.append(math.inf if trx.spans_files else trx.end_offset)
                    for _ in checked:           # (the rest, after the window's end)
                        pass
                self._drain(stream.stopped)
            finally:
                self.provider = provider
            i = stream.next_index
        self.finish()
        if self.window is not None:
            self.findings = [f for f in self.findings if self._in_window(f)]
        return self.report(tuple(f.result() for f in self.files.values()))

    def report(self, files: tuple[FileResult, ...]) -> CheckReport:
        order = {c: n for n, c in enumerate(RULES)}
        file_order = {p: n for n, p in enumerate(self.paths)}
        self.findings.sort(key=lambda f: (file_order.get(f.file, len(file_order)),
                                          f.offset if f.offset is not None else -1,
                                          order[f.rule]))
        return CheckReport(files, tuple(self.findings), tuple(self.active), self.skipped,
                           Totals(self.total.work, self.total_barriers, self.total.depth),
                           configuration=self.cfg.source)

    def _checked(self, transactions: Iterator[Transaction]) -> Iterator[Transaction]:
        for trx in transactions:
            self.transaction(trx)
            yield trx

    def _in_window(self, finding: Finding) -> bool:
        if finding.offset is None:
            return False
        starts, ends = self.inside.get(finding.file, ((), ()))
        i = bisect_right(starts, finding.offset) - 1     # type: ignore[arg-type]
        return i >= 0 and finding.offset < ends[i]

    def emit(self, code: str, file: str, offset: int | None, message: str,
             event_type: str | None = None, severity: Severity | None = None) -> None:
        """``severity``: this finding's own level, unless --severity/the configuration
        sets the rule's."""
        if code in self.on:
            level = self.cfg.severity.get(code, severity) or self.cfg.severity_of(code)
            self.findings.append(Finding(code, level, file, offset, message, event_type))

    def begin_file(self, index: int, path: str) -> _File:
        f = self.files[path] = _File(index, path)
        return f

    def format_error(self, f: _File, exc: ReplToolError) -> None:
        code = _rule_of(exc)
        f.stopped = code
        f.stopped_at = exc.pos.offset if exc.pos is not None else None
        self.emit(code, f.path, f.stopped_at, exc.reason, exc.event_type)

    # ---- the compiled core's read (CheckScan) ----

    def _core_stream(self, first: int) -> int:
        """One stream (see :class:`_Stream`) from file ``first`` on, read by the core up
        to where it hands over, then by the general reader; the index of the file the
        next stream starts at."""
        self.segment += 1
        paths = self.paths[first:]
        provider = self._lazy_provider(first)
        pending = self._pending
        pending.clear()
        index = self._index

        def watch(events: Iterable[Event]) -> tuple[()]:
            for ev in events:
                pending.append((index[ev.pos.file], ev.pos.offset, ev))
            return ()

        scan = CheckScan(paths, watch, self.span)
        self._infos = scan.scan.infos       # (every file the core opened)
        try:
            for batch in scan:
                for trx in batch:
                    at = (index[trx.start.file], trx.start.offset)
                    while pending and pending[0][:2] < at:
                        self._core_event(first, *pending.popleft())
                    f = self._file_upto(at[0])
                    if trx.gtid is not None:
                        self.notes[trx.start] = _Note(self.segment)
                    self.transaction(trx)   # type: ignore[arg-type]
            self.core_transactions += scan.transactions
            rest = scan.rest
            stop = (index[rest.paths[rest.index]], rest.offset) if rest is not None else None
            while pending and (stop is None or pending[0][:2] < stop):
                self._core_event(first, *pending.popleft())
            pending.clear()                 # the general reader reads them again
            last = first + (rest.index if rest is not None else len(paths) - 1)
            for i in range(first, last + 1):
                f = self._file_upto(i)
                if f.fi is None and i - first < len(self._infos):
                    f.fi = self._infos[i - first]
                types, _ = scan.counts.get(self.paths[i], (None, None))
                f.events = sum(types.values()) if types else 0
            if rest is None:
                stopped = False
                nxt = len(self.paths)
            else:
                if self.span is not None and rest.offset < self.span.start:
                    raise _BeforeSpan(rest.reason)
                general = _Stream(self, first + rest.index, rest)
                for trx in group_transactions(general.events(), state=rest.state()):
                    self.transaction(trx)
                stopped, nxt = general.stopped, general.next_index
            self._drain(stopped)
            return nxt
        finally:
            self.provider = provider

    def _lazy_provider(self, first: int) -> WritesetProvider | None:
        """The provider as it was: for the stream from file ``first`` on, a lazy read
        of its write sets takes its place (see :attr:`lazy`; the caller puts it
        back)."""
        provider = self.provider
        if self.lazy and isinstance(provider, RowWritesetProvider):
            paths = self.paths[first:]
            self.provider = (provider.reading(paths) if self.span is None
                             else provider.reading(paths, self.span))
        return provider

    def _drain(self, stopped: bool) -> None:
        """The stream ended (``stopped``: at an error of the log): if a write set was
        asked for, those of the rest of the stream are read too (the same write sets
        and warnings as the event-fed provider's)."""
        if isinstance(self.provider, LogPairs):
            self.provider.drain(stopped)

    def _file_upto(self, i: int) -> _File:
        """File ``i``'s state (the files up to it begun, in order)."""
        path = self.paths[i]
        f = self.files.get(path)
        if f is None:
            for j in range(len(self.files), i + 1):
                f = self.begin_file(j, self.paths[j])
        assert f is not None
        return f

    def _core_event(self, first: int, i: int, offset: int, ev: Event) -> None:
        """An event the core handed to the driver (FDE, Rotate, Previous_gtids,
        GTID_LIST), at its place before the transactions after it."""
        f = self._file_upto(i)
        if f.fi is None:
            f.fi = self._infos[i - first]
        self._facts(f, ev, ev.type_code, True)

    # ---- events (the tap runs slightly ahead of the transactions) ----

    def event(self, f: _File, ev: Event) -> None:
        tc = ev.type_code
        if tc == DAMAGED_TYPE:          # --keep-going: a skipped region, not an event
            self._damaged(f, ev)
            return
        f.events += 1
        outer = ev.pos.payload_offset is None
        if outer and ev.crc is not None and "S003" in self.on:
            self._crc(f, ev)
        if tc not in _KNOWN:
            code = "S010" if ev.flags & EventFlag.IGNORABLE else "S006"
            self.emit(code, f.path, ev.pos.offset, f"unknown event type {tc}"
                      + (" (ignorable)" if code == "S010" else
                         ": a server's applier stops here"), type_name(tc))
        else:
            self._facts(f, ev, tc, outer)

    def _facts(self, f: _File, ev: Event, tc: int, outer: bool) -> None:
        """What a known event tells the rules beyond its transaction: clock segments,
        GTID notes, the file's Previous_gtids / GTID_LIST."""
        if tc in _GTID_TYPES or tc == _T.MARIADB_GTID_EVENT:
            self.notes[ev.pos] = _Note(self.segment)
            self.last_gtid_pos = ev.pos
        elif tc == _T.VIEW_CHANGE_EVENT:
            note = self.notes.get(self.last_gtid_pos)
            if note is not None:
                note.view_change = True
        elif tc in SEGMENT_EVENTS and self.segments.see(ev):
            self.segment += 1            # a binlog file, a source Rotate: the clock restarts
        elif tc == _T.PREVIOUS_GTIDS_LOG_EVENT and f.previous is None and outer:
            if isinstance(ev.body, PreviousGtidsBody):
                f.previous = {(sid, tag): iv[-1].end for sid, tag, iv in ev.body.gtid_set.sids
                              if iv}
        elif tc == _T.GTID_LIST_EVENT and f.previous is None and isinstance(ev.body,
                                                                            GtidListBody):
            prev: dict[object, int] = {}
            for domain, _server, seq in ev.body.gtids:
                prev[domain] = max(seq, prev.get(domain, 0))
            f.previous = prev

    def _damaged(self, f: _File, ev: Event) -> None:
        """A region the keep-going reader skipped: its structure rule's finding."""
        body = ev.body
        if not isinstance(body, DamagedBody):
            return
        from .. import errors
        cls = getattr(errors, body.error, None)
        code = "S009"
        for kind, rule in _RULE_OF:
            if isinstance(cls, type) and issubclass(cls, kind):
                code = rule
                break
        reason = body.reason
        for head in (f"{f.path}:{ev.pos.offset}: ", f"{f.path}:{ev.pos.offset} "):
            if reason.startswith(head):
                reason = reason[len(head):]
                break
        self.emit(code, f.path, ev.pos.offset,
                  f"damaged region, {body.skipped} bytes skipped (--keep-going): {reason}")

    def _crc(self, f: _File, ev: Event) -> None:
        raw = ev.raw
        body = raw[:-4]
        computed = zlib.crc32(body)
        if computed == ev.crc:
            return
        if ev.type_code == _T.FORMAT_DESCRIPTION_EVENT:
            flags = int.from_bytes(raw[_FLAGS], "little") & ~EventFlag.BINLOG_IN_USE
            computed = zlib.crc32(raw[:17] + flags.to_bytes(2, "little") + raw[19:-4])
            if computed == ev.crc:
                return
        self.emit("S003", f.path, ev.pos.offset,
                  f"CRC32 mismatch: stored 0x{ev.crc:08x}, computed 0x{computed:08x}",
                  ev.type_name)

    # ---- transactions ----

    def transaction(self, trx: Transaction) -> None:
        f = self.files[trx.start.file]
        f.transactions += 1
        note = self.notes.pop(trx.start, None)
        where = trx.start.offset
        limit = self.cfg.max_trx_size
        if limit is not None and trx.size > limit:
            self.emit("T003", f.path, where, f"transaction {trx.gtid or ''} is {trx.size} "
                      f"bytes, more than --max-trx-size {limit}".replace("  ", " "))
        if trx.spans_files:
            level = None
            if f.relay and trx.maria_flags is not None:
                # A MariaDB replica's IO thread rotates its relay log at max_relay_log_size
                # between any two events (a live MariaDB 10.11 replica split 9 of 29 relay
                # files so: ../shared/corpus/mariadb/relay); its SQL thread continues the
                # transaction in the next file.  Not MySQL's WL#8440 hazard.
                what = ("a MariaDB relay log rotated (max_relay_log_size or FLUSH RELAY "
                        "LOGS) inside a transaction; MariaDB's applier continues it in the "
                        "next file")
                level = Severity.INFO
            elif f.relay:
                what = "FLUSH RELAY LOGS inside a transaction (WL#8440)"
            else:
                what = "a binlog transaction never continues into the next file"
            self.emit("R001", f.path, where,
                      f"transaction {trx.gtid or ''} starts here and ends in "
                      f"{trx.end.file}:{trx.end.offset}: {what}".replace("  ", " "),
                      severity=level)
        if trx.truncated:
            self.truncated.append(trx)      # discarded by the applier: no GTID, no write set
        self._gtid(f, trx)
        if trx.last_committed is not None and trx.sequence_number is not None:
            self._clock(f, trx, note)

    def _gtid(self, f: _File, trx: Transaction) -> None:
        gtid = trx.gtid
        if gtid is None:
            return
        where = trx.start.offset
        if trx.maria_flags is None:                      # MySQL
            kind = "anonymous" if gtid == "ANONYMOUS" else "gtid"
            if f.gtid_kind is None:
                f.gtid_kind = kind
                f.first_kind = (kind, where)
            elif kind != f.gtid_kind and not f.mixed:
                f.mixed = True
                self.emit("G004", f.path, where, f"{kind} GTID after {f.gtid_kind} ones in the "
                          "same file (GTID_MODE was changing)")
            if kind == "anonymous":
                return
            head, _, gno_text = gtid.rpartition(":")
            sid, _, tag = head.partition(":")
            key: object = (sid, tag or None)
            gno = int(gno_text)
        else:                                            # MariaDB domain-server-seq
            domain, _, rest = gtid.partition("-")
            key, gno = int(domain), int(rest.rpartition("-")[2])
        seen_key, seen_no = _seen_key(trx)  # type: ignore[misc]
        near = self.seen.near(seen_key, seen_no)
        if trx.truncated:
            pass                            # not committed: re-delivery is not a duplicate
        elif near is not None:
            if "G001" in self.on:
                self.duplicate(f.path, where, gtid, self._where(seen_key, seen_no, near))
            if self.duplicates is not None:
                self.duplicates.append((seen_key, seen_no, f.index, where))
        else:
            # (a relay log's or a file's after a second Format_description: exact)
            fi = f.fi
            self.seen.add(seen_key, seen_no, f.index, where,
                          self.sparse and fi is not None and not fi.relay_log
                          and fi.fde_count == 1)
        self._gno(f, key, gno, gtid, where)

    def _where(self, key: object, no: int, near: tuple[int, int, int, int, int | None]
               ) -> tuple[int, int]:
        """(file index, offset) of committed GTID ``no`` of ``key`` from
        :meth:`_Committed.near`'s answer: read again from the offset kept before it in
        a sparse run."""
        file, offset, at, count, end = near
        if at == no:
            return file, offset
        block = self._blocks.get((file, offset, key))
        if block is None:
            block = self._reread(file, offset, end, key, at, count)
            if len(self._blocks) >= 8:
                del self._blocks[next(iter(self._blocks))]
            self._blocks[(file, offset, key)] = block
        return file, block[no]

    def _reread(self, file: int, offset: int, stop: int | None, key: object, first: int,
                count: int) -> dict[int, int]:
        """Numbers ``first .. first+count-1`` of ``key``, committed in file ``file`` in
        that order from ``offset`` on, before ``stop`` (a transaction's start, or None:
        the file's end) (a sparse run): number -> offset of each, read again by the
        compiled core (the file's Format_description, then ``offset`` to ``stop``) or
        by the general reader (from ``offset``: 64 KiB, more while a number is not found
        and the file goes on).

        Each is the first complete transaction with its GTID from ``offset`` on: the
        one the run recorded (an earlier complete one would have been recorded); the
        file's last transaction counts as complete (it may end in the next file)."""
        self.rereads += 1
        path = self.paths[file]
        end = first + count
        found: dict[int, int] = {}
        last: dict[int, int] = {}
        if self.core_rereads is not None:
            scanned = scan_clock_transactions(path, self.opts, span=Span(offset, stop))
            if scanned is not None:
                self.core_rereads += 1
                try:
                    for trx in scanned:
                        k = _seen_key(trx)   # type: ignore[arg-type]
                        if (k is None or k[0] != key or not first <= k[1] < end
                                or k[1] in found):
                            continue
                        if trx.truncated:
                            last[k[1]] = trx.start.offset
                            continue
                        found[k[1]] = trx.start.offset
                        if len(found) == count:
                            break
                except (LogFormatError, UnsupportedLog):
                    pass                    # (the check found it: its run ended before)
                finally:
                    scanned.close()     # type: ignore[attr-defined]
                for no, at in last.items():
                    found.setdefault(no, at)
                return found
        fi = self._heads.get(file)
        if fi is None:
            info: list[FileInfo] = []
            head = read_events(path, self.opts, info)
            try:
                for _ in head:
                    if info and info[0].fde is not None:
                        break
            finally:
                head.close()
            fi = self._heads[file] = info[0]
        size = self.reread_size
        fh, _ = open_log(path)
        with fh:
            while True:
                fh.seek(offset)
                data = fh.read(size)
                whole = len(data) < size            # to the file's end
                groups: list[Transaction] = []
                try:
                    groups.extend(group_transactions(events_in(copy(fi), data, offset,
                                                               self.opts)))
                except (LogFormatError, UnsupportedLog):
                    pass                    # (at the file's end: the check found it)
                if not whole and groups:
                    groups.pop()            # may go on past the bytes read
                found.clear()
                last.clear()
                for trx in groups:
                    k = _seen_key(trx)
                    if (k is None or k[0] != key or not first <= k[1] < end
                            or k[1] in found):
                        continue
                    if trx.truncated:
                        last[k[1]] = trx.start.offset
                    else:
                        found[k[1]] = trx.start.offset
                if len(found) == count or whole:
                    break
                size <<= 2
        for no, at in last.items():
            found.setdefault(no, at)
        return found

    def duplicate(self, path: str, where: int, gtid: str, earlier: tuple[int, int]) -> None:
        self.emit("G001", path, where, f"GTID {gtid} was already committed at "
                  f"{self.paths[earlier[0]]}:{earlier[1]}")

    def _gno(self, f: _File, key: object, gno: int, gtid: str, where: int) -> None:
        last = f.last_gno.get(key)
        f.last_gno[key] = gno if last is None else max(last, gno)
        if last is None:
            f.first_gno[key] = (gno, gtid, where)
            end = f.previous.get(_previous_key(key)) if f.previous and not f.relay else None
            if end is not None and gno != end + 1:
                self.emit("G002", f.path, where,
                          f"first GTID {gtid} of this file does not follow the Previous_gtids "
                          f"(GTID_LIST) end {end}: expected number {end + 1}")
        elif gno != last + 1 and gno != last:     # equal: a re-delivered truncated group
            self.emit("G003", f.path, where,
                      f"GTID {gtid} follows number {last} of the same "
                      f"{'domain' if isinstance(key, int) else 'uuid'}")

    def _clock(self, f: _File, trx: Transaction, note: _Note | None) -> None:
        lc, sn = trx.last_committed, trx.sequence_number
        assert lc is not None and sn is not None
        where, name = trx.start.offset, trx.gtid or "transaction"
        segment = note.segment if note is not None else self.segment
        if f.relay and self.gr is None:
            self.gr = (lc, sn) == (1, 2)
        gr = bool(self.gr and f.relay)
        if segment != self.cur_segment or (gr and (lc, sn) == (1, 2)):
            self.cur_segment, self.prev_sn = segment, None   # certifier (re)start: (1, 2)
            self.total.new_segment()
            f.span.new_segment()
        f.clocked += 1
        if trx.delta16_saturated:
            f.saturated += 1
        if lc < 0 or sn < 0:
            self.emit("C005", f.path, where, f"{name}: last_committed={lc}, sequence_number={sn}")
            return
        if lc == 0:
            f.barriers += 1
            self.total_barriers += 1
        f.span.add(lc, sn)
        if self.edge is not None:
            self.edge.clocks.append(lc)
            self.edge.clocks.append(sn)
        self.total.add(lc, sn)
        if (lc, sn) == (0, 0):
            if not (note and note.view_change):
                self.emit("C006", f.path, where, f"{name} has last_committed=0, "
                          "sequence_number=0 but is not a Group Replication view change")
            return
        if inconsistent(lc, sn):
            self.emit("C004", f.path, where,
                      f"{name}: last_committed={lc} >= sequence_number={sn}")
        prev = self.prev_sn
        if prev is None and self.edge is not None and self.edge.later:
            self.edge.first_clock = (sn, name, where)   # the join decides (C001/C002)
        else:
            self.sequence(f, name, where, sn, prev)
        self.prev_sn = sn
        if self.provider is not None and not trx.truncated:
            self._writeset(f, trx, lc, sn)

    def sequence(self, f: _File, name: str, where: int, sn: int, prev: int | None) -> None:
        """C001/C002/C003: ``sn`` after the segment's previous sequence_number."""
        if prev is None:
            if not f.relay and sn != 1:
                self.emit("C002", f.path, where, f"first transaction {name} of the file has "
                          f"sequence_number={sn}, expected 1")
        elif sn <= prev:
            self.emit("C001", f.path, where,
                      f"{name}: sequence_number={sn} <= previous sequence_number={prev}")
        elif sn != prev + 1:
            code = "C003" if f.relay else "C002"
            self.emit(code, f.path, where, f"{name}: sequence_number={sn} after {prev} "
                      f"({sn - prev - 1} missing)")

    def _writeset(self, f: _File, trx: Transaction, lc: int, sn: int) -> None:
        assert self.provider is not None
        ws = self.provider(trx)
        if ws is None:
            self.ws_unknown += 1
            hashes: tuple[int, ...] = ()
        else:
            hashes = ws.hashes
            for table in ws.missing_key_tables:
                n, first = f.nokey.get(table, (0, trx.start.offset))
                f.nokey[table] = (n + 1, first)
        if "W001" not in self.on:
            return
        if self.safety is None:
            from ..certify import CertResult, CertTransaction, Reason, SafetyChecker
            self.safety = SafetyChecker()
            self._cert = (CertTransaction, CertResult, Reason.KEY)   # (imported once)
            self.w001_first = (lc, sn)
        self.w001_last = sn
        cert_transaction, cert_result, key = self._cert
        gtid = trx.gtid if trx.gtid and trx.gtid != "ANONYMOUS" else None
        ct = cert_transaction(gtid=gtid, pos=trx.start, file=f.path, recorded=(lc, sn),
                              writeset=hashes)
        if self.edge is not None:
            self.edge.writer(gtid, trx.start, lc, sn, hashes)
        # streamed: only the violations are kept, and the checker's last writer per key
        self.violations += self.safety.add(  # type: ignore[attr-defined]
            cert_result(trx=ct, computed=(lc, sn), reason=key))

    # ---- the end ----

    def finish(self) -> None:
        last = len(self.paths) - 1
        for f in self.files.values():
            fi = f.fi
            if fi is not None and fi.in_use and f.index < last:
                self.in_use(f.path)
            self.file_rules(f)
        for trx in self.truncated:
            k = _seen_key(trx)
            near = self.seen.near(*k) if k is not None else None
            again = self._where(*k, near) if near is not None else None  # type: ignore[misc]
            tail = (f"; re-delivered complete at {self.paths[again[0]]}:{again[1]}"
                    if again else "")
            self.emit("R002", trx.start.file, trx.start.offset,
                      f"transaction {trx.gtid or ''} has no end event (XID/COMMIT) before the "
                      f"next GTID or the end of the input{tail}".replace("  ", " "))
        self._totals()
        if self.provider is not None and "W001" in self.on:
            self._safety()
        unknown = getattr(self.provider, "unknown_key_tables", None)
        if self.ws_unknown and self.provider is not None:
            tables = f" (tables: {', '.join(list(unknown)[:10])})" if unknown else ""
            self.emit("W003", TOTAL, None,
                      f"{self.ws_unknown} transactions have no known write set{tables}: "
                      "W001 could not check them; give --schema, or log with "
                      "binlog_row_metadata=FULL")

    def file_rules(self, f: _File) -> None:
        """The rules about one whole file: C007, C008, W002."""
        if f.saturated:
            self.emit("C007", f.path, None, f"{f.saturated} of {f.clocked} transactions "
                      "have a saturated delta16 clock (65535 or more apart)")
        if f.clocked:
            share = f.barriers / f.clocked
            par = f.span.work / f.span.depth if f.span.depth else 0.0
            self.emit("C008", f.path, None,
                      f"barrier share {f.barriers}/{f.clocked} = {share:.1%} "
                      f"(last_committed = 0); parallelism {par:.2f} (work/span)")
        for table, (n, first) in sorted(f.nokey.items()):
            self.emit("W002", f.path, first, f"table {table} has no usable key "
                      f"({n} transactions): writeset tracking cannot see its conflicts")

    def in_use(self, path: str) -> None:
        self.emit("S005", path, 4, "the in-use flag is set but later files follow: the "
                  "server crashed while writing this file", "FORMAT_DESCRIPTION_EVENT")

    def _totals(self) -> None:
        work, span = self.total.work, self.total.depth
        for code, value, text in (
                ("T001", work / span if span else None, "parallelism (work/span)"),
                ("T002", self.total_barriers / work if work else None, "barrier share")):
            if code not in self.on:
                continue
            limit = self.cfg.threshold(code)
            if value is None:
                self.skipped[code] = "no transaction carries a MySQL logical clock"
                self.active.remove(code)
                continue
            bad = value < limit if code == "T001" else value > limit  # type: ignore[operator]
            if bad:
                rel = "<" if code == "T001" else ">"
                self.emit(code, TOTAL, None,
                          f"{text} {value:.3f} {rel} limit {limit} over {len(self.paths)} "
                          f"file(s): {work} transactions, {self.total_barriers} with "
                          f"last_committed=0, longest chain {span}")

    def _safety(self) -> None:
        for v in self.violations:
            pos = v.later.trx.pos  # type: ignore[attr-defined]
            assert pos is not None
            self.emit("W001", pos.file, pos.offset, f"{v}: the replica may run them in "
                      "parallel")


def _seen_key(trx: Transaction) -> tuple[object, int] | None:
    """(GTID source, number) of a transaction's GTID for :class:`_Committed`: MySQL
    (uuid, tag) and gno, MariaDB (domain, server_id) and seq_no; None if it has none."""
    gtid = trx.gtid
    if not gtid or gtid == "ANONYMOUS":
        return None
    if trx.maria_flags is None:
        head, _, gno_text = gtid.rpartition(":")
        return head, int(gno_text)
    head, _, seq = gtid.rpartition("-")
    return ("maria", head), int(seq)


class _Offsets:
    """A run's file offsets in read order, ~2 bytes each: the differences as zigzag
    LEB128 varints, with the offset itself every 64th (random access decodes at
    most 63 varints; only a duplicate or a truncated transaction looks one up).

    ``sparse``: only every 64th offset is kept (8 bytes per 64 transactions); the
    others are found again by reading the file from the one kept before them
    (:meth:`_Checker._reread`): :meth:`near` says which."""

    __slots__ = ("_data", "_marks", "_at", "_n", "_last", "sparse")

    def __init__(self, offsets: Iterable[int] = (), sparse: bool = False) -> None:
        self._data = bytearray()
        self._marks = array("q")        # every 64th offset
        self._at = array("q")           # where the varints after it begin in _data
        self._n = 0
        self._last = 0
        self.sparse = sparse
        for offset in offsets:
            self.append(offset)

    def append(self, offset: int) -> None:
        if self._n & 63 == 0:
            self._marks.append(offset)
            self._at.append(len(self._data))
        elif not self.sparse:
            d = offset - self._last
            z = d << 1 if d >= 0 else ((-d) << 1) - 1
            data = self._data
            while z >= 0x80:
                data.append((z & 0x7F) | 0x80)
                z >>= 7
            data.append(z)
        self._last = offset
        self._n += 1

    def __len__(self) -> int:
        return self._n

    def near(self, k: int) -> tuple[int, int, int | None]:
        """(offset, 0, None) of the ``k``-th; when sparse and it is not kept, (offset of
        the one kept before it, how many transactions of the run lie between: 1-63,
        offset of the one kept after it or None)."""
        if self.sparse and k & 63:
            if not 0 <= k < self._n:
                raise IndexError(k)
            c = k >> 6
            marks = self._marks
            return marks[c], k & 63, marks[c + 1] if c + 1 < len(marks) else None
        return self[k], 0, None

    def __getitem__(self, k: int) -> int:
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError(k)
        c = k >> 6
        if self.sparse and k & 63:
            raise LookupError(f"offset {k} of a sparse run is not kept")
        for value in self._block(c, (k & 63) + 1):
            pass
        return value

    def _block(self, c: int, n: int) -> Iterator[int]:
        """The first ``n`` offsets of block ``c`` (64 a block), each varint decoded once."""
        data, value, p = self._data, self._marks[c], self._at[c]
        yield value
        for _ in range(n - 1):
            z = shift = 0
            while True:
                b = data[p]
                p += 1
                z |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    break
            value += -((z + 1) >> 1) if z & 1 else z >> 1
            yield value

    def __iter__(self) -> Iterator[int]:
        """In order, each varint decoded once (indexing each would decode up to 63)."""
        for c in range(len(self._marks)):
            yield from self._block(c, min(64, self._n - (c << 6)))


class _Committed:
    """The GTIDs committed so far and where, for G001 and R002, in ~8 bytes per GTID.

    Per GTID source, runs of consecutive numbers in one file: the run's first
    number and the transactions' offsets (:class:`_Offsets`, ~2 bytes each, or
    every 64th only in a sparse run).  A source's numbers normally follow each
    other, so a log costs one run per source and file (a dict of GTID texts cost
    ~870 bytes per transaction).
    """

    def __init__(self) -> None:
        self._starts: dict[object, list[int]] = {}     # source -> sorted run starts
        self._runs: dict[object, list[tuple[int, _Offsets]]] = {}   # parallel: (file, offsets)
        self._tail: dict[object, tuple[int, int, _Offsets]] = {}    # source -> last run

    def add(self, key: object, no: int, file: int, offset: int, sparse: bool = False) -> None:
        """``sparse``: the run may keep only every 64th offset (a new run starts where
        that changes)."""
        tail = self._tail.get(key)
        if (tail is not None and tail[1] == file and no == tail[0] + len(tail[2])
                and tail[2].sparse == sparse):
            tail[2].append(offset)
            return
        offsets = _Offsets((offset,), sparse)
        starts = self._starts.setdefault(key, [])
        runs = self._runs.setdefault(key, [])
        i = bisect_right(starts, no)
        starts.insert(i, no)
        runs.insert(i, (file, offsets))
        self._tail[key] = (no, file, offsets)

    def get(self, key: object, no: int) -> tuple[int, int] | None:
        """(file index, offset) of the committed GTID, or None (not for a sparse run's
        number: see :meth:`near`)."""
        found = self.near(key, no)
        if found is None:
            return None
        assert not found[3]
        return found[0], found[1]

    def near(self, key: object, no: int) -> tuple[int, int, int, int, int | None] | None:
        """(file index, offset, number there, run's numbers from there, end) of the
        committed GTID ``no`` (number there = ``no``), or in a sparse run where its
        offset is not kept, of the one kept before it (then the numbers of the run from
        that one: at most 64, all before ``end``, the offset of the next one kept, or
        None); None if ``no`` is not committed."""
        starts = self._starts.get(key)
        if not starts:
            return None
        # runs never overlap: a number is added only when no run holds it
        i = bisect_right(starts, no) - 1
        if i < 0:
            return None
        file, offsets = self._runs[key][i]
        k = no - starts[i]
        if k >= len(offsets):
            return None
        offset, back, end = offsets.near(k)
        if not back:
            return file, offset, no, 0, None
        return file, offset, no - back, min(64, len(offsets) - (k - back)), end

    def runs(self) -> Iterator[tuple[object, int, int, array]]:
        """Every run: (source, first number, file index, offsets), by source then number."""
        for key, starts in self._starts.items():
            for start, (file, offsets) in zip(starts, self._runs[key]):
                yield key, start, file, array("q", offsets)

    def overlapping(self, key: object, first: int, count: int
                    ) -> Iterator[tuple[int, int, int]]:
        """(number, file index, offset) of the committed numbers in ``first .. first+count-1``."""
        starts = self._starts.get(key)
        if not starts:
            return
        end = first + count
        i = max(bisect_right(starts, first) - 1, 0)
        runs = self._runs[key]
        while i < len(starts) and starts[i] < end:
            file, offsets = runs[i]
            lo, hi = max(first, starts[i]), min(end, starts[i] + len(offsets))
            for no in range(lo, hi):
                yield no, file, offsets[no - starts[i]]
            i += 1

    def add_run(self, key: object, first: int, file: int, offsets: array) -> None:
        """Add numbers ``first ..`` at ``offsets``: none of them may be committed yet."""
        starts = self._starts.setdefault(key, [])
        runs = self._runs.setdefault(key, [])
        i = bisect_right(starts, first)
        starts.insert(i, first)
        packed = _Offsets(offsets)
        runs.insert(i, (file, packed))
        self._tail[key] = (first, file, packed)


def _previous_key(key: object) -> object:
    """Previous_gtids keys are (UUID, tag); the GTID text gives (str, tag)."""
    if isinstance(key, tuple):
        from uuid import UUID
        return (UUID(key[0]), key[1])
    return key


def _clocked_only(feed: Callable[[Event, bool], None]) -> Callable[[Event, bool], None]:
    """A grouper's tap that passes ``feed`` the events of the transactions whose first
    event is a MySQL Gtid event with a clock, and no others: W001/W002 ask for the
    write sets of those only (:meth:`_Checker._clock`), so the rows of a log without
    clocks (MariaDB, MySQL 5.6 and older) are not keyed nor warned about, as with the
    lazy read."""
    on = False

    def tap(ev: Event, opens: bool) -> None:
        nonlocal on
        if opens:
            body = ev.body
            on = isinstance(body, GtidBody) and body.lt_type is not None
        if on:
            feed(ev, opens)
    return tap


class _BeforeSpan(Exception):
    """check_span: the compiled core handed over before the span's start (a log older
    than its subset): the span is read by the general reader instead."""


class _Stream:
    """Events of consecutive files until one of them fails (then the stream ends);
    with ``rest``, the general reader's events from where the compiled core handed
    over (:class:`Handover`: file ``start`` is read from its offset on)."""

    def __init__(self, checker: _Checker, start: int, rest: Handover | None = None) -> None:
        self.ck, self.start, self.rest = checker, start, rest
        self.next_index = len(checker.paths)
        self.stopped = False            # a format error ended the stream

    def events(self) -> Iterator[Event]:
        ck, rest = self.ck, self.rest
        if rest is None:
            ck.segment += 1
        for index in range(self.start, len(ck.paths)):
            path = ck.paths[index]
            info: list[FileInfo] = []
            resumed = rest is not None and index == self.start
            if rest is None:
                f = ck.begin_file(index, path)
            else:
                f = ck._file_upto(index)    # the core may have begun it
                if resumed:
                    info.append(rest.info)
                    if f.fi is not None:
                        f.fi = rest.info    # the general reader goes on updating it
            try:
                if resumed:
                    assert rest is not None
                    events = resume_events(rest.info, rest.offset, ck.opts)
                    if ck.span is not None:
                        from ..binlog.split import within
                        events = within(events, path, ck.span.end)
                else:
                    events = ck.reader(path, ck.opts, info)
                    if ck.damage is not None:
                        events = ck.damage.count(events)
                for ev in events:
                    if f.fi is None:
                        f.fi = info[0]
                    ck.event(f, ev)
                    yield ev
            except InputError:
                raise
            except (LogFormatError, UnsupportedLog) as exc:
                f.fi = f.fi or (info[0] if info else None)
                ck.format_error(f, exc)
                self.next_index = index + 1
                self.stopped = True
                return
            f.fi = f.fi or (info[0] if info else None)


# ---- parts (check --spark): each part checked where it is read, merged in input order ----

def check_part(paths: Paths, config: CheckConfig | None = None, *,
               writesets: WritesetProvider | None | object = _BUILTIN) -> CheckPart:
    """:func:`check_files` on consecutive files, with what :func:`merge_parts` needs;
    read as :func:`check_files` reads (the compiled core, the lazy write-set read).

    :raises InputError: as :func:`check_files`.
    """
    names = [os.fspath(p) for p in path_list(paths)]
    for name in names:
        require_readable(name)
    provider = builtin_provider() if writesets is _BUILTIN else writesets
    cfg = config or CheckConfig()
    # the single process's read: the compiled core (CheckScan) and, for the row-decoding
    # provider, the lazy fused write-set read; where that read stops, the whole part
    # again on the general reader with the event-fed provider (as check_files)
    ck = _Checker(names, cfg, provider, read_events)  # type: ignore[arg-type]
    try:
        return _run_part(ck, names, provider)
    except PairsEnded:
        assert isinstance(provider, RowWritesetProvider)
        provider = provider.fresh()
        return _run_part(_Checker(names, cfg, provider, read_events, fused=False),
                         names, provider)


#: parts (check_part / check_span) the compiled core read, and their transactions it read
_CORE_PARTS = [0, 0]


def part_core_counts() -> tuple[int, int]:
    """``(parts, transactions)``: the :func:`check_part` / :func:`check_span` runs of this
    process whose check the compiled core read (:class:`CheckScan`), and the
    transactions it completed in them (tests assert the executors' fast path ran)."""
    return _CORE_PARTS[0], _CORE_PARTS[1]


def _run_part(ck: _Checker, names: list[str], provider: Any) -> CheckPart:
    """Run a part's check (``ck``); its :class:`CheckPart` (with :attr:`CheckPart.edge`
    when ``ck`` checks a span)."""
    import zlib as _zlib
    from dataclasses import replace
    ck.duplicates = []
    ck.sparse = False                   # (the runs are sent with every offset)
    last: list[Transaction] = []
    count = ck.transaction

    def transaction(trx: Transaction) -> None:
        if last:
            last[0] = trx
        else:
            last.append(trx)
        count(trx)
    ck.transaction = transaction  # type: ignore[method-assign]
    report = ck.run()
    if ck.core_transactions:
        _CORE_PARTS[0] += 1
        _CORE_PARTS[1] += ck.core_transactions
    stopped = [i for i, f in enumerate(report.files) if f.stopped is not None]
    trx = last[0] if last else None
    open_end = bool(trx is not None and trx.truncated and report.files
                    and report.files[-1].stopped is None
                    and names.index(trx.start.file) > (stopped[-1] if stopped else -1))
    committed = []
    for key, start, file, offsets in ck.seen.runs():
        deltas = array("q", [offsets[0]]) + array(
            "q", (b - a for a, b in zip(offsets, offsets[1:])))
        committed.append((key, start, file, _zlib.compress(deltas.tobytes(), 1)))
    unknown = getattr(provider, "unknown_key_tables", None) or ()
    return CheckPart(report, tuple(committed), tuple(ck.duplicates),
                     tuple(replace(t, events=()) if isinstance(t, Transaction) else t
                           for t in ck.truncated), ck.ws_unknown,
                     tuple(unknown), (ck.w001_first, ck.w001_last), open_end,
                     ck.edge.done(ck, report) if ck.edge is not None else None)


#: W001 across spans: the most transactions of a span's head kept (a longer head, whose
#: last_committed still reaches before the span, makes the file be checked whole), and
#: how far below its last sequence_number a span's last writers are handed on
EDGE_HEAD = 8192
EDGE_TAIL = 8192


class _Edge:
    """A span's check state for :class:`~repltool.check.model.SpanEdge`, gathered as it runs."""

    def __init__(self, later: bool) -> None:
        self.later = later                  # not the file's first span
        self.clocks = array("q")
        self.first_clock: tuple[int, str, int] | None = None
        self.head: list[tuple[Any, ...]] = []
        self.head_end = 0
        self.collecting = later
        self.first_sn: int | None = None
        self.prev_seq: int | None = None
        self.barrier = False
        self.overflow = False

    def writer(self, gtid: str | None, pos: object, lc: int, sn: int, hashes: Any) -> None:
        """A transaction W001 takes (as :class:`~repltool.certify.SafetyChecker` sees it)."""
        barrier = is_barrier(lc, sn, self.prev_seq)
        self.prev_seq = sn
        self.barrier = self.barrier or barrier
        if self.first_sn is None:
            self.first_sn = sn
        if not self.collecting:
            return
        if barrier:                         # nothing before it is seen past it
            self.collecting = False
            return
        reaches = lc <= self.first_sn - 2
        if len(self.head) < EDGE_HEAD:
            self.head.append((gtid, pos, lc, sn, tuple(hashes)))
            if reaches:
                self.head_end = len(self.head)
        elif reaches:
            self.overflow = True
            self.collecting = False

    def done(self, ck: _Checker, report: CheckReport) -> SpanEdge:
        f = next(iter(ck.files.values()), None)
        tail: list[tuple[int, int]] = []
        writers: list[tuple[Any, ...]] = []
        floor = None
        safety = ck.safety
        if safety is not None and self.prev_seq is not None:
            floor = self.prev_seq - EDGE_TAIL
            if not self.barrier and self.first_sn is not None:
                floor = max(floor, self.first_sn - 1)   # earlier spans' writers not here
            number: dict[int, int] = {}
            for h, r in safety.writers_above(floor):  # type: ignore[attr-defined]
                k = number.get(id(r))
                if k is None:
                    k = number[id(r)] = len(writers)
                    t = r.trx
                    writers.append((t.gtid, t.pos, r.computed[0], r.computed[1]))
                tail.append((h, k))
        nokey = tuple((t, n, first) for t, (n, first) in f.nokey.items()) if f else ()
        return SpanEdge(
            start=0, stopped=any(fr.stopped is not None for fr in report.files),
            clocked=f.clocked if f else 0, barriers=f.barriers if f else 0,
            saturated=f.saturated if f else 0, nokey=nokey,
            clocks=_zlib_bytes(self.clocks), first_clock=self.first_clock,
            last_sn=ck.prev_sn, previous=f.previous if f else None,
            first_gno=tuple((k, *v) for k, v in f.first_gno.items()) if f else (),
            max_gno=dict(f.last_gno) if f else {},
            first_kind=f.first_kind if f else None,
            head=tuple(self.head[:self.head_end]), tail=tuple(tail), writers=tuple(writers),
            floor=floor, w001_last=self.prev_seq, overflow=self.overflow)


def _zlib_bytes(values: array) -> bytes:
    return zlib.compress(values.tobytes(), 1)


def check_span(path: str, span: Any, config: CheckConfig | None = None, *,
               writesets: WritesetProvider | None | object = _BUILTIN) -> CheckPart:
    """:func:`check_part` on one span of a large binlog
    (:class:`repltool.binlog.split.Span`), with its :attr:`~CheckPart.edge`; the spans
    of a file, joined in order by :func:`join_spans`, give the file's
    :func:`check_part` (or ``None``: check it whole).

    :raises InputError: as :func:`check_files`.
    """
    name = os.fspath(path)
    require_readable(name)
    provider = builtin_provider() if writesets is _BUILTIN else writesets
    cfg = config or CheckConfig()
    if compiled_core() is not None:
        # the single process's read (see check_part), on the span
        ck = _Checker([name], cfg, provider, read_events)  # type: ignore[arg-type]
        if ck.core:
            ck.span = span
            try:
                return _span_part(ck, name, span, provider)
            except (PairsEnded, _BeforeSpan):
                if isinstance(provider, RowWritesetProvider):
                    provider = provider.fresh()
    ck = _Checker([name], cfg, provider, read_events,  # type: ignore[arg-type]
                  fused=False)
    return _span_part(ck, name, span, provider)


def _span_part(ck: _Checker, name: str, span: Any, provider: Any) -> CheckPart:
    """Run ``ck`` over ``span`` of file ``name`` (the compiled core when ``ck.span`` is
    set, else the general reader over the span's events)."""
    from dataclasses import replace
    from ..binlog.split import span_read
    ck.edge = _Edge(later=span.start > 4)
    if ck.span is not None:
        part = _run_part(ck, [name], provider)
        assert part.edge is not None
        return replace(part, edge=replace(part.edge, start=span.start))
    opened: list[FileInfo] = []
    events, ck.group_state = span_read(name, span, ck.opts, opened)
    if ck.group_state is not None:      # the file's own FDE, read before the span
        ck.segments = ck.group_state.segments.copy()

    def reader(path: str, opts: ReadOptions, info: list[FileInfo]) -> Iterator[Event]:
        for ev in events:
            if not info and opened:
                info.extend(opened)
            yield ev
        if not info and opened:
            info.extend(opened)
    ck.reader = reader
    part = _run_part(ck, [name], provider)
    assert part.edge is not None
    return replace(part, edge=replace(part.edge, start=span.start))


#: the per-file findings a join of spans makes again
_FILE_WIDE = frozenset({"C007", "C008", "W002", "G004"})


def join_spans(path: str, config: CheckConfig | None, parts: Sequence[CheckPart], *,
               writesets: bool = True) -> CheckPart | None:
    """The :func:`check_part` of ``path`` from its spans' :func:`check_span` results, in
    file order; ``None`` when the join cannot be proved equal (a span stopped at a
    format error or ends inside a transaction, W001's writers reach further than a
    span hands on, a GTID number goes back across spans): check the file whole."""
    name = os.fspath(path)
    cfg = config or CheckConfig()
    edges = [p.edge for p in parts]
    if (not parts or any(e is None or e.stopped or e.overflow for e in edges)
            or any(p.open_end for p in parts[:-1]) or edges[0].start > 4):  # type: ignore[union-attr]
        return None
    ck = _Checker([name], cfg, _Merged() if writesets else None)
    f = ck.begin_file(0, name)
    span = _Span()
    last_sn: int | None = None
    kind: str | None = None
    mixed = False
    max_gno: dict[object, int] = {}
    previous = edges[0].previous  # type: ignore[union-attr]
    nokey: dict[str, tuple[int, int]] = {}
    w_last: int | None = None
    tail: Any = None
    for k, (part, e) in enumerate(zip(parts, edges)):
        assert e is not None
        replay = bool(k and e.head and tail is not None)
        head_end = e.head[-1][1].offset if replay else -1  # type: ignore[attr-defined]
        for fd in part.report.findings:
            if fd.file == TOTAL or fd.rule in _FILE_WIDE:
                if fd.rule == "G004" and not mixed and fd.file != TOTAL:
                    if kind is None or (e.first_kind is not None and e.first_kind[0] == kind):
                        ck.findings.append(fd)      # the span's own change of kind
                        mixed = True
                continue
            if fd.rule == "W001" and k and fd.offset is not None and fd.offset <= head_end:
                continue                            # the head is checked again below
            ck.findings.append(fd)
        if e.first_kind is not None:
            if kind is None:
                kind = e.first_kind[0]
            elif e.first_kind[0] != kind and not mixed:
                mixed = True
                ck.emit("G004", name, e.first_kind[1], f"{e.first_kind[0]} GTID after "
                        f"{kind} ones in the same file (GTID_MODE was changing)")
        if k:
            for key, gno, gtid, where in e.first_gno:
                last = max_gno.get(key)
                if last is None:
                    end = previous.get(_previous_key(key)) if previous else None
                    if end is not None and gno != end + 1:
                        ck.emit("G002", name, where,
                                f"first GTID {gtid} of this file does not follow the "
                                f"Previous_gtids (GTID_LIST) end {end}: expected number "
                                f"{end + 1}")
                elif gno < last:
                    return None                     # the span's own G003s would differ
                elif gno != last + 1 and gno != last:
                    ck.emit("G003", name, where, f"GTID {gtid} follows number {last} of the "
                            f"same {'domain' if isinstance(key, int) else 'uuid'}")
            if e.first_clock is not None:
                sn, trx_name, where = e.first_clock
                ck.sequence(f, trx_name, where, sn, last_sn)
        for key, gno in e.max_gno.items():
            max_gno[key] = max(gno, max_gno.get(key, gno))
        if e.last_sn is not None:
            last_sn = e.last_sn
        # W001: the head's transactions against the writers before the span
        if replay:
            writers, keys, floor = tail
            if floor is not None and min(h[2] for h in e.head) < floor:
                return None                         # earlier writers than handed on
            from ..certify import CertResult, CertTransaction, Reason, SafetyChecker
            made = [CertResult(trx=CertTransaction(gtid=g, pos=pos, file=name,
                                                   recorded=(lc, sn), writeset=()),
                               computed=(lc, sn), reason=Reason.KEY)
                    for g, pos, lc, sn in writers]
            checker = SafetyChecker()
            checker.resume(((h, made[i]) for h, i in keys), w_last)
            for g, pos, lc, sn, hashes in e.head:
                r = CertResult(trx=CertTransaction(gtid=g, pos=pos, file=name,
                                                   recorded=(lc, sn), writeset=hashes),
                               computed=(lc, sn), reason=Reason.KEY)
                ck.violations += checker.add(r)
        if e.w001_last is not None:
            w_last = e.w001_last
            tail = (e.writers, e.tail, e.floor)
        values = array("q")
        values.frombytes(zlib.decompress(e.clocks))
        for i in range(0, len(values), 2):
            span.add(values[i], values[i + 1])
        f.clocked += e.clocked
        f.barriers += e.barriers
        f.saturated += e.saturated
        for table, n, first in e.nokey:
            m, at = nokey.get(table, (0, first))
            nokey[table] = (m + n, at)
    f.span, f.nokey = span, nokey
    ck.total.work, ck.total.depth = span.work, span.depth
    ck.total_barriers = f.barriers
    # the per-file rules of finish() (C007, C008, W002) and W001's head violations
    saved = ck.files
    ck.files = {name: f}
    for v in ck.violations:
        pos = v.later.trx.pos  # type: ignore[attr-defined]
        ck.emit("W001", pos.file, pos.offset, f"{v}: the replica may run them in parallel")
    ck.violations = []
    ck.truncated = []
    fr = [p.report.files[0] for p in parts]
    ck.file_rules(f)
    ck.files = saved
    result = FileResult(file=name, size=fr[-1].size, events=sum(r.events for r in fr),
                        transactions=sum(r.transactions for r in fr),
                        server_version=fr[0].server_version, relay_log=False,
                        in_use=fr[-1].in_use)
    report = ck.report((result,))
    first = next((p.w001[0] for p in parts if p.w001[0] is not None), None)
    last_w = next((p.w001[1] for p in reversed(parts) if p.w001[1] is not None), None)
    unknown = dict.fromkeys(t for p in parts for t in p.unknown_tables)
    return CheckPart(report, tuple(c for p in parts for c in p.committed),
                     tuple(d for p in parts for d in p.duplicates),
                     tuple(t for p in parts for t in p.truncated),
                     sum(p.unresolved for p in parts), tuple(unknown), (first, last_w),
                     parts[-1].open_end)


def w001_continues(previous: int | None, first: tuple[int, int] | None) -> bool:
    """Whether W001's first clock of a part is no barrier after ``previous``, the last
    sequence_number W001 saw before the part (then the part must be checked with the one
    before it: a conflict may cross)."""
    return first is not None and previous is not None and not is_barrier(*first, previous)


class _Merged:
    """The merged parts' provider: only the tables whose keys were unknown."""

    needs_events = False

    def __init__(self) -> None:
        self.unknown_key_tables: dict[str, None] = {}


def merge_parts(paths: Paths, config: CheckConfig | None,
                parts: Iterable[tuple[int, CheckPart]], *, writesets: bool = True
                ) -> CheckReport:
    """The :func:`check_files` report of ``paths`` from its parts, in input order.

    :param parts: (index in ``paths`` of the part's first file, :func:`check_part`'s
        result); the parts cover ``paths`` in order, none of whose names repeats.
        A part's W001 must begin with a barrier (see :func:`w001_continues`) and no
        part may be a relay log (their clock segments cross files).
    :param writesets: whether the parts had a write-set provider.
    """
    import zlib as _zlib
    names = [os.fspath(p) for p in path_list(paths)]
    merged = _Merged()
    ck = _Checker(names, config or CheckConfig(), merged if writesets else None)
    results: list[FileResult] = []
    redone = {"G001", "R002", "S005"}
    last = len(names) - 1
    for first, part in parts:
        for i, fr in enumerate(part.report.files):
            results.append(fr)
            if fr.in_use and first + i < last:
                ck.in_use(fr.file)
        ck.findings.extend(f for f in part.report.findings
                           if f.file != TOTAL and f.rule not in redone)
        for key, start, file, packed in part.committed:
            offsets = array("q")
            offsets.frombytes(_zlib.decompress(packed))
            offsets = array("q", accumulate(offsets))
            taken = {}
            for no, efile, eoff in ck.seen.overlapping(key, start, len(offsets)):
                taken[no] = (efile, eoff)
                where = offsets[no - start]
                ck.duplicate(names[first + file], where, _gtid_text(key, no), (efile, eoff))
            if not taken:
                ck.seen.add_run(key, start, first + file, offsets)
                continue
            for i, where in enumerate(offsets):
                if start + i not in taken:
                    ck.seen.add(key, start + i, first + file, where)
        for key, no, file, where in part.duplicates:
            earlier = ck.seen.get(key, no)
            assert earlier is not None
            ck.duplicate(names[first + file], where, _gtid_text(key, no), earlier)
        ck.truncated.extend(part.truncated)  # type: ignore[arg-type]
        totals = part.report.totals
        ck.total.work += totals.clocked
        ck.total.depth += totals.span
        ck.total_barriers += totals.barriers
        ck.ws_unknown += part.unresolved
        merged.unknown_key_tables.update(dict.fromkeys(part.unknown_tables))
    ck.finish()
    return ck.report(tuple(results))


def _gtid_text(key: object, no: int) -> str:
    """The GTID text of a :func:`_seen_key` (source, number)."""
    if isinstance(key, tuple):                         # MariaDB ("maria", "domain-server")
        return f"{key[1]}-{no}"
    return f"{key}:{no}"
