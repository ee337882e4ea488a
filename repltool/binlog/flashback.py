"""Flashback: the inverse of a window of row events (``dump --flashback``).

As ``mariadb-binlog --flashback`` (``-B``), binlog2sql, my2sql and MyFlash do,
each committed transaction of the window is undone by a transaction of
inverted Rows events, transactions and the events and rows inside them in
reverse order:

* Write_rows becomes Delete_rows of the same image, Delete_rows becomes
  Write_rows; Update_rows swaps its before and after images (and their
  column bitmaps);
* the events are re-encoded from the log's own bytes (post-header, extra
  info, bitmaps as logged; type code, rows and STMT_END_F changed, CRC32
  recomputed); MariaDB's compressed Rows events become the uncompressed type.

What cannot be inverted is refused with :class:`NotInvertible`, naming the
event: DDL and other statements (a Query event other than BEGIN/COMMIT/
ROLLBACK/XA), statement-based events (Intvar, Rand, User_var, LOAD DATA),
images without every column (``binlog_row_image=MINIMAL``/``NOBLOB``: the
inverse would not find or not restore the whole row), MySQL's partial JSON
updates, an XA transaction prepared but not committed in the window, a window
that ends inside a transaction.  An XA transaction rolled back in the window
changed nothing and is left out.

The window is held in memory (a flashback must reverse it).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Iterable

from ..errors import ReplToolError
from .coltypes import TableDef, decode_table_map
from .constants import CHECKSUM_LEN, HEADER_LEN, EventType, type_name
from .events import (
    Event, FormatDescriptionBody, GtidBody, MariaGtidBody, QueryBody, RowsBody, TableMapBody,
    XaPrepareBody, XidBody,
)
from .rows import RowImage, iter_row_changes
from .structs import encode_packed_int

__all__ = ["NotInvertible", "InvertedTransaction", "invert_window", "invert_rows_event",
           "query_xid", "xid_key"]


class NotInvertible(ReplToolError):
    """A window of events that flashback cannot undo (DDL, statements, partial images)."""

    exit_code = 1


#: type code -> (its inverse, whether the images swap)
_INVERSE: dict[int, int] = {
    EventType.WRITE_ROWS_EVENT_V1: EventType.DELETE_ROWS_EVENT_V1,
    EventType.DELETE_ROWS_EVENT_V1: EventType.WRITE_ROWS_EVENT_V1,
    EventType.UPDATE_ROWS_EVENT_V1: EventType.UPDATE_ROWS_EVENT_V1,
    EventType.WRITE_ROWS_EVENT: EventType.DELETE_ROWS_EVENT,
    EventType.DELETE_ROWS_EVENT: EventType.WRITE_ROWS_EVENT,
    EventType.UPDATE_ROWS_EVENT: EventType.UPDATE_ROWS_EVENT,
    # MariaDB compressed (sql/log_event.h): 166-168 v1, 169-171 v2 -> uncompressed inverse
    166: EventType.DELETE_ROWS_EVENT_V1, 168: EventType.WRITE_ROWS_EVENT_V1,
    167: EventType.UPDATE_ROWS_EVENT_V1,
    169: EventType.DELETE_ROWS_EVENT, 171: EventType.WRITE_ROWS_EVENT,
    170: EventType.UPDATE_ROWS_EVENT,
}
_UPDATES = frozenset({EventType.UPDATE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT, 167, 170})
_V2 = frozenset({EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT,
                 EventType.DELETE_ROWS_EVENT, 169, 170, 171})
_STATEMENT_EVENTS = frozenset({EventType.INTVAR_EVENT, EventType.RAND_EVENT,
                               EventType.USER_VAR_EVENT, EventType.LOAD_EVENT,
                               EventType.NEW_LOAD_EVENT, EventType.BEGIN_LOAD_QUERY_EVENT,
                               EventType.EXECUTE_LOAD_QUERY_EVENT,
                               EventType.APPEND_BLOCK_EVENT, EventType.CREATE_FILE_EVENT,
                               EventType.EXEC_LOAD_EVENT, EventType.DELETE_FILE_EVENT})
_STMT_END_F = 0x0001


@dataclass
class InvertedTransaction:
    """One transaction of the window, undone: (Table_map bytes, inverted Rows bytes)
    pairs in the order to apply them."""

    gtid: str | None
    statements: list[tuple[bytes, bytes]] = field(default_factory=list)


def _image_len(img: RowImage, n_present: int) -> int:
    """Bytes of a row image: its NULL bitmap (one bit per present column) and values."""
    return ((n_present + 7) >> 3) + sum(len(r) for r in img.raw if r is not None)


def invert_rows_event(ev: Event, table: TableDef, post_header_len: int, *,
                      crc: bool) -> bytes:
    """The bytes of the event that undoes Rows event ``ev`` (rows in reverse order,
    ``STMT_END_F`` set, CRC32 when ``crc``).

    :raises NotInvertible: partial images, partial JSON updates, unknown types.
    """
    b = ev.body
    assert isinstance(b, RowsBody)
    tc = ev.type_code
    new_tc = _INVERSE.get(tc)
    if new_tc is None:
        raise NotInvertible(f"{type_name(tc)} cannot be inverted (partial JSON updates "
                            "lack the old values)", pos=ev.pos, event_type=ev.type_name)
    width = b.width
    full = (1 << width) - 1
    before_mask = int.from_bytes(b.columns_before, "little") & full
    after_mask = int.from_bytes(b.columns_after or b"", "little") & full
    if width != len(table.columns) or before_mask != full or \
            (tc in _UPDATES and after_mask != full):
        raise NotInvertible(
            f"rows of {table.qualified_name} do not carry every column (binlog_row_image="
            "MINIMAL or NOBLOB): the inverse could not find or restore the whole row; "
            "flashback needs binlog_row_image=FULL", pos=ev.pos, event_type=ev.type_name)
    # the images are cut out of the logged rows as they are (their NULL bitmaps'
    # padding bits included): only their order changes
    rows: list[bytes] = []
    data, p = b.rows, 0
    for ch in iter_row_changes(table, b, tc, pos=ev.pos):
        if ch.kind == "update":
            assert ch.before is not None and ch.after is not None
            q = p + _image_len(ch.before, width)
            r = q + _image_len(ch.after, width)
            rows.append(data[q:r] + data[p:q])
        else:
            img = ch.after if ch.kind == "insert" else ch.before
            assert img is not None
            r = p + _image_len(img, width)
            rows.append(data[p:r])
        p = r
    if p != len(data):
        raise NotInvertible(f"{len(data) - p} bytes after the last row", pos=ev.pos,
                            event_type=ev.type_name)
    rows.reverse()
    tid_len = 4 if post_header_len == 6 else 6
    prefix_len = HEADER_LEN + tid_len + 2
    if tc in _V2 and post_header_len >= 10:
        prefix_len += 2 + len(b.extra_info)
    nbitmaps = 2 if tc in _UPDATES else 1
    prefix_len += len(encode_packed_int(width)) + nbitmaps * ((width + 7) >> 3)
    head = bytearray(ev.raw[:prefix_len])
    if len(head) != prefix_len:
        raise NotInvertible("rows event shorter than its header", pos=ev.pos,
                            event_type=ev.type_name)
    head[4] = new_tc
    flags_at = HEADER_LEN + tid_len
    flags = int.from_bytes(head[flags_at:flags_at + 2], "little") | _STMT_END_F
    head[flags_at:flags_at + 2] = flags.to_bytes(2, "little")
    if nbitmaps == 2:               # the images swap: so do their column bitmaps
        n = (width + 7) >> 3
        bm = head[prefix_len - 2 * n:]
        head[prefix_len - 2 * n:] = bm[n:] + bm[:n]
    raw = bytes(head) + b"".join(rows)
    size = len(raw) + (CHECKSUM_LEN if crc else 0)
    raw = raw[:9] + size.to_bytes(4, "little") + b"\0\0\0\0" + raw[17:]   # log_pos 0
    if crc:
        raw += zlib.crc32(raw).to_bytes(4, "little")
    return raw


def _with_crc(raw: bytes, has_crc: bool, crc: bool) -> bytes:
    """A Table_map's bytes for a BINLOG statement read under the FDE's checksum."""
    if has_crc or not crc:
        return raw
    raw = raw[:9] + (len(raw) + CHECKSUM_LEN).to_bytes(4, "little") + raw[13:]
    return raw + zlib.crc32(raw).to_bytes(4, "little")


_TRX_WORDS = (b"BEGIN", b"COMMIT", b"ROLLBACK", b"START TRANSACTION")


def invert_window(events: Iterable[Event]) -> tuple[Event | None, list[InvertedTransaction]]:
    """(the first FDE, the window's committed transactions inverted, last first).

    :raises NotInvertible: on the first event that cannot be undone.
    """
    fde_ev: Event | None = None
    fde: FormatDescriptionBody | None = None
    tables: dict[int, tuple[Event, TableDef]] = {}
    done: list[InvertedTransaction] = []
    current: InvertedTransaction | None = None
    xa_pending: dict[str, InvertedTransaction] = {}
    gtid: str | None = None
    for ev in events:
        b = ev.body
        tc = ev.type_code
        if isinstance(b, FormatDescriptionBody):
            if fde_ev is None:
                fde_ev = ev
            fde = b
            continue
        if isinstance(b, (GtidBody, MariaGtidBody)):
            gtid = b.gtid_text if isinstance(b, GtidBody) else \
                f"{b.domain_id}-{ev.server_id}-{b.seq_no}"
            current = InvertedTransaction(gtid)
            continue
        if isinstance(b, TableMapBody):
            tables[b.table_id] = (ev, decode_table_map(b, pos=ev.pos, event_type=ev.type_name))
            continue
        if isinstance(b, RowsBody):
            entry = tables.get(b.table_id)
            if entry is None or fde is None:
                raise NotInvertible(f"no Table_map for table id {b.table_id} in the window",
                                    pos=ev.pos, event_type=ev.type_name)
            tm_ev, table = entry
            crc = fde.checksum_alg == 1
            inv = invert_rows_event(ev, table, fde.post_header_len[tc - 1], crc=crc)
            if current is None:
                current = InvertedTransaction(gtid)
            current.statements.append((_with_crc(tm_ev.raw, tm_ev.crc is not None, crc), inv))
            continue
        if isinstance(b, XidBody):
            if current is not None and current.statements:
                done.append(current)
            current = None
            continue
        if isinstance(b, XaPrepareBody):
            if current is not None and current.statements:
                if b.one_phase:
                    done.append(current)
                else:
                    xa_pending[xid_key(b.gtrid, b.bqual, b.format_id)] = current
            current = None
            continue
        if isinstance(b, QueryBody):
            q = b.query.strip()
            word = q[:17].upper()
            if word.startswith(_TRX_WORDS):
                if word.startswith(b"COMMIT") and current is not None and current.statements:
                    done.append(current)
                if not word.startswith(b"BEGIN") and not word.startswith(b"START"):
                    current = None
                continue
            if word.startswith(b"XA "):
                verb = q[3:].lstrip().upper()
                if verb.startswith((b"START", b"BEGIN", b"END")):
                    continue
                key = query_xid(q)
                if verb.startswith(b"COMMIT"):
                    if verb.rstrip().endswith(b"ONE PHASE"):
                        if current is not None and current.statements:
                            done.append(current)
                        current = None
                        continue
                    trx = xa_pending.pop(key, None) if key is not None else None
                    if trx is not None:
                        done.append(trx)
                    current = None
                    continue
                if verb.startswith(b"ROLLBACK"):
                    if key is not None:
                        xa_pending.pop(key, None)
                    current = None
                    continue
            raise NotInvertible(
                "the window holds a statement (DDL or statement-based DML), which flashback "
                "cannot undo: " + b.text[:80].replace("\n", " "), pos=ev.pos,
                event_type=ev.type_name)
        if tc in _STATEMENT_EVENTS:
            raise NotInvertible("statement-based event: flashback undoes row events only",
                                pos=ev.pos, event_type=ev.type_name)
        if tc == EventType.PARTIAL_UPDATE_ROWS_EVENT:
            raise NotInvertible("partial JSON update: the old values are not in the log",
                                pos=ev.pos, event_type=ev.type_name)
    if current is not None and current.statements:
        raise NotInvertible(f"the window ends inside a transaction"
                            f"{' (' + current.gtid + ')' if current.gtid else ''}: its commit "
                            "is not in the window; move --stop-position/--stop-datetime to "
                            "a transaction boundary")
    if xa_pending:
        raise NotInvertible(f"XA transaction prepared but not committed in the window: "
                            f"{', '.join(sorted(xa_pending))}")
    done.reverse()
    for trx in done:
        trx.statements.reverse()
    return fde_ev, done


def xid_key(gtrid: bytes, bqual: bytes, format_id: int) -> str:
    """An XA xid as the server logs it: ``X'gtrid',X'bqual',format_id``."""
    return f"X'{gtrid.hex()}',X'{bqual.hex()}',{format_id}"


def query_xid(q: bytes) -> str | None:
    """The xid of ``XA COMMIT X'..',X'..',n`` as the server logs it, normalised."""
    m = re.search(rb"X'([0-9a-fA-F]*)',\s*X'([0-9a-fA-F]*)',\s*(\d+)", q)
    if m is None:
        return None
    return xid_key(bytes.fromhex(m.group(1).decode()), bytes.fromhex(m.group(2).decode()),
                    int(m.group(3)))

