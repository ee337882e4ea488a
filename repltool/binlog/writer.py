"""The encoder side: GTID bodies, event framing, logical-clock patches of one event
(whole files: :mod:`repltool.binlog.rewrite`).

Every layout is declared once, in :mod:`repltool.binlog.structs`, and this
module *builds* with the same construct objects the reader *parses* with, so a
decoded GTID event re-encodes to its original bytes (format-spec §3.1, §3.5;
MySQL ``sql/log_event.cc`` Gtid_log_event::write_post_header_to_memory /
write_body_to_memory, 9.x ``libs/mysql/binlog/event/control_events.h``
Gtid_event::define_fields).

Two logical-clock encodings are written:

``"mysql"``
    typecode 2: last_committed and sequence_number as two int64 (16 bytes).
``"delta16"``
    typecode 3, repltool's WL#7165 "Optimizations" §2 layout: sequence_number
    as int64 followed by ``sequence_number - last_committed`` as uint16,
    saturated at 65535 (6 bytes shorter).  A saturated delta decodes as
    ``last_committed = sequence_number - 65535``: never lower than the truth.
    The one value that layout cannot carry safely is the barrier
    ``last_committed = 0`` with ``sequence_number >= 65535`` (the replica
    serialises on lc = 0, format-spec §6d; a saturated delta would decode as a
    *positive* lc and silently drop the barrier), so such events keep
    typecode 2 (see :func:`delta16_encodable`).

Tagged GTID events (type 42) have no typecode: they are always re-serialized in
MySQL's serialization format, whatever ``encoding`` says.
"""

from __future__ import annotations

import zlib
from collections import namedtuple
from dataclasses import replace

from ..errors import ChecksumMismatch, MalformedEvent, UnsupportedLog, UsageError
from ..positions import Position
from . import structs as S
from .constants import (
    CHECKSUM_LEN, COMMIT_TIMESTAMP_FLAG, DELTA16_SATURATED, HEADER_LEN,
    LOGICAL_TIMESTAMP_DELTA16_TYPECODE, LOGICAL_TIMESTAMP_TYPECODE, SERVER_VERSION_FLAG,
    EventFlag, EventType, type_name,
)
from .decode import DecodeContext, decode_gtid, decode_gtid_tagged, parse_at
from .events import GtidBody
from .gtidtail import COMMIT_TS_LEN, SERVER_VERSION_LEN, gtid_tail

__all__ = [
    "ENCODINGS", "FDE_FREE_STRUCTS", "Header", "crc_ok", "delta16_encodable", "encode_gtid_body",
    "encode_gtid_tagged_body", "frame_event", "parse_header", "patch_clock",
    "patch_clock_reference", "patched_on_bytes", "recompute_crc", "set_log_pos",
    "tagged_transaction_length_for", "transaction_length_for",
]

ENCODINGS = ("mysql", "delta16")
_TYPECODES = {"mysql": LOGICAL_TIMESTAMP_TYPECODE, "delta16": LOGICAL_TIMESTAMP_DELTA16_TYPECODE}
_UNTAGGED = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT})
_TAGGED = EventType.GTID_TAGGED_LOG_EVENT
#: where ``S.gtid_body``'s clock starts (after gtid_flags, sid, gno, lt_type)
CLOCK_OFFSET = S.GTID_HEAD.offsets["clock"]
_LT_AT = S.GTID_HEAD.offsets["lt_type"]
MAX_GTID_EVENT_SIZE = 4096       # a GTID event is < 200 bytes; anything bigger is damage
MAX_FDE_SIZE = 4096
#: Structs for decoding the events whose layout no FDE changes (GTID, FDE itself):
#: what the rewriter decodes them with before any FDE of the file is known.
FDE_FREE_STRUCTS = S.BinlogStructs(b"")
_HEADER = S.COMMON_HEADER
_CLOCK = S.GTID_CLOCKS[LOGICAL_TIMESTAMP_TYPECODE]             # last_committed, sequence_number
_INT64_MAX = (1 << 63) - 1
_CLOCK_D16 = S.GTID_CLOCKS[LOGICAL_TIMESTAMP_DELTA16_TYPECODE]  # sequence_number, delta
#: bytes of ``S.gtid_timestamps`` per typecode
_CLOCK_SIZE = {tc: clock.size for tc, clock in S.GTID_CLOCKS.items()}
_FLAGS_AT, _FLAGS_END = S.HEADER.offsets["flags"], S.HEADER.ends["flags"]
_byte_patches = 0                    # GTID events re-serialized by _patch_resized


class Header(namedtuple("_Header", [sc.name for sc in S.common_header.subcons])):
    """The 19-byte v4 ``common_header``: the fields ``S.common_header`` declares, in order."""

    __slots__ = ()

    def build(self) -> bytes:
        """The 19 bytes (what ``S.common_header.build`` makes of the same fields)."""
        return _HEADER.pack(*self)


def parse_header(raw: bytes, offset: int = 0) -> Header:
    """``S.common_header.parse`` at ``offset``, by :mod:`struct` (tests compare the two)."""
    return Header._make(_HEADER.unpack_from(raw, offset))


# ---- untagged GTID body (log_event.cc Gtid_log_event::write_*; format-spec §3.1) ----

def delta16_encodable(last_committed: int, sequence_number: int) -> bool:
    """Whether typecode 3 can carry this clock without losing what the replica needs.

    A delta of 65535 or more saturates and decodes to a *higher* last_committed,
    which only delays the transaction; but lc = 0 is the replica's full
    barrier and must stay exactly 0, which the saturated form cannot express.

    Example::

        >>> delta16_encodable(70000, 70001), delta16_encodable(1, 90000)
        (True, True)
        >>> delta16_encodable(0, 65534), delta16_encodable(0, 65535)
        (True, False)
    """
    return last_committed != 0 or sequence_number < DELTA16_SATURATED


def _clock(lt_type: int, last_committed: int, sequence_number: int) -> dict[str, int]:
    """The ``gtid_timestamps`` container for a typecode."""
    if lt_type == LOGICAL_TIMESTAMP_TYPECODE:
        return {"last_committed": last_committed, "sequence_number": sequence_number}
    if last_committed < 0 or last_committed > sequence_number:
        raise UsageError(f"delta16 needs 0 <= last_committed <= sequence_number, got "
                         f"({last_committed}, {sequence_number})")
    return {"sequence_number": sequence_number,
            "delta": min(sequence_number - last_committed, DELTA16_SATURATED)}


def encode_gtid_body(body: GtidBody, *, encoding: str = "mysql") -> bytes:
    """Bytes of an untagged GTID / Anonymous GTID body (no header, no CRC), built by ``gtid_body``.

    MySQL's writer rules: the commit timestamps take 7 bytes, or 14 with bit 55
    of the first set when original != immediate; the server versions 4 bytes,
    or 8 with bit 31 set when they differ; the commit-group ticket is written
    only when set (non-zero).  A part that is ``None`` is absent, and so is
    everything after it (5.6: 25-byte body; 5.7: 42-byte body).

    :param encoding: ``"mysql"`` (typecode 2) or ``"delta16"`` (typecode 3,
        falling back to 2 where :func:`delta16_encodable` says no).  Only
        matters when the body has a clock (``lt_type`` not None).
    :raises UsageError: for an unknown encoding, a typecode repltool does not
        know, a tagged body, or a part present after an absent one.
    """
    if body.tag:
        raise UsageError("a tagged GTID is written as GTID_TAGGED_LOG_EVENT: use "
                         "encode_gtid_tagged_body")
    lt_type = body.lt_type
    if lt_type is not None:
        if lt_type not in _TYPECODES.values():
            raise UsageError(f"logical-timestamp typecode {lt_type} cannot be re-encoded")
        lt_type = _typecode(encoding, body.last_committed, body.sequence_number)
    ticket = body.commit_group_ticket or None          # 0 = kGroupTicketUnset: not written
    parts = (lt_type, body.immediate_commit_timestamp, body.transaction_length,
             body.immediate_server_version, ticket)
    present = [p is not None for p in parts]
    if present != sorted(present, reverse=True):
        raise UsageError("GTID body parts are presence-detected in order: a part cannot follow "
                         "an absent one")
    ict, oct_ = body.immediate_commit_timestamp, body.original_commit_timestamp
    isv, osv = body.immediate_server_version, body.original_server_version
    container = {
        "gtid_flags": body.gtid_flags,
        "sid": body.sid.bytes,
        "gno": body.gno,
        "lt_type": lt_type,
        "clock": None if lt_type is None else _clock(lt_type, body.last_committed,
                                                     body.sequence_number),
        "immediate_commit_timestamp": None if ict is None else (
            ict if oct_ in (None, ict) else ict | COMMIT_TIMESTAMP_FLAG),
        "original_commit_timestamp": None if oct_ in (None, ict) else oct_,
        "transaction_length": body.transaction_length,
        "immediate_server_version": None if isv is None else (
            isv if osv in (None, isv) else isv | SERVER_VERSION_FLAG),
        "original_server_version": None if osv in (None, isv) else osv,
        "commit_group_ticket": ticket,
        "rest": b"",
    }
    return bytes(S.gtid_body.build(container))


def _typecode(encoding: str, last_committed: int, sequence_number: int) -> int:
    if encoding not in _TYPECODES:
        raise UsageError(f"unknown clock encoding {encoding!r}; expected one of {ENCODINGS}")
    if encoding == "delta16" and not delta16_encodable(last_committed, sequence_number):
        return LOGICAL_TIMESTAMP_TYPECODE
    return _TYPECODES[encoding]


# ---- tagged GTID body (control_events.h Gtid_event::define_fields; format-spec §3.5) ----

def _tagged_fields(body: GtidBody) -> list[dict[str, object]]:
    """(field_id, value) in id order; optional fields omitted at their MySQL defaults."""
    ict, isv = body.immediate_commit_timestamp, body.immediate_server_version
    values: list[tuple[int, object]] = [
        (0, body.gtid_flags), (1, list(body.sid.bytes)), (2, body.gno),
        (3, (body.tag or "").encode("ascii", "surrogateescape")), (4, body.last_committed),
        (5, body.sequence_number), (6, ict),
        (7, None if body.original_commit_timestamp == ict else body.original_commit_timestamp),
        (8, body.transaction_length), (9, isv),
        (10, None if body.original_server_version == isv else body.original_server_version),
        (11, body.commit_group_ticket or None),
    ]
    return [{"field_id": i, "value": v} for i, v in values if v is not None]


def _build_tagged(fields: list[dict[str, object]]) -> bytes:
    """Build the message with ``total_size`` at its fixed point (its varint counts itself)."""
    total = 0
    for _ in range(4):
        data = bytes(S.gtid_tagged_body.build({
            "format_version": 1, "total_size": total,
            # Every Gtid_event field is defined ignorable, so MySQL writes 0 here
            # (9.6.0 fixture); a reader may then skip fields it does not know.
            "last_non_ignorable_field_id": 0, "fields": fields}))
        if len(data) == total:
            return data
        total = len(data)
    raise AssertionError("total_size did not reach a fixed point")  # pragma: no cover


def encode_gtid_tagged_body(body: GtidBody, *, other_events_size: int | None = None,
                            crc: bool = True) -> bytes:
    """Bytes of a GTID_TAGGED_LOG_EVENT body (one serialization message), by ``gtid_tagged_body``.

    Fields are written in id order; original_commit_timestamp and
    original_server_version only when they differ from the immediate ones,
    commit_group_ticket only when non-zero, as MySQL does.

    :param other_events_size: if given, transaction_length is recomputed as
        this plus the event's own size (header, this body, CRC), to the fixed
        point of the varint sizes (:func:`tagged_transaction_length_for`);
        otherwise ``body.transaction_length`` is written as is.
    :param crc: whether the event will carry a CRC32 footer (counts in its size).
    :raises UsageError: when the body has no tag.
    """
    if not body.tag:
        raise UsageError("an untagged GTID is written as GTID_LOG_EVENT: use encode_gtid_body")
    if other_events_size is not None:
        body = replace(body, transaction_length=tagged_transaction_length_for(
            body, other_events_size, crc=crc))
    return _build_tagged(_tagged_fields(body))


def tagged_transaction_length_for(body: GtidBody, other_events_size: int, *, crc: bool) -> int:
    """transaction_length of a tagged GTID: ``other_events_size`` + the event's own size.

    The event's size depends on the varint width of the length it stores (and
    of total_size), so iterate until nothing changes; sizes only grow, so a
    few rounds suffice.
    """
    length = other_events_size
    for _ in range(8):
        data = _build_tagged(_tagged_fields(replace(body, transaction_length=length)))
        new = other_events_size + HEADER_LEN + len(data) + (CHECKSUM_LEN if crc else 0)
        if new == length:
            return length
        length = new
    raise AssertionError("transaction_length did not reach a fixed point")  # pragma: no cover


# ---- transaction_length (log_event.cc set_trx_length_by_cache_size; format-spec §3.1) ----

def transaction_length_for(other_events_size: int,
                           gtid_event_size_without_length_field: int) -> int:
    """The self-inclusive transaction_length of an untagged GTID event.

    T0 = the transaction's other events (as written, CRCs included) + the GTID
    event without its packed length field; then the packed field counts
    itself: T = T0+1; if T >= 251: T += 2; if T >= 65536: T += 1; if
    T >= 16777216: T += 5 (1, 3, 4 or 9 bytes).

    Example::

        >>> transaction_length_for(157, 76)        # 8.0.32 fixture: 77-byte GTID event
        234
        >>> transaction_length_for(173, 76), transaction_length_for(174, 76)
        (250, 253)
    """
    length = other_events_size + gtid_event_size_without_length_field + 1
    if length >= 251:
        length += 2
    if length >= 1 << 16:
        length += 1
    if length >= 1 << 24:
        length += 5
    return length


# ---- framing (binlog_event.h Log_event_header; format-spec §1.3, §2.3) ----

def frame_event(timestamp: int, type_code: int, server_id: int, flags: int, body: bytes, *,
                crc: bool, log_pos: int) -> bytes:
    """A whole event: 19-byte ``common_header`` + body + optional CRC32 footer.

    event_size counts the footer.  A FORMAT_DESCRIPTION_EVENT's CRC is taken
    with LOG_EVENT_BINLOG_IN_USE_F cleared, as MySQL does.

    Example::

        >>> ev = frame_event(0, 16, 1, 0, bytes(8), crc=False, log_pos=31)   # an XID event
        >>> len(ev), ev[9:13].hex(), ev[13:17].hex()
        (27, '1b000000', '1f000000')
        >>> len(frame_event(0, 16, 1, 0, bytes(8), crc=True, log_pos=31))
        31
    """
    size = HEADER_LEN + len(body) + (CHECKSUM_LEN if crc else 0)
    header = S.common_header.build({
        "timestamp": timestamp, "type_code": type_code, "server_id": server_id,
        "event_size": size, "log_pos": log_pos, "flags": flags})
    raw = bytes(header) + body
    if not crc:
        return raw
    return raw + _crc(raw, fde=type_code == EventType.FORMAT_DESCRIPTION_EVENT)


def _crc(data: bytes, *, fde: bool) -> bytes:
    if fde:
        flags = int.from_bytes(data[_FLAGS_AT:_FLAGS_END], "little") & ~EventFlag.BINLOG_IN_USE
        data = data[:_FLAGS_AT] + flags.to_bytes(_FLAGS_END - _FLAGS_AT, "little") \
            + data[_FLAGS_END:]
    return (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "little")


def recompute_crc(raw: bytes, *, fde: bool = False) -> bytes:
    """``raw`` with its last 4 bytes replaced by the CRC32 of everything before them.

    :param fde: compute as for a Format_description_event (IN_USE flag cleared).

    Example::

        >>> ev = frame_event(0, 16, 1, 0, bytes(8), crc=True, log_pos=31)
        >>> recompute_crc(ev[:-4] + b'????') == ev
        True
    """
    return raw[:-CHECKSUM_LEN] + _crc(raw[:-CHECKSUM_LEN], fde=fde)


def crc_ok(raw: bytes, *, fde: bool) -> bool:
    """Whether an event's stored CRC32 (its last 4 bytes) is right.

    :param fde: the event is a Format_description_event: the CRC is accepted
        computed with the IN_USE flag cleared (as servers write it) or as stored.
    """
    return recompute_crc(raw, fde=fde) == raw or (fde and recompute_crc(raw) == raw)


def set_log_pos(raw: bytes, log_pos: int, *, crc: bool) -> bytes:
    """``raw`` with a new header log_pos (and CRC, computed FDE-style for type 15)."""
    header = parse_header(raw)._replace(log_pos=log_pos)
    out = header.build() + raw[HEADER_LEN:]
    return recompute_crc(out, fde=header.type_code == EventType.FORMAT_DESCRIPTION_EVENT) \
        if crc else out


# ---- one GTID event: new logical timestamps (format-spec §2.5 "Rewriter") ----

def _decode_event_gtid(raw: bytes, type_code: int, crc: bool, pos: Position) -> GtidBody:
    data = raw[HEADER_LEN:len(raw) - (CHECKSUM_LEN if crc else 0)]
    ctx = DecodeContext(FDE_FREE_STRUCTS, pos, type_code)
    if type_code == _TAGGED:
        return decode_gtid_tagged(data, ctx)
    if parse_at(S.gtid_body, data, ctx).rest:
        raise UnsupportedLog("GTID event has trailing bytes repltool does not know; refusing "
                             "to re-encode it", pos=pos, event_type=type_name(type_code))
    return decode_gtid(data, ctx)


def patch_clock(raw_event: bytes, last_committed: int, sequence_number: int, *,
                encoding: str = "mysql", crc: bool, relay_log: bool = False,
                pos: Position | None = None) -> tuple[bytes, int]:
    """New bytes for a GTID event (type 33, 34 or 42) carrying new logical timestamps.

    * Untagged, ``"mysql"`` encoding, event already typecode 2: the 16 bytes at
      header+26 are overwritten (built by ``gtid_timestamps``) and the CRC
      recomputed; nothing else changes.
    * Otherwise (delta16, a typecode change, tagged): the body is re-serialized;
      event_size changes and transaction_length is recomputed, since it
      includes this event's own size (other events' size = old
      transaction_length - old event size).  In a binlog the event's own
      log_pos moves by the size change (its end moved); in a relay log it is a
      source coordinate and is kept.

    If nothing would change, ``raw_event`` is returned as is.

    The first case is taken on the raw bytes when the body's layout is one
    :func:`_plain_clock_body` recognises (every MySQL 5.7-9.x untagged event),
    and the second for untagged typecode-2/3 bodies that re-encode to themselves
    (:func:`_gtid_parts`: the clock swapped, transaction_length recomputed, the
    rest copied); anything else is decoded with the ``construct`` declarations
    (:func:`patch_clock_reference` always decodes: the same result, slower).

    :param crc: whether the event carries a CRC32 footer (governing FDE's alg).
    :returns: ``(new_event_bytes, size_delta)``.
    :raises UsageError: not a GTID event, impossible timestamps, unknown encoding.
    :raises UnsupportedLog: a 5.6 event (no clock to patch) or unknown trailing bytes.
    :raises ChecksumMismatch: the event's stored CRC is wrong (never laundered).
    """
    return _patch_clock(raw_event, last_committed, sequence_number, encoding, crc, relay_log,
                        pos, in_place=True)


def patch_clock_reference(raw_event: bytes, last_committed: int, sequence_number: int, *,
                          encoding: str = "mysql", crc: bool, relay_log: bool = False,
                          pos: Position | None = None) -> tuple[bytes, int]:
    """:func:`patch_clock` without its in-place shortcut: every event is decoded and
    re-encoded with the ``construct`` declarations.  The same result (or error);
    the reference the shortcut is tested against."""
    return _patch_clock(raw_event, last_committed, sequence_number, encoding, crc, relay_log,
                        pos, in_place=False)


def _patch_clock(raw_event: bytes, last_committed: int, sequence_number: int, encoding: str,
                 crc: bool, relay_log: bool, pos: Position | None, *,
                 in_place: bool) -> tuple[bytes, int]:
    if encoding not in ENCODINGS:
        raise UsageError(f"unknown clock encoding {encoding!r}; expected one of {ENCODINGS}")
    pos = pos or Position("<event>", 0)
    if len(raw_event) < HEADER_LEN:
        raise MalformedEvent(f"{len(raw_event)} bytes: shorter than an event header", pos=pos)
    header = parse_header(raw_event)
    tc = header.type_code
    name = type_name(tc)
    if tc not in _UNTAGGED and tc != _TAGGED:
        raise UsageError("not a GTID event", pos=pos, event_type=name)
    if header.event_size != len(raw_event):
        raise MalformedEvent(f"event_size {header.event_size} but {len(raw_event)} bytes given",
                             pos=pos, event_type=name)
    if (in_place and tc != _TAGGED
            and _typecode(encoding, last_committed, sequence_number) == LOGICAL_TIMESTAMP_TYPECODE):
        patched = _patch_in_place(raw_event, last_committed, sequence_number, crc=crc, pos=pos,
                                  name=name)
        if patched is not None:
            return patched
    if in_place and tc != _TAGGED:
        patched = _patch_resized(raw_event, last_committed, sequence_number, encoding, crc,
                                 relay_log, header, pos, name)
        if patched is not None:
            return patched
    old = _decode_event_gtid(raw_event, tc, crc, pos)
    if old.lt_type is None:
        raise UnsupportedLog("a 5.6 GTID event carries no logical clock to patch", pos=pos,
                             event_type=name)
    target = old.lt_type if tc == _TAGGED else _typecode(encoding, last_committed,
                                                          sequence_number)
    if (last_committed, sequence_number, target) == (
            old.last_committed, old.sequence_number, old.lt_type):
        return raw_event, 0
    _check_patch(raw_event, last_committed, sequence_number, crc, pos, name)
    if tc != _TAGGED and old.lt_type == target == LOGICAL_TIMESTAMP_TYPECODE:
        start = HEADER_LEN + CLOCK_OFFSET
        stamps = S.gtid_timestamps.build(_clock(target, last_committed, sequence_number),
                                         lt_type=target)
        new = raw_event[:start] + stamps + raw_event[start + len(stamps):]
        return (recompute_crc(new) if crc else new), 0
    new_body = replace(old, last_committed=last_committed, sequence_number=sequence_number,
                       lt_type=target, delta16_saturated=False)
    other = None if old.transaction_length is None else old.transaction_length - len(raw_event)
    if other is not None and other < 0:
        raise MalformedEvent(f"transaction_length {old.transaction_length} is smaller than the "
                             f"GTID event itself ({len(raw_event)} bytes)", pos=pos,
                             event_type=name)
    data = _reserialize(tc, new_body, other, crc, encoding)
    delta = HEADER_LEN + len(data) + (CHECKSUM_LEN if crc else 0) - len(raw_event)
    log_pos = header.log_pos if relay_log or header.log_pos == 0 else header.log_pos + delta
    if log_pos < 0:
        raise MalformedEvent(f"log_pos {header.log_pos} is below the GTID event's own size "
                             f"({len(raw_event)} bytes): it cannot move by {delta}", pos=pos,
                             event_type=name)
    if log_pos > 0xFFFFFFFF:
        raise UnsupportedLog(f"log_pos {header.log_pos} cannot move by {delta}: it would leave "
                             "the 32-bit range", pos=pos, event_type=name)
    return frame_event(header.timestamp, tc, header.server_id, header.flags, data, crc=crc,
                       log_pos=log_pos), delta


def _check_patch(raw_event: bytes, last_committed: int, sequence_number: int, crc: bool,
                 pos: Position, name: str) -> None:
    """What a GTID event must satisfy before its clock changes (values, stored CRC)."""
    if last_committed < 0 or not (last_committed < sequence_number
                                  or last_committed == sequence_number == 0):
        raise UsageError(f"invalid logical timestamps last_committed={last_committed}, "
                         f"sequence_number={sequence_number}: need 0 <= lc < seq or (0, 0)",
                         pos=pos, event_type=name)
    if crc and not crc_ok(raw_event, fde=False):
        raise ChecksumMismatch("stored CRC32 is wrong; refusing to rewrite this event",
                               pos=pos, event_type=name)


def _plain_clock_body(raw: bytes, start: int, end: int) -> bool:
    """Whether ``raw[start:end]`` is an untagged GTID body with typecode 2 and no unknown bytes.

    The presence-detected parts of ``S.gtid_body`` after the clock (commit timestamps
    7/14, transaction_length packed, server versions 4/8, ticket 8) are walked by
    :func:`~repltool.binlog.gtidtail.gtid_tail`; True only when they end exactly at
    ``end``.  On any doubt False, and the caller decodes with construct (which then
    gives the precise verdict).
    """
    p = start + CLOCK_OFFSET + _CLOCK.size
    if p > end or raw[start + _LT_AT] != LOGICAL_TIMESTAMP_TYPECODE:
        return False
    tail = gtid_tail(raw, p, end)
    return tail is not None and tail[9] == end


def _patch_in_place(raw_event: bytes, last_committed: int, sequence_number: int, *, crc: bool,
                    pos: Position, name: str) -> tuple[bytes, int] | None:
    """:func:`patch_clock` for a plain typecode-2 body, on the bytes; None: decode instead."""
    end = len(raw_event) - (CHECKSUM_LEN if crc else 0)
    if not _plain_clock_body(raw_event, HEADER_LEN, end) or sequence_number > _INT64_MAX:
        return None
    start = HEADER_LEN + CLOCK_OFFSET
    if _CLOCK.unpack_from(raw_event, start) == (last_committed, sequence_number):
        return raw_event, 0
    _check_patch(raw_event, last_committed, sequence_number, crc, pos, name)
    new = b"".join((raw_event[:start], _CLOCK.pack(last_committed, sequence_number),
                    raw_event[start + _CLOCK.size:]))
    return (recompute_crc(new) if crc else new), 0


def patched_on_bytes() -> int:
    """GTID events :func:`patch_clock` re-serialized on the raw bytes (a typecode or
    size change) since import, without ``construct`` (the tests' proof that it ran)."""
    return _byte_patches


def _gtid_parts(raw: bytes, start: int, end: int) -> tuple[int, int, int, int | None, int] | None:
    """``raw[start:end]`` split as an untagged typecode-2/3 GTID body that re-encodes to
    itself: ``(lt_type, clock_end, tl_at, transaction_length, tl_end)`` (``tl_at ==
    tl_end`` and length None when absent).

    None (decode with construct instead) for anything else: another typecode, unknown
    trailing bytes, or a part :func:`encode_gtid_body` would write differently (an
    original commit timestamp / server version equal to the immediate one, a zero
    commit_group_ticket).  The parts after the clock are walked by
    :func:`~repltool.binlog.gtidtail.gtid_tail`.
    """
    lt = raw[start + _LT_AT] if end > start + _LT_AT else None
    width = _CLOCK_SIZE.get(lt)   # type: ignore[arg-type]
    if width is None:
        return None
    clock_end = start + CLOCK_OFFSET + width
    if clock_end > end:
        return None
    tail = gtid_tail(raw, clock_end, end)
    if tail is None or tail[9] != end:
        return None
    ict, oct_, tl, isv, osv, ticket, ts_end, tl_end, sv_end, _ = tail
    if (ts_end - clock_end == 2 * COMMIT_TS_LEN and oct_ == ict
            or sv_end - tl_end == 2 * SERVER_VERSION_LEN and osv == isv
            or ticket == 0):                          # a zero ticket is not written
        return None
    return lt, clock_end, ts_end, tl, tl_end    # type: ignore[return-value]


def _patch_resized(raw_event: bytes, last_committed: int, sequence_number: int, encoding: str,
                   crc: bool, relay_log: bool, header: Header, pos: Position,
                   name: str) -> tuple[bytes, int] | None:
    """:func:`patch_clock`'s re-serialization of an untagged typecode-2/3 event on the
    bytes (what :func:`_reserialize` and :func:`frame_event` build from the decoded
    body); None: decode with construct instead."""
    global _byte_patches
    crc_len = CHECKSUM_LEN if crc else 0
    end = len(raw_event) - crc_len
    parts = _gtid_parts(raw_event, HEADER_LEN, end)
    if parts is None or sequence_number > _INT64_MAX or not (
            0 <= last_committed < sequence_number or last_committed == sequence_number == 0):
        return None
    lt, clock_end, tl_at, tl, tl_end = parts
    start = HEADER_LEN + CLOCK_OFFSET
    if lt == LOGICAL_TIMESTAMP_TYPECODE:
        old_lc, old_sn = _CLOCK.unpack_from(raw_event, start)
    else:
        old_sn, d = _CLOCK_D16.unpack_from(raw_event, start)
        old_lc = max(0, old_sn - d)
    target = _typecode(encoding, last_committed, sequence_number)
    if (last_committed, sequence_number, target) == (old_lc, old_sn, lt):
        return raw_event, 0
    if lt == target == LOGICAL_TIMESTAMP_TYPECODE:
        return None                     # _patch_in_place's case (the bytes stay in place)
    if tl is not None and tl < len(raw_event):
        return None                     # construct's path raises the MalformedEvent
    _check_patch(raw_event, last_committed, sequence_number, crc, pos, name)
    if target == LOGICAL_TIMESTAMP_TYPECODE:
        clock = _CLOCK.pack(last_committed, sequence_number)
    else:
        clock = _CLOCK_D16.pack(sequence_number,
                                min(sequence_number - last_committed, DELTA16_SATURATED))
    head = b"".join((raw_event[HEADER_LEN:HEADER_LEN + _LT_AT], bytes((target,)), clock,
                     raw_event[clock_end:tl_at]))
    tail = raw_event[tl_end:end]
    if tl is None:
        data = head + tail
    else:
        own = HEADER_LEN + len(head) + len(tail) + crc_len
        length = transaction_length_for(tl - len(raw_event), own)
        data = b"".join((head, S.encode_packed_int(length), tail))
    size = HEADER_LEN + len(data) + crc_len
    delta = size - len(raw_event)
    log_pos = header.log_pos if relay_log or header.log_pos == 0 else header.log_pos + delta
    if not 0 <= log_pos <= 0xFFFFFFFF:
        return None
    new = header._replace(event_size=size, log_pos=log_pos).build() + data
    if crc:
        new += (zlib.crc32(new) & 0xFFFFFFFF).to_bytes(4, "little")
    _byte_patches += 1
    return new, delta


def _reserialize(type_code: int, body: GtidBody, other_events_size: int | None, crc: bool,
                 encoding: str) -> bytes:
    """A GTID body whose transaction_length (if any) counts the new size of its own event."""
    if type_code == _TAGGED:
        return encode_gtid_tagged_body(body, other_events_size=other_events_size, crc=crc)
    data = encode_gtid_body(body, encoding=encoding)
    if other_events_size is None or body.transaction_length is None:
        return data
    own = HEADER_LEN + len(data) + (CHECKSUM_LEN if crc else 0) \
        - len(S.encode_packed_int(body.transaction_length))
    length = transaction_length_for(other_events_size, own)
    return encode_gtid_body(replace(body, transaction_length=length), encoding=encoding)
