"""Hand-built hostile logs: a real Format_description_event, then events we frame ourselves."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from repltool.binlog.structs import encode_packed_int
from repltool.binlog.writer import frame_event

#: MySQL 8.0.32, CRC32 (its first event is the FDE we borrow)
FDE_SOURCE = "mysql/rmc/test-data__binlogs__transaction_compression.000001"
#: MySQL 5.0, no checksums
FDE_SOURCE_NO_CRC = "mysql/mysql80/mysql-test__std_data__binlog_transaction.000001"
#: MariaDB 10.5, CRC32
FDE_SOURCE_MARIADB = "mysql/rmc/test-data__binlogs__mariadb-bin.000001"


@lru_cache(maxsize=None)
def fde_of(corpus: Path, name: str) -> bytes:
    data = (corpus / name).read_bytes()
    size = int.from_bytes(data[4 + 9:4 + 13], "little")
    return data[4:4 + size]


def log(fde: bytes, bodies: list[tuple[int, bytes]], *, crc: bool = True) -> bytes:
    """magic + ``fde`` + one framed event per (type_code, body), log_pos = end offsets."""
    out = bytearray(b"\xfebin" + fde)
    for tc, body in bodies:
        size = 19 + len(body) + (4 if crc else 0)
        out += frame_event(0, tc, 1, 0, body, crc=crc, log_pos=len(out) + size)
    return bytes(out)


def tlv(fields: dict[int, int]) -> bytes:
    out = b""
    for t, v in fields.items():
        enc = encode_packed_int(v)
        out += encode_packed_int(t) + encode_packed_int(len(enc)) + enc
    return out + b"\x00"


def payload_body(compressed: bytes, *, uncompressed: int | None, ctype: int = 0) -> bytes:
    fields = {1: len(compressed), 2: ctype}
    if uncompressed is not None:
        fields[3] = uncompressed
    return tlv(fields) + compressed


def zstd_zeros(mib: int) -> bytes:
    """A zstd frame of ``mib`` MiB of zeros (a few KiB), built without holding them."""
    import zstandard
    c = zstandard.ZstdCompressor().compressobj()
    chunk = bytes(1 << 20)
    out = b"".join(c.compress(chunk) for _ in range(mib))
    return out + c.flush()


# ---- crafted logs that claim or imply far more than they hold (tests/hostile/test_explode.py) ----

import struct as _struct  # noqa: E402

_HDR = _struct.Struct("<IBIIIH")
SID = bytes(range(1, 17))


def inner(tc: int, body: bytes) -> bytes:
    """An event inside a Transaction_payload: header (log_pos 0), body, no CRC."""
    return _HDR.pack(0, tc, 1, 19 + len(body), 0, 0) + body


def gtid(gno: int, lc: int, sn: int) -> bytes:
    """GTID_LOG_EVENT body: flags, uuid, gno, lt typecode 2, last_committed, sequence_number."""
    return b"\x01" + SID + _struct.pack("<qBqq", gno, 2, lc, sn)


def query(text: str, db: str = "db") -> bytes:
    return (_struct.pack("<IIBHH", 1, 0, len(db), 0, 0) + db.encode() + b"\x00"
            + text.encode())


def xid(n: int) -> bytes:
    return n.to_bytes(8, "little")


def table_map(table_id: int, types: bytes, metadata: bytes = b"", *, db: str = "db",
              table: str = "t") -> bytes:
    n = len(types)
    return (table_id.to_bytes(6, "little") + b"\x01\x00" + bytes([len(db)]) + db.encode()
            + b"\x00" + bytes([len(table)]) + table.encode() + b"\x00" + encode_packed_int(n)
            + types + encode_packed_int(len(metadata)) + metadata + b"\xff" * ((n + 7) // 8))


def write_rows(table_id: int, width: int, rows: bytes) -> bytes:
    """WRITE_ROWS_EVENT (v2) body: every column of ``width`` present."""
    bitmap = bytearray(b"\xff" * ((width + 7) // 8))
    if width % 8:
        bitmap[-1] = (1 << (width % 8)) - 1
    return (table_id.to_bytes(6, "little") + b"\x01\x00" + b"\x02\x00"
            + encode_packed_int(width) + bytes(bitmap) + rows)


def transaction(fde: object, gno: int, events: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """GTID, BEGIN, ``events``, XID (bodies for :func:`log`)."""
    return [(33, gtid(gno, gno - 1, gno)), (2, query("BEGIN")), *events, (16, xid(gno))]


def json_dag(levels: int, fanout: int) -> bytes:
    """A binary JSON document of ``levels`` nested small arrays, each holding ``fanout``
    entries that all point at the same inner array: a few hundred bytes that decode
    (without a bound) to fanout**levels values (json_binary.cc offsets are free to
    point anywhere in their container)."""
    doc = b"\x04\x01"                        # innermost: the literal true (type, value)
    inner_t, body = 0x04, b"\x01"
    for _ in range(levels):
        header = 4 + 3 * fanout              # count, size (16-bit) + value entries
        if inner_t == 0x04:
            entries = b"".join(b"\x04\x01\x00" for _ in range(fanout))   # inline literal
            body = _struct.pack("<HH", fanout, header) + entries
        else:
            size = header + len(body)
            entries = b"".join(b"\x02" + _struct.pack("<H", header) for _ in range(fanout))
            body = _struct.pack("<HH", fanout, size) + entries + body
        inner_t = 0x02
        doc = b"\x02" + body
    return doc
