"""``repltool dump`` text a server can replay (point-in-time recovery).

The statements are the ones ``mysqlbinlog`` (MySQL, ``client/mysqlbinlog.cc``,
``sql/log_event.cc`` ``*::print``) and ``mariadb-binlog`` (MariaDB,
``sql/log_event_client.cc``) print, so that ``repltool dump LOGS | mysql``
does what ``mysqlbinlog LOGS | mysql`` does:

* ``DELIMITER /*!*/;`` and the session prologue/epilogue
  (``PSEUDO_SLAVE_MODE``, ``COMPLETION_TYPE``);
* the Format_description event as a ``BINLOG '...'`` statement (base64 of the
  event's bytes), after a ``ROLLBACK`` when the server had just started;
* per Query event the session state it ran with, printed when it changes as
  mysqlbinlog's ``print_query_header`` does: ``use``, ``SET TIMESTAMP``,
  ``pseudo_thread_id``, the option bits of ``flags2``, ``sql_mode``,
  ``auto_increment_*``, the character sets (``/*!\\C cs */`` for the client),
  ``time_zone``, ``lc_time_names``, ``collation_database``,
  ``default_collation_for_utf8mb4`` (MySQL);
* Table_map and Rows events as one ``BINLOG '...'`` statement per statement
  (up to the event with ``STMT_END_F``), each event's bytes in base64;
* Intvar, Rand, User_var, XA, Xid (``COMMIT``);
* GTIDs: MySQL ``SET @@SESSION.GTID_NEXT='uuid:n'`` (``--skip-gtids`` leaves
  them out), MariaDB ``SET @@session.gtid_domain_id / server_id /
  gtid_seq_no`` and ``START TRANSACTION`` / ``XA START``.

Query text is written as the exact bytes of the log (it *is* the log's SQL);
what repltool composes from file data (names, GTIDs, user variable values)
is quoted with :mod:`repltool.escape`.  On a terminal (``terminal=True``) the
statements are shown made terminal-safe instead, and a statement that holds
control characters is commented out (not replayable as printed).
"""

from __future__ import annotations

import base64
import functools
import struct
import types
import zlib
from typing import Any, BinaryIO, Iterable, Mapping

from ..binlog import structs as S
from ..binlog.constants import (
    CHECKSUM_LEN, HEADER_LEN, MARIA_FL_ALLOW_PARALLEL, MARIA_FL_COMPLETED_XA,
    MARIA_FL_PREPARED_XA, MARIA_FL_STANDALONE, EventType,
)
from ..binlog.decode import parse_status_vars
from ..binlog.events import (
    DamagedBody, Event, FormatDescriptionBody, GtidBody, IncidentBody, IntvarBody,
    MariaGtidBody, QueryBody, RandBody, RowsBody, TableMapBody, UserVarBody, XaPrepareBody,
    XidBody,
)
from ..binlog.rows import decode_decimal
from ..errors import ReplToolError, UsageError
from ..escape import printable, sql_identifier, sql_string
from .render import event_header, terminal_sql, zone_comment

__all__ = ["ReplayPrinter", "BASE64_MODES", "charset_name", "collation_name", "print_events",
           "print_flashback", "print_logs", "base64_lines", "hexdump_lines"]

BASE64_MODES = ("auto", "never", "decode-rows")
DELIM = "/*!*/;"
#: bytes read at a time by the compiled text printer (``dump -v``): each read and the
#: buffer it extends are new ``bytes``; below the allocator's mmap threshold that the
#: console command fixes (``repltool.cli.MMAP_THRESHOLD``) they are recycled in the
#: heap instead of being mapped and faulted in afresh (bench/results/rssflat.md)
TEXT_CHUNK = 128 << 10

# flags2 option bits (MySQL sql/query_options.h = MariaDB sql/sql_priv.h).
_OPTION_AUTO_IS_NULL = 1 << 14
_OPTION_NO_CHECK_CONSTRAINT_CHECKS = 1 << 15        # MariaDB
_OPTION_NOT_AUTOCOMMIT = 1 << 19
_OPTION_EXPLICIT_DEF_TIMESTAMP = 1 << 24            # MariaDB
_OPTION_NO_FOREIGN_KEY_CHECKS = 1 << 26
_OPTION_RELAXED_UNIQUE_CHECKS = 1 << 27
_OPTION_IF_EXISTS = 1 << 28                         # MariaDB
# (bit, variable, True: the variable is ON when the bit is clear)
_FLAGS2_MYSQL = ((_OPTION_NO_FOREIGN_KEY_CHECKS, "foreign_key_checks", True),
                 (_OPTION_AUTO_IS_NULL, "sql_auto_is_null", False),
                 (_OPTION_RELAXED_UNIQUE_CHECKS, "unique_checks", True),
                 (_OPTION_NOT_AUTOCOMMIT, "autocommit", True))
_FLAGS2_MARIADB = _FLAGS2_MYSQL + (
    (_OPTION_NO_CHECK_CONSTRAINT_CHECKS, "check_constraint_checks", True),
    (_OPTION_IF_EXISTS, "sql_if_exists", False),
    (_OPTION_EXPLICIT_DEF_TIMESTAMP, "explicit_defaults_for_timestamp", False))

_ROWS_TYPES = frozenset({
    EventType.WRITE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT_V1,
    EventType.DELETE_ROWS_EVENT_V1, EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT,
    EventType.DELETE_ROWS_EVENT, EventType.PARTIAL_UPDATE_ROWS_EVENT,
    *(t for t in EventType if "ROWS_COMPRESSED" in t.name),
})
_TRANS_KEYWORDS = (b"BEGIN", b"COMMIT", b"ROLLBACK", b"XA ")


def collation_name(collation: int) -> str | None:
    """``SHOW COLLATION`` name of a collation id, None when repltool does not know it."""
    from ..writeset.collation import collation_by_id
    return collation_by_id(collation).name


def charset_name(collation: int) -> str | None:
    """The character set of a collation id (``utf8mb4`` for 45), None when unknown."""
    name = collation_name(collation)
    return None if name is None else name.split("_", 1)[0]


def base64_lines(raw: bytes) -> str:
    """An event's bytes as mysqlbinlog writes them in a BINLOG statement: base64 in
    lines of 76 characters, each line ending with a line feed."""
    return base64.encodebytes(raw).decode("ascii")


def hexdump_lines(raw: bytes, offset: int, *, mariadb: bool = False) -> str:
    """mysqlbinlog --hexdump's comment lines for an event's bytes: the 19-byte
    header by field, then 16 bytes a line with their ASCII (``.`` for the rest);
    offsets in hexadecimal, as mysqlbinlog prints them."""
    who = ("Master ID", "Master Pos") if mariadb else ("Source ID", "Source Pos")
    h = raw[:HEADER_LEN].hex(" ").split(" ")
    ts, tc, sid, size, pos, flags = (" ".join(h[S.HEADER.span(f)]) for f in S.HEADER.items)
    out = [f"# Position  Timestamp   Type   {who[0]}        Size      {who[1]}    Flags",
           f"# {offset:8x} {ts}   {tc}   {sid}   {size}   {pos}   {flags}"]
    for i in range(HEADER_LEN, len(raw), 16):
        chunk = raw[i:i + 16]
        hx = chunk[:8].hex(" ") + ("  " + chunk[8:].hex(" ") if len(chunk) > 8 else "")
        text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        out.append(f"# {offset + i:8x} {hx:<48} |{text}|")
    return "".join(line + "\n" for line in out)


# Status variables printed in a versioned comment when they change: (name, the MySQL
# version that has it)
_VERSIONED_VARS = (("default_collation_for_utf8mb4", 80011), ("sql_require_primary_key", 80013),
                   ("default_table_encryption", 80016))


class _Session:
    """What the printed statements have set so far (mysqlbinlog's PRINT_EVENT_INFO)."""

    def __init__(self) -> None:
        self.db: str | None = None
        self.thread_id: int | None = None
        self.flags2: int | None = None
        self.sql_mode: int | None = None
        self.auto_increment: tuple[int, int] | None = None
        self.charset: tuple[int, int, int] | None = None
        self.time_zone: bytes | None = None
        self.lc_time_names: int | None = None
        self.charset_database: int | None = None
        self.versioned: dict[str, int] = {}     # _VERSIONED_VARS by name
        self.domain_id: int | None = None
        self.server_id: int | None = None
        self.skip_parallel: int | None = None


class ReplayPrinter:
    """Writes replayable mysqlbinlog-style text for a stream of events, in order.

    :param out: a binary stream (query text is written as its bytes).
    :param base64_output: ``auto`` (BINLOG statements), ``never`` (no BINLOG
        statement: an error on row events, as mysqlbinlog's), ``decode-rows``
        (rows only as ``###`` comments with ``verbose``: not replayable).
    :param rows: a :class:`~repltool.cli.render_rows.RowsRenderer` for ``###``
        lines (``-v``), or None.
    :param terminal: make everything terminal-safe (not replayable as printed).
    :param skip_gtids: no GTID statements; :param short_form: statements only (no
        comments, no BINLOG statements); :param row_count: ``# Number of rows: N``
        after each statement's BINLOG; :param table_metadata: ``# Columns(...)`` per
        Table_map; :param hexdump: a hex dump of each event in comments.
    """

    def __init__(self, out: BinaryIO, *, base64_output: str = "auto", rows: Any = None,
                 terminal: bool = False, skip_gtids: bool = False, short_form: bool = False,
                 row_count: bool = True, table_metadata: bool = False,
                 hexdump: bool = False) -> None:
        if base64_output not in BASE64_MODES:
            raise ValueError(base64_output)
        self.out = out
        self.base64_output = base64_output
        self.rows = rows
        self.terminal = terminal
        self.skip_gtids = skip_gtids
        self.short_form = short_form
        self.row_count = row_count
        self.table_metadata = table_metadata
        self.hexdump = hexdump
        self._counter: Any = None          # a RowsRenderer that only counts rows
        self.s = _Session()
        self.mariadb: bool | None = None
        self.crc_on = False
        self.started = False
        self.gtid_next_set = False
        self.in_trx = False
        self.pending: list[str] = []        # base64 of Table_map/Rows events of a statement
        self.pending_rows: list[str] = []   # ### lines and row counts of the same statement
        self.printed_fde = False
        self._buf: list[str] = []           # text not yet written to out (see _w)
        self._buffered = 0
        self.core_events = 0                # events the compiled printer printed (print_logs)

    # ---- output ----

    def _w(self, text: str) -> None:
        """Write ``text`` (gathered, and written to ``out`` ~64 KiB at a time)."""
        self._buf.append(text)
        self._buffered += len(text)
        if self._buffered >= 1 << 16:
            self.flush()

    def _wb(self, data: bytes) -> None:
        self._w(data.decode("utf-8", "surrogateescape"))   # the same bytes when encoded

    def flush(self) -> None:
        """Write what is gathered to ``out`` (:meth:`finish` does it too)."""
        if self._buf:
            text = "".join(self._buf)
            self._buf.clear()
            self._buffered = 0
            self.out.write(text.encode("utf-8", "surrogateescape"))

    def _comment(self, ev: Event, description: str | None = None) -> None:
        if not self.short_form:
            text = event_header(ev, description)
            if self.mariadb and ev.type_code in (23, 24, 25):
                text = text.replace("_rows_v1: table id", "_rows: table id", 1)
            self._w(text)
        if self.hexdump and ev.raw:
            self._w(hexdump_lines(ev.raw, ev.pos.offset, mariadb=bool(self.mariadb)))

    # ---- prologue / epilogue ----

    def _begin(self, mariadb: bool) -> None:
        self.started = True
        self.mariadb = mariadb
        self._w("/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n")
        if mariadb:
            self._w("/*!40019 SET @@session.max_delayed_threads=0*/;\n")
        self._w("/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;\n"
                f"DELIMITER {DELIM}\n")
        if not self.short_form:
            self._w(zone_comment())

    def finish(self) -> None:
        """The epilogue (call once, after the last event, also after an error), then
        everything is written to ``out``."""
        try:
            self._epilogue()
        finally:
            self.flush()

    def _epilogue(self) -> None:
        if not self.started:
            return
        self._flush_rows(complete=False)
        if not self.mariadb:
            if self.in_trx:
                self._w(f"ROLLBACK /* added by repltool */ {DELIM}\n")
            if self.gtid_next_set:
                self._w(f"SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by repltool */ {DELIM}\n")
        self._w("DELIMITER ;\n# End of log file\n")
        if self.mariadb:
            self._w("ROLLBACK /* added by repltool */;\n")
        self._w("/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;\n"
                "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;\n")

    # ---- events ----

    def event(self, ev: Event) -> None:
        """Print one event (events must come in log order, FDE first)."""
        b = ev.body
        if isinstance(b, FormatDescriptionBody):
            if not self.started:
                self._begin(b.is_mariadb)
            self._fde(ev, b)
            return
        if not self.started:
            self._begin(False)
        tc = ev.type_code
        if isinstance(b, TableMapBody):
            self._table_map(ev, b)
            return
        if tc in _ROWS_TYPES and isinstance(b, RowsBody):
            self._rows_event(ev, b)
            return
        self._flush_rows(complete=False)
        if isinstance(b, DamagedBody):
            from .render import event_text
            self._w(event_text(ev))
            # a damaged region must not replay silently: stop the client, as mysqlbinlog
            # does for an Incident event
            self._w("RELOAD DATABASE; # repltool: damaged region - shall generate a "
                    "syntax error so that the replay stops here\n")
            return
        if isinstance(b, GtidBody):
            self._mysql_gtid(ev, b)
        elif isinstance(b, MariaGtidBody):
            self._maria_gtid(ev, b)
        elif isinstance(b, QueryBody):
            self._query(ev, b)
        elif isinstance(b, XidBody):
            self._comment(ev)
            self._w(f"COMMIT{DELIM}\n")
            self.in_trx = False
        elif isinstance(b, XaPrepareBody):
            self._comment(ev)
            xid = _xid(b.gtrid, b.bqual, b.format_id)
            self._w(f"XA COMMIT {xid} ONE PHASE\n{DELIM}\n" if b.one_phase
                    else f"XA PREPARE {xid}\n{DELIM}\n")
            self.in_trx = False
        elif isinstance(b, IntvarBody):
            self._comment(ev)
            name = {1: "LAST_INSERT_ID", 2: "INSERT_ID"}.get(b.type)
            if name is None:
                self._w(f"# repltool: unknown Intvar type {b.type}, value {b.value}\n")
            else:
                self._w(f"SET {name}={b.value}{DELIM}\n")
        elif isinstance(b, RandBody):
            self._comment(ev)
            self._w(f"SET @@RAND_SEED1={b.seed1}, @@RAND_SEED2={b.seed2}{DELIM}\n")
        elif isinstance(b, UserVarBody):
            self._comment(ev)
            text = self._user_var(b)
            if self.terminal:
                text = "".join(line + "\n" for line in
                               terminal_sql(text.splitlines(), (b.name,)))
            self._w(text)
        elif isinstance(b, IncidentBody):
            self._comment(ev)
            self._w("RELOAD DATABASE; # Shall generate syntax error\n")
        else:
            self._comment(ev)
            if ev.type_code == EventType.ANNOTATE_ROWS_EVENT or \
                    ev.type_code == EventType.ROWS_QUERY_LOG_EVENT:
                from .render import describe
                for line in describe(ev)[1]:
                    self._w(line + "\n")

    # -- FDE --

    def _fde(self, ev: Event, b: FormatDescriptionBody) -> None:
        self._flush_rows(complete=False)
        self.crc_on = b.checksum_alg == 1
        self._comment(ev)
        artificial = bool(ev.flags & 0x20)
        if b.create_timestamp and not artificial:
            self._w(f"ROLLBACK{DELIM}\n")
            self.in_trx = False
        if self.base64_output == "auto" and not self.short_form and ev.raw:
            self._w("BINLOG '\n" + base64_lines(ev.raw) + f"'{DELIM}\n")
            self.printed_fde = True

    # -- GTIDs --

    def _mysql_gtid(self, ev: Event, b: GtidBody) -> None:
        from .render import describe
        description, comments = describe(ev)
        self._comment(ev, description)
        if not self.short_form:         # "# original_commit_timestamp=... (date)" comments
            self._w("".join(line + "\n" for line in comments if line.startswith("# ")))
        if self.skip_gtids:
            return
        lines = []
        if not b.gtid_flags & 1:        # no statement-based events: rbr_only=yes
            lines.append(f"/*!50718 SET TRANSACTION ISOLATION LEVEL READ COMMITTED*/{DELIM}")
        if b.original_commit_timestamp is not None:
            lines.append(f"/*!80001 SET @@session.original_commit_timestamp="
                         f"{b.original_commit_timestamp}*/{DELIM}")
        if b.original_server_version is not None:
            lines.append(f"/*!80014 SET @@session.original_server_version="
                         f"{b.original_server_version}*/{DELIM}")
            lines.append(f"/*!80014 SET @@session.immediate_server_version="
                         f"{b.immediate_server_version}*/{DELIM}")
        lines.append(f"SET @@SESSION.GTID_NEXT= {sql_string(b.gtid_text)}{DELIM}")
        self._w("".join(line + "\n" for line in lines))
        self.gtid_next_set = True

    def _maria_gtid(self, ev: Event, b: MariaGtidBody) -> None:
        self._comment(ev)
        s = self.s
        out = []
        if not self.skip_gtids:
            skip = 0 if b.flags2 & MARIA_FL_ALLOW_PARALLEL else 1
            if s.skip_parallel != skip:
                out.append(f"/*M!100101 SET @@session.skip_parallel_replication={skip}*/{DELIM}")
                s.skip_parallel = skip
            if s.domain_id != b.domain_id:
                out.append(f"/*M!100001 SET @@session.gtid_domain_id={b.domain_id}*/{DELIM}")
                s.domain_id = b.domain_id
            if s.server_id != ev.server_id:
                out.append(f"/*M!100001 SET @@session.server_id={ev.server_id}*/{DELIM}")
                s.server_id = ev.server_id
            out.append(f"/*M!100001 SET @@session.gtid_seq_no={b.seq_no}*/{DELIM}")
        if b.flags2 & MARIA_FL_PREPARED_XA and b.xa_gtrid is not None:
            out.append(f"XA START {_xid(b.xa_gtrid, b.xa_bqual or b'', b.xa_format_id or 0)}"
                       f"{DELIM}")
            self.in_trx = True
        elif not b.flags2 & (MARIA_FL_STANDALONE | MARIA_FL_COMPLETED_XA):
            out.append(f"START TRANSACTION\n{DELIM}")
            self.in_trx = True
        self._w("".join(line + "\n" for line in out))

    # -- Query --

    def _query(self, ev: Event, b: QueryBody) -> None:
        self._comment(ev)
        q = b.query
        head = self._query_header(ev, b)
        if self.terminal:
            text = b.text
            lines = terminal_sql(head + [text, DELIM], (b.db,), text)
            self._w("".join(line + "\n" for line in lines))
        else:
            self._w("".join(line + "\n" for line in head))
            self._wb(q)
            self._w(f"\n{DELIM}\n")
        word = q[:9].upper()
        if word.startswith(b"BEGIN") or word.startswith(b"XA START"):
            self.in_trx = True
        elif word.startswith(b"COMMIT") or word.startswith(b"ROLLBACK") or \
                word.startswith(b"XA "):
            self.in_trx = False

    def _query_header(self, ev: Event, b: QueryBody) -> list[str]:
        """mysqlbinlog's print_query_header: the session state, where it changed."""
        s = self.s
        out: list[str] = []
        if ev.flags & 0x08:                                   # LOG_EVENT_SUPPRESS_USE_F
            if not b.query.lstrip()[:8].upper().startswith(_TRANS_KEYWORDS):
                s.db = ""
        elif b.db is not None:
            if b.db != s.db:
                s.db = b.db
                if b.db:
                    out.append(f"use {sql_identifier(b.db)}{DELIM}")
        sv = _status_vars(b.status_vars)
        ts = f"SET TIMESTAMP={ev.timestamp}"
        usec = sv.get("hrnow", sv.get("microseconds"))
        if usec:
            ts += f".{usec:06d}"
        out.append(ts + DELIM)
        if s.thread_id is None or (ev.flags & 0x04 and b.thread_id != s.thread_id):
            out.append(f"SET @@session.pseudo_thread_id={b.thread_id}{DELIM}")
            s.thread_id = b.thread_id
        flags2 = sv.get("flags2")
        if flags2 is not None:
            changed = ~0 if s.flags2 is None else s.flags2 ^ flags2
            parts = []
            for bit, name, inverted in (_FLAGS2_MARIADB if self.mariadb else _FLAGS2_MYSQL):
                if changed & bit:
                    on = not (flags2 & bit) if inverted else bool(flags2 & bit)
                    parts.append(f"@@session.{name}={int(on)}")
            if parts:
                out.append("SET " + ", ".join(parts) + DELIM)
            s.flags2 = flags2
        sql_mode = sv.get("sql_mode")
        if sql_mode is not None and sql_mode != s.sql_mode:
            out.append(f"SET @@session.sql_mode={sql_mode}{DELIM}")
            s.sql_mode = sql_mode
        ai = sv.get("auto_increment")
        auto = (ai.increment, ai.offset) if ai is not None else (1, 1)
        if auto != s.auto_increment:
            out.append(f"SET @@session.auto_increment_increment={auto[0]}, "
                       f"@@session.auto_increment_offset={auto[1]}{DELIM}")
            s.auto_increment = auto
        cs = sv.get("charset")
        if cs is not None:
            triple = (cs.client, cs.connection, cs.server)
            if triple != s.charset:
                name = charset_name(cs.client)
                if name is not None:
                    out.append(f"/*!\\C {name} */{DELIM}")
                client = name if (self.mariadb and name is not None) else str(cs.client)
                out.append(f"SET @@session.character_set_client={client},"
                           f"@@session.collation_connection={cs.connection},"
                           f"@@session.collation_server={cs.server}{DELIM}")
                s.charset = triple
        tz = sv.get("time_zone")
        if tz and tz != s.time_zone:
            out.append(f"SET @@session.time_zone="
                       f"{sql_string(bytes(tz).decode('utf-8', 'replace'))}{DELIM}")
            s.time_zone = bytes(tz)
        lc = sv.get("lc_time_names", 0)
        if lc != s.lc_time_names:
            out.append(f"SET @@session.lc_time_names={lc}{DELIM}")
            s.lc_time_names = lc
        cdb = sv.get("charset_database", 0)
        if cdb != s.charset_database:
            out.append(f"SET @@session.collation_database={cdb or 'DEFAULT'}{DELIM}")
            s.charset_database = cdb
        versioned = s.versioned
        for name, version in _VERSIONED_VARS:
            value = sv.get(name)
            if value is not None and value != versioned.get(name):
                out.append(f"/*!{version} SET @@session.{name}={value}*/{DELIM}")
                versioned[name] = value
        return out

    # -- User_var --

    def _user_var(self, b: UserVarBody) -> str:
        name = sql_identifier(b.name)
        if b.is_null or b.value is None:
            return f"SET @{name}:=NULL{DELIM}\n"
        v, t = b.value, b.value_type
        if t == 0:                          # STRING_RESULT
            cs = charset_name(b.charset or 63)
            coll = collation_name(b.charset or 63)
            lit = f"X'{v.hex()}'"
            if cs is None or coll is None:
                return (f"# repltool: collation id {b.charset} unknown: the value is set "
                        f"as binary\nSET @{name}:=_binary {lit}{DELIM}\n")
            return f"SET @{name}:=_{cs} {lit} COLLATE {sql_identifier(coll)}{DELIM}\n"
        if t == 1:                          # REAL_RESULT
            return f"SET @{name}:={struct.unpack('<d', v[:8])[0]!r}{DELIM}\n"
        if t == 2:                          # INT_RESULT
            unsigned = bool((b.flags or 0) & 1)
            n = int.from_bytes(v[:8], "little", signed=not unsigned)
            return f"SET @{name}:={n}{DELIM}\n"
        if t == 4 and len(v) >= 2:          # DECIMAL_RESULT: precision, scale, bin decimal
            try:
                d = decode_decimal(v[2:], v[0], v[1])
            except Exception:               # noqa: BLE001 - shown, not guessed
                return (f"# repltool: DECIMAL user variable {printable(b.name)} could not be "
                        f"decoded\nRELOAD DATABASE; # Shall generate syntax error\n")
            return f"SET @{name}:={d}{DELIM}\n"
        return (f"# repltool: user variable {printable(b.name)} of unknown type {t}\n"
                "RELOAD DATABASE; # Shall generate syntax error\n")

    # -- rows --

    def _raw_for_binlog(self, ev: Event) -> bytes:
        raw = ev.raw
        if ev.crc is None and self.crc_on and raw:
            # an event from inside a Transaction_payload has no CRC32 of its own: the
            # BINLOG statement is read under the FDE's checksum algorithm, so add one
            size = len(raw) + CHECKSUM_LEN
            raw = raw[:9] + size.to_bytes(4, "little") + raw[13:]
            raw += zlib.crc32(raw).to_bytes(4, "little")
        return raw

    def _table_map(self, ev: Event, b: TableMapBody) -> None:
        self._comment(ev)
        if self.table_metadata:
            self._w(self._metadata_lines(ev))
        if self.rows is not None:
            self.rows.observe(ev)
        if self.base64_output == "never":
            raise UsageError("--base64-output=never: the logs hold row events, which can "
                             "only be printed as BINLOG statements (use auto or decode-rows)",
                             pos=ev.pos, event_type=ev.type_name)
        if self.base64_output == "auto" and not self.short_form:
            self.pending.append(base64_lines(self._raw_for_binlog(ev)))

    def _metadata_lines(self, ev: Event) -> str:
        from ..binlog.coltypes import decode_table_map, type_label
        table = decode_table_map(ev.body, pos=ev.pos, event_type=ev.type_name)  # type: ignore[arg-type]
        cols = ", ".join(printable(c.label) + " " + type_label(c) for c in table.columns)
        out = [f"# Columns({cols})"]
        if table.primary_key:
            out.append("# Primary Key(" + ", ".join(
                printable(table.columns[i].label) + (f"({n})" if n else "")
                for i, n in table.primary_key) + ")")
        return "".join(line + "\n" for line in out)

    def _rows_event(self, ev: Event, b: RowsBody) -> None:
        self._comment(ev)
        if self.base64_output == "never":
            raise UsageError("--base64-output=never: the logs hold row events, which can "
                             "only be printed as BINLOG statements", pos=ev.pos,
                             event_type=ev.type_name)
        if self.base64_output == "auto" and not self.short_form:
            self.pending.append(base64_lines(self._raw_for_binlog(ev)))
        n: int | None = None
        if self.rows is not None:
            lines, n = self.rows.text_block(ev)
            self.pending_rows.extend(lines)
        elif self.row_count and not self.short_form:
            n = self._count(ev)
        if self.row_count and not self.short_form:
            if n is not None:
                self.pending_rows.append(f"# Number of rows: {n}")
        if b.flags & 1:                     # STMT_END_F
            self._flush_rows(complete=True)

    def _count(self, ev: Event) -> int | None:
        counter = self.rows if self.rows is not None else self._counter
        if counter is None or counter.tables.get(ev.body.table_id) is None:  # type: ignore[union-attr]
            return None
        try:
            return sum(1 for _ in counter.changes(ev)[1])
        except ReplToolError:               # a count is only a comment: no count
            return None

    def observe_table_map(self, ev: Event) -> None:
        """Let the row counter know a Table_map (called for every Table_map)."""
        if self.rows is not None or not self.row_count or self.short_form:
            return
        if self._counter is None:
            from .render_rows import RowsRenderer
            self._counter = RowsRenderer(0)
        try:
            self._counter.observe(ev)
        except ReplToolError:               # undecodable metadata: no count for its rows
            self._counter.tables.pop(ev.body.table_id, None)  # type: ignore[union-attr]

    def _flush_rows(self, *, complete: bool) -> None:
        if self.pending:
            self._w("BINLOG '\n" + "".join(self.pending) + f"'{DELIM}\n")
            if not complete:
                self._w("# repltool: the statement above ends without STMT_END_F (the log "
                        "or the selection cut it)\n")
        if self.pending_rows:
            self._w("".join(line + "\n" for line in self.pending_rows))
        self.pending.clear()
        self.pending_rows.clear()


def print_flashback(printer: ReplayPrinter, fde: Event | None, trxs: list[Any]) -> None:
    """``--flashback``: the FDE, then each inverted transaction (from
    :func:`repltool.binlog.flashback.invert_window`) as BEGIN, one BINLOG statement
    per inverted Rows event (with its Table_map), COMMIT.  No GTID statements: the
    server gives the undoing transactions GTIDs of their own."""
    try:
        if fde is not None:
            printer.event(fde)
        elif not printer.started:
            printer._begin(False)
        for trx in trxs:
            gtid = f" of {printable(trx.gtid)}" if trx.gtid else ""
            printer._w(f"# repltool flashback: undoes the transaction{gtid}\n"
                       f"BEGIN\n{DELIM}\n")
            for table_map, rows in trx.statements:
                printer._w("BINLOG '\n" + base64_lines(table_map) + base64_lines(rows)
                           + f"'{DELIM}\n")
            printer._w(f"COMMIT{DELIM}\n")
    finally:
        printer.finish()


@functools.lru_cache(maxsize=256)      # the transactions of a session repeat theirs
def _status_vars(raw: bytes) -> Mapping[str, Any]:
    """:func:`parse_status_vars`, read only (shared by the queries with the same bytes)."""
    return types.MappingProxyType(parse_status_vars(raw))


def _xid(gtrid: bytes, bqual: bytes, format_id: int) -> str:
    return f"X'{gtrid.hex()}',X'{bqual.hex()}',{format_id}"


def print_events(printer: ReplayPrinter, events: Iterable[Event]) -> None:
    """Feed ``events`` to ``printer``, then its epilogue (also when reading fails:
    then the rows of an unfinished statement are not printed, and the epilogue's
    ROLLBACK ends an unfinished transaction)."""
    try:
        for ev in events:
            if isinstance(ev.body, TableMapBody):
                printer.observe_table_map(ev)
            printer.event(ev)
    except BaseException:
        printer.pending.clear()
        printer.pending_rows.clear()
        printer.in_trx = True
        raise
    finally:
        printer.finish()



def print_logs(printer: ReplayPrinter, paths: Iterable[str], options: Any) -> None:
    """Print the logs ``paths`` (read with :class:`~repltool.binlog.ReadOptions`
    ``options``) as :func:`print_events` over :func:`~repltool.binlog.read_events`
    does, with the compiled printer (``_textcore.pxi``) taking the common events
    (MySQL and MariaDB GTIDs, Query, Table_map, Rows, Xid, Annotate_rows) when the
    engine is built and the printer's options are the ones it covers (``-v``/``-vv``,
    ``--base64-output`` auto or decode-rows, no other text option).  Every other event
    is printed by ``printer`` at exactly its place in the log, decoded from the bytes
    already read; the compiled printer goes on after it (nothing is read twice).
    ``printer.core_events`` counts the events the compiled printer printed."""
    from ..binlog.engine import compiled_core
    from ..binlog.reader import read_events
    core = compiled_core()
    if core is None or options.keep_going or not _core_covers(printer):
        print_events(printer, read_events(paths, options))
        return
    from .render import usec_text, when_text
    from .render_rows import core_text_program
    rows = printer.rows
    verbosity, numbered = rows.verbosity, rows.numbered

    def program(table: Any, bitmap: bytes, width: int) -> Any:
        return core_text_program(table, bitmap, width, verbosity, numbered, core.RowText)

    tp = core.TextPrinter(printer, rows, when_text, usec_text, program,
                          options.verify_checksum, printer.base64_output == "auto")
    try:
        for path in paths:
            _print_file(printer, tp, core, str(path), options)
        tp.hand_over()
    except BaseException:
        tp.write()
        tp.drop_pending()
        printer.pending.clear()
        printer.pending_rows.clear()
        printer.in_trx = True
        raise
    finally:
        printer.core_events += tp.taken
        printer.finish()


def _core_covers(printer: ReplayPrinter) -> bool:
    return (printer.base64_output in ("decode-rows", "auto") and printer.rows is not None
            and printer.row_count and not (printer.terminal or printer.skip_gtids
                                           or printer.short_form or printer.hexdump
                                           or printer.table_metadata))


def _print_file(printer: ReplayPrinter, tp: Any, core: Any, path: str, options: Any) -> None:
    from ..binlog.reader import (
        FileInfo, check_magic, events_in, open_log, resume_events,
    )
    fi = FileInfo(path, 0)
    fh, fi.size = open_log(path)
    with fh:
        check_magic(fi, fh.read(4), fh)
        buf, base, off = b"", 4, 0
        fde: Any = None
        while True:
            if fi.fde is not fde:
                fde = fi.fde
                _configure(printer, tp, fde)
            status, off = tp.feed(buf, off, base, fi.size)
            if status == core.TP_DONE:
                more = fh.read(TEXT_CHUNK)
                if not more:
                    if off < len(buf):          # a cut event: the reader says what is wrong
                        tp.hand_over()
                        _general(printer, tp, resume_events(fi, base + off, options))
                    return
                buf = buf[off:] + more
                base += off
                off = 0
                continue
            tp.hand_over()
            if status == core.TP_REST:
                _general(printer, tp, resume_events(fi, base + off, options))
                return
            size = int.from_bytes(buf[S.HEADER.span("event_size", off)], "little")
            _general(printer, tp, events_in(fi, buf[off:off + size], base + off, options))
            tp.take_over()
            off += size


def _general(printer: ReplayPrinter, tp: Any, events: Iterable[Event]) -> None:
    """Events printed by the general printer; a Table_map it printed is taught to the
    compiled printer (the next Table_maps with the same bytes are printed there)."""
    for ev in events:
        b = ev.body
        if isinstance(b, TableMapBody):
            printer.observe_table_map(ev)
            printer.event(ev)
            rows = printer.rows
            if rows is not None and rows.tables.get(b.table_id) is not None and ev.raw \
                    and ev.pos.payload_offset is None:
                from .render import describe
                end = len(ev.raw) - (CHECKSUM_LEN if ev.crc is not None else 0)
                tp.learn_table_map(ev.raw[HEADER_LEN:end], b.table_id,
                                   rows.tables.get(b.table_id), describe(ev)[0])
        else:
            printer.event(ev)
            if isinstance(b, QueryBody):       # (inside a payload too: it sets the session)
                sv = _status_vars(b.status_vars)
                usec = sv.get("hrnow", sv.get("microseconds"))
                db = printer.s.db
                tp.learn_query(b.status_vars, None if db is None else db.encode(),
                               f".{usec:06d}" if usec else "")


#: Rows event types the compiled printer takes, with their post-header length
_CORE_ROWS = {23: 8, 24: 8, 25: 8, 30: 10, 31: 10, 32: 10}


def _configure(printer: ReplayPrinter, tp: Any, fde: FormatDescriptionBody | None) -> None:
    """What the compiled printer takes under ``fde`` (nothing before the first FDE or
    under a layout the fast decoders do not read)."""
    from ..binlog.reader import structs_for
    from .render import ROWS_EVENT_NAMES
    roles: dict[int, int] = {}
    names: dict[int, bytes] = {}
    crc_on = False
    if fde is not None and printer.started:
        structs = structs_for(fde)
        crc_on = fde.checksum_alg == 1
        if not structs.lenient:
            def plain(tc: int, post_header: int | None) -> bool:
                return tc not in structs.opaque and (
                    post_header is None or structs.post_header(tc, post_header) == post_header)
            for tc, ph in _CORE_ROWS.items():
                if plain(tc, ph):
                    roles[tc] = 3
                    name = ROWS_EVENT_NAMES[tc]
                    if printer.mariadb and tc in (23, 24, 25):
                        name = name.replace("_rows_v1", "_rows")
                    names[tc] = (name + ": table id ").encode()
            if plain(EventType.TABLE_MAP_EVENT, 8):
                roles[EventType.TABLE_MAP_EVENT] = 2
            for tc in (EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT):
                if plain(tc, None):
                    roles[tc] = 1
            if plain(EventType.XID_EVENT, None):
                roles[EventType.XID_EVENT] = 4
            if plain(EventType.QUERY_EVENT, 13):
                roles[EventType.QUERY_EVENT] = 5
            if plain(EventType.MARIADB_GTID_EVENT, None):
                roles[EventType.MARIADB_GTID_EVENT] = 6
            if plain(EventType.ANNOTATE_ROWS_EVENT, None):
                roles[EventType.ANNOTATE_ROWS_EVENT] = 7
    tp.configure(roles, crc_on, names)
