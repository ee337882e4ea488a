"""patch_clock's re-serialization on the bytes (a typecode or size change) against
:func:`patch_clock_reference` (decode and re-encode with ``gtid_body``).

Untagged typecode-2/3 events re-tagged to the other encoding change size; the
byte route (:func:`repltool.binlog.writer._patch_resized`) must give exactly the
reference's bytes and delta, or decline (construct then decodes); its layout walk
(:func:`repltool.binlog.writer._gtid_parts`) is checked field by field against
construct's parse.  ``patched_on_bytes()`` proves the route ran.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.binlog import structs as S
from repltool.binlog.writer import (
    _gtid_parts, encode_gtid_body, frame_event, patch_clock, patch_clock_reference,
    patched_on_bytes,
)
from repltool.binlog.decode import DecodeContext, parse_at
from repltool.errors import ReplToolError
from repltool.positions import Position

from test_writer_fastpath import _bodies_around, _outcome
from writer_helpers import gtid

CTX = DecodeContext(S.BinlogStructs(b""), Position("test", 0), 33)
SHAPES = [
    dict(immediate_commit_timestamp=None, original_commit_timestamp=None,
         transaction_length=None, immediate_server_version=None,
         original_server_version=None),                                 # 5.7: 42 bytes
    dict(transaction_length=None, immediate_server_version=None, original_server_version=None),
    dict(immediate_server_version=None, original_server_version=None),
    dict(), dict(original_commit_timestamp=5), dict(original_server_version=50700),
    dict(transaction_length=70_000), dict(transaction_length=1 << 25),
    dict(transaction_length=250), dict(transaction_length=65_600), dict(commit_group_ticket=9),
]
CLOCKS = [(3, 4), (0, 0), (0, 70_000), (1, 70_000), (10, 11), (4, 4), (-1, 3), (5, 2),
          (100, 1 << 40), (0, 65_534), (0, 65_535), (1 << 62, (1 << 63) - 1)]


def _bodies() -> list[bytes]:
    """Every shape in both encodings, their truncations / trailing bytes / flipped flags,
    and the non-canonical parts construct reads but encode_gtid_body writes otherwise."""
    out = []
    for shape in SHAPES:
        for enc in ("mysql", "delta16"):
            body = encode_gtid_body(gtid(**shape), encoding=enc)
            out += _bodies_around(body)
    full = encode_gtid_body(gtid())                   # ict 7 @42, tl @49 (3 bytes), isv @52
    same_oct = bytearray(full[:48] + bytes([full[48] | 0x80]) + full[42:])
    out.append(bytes(same_oct))                       # original == immediate, flagged
    out.append(full[:55] + bytes([full[55] | 0x80]) + full[52:56])
    out.append(full + bytes(8))                       # a zero commit_group_ticket
    out.append(full[:49] + b"\xfc" + (30).to_bytes(2, "little") + full[52:])  # long tl form
    return out


def _parts_by_construct(body: bytes):  # type: ignore[no-untyped-def]
    try:
        c = parse_at(S.gtid_body, body, CTX)
    except ReplToolError:
        return None
    return c


def test_layout_walk_agrees_with_construct() -> None:
    accepted = 0
    for body in _bodies():
        parts = _gtid_parts(body, 0, len(body))
        if parts is None:
            continue
        accepted += 1
        c = _parts_by_construct(body)
        assert c is not None and c.rest == b"", body.hex()
        lt, clock_end, tl_at, tl, tl_end = parts
        assert lt == c.lt_type
        assert clock_end == 26 + len(S.gtid_timestamps.build(c.clock, lt_type=lt))
        assert tl == c.transaction_length
        if tl is not None:
            assert body[tl_at:tl_end] and S.PackedInt.parse(body[tl_at:tl_end]) == tl
        # what the walk accepts re-encodes to itself but for the length it recomputes
        # (no canonicalisation hidden)
        canonical = body if tl is None else \
            body[:tl_at] + S.encode_packed_int(tl) + body[tl_end:]
        assert bytes(S.gtid_body.build(c)) == canonical
    assert accepted >= 2 * len(SHAPES)


def test_byte_route_equals_reference() -> None:
    before = patched_on_bytes()
    resized = 0
    for body in _bodies():
        for crc in (True, False):
            for log_pos in (0, 4000):
                raw = frame_event(9, 33, 5, 0, body, crc=crc, log_pos=log_pos)
                variants = [raw]
                if crc:
                    variants.append(raw[:-1] + bytes([raw[-1] ^ 1]))
                for ev in variants:
                    for clock in CLOCKS:
                        for enc in ("mysql", "delta16"):
                            for relay in (False, True):
                                kw = dict(encoding=enc, crc=crc, relay_log=relay)
                                got = _outcome(patch_clock, ev, *clock, **kw)
                                assert got == _outcome(patch_clock_reference, ev, *clock, **kw)
                                resized += got[0] == "ok" and got[1][1] != 0
    assert resized > 1000
    assert patched_on_bytes() - before >= resized       # every size change took the bytes


@settings(max_examples=300, deadline=None)
@given(shape=st.sampled_from(SHAPES), src=st.sampled_from(("mysql", "delta16")),
       enc=st.sampled_from(("mysql", "delta16")), crc=st.booleans(),
       old=st.tuples(st.integers(0, 1 << 40), st.integers(0, 1 << 20)),
       lc=st.integers(0, 1 << 41), step=st.integers(0, 1 << 17), tl=st.integers(0, 1 << 26),
       log_pos=st.integers(0, 1 << 31), relay=st.booleans())
def test_random_clocks(shape, src, enc, crc, old, lc, step, tl, log_pos, relay) -> None:  # type: ignore[no-untyped-def]
    body = gtid(**shape)
    body = replace(body, sequence_number=old[0] + old[1], last_committed=old[0])
    if body.transaction_length is not None:
        body = replace(body, transaction_length=tl)
    raw = frame_event(1, 34, 2, 0, encode_gtid_body(body, encoding=src), crc=crc,
                      log_pos=log_pos)
    before = patched_on_bytes()
    for clock in ((lc, lc + step), (0, step), (lc, lc)):
        kw = dict(encoding=enc, crc=crc, relay_log=relay)
        got = _outcome(patch_clock, raw, *clock, **kw)
        assert got == _outcome(patch_clock_reference, raw, *clock, **kw)
        if got[0] == "ok" and got[1][1] != 0:
            assert patched_on_bytes() > before


def test_log_pos_below_the_size_change_is_refused_alike() -> None:
    """A binlog GTID event whose log_pos would go below 0 when it shrinks (log_pos 1 is
    impossible: it is the event's end offset): one MalformedEvent line from both routes,
    not construct's build error (hypothesis found it in test_random_clocks)."""
    body = replace(gtid(immediate_commit_timestamp=None, original_commit_timestamp=None,
                        transaction_length=None, immediate_server_version=None,
                        original_server_version=None), sequence_number=0, last_committed=0)
    raw = frame_event(1, 34, 2, 0, encode_gtid_body(body), crc=False, log_pos=1)
    for clock in ((0, 0), (0, 1)):
        kw = dict(encoding="delta16", crc=False)
        got = _outcome(patch_clock, raw, *clock, **kw)
        assert got == _outcome(patch_clock_reference, raw, *clock, **kw)
        assert got[0] == "error" and got[1] == "MalformedEvent" and "log_pos 1" in got[2]
    assert patch_clock(raw, 0, 1, encoding="delta16", crc=False, relay_log=True)[1] == -6
