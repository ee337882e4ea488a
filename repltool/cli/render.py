"""Everything that turns library results into text for people (rich and plain)."""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from functools import lru_cache
from typing import Any

from ..binlog.events import (
    BinlogCheckpointBody, DamagedBody, Event, FormatDescriptionBody, GtidBody, GtidListBody,
    IncidentBody, IntvarBody, MariaGtidBody, PreviousGtidsBody, QueryBody, RandBody,
    RotateBody, RowsBody, RowsQueryBody, StartV3Body, TableMapBody, TransactionPayloadBody,
    UserVarBody, XaPrepareBody, XidBody,
)
from ..binlog.window import zone_name
from ..escape import has_controls, printable, printable_lines, sql_identifier, sql_string


def make_console(color: bool | None = None, **options: Any) -> Any:
    """A rich Console for reports: no markup or emoji codes are read from strings
    (``[bold]`` in a table name stays text), and control characters of every string
    and every rendered segment are shown as visible escapes (``\\x1b``).

    ``color``: ``--color/--no-color`` (None: colours only on a terminal).
    """
    from rich.console import Console
    from rich.segment import Segment

    from rich.table import Table

    class SafeConsole(Console):
        def render_str(self, text: str, **kw: Any) -> Any:  # type: ignore[override]
            return super().render_str(printable_lines(text), **kw)

        def print(self, *objects: Any, **kw: Any) -> None:  # type: ignore[override]
            # A word longer than the screen (a long path) is written whole and left
            # to the terminal to wrap: never cut at the right margin.
            kw.setdefault("crop", False)
            super().print(*objects, **kw)

        def render(self, renderable: Any, options: Any = None) -> Any:  # type: ignore[override]
            if isinstance(renderable, Table):
                renderable = fit_table(self, renderable, (options or self.options).max_width)
            for seg in super().render(renderable, options):
                if not seg.control and has_controls(seg.text):
                    seg = Segment(printable_lines(seg.text), seg.style, seg.control)
                yield seg

    if "width" not in options and not _stdout_is_terminal():
        # A pipe or a file: no width to fit, so nothing is cut or wrapped (rich would
        # otherwise assume 80 columns).
        options["width"] = PIPE_WIDTH
    return SafeConsole(no_color=color is False, force_terminal=color or None, markup=False,
                       emoji=False, **options)


#: The width text is laid out for when stdout is not a terminal: wide enough that
#: tables keep their natural width (rich lays out for 80 columns otherwise).
PIPE_WIDTH = 10_000


def _stdout_is_terminal() -> bool:
    import sys
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def fit_table(console: Any, table: Any, width: int) -> Any:
    """``table`` laid out so that no cell is cut or broken inside a word.

    A table narrower than ``width`` is left alone; a wider one gets fixed column
    widths no smaller than each column's longest word (cells wrap only at spaces,
    so identifiers - GTIDs, file:pos, table and mode names - stay whole); a table
    whose longest words alone do not fit becomes a stack of ``column: value`` lines,
    one block per row.  Only rich's public API is used: the table and its cells are
    measured with :class:`rich.measure.Measurement`, widths set on copies of its
    columns.
    """
    import copy

    from rich.measure import Measurement
    wide = console.options.update_width(PIPE_WIDTH)
    natural = Measurement.get(console, wide, table).maximum
    if natural <= width:
        return table
    table = copy.copy(table)
    table.columns = [copy.copy(c) for c in table.columns]
    ranges = [_content_range(console, wide, table, c) for c in table.columns]
    # borders and padding, as rich lays the table out
    extra = natural - sum(hi for _, hi in ranges)
    mins = [hi if c.no_wrap else lo for (lo, hi), c in zip(ranges, table.columns)]
    room = width - extra - sum(mins)
    if room < 0:
        return stacked_table(table, width)
    # Share the room among the columns in proportion to what they would still take.
    want = [hi - m for (_, hi), m in zip(ranges, mins)]
    total_want = sum(want) or 1
    for column, m, w in zip(table.columns, mins, want):
        column.width = max(1, m + (w * room) // total_want)
    return table


def _content_range(console: Any, options: Any, table: Any, column: Any) -> tuple[int, int]:
    """(minimum, maximum) width of a column's content, padding aside: its widest word,
    and its widest cell on one line (header and footer included)."""
    from rich.measure import Measurement
    if column.width is not None:
        return column.width, column.width
    cells = [*([column.header] if table.show_header else []), *column.cells,
             *([column.footer] if table.show_footer else [])]
    sizes = [Measurement.get(console, options, cell) for cell in cells]
    lo = max((m.minimum for m in sizes), default=1)
    hi = max((m.maximum for m in sizes), default=1)
    if column.min_width is not None:
        lo, hi = max(lo, column.min_width), max(hi, column.min_width)
    if column.max_width is not None:
        lo, hi = min(lo, column.max_width), min(hi, column.max_width)
    return lo, hi


def stacked_table(table: Any, width: int = 80) -> Any:
    """A table too wide for the screen as lines: its title, then per row the first
    cell and an indented ``header: value`` line for each other cell; a table without
    a header row becomes ``key: value`` lines.  Lines wrap at spaces only; a word
    longer than the screen is written whole (no cell is cut)."""
    from rich.console import Group
    from rich.text import Text

    def plain(cell: Any) -> str:
        return cell.plain if isinstance(cell, Text) else str(cell)

    def line(text: str, style: str = "") -> Any:
        import textwrap
        indent = " " * (len(text) - len(text.lstrip(" ")) + 2)
        wrapped = textwrap.fill(text, width, subsequent_indent=indent, break_long_words=False,
                                break_on_hyphens=False)
        return Text(wrapped, style=style, overflow="ignore")

    headers = [plain(c.header) for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    lines: list[Any] = []
    if table.title:
        lines.append(line(plain(table.title), "bold"))
    rows = max((len(c) for c in cells), default=0)
    for r in range(rows):
        row = [plain(c[r]) if r < len(c) else "" for c in cells]
        if not table.show_header:
            lines.append(line(f"{row[0]}: " + "  ".join(row[1:])))
            continue
        lines.append(line(f"{headers[0]}: {row[0]}" if headers[0] else row[0]))
        for h, v in zip(headers[1:], row[1:]):
            lines.append(line(f"  {h}: {v}" if h else f"  {v}"))
    return Group(*lines)


#: The zone datetimes are shown in (``--timezone``; set by each command).
_zone: tzinfo = timezone.utc


def set_timezone(zone: tzinfo) -> None:
    """Show datetimes in ``zone`` from now on (``--timezone``)."""
    global _zone
    _zone = zone


def current_timezone() -> tzinfo:
    """The zone datetimes are shown in (the last :func:`set_timezone`)."""
    return _zone


def zone_comment() -> str:
    """dump's line naming the zone of the ``#YYMMDD hh:mm:ss`` dates that follow (a SQL
    comment: a replay is unchanged)."""
    return (f"# repltool: the dates of the '#YYMMDD hh:mm:ss' lines are in time zone "
            f"{printable(zone_name(_zone))} (--timezone)\n")


def _when(ts: int) -> str:
    return _when_in(ts, _zone)


@lru_cache(maxsize=1024)         # a log's events share their seconds: one text per second
def _when_in(ts: int, zone: tzinfo) -> str:
    t = datetime.fromtimestamp(ts, zone)
    return t.strftime("%y%m%d") + f" {t.hour:2d}:{t.minute:02d}:{t.second:02d}"


def when_text(ts: int) -> str:
    """An event timestamp as the ``#YYMMDD hh:mm:ss`` of its header line (``--timezone``)."""
    return _when_in(ts, _zone)


def usec_text(ts: int) -> str:
    """A commit timestamp in microseconds as the GTID comment lines show it."""
    return _usec(ts)


def _usec(ts: int | None) -> str:
    if ts is None:
        return "n/a"
    secs, zone_name = _second_in(ts // 1_000_000, _zone)
    return f"{secs}.{ts % 1_000_000:06d} {zone_name}"


@lru_cache(maxsize=1024)
def _second_in(ts: int, zone: tzinfo) -> tuple[str, str]:
    t = datetime.fromtimestamp(ts, zone)
    return t.strftime("%Y-%m-%d %H:%M:%S"), t.tzname() or "UTC"


def event_header(ev: Event, description: str | None = None) -> str:
    """The ``# at N`` line and the ``#YYMMDD hh:mm:ss server id ...`` description line
    of an event (terminal-safe), as :func:`event_text` begins (``description``: the
    event's :func:`describe` text, when the caller has it)."""
    at = f"# at {ev.pos.offset}\n" if ev.pos.payload_offset is None else \
        f"# at {ev.pos.offset} payload_pos {ev.pos.payload_offset}\n"
    crc = f" CRC32 0x{ev.crc:08x}" if ev.crc is not None else ""
    head = f"#{_when(ev.timestamp)} server id {ev.server_id}  end_log_pos {ev.log_pos}{crc} \t"
    return at + head + (describe(ev)[0] if description is None else description) + "\n"


def event_text(ev: Event) -> str:
    """mysqlbinlog-like lines for one event (``# at N`` header, description, SQL)."""
    if isinstance(ev.body, DamagedBody):
        b = ev.body
        if ev.pos.payload_offset is not None:
            return (f"# at {ev.pos.offset} payload_pos {ev.pos.payload_offset}\n# DAMAGED "
                    f"PAYLOAD: the rest of this Transaction_payload skipped: "
                    f"{printable(b.reason)}\n")
        return (f"# at {ev.pos.offset}\n# DAMAGED REGION: bytes {ev.pos.offset}-"
                f"{ev.pos.offset + b.skipped} ({b.skipped} bytes) skipped: "
                f"{printable(b.reason)}\n")
    at = f"# at {ev.pos.offset}\n" if ev.pos.payload_offset is None else \
        f"# at {ev.pos.offset} payload_pos {ev.pos.payload_offset}\n"
    crc = f" CRC32 0x{ev.crc:08x}" if ev.crc is not None else ""
    head = f"#{_when(ev.timestamp)} server id {ev.server_id}  end_log_pos {ev.log_pos}{crc} \t"
    desc, sql = describe(ev)
    return at + head + desc + "\n" + "".join(line + "\n" for line in sql)


NOT_REPLAYABLE = ("# repltool: the statement below is commented out: control characters in "
                  "its text or names are shown as \\xNN escapes, so it is not SQL as printed")


def terminal_sql(lines: list[str], names: tuple[str, ...], text: str | None = None) -> list[str]:
    """SQL ``lines`` as they are, or commented out when a name holds a control character
    (a line feed or tab too) or the query ``text`` (one of the lines) holds one a terminal
    would act on (line feeds, tabs and CR LF are SQL white space)."""
    if not (any(printable(n) != n for n in names)
            or (text is not None and has_controls(text.replace("\r\n", "\n")))):
        return lines
    out = [NOT_REPLAYABLE]
    for line in lines:
        if text is not None and line is text:
            out.extend(f"# {part}" for part in printable_lines(line).split("\n"))
        else:
            out.append(f"# {printable(line)}")
    return out


def _lines(text: str) -> list[str]:
    """``text`` split at line feeds (CR LF counts as one), no empty last line."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


#: Rows event names as mysqlbinlog prints them (MySQL's get_type_str; mariadb-binlog
#: prints the v1 types, the only ones MariaDB writes, without ``_v1``).
ROWS_EVENT_NAMES = {23: "Write_rows_v1", 24: "Update_rows_v1", 25: "Delete_rows_v1",
                    30: "Write_rows", 31: "Update_rows", 32: "Delete_rows",
                    39: "Update_rows_partial",
                    166: "Write_rows_compressed_v1", 167: "Update_rows_compressed_v1",
                    168: "Delete_rows_compressed_v1", 169: "Write_rows_compressed",
                    170: "Update_rows_compressed", 171: "Delete_rows_compressed"}


def describe(ev: Event) -> tuple[str, list[str]]:
    """(description after the header line, SQL-ish lines) for an event.

    Text from the file is quoted for SQL (identifiers in backticks, strings as
    literals) and shown with visible escapes in ``#`` comment lines; a
    statement whose names or text hold control characters is commented out.
    """
    b = ev.body
    if isinstance(b, RowsBody):             # the most frequent bodies first
        flags = " flags: STMT_END_F" if b.flags & 1 else ""
        name = ROWS_EVENT_NAMES.get(ev.type_code) or ev.type_name
        return f"{name}: table id {b.table_id}{flags}", []
    if isinstance(b, TableMapBody):
        return (f"Table_map: {printable(sql_identifier(b.db))}."
                f"{printable(sql_identifier(b.table))} mapped to number {b.table_id}", [])
    if isinstance(b, FormatDescriptionBody):
        at = " at startup" if b.create_timestamp else ""
        return (f"Start: binlog v {b.binlog_version}, server v {printable(b.server_version)} "
                f"created {_when(b.create_timestamp or ev.timestamp)}{at}", [])
    if isinstance(b, StartV3Body):
        return (f"Start: binlog v {b.binlog_version}, server v {printable(b.server_version)} "
                "created "
                f"{_when(b.create_timestamp or ev.timestamp)}", [])
    if isinstance(b, GtidBody):
        return _gtid(b)
    if isinstance(b, MariaGtidBody):
        cid = f" cid={b.commit_id}" if b.commit_id is not None else ""
        trans = " trans" if b.flags2 & 0x04 else ""
        return (f"GTID {b.domain_id}-{ev.server_id}-{b.seq_no}{cid}{trans}",
                [f"/*!100001 SET @@session.gtid_seq_no={b.seq_no}*//*!*/;"])
    if isinstance(b, QueryBody):
        text = b.text
        return (f"Query\tthread_id={b.thread_id}\texec_time={b.exec_time}\t"
                f"error_code={b.error_code}",
                terminal_sql(([f"use {sql_identifier(b.db)}/*!*/;"] if b.db else [])
                     + [f"SET TIMESTAMP={ev.timestamp}/*!*/;", text, "/*!*/;"], (b.db,), text))
    if isinstance(b, XidBody):
        return f"Xid = {b.xid}", ["COMMIT/*!*/;"]
    if isinstance(b, RotateBody):
        return f"Rotate to {printable(b.next_file)}  pos: {b.position}", []
    if isinstance(b, PreviousGtidsBody):
        return "Previous-GTIDs", [f"# {printable(str(b.gtid_set)) or '[empty]'}"]
    if isinstance(b, GtidListBody):
        items = ",".join(f"{d}-{s}-{q}" for d, s, q in b.gtids)
        return f"Gtid list [{items}]", []
    if isinstance(b, BinlogCheckpointBody):
        return f"Binlog checkpoint {printable(b.file)}", []
    if isinstance(b, RowsQueryBody):
        return ("Annotate_rows:" if ev.type_code == 160 else "Rows_query",
                _query_comment(b.text))
    if isinstance(b, TransactionPayloadBody):
        kind = {0: "ZSTD", 255: "NONE"}.get(b.compression_type, str(b.compression_type))
        return (f"Transaction_Payload\tpayload_size={b.payload_size}\tcompression_type={kind}"
                f"\tuncompressed_size={b.uncompressed_size}", [])
    if isinstance(b, XaPrepareBody):
        return (f"XA PREPARE X'{b.gtrid.hex()}',X'{b.bqual.hex()}',{b.format_id}",
                [f"XA PREPARE X'{b.gtrid.hex()}',X'{b.bqual.hex()}',{b.format_id}", "/*!*/;"])
    if isinstance(b, IntvarBody):
        name = {1: "LAST_INSERT_ID", 2: "INSERT_ID"}.get(b.type, str(b.type))
        return "Intvar", [f"SET {name}={b.value}/*!*/;"]
    if isinstance(b, RandBody):
        return "Rand", [f"SET @@RAND_SEED1={b.seed1}, @@RAND_SEED2={b.seed2}/*!*/;"]
    if isinstance(b, UserVarBody):
        return "User_var", terminal_sql([f"SET @{sql_identifier(b.name)}:="
                                 f"{'NULL' if b.is_null else '...'}/*!*/;"], (b.name,))
    if isinstance(b, IncidentBody):
        return f"Incident: {b.incident} {printable(b.message)}", []
    name = ev.type_name
    return name, [] if b is not None else []


def _query_comment(text: str) -> list[str]:
    return [f"#Q> {printable(line)}" for line in _lines(text)]


def annotate_text(query: bytes) -> str:
    """The ``#Q>`` comment lines of an Annotate_rows / Rows_query event's query bytes
    (each line made :func:`~repltool.escape.printable`, each ending with a line feed)."""
    return "".join(line + "\n" for line in _query_comment(query.decode("utf-8", "replace")))


def _gtid(b: GtidBody) -> tuple[str, list[str]]:
    name = "Anonymous_GTID" if b.anonymous else "GTID"
    parts = [name]
    if b.lt_type is not None:
        parts.append(f"last_committed={b.last_committed}")
        parts.append(f"sequence_number={b.sequence_number}")
    parts.append(f"rbr_only={'no' if b.gtid_flags & 1 else 'yes'}")
    if b.original_commit_timestamp is not None:
        parts.append(f"original_committed_timestamp={b.original_commit_timestamp}")
        parts.append(f"immediate_commit_timestamp={b.immediate_commit_timestamp}")
    if b.transaction_length is not None:
        parts.append(f"transaction_length={b.transaction_length}")
    lines = []
    if b.original_commit_timestamp is not None:
        lines.append(f"# original_commit_timestamp={b.original_commit_timestamp} "
                     f"({_usec(b.original_commit_timestamp)})")
        lines.append(f"# immediate_commit_timestamp={b.immediate_commit_timestamp} "
                     f"({_usec(b.immediate_commit_timestamp)})")
    if b.original_server_version is not None:
        lines.append(f"/*!80014 SET @@session.original_server_version="
                     f"{b.original_server_version}*//*!*/;")
    lines.append(f"SET @@SESSION.GTID_NEXT= {sql_string(b.gtid_text)}/*!*/;")
    return "\t".join(parts), lines


# ---- paths ----

class ShortPaths:
    """Paths shortened to what tells them apart in text tables: their common directory
    is dropped from every one and shown once (:meth:`header`), so that wide tables
    wrap less at 80 columns.  Example: ``/data/mysql-bin.000001`` and
    ``/data/mysql-bin.000002`` become ``mysql-bin.000001`` and ``mysql-bin.000002``
    under ``files in /data/``."""

    def __init__(self, paths: Any) -> None:
        import os
        names = list(dict.fromkeys(os.fspath(p) for p in paths))
        try:
            common = os.path.commonpath([os.path.dirname(p) for p in names]) if names else ""
        except ValueError:              # absolute and relative paths mixed
            common = ""
        self.directory = "" if common in ("", os.curdir) else common
        self._names = set(names)

    def __call__(self, path: str) -> str:
        """``path`` without the common directory (other strings unchanged)."""
        import os
        if not self.directory or path not in self._names:
            return path
        return os.path.relpath(path, self.directory)

    @property
    def header(self) -> str:
        """``files in DIR/`` (empty when nothing was dropped)."""
        import os
        if not self.directory:
            return ""
        return f"files in {self.directory.rstrip(os.sep)}{os.sep}"

    def names(self, paths: Any) -> list[str]:
        return [self(p) for p in paths]


def files_rows(files: Any, sep: str = ", ") -> list[tuple[str, str]]:
    """A summary table's rows of ``files``: ``directory`` (their common directory, when
    there is one, :class:`ShortPaths`) and ``files`` (the names without it, ``sep``
    between them)."""
    short = ShortPaths(files)
    rows = [("directory", printable(short.directory))] if short.directory else []
    rows.append(("files", sep.join(printable(name) for name in short.names(files))))
    return rows


# ---- stats ----

#: Tables listed by the text output of ``stats`` (the title says when there are more).
TABLES_SHOWN = 20


def _local(ts: int | None) -> str:
    """A log timestamp (seconds) as date and time in the ``--timezone`` zone, with the
    zone's abbreviation unless it is UTC (the table's title says so then)."""
    if ts is None:
        return "-"
    try:
        text, name = _second_in(ts, _zone)
    except (OverflowError, OSError, ValueError):
        return str(ts)
    return text if _zone is timezone.utc else f"{text} {name}"


def _rows_table(t: Any) -> list[Any]:
    """Rows per table (inserted / updated / deleted), busiest first, and a line on the
    Rows events whose rows could not be counted."""
    from rich.table import Table
    from rich.text import Text
    shown = list(t.rows.items())[:TABLES_SHOWN]
    more = len(t.rows) - len(shown)
    unwalked = sum(c["unwalked_events"] for c in t.rows.values())
    tb = Table(title="Rows by table (an UPDATE row: one before/after pair)" + (
        f" - the {len(shown)} busiest of {len(t.rows)} (--format json lists all)"
        if more else ""))
    for col in ("table", "inserted", "updated", "deleted", "rows events"):
        tb.add_column(col, justify="left" if col == "table" else "right")
    if unwalked:
        tb.add_column("not counted", justify="right")
    for name, c in shown:
        cells = [printable(name), f"{c['inserted']:,}", f"{c['updated']:,}",
                 f"{c['deleted']:,}", f"{t.tables.get(name, 0):,}"]
        if unwalked:
            cells.append(f"{c['unwalked_events']:,}")
        tb.add_row(*cells)
    out: list[Any] = [tb]
    if unwalked:
        out.append(Text(f"{unwalked:,} Rows event(s) not counted: their table's Table_map "
                        "was not in the input (a log that starts inside a transaction) "
                        "or their row images do not fit it (\"not counted\" column)"))
    return out


def stats_tables(stats: Any) -> list[Any]:
    """rich renderables for a :class:`~repltool.stats.LogStats` (file-derived cells
    :func:`~repltool.escape.printable`; print them with :func:`make_console`)."""
    from rich.table import Table
    from rich.text import Text
    out: list[Any] = []
    short = ShortPaths(f.file for f in stats.files)
    if short.header:
        out.append(Text(printable(short.header)))
    files = Table(title="Files", show_lines=False)
    for col in ("file", "server", "bytes", "events", "transactions", "trunc.", "LC/SN trx",
                "barriers", "mean window", "max window"):
        files.add_column(col, justify="right" if col not in ("file", "server") else "left")
    rows = list(stats.files) + ([stats.total] if len(stats.files) > 1 else [])
    for f in rows:
        c = f.clock
        files.add_row(printable(short(f.file)), printable(f.server_version or "-"),
                      f"{f.size:,}",
                      f"{f.events:,}",
                      f"{f.transactions:,}", str(f.truncated_transactions),
                      f"{c.transactions:,}",
                      f"{c.barriers:,} ({c.barrier_share:.1%})" if c.transactions else "-",
                      f"{c.mean_window:.2f}" if c.transactions else "-",
                      str(c.max_window) if c.transactions else "-")
    out.append(files)
    if any(f.first_timestamp is not None for f in rows):
        ranges = Table(title="GTID and time range per file (transactions starting in it; "
                             f"times in {printable(zone_name(_zone))})")
        for col in ("file", "first GTID", "last GTID", "first transaction",
                    "last transaction ends"):
            ranges.add_column(col)
        for f in rows:
            ranges.add_row(printable(short(f.file)), printable(f.first_gtid or "-"),
                           printable(f.last_gtid or "-"), _local(f.first_timestamp),
                           _local(f.last_timestamp))
        out.append(ranges)
    t = stats.total
    types = Table(title="Events by type (all files)")
    types.add_column("type")
    types.add_column("count", justify="right")
    types.add_column("bytes", justify="right")
    for name, n in t.event_types.items():
        types.add_row(name, f"{n:,}", f"{t.event_bytes.get(name, 0):,}")
    out.append(types)
    if t.clock.transactions:
        dist = Table(title="sequence_number - last_committed (all files)")
        dist.add_column("distance")
        dist.add_column("transactions", justify="right")
        dist.add_column("share", justify="right")
        for k, n in t.clock.distance.items():
            dist.add_row(k, f"{n:,}", f"{n / t.clock.transactions:.1%}")
        out.append(dist)
    if t.commit_id_groups:
        g = Table(title="MariaDB group commits (commit_id runs)")
        g.add_column("group size")
        g.add_column("groups", justify="right")
        for k, n in t.commit_id_groups.items():
            g.add_row(k, f"{n:,}")
        out.append(g)
    if t.transaction_kinds:
        kinds = Table(title="Transactions by kind (all files)")
        kinds.add_column("kind")
        kinds.add_column("transactions", justify="right")
        kinds.add_column("share", justify="right")
        for kind, n in t.transaction_kinds.items():
            kinds.add_row(printable(kind), f"{n:,}", f"{n / t.transactions:.1%}"
                          if t.transactions else "-")
        out.append(kinds)
    if t.rows:
        out.extend(_rows_table(t))
    elif t.tables:
        shown = list(t.tables.items())[:TABLES_SHOWN]
        more = len(t.tables) - len(shown)
        tb = Table(title="Rows events by table" + (
            f" - the {len(shown)} busiest of {len(t.tables)} (--format json lists all)"
            if more else ""))
        tb.add_column("table")
        tb.add_column("rows events", justify="right")
        for name, n in shown:
            tb.add_row(printable(name), f"{n:,}")
        out.append(tb)
    for title, items, key in (("Biggest transactions", t.biggest, "size"),
                              ("Longest transactions (seconds)", t.longest, "duration")):
        if not items:
            continue
        if key == "duration" and not any(x.duration for x in items):
            out.append(Text("Longest transactions: every transaction lasted less than a "
                            "second (from its first event to its last; the log's event "
                            "timestamps are whole seconds)"))
            continue
        tt = Table(title=title)
        for col in ("gtid", "file:pos", key, "events"):
            tt.add_column(col, justify="right" if col in (key, "events") else "left")
        for x in items:
            tt.add_row(printable(x.gtid or "-"), printable(f"{short(x.file)}:{x.pos}"),
                       f"{getattr(x, key):,}",
                       f"{x.num_events:,}")
        out.append(tt)
    return out
