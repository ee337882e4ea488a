"""``structs.fixed_head``: the ``struct.Struct`` layouts the byte-level decoders and writers
unpack with are the construct declarations' fields.

On real bodies of the corpus (MySQL and MariaDB), every derived layout unpacks the same
values construct parses with the declaration it was derived from, field by field, and
each field's ``offsets``/``ends`` slice holds that field's bytes (what the fast code
indexes with: ``fastdecode``, ``writer``, ``split``).  The derivation refuses every
field whose width the declaration does not fix.
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from functools import reduce
from pathlib import Path
from typing import Any

import pytest
from construct import (
    Bytes, BytesInteger, CString, GreedyBytes, Int8ul, Int16ul, Int32ub, Optional, Prefixed,
    Struct, Switch, this,
)

from repltool.binlog import EventType
from repltool.binlog import structs as S
from repltool.binlog.constants import HEADER_LEN, LOGICAL_TIMESTAMP_TYPECODE
from repltool.binlog.reader import ReadOptions, read_events, structs_for

from ._corpus import is_normal

#: events of one type compared per file (construct parses ~100 us a body)
PER_FILE = 40
_ROWS_V1 = (EventType.WRITE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT_V1,
            EventType.DELETE_ROWS_EVENT_V1)
_ROWS_V2 = (EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT,
            EventType.DELETE_ROWS_EVENT, EventType.PARTIAL_UPDATE_ROWS_EVENT)
_UPDATES = (EventType.UPDATE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT,
            EventType.PARTIAL_UPDATE_ROWS_EVENT)


def unpacked(layout: S.FixedLayout, data: bytes) -> dict[str, Any]:
    """The layout's items by field (a multi-piece integer put back together, low first)."""
    codes = re.findall(r"\d*[A-Za-z]", layout.struct.format[1:])
    assert len(codes) == len(layout.items)
    out: dict[str, Any] = {}
    shift: Counter[str] = Counter()
    for name, code, value in zip(layout.items, codes, layout.struct.unpack_from(data)):
        if isinstance(value, bytes):
            out[name] = value
        else:
            out[name] = out.get(name, 0) | value << shift[name]
            shift[name] += 8 * struct.calcsize("<" + code)
    return out


def check(layout: S.FixedLayout, data: bytes, parsed: Any) -> None:
    """Every field of ``layout`` unpacked from ``data`` equals construct's parse, and its
    ``offsets``/``ends`` slice holds it."""
    got = unpacked(layout, data)
    assert set(got) <= set(layout.offsets)
    for name, value in got.items():
        theirs = reduce(lambda c, k: c[k], name.split("."), parsed)
        raw = data[layout.offsets[name]:layout.ends[name]]
        if name == "extra_info":
            # Prefixed(Int16ul, ..., includelength=True): the layout holds the length field
            assert value == len(theirs) + len(raw), name
            assert int.from_bytes(raw, "little") == value
            continue
        assert value == theirs, name
        if isinstance(value, bytes):
            assert raw == value, name
        else:
            assert int.from_bytes(raw, "little") == value % (1 << 8 * len(raw)), name
    assert max(layout.ends.values()) == layout.size


def layouts_for(tc: int, structs: S.BinlogStructs,
                body: bytes) -> list[tuple[str, S.FixedLayout, bytes, Any]]:
    """The derived layouts that apply to a body of type ``tc`` (the fast decoders' own
    preconditions), each with the bytes it unpacks and construct's parse of them by the
    declaration it was derived from."""
    ph = structs.post_header
    if tc in (EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT):
        if len(body) >= S.GTID_HEAD.size \
                and body[S.GTID_HEAD.offsets["lt_type"]] == LOGICAL_TIMESTAMP_TYPECODE:
            parsed = S.gtid_body.parse(body)
            clock = body[S.GTID_HEAD.offsets["clock"]:]       # the writer's clock struct
            return [("gtid", S.GTID_HEAD, body, parsed),
                    ("clock", S.fixed_head(S.gtid_timestamps.cases[LOGICAL_TIMESTAMP_TYPECODE]),
                     clock, parsed.clock)]
    elif tc == EventType.QUERY_EVENT and ph(tc, 13) == S.QUERY_HEAD.size:
        return [("query", S.QUERY_HEAD, body, structs.query_body.parse(body))]
    elif tc in _ROWS_V2 and ph(tc, 10) == S.ROWS_V2_HEAD.size:
        return [("rows_v2", S.ROWS_V2_HEAD, body,
                 structs.rows_v2_body.parse(body, is_update=tc in _UPDATES))]
    elif tc in _ROWS_V1 and ph(tc, 8) == S.ROWS_V1_HEAD.size:
        return [("rows_v1", S.ROWS_V1_HEAD, body,
                 structs.rows_v1_body.parse(body, is_update=tc in _UPDATES))]
    elif tc == EventType.TABLE_MAP_EVENT and ph(tc, 8) == S.TABLE_MAP_HEAD.size:
        return [("table_map", S.TABLE_MAP_HEAD, body, structs.table_map_body.parse(body))]
    elif tc == EventType.MARIADB_GTID_EVENT:
        parsed = S.maria_gtid_body.parse(body)
        out = [("maria_gtid", S.MARIA_GTID_HEAD, body, parsed)]
        if parsed.commit_id is not None:
            out.append(("maria_commit", S.MARIA_GTID_COMMIT, body, parsed))
        return out
    elif tc == EventType.PREVIOUS_GTIDS_LOG_EVENT:
        parsed = S.gtid_set_encoding.parse(body)
        out = [("gtid_set", S.GTID_SET_HEAD, body, parsed)]
        if parsed.n_sids and not parsed.tagged:           # decode's in-place walk
            sid = body[S.GTID_SET_HEAD.size:]
            out.append(("gtid_set_sid", S.GTID_SET_SID, sid, parsed.sids[0]))
            if parsed.sids[0].n_intervals:
                out.append(("gtid_interval", S.GTID_INTERVAL, sid[S.GTID_SET_SID.size:],
                            parsed.sids[0].intervals[0]))
        return out
    elif tc == EventType.GTID_LIST_EVENT:
        parsed = S.gtid_list_body.parse(body)
        out = [("gtid_list", S.GTID_LIST_HEAD, body, parsed)]
        if parsed.gtids:
            out.append(("gtid_list_entry", S.GTID_LIST_ENTRY, body[S.GTID_LIST_HEAD.size:],
                        parsed.gtids[0]))
        return out
    elif tc == EventType.XID_EVENT:
        return [("xid", S.fixed_head(S.xid_body), body, S.xid_body.parse(body))]
    return []


def _maria_log(p: Path) -> bool:
    return (p.name.startswith(("mysql-bin.0", "relay-bin.0")) or p.suffix == ".inuse") \
        and p.parent.name != "encrypted"


def test_layouts_are_the_declarations_on_the_corpus(corpus: Path) -> None:
    files = [p for p in sorted(corpus.glob("mysql/*/*")) if p.is_file() and is_normal(p)]
    maria = sorted(corpus.glob("mariadb/*/*")) + sorted(corpus.glob("mariadb/relay/*/*"))
    files += [p for p in maria if p.is_file() and _maria_log(p)]
    compared: Counter[str] = Counter()
    for path in files:
        per_file: Counter[int] = Counter()
        structs = None
        opts = ReadOptions(types=frozenset({EventType.FORMAT_DESCRIPTION_EVENT}),
                           verify_checksum=False)
        for ev in read_events([path], opts):
            raw = ev.raw
            if len(raw) >= HEADER_LEN and per_file[-1] < PER_FILE:
                per_file[-1] += 1
                check(S.HEADER, raw, S.common_header.parse(raw))
                compared["header"] += 1
            if ev.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                structs = structs_for(ev.body)
                continue
            if structs is None or per_file[ev.type_code] >= PER_FILE:
                continue
            body = raw[HEADER_LEN:len(raw) - (4 if ev.crc is not None else 0)]
            for name, layout, data, parsed in layouts_for(ev.type_code, structs, body):
                per_file[ev.type_code] += 1
                check(layout, data, parsed)
                compared[name] += 1
    # every derived layout met real bodies
    assert set(compared) == {"header", "gtid", "clock", "query", "rows_v2", "rows_v1",
                             "table_map", "maria_gtid", "maria_commit", "xid", "gtid_set",
                             "gtid_set_sid", "gtid_interval", "gtid_list",
                             "gtid_list_entry"}, compared


def test_delta16_clock_is_the_declaration() -> None:
    """Typecode 3 (repltool's 16-bit delta) is written by repltool only: built by construct."""
    decl = S.gtid_timestamps.cases[3]
    for sn, delta in ((1, 0), (2**63 - 1, 65535), (-5, 7)):
        data = decl.build({"sequence_number": sn, "delta": delta})
        check(S.fixed_head(decl), data, decl.parse(data))
        assert S.GTID_CLOCKS[3].unpack(data) == (sn, delta)


def test_the_writers_layouts_are_the_declarations() -> None:
    """What the writer and the synth writer pack parses back through construct."""
    body = S.GTID_HEAD.struct.pack(1, bytes(range(16)), 7, LOGICAL_TIMESTAMP_TYPECODE, 3, 4)
    parsed = S.gtid_body.parse(body)
    assert (parsed.gtid_flags, parsed.sid, parsed.gno, parsed.lt_type,
            parsed.clock.last_committed, parsed.clock.sequence_number) == (
        1, bytes(range(16)), 7, LOGICAL_TIMESTAMP_TYPECODE, 3, 4)
    head = S.QUERY_HEAD.struct.pack(9, 1, 2, 3, 0) + b"db\x00SELECT 1"
    q = S.BinlogStructs._query(13).parse(head)
    assert (q.thread_id, q.exec_time, q.db_len, q.error_code, q.status_vars_len, q.db,
            q.query) == (9, 1, 2, 3, 0, b"db", b"SELECT 1")


@pytest.mark.parametrize("decl, through", [
    (S.gtid_body, None),                           # transaction_length: a packed integer
    (S.gtid_body, "clock"),                        # a Switch without its case
    (S.BinlogStructs._rows(10, v2=True), "width"),  # PackedInt
    (S.xa_prepare_body, None),                     # Bytes(this.gtrid_length)
    (S.rows_query_body, None),                     # GreedyBytes
    (S.user_var_body, None),                       # a Prefixed field that is not the last
    (S.gtid_tagged_body, None),                    # serialization varints
    (S.gtid_set_sid, "n_intervals"),               # a tag taken as present: Prefixed
    (Struct("a" / CString("utf8")), None),
    (Struct("a" / Int32ub), None),                 # big-endian
    (Struct("a" / BytesInteger(6, signed=True, swapped=True)), None),
    (Struct("a" / BytesInteger(6)), None),         # big-endian BytesInteger
    (Struct("n" / Int8ul, "a" / Switch(this.n, {1: Int8ul}), "b" / Bytes(this.n)), None),
    (Struct("a" / Optional(Prefixed(Int8ul, GreedyBytes)), "b" / Int16ul), None),
])
def test_refuses_what_has_no_fixed_width(decl: Struct, through: str | None) -> None:
    with pytest.raises(TypeError, match="no fixed width|not little-endian"):
        S.fixed_head(decl, through)


def test_refuses_unknown_fields_and_non_structs() -> None:
    with pytest.raises(ValueError, match="not a field"):
        S.fixed_head(S.gtid_body, "no_such_field")
    with pytest.raises(TypeError, match="not a Struct"):
        S.fixed_head(Int8ul)    # type: ignore[arg-type]


def test_typed_constants_are_the_declarations() -> None:
    """constants.py cannot import structs (structs imports it): its sizes are held here."""
    assert HEADER_LEN == S.HEADER.size == S.common_header.sizeof()
    assert S.EXPECTED_POST_HEADER[EventType.GTID_LOG_EVENT][-1] == S.GTID_HEAD.size
    assert S.EXPECTED_POST_HEADER[EventType.QUERY_EVENT][-1] == S.QUERY_HEAD.size
    assert S.EXPECTED_POST_HEADER[EventType.WRITE_ROWS_EVENT] == (S.ROWS_V2_HEAD.size,)
    assert S.EXPECTED_POST_HEADER[EventType.WRITE_ROWS_EVENT_V1][-1] == S.ROWS_V1_HEAD.size
    assert S.EXPECTED_POST_HEADER[EventType.TABLE_MAP_EVENT][-1] == S.TABLE_MAP_HEAD.size
    assert S.EXPECTED_POST_HEADER[EventType.ROTATE_EVENT][-1] == S.ROTATE_HEAD.size
