"""Builders shared by the check tests: small MySQL 8.0 logs with chosen clocks, re-tagging."""

from __future__ import annotations

import uuid
import zlib
from pathlib import Path

from repltool.binlog import EventType, read_events, read_transactions
from repltool.synth import BinlogBuilder, query_body

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
T0 = 1_700_000_000_000_000


def build_log(path: Path, clocks: list[tuple[int, int]], *, gnos: list[int] | None = None,
              previous: int = 0, anonymous: bool = False, rotate_to: str | None = None,
              in_use: bool = False, view_changes: tuple[int, ...] = ()) -> Path:
    """A MySQL 8.0 binlog: one DDL transaction per ``(last_committed, sequence_number)``.

    :param gnos: GNO of each transaction (default previous+1, previous+2...).
    :param previous: Previous_gtids is ``SID:1-previous`` (empty set if 0).
    :param view_changes: indexes of transactions written as GR view changes
        (GTID, BEGIN, View_change, COMMIT).
    """
    gnos = gnos or [previous + 1 + i for i in range(len(clocks))]
    with open(path, "wb") as out:
        b = BinlogBuilder(out)
        b.start(T0 // 1_000_000, (SID if previous else None, previous))
        for i, ((lc, sn), gno) in enumerate(zip(clocks, gnos)):
            if i in view_changes:
                bodies = [(EventType.QUERY_EVENT, query_body(1, "", "BEGIN")),
                          (EventType.VIEW_CHANGE_EVENT, _view_change_body()),
                          (EventType.QUERY_EVENT, query_body(1, "", "COMMIT"))]
            else:
                bodies = [(EventType.QUERY_EVENT,
                           query_body(1, "test", f"CREATE TABLE t{i} (i INT)"))]
            b.transaction(T0 + i, None if anonymous else SID, gno, lc, sn, bodies)
        if rotate_to:
            b.rotate(T0 // 1_000_000, rotate_to)
    if in_use:
        set_in_use(path)
    return path


def _view_change_body() -> bytes:
    # view_id (40 bytes), seq_number (8), cert_info count (4): no certification info.
    return b"1:1".ljust(40, b"\x00") + (0).to_bytes(8, "little") + (0).to_bytes(4, "little")


def set_in_use(path: Path) -> None:
    """Set LOG_EVENT_BINLOG_IN_USE_F on the FDE (its CRC is computed without it)."""
    data = bytearray(path.read_bytes())
    data[4 + 17] |= 0x01
    path.write_bytes(bytes(data))


def gtid_offsets(path: Path) -> list[int]:
    """Offsets of the GTID events of a file, in order."""
    return [t.start.offset for t in read_transactions(path)]


def retag(src: Path, dst: Path, clocks: dict[int, tuple[int, int]]) -> str:
    """Copy ``src`` to ``dst`` giving the GTID events at the offsets new (lc, sn).

    Uses the project's encoder (``repltool.binlog.rewrite.rewrite_log``) when it
    is there and works; otherwise patches the 16 timestamp bytes at header+26
    and recomputes the CRC32 here.  Returns which way was used.
    """
    try:
        from repltool.binlog.rewrite import rewrite_log
        rewrite_log(src, dst, clocks)
        return "writer"
    except ImportError:
        pass
    data = bytearray(src.read_bytes())
    events = {ev.pos.offset: ev for ev in read_events(src) if ev.pos.payload_offset is None}
    for offset, (lc, sn) in clocks.items():
        ev = events[offset]
        start = offset + 19 + 26
        data[start:start + 16] = lc.to_bytes(8, "little", signed=True) \
            + sn.to_bytes(8, "little", signed=True)
        end = offset + ev.event_size
        data[end - 4:end] = zlib.crc32(bytes(data[offset:end - 4])).to_bytes(4, "little")
    dst.write_bytes(bytes(data))
    return "manual"
