"""``repltool dump``: the events of logs, as mysqlbinlog-like text or JSON lines."""

from __future__ import annotations

import contextlib
import json
import sys
from datetime import datetime, timezone
from typing import Any, BinaryIO, Iterator

import click

from ..binlog import ReadOptions, read_events
from ..binlog.constants import EventType
from ..binlog.describe import event_to_dict
from ..binlog.events import (
    DAMAGED_TYPE, DamagedBody, Event, GtidBody, MariaGtidBody, QueryBody, RowsBody, TableMapBody,
    XaPrepareBody, XidBody,
)
from ..binlog.gtid import GtidFilter
from ..errors import UsageError
from ..escape import json_safe, printable
from .render_replay import BASE64_MODES
from .options import (
    damage_exit, default_collation_option, files_argument, keep_going_option,
    verify_checksum_option,
)

_CONTROL = frozenset({
    EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT, EventType.STOP_EVENT,
    EventType.PREVIOUS_GTIDS_LOG_EVENT, EventType.GTID_LIST_EVENT,
    EventType.BINLOG_CHECKPOINT_EVENT, EventType.START_EVENT_V3,
    EventType.START_ENCRYPTION_EVENT,
})
_GTID_TYPES = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT,
                         EventType.GTID_TAGGED_LOG_EVENT, EventType.MARIADB_GTID_EVENT})


def _parse_datetime(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
        try:
            dt = datetime.strptime(value, fmt).replace(tzinfo=timezone.utc)
            return int(dt.timestamp())
        except ValueError:
            continue
    raise UsageError(f"{name}: cannot read {value!r} as 'YYYY-MM-DD hh:mm:ss'")


class EventFilter:
    """mysqlbinlog's selection options, applied to a stream of events.

    Positions apply like mysqlbinlog's: ``start`` to the first file, ``stop`` to
    the last.  GTID, database and table filters apply to the events of a
    transaction; control events (FDE, Rotate, Previous_gtids, ...) always pass.
    """

    def __init__(self, files: list[str], *, start: int | None, stop: int | None,
                 start_dt: int | None, stop_dt: int | None, include: GtidFilter | None,
                 exclude: GtidFilter | None, databases: tuple[str, ...],
                 tables: tuple[str, ...], start_gtids: dict[int, int] | None = None,
                 stop_gtids: dict[int, int] | None = None,
                 do_domains: frozenset[int] = frozenset(),
                 ignore_domains: frozenset[int] = frozenset(),
                 ignore_servers: frozenset[int] = frozenset()) -> None:
        self.first, self.last = files[0], files[-1]
        self.start, self.stop = start, stop
        self.start_dt, self.stop_dt = start_dt, stop_dt
        self.include, self.exclude = include, exclude
        self.databases = set(databases)
        self.tables = set(tables)
        self.start_gtids = start_gtids or {}
        self.stop_gtids = stop_gtids or {}
        self.do_domains, self.ignore_domains = do_domains, ignore_domains
        self.ignore_servers = ignore_servers
        self.gtid: str | None = None
        self.maria: tuple[int, int, int] | None = None     # (domain, server, seq) of the group
        self.table_ids: dict[int, tuple[str, str]] = {}

    @property
    def active(self) -> bool:
        """Whether any option selects: otherwise every event passes unchanged."""
        return not (self.start is None and self.stop is None and self.start_dt is None
                    and self.stop_dt is None and self.include is None and self.exclude is None
                    and not self.databases and not self.tables and not self.start_gtids
                    and not self.stop_gtids and not self.do_domains
                    and not self.ignore_domains and not self.ignore_servers)

    def apply(self, events: Iterator[Event]) -> Iterator[Event]:
        reached: set[int] = set()       # stop-position GTID domains done with
        for ev in events:
            f = ev.pos.file
            if self.stop_gtids and isinstance(ev.body, MariaGtidBody):
                # as mariadb-binlog: once every domain of the stop list got to its GTID,
                # reading stops (later groups of other domains are not printed either)
                if reached >= self.stop_gtids.keys():
                    return
                d = ev.body.domain_id
                if d in self.stop_gtids and ev.body.seq_no >= self.stop_gtids[d]:
                    reached.add(d)
            if self.stop is not None and f == self.last and ev.pos.offset >= self.stop:
                return
            if self.stop_dt is not None and ev.timestamp >= self.stop_dt and ev.timestamp:
                return
            if self.start is not None and f == self.first and ev.pos.offset < self.start:
                self._track(ev)
                if ev.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                    yield ev        # mysqlbinlog prints the FDE whatever the start position
                continue
            if self._keep(ev):
                yield ev

    def without_empty_xa(self, events: Iterator[Event]) -> Iterator[Event]:
        """Leave out an XA transaction the database/table filters emptied, and its
        later XA COMMIT / XA ROLLBACK: replayed, the server would end the empty
        prepared branch at XA PREPARE and refuse the XA COMMIT / ROLLBACK.

        A transaction is held from its GTID event to its end (bounded by the
        transaction), only when --database / --table select.
        """
        from ..binlog.flashback import query_xid, xid_key
        dropped: set[str] = set()
        held: list[Event] | None = None
        content = False
        for ev in events:
            b = ev.body
            if ev.type_code in _GTID_TYPES or ev.type_code in _CONTROL:
                if held:
                    yield from held
                held, content = ([ev], False) if ev.type_code in _GTID_TYPES else (None, False)
                if held is None:
                    yield ev
                continue
            if held is None:
                yield ev
                continue
            held.append(ev)
            if isinstance(b, XaPrepareBody):
                if not content and not b.one_phase:
                    dropped.add(xid_key(b.gtrid, b.bqual, b.format_id))
                else:
                    yield from held
                held = None
            elif isinstance(b, QueryBody):
                word = b.query.lstrip()[:12].upper()
                if word.startswith((b"XA COMMIT", b"XA ROLLBACK")) and \
                        query_xid(b.query) in dropped and not content:
                    dropped.discard(query_xid(b.query) or "")
                    held = None
                elif word.startswith((b"COMMIT", b"ROLLBACK", b"XA COMMIT", b"XA ROLLBACK")):
                    yield from held
                    held = None
                elif not word.startswith((b"BEGIN", b"XA ")):
                    content = True
            elif isinstance(b, XidBody):
                yield from held
                held = None
            elif ev.type_code not in (EventType.ANNOTATE_ROWS_EVENT,
                                      EventType.ROWS_QUERY_LOG_EVENT):   # comments only
                content = True
        if held:
            yield from held

    def _track(self, ev: Event) -> None:
        body = ev.body
        if ev.type_code in _GTID_TYPES:
            if isinstance(body, GtidBody):
                self.gtid = body.gtid_text
                self.maria = None
            elif isinstance(body, MariaGtidBody):
                self.gtid = f"{body.domain_id}-{ev.server_id}-{body.seq_no}"
                self.maria = (body.domain_id, ev.server_id, body.seq_no)
        elif ev.type_code in _CONTROL:
            self.gtid = None
            self.maria = None
        if isinstance(body, TableMapBody):
            self.table_ids[body.table_id] = (body.db, body.table)

    def _keep(self, ev: Event) -> bool:
        self._track(ev)
        if ev.type_code in _CONTROL or ev.type_code == DAMAGED_TYPE:
            return True
        if self.start_dt is not None and ev.timestamp < self.start_dt:
            return False
        if self.include is not None and not self.include.matches(self.gtid):
            return False
        if self.exclude is not None and self.exclude.matches(self.gtid):
            return False
        if self.maria is not None and not self._maria_ok(*self.maria):
            return False
        if self.databases or self.tables:
            return self._db_table_ok(ev)
        return True

    def _maria_ok(self, domain: int, server: int, seq: int) -> bool:
        """mariadb-binlog's GTID positions and domain/server filters for a group:
        ``--start-position=D-S-N`` keeps the groups of domain D after N,
        ``--stop-position=D-S-N`` those up to N included (other domains pass)."""
        if domain in self.start_gtids and seq <= self.start_gtids[domain]:
            return False
        if domain in self.stop_gtids and seq > self.stop_gtids[domain]:
            return False
        if self.do_domains and domain not in self.do_domains:
            return False
        return domain not in self.ignore_domains and server not in self.ignore_servers

    def _db_table_ok(self, ev: Event) -> bool:
        body = ev.body
        db: str | None = None
        table: str | None = None
        if isinstance(body, QueryBody):
            if ev.type_code in _GTID_TYPES:
                return True
            text = body.query[:16].strip().upper()
            if text in (b"BEGIN", b"COMMIT") or text.startswith(b"XA "):
                return True
            db = body.db
        elif isinstance(body, TableMapBody):
            db, table = body.db, body.table
        elif body is not None and hasattr(body, "table_id"):
            db, table = self.table_ids.get(getattr(body, "table_id"), (None, None))
        else:
            return True
        if self.databases and db not in self.databases:
            return False
        if self.tables:
            if table is None:
                return not self.databases or db in self.databases
            return table in self.tables or f"{db}.{table}" in self.tables
        return True


@click.command()
@files_argument
@click.option("--format", "fmt", type=click.Choice(["text", "jsonl"]), default="text",
              show_default=True, help="mysqlbinlog-like text, or one JSON object per event.")
@click.option("--start-position", metavar="N|GTIDS",
              help="Skip events before offset N of the first file; or, for MariaDB logs, "
                   "start after these GTIDs (D-S-N[,...], one per domain).")
@click.option("--stop-position", metavar="N|GTIDS",
              help="Stop at the first event at or after offset N of the last file; or, "
                   "for MariaDB logs, stop after these GTIDs (D-S-N[,...]).")
@click.option("--start-datetime", help="Skip events before 'YYYY-MM-DD hh:mm:ss' (UTC).")
@click.option("--stop-datetime", help="Stop at the first event at or after this time (UTC).")
@click.option("--include-gtids", help="Only transactions in this GTID set "
              "(uuid:1-5,uuid:tag:3 or MariaDB 0-1-5).")
@click.option("--exclude-gtids", help="Leave out transactions in this GTID set.")
@click.option("--do-domain-ids", metavar="IDS",
              help="MariaDB: only transactions of these GTID domains (comma-separated).")
@click.option("--ignore-domain-ids", metavar="IDS",
              help="MariaDB: leave out transactions of these GTID domains.")
@click.option("--ignore-server-ids", metavar="IDS",
              help="MariaDB: leave out transactions whose GTID has these server ids.")
@click.option("--database", "-d", "databases", multiple=True,
              help="Only events of this database (repeatable; after --rewrite-db).")
@click.option("--table", "tables", multiple=True,
              help="Only row events of this table, `table` or `db.table` (repeatable).")
@click.option("--rewrite-db", "rewrite_dbs", multiple=True, metavar="FROM->TO",
              help="Text: replay the events of database FROM into TO (the `use` of Query "
                   "events and the database of Table_map events; names inside statements "
                   "stay as logged, as with mysqlbinlog).  Repeatable.")
@click.option("--verbose", "-v", count=True,
              help="Decode rows: -v prints them as ### pseudo-SQL (JSON: a \"rows\" list), "
                   "-vv adds column type comments.")
@click.option("--numbered-columns", is_flag=True,
              help="With -v: ### lines name columns @1, @2, ... (mysqlbinlog's form without "
                   "column names) even when the Table_map carries names.")
@click.option("--base64-output", type=click.Choice(BASE64_MODES), default="auto",
              show_default=True,
              help="Text: auto prints the FDE and row events as BINLOG '...' statements "
                   "(replayable); decode-rows prints rows only as ### comments (with -v; not "
                   "replayable); never prints no BINLOG statement and refuses row events.")
@click.option("--skip-gtids", is_flag=True,
              help="Text: leave out the GTID statements (SET @@SESSION.GTID_NEXT, MariaDB "
                   "SET @@session.gtid_*), so that the server assigns new GTIDs.")
@click.option("--short-form", "-s", is_flag=True,
              help="Text: only the statements: no # at / header comments, no BINLOG "
                   "statements (not replayable for row events), as mysqlbinlog -s.")
@click.option("--hexdump", "-H", is_flag=True,
              help="Text: a hex dump of each event's bytes in comments.")
@click.option("--print-table-metadata", is_flag=True,
              help="Text: the columns (names, types) and primary key of each Table_map "
                   "as comments.")
@click.option("--text-mode", type=click.Choice(["auto", "replay", "terminal"]),
              default="auto", show_default=True,
              help="Text: replay writes each statement's bytes exactly as logged (to pipe "
                   "into mysql/mariadb); terminal shows control characters as visible "
                   "escapes and comments out statements that hold them.  auto: terminal "
                   "when stdout is a terminal, else replay.")
@click.option("--flashback", "-B", is_flag=True,
              help="Text: the inverse of the selected window of row events, last "
                   "transaction first (Write<->Delete, Update images swapped), replayable; "
                   "refuses DDL, statement-based events and images without every column "
                   "(exit 1).")
@click.option("--result-file", "-r", type=click.Path(dir_okay=False),
              help="Write the output to this file (atomically; never one of the inputs).")
@click.option("--force", is_flag=True, help="With --result-file: replace an existing file.")
@click.option("--writesets", is_flag=True,
              help="Print one JSON object per transaction with the keys it wrote (MySQL 8.0 "
                   "writeset rules: key values, XXH64 hashes, DDL/empty/keyless/FK flags).")
@click.option("--schema", "schema_files", multiple=True, type=click.Path(dir_okay=False),
              help="With --writesets: CREATE TABLE statements (SHOW CREATE TABLE, mysqldump "
                   "--no-data) for UNIQUE and foreign keys (repeatable).")
@click.option("--schema-db", help="Database of unqualified tables in --schema files.")
@default_collation_option
@verify_checksum_option
@keep_going_option
def dump(files: tuple[str, ...], **o: Any) -> None:
    """Print the events of binlogs / relay logs, read as one ordered sequence.

    The text output is what mysqlbinlog / mariadb-binlog print and can be piped
    into a server (point-in-time recovery): `repltool dump LOGS | mariadb`.
    FILE `-` reads a log from standard input.  Times are shown in UTC.  Events
    inside a Transaction_payload are shown after it with their offset inside the
    payload (`payload_pos`).
    """
    if o["flashback"] and (o["fmt"] != "text" or o["writesets"]
                           or o["base64_output"] != "auto"):
        raise UsageError("--flashback prints replayable text: not with --format jsonl, "
                         "--writesets or --base64-output other than auto")
    o["terminal"] = o["text_mode"] == "terminal" or (
        o["text_mode"] == "auto" and o["result_file"] is None and sys.stdout.isatty())
    with _stdin_spooled(files) as paths, output_stream(o["result_file"], paths,
                                                       o["force"]) as out:
        _dump(paths, out, o)


def _ids(value: str | None, name: str) -> frozenset[int]:
    if not value:
        return frozenset()
    try:
        return frozenset(int(x) for x in value.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"{name}: {value!r} is not a comma-separated list of numbers") from None


def _position(value: str | None, name: str) -> tuple[int | None, dict[int, int] | None]:
    """(offset, None) or (None, {domain: seq_no}) for a MariaDB GTID position."""
    if value is None:
        return None, None
    if value.isdigit():
        return int(value), None
    gtids: dict[int, int] = {}
    for item in filter(None, (x.strip() for x in value.split(","))):
        parts = item.split("-")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise UsageError(f"{name}: {value!r} is neither an offset nor MariaDB GTIDs "
                             "(domain-server-seq)")
        domain, _server, seq = map(int, parts)
        if domain in gtids:
            raise UsageError(f"{name}: two GTIDs of domain {domain}")
        gtids[domain] = seq
    return None, gtids


@contextlib.contextmanager
def _stdin_spooled(files: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """``-`` as a file: standard input, copied 1 MiB at a time to a temporary file
    (the reader seeks; memory stays flat), removed afterwards."""
    if "-" not in files:
        yield files
        return
    if files.count("-") > 1:
        raise UsageError("standard input (-) can be given once")
    import os
    import shutil
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix="repltool-stdin-")
    try:
        with os.fdopen(fd, "wb") as fh:
            shutil.copyfileobj(sys.stdin.buffer, fh, 1 << 20)
        yield tuple(tmp if f == "-" else f for f in files)
    finally:
        os.unlink(tmp)


def _rewrite_map(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        src, sep, dst = v.partition("->")
        if not sep or not src.strip() or not dst.strip():
            raise UsageError(f"--rewrite-db: {v!r} is not FROM->TO")
        out[src.strip()] = dst.strip()
    return out


@contextlib.contextmanager
def output_stream(result_file: str | None, inputs: tuple[str, ...],
                  force: bool) -> Iterator[BinaryIO]:
    """stdout's byte stream, or a temporary file beside ``result_file`` that replaces
    it when everything was written (an error leaves no partial file)."""
    if result_file is None:
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:              # a text-only stdout (an embedding caller's)
            yield _TextSink(sys.stdout)  # type: ignore[misc]
            return
        sys.stdout.flush()
        yield buffer
        buffer.flush()
        return
    from ..outputs import atomic_path
    with atomic_path(result_file, inputs, force=force, option="--result-file") as tmp:
        with open(tmp, "wb") as fh:
            yield fh


def _dump(files: tuple[str, ...], out: BinaryIO, o: dict[str, Any]) -> None:
    start, start_gtids = _position(o["start_position"], "--start-position")
    stop, stop_gtids = _position(o["stop_position"], "--stop-position")
    flt = EventFilter(
        list(files), start=start, stop=stop,
        start_dt=_parse_datetime(o["start_datetime"], "--start-datetime"),
        stop_dt=_parse_datetime(o["stop_datetime"], "--stop-datetime"),
        include=GtidFilter(o["include_gtids"]) if o["include_gtids"] else None,
        exclude=GtidFilter(o["exclude_gtids"]) if o["exclude_gtids"] else None,
        databases=o["databases"], tables=o["tables"], start_gtids=start_gtids,
        stop_gtids=stop_gtids, do_domains=_ids(o["do_domain_ids"], "--do-domain-ids"),
        ignore_domains=_ids(o["ignore_domain_ids"], "--ignore-domain-ids"),
        ignore_servers=_ids(o["ignore_server_ids"], "--ignore-server-ids"))
    fmt, verbose, writesets = o["fmt"], o["verbose"], o["writesets"]
    schema_files, schema_db = o["schema_files"], o["schema_db"]
    verify_checksum, keep_going = o["verify_checksum"], o["keep_going"]
    default_collation = o["default_collation"]
    rewrite = _rewrite_map(o["rewrite_dbs"])
    damage = _DamageCounter()
    if writesets or schema_files or default_collation:
        if not writesets:
            raise UsageError("--schema needs --writesets" if schema_files
                             else "--default-collation needs --writesets")
        _dump_writesets(files, flt, damage, schema_files, schema_db, verify_checksum, keep_going,
                        out, default_collation)
        damage_exit(damage.first, damage.n)
        return
    read: Iterator[Event] = read_events(
        files, ReadOptions(verify_checksum=verify_checksum, keep_going=keep_going))
    if rewrite:
        from ..binlog.rewrite_db import rewrite_databases
        read = rewrite_databases(read, rewrite)
    selected = flt.apply(read)
    if flt.databases or flt.tables:
        selected = flt.without_empty_xa(selected)
    events = damage.count(selected)
    rows = None
    if verbose:
        from .render_rows import RowsRenderer
        rows = RowsRenderer(verbose, numbered=o["numbered_columns"])
    if fmt == "jsonl":
        for ev in events:
            d = event_to_dict(ev)
            if rows is not None:
                rows.observe(ev)
                if isinstance(ev.body, RowsBody):
                    d["rows"] = rows.json_rows(ev)
            out.write(json_safe(json.dumps(d, ensure_ascii=False)).encode("utf-8"))
            out.write(b"\n")
    else:
        from .render_replay import ReplayPrinter, print_events, print_flashback
        printer = ReplayPrinter(out, base64_output=o["base64_output"], rows=rows,
                                terminal=o["terminal"], skip_gtids=o["skip_gtids"],
                                short_form=o["short_form"], hexdump=o["hexdump"],
                                table_metadata=o["print_table_metadata"])
        if o["flashback"]:
            from ..binlog.flashback import invert_window
            fde, trxs = invert_window(events)
            print_flashback(printer, fde, trxs)
        else:
            print_events(printer, events)
    damage_exit(damage.first, damage.n)


def _dump_writesets(files: tuple[str, ...], flt: EventFilter, damage: "_DamageCounter",
                    schema_files: tuple[str, ...], schema_db: str | None, verify_checksum: bool,
                    keep_going: bool, out: BinaryIO,
                    default_collation: str | None = None) -> None:
    """``--writesets``: one JSON line per transaction (always JSON, whatever ``--format``).

    Without selection options the logs go through the fused reader
    (:func:`repltool.writeset.read_writesets`), which falls back to the
    general path below, filters and damage counting included, on anything it
    does not take itself.
    """
    import dataclasses

    from ..writeset import READ_OPTIONS, load_schema, stream_writesets
    from ..writeset.fused import read_writeset_lines
    from ..writeset.jsonl import RecordWriter

    schema = load_schema(schema_files, default_db=schema_db) if schema_files else None
    opts = dataclasses.replace(READ_OPTIONS, verify_checksum=verify_checksum,
                               keep_going=keep_going)

    def general():  # type: ignore[no-untyped-def]
        return damage.count(flt.apply(read_events(files, opts)))

    writer = RecordWriter()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, *_a, **_k: click.echo(  # type: ignore[assignment]
            f"repltool: warning: {printable(str(message))}", err=True)
        if flt.active:
            lines: Iterator[str] = (writer.line(trx, ws)
                                    for trx, ws in stream_writesets(
                                        general(), schema, default_collation=default_collation))
        else:
            lines = read_writeset_lines(files, schema, verify_checksum=verify_checksum,
                                        general=general, writer=writer,
                                        default_collation=default_collation)
        batch: list[str] = []           # lines, written 256 at a time
        try:
            with _few_collections():
                for text in lines:
                    batch.append(text)
                    if len(batch) >= 256:
                        batch.append("")
                        out.write(json_safe("\n".join(batch)).encode("utf-8"))
                        batch.clear()
        finally:                        # what came before an error is printed, as before
            if batch:
                batch.append("")
                out.write(json_safe("\n".join(batch)).encode("utf-8"))


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often (restored afterwards).

    The extractor keeps large caches of key entries and creates no reference
    cycles per transaction, so the default thresholds only make the collector
    walk the caches again and again (about a tenth of ``--writesets``' time).
    """
    import gc
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], 100_000), 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


class _TextSink:
    """A byte sink over a text stream (undecodable bytes as lone surrogates)."""

    def __init__(self, text: Any) -> None:
        self.text = text

    def write(self, data: bytes) -> int:
        self.text.write(data.decode("utf-8", "surrogateescape"))
        return len(data)


class _DamageCounter:
    """Counts the DAMAGED_REGION pseudo-events of a --keep-going run as they pass."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.n = 0

    def count(self, events: Iterator[Event]) -> Iterator[Event]:
        for ev in events:
            if ev.type_code == DAMAGED_TYPE:
                self.n += 1
                if self.first is None and isinstance(ev.body, DamagedBody):
                    self.first = ev.body.error
            yield ev
