"""A large binlog cut into parts at transaction boundaries, found by a cheap scan.

``repltool.distributed`` reads the parts of one file in parallel and joins
their figures; this module finds where the parts begin and reads one part.

**Where a part may begin.**  At a MySQL GTID or Anonymous_GTID event that
carries a logical clock, whose ``last_committed`` differs from the previous
transaction's (so no commit window and no run of equal ``last_committed``
crosses the boundary: per-part clock figures then add up exactly).  The scan
jumps to each target offset and looks for such an event without walking the
file: an event header whose ``log_pos`` is its own end (true of every event of a
binlog; a relay log's events carry the source's positions and are never split),
whose CRC32 footer verifies when the log has checksums, followed by a chain of
events with the same property.  A place found that way is very probably an event
boundary but not certainly; certainty comes from the read itself: the part
before a boundary is read from a boundary already known (the file's first
event, by induction) and must end exactly there (:func:`span_events` raises
:class:`SplitMismatch` when an event crosses it).  A part whose read fails for
any reason is never used: the caller reads the whole file instead.

Only v4 binlogs from MySQL (no relay log, no MariaDB: its GTID events carry no
clock, and its commit-id groups would cross boundaries) are split.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterable, Iterator

from ..errors import MalformedEvent
from ..positions import Position
from . import structs as S
from .constants import HEADER_LEN, LOGICAL_TIMESTAMP_TYPECODE, ChecksumAlg, EventType
from .events import Event
from .reader import FileInfo, ReadOptions, open_log, read_events, resume_events
from .transactions import GroupingState, Segments

#: how far past a target offset the scan looks for a boundary
SCAN_WINDOW = 4 << 20
#: events whose headers must chain after a candidate
_CHAIN = 8
_GTIDS = (int(EventType.GTID_LOG_EVENT), int(EventType.ANONYMOUS_GTID_LOG_EVENT))
# the layouts, from the construct declarations
_GTID_CLOCK_LEN = S.GTID_HEAD.size      # flags, sid, gno, lt_type, last_committed, sequence_number
_LT_AT = S.GTID_HEAD.offsets["lt_type"]
_LC = S.GTID_HEAD.span("clock.last_committed")
_TYPE_AT = S.HEADER.offsets["type_code"]
_SIZE_AT, _SIZE_END = S.HEADER.offsets["event_size"], S.HEADER.ends["event_size"]
_POS_AT, _POS_END = S.HEADER.offsets["log_pos"], S.HEADER.ends["log_pos"]


class SplitMismatch(MalformedEvent):
    """A part's read did not end exactly at the next part's start (the scan was wrong)."""


@dataclass(frozen=True, slots=True)
class Span:
    """A part of one file: its events from ``start`` (an event's offset; 4 is the file's
    start) up to, not including, the event at ``end`` (``None``: the file's end).

    ``clock``: the ``last_committed`` of the GTID event at ``start`` (``None`` for the
    first part); the previous part's last transaction has a different one.
    """

    start: int
    end: int | None
    clock: int | None = None


WHOLE = Span(4, None)


def split_spans(path: str, size: int) -> list[Span]:
    """``path``'s parts of about ``size`` bytes each (one :data:`WHOLE` span when the
    file is smaller than two parts, or is not a splittable binlog, see the module)."""
    fh, file_size = open_log(path)
    fh.close()
    if size <= 0 or file_size < 2 * size:
        return [WHOLE]
    info: list[FileInfo] = []
    first = read_events([path], ReadOptions(verify_checksum=False), info)
    try:
        next(first, None)
    except Exception:                   # noqa: BLE001 - the reader reports it itself
        return [WHOLE]
    finally:
        first.close()
    fi = info[0] if info else None
    fde = fi.fde if fi is not None else None
    if (fde is None or fi is None or fi.relay_log or fde.binlog_version != 4
            or fde.common_header_len != HEADER_LEN or fde.is_mariadb):
        return [WHOLE]
    crc = fde.checksum_alg == ChecksumAlg.CRC32
    points: list[tuple[int, int]] = []
    fh, _ = open_log(path)
    with fh:
        target = size
        while target < file_size - size // 2:
            found = _boundary_near(fh, target, file_size, crc)
            if found is not None and (not points or found[0] > points[-1][0]):
                points.append(found)
                target = max(target + size, found[0] + size // 2)
            else:
                target += size
    if not points:
        return [WHOLE]
    starts = [(4, None)] + points
    return [Span(s, starts[i + 1][0] if i + 1 < len(starts) else None, c)
            for i, (s, c) in enumerate(starts)]


def _boundary_near(fh, target: int, file_size: int, crc: bool  # type: ignore[no-untyped-def]
                   ) -> tuple[int, int] | None:
    """(offset, last_committed) of the first GTID event at or after ``target`` that
    starts a new ``last_committed``, or ``None`` within :data:`SCAN_WINDOW`."""
    fh.seek(target)
    data = fh.read(SCAN_WINDOW)
    n = len(data)
    p = 0
    while p + HEADER_LEN <= n:
        # the next byte that could be a GTID event's type code
        hits = [h for h in (data.find(b"\x21", p + 4), data.find(b"\x22", p + 4)) if h >= 0]
        if not hits:
            return None
        p = min(hits) - 4
        if p + HEADER_LEN > n:
            return None
        if _event_at(data, p, target, crc):
            found = _new_window(data, p, target, crc)
            if found is not None:
                return found
        p += 1
    return None


def _new_window(data: bytes, p: int, base: int, crc: bool) -> tuple[int, int] | None:
    """From the GTID event at ``p``: (offset, last_committed) of the next GTID event
    whose ``last_committed`` differs, or ``None`` (the window ends, or no clock)."""
    lc = _clock(data, p, crc)
    n = len(data)
    q = p
    while lc is not None:
        q += int.from_bytes(data[q + _SIZE_AT:q + _SIZE_END], "little")
        if q + HEADER_LEN > n or not _event_at(data, q, base, crc):
            return None
        if data[q + _TYPE_AT] in _GTIDS:
            nxt = _clock(data, q, crc)
            if nxt is None:
                return None
            if nxt != lc:
                return base + q, nxt
    return None


def _event_at(data: bytes, p: int, base: int, crc: bool) -> bool:
    """Whether ``data[p:]`` looks like the start of ``_CHAIN`` chained binlog events."""
    n = len(data)
    for _ in range(_CHAIN):
        if p + HEADER_LEN > n:
            return True                 # the window ends: the read will tell
        size = int.from_bytes(data[p + _SIZE_AT:p + _SIZE_END], "little")
        log_pos = int.from_bytes(data[p + _POS_AT:p + _POS_END], "little")
        if size < HEADER_LEN + (4 if crc else 0) or log_pos != (base + p + size) & 0xFFFFFFFF:
            return False
        if p + size > n:
            return True
        if crc and zlib.crc32(data[p:p + size - 4]) != int.from_bytes(
                data[p + size - 4:p + size], "little"):
            return False
        p += size
    return True


def _clock(data: bytes, p: int, crc: bool) -> int | None:
    """The ``last_committed`` of the GTID event at ``p`` (``None``: no clock)."""
    size = int.from_bytes(data[p + _SIZE_AT:p + _SIZE_END], "little")
    body = data[p + HEADER_LEN:p + size - (4 if crc else 0)]
    if len(body) < _GTID_CLOCK_LEN or body[_LT_AT] != LOGICAL_TIMESTAMP_TYPECODE:
        return None
    return int.from_bytes(body[_LC], "little", signed=True)


def span_events(path: str, span: Span, options: ReadOptions | None = None,
                info: list[FileInfo] | None = None) -> Iterator[Event]:
    """The events of one part of ``path``, read as :func:`read_events` reads them
    (``info`` gets the file's :class:`FileInfo`).  A later part starts with the events
    after its start, never the file's Format_description (it is read, not yielded).

    :raises SplitMismatch: an event crosses ``span.end``.
    """
    return span_read(path, span, options, info)[0]


def span_read(path: str, span: Span, options: ReadOptions | None = None,
              info: list[FileInfo] | None = None
              ) -> tuple[Iterator[Event], GroupingState | None]:
    """:func:`span_events` and the grouper's state at the part's start
    (:func:`~repltool.binlog.transactions.group_transactions`' ``state``: the clock
    segment and the Format_description the file's first event set; ``None`` for the
    first part, read from the file's start)."""
    opts = options or ReadOptions()
    if span.start <= 4:
        return within(read_events([path], opts, info), path, span.end), None
    head: list[FileInfo] = []
    first = read_events([path], ReadOptions(verify_checksum=opts.verify_checksum), head)
    try:
        fde_event = next(first, None)
    finally:
        first.close()
    fi = head[0]
    if info is not None:
        info.append(fi)
    segments = Segments()
    if fde_event is not None:
        segments.see(fde_event)
    state = GroupingState(segments, {}, fi.fde, None)
    return within(resume_events(fi, span.start, opts), path, span.end), state


def within(events: Iterable[Event], path: str, end: int | None) -> Iterator[Event]:
    """``events`` up to the one at ``end`` of ``path`` (``None``: all of them).

    :raises SplitMismatch: an event of ``path`` crosses ``end``.
    """
    if end is None:
        yield from events
        return
    for ev in events:
        pos = ev.pos
        if pos.payload_offset is None and pos.file == path:
            if pos.offset >= end:
                if pos.offset != end:
                    raise SplitMismatch(f"no event starts at the split point {end}",
                                        pos=Position(path, pos.offset))
                return
            if ev.end_pos > end:
                raise SplitMismatch(f"an event crosses the split point {end}", pos=pos)
        yield ev


__all__ = ["Span", "SplitMismatch", "WHOLE", "span_events", "span_read", "split_spans",
           "within"]
