"""Truncation and mutation sweeps over one corpus file (run inside the sandbox worker).

Each sweep writes every damaged variant to a real file in ``tmpdir`` (the reader
is always exercised through its file path) and applies
:func:`._checks.full_contract`.  ``mode`` is ``"default"`` (the CI budget) or
``"full"`` (``REPLTOOL_SWEEP=full``).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any, Iterator

from repltool.binlog.constants import EventType
from repltool.binlog.events import Event, FormatDescriptionBody
from repltool.errors import TruncatedLog

from ._build import tlv
from ._checks import (
    HEADER, deterministic, fix_crc, full_contract, key, prefix_ok, read, sample, splice,
    tiling,
)

#: a file is "big" (boundaries sampled, mutations on spliced windows) when
#: events x bytes exceeds this: every cut of a file re-reads its prefix
BIG = 4_000_000


#: the same for mutations, which read a damaged copy 4-5 times per mutation
BIG_MUTATION = 1_000_000


def is_big(data: bytes, n_events: int, budget: int = BIG) -> bool:
    return len(data) * max(n_events, 1) > budget
KNOWN_TYPES = sorted({int(t) for t in EventType} | {0, 43, 99, 172, 200, 255})


def _write(tmpdir: str, name: str, data: bytes) -> str:
    path = os.path.join(tmpdir, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _baseline(path: str) -> tuple[bytes, Any, list[str], list[Any], int | None]:
    """The file's bytes and its clean read: (data, read, its failures, outer events,
    the offset where the clean read stops early or None)."""
    clean = read(path, f"{path} clean")
    limit = clean.error.pos.offset if clean.error is not None and clean.error.pos else None
    return Path(path).read_bytes(), clean, list(clean.failures), clean.outer, limit


# ---- truncation ----

def truncation(path: str, tmpdir: str, mode: str) -> dict:
    data, clean, failures, outer, limit = _baseline(path)
    n = len(outer)
    big = is_big(data, n)
    if not big:
        idx = range(n)
    elif mode == "full":
        idx = sample(n, 97, 20)
    else:
        idx = sample(n, max(1, n // 2), 2)
    cuts: dict[int, Event | None] = {len(data): None}
    for i in idx:
        e = outer[i]
        cuts[e.pos.offset] = None
        deltas = {1 + deterministic(path, i, "h") % (HEADER - 1)}       # inside the header
        if e.event_size > HEADER:
            deltas.add(HEADER)                                          # header only
            deltas.add(HEADER + deterministic(path, i, "b") % (e.event_size - HEADER))
        if mode == "full":
            deltas |= {e.event_size - 1, e.event_size // 2}
        if big and mode != "full":
            deltas = {max(deltas)}
        for d in deltas:
            if 0 < d < e.event_size:
                cuts[e.pos.offset + d] = e
    # a file whose clean read stops early (special corpus files): cut near that point too
    if limit is not None:
        for c in (limit, limit + 1, limit + HEADER, len(data) - 1):
            if 4 <= c <= len(data):
                cuts.setdefault(c, None)
    cut_file = _write(tmpdir, "cut", b"")
    reads = 0
    for c in sorted(cuts):
        if c > len(data):
            continue
        inside = cuts[c]
        Path(cut_file).write_bytes(data[:c])
        label = f"{path} cut at {c}"
        strict = limit is None or c <= limit
        if inside is None:
            got = read(cut_file, label)
            reads += 1
            failures += got.failures
            if strict and not got.failures:
                if got.error is not None:
                    failures.append(f"{label} (an event boundary): unexpected {got.error!r}")
                if [key(e) for e in got.events] != [key(e) for e in clean.events
                                                    if e.pos.offset < c]:
                    failures.append(f"{label} (an event boundary): events differ from the "
                                    "clean read's first events")
            elif not got.failures:
                failures += prefix_ok(got, clean.events, min(c, limit or c), label)
            continue
        f, got = full_contract(cut_file, label, clean=clean.events,
                               damage_at=min(inside.pos.offset, limit or inside.pos.offset),
                               extras=not big or mode == "full")
        reads += 4
        failures += f
        if strict and got is not None and not got.failures:
            err = got.error
            if not isinstance(err, TruncatedLog) or err.pos is None or \
                    err.pos.offset != inside.pos.offset:
                failures.append(f"{label} (inside {inside.type_name} at {inside.pos.offset}): "
                                f"expected TruncatedLog there, got {err!r}")
    return {"cuts": len(cuts), "reads": reads, "failures": failures[:50],
            "n_failures": len(failures)}


# ---- mutations ----

def _put(ev: bytes, off: int, value: bytes, end: int) -> bytes | None:
    if off < HEADER or off + len(value) > end:
        return None
    m = bytearray(ev)
    m[off:off + len(value)] = value
    return bytes(m)


def _packed_len(ev: bytes, off: int) -> int | None:
    """Width of the packed integer at ``off`` (None when out of range / invalid)."""
    if off >= len(ev):
        return None
    first = ev[off]
    return 1 if first < 251 else {252: 3, 253: 4, 254: 9}.get(first)


def _packed(ev: bytes, off: int) -> int | None:
    w = _packed_len(ev, off)
    if w is None or off + w > len(ev):
        return None
    return ev[off] if w == 1 else int.from_bytes(ev[off + 1:off + w], "little")


HUGE_PACKED = b"\xfe" + b"\xff" * 8
BIG_PACKED = b"\xfc\xff\xff"
MARIA_2_30 = b"\x84" + (1 << 30).to_bytes(4, "big")
MARIA_2_31 = b"\x84\xff\xff\xff\xff"


def field_overwrites(ev: bytes, tc: int, end: int) -> Iterator[tuple[str, bytes | None]]:
    """Length and count fields of ``ev`` (header + body, body ends at ``end``) set huge.

    Offsets assume the post-header lengths every GA server writes; on other
    layouts they are just more byte overwrites.
    """
    b = HEADER
    if tc in (2, 165, 18):
        yield "db_len=255", _put(ev, b + 8, b"\xff", end)
        yield "status_vars_len=65535", _put(ev, b + 11, b"\xff\xff", end)
        yield "status_var updated_db_names count=255", _put(ev, b + 13, b"\x0c\xff", end)
        if tc == 165 and b + 13 <= end:
            svl = int.from_bytes(ev[b + 11:b + 13], "little")
            q = b + 13 + svl + ev[b + 8] + 1
            yield "compressed length 2^30", _put(ev, q, MARIA_2_30, end)
            yield "compressed length 2^32-1", _put(ev, q, MARIA_2_31, end)
            yield "compressed header byte 0", _put(ev, q, b"\x00", end)
    elif tc == 14:
        yield "name_len=2^32-1", _put(ev, b, b"\xff" * 4, end)
        if b + 4 <= end:
            nl = int.from_bytes(ev[b:b + 4], "little")
            yield "value_len=2^32-1", _put(ev, b + 4 + nl + 1 + 1 + 4, b"\xff" * 4, end)
    elif tc == 19:
        yield "db_len=255", _put(ev, b + 8, b"\xff", end)
        if b + 9 <= end:
            t = b + 8 + 1 + ev[b + 8] + 1
            if t < end:
                cc = t + 1 + ev[t] + 1
                yield "column_count=2^64-1", _put(ev, cc, HUGE_PACKED, end)
                yield "column_count=65535", _put(ev, cc, BIG_PACKED, end)
                n, w = _packed(ev, cc), _packed_len(ev, cc)
                if n is not None and w is not None:
                    yield "metadata_len=2^64-1", _put(ev, cc + w + n, HUGE_PACKED, end)
                    yield "metadata_len=65535", _put(ev, cc + w + n, BIG_PACKED, end)
    elif tc in (23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171):
        w_at = b + 8
        if tc in (30, 31, 32, 39, 169, 170, 171):
            yield "extra_info_len=65535", _put(ev, b + 8, b"\xff\xff", end)
            yield "extra_info_len=0", _put(ev, b + 8, b"\x00\x00", end)
            if b + 10 <= end:
                w_at = b + 8 + int.from_bytes(ev[b + 8:b + 10], "little")
        yield "width=2^64-1", _put(ev, w_at, HUGE_PACKED, end)
        yield "width=65535", _put(ev, w_at, BIG_PACKED, end)
        yield "width=0", _put(ev, w_at, b"\x00", end)
        if tc >= 166:
            width, ww = _packed(ev, w_at), _packed_len(ev, w_at)
            if width is not None and ww is not None:
                nb = (width + 7) // 8 * (2 if tc in (167, 170) else 1)
                q = w_at + ww + nb
                yield "compressed length 2^30", _put(ev, q, MARIA_2_30, end)
                yield "compressed length 2^32-1", _put(ev, q, MARIA_2_31, end)
    elif tc == 35:
        yield "n_sids=2^40", _put(ev, b, (1 << 40).to_bytes(8, "little"), end)
        yield "n_sids tagged 2^40", _put(ev, b, b"\x01" + (1 << 40).to_bytes(6, "little")
                                         + b"\x01", end)
        yield "n_intervals=2^40", _put(ev, b + 24, (1 << 40).to_bytes(8, "little"), end)
        yield "interval end<start", _put(ev, b + 32, (9).to_bytes(8, "little")
                                         + (1).to_bytes(8, "little"), end)
    elif tc == 38:
        yield "gtrid_length=2^32-1", _put(ev, b + 5, b"\xff" * 4, end)
        yield "bqual_length=2^32-1", _put(ev, b + 9, b"\xff" * 4, end)
        yield "gtrid_length=65", _put(ev, b + 5, (65).to_bytes(4, "little"), end)
    elif tc == 163:
        if b + 4 <= end:
            flags = int.from_bytes(ev[b:b + 4], "little") & 0xF0000000
            yield "count=2^28-1", _put(ev, b, (flags | 0x0FFFFFFF).to_bytes(4, "little"), end)
            yield "count=2^32-1", _put(ev, b, b"\xff" * 4, end)
    elif tc == 161:
        yield "file_len=2^32-1", _put(ev, b, b"\xff" * 4, end)
    elif tc == 26:
        yield "message_len=255", _put(ev, b + 2, b"\xff", end)
    elif tc == 29:
        yield "length=255", _put(ev, b, b"\xff", end)
    elif tc == 36:
        yield "server_uuid_len=255", _put(ev, b, b"\xff", end)
        yield "snapshot_version_len=2^32-1", _put(ev, b + 10, b"\xff" * 4, end)
        yield "write_set_count=2^32-1", _put(ev, b + 14, b"\xff" * 4, end)
        yield "read_set_count=2^32-1", _put(ev, b + 18, b"\xff" * 4, end)
    elif tc == 37:
        yield "cert_info_count=2^32-1", _put(ev, b + 48, b"\xff" * 4, end)
    elif tc == 162:
        yield "flags2=XA+commit_id", _put(ev, b + 12, b"\xc2", end)
        yield "flags2=0xff", _put(ev, b + 12, b"\xff", end)
        yield "flags_extra=0xff", _put(ev, b + 13, b"\xff", end)
    elif tc in (33, 34):
        yield "lt_type=3", _put(ev, b + 25, b"\x03", end)
        yield "lt_type=255", _put(ev, b + 25, b"\xff", end)
        if b + 49 <= end:
            t = b + 42 + 7 + (7 if ev[b + 48] & 0x80 else 0)
            yield "transaction_length=2^64-1", _put(ev, t, HUGE_PACKED, end)
            yield "transaction_length=0", _put(ev, t, b"\x00", end)
    elif tc == 42:
        yield "total_size=huge", _put(ev, b + 1, b"\xff" * 9, end)
        yield "format_version=7", _put(ev, b, b"\x0e", end)
    elif tc == 15:
        yield "common_header_len=0", _put(ev, b + 56, b"\x00", end)
        yield "common_header_len=255", _put(ev, b + 56, b"\xff", end)
        yield "post_header(QUERY)=255", _put(ev, b + 57 + 1, b"\xff", end)
        yield "post_header(TABLE_MAP)=0", _put(ev, b + 57 + 18, b"\x00", end)
        yield "checksum_alg=7", _put(ev, end - 1, b"\x07", end)
        yield "server_version=3.23", _put(ev, b + 2, b"3.23.58\x00", end)
    elif tc == 4:
        yield "position=2^64-1", _put(ev, b, b"\xff" * 8, end)
    elif tc == 1:
        yield "binlog_version=1", _put(ev, b, b"\x01\x00", end)


def _tlv(body: bytes) -> tuple[list[tuple[int, bytes]], int] | None:
    """(fields, offset of the payload) of a Transaction_payload body, or None."""
    fields, p = [], 0
    while True:
        t = _packed(body, p)
        w = _packed_len(body, p)
        if t is None or w is None:
            return None
        p += w
        if t == 0:
            return fields, p
        n, nw = _packed(body, p), _packed_len(body, p)
        if n is None or nw is None or p + nw + n > len(body):
            return None
        fields.append((t, body[p + nw:p + nw + n]))
        p += nw + n


def _frame(header: bytes, body: bytes, crc_on: bool) -> bytes:
    size = HEADER + len(body) + (4 if crc_on else 0)
    h = bytearray(header)
    h[9:13] = size.to_bytes(4, "little")
    ev = bytes(h) + body
    return ev + zlib.crc32(ev).to_bytes(4, "little") if crc_on else ev


def payload_variants(ev: bytes, crc_on: bool, mode: str) -> Iterator[tuple[str, bytes]]:
    """A Transaction_payload event re-framed with lying TLV fields or damaged inner events."""
    body = ev[HEADER:len(ev) - (4 if crc_on else 0)]
    parsed = _tlv(body)
    if parsed is None:
        return
    fields, start = parsed
    payload = body[start:]
    f = dict(fields)

    def value(t: int) -> int | None:
        return _packed(f[t], 0) if t in f else None

    size, ctype, usize = value(1), value(2), value(3)
    if size is None or ctype is None:
        return
    base = {1: size, 2: ctype, **({3: usize} if usize is not None else {})}
    for name, change in [("payload_size=2^60", {1: 1 << 60}), ("payload_size=0", {1: 0}),
                         ("payload_size-1", {1: size - 1}),
                         ("uncompressed_size=2^60", {3: 1 << 60}),
                         ("uncompressed_size=0", {3: 0}), ("uncompressed_size=1", {3: 1}),
                         ("compression_type=7", {2: 7}), ("compression_type=255", {2: 255})]:
        yield f"TLV {name}", _frame(ev[:HEADER], tlv({**base, **change}) + payload, crc_on)
    yield "TLV without payload_size", _frame(ev[:HEADER], tlv({2: ctype}) + payload, crc_on)
    yield "TLV unterminated", _frame(ev[:HEADER], tlv(base)[:-1], crc_on)
    if ctype != 0:
        return
    import zstandard
    try:
        plain = zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    except zstandard.ZstdError:
        return
    # the same damage as outer events, applied to the inner events, re-compressed
    p, k = 0, 0
    while p + HEADER <= len(plain):
        isize = int.from_bytes(plain[p + 9:p + 13], "little")
        if isize < HEADER or p + isize > len(plain):
            break
        inner = plain[p:p + isize]
        muts = list(field_overwrites(inner, inner[4], isize))
        muts += [(f"inner event_size={v}", inner[:9] + v.to_bytes(4, "little") + inner[13:])
                 for v in (0, 18, 0xFFFFFFFF)]
        muts += [(f"inner type={t}", bytes(inner[:4]) + bytes([t]) + inner[5:])
                 for t in _types_for(k, "payload", mode)]
        for name, m in muts:
            if m is None:
                continue
            new_plain = plain[:p] + m + plain[p + isize:]
            comp = zstandard.ZstdCompressor().compress(new_plain)
            yield (f"inner #{k} ({inner[4]}) {name}",
                   _frame(ev[:HEADER], tlv({1: len(comp), 2: 0, 3: len(new_plain)}) + comp,
                          crc_on))
        p += isize
        k += 1


def _types_for(i: int, salt: object, mode: str) -> list[int]:
    if mode == "full":
        return KNOWN_TYPES
    r = deterministic(i, salt)
    return [KNOWN_TYPES[(r + j * 17) % len(KNOWN_TYPES)] for j in range(3)]


def mutations(ev: bytes, crc_on: bool, index: int, mode: str) -> Iterator[tuple[str, bytes]]:
    """Damaged copies of one event (same length unless the name says otherwise)."""
    size = len(ev)
    tc = ev[4]
    end = size - 4 if crc_on and size >= HEADER + 4 else size

    def fixed(m: bytes) -> bytes:
        if crc_on and size >= HEADER + 4:
            buf = bytearray(m)
            fix_crc(buf, 0, size)
            return bytes(buf)
        return m

    for v in (0, 18, 19, 0xFFFFFFFF, size - 1, size + 1):
        yield f"event_size={v}", ev[:9] + v.to_bytes(4, "little") + ev[13:]
    for t in _types_for(index, "outer", mode):
        if t != tc:
            yield f"type {tc}->{t}", fixed(ev[:4] + bytes([t]) + ev[5:])
    yield "flags=0xffff", fixed(ev[:17] + b"\xff\xff" + ev[19:])
    if end > HEADER:
        body = end - HEADER
        spots = {HEADER, HEADER + body // 2, end - 1}
        if mode == "full":
            spots |= {HEADER + deterministic(index, j) % body for j in range(8)}
        for s in sorted(spots):
            for val in ((ev[s] ^ 0xFF),) if mode != "full" else (ev[s] ^ 0xFF, 0, 0xFF, 0x80):
                yield f"body[{s}]={val:#x}", fixed(ev[:s] + bytes([val]) + ev[s + 1:])
    for name, m in field_overwrites(ev, tc, end):
        if m is not None:
            yield name, fixed(m)
    if tc == 40:
        yield from payload_variants(ev, crc_on, mode)


def _crc_on(events: list[Event], upto: int) -> bool:
    fde = None
    for e in events:
        if e.pos.offset >= upto:
            break
        if isinstance(e.body, FormatDescriptionBody):
            fde = e.body
    return fde is not None and fde.checksum_alg == 1


def mutation(path: str, tmpdir: str, mode: str) -> dict:
    data, clean, failures, outer, limit = _baseline(path)
    n = len(outer)
    big = is_big(data, n, BIG_MUTATION)
    idx = list(range(n)) if not big else sample(n, 97 if mode == "full" else 499,
                                                20 if mode == "full" else 2)
    count = 0
    target = _write(tmpdir, "mut", b"")
    base_file = _write(tmpdir, "base", b"")
    for i in idx:
        e = outer[i]
        crc_on = _crc_on(clean.events, e.pos.offset + 1)
        if big:
            base, at = splice(data, outer, max(1, i - 2) if i else 0, min(n, i + 3))
            Path(base_file).write_bytes(base)
            bclean = read(base_file, f"{path} splice around #{i}")
            failures += bclean.failures
            base_events, blimit = bclean.events, (bclean.error.pos.offset if bclean.error
                                                  and bclean.error.pos else None)
        else:
            base, at, base_events, blimit = data, e.pos.offset, clean.events, limit
        damage_at = at if blimit is None else min(at, blimit)
        ev = base[at:at + e.event_size]
        for name, m in mutations(ev, crc_on, i, mode):
            count += 1
            Path(target).write_bytes(base[:at] + m + base[at + e.event_size:])
            label = f"{path} event #{i} {e.type_name}@{e.pos.offset}: {name}"
            f, _ = full_contract(target, label, clean=base_events, damage_at=damage_at,
                                 extras=not big or mode == "full")
            failures += f
            if len(failures) > 200:
                break
    return {"mutations": count, "events": len(idx), "failures": failures[:50],
            "n_failures": len(failures)}


__all__ = ["truncation", "mutation", "mutations", "field_overwrites", "payload_variants",
           "tiling"]
