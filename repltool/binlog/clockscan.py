"""A logical-clock scan that jumps over transaction bodies.

MySQL 8.0.2+ writes ``transaction_length`` in every Gtid_log_event: the size
of the whole transaction, GTID event included (format-spec §3.1).  A scan that
only needs each transaction's GTID, ``last_committed`` and ``sequence_number``
reads the GTID event and seeks past the rest, so its cost depends on the
number of transactions, not on the bytes.  Where a GTID event carries no
``transaction_length`` (5.7 and older, MariaDB) the scan walks the events one by
one, exactly like :func:`~repltool.binlog.read_events` (which it uses for them).

Events jumped over are not read, so their CRC32 is not verified: the records
say how many bytes were skipped.
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Iterable, Iterator, NamedTuple

from ..errors import ChecksumMismatch
from ..positions import Position
from .constants import BINLOG_MAGIC, CHECKSUM_LEN, HEADER_LEN, ChecksumAlg, EventType, type_name
from .decode import DecodeContext
from .fastdecode import fast_gtid
from .reader import FileInfo, ReadOptions, handle_fde, open_log, read_events, structs_for
from .transactions import GROUPING_TYPES, group_transactions

_HEADER = struct.Struct("<IBIIIH")
_GTIDS = (EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT)


class ClockRecord(NamedTuple):
    """One transaction's place and logical clock (a NamedTuple: one per transaction)."""

    pos: Position
    gtid: str | None
    last_committed: int | None
    sequence_number: int | None
    size: int
    timestamp: int
    immediate_commit_timestamp: int | None
    skipped: bool          # True when the body was jumped over via transaction_length
    delta16_saturated: bool = False


def scan_clocks(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                verify_checksum: bool = True, info: list[FileInfo] | None = None
                ) -> Iterator[ClockRecord]:
    """Yield a :class:`ClockRecord` per transaction of each file, in order.

    :raises ReplToolError: like :func:`read_events`; additionally
        :class:`MalformedEvent` when a ``transaction_length`` does not land on an
        event boundary.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for path in paths:
        fi = FileInfo(os.fspath(path), 0)
        if info is not None:
            info.append(fi)
        yield from _scan_file(fi, verify_checksum)


def _scan_file(fi: FileInfo, verify: bool) -> Iterator[ClockRecord]:
    fh, fi.size = open_log(fi.path)
    with fh:
        head = fh.read(4)
        if head != BINLOG_MAGIC or not _jumpable(fh, fi):
            yield from _walk(fi, verify)
            return
        yield from _jump(fi, fh, verify)


def _jumpable(fh, fi: FileInfo) -> bool:  # type: ignore[no-untyped-def]
    """True for v4 files of MySQL 8.0.2+ (the only writers of transaction_length)."""
    fh.seek(4)
    header = fh.read(HEADER_LEN)
    if len(header) < HEADER_LEN or header[4] != EventType.FORMAT_DESCRIPTION_EVENT:
        return False
    version = fh.read(52)[2:52].split(b"\0", 1)[0].decode("ascii", "replace")
    from .events import parse_version
    return "mariadb" not in version.lower() and parse_version(version) >= (8, 0, 2)


def _walk(fi: FileInfo, verify: bool) -> Iterator[ClockRecord]:
    opts = ReadOptions(verify_checksum=verify, types=GROUPING_TYPES)
    infos: list[FileInfo] = []
    for trx in group_transactions(read_events([fi.path], opts, infos)):
        yield ClockRecord(trx.start, trx.gtid, trx.last_committed, trx.sequence_number,
                          trx.size, trx.timestamp, trx.immediate_commit_timestamp, False,
                          trx.delta16_saturated)
    if infos:
        _copy_info(infos[0], fi)


def _copy_info(src: FileInfo, dst: FileInfo) -> None:
    for name in FileInfo.__slots__:  # type: ignore[attr-defined]
        setattr(dst, name, getattr(src, name))


def _jump(fi: FileInfo, fh, verify: bool) -> Iterator[ClockRecord]:  # type: ignore[no-untyped-def]
    """Walk control events one by one; jump over each transaction after its GTID event.

    A record is yielded only once the event after its jump has a sane header;
    when a ``transaction_length`` does not land on an event boundary (a damaged
    or hand-edited file) the rest of the file is walked event by event from that
    transaction on, so the result is what the event reader would give.
    """
    path, size = fi.path, fi.size
    opts = ReadOptions(verify_checksum=verify, types=frozenset({EventType.FORMAT_DESCRIPTION_EVENT}))
    structs = None
    crc_on = check = False
    pending: ClockRecord | None = None
    buf, base = b"", 4
    p = 4
    unpack, plain = _HEADER.unpack_from, _PLAIN.unpack_from
    crc32, from_bytes, new = zlib.crc32, int.from_bytes, tuple.__new__
    known, gtids, control = _KNOWN_TYPES, _GTID_CODES, _JUMP_CONTROL
    fde_code = int(EventType.FORMAT_DESCRIPTION_EVENT)
    sid_text = _SID_TEXT
    while p < size:
        off = p - base
        if off < 0 or off + HEADER_LEN > len(buf):
            fh.seek(p)
            buf, base, off = fh.read(_CHUNK), p, 0
        if off + HEADER_LEN > len(buf):
            break                                   # the walker reports the truncation
        ts, tc, _sid, ev_size, _log_pos, _flags = unpack(buf, off)
        if ev_size < HEADER_LEN or p + ev_size > size or tc not in known:
            break
        if pending is not None:
            yield pending
            pending = None
        end = off + ev_size
        if end > len(buf):
            fh.seek(p)
            buf, base, off = fh.read(max(_CHUNK, ev_size)), p, 0
            end = ev_size
            if end > len(buf):
                break                               # shrank: the walker reports it
        pos = new(Position, (path, p, None))
        if tc == fde_code:
            fde = _fde(fi, buf[off:end], pos, opts)
            structs = structs_for(fde)
            crc_on = fde.checksum_alg == ChecksumAlg.CRC32
            check = crc_on and verify
            p += ev_size
            continue
        body_end = end - CHECKSUM_LEN if crc_on else end
        if check and crc32(buf[off:body_end]) != from_bytes(buf[body_end:end], "little"):
            raise ChecksumMismatch(
                f"CRC32 mismatch: stored 0x{from_bytes(buf[body_end:end], 'little'):08x}, "
                f"computed 0x{crc32(buf[off:body_end]):08x}", pos=pos,
                event_type=type_name(tc))
        if tc not in gtids or structs is None:
            if tc not in control:
                break                                   # a transaction without GTID: walk
            p += ev_size
            continue
        # The common 8.0 layout, decoded inline (checked against fast_gtid by the tests):
        # typecode 2, 7-byte commit timestamp without the bit-55 flag, 1/3/4-byte length.
        g = off + HEADER_LEN
        length = -1
        if body_end - g >= 51 and buf[g + 25] == 2:
            sid, gno, _, lc, sn, ict_raw, first = plain(buf, g + 1)
            ict = from_bytes(ict_raw, "little")
            if not ict >> 55 and (first < 251 or first in (252, 253)):
                length = first if first < 251 else from_bytes(
                    buf[g + 50:g + (52 if first == 252 else 53)], "little")
                text = sid_text.get(sid)
                if text is None:
                    text = _sid_text(sid)
                gtid = "ANONYMOUS" if gno == 0 and text == _ZERO_SID else f"{text}:{gno}"
        if length < 0:
            body = fast_gtid(buf[g:body_end], DecodeContext(structs, pos, tc))
            if body.transaction_length is None:
                break
            gtid, lc, sn = body.gtid_text, body.last_committed, body.sequence_number
            ict, length = body.immediate_commit_timestamp, body.transaction_length
        if length < ev_size or p + length > size:
            break
        pending = new(ClockRecord, (pos, gtid, lc, sn, length, ts, ict, True, False))
        p += length
    else:
        if pending is not None:
            yield pending
        fi.end_offset = p
        return
    start = pending.pos.offset if pending is not None else p
    yield from _rest_walked(fi, start, verify)


_CHUNK = 1 << 18
_new = tuple.__new__
_PLAIN = struct.Struct("<16sqBqq7sB")      # sid, gno, lt_type, lc, sn, ict, first length byte
_SID_TEXT: dict[bytes, str] = {}


_ZERO_SID = "00000000-0000-0000-0000-000000000000"
_GTID_CODES = frozenset({int(EventType.GTID_LOG_EVENT), int(EventType.ANONYMOUS_GTID_LOG_EVENT)})


def _sid_text(sid: bytes) -> str:
    import uuid
    if len(_SID_TEXT) > 4096:
        _SID_TEXT.clear()
    text = _SID_TEXT[sid] = str(uuid.UUID(bytes=sid))
    return text
_JUMP_CONTROL = frozenset({
    EventType.ROTATE_EVENT, EventType.STOP_EVENT, EventType.PREVIOUS_GTIDS_LOG_EVENT,
    EventType.HEARTBEAT_LOG_EVENT, EventType.HEARTBEAT_LOG_EVENT_V2,
    EventType.TRANSACTION_CONTEXT_EVENT, EventType.IGNORABLE_LOG_EVENT,
})
_KNOWN_TYPES = frozenset(int(t) for t in EventType)


def _fde(fi: FileInfo, raw: bytes, pos: Position, opts: ReadOptions):  # type: ignore[no-untyped-def]
    fde, _ = handle_fde(fi, raw, pos, opts)
    return fde


def _rest_walked(fi: FileInfo, start: int, verify: bool) -> Iterator[ClockRecord]:
    """Fall back to the event-by-event reader for the rest of the file."""
    opts = ReadOptions(verify_checksum=verify, types=GROUPING_TYPES)
    for trx in group_transactions(read_events([fi.path], opts)):
        if trx.start.offset >= start:
            yield ClockRecord(trx.start, trx.gtid, trx.last_committed, trx.sequence_number,
                              trx.size, trx.timestamp, trx.immediate_commit_timestamp, False,
                              trx.delta16_saturated)
