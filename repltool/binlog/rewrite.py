"""Whole-file rewrites: :func:`rewrite_log` copies a log with new logical clocks.

The per-event work is :func:`repltool.binlog.writer.patch_clock`; this module
walks the file (format-spec §2.5 "Rewriter"). Events that do not change are
not copied one by one: the walk reads only their 19-byte headers (parsed with
:func:`~repltool.binlog.writer.parse_header`) and the untouched byte ranges
between changed events are copied in ``chunk_size`` blocks. With the
``"mysql"`` encoding and typecode-2 events, which change in place, that is
the whole file but 16 + 4 bytes per GTID event.

With the compiled engine, the events are walked by the core
(``_core.retag_walk``, format-spec §2.5): the file is read in ``chunk_size``
blocks, the core counts the events, patches the clock of each plain typecode-2
GTID event named in the clocks in place (the bytes :func:`patch_clock` writes),
counts a relay log's stale log_pos values and, in a binlog after a size change,
adds the cumulative delta to each event's log_pos and recomputes its CRC (what
the Python walk's shifted copy writes); each block is written whole.  The
Python walk takes every event the core returns it (Format_description,
Start_v3/Start_encryption, a GTID event whose size changes or that comes after
a size change, a clock offset that is no plain untagged GTID event or was
stepped over, invalid clock values, a wrong stored CRC, a size below the header
or past the end, an event to shift that does not fit in the block).
:func:`rewrite_log_reference` does the whole walk here with the ``construct``
declarations only (the reference the shortcuts are tested against).
"""

from __future__ import annotations

import os
import tempfile
import zlib
from array import array
from collections.abc import Iterator, Mapping
from types import ModuleType
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import (
    ChecksumMismatch, EncryptedLog, InputError, MalformedEvent, NoFormatDescription, NotABinlog,
    UsageError,
)
from ..positions import Position
from . import structs as S
from .constants import (
    BINLOG_MAGIC, CHECKSUM_LEN, ENCRYPTED_MAGIC, GTID_TYPES, HEADER_LEN, ChecksumAlg, EventFlag,
    EventType, type_name,
)
from .decode import DecodeContext, decode_fde
from .engine import compiled_core
from .events import parse_version
from .writer import (
    ENCODINGS, FDE_FREE_STRUCTS, MAX_FDE_SIZE, MAX_GTID_EVENT_SIZE, Header, crc_ok,
    delta16_encodable, parse_header, patch_clock, patch_clock_reference, set_log_pos,
)

__all__ = ["RewriteReport", "rewrite_log", "rewrite_log_reference"]

WALK_BUFFER = 1 << 16     # header skips within the buffer cost no system call
_UNTAGGED = GTID_TYPES - {EventType.GTID_TAGGED_LOG_EVENT}
_FLAGS = S.HEADER.span("flags")
_LOG_POS = S.HEADER.span("log_pos")


@dataclass(frozen=True, slots=True)
class RewriteReport:
    """What :func:`rewrite_log` did.

    ``gtid_events_rewritten`` counts the GTID events whose bytes changed;
    ``log_pos_updated`` the events whose log_pos moved by the size change of
    earlier events (binlog only);
    ``stale_log_pos`` the events (with a non-zero log_pos) at or after a size
    change whose log_pos was left as is because the file is a relay log;
    ``delta16_fallbacks`` the events kept at typecode 2 because delta16 cannot
    carry their lc = 0 barrier.
    """

    src: str
    dst: str
    relay_log: bool
    events: int
    gtid_events_rewritten: int
    log_pos_updated: int
    bytes_delta: int
    stale_log_pos: int = 0
    delta16_fallbacks: int = 0
    warnings: tuple[str, ...] = ()


class Source:
    """Reads from the source file, with its path for error positions.

    ``fh`` walks the events (headers, and the bodies that change); ranges are
    copied with ``os.pread``, which leaves ``fh``'s position alone.
    """

    def __init__(self, fh: BinaryIO, path: str, size: int) -> None:
        self.fh, self.path, self.size = fh, path, size
        self.fd = fh.fileno()

    def shrank(self, at: int) -> InputError:
        return InputError(f"{self.path}: file shrank while being rewritten",
                          pos=Position(self.path, at))

    def read(self, n: int, at: int) -> bytes:
        """The next ``n`` bytes of the walk (``at``: their offset, for errors)."""
        data = self.fh.read(n)
        if len(data) != n:
            raise self.shrank(at)
        return data

    def pread(self, n: int, at: int) -> bytes:
        data = os.pread(self.fd, n, at)
        if len(data) != n:
            raise self.shrank(at)
        return data


def _read_into(fd: int, view: memoryview, at: int) -> int:
    """``os.preadv`` where the platform has it (no copy), else ``os.pread``."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], at)
    data = os.pread(fd, len(view), at)
    view[:len(data)] = data
    return len(data)


class Clocks:
    """The new clocks in offset order, taken as the walk reaches each event.

    Held as three int64 columns (``columns``; the next one to take is ``i``)
    when every value fits, which is what the compiled walk reads; else
    (``columns`` is None) iterated as given.
    """

    def __init__(self, clocks: Mapping[int, tuple[int, int]]) -> None:
        self._skipped: list[int] = []     # offsets the walk stepped over (first few)
        self.i = 0
        self.columns: tuple[array[int], array[int], array[int]] | None = None
        given = getattr(clocks, "columns", None)
        if callable(given):
            self.columns = given()
            return
        items = clocks.items()
        ordered = items if getattr(clocks, "sorted_by_offset", False) else sorted(items)
        try:
            self.columns = (array("q", [o for o, _ in ordered]),
                            array("q", [c[0] for _, c in ordered]),
                            array("q", [c[1] for _, c in ordered]))
        except (OverflowError, TypeError, IndexError):
            self._items: Iterator[tuple[int, tuple[int, int]]] = iter(ordered)
            self._next = next(self._items, None)

    def take(self, offset: int) -> tuple[int, int] | None:
        """The clock for the event at ``offset``, if one was given."""
        if self.columns is None:
            return self._take_items(offset)
        offsets, lcs, sns = self.columns
        i, n = self.i, len(offsets)
        while i < n and offsets[i] < offset:
            if len(self._skipped) < 5:
                self._skipped.append(offsets[i])
            i += 1
        if i == n or offsets[i] != offset:
            self.i = i
            return None
        self.i = i + 1
        return lcs[i], sns[i]

    def _take_items(self, offset: int) -> tuple[int, int] | None:
        nxt = self._next
        while nxt is not None and nxt[0] < offset:
            if len(self._skipped) < 5:
                self._skipped.append(nxt[0])
            nxt = self._next = next(self._items, None)
        if nxt is None or nxt[0] != offset:
            return None
        self._next = next(self._items, None)
        return nxt[1]

    def left(self) -> list[int]:
        """Up to five offsets that matched no event (after the walk)."""
        out = list(self._skipped)
        if self.columns is not None:
            offsets = self.columns[0]
            while self.i < len(offsets) and len(out) < 5:
                out.append(offsets[self.i])
                self.i += 1
            return out
        while self._next is not None and len(out) < 5:
            out.append(self._next[0])
            self._next = next(self._items, None)
        return out


class Rewriter:
    """The event walk of :func:`rewrite_log` (format-spec §2.5).

    ``done`` is the source offset up to which the output is written: an event
    that changes first flushes the untouched range before it.
    """

    def __init__(self, src: Source, out: BinaryIO, clocks: Clocks, encoding: str,
                 relay_log: bool | None, chunk: int, dst: str) -> None:
        self.src, self.out, self.clocks, self.encoding = src, out, clocks, encoding
        self.relay_log, self.chunk, self.dst = relay_log, chunk, dst
        self.crc_on = False
        self.seen_fde = False
        self.delta = 0
        self.done = 0
        self.events = self.rewritten = self.updated = self.stale = self.fallbacks = 0
        self.odd = 0                      # shifted although log_pos != end offset
        self.warnings: list[str] = []
        self.core = self._core()
        self.block: bytearray | None = None

    def _core(self) -> ModuleType | None:
        """The compiled core whose ``retag_walk`` takes the runs of events that keep
        their size (None: every event is walked here)."""
        return compiled_core()

    def _header(self, raw: bytes) -> Header:
        return parse_header(raw)

    def _patch(self, raw: bytes, lc: int, sn: int, relay: bool,
               pos: Position) -> tuple[bytes, int]:
        return patch_clock(raw, lc, sn, encoding=self.encoding, crc=self.crc_on,
                           relay_log=relay, pos=pos)

    def run(self) -> RewriteReport:
        src = self.src
        magic = src.fh.read(4)
        if magic != BINLOG_MAGIC:
            where = Position(src.path, 0)
            if magic == ENCRYPTED_MAGIC:
                raise EncryptedLog("encrypted binlog: cannot rewrite it", pos=where)
            raise NotABinlog(f"not a binlog: magic is {magic.hex(' ')}", pos=where)
        p = 4
        while p < src.size:
            if self.core is not None and self._walks_compiled():
                p = self._compiled_run(p)
                if p >= src.size:
                    break
                src.fh.seek(p)
            if src.size - p < HEADER_LEN:
                self._tail(p)
                break
            raw_header = src.read(HEADER_LEN, p)
            h = self._header(raw_header)
            pos = Position(src.path, p)
            if h.event_size < HEADER_LEN:
                raise MalformedEvent(f"event_size {h.event_size} is smaller than the header",
                                     pos=pos, event_type=type_name(h.type_code))
            if h.event_size > src.size - p:
                self._tail(p)
                break
            self.events += 1
            self._event(p, pos, raw_header, h)
            p += h.event_size
        self._flush(src.size)
        left = self.clocks.left()
        if left:
            missing = ", ".join(str(o) for o in sorted(left))
            raise UsageError(f"no GTID event at offset(s) {missing} of {src.path}")
        relay = bool(self.relay_log)
        if self.odd:
            self.warnings.append(
                f"{self.odd} event(s) whose log_pos was not their end offset were shifted anyway; "
                "if this is a relay log (MySQL 5.0 did not flag them), pass relay_log=True")
        if relay and self.stale:
            self.warnings.append(
                f"relay log: {self.stale} event(s) after a size change keep their log_pos (source "
                "coordinates); relay-log positions recorded elsewhere are now stale")
        return RewriteReport(src.path, self.dst, relay, self.events, self.rewritten,
                             self.updated, self.delta, self.stale, self.fallbacks,
                             tuple(self.warnings))

    def _walks_compiled(self) -> bool:
        """Whether the next events can be walked by the core: a Format_description was
        seen and the clocks are int64 columns (after a size change in a binlog the
        core shifts log_pos values; in a relay log it counts the stale ones)."""
        return self.seen_fde and self.clocks.columns is not None

    def _compiled_run(self, p: int) -> int:
        """Walk from ``p`` with the core's ``retag_walk`` block by block, writing each
        block (its clocks patched in place) and copying events longer than a block
        unread; returns the offset of the first event the Python walk must take
        (or the file's size)."""
        core, src, clocks = self.core, self.src, self.clocks
        assert core is not None and clocks.columns is not None
        offsets, lcs, sns = clocks.columns
        if self.block is None:
            self.block = bytearray(max(self.chunk, 2 * MAX_GTID_EVENT_SIZE))
        block = memoryview(self.block)
        shift = 0 if self.relay_log else self.delta
        patch = self.encoding == "mysql" and not shift
        stale = bool(self.relay_log) and self.delta != 0
        self._flush(p)
        while True:
            want = min(len(block), src.size - p)
            if not patch:                   # the core stops at the next clock offset:
                nxt = offsets[clocks.i] if clocks.i < len(offsets) else src.size
                if nxt <= p:                # read no further than it
                    return p
                want = min(want, nxt - p)
            got = _read_into(src.fd, block[:want], p)
            if got != want:
                raise src.shrank(p + got)
            status, q, clocks.i, events, rewritten, stale_n, shifted, odd = core.retag_walk(
                block, want, p, src.size, offsets, lcs, sns, clocks.i, self.crc_on, patch,
                stale, shift)
            self.events += events
            self.rewritten += rewritten
            self.stale += stale_n
            self.updated += shifted
            self.odd += odd
            upto = min(q, p + want)
            self.out.write(block[:upto - p])
            self.done = upto
            self._flush(q)                  # the rest of an event longer than the block
            if status != core.RETAG_MORE or q == p:
                return q
            p = q

    def _flush(self, upto: int) -> None:
        """Copy the untouched source bytes ``[done, upto)`` in ``chunk`` blocks."""
        at = self.done
        while at < upto:
            piece = self.src.pread(min(upto - at, self.chunk), at)
            self.out.write(piece)
            at += len(piece)
        self.done = max(self.done, upto)

    def _replace(self, p: int, size: int, new: bytes) -> None:
        """The event ``[p, p + size)`` is written as ``new``."""
        self._flush(p)
        self.out.write(new)
        self.done = p + size

    def _tail(self, p: int) -> None:
        left = self.src.size - p
        self.warnings.append(f"{self.src.path}:{p}: log ends mid-event; {left} trailing byte(s) "
                             "copied verbatim")

    def _event(self, p: int, pos: Position, raw_header: bytes, h: Header) -> None:
        tc, size = h.type_code, h.event_size
        if tc == EventType.FORMAT_DESCRIPTION_EVENT:
            self._fde(p, pos, raw_header + self._small(size, pos, tc, MAX_FDE_SIZE))
            return
        if not self.seen_fde:
            if tc != EventType.START_EVENT_V3:
                raise NoFormatDescription("no Format_description_event before this event",
                                          pos=pos, event_type=type_name(tc))
            self.seen_fde = True          # binlog v3: no checksums
            self.relay_log = bool(self.relay_log)
        if tc == EventType.START_ENCRYPTION_EVENT:
            raise EncryptedLog("MariaDB encrypted binlog: the events after this one cannot be "
                               "walked", pos=pos, event_type=type_name(tc))
        clock = self.clocks.take(p)
        if clock is not None:
            if tc not in GTID_TYPES:
                raise UsageError(f"offset {p} is a {type_name(tc)}, not a GTID event", pos=pos)
            self._gtid(p, pos, raw_header + self._small(size, pos, tc, MAX_GTID_EVENT_SIZE),
                       clock)
            return
        self._shifted_copy(p, pos, raw_header, h)

    def _small(self, size: int, pos: Position, tc: int, limit: int) -> bytes:
        if size > limit:
            raise MalformedEvent(f"event_size {size} is implausible for this type", pos=pos,
                                 event_type=type_name(tc))
        return self.src.read(size - HEADER_LEN, pos.offset)

    def _fde(self, p: int, pos: Position, raw: bytes) -> None:
        version = parse_version(raw[HEADER_LEN + 2:HEADER_LEN + 52].split(b"\x00", 1)[0]
                                .decode("ascii", "replace"))
        has_crc = version >= (5, 6, 1)
        body = raw[HEADER_LEN:len(raw) - (CHECKSUM_LEN if has_crc else 0)]
        fde = decode_fde(body, DecodeContext(FDE_FREE_STRUCTS, pos, EventType.FORMAT_DESCRIPTION_EVENT))
        flags = int.from_bytes(raw[_FLAGS], "little")
        if not self.seen_fde and self.relay_log is None:
            self.relay_log = bool(flags & EventFlag.RELAY_LOG)
        self.seen_fde = True
        self.crc_on = fde.checksum_alg == ChecksumAlg.CRC32
        log_pos = int.from_bytes(raw[_LOG_POS], "little")
        if self._shifts(log_pos, p + len(raw)):
            if has_crc and not crc_ok(raw, fde=True):
                raise ChecksumMismatch("stored CRC32 is wrong; refusing to rewrite this event",
                                       pos=pos, event_type=type_name(15))
            self._replace(p, len(raw), set_log_pos(raw, log_pos + self.delta, crc=has_crc))

    def _shifts(self, log_pos: int, end: int, own_delta: int = 0) -> bool:
        """Whether an event's log_pos moves by the cumulative delta (binlog, non-zero log_pos).

        In a relay log the event is counted as stale instead.
        """
        if not log_pos or not (self.delta or own_delta):
            return False
        if self.relay_log:
            self.stale += 1
            return False
        if not self.delta:
            return False
        self.odd += log_pos != end
        self.updated += 1
        return True

    def _gtid(self, p: int, pos: Position, raw: bytes, clock: tuple[int, int]) -> None:
        lc, sn = clock
        relay = bool(self.relay_log)
        new, delta = self._patch(raw, lc, sn, relay, pos)
        if new != raw:
            self.rewritten += 1
        if self.encoding == "delta16" and raw[4] in _UNTAGGED and not delta16_encodable(lc, sn):
            self.fallbacks += 1
        if self._shifts(int.from_bytes(raw[_LOG_POS], "little"), p + len(raw), delta):
            new = set_log_pos(new, int.from_bytes(new[_LOG_POS], "little") + self.delta,
                              crc=self.crc_on)
        self.delta += delta
        if new is not raw:
            self._replace(p, len(raw), new)

    def _shifted_copy(self, p: int, pos: Position, raw_header: bytes, h: Header) -> None:
        size, log_pos = h.event_size, h.log_pos
        body_len = size - HEADER_LEN
        if not self._shifts(log_pos, p + size):
            self.src.fh.seek(body_len, os.SEEK_CUR)      # left in the range to copy
            return
        new_header = h._replace(log_pos=log_pos + self.delta).build()
        self._flush(p)
        self.done = p + size
        self.out.write(new_header)
        if not self.crc_on:
            self._copy(body_len, p + HEADER_LEN, None)
            return
        if body_len < CHECKSUM_LEN:
            raise MalformedEvent(f"event_size {size} leaves no room for the CRC32", pos=pos,
                                 event_type=type_name(h.type_code))
        old_crc, new_crc = self._copy(body_len - CHECKSUM_LEN, p + HEADER_LEN,
                                      (zlib.crc32(raw_header), zlib.crc32(new_header)))
        stored = int.from_bytes(self.src.read(CHECKSUM_LEN, p), "little")
        if stored != old_crc:
            raise ChecksumMismatch(
                f"stored CRC32 0x{stored:08x} is wrong (computed 0x{old_crc:08x}); refusing to "
                "rewrite this event", pos=pos, event_type=type_name(h.type_code))
        self.out.write(new_crc.to_bytes(4, "little"))

    def _copy(self, n: int, at: int, crcs: tuple[int, int] | None) -> tuple[int, int]:
        """Stream ``n`` bytes of the walk to the output, updating (old, new) running CRCs."""
        old, new = crcs or (0, 0)
        while n:
            piece = self.src.read(min(n, self.chunk), at)
            if crcs is not None:
                old = zlib.crc32(piece, old)
                new = zlib.crc32(piece, new)
            self.out.write(piece)
            n -= len(piece)
            at += len(piece)
        return old, new


class ReferenceRewriter(Rewriter):
    """:class:`Rewriter` with every header parsed and every GTID event patched by the
    ``construct`` declarations (:func:`~repltool.binlog.writer.patch_clock_reference`),
    every event walked here."""

    def _core(self) -> ModuleType | None:
        return None

    def _header(self, raw: bytes) -> Header:
        return Header(**{k: v for k, v in S.common_header.parse(raw).items()
                         if not k.startswith("_")})

    def _patch(self, raw: bytes, lc: int, sn: int, relay: bool,
               pos: Position) -> tuple[bytes, int]:
        return patch_clock_reference(raw, lc, sn, encoding=self.encoding, crc=self.crc_on,
                                     relay_log=relay, pos=pos)


def rewrite_log(src_path: str | os.PathLike[str], dst_path: str | os.PathLike[str],
                clocks: Mapping[int, tuple[int, int]], *, encoding: str = "mysql",
                relay_log: bool | None = None, chunk_size: int = 1 << 20) -> RewriteReport:
    """Copy one log file, giving the GTID events at the offsets in ``clocks`` new timestamps.

    Every byte is copied; the GTID events named in ``clocks`` (offset of the
    event -> ``(last_committed, sequence_number)``) are replaced through
    :func:`patch_clock`.  In a binlog, once sizes changed, every later event
    with a non-zero log_pos gets the cumulative size change added (and a new
    CRC); inner events of Transaction_payload are untouched.  In a relay log
    (first FDE flagged LOG_EVENT_RELAY_LOG_F, or ``relay_log=True``) log_pos
    values are source coordinates and never change: they are counted in
    ``stale_log_pos`` instead.  A truncated last event is copied verbatim.

    The output goes to a temporary file next to ``dst_path`` that replaces it
    only at the end; on any error it is removed and ``dst_path`` is untouched.
    Memory use is bounded by ``chunk_size`` (at least 8 KiB with the compiled
    engine's block; and a few KiB per GTID/FDE event), never by the file or
    event size.  ``clocks`` is read in offset order
    (a mapping whose ``sorted_by_offset`` attribute is true is not sorted
    again; see :class:`repltool.certify.retag.ClockColumns`).

    :func:`rewrite_log_reference` writes the same bytes with the ``construct``
    declarations only.

    :raises UsageError: ``dst_path`` is ``src_path`` (same inode) or a
        directory, an offset in ``clocks`` is not a GTID event of the file.
    :raises ChecksumMismatch: an event that had to change has a wrong CRC.
    :raises NotABinlog, EncryptedLog, NoFormatDescription, MalformedEvent,
        UnsupportedLog: for files that cannot be rewritten.
    """
    return _rewrite(Rewriter, src_path, dst_path, clocks, encoding, relay_log, chunk_size)


def rewrite_log_reference(src_path: str | os.PathLike[str], dst_path: str | os.PathLike[str],
                          clocks: Mapping[int, tuple[int, int]], *, encoding: str = "mysql",
                          relay_log: bool | None = None,
                          chunk_size: int = 1 << 20) -> RewriteReport:
    """:func:`rewrite_log` parsing every header and patching every GTID event with the
    ``construct`` declarations (:class:`ReferenceRewriter`): the same output or
    error, slower; the reference the fast walk is tested against."""
    return _rewrite(ReferenceRewriter, src_path, dst_path, clocks, encoding, relay_log,
                    chunk_size)


def _rewrite(walk: type[Rewriter], src_path: str | os.PathLike[str],
             dst_path: str | os.PathLike[str], clocks: Mapping[int, tuple[int, int]],
             encoding: str, relay_log: bool | None, chunk_size: int) -> RewriteReport:
    src, dst = os.fspath(src_path), os.fspath(dst_path)
    if encoding not in ENCODINGS:
        raise UsageError(f"unknown clock encoding {encoding!r}; expected one of {ENCODINGS}")
    if os.path.isdir(dst):
        raise UsageError(f"{dst}: is a directory")
    try:
        fh = open(src, "rb", buffering=WALK_BUFFER)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"{src}: cannot open: {exc.strerror or exc}") from None
    with fh:
        st = os.fstat(fh.fileno())
        if os.path.exists(dst) and os.path.samefile(src, dst):
            raise UsageError(f"{dst} is the source file itself; write to another path")
        try:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(dst)),
                                       prefix=f".{os.path.basename(dst)}.", suffix=".tmp")
        except OSError as exc:
            raise InputError(f"{dst}: cannot create a file there: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as out:
                report = walk(Source(fh, src, st.st_size), out, Clocks(clocks), encoding,
                              relay_log, max(chunk_size, 64), dst).run()
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, st.st_mode & 0o7777)
            os.replace(tmp, dst)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
    return report
