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
)
from ..binlog.gtid import GtidFilter
from ..errors import UsageError
from ..escape import json_safe, printable
from .render_replay import BASE64_MODES
from .options import damage_exit, files_argument, keep_going_option, verify_checksum_option

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
                 tables: tuple[str, ...]) -> None:
        self.first, self.last = files[0], files[-1]
        self.start, self.stop = start, stop
        self.start_dt, self.stop_dt = start_dt, stop_dt
        self.include, self.exclude = include, exclude
        self.databases = set(databases)
        self.tables = set(tables)
        self.gtid: str | None = None
        self.table_ids: dict[int, tuple[str, str]] = {}

    @property
    def active(self) -> bool:
        """Whether any option selects: otherwise every event passes unchanged."""
        return not (self.start is None and self.stop is None and self.start_dt is None
                    and self.stop_dt is None and self.include is None and self.exclude is None
                    and not self.databases and not self.tables)

    def apply(self, events: Iterator[Event]) -> Iterator[Event]:
        for ev in events:
            f = ev.pos.file
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

    def _track(self, ev: Event) -> None:
        body = ev.body
        if ev.type_code in _GTID_TYPES:
            if isinstance(body, GtidBody):
                self.gtid = body.gtid_text
            elif isinstance(body, MariaGtidBody):
                self.gtid = f"{body.domain_id}-{ev.server_id}-{body.seq_no}"
        elif ev.type_code in _CONTROL:
            self.gtid = None
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
        if self.databases or self.tables:
            return self._db_table_ok(ev)
        return True

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
@click.option("--start-position", type=click.IntRange(min=0),
              help="Skip events before this offset of the first file.")
@click.option("--stop-position", type=click.IntRange(min=0),
              help="Stop at the first event at or after this offset of the last file.")
@click.option("--start-datetime", help="Skip events before 'YYYY-MM-DD hh:mm:ss' (UTC).")
@click.option("--stop-datetime", help="Stop at the first event at or after this time (UTC).")
@click.option("--include-gtids", help="Only transactions in this GTID set "
              "(uuid:1-5,uuid:tag:3 or MariaDB 0-1-5).")
@click.option("--exclude-gtids", help="Leave out transactions in this GTID set.")
@click.option("--database", "-d", "databases", multiple=True,
              help="Only events of this database (repeatable).")
@click.option("--table", "tables", multiple=True,
              help="Only row events of this table, `table` or `db.table` (repeatable).")
@click.option("--verbose", "-v", count=True,
              help="Decode rows: -v prints them as ### pseudo-SQL (JSON: a \"rows\" list), "
                   "-vv adds column type comments.")
@click.option("--writesets", is_flag=True,
              help="Print one JSON object per transaction with the keys it wrote (MySQL 8.0 "
                   "writeset rules: key values, XXH64 hashes, DDL/empty/keyless/FK flags).")
@click.option("--schema", "schema_files", multiple=True, type=click.Path(dir_okay=False),
              help="With --writesets: CREATE TABLE statements (SHOW CREATE TABLE, mysqldump "
                   "--no-data) for UNIQUE and foreign keys (repeatable).")
@click.option("--schema-db", help="Database of unqualified tables in --schema files.")
@click.option("--base64-output", type=click.Choice(BASE64_MODES), default="auto",
              show_default=True,
              help="Text: auto prints the FDE and row events as BINLOG '...' statements "
                   "(replayable); decode-rows prints rows only as ### comments (with -v; not "
                   "replayable); never prints no BINLOG statement and refuses row events.")
@click.option("--skip-gtids", is_flag=True,
              help="Text: leave out the GTID statements (SET @@SESSION.GTID_NEXT, MariaDB "
                   "SET @@session.gtid_*), so that the server assigns new GTIDs.")
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
@verify_checksum_option
@keep_going_option
def dump(files: tuple[str, ...], fmt: str, start_position: int | None,
         stop_position: int | None, start_datetime: str | None, stop_datetime: str | None,
         include_gtids: str | None, exclude_gtids: str | None, databases: tuple[str, ...],
         tables: tuple[str, ...], verbose: int, writesets: bool, schema_files: tuple[str, ...],
         schema_db: str | None, base64_output: str, skip_gtids: bool, text_mode: str,
         flashback: bool, result_file: str | None, force: bool, verify_checksum: bool,
         keep_going: bool) -> None:
    """Print the events of binlogs / relay logs, read as one ordered sequence.

    The text output is what mysqlbinlog / mariadb-binlog print and can be piped
    into a server (point-in-time recovery): `repltool dump LOGS | mariadb`.
    Times are shown in UTC.  Events inside a Transaction_payload are shown after
    it with their offset inside the payload (`payload_pos`).
    """
    if flashback and (fmt != "text" or writesets or base64_output != "auto"):
        raise UsageError("--flashback prints replayable text: not with --format jsonl, "
                         "--writesets or --base64-output other than auto")
    with output_stream(result_file, files, force) as out:
        _dump(files, fmt, start_position, stop_position, start_datetime, stop_datetime,
              include_gtids, exclude_gtids, databases, tables, verbose, writesets,
              schema_files, schema_db, base64_output, skip_gtids,
              text_mode == "terminal" or (text_mode == "auto" and result_file is None
                                          and sys.stdout.isatty()),
              flashback, out, verify_checksum, keep_going)


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
    import os
    import tempfile
    target = os.path.abspath(result_file)
    for f in inputs:
        try:
            if os.path.exists(f) and os.path.samefile(f, target):
                raise UsageError(f"--result-file {result_file} is one of the input logs")
        except OSError:
            continue
    if os.path.exists(target) and not force:
        raise UsageError(f"--result-file {result_file} exists (--force replaces it)")
    fd, tmp = tempfile.mkstemp(prefix=".repltool-", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _dump(files: tuple[str, ...], fmt: str, start_position: int | None,
          stop_position: int | None, start_datetime: str | None, stop_datetime: str | None,
          include_gtids: str | None, exclude_gtids: str | None, databases: tuple[str, ...],
          tables: tuple[str, ...], verbose: int, writesets: bool,
          schema_files: tuple[str, ...], schema_db: str | None, base64_output: str,
          skip_gtids: bool, terminal: bool, flashback: bool, out: BinaryIO,
          verify_checksum: bool, keep_going: bool) -> None:
    flt = EventFilter(
        list(files), start=start_position, stop=stop_position,
        start_dt=_parse_datetime(start_datetime, "--start-datetime"),
        stop_dt=_parse_datetime(stop_datetime, "--stop-datetime"),
        include=GtidFilter(include_gtids) if include_gtids else None,
        exclude=GtidFilter(exclude_gtids) if exclude_gtids else None,
        databases=databases, tables=tables)
    damage = _DamageCounter()
    if writesets or schema_files:
        if not writesets:
            raise UsageError("--schema needs --writesets")
        _dump_writesets(files, flt, damage, schema_files, schema_db, verify_checksum, keep_going,
                        out)
        damage_exit(damage.first, damage.n)
        return
    events = damage.count(flt.apply(read_events(
        files, ReadOptions(verify_checksum=verify_checksum, keep_going=keep_going))))
    rows = None
    if verbose:
        from .render_rows import RowsRenderer
        rows = RowsRenderer(verbose)
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
        printer = ReplayPrinter(out, base64_output=base64_output, rows=rows,
                                terminal=terminal, skip_gtids=skip_gtids)
        if flashback:
            from ..binlog.flashback import invert_window
            fde, trxs = invert_window(events)
            print_flashback(printer, fde, trxs)
        else:
            print_events(printer, events)
    damage_exit(damage.first, damage.n)


def _dump_writesets(files: tuple[str, ...], flt: EventFilter, damage: "_DamageCounter",
                    schema_files: tuple[str, ...], schema_db: str | None, verify_checksum: bool,
                    keep_going: bool, out: BinaryIO) -> None:
    """``--writesets``: one JSON line per transaction (always JSON, whatever ``--format``).

    Without selection options the logs go through the fused reader
    (:func:`repltool.writeset.read_writesets`), which falls back to the
    general path below, filters and damage counting included, on anything it
    does not take itself.
    """
    import dataclasses

    from ..binlog import group_transactions
    from ..writeset import READ_OPTIONS, iter_writesets, load_schema
    from ..writeset.fused import read_writeset_lines
    from ..writeset.jsonl import RecordWriter

    schema = load_schema(schema_files, default_db=schema_db) if schema_files else None
    opts = dataclasses.replace(READ_OPTIONS, verify_checksum=verify_checksum,
                               keep_going=keep_going)

    def general():  # type: ignore[no-untyped-def]
        return group_transactions(damage.count(flt.apply(read_events(files, opts))),
                                  keep_events=True)

    writer = RecordWriter()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, *_a, **_k: click.echo(  # type: ignore[assignment]
            f"repltool: warning: {printable(str(message))}", err=True)
        if flt.active:
            lines: Iterator[str] = (writer.line(trx, ws)
                                    for trx, ws in iter_writesets(general(), schema))
        else:
            lines = read_writeset_lines(files, schema, verify_checksum=verify_checksum,
                                        general=general, writer=writer)
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
