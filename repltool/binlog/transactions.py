"""Events -> transactions (event groups), following MySQL's trx_boundary_parser.

Rules (format-spec §1.5, MariaDB notes §6):

* a group starts at a GTID event (33, 34, 42, MariaDB 162); in GTID-less logs
  at ``BEGIN`` or at any statement outside a group;
* after a MySQL GTID, ``BEGIN`` / ``XA START`` opens a multi-statement group; any
  other Query is a single-statement (DDL) group; a Transaction_payload carries
  the whole group inside it;
* MariaDB writes no ``BEGIN``: a non-standalone GTID opens the group, a
  ``FL_STANDALONE`` one ends at its first Query;
* ends: XID, ``COMMIT``, ``ROLLBACK`` (not ``ROLLBACK TO``), ``XA ROLLBACK``,
  XA_PREPARE; an INCIDENT is a group of its own;
* FDE, Rotate, Previous_gtids, Stop, heartbeats, GTID_LIST, BINLOG_CHECKPOINT and
  ignorable unknown events never end a group, so a relay-log group that
  continues into the next relay file stays one transaction;
* a group followed by another GTID (or by the end of input) without its end
  event is reported with ``truncated=True``, never merged with the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, NamedTuple
from uuid import UUID

from ..positions import Position
from .constants import (
    HEADER_LEN, MARIA_FL_GROUP_COMMIT_ID, MARIA_FL_STANDALONE, ROWS_TYPES, EventFlag,
    EventType,
)
from .events import (
    DAMAGED_TYPE, Event, GtidBody, MariaGtidBody, QueryBody, TableMapBody, slot_builder,
)
from .structs import ROWS_TABLE_ID

_T = EventType
# plain ints for the per-event tests below (an enum member's class attribute lookup
# costs ~0.1 us, several times per event)
_MARIA_GTID, _TMAP, _PAYLOAD, _XID, _XA_PREPARE, _INCIDENT = (int(t) for t in (
    _T.MARIADB_GTID_EVENT, _T.TABLE_MAP_EVENT, _T.TRANSACTION_PAYLOAD_EVENT, _T.XID_EVENT,
    _T.XA_PREPARE_LOG_EVENT, _T.INCIDENT_EVENT))
_GTIDS = frozenset({_T.GTID_LOG_EVENT, _T.ANONYMOUS_GTID_LOG_EVENT, _T.GTID_TAGGED_LOG_EVENT})
_IGNORED = frozenset({
    _T.FORMAT_DESCRIPTION_EVENT, _T.ROTATE_EVENT, _T.PREVIOUS_GTIDS_LOG_EVENT, _T.STOP_EVENT,
    _T.HEARTBEAT_LOG_EVENT, _T.HEARTBEAT_LOG_EVENT_V2, _T.GTID_LIST_EVENT,
    _T.BINLOG_CHECKPOINT_EVENT, _T.START_ENCRYPTION_EVENT, _T.START_EVENT_V3,
    _T.TRANSACTION_CONTEXT_EVENT,
})
_QUERIES = frozenset({_T.QUERY_EVENT, _T.QUERY_COMPRESSED_EVENT, _T.EXECUTE_LOAD_QUERY_EVENT})
_ROWS = frozenset(int(t) for t in ROWS_TYPES)
_NO_OPEN = frozenset({_T.INTVAR_EVENT, _T.RAND_EVENT, _T.USER_VAR_EVENT})

#: Types whose bodies the grouper reads; everything else is counted by header only.
GROUPING_TYPES = frozenset({
    *_GTIDS, _T.MARIADB_GTID_EVENT, *_QUERIES, _T.TABLE_MAP_EVENT,
    _T.TRANSACTION_PAYLOAD_EVENT, _T.FORMAT_DESCRIPTION_EVENT, _T.ROTATE_EVENT,
})


def event_roles() -> dict[int, str]:
    """What :func:`group_transactions` does with each known type code, by name.

    ``segment`` (FDE, Rotate: seen by :class:`Segments`, then ignored), ``ignored``,
    ``gtid`` / ``maria-gtid`` (start a group), ``query`` (classified), ``table-map``,
    ``rows``, ``payload``, ``end`` (Xid), ``xa-prepare``, ``incident``, ``no-open``
    (Intvar, Rand, User_var: never open a GTID-less group) and ``plain`` (any other
    event inside a group).  The compiled engine's type table is built from this
    (:mod:`repltool.binlog.corescan`), so the grouping rule is stated here once.
    """
    roles: dict[int, str] = {}
    for t in EventType:
        if t in SEGMENT_EVENTS:
            role = "segment"
        elif t in _IGNORED:
            role = "ignored"
        elif t in _GTIDS:
            role = "gtid"
        elif t == _T.MARIADB_GTID_EVENT:
            role = "maria-gtid"
        elif t in _QUERIES:
            role = "query"
        elif t == _T.TABLE_MAP_EVENT:
            role = "table-map"
        elif t in _ROWS:
            role = "rows"
        elif t == _T.TRANSACTION_PAYLOAD_EVENT:
            role = "payload"
        elif t == _T.XID_EVENT:
            role = "end"
        elif t == _T.XA_PREPARE_LOG_EVENT:
            role = "xa-prepare"
        elif t == _T.INCIDENT_EVENT:
            role = "incident"
        elif t in _NO_OPEN:
            role = "no-open"
        else:
            role = "plain"
        roles[int(t)] = role
    return roles


@dataclass(frozen=True, slots=True)
class Transaction:
    """One event group.

    ``last_committed`` / ``sequence_number`` are as logged (MySQL 5.7+; ``None``
    when the log has no logical clock: 5.6, GTID-less, MariaDB).  ``size`` is the
    bytes the group occupies in the log (events inside a Transaction_payload are
    inside the payload event's size); ``num_events`` counts inner events too.
    """

    start: Position
    end: Position
    end_offset: int
    gtid: str | None
    last_committed: int | None
    sequence_number: int | None
    server_id: int
    thread_id: int | None
    size: int
    num_events: int
    timestamp: int
    end_timestamp: int
    kind: str                       # dml | ddl | xa-prepare | xa-commit | xa-rollback | rollback | incident | empty
    truncated: bool = False
    immediate_commit_timestamp: int | None = None
    original_commit_timestamp: int | None = None
    transaction_length: int | None = None
    commit_id: int | None = None    # MariaDB group-commit id
    maria_flags: int | None = None
    gtid_flags: int | None = None
    compressed: bool = False
    tables: tuple[str, ...] = ()
    rows_events: tuple[tuple[str, int], ...] = ()
    delta16_saturated: bool = False
    segment: str = ""               # the clock segment: binlog file, or the relay log's source file
    relay_log: bool = False
    events: tuple[Event, ...] = field(default=(), repr=False, compare=False)
    #: rows per table: (db.table, inserted, updated, deleted, Rows events not walked),
    #: in first-seen order; only when counted (``group_transactions(count_rows=True)``;
    #: not part of equality: the same transaction, counted or not)
    row_counts: tuple[tuple[str, int, int, int, int], ...] = field(default=(), compare=False)

    @property
    def file(self) -> str:
        return self.start.file

    @property
    def spans_files(self) -> bool:
        return self.start.file != self.end.file

    @property
    def duration(self) -> int:
        """Seconds between the group's first and last event timestamps."""
        return max(0, self.end_timestamp - self.timestamp)


#: ``Transaction(**fields)`` in half the time (the grouper builds one per transaction)
_new_transaction = slot_builder(Transaction)


class TransactionSummary(NamedTuple):
    """The fields of a :class:`Transaction` that ``stats`` reads, same names and
    values: what the compiled core's scans (:mod:`repltool.binlog.corescan`) yield, a
    tuple being built in a tenth of the time of the frozen dataclass."""

    start: Position
    gtid: str | None
    last_committed: int | None
    sequence_number: int | None
    size: int
    num_events: int
    kind: str
    truncated: bool
    duration: int
    rows_events: tuple[tuple[str, int], ...]
    delta16_saturated: bool = False
    maria_flags: int | None = None
    commit_id: int | None = None
    timestamp: int = 0
    end_timestamp: int = 0
    row_counts: tuple[tuple[str, int, int, int, int], ...] = ()


def classify_query(query: bytes) -> str:
    """``begin``, ``commit``, ``rollback``, ``xa-rollback``, ``xa-commit``, ``xa-end`` or ``statement``.

    Example::

        >>> classify_query(b"BEGIN"), classify_query(b"ROLLBACK TO sp1"), classify_query(b"XA COMMIT X'01'")
        ('begin', 'statement', 'xa-commit')
    """
    if query == b"BEGIN":       # (what nearly every transaction starts with)
        return "begin"
    head = query[:24].lstrip().upper()
    if head.startswith(b"BEGIN") or head.startswith(b"XA START"):
        return "begin"
    if head.startswith(b"COMMIT"):
        return "commit"
    if head.startswith(b"ROLLBACK"):
        return "statement" if head.startswith(b"ROLLBACK TO") else "rollback"
    if head.startswith(b"XA ROLLBACK"):
        return "xa-rollback"
    if head.startswith(b"XA COMMIT"):
        return "xa-commit"
    if head.startswith(b"XA END"):
        return "xa-end"
    return "statement"


#: the events :meth:`Segments.see` takes
SEGMENT_EVENTS = frozenset({_T.FORMAT_DESCRIPTION_EVENT, _T.ROTATE_EVENT})


class Segments:
    """Which binlog file's logical clock the events belong to.

    In a binlog that is the file itself.  In a relay log it is the *source*
    binlog named by the last source Rotate (the fake Rotate a source sends on
    each connection, the receiver's server_id-0 Rotate, or the source's own
    end-of-file Rotate) - not the relay file: sequence numbers restart at
    source rotations only (format-spec gotcha 8).  A relay log continues the
    segment of the relay file before it.
    """

    __slots__ = ("file", "current", "relay", "own_server_id")

    def __init__(self) -> None:
        self.file: str | None = None
        self.current = ""
        self.relay = False
        self.own_server_id: int | None = None

    def copy(self) -> Segments:
        other = Segments()
        other.file, other.current, other.relay, other.own_server_id = (
            self.file, self.current, self.relay, self.own_server_id)
        return other

    def see(self, ev: Event) -> bool:
        """Take an FDE or a Rotate (others change nothing) in stream order; True when
        ``ev`` begins a clock segment: the own FDE of a binlog file (a binlog is a
        segment of its own) or of the first relay file, or a source Rotate of a relay
        log: a Rotate the relay log did not write itself (``LOG_EVENT_RELAY_LOG_F``
        clear) from another server than the relay file's writer (the ``server_id`` of
        the file's own FDE): the source's fake Rotate on (re)connection, its
        end-of-binlog Rotate, the receiver's ``server_id`` 0 Rotate (MySQL
        ``Rotate_log_event::do_update_pos``; format spec §6d rule 8).  The file's own
        FDE is its first one: a relay log flags it ``LOG_EVENT_RELAY_LOG_F``; a relay
        file continues the segment of the one before it.

        This is the one statement of the rule: the grouper, the schedule's
        :class:`~repltool.schedule.source.SourceRotations` and check's clock
        segments all take it from here."""
        if ev.pos.file != self.file:
            self.file = ev.pos.file
            self.own_server_id = None
        tc = ev.type_code
        if tc == _T.FORMAT_DESCRIPTION_EVENT:
            if self.own_server_id is None:      # the file's own FDE comes first
                self.own_server_id = ev.server_id
                self.relay = bool(ev.flags & EventFlag.RELAY_LOG)
                if not self.relay or not self.current:
                    self.current = ev.pos.file
                    return True
            return False
        if (tc == _T.ROTATE_EVENT and self.relay and not ev.flags & EventFlag.RELAY_LOG
                and ev.server_id != self.own_server_id):
            name = getattr(ev.body, "next_file", None)
            if name:
                self.current = name
            return True
        return False


class _Group:
    """The open group while its events stream past."""

    __slots__ = ("first", "last", "gtid_body", "maria", "events", "size", "count", "thread_id",
                 "state", "kind", "tables", "rows", "compressed", "keep", "has_gtid", "ts",
                 "end_offset", "segment", "relay", "tap", "row_counts")

    def __init__(self, first: Event, keep: bool,
                 tap: Callable[[Event, bool], None] | None = None) -> None:
        self.first = self.last = first
        self.gtid_body: GtidBody | None = None
        self.maria: MariaGtidBody | None = None
        self.events: list[Event] = []
        self.size = self.count = 0
        self.thread_id: int | None = None
        self.state = "start"            # start | open | standalone
        self.kind = "dml"
        self.tables: dict[str, None] = {}
        self.rows: dict[str, int] = {}
        self.compressed = False
        self.keep = keep
        self.has_gtid = False
        self.ts = first.timestamp
        self.end_offset: int | None = None   # end of the last event *in the file* (not in a payload)
        self.segment = first.pos.file
        self.relay = False
        self.tap = tap
        self.row_counts: dict[str, list[int]] = {}


#: ``tap(event, opens)`` of :func:`group_transactions`
Tap = Callable[[Event, bool], None]


@dataclass(frozen=True, slots=True)
class GroupingState:
    """What the grouper carries from one transaction to the next: the clock segment
    and the table names of the Table_maps seen so far.  A read another engine began
    (:mod:`repltool.binlog.corescan`) continues from it at a transaction boundary."""

    segments: Segments
    table_names: dict[int, str]
    #: the Format_description governing the events there (for ``count_rows``)
    fde: object = None
    #: ``count_rows``: the table definitions by table id
    #: (:attr:`repltool.binlog.rowcount.RowCounter.tables`), as ``table_names``
    row_tables: dict[int, object] | None = None


def group_transactions(events: Iterable[Event], *, keep_events: bool = False,
                       tap: Tap | None = None,
                       state: GroupingState | None = None,
                       count_rows: bool = False,
                       count_tables: bool = True) -> Iterator[Transaction]:
    """Group a stream of events (from one or many files) into transactions.

    :param keep_events: keep every event in ``Transaction.events`` (memory then
        grows with the largest transaction, not with the log).
    :param tap: called with every event that joins a group as it streams past,
        ``opens`` True for a group's first event.  All of a transaction's events
        have gone to the tap when it is yielded, and none of the next one's: a
        consumer can fold a transaction's events as they come (write sets:
        :meth:`repltool.writeset.WritesetExtractor.pairs`) instead of keeping
        them.  A group that is never completed (truncated) is yielded too.
    :param state: the grouper's state at the first event (a read resumed at a
        transaction boundary); the default is the start of a read.
    :param count_tables: fill ``Transaction.tables`` and ``rows_events`` (off: both
        empty, Table_map and Rows events only join their group; ``stats --clock-only``
        needs neither).  ``count_rows`` needs it.
    :param count_rows: fill ``Transaction.row_counts``
        (:class:`repltool.binlog.rowcount.RowCounter`; the reader must decode
        Table_map and Rows bodies, else their events count as not walked).
    """
    counter = None
    if count_rows and not count_tables:
        raise ValueError("group_transactions: count_rows counts rows per table (count_tables)")
    if count_rows:
        from .rowcount import RowCounter
        counter = RowCounter(state.row_tables if state is not None else None)
        if state is not None:
            counter.format_description(state.fde)
    group: _Group | None = None
    table_names: dict[int, str] = dict(state.table_names) if state is not None else {}
    seg = state.segments.copy() if state is not None else Segments()
    plain = _PLAIN
    rows_types = _ROWS
    slow = keep_events or tap is not None
    table_id = ROWS_TABLE_ID.unpack_from     # (low 32, high 16 bits)
    for ev in events:
        pos, _, tc, _, size, _, _, body, crc, raw = ev      # (the fields read below)
        if tc not in plain:         # (the common types pass none of these tests)
            if tc in SEGMENT_EVENTS:
                seg.see(ev)
                if counter is not None:
                    counter.format_description(ev.body)
            if tc in _IGNORED or (tc not in _KNOWN and ev.flags & EventFlag.IGNORABLE):
                continue
            if tc == DAMAGED_TYPE:
                # keep-going mode: a damaged range ends the open group as truncated.
                if group is not None:
                    yield _finish(group, truncated=True)
                    group = None
                continue
            if tc in _GTIDS or tc == _MARIA_GTID:
                if group is not None:
                    yield _finish(group, truncated=True)
                group = _Group(ev, keep_events, tap)
                group.segment, group.relay = seg.current, seg.relay
                group.has_gtid = True
                _add(group, ev, pos.payload_offset is not None)
                if tc == _MARIA_GTID:
                    group.maria = ev.body if isinstance(ev.body, MariaGtidBody) else None
                    if group.maria is not None:
                        group.state = ("standalone" if group.maria.flags2 & MARIA_FL_STANDALONE
                                       else "open")
                else:
                    group.gtid_body = ev.body if isinstance(ev.body, GtidBody) else None
                continue
        if group is None:
            group = _Group(ev, keep_events, tap)
            group.segment, group.relay = seg.current, seg.relay
        # _add(group, ev, inner), inlined (it runs once per event)
        group.last = ev
        group.count += 1
        if pos[2] is None:                          # (pos.payload_offset: not inner)
            group.size += size
            group.end_offset = pos[1] + size        # ev.end_pos
        if slow:
            if keep_events:
                group.events.append(ev)
            if tap is not None:
                tap(ev, group.count == 1)
        if tc == _TMAP:
            if not count_tables:
                continue
            if isinstance(body, TableMapBody):      # _table_name / _table_id, inlined
                name = f"{body.db}.{body.table}"
                table_names[body.table_id] = name
                group.tables[name] = None
            if counter is not None:
                counter.table_map(body)
            continue
        if tc in rows_types:
            if not count_tables:
                continue
            # the table id: the first 6 bytes of the body
            if len(raw) >= _TABLE_ID_END:
                lo, hi = table_id(raw, HEADER_LEN)
                name = table_names.get(lo | hi << 32, "?")
            else:
                name = "?"
            rows = group.rows
            rows[name] = rows.get(name, 0) + 1
            if counter is not None:
                if body is None:
                    k, n = counter.rows_bytes(
                        tc, raw[19:len(raw) - 4 if crc is not None else len(raw)])
                else:
                    k, n = counter.rows(tc, body)
                counts = group.row_counts.get(name)
                if counts is None:
                    counts = group.row_counts[name] = [0, 0, 0, 0]
                counts[k] += n
            continue
        if tc == _PAYLOAD:
            group.compressed = True
            group.state = "open"
            continue
        if tc == _XID:                  # _advance's first case, inlined
            yield _finish(group, truncated=False)
            group = None
            continue
        ended = _advance(group, ev)
        if ended:
            yield _finish(group, truncated=False)
            group = None
    if group is not None:
        yield _finish(group, truncated=True)


_KNOWN = frozenset(int(t) for t in EventType)
#: where a Rows event's table id (the body's first field) ends in the event
_TABLE_ID_END = HEADER_LEN + ROWS_TABLE_ID.size
#: known types that no segment, ignore, damage or GTID test of the grouper takes
#: (Table_map, Rows, Query, Xid: most events): they skip those tests
_PLAIN = frozenset(t for t in (_TMAP, _XID, *_ROWS, *_QUERIES)
                   if t in _KNOWN and t not in SEGMENT_EVENTS and t not in _IGNORED
                   and t not in _GTIDS and t not in (DAMAGED_TYPE, _MARIA_GTID))


def _add(group: _Group, ev: Event, inner: bool) -> None:
    group.last = ev
    group.count += 1
    if not inner:
        group.size += ev.event_size
        group.end_offset = ev.end_pos
    if group.keep:
        group.events.append(ev)
    if group.tap is not None:
        group.tap(ev, group.count == 1)


def _advance(group: _Group, ev: Event) -> bool:
    """Feed one boundary-relevant event; True when it ends the group."""
    tc = ev.type_code
    if tc == _XID or tc == _XA_PREPARE:
        if tc == _XA_PREPARE:
            group.kind = "xa-prepare"
        return True
    if tc == _INCIDENT:
        group.kind = "incident"
        return True
    if tc not in _QUERIES:
        if group.state == "start" and not group.has_gtid and tc not in _NO_OPEN:
            group.state = "open"
        return False
    body = ev.body
    if not isinstance(body, QueryBody):
        return group.state == "start"
    if group.thread_id is None:
        group.thread_id = body.thread_id
    what = classify_query(body.query)
    if what == "begin":
        group.state = "open"
        return False
    if what == "commit":
        if (group.has_gtid and not group.rows and not group.tables
                and group.state == "open"
                and group.count == (2 if group.maria is not None else 3)):
            # GTID, BEGIN, COMMIT (MariaDB: GTID, COMMIT) and nothing else: an empty
            # transaction (GTID_NEXT + COMMIT, a replica's filtered transaction)
            group.kind = "empty"
        return True
    if what in ("rollback", "xa-rollback"):
        group.kind = what
        return True
    if group.state in ("start", "standalone"):
        # A statement right after the GTID (or outside any group) is the whole group.
        group.kind = "xa-commit" if what == "xa-commit" else "ddl"
        return True
    if is_atomic_ctas(body.query):
        group.kind = "ddl"      # MySQL 8.0.21+ CREATE TABLE ... SELECT: DDL + rows in one group
    return False


def is_atomic_ctas(query: bytes) -> bool:
    """``CREATE TABLE ... START TRANSACTION``: how MySQL 8.0.21+ logs ``CREATE TABLE ... SELECT``.

    The statement sits inside ``BEGIN`` ... ``Xid`` with the selected rows
    (WL#13355), so the group is a DDL that also carries rows.

    Example::

        >>> is_atomic_ctas(b"CREATE TABLE `t2` (`a` int) START TRANSACTION"), is_atomic_ctas(b"INSERT 1")
        (True, False)
    """
    return (query[:32].lstrip().upper().startswith(b"CREATE")
            and query.rstrip().upper().endswith(b"START TRANSACTION"))


def gtid_fields(g: GtidBody) -> tuple[int | None, int | None, dict[str, object]]:
    """``(last_committed, sequence_number, other fields)`` a :class:`Transaction` takes
    from its Gtid event's body (the clock ``None`` where the event has none)."""
    lc = sn = None
    if g.lt_type is not None:
        lc, sn = g.last_committed, g.sequence_number
    return lc, sn, dict(immediate_commit_timestamp=g.immediate_commit_timestamp,
                        original_commit_timestamp=g.original_commit_timestamp,
                        transaction_length=g.transaction_length, gtid_flags=g.gtid_flags,
                        delta16_saturated=g.delta16_saturated)


def _finish(group: _Group, *, truncated: bool) -> Transaction:
    first, last = group.first, group.last
    g, m = group.gtid_body, group.maria
    kind = group.kind
    if group.count == 1 and group.has_gtid:
        kind = "empty"
    end_offset = group.end_offset if group.end_offset is not None else last.end_pos
    if g is not None:
        # the common case, built positionally (runs once per transaction): the fields
        # gtid_fields gives, and g.gtid_text with the UUID's text cached
        lc = sn = None
        if g.lt_type is not None:
            lc, sn = g.last_committed, g.sequence_number
        return _new_transaction(
            first.pos, last.pos, end_offset, _gtid_text(g), lc, sn, first.server_id,
            group.thread_id, group.size, group.count, group.ts, last.timestamp, kind,
            truncated, g.immediate_commit_timestamp, g.original_commit_timestamp,
            g.transaction_length, None, None, g.gtid_flags, group.compressed,
            tuple(group.tables), tuple(group.rows.items()), g.delta16_saturated,
            group.segment, group.relay, tuple(group.events),
            tuple([(t, *c) for t, c in group.row_counts.items()]) if group.row_counts else ())
    gtid: str | None = None
    lc = sn = None
    extra: dict[str, object] = {}
    if m is not None:
        gtid = f"{m.domain_id}-{first.server_id}-{m.seq_no}"
        extra = dict(commit_id=m.commit_id if m.flags2 & MARIA_FL_GROUP_COMMIT_ID else None,
                     maria_flags=m.flags2)
    return _new_transaction(
        start=first.pos, end=last.pos, end_offset=end_offset, gtid=gtid,
        last_committed=lc, sequence_number=sn, server_id=first.server_id,
        thread_id=group.thread_id, size=group.size, num_events=group.count,
        timestamp=group.ts, end_timestamp=last.timestamp, kind=kind, truncated=truncated,
        compressed=group.compressed, tables=tuple(group.tables),
        segment=group.segment, relay_log=group.relay,
        rows_events=tuple(group.rows.items()), events=tuple(group.events),
        row_counts=tuple((t, *c) for t, c in group.row_counts.items()),
        **extra)  # type: ignore[arg-type]


#: id(UUID) -> (UUID, its text): the decoders hand out one UUID object per server
#: uuid (fastdecode's cache), so a transaction's GTID text reuses the UUID's text
_SID_TEXT: dict[int, tuple[UUID, str]] = {}


def _gtid_text(g: GtidBody) -> str:
    """``g.gtid_text`` (``str(Gtid(...))`` or ``"ANONYMOUS"``), the UUID's text cached."""
    sid, gno, tag = g.sid, g.gno, g.tag
    if gno == 0 and not tag and sid.int == 0:
        return "ANONYMOUS"
    hit = _SID_TEXT.get(id(sid))
    if hit is not None and hit[0] is sid:
        text = hit[1]
    else:
        if len(_SID_TEXT) >= 4096:
            _SID_TEXT.clear()
        text = str(sid)
        _SID_TEXT[id(sid)] = (sid, text)
    return f"{text}:{tag}:{gno}" if tag else f"{text}:{gno}"
