"""``repltool dump``: the events of logs, as mysqlbinlog-like text or JSON lines."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, BinaryIO, Iterator

import click

from ..binlog import ReadOptions, read_events
from ..binlog.constants import EventType
from ..binlog.describe import event_to_dict
from ..binlog.events import (
    Event, QueryBody, RowsBody, XaPrepareBody, XidBody,
)
from ..binlog.damage import DamageLog
from ..binlog.window import CONTROL_TYPES, GTID_TYPES, EventFilter, parse_ids
from ..errors import UsageError
from ..escape import json_safe, printable
from .render_replay import BASE64_MODES
from .options import (
    damage_exit, default_collation_option, few_collections, files_argument, keep_going_option,
    schema_db_option, verify_checksum_option, window_options,
)


def without_empty_xa(events: Iterator[Event]) -> Iterator[Event]:
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
        if ev.type_code in GTID_TYPES or ev.type_code in CONTROL_TYPES:
            if held:
                yield from held
            held, content = ([ev], False) if ev.type_code in GTID_TYPES else (None, False)
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


@click.command()
@files_argument
@click.option("--format", "fmt", type=click.Choice(["text", "jsonl"]), default="text",
              show_default=True, help="mysqlbinlog-like text, or one JSON object per event.")
@window_options
@click.option("--do-domain-ids", metavar="IDS",
              help="MariaDB: only transactions of these GTID domains (comma-separated).")
@click.option("--ignore-domain-ids", metavar="IDS",
              help="MariaDB: leave out transactions of these GTID domains.")
@click.option("--ignore-server-ids", metavar="IDS",
              help="MariaDB: leave out transactions whose GTID has these server ids.")
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
@schema_db_option
@default_collation_option
@verify_checksum_option
@keep_going_option
def dump(files: tuple[str, ...], **o: Any) -> None:
    """Print the events of binlogs / relay logs, read as one ordered sequence.

    The text output is what mysqlbinlog / mariadb-binlog print and can be piped
    into a server (point-in-time recovery): `repltool dump LOGS | mariadb`.
    FILE `-` reads a log from standard input.  Times are shown and read in
    --timezone: local time unless given, as mysqlbinlog (TZ, else
    /etc/localtime); a comment line names the zone.  Events
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
    import dataclasses
    window = dataclasses.replace(
        o["window"], do_domains=parse_ids(o["do_domain_ids"], "--do-domain-ids"),
        ignore_domains=parse_ids(o["ignore_domain_ids"], "--ignore-domain-ids"),
        ignore_servers=parse_ids(o["ignore_server_ids"], "--ignore-server-ids"))
    flt = window.event_filter(files)
    fmt, verbose, writesets = o["fmt"], o["verbose"], o["writesets"]
    schema_files, schema_db = o["schema_files"], o["schema_db"]
    verify_checksum, keep_going = o["verify_checksum"], o["keep_going"]
    default_collation = o["default_collation"]
    rewrite = _rewrite_map(o["rewrite_dbs"])
    damage = DamageLog()
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
    selected = flt.apply(read) if flt.active else read   # no option selects: all pass
    if window.needs_events:
        selected = without_empty_xa(selected)
    events = damage.count(selected)
    rows = None
    if verbose:
        from .render_rows import RowsRenderer
        rows = RowsRenderer(verbose, numbered=o["numbered_columns"])
    if fmt == "jsonl":
        from .render import current_timezone
        zone = current_timezone()
        for ev in events:
            d = event_to_dict(ev, zone)
            if rows is not None:
                rows.observe(ev)
                if isinstance(ev.body, RowsBody):
                    d["rows"] = rows.json_rows(ev)
            out.write(json_safe(json.dumps(d, ensure_ascii=False)).encode("utf-8"))
            out.write(b"\n")
    else:
        from .render_replay import ReplayPrinter, print_events, print_flashback, print_logs
        printer = ReplayPrinter(out, base64_output=o["base64_output"], rows=rows,
                                terminal=o["terminal"], skip_gtids=o["skip_gtids"],
                                short_form=o["short_form"], hexdump=o["hexdump"],
                                table_metadata=o["print_table_metadata"])
        if not (rewrite or flt.active or window.needs_events or o["flashback"] or keep_going):
            # no selection: the logs straight to the printer (the compiled one when it
            # covers the options), every event as read_events gives it
            print_logs(printer, files, ReadOptions(verify_checksum=verify_checksum,
                                                   keep_going=keep_going))
        elif o["flashback"]:
            from ..binlog.flashback import invert_window
            fde, trxs = invert_window(events)
            print_flashback(printer, fde, trxs)
        else:
            print_events(printer, events)
    damage_exit(damage.first, damage.n)


def _dump_writesets(files: tuple[str, ...], flt: EventFilter, damage: DamageLog,
                    schema_files: tuple[str, ...], schema_db: str | None, verify_checksum: bool,
                    keep_going: bool, out: BinaryIO,
                    default_collation: str | None = None) -> None:
    """``--writesets``: one JSON line per transaction (always JSON, whatever ``--format``).

    Without selection options the logs go through the fused reader
    (:func:`repltool.writeset.fused.read_writeset_lines`), which hands what it does
    not take itself to the general reader (``--keep-going`` and damage counting
    included); with them, through the general path below.
    """
    import dataclasses

    from ..writeset import READ_OPTIONS, load_schema, stream_writesets
    from ..writeset.fused import read_writeset_lines
    from ..writeset.jsonl import RecordWriter
    from .jsonlines import LineBatch

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
                                        keep_going=keep_going,
                                        # only a keep-going read yields damaged regions
                                        watch=damage.count if keep_going else None,
                                        writer=writer, default_collation=default_collation)
        batch = LineBatch(lambda text: out.write(text.encode("utf-8")))
        try:
            with few_collections():
                add = batch.add
                for text in lines:
                    add(text)
        finally:                        # what came before an error is printed, as before
            batch.flush()




class _TextSink:
    """A byte sink over a text stream (undecodable bytes as lone surrogates)."""

    def __init__(self, text: Any) -> None:
        self.text = text

    def write(self, data: bytes) -> int:
        self.text.write(data.decode("utf-8", "surrogateescape"))
        return len(data)
