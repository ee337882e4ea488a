"""``--rewrite-db=FROM->TO``: events of database FROM as events of database TO.

As mysqlbinlog's ``--rewrite-db`` (MySQL ``client/mysqlbinlog.cc``
``rewrite_db_filter``, MariaDB ``Table_map_log_event::rewrite_db``): the
default database of Query events (what ``use`` sets) and the database of
Table_map events are renamed; database names written inside a statement's
text are not.  A Table_map's bytes are re-encoded with the new name
(``event_size`` and the CRC32 follow), so that its ``BINLOG`` statement
replays into TO.
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import Iterator, Mapping

from ..errors import UsageError
from . import structs as S
from .constants import CHECKSUM_LEN, HEADER_LEN
from .events import Event, FormatDescriptionBody, QueryBody, TableMapBody

__all__ = ["rewrite_databases", "rewrite_table_map"]


def rewrite_table_map(raw: bytes, new_db: str, *, post_header_len: int, crc: bool) -> bytes:
    """A Table_map event's bytes with its database name replaced.

    ``post_header_len``: the FDE's for TABLE_MAP (6: 4-byte table id, else 6-byte).
    """
    name = new_db.encode("utf-8")
    if len(name) > 255:
        raise UsageError(f"--rewrite-db: database name {new_db!r} is longer than 255 bytes")
    at = HEADER_LEN + post_header_len          # the database name's length byte
    old_len = raw[at]
    end = at + 1 + old_len + 1                 # past the name and its NUL
    body_end = len(raw) - (CHECKSUM_LEN if crc else 0)
    out = bytearray(raw[:at] + bytes([len(name)]) + name + b"\0" + raw[end:body_end])
    size = S.HEADER.span("event_size")
    out[size] = (len(out) + (CHECKSUM_LEN if crc else 0)).to_bytes(size.stop - size.start, "little")
    if crc:
        out += zlib.crc32(bytes(out)).to_bytes(4, "little")
    return bytes(out)


def rewrite_databases(events: Iterator[Event], mapping: Mapping[str, str]) -> Iterator[Event]:
    """``events`` with the databases of ``mapping`` renamed (see the module doc)."""
    fde: FormatDescriptionBody | None = None
    for ev in events:
        b = ev.body
        if isinstance(b, FormatDescriptionBody):
            fde = b
        elif isinstance(b, QueryBody) and b.db in mapping:
            ev = ev._replace(body=dataclasses.replace(b, db=mapping[b.db]))
        elif isinstance(b, TableMapBody) and b.db in mapping and fde is not None and ev.raw:
            new = mapping[b.db]
            ph = fde.post_header_len[ev.type_code - 1]
            raw = rewrite_table_map(ev.raw, new, post_header_len=ph, crc=ev.crc is not None)
            ev = ev._replace(body=dataclasses.replace(b, db=new), raw=raw,
                             event_size=len(raw),
                             crc=int.from_bytes(raw[-4:], "little") if ev.crc is not None
                             else None)
        yield ev
