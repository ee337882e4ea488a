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
