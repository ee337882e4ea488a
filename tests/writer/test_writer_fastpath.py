"""The rewriter's fast paths against the construct declarations they shortcut.

``parse_header`` (struct) against ``S.common_header``; the in-place clock
patch of :func:`patch_clock` against :func:`patch_clock_reference` (decode and
re-encode with ``gtid_body``/``gtid_timestamps``); and whole files written by
:func:`rewrite_log` and :func:`rewrite_log_reference`, which must be byte-identical.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from repltool.binlog import structs as S
from repltool.binlog.constants import HEADER_LEN
from repltool.binlog.decode import DecodeContext, parse_at
from repltool.binlog.rewrite import rewrite_log, rewrite_log_reference
from repltool.binlog.writer import (
    _plain_clock_body, encode_gtid_body, frame_event, parse_header, patch_clock,
    patch_clock_reference, recompute_crc,
)
from repltool.errors import ReplToolError
from repltool.positions import Position
from repltool.synth import write_sample

from writer_helpers import gtid, load

CTX = DecodeContext(S.BinlogStructs(b""), Position("test", 0), 33)
CORPUS_GLOB = "mysql/*/*"


def _readable(path: Path) -> bool:
    """Files repltool reads (the others are refused alike by both ways: see the last test)."""
    return load(path) is not None


def _with_gtids(path: Path) -> bool:
    cf = load(path)
    return cf is not None and bool(cf.gtids)


def _outcome(fn, *args, **kw):   # type: ignore[no-untyped-def]
    """The value, or the ReplToolError type and message (both paths must agree on either)."""
    try:
        return ("ok", fn(*args, **kw))
    except ReplToolError as exc:
        return ("error", type(exc).__name__, str(exc))


def _bodies_around(body: bytes) -> list[bytes]:
    """A GTID body, every truncation of its optional part, and trailing-byte variants."""
    out = [body[:n] for n in range(40, len(body) + 1)]
    out += [body + bytes(range(1, k + 1)) for k in (1, 3, 4, 7, 8, 9)]
    for i in (48, 55):                  # commit-timestamp and server-version flag bytes
        if i < len(body):
            out.append(body[:i] + bytes([body[i] ^ 0x80]) + body[i + 1:])
    if len(body) > 49:
        out += [body[:49] + bytes([first]) + body[50:] for first in (250, 251, 252, 253, 254, 255)]
    return out


def _construct_clean(body: bytes) -> bool:
    """What construct says: typecode 2, a 16-byte clock, no unknown trailing bytes."""
    try:
        c = parse_at(S.gtid_body, body, CTX)
    except ReplToolError:
        return False
    return c.lt_type == 2 and c.rest == b""


def _variants() -> list[bytes]:
    """Bodies of every shape MySQL writes, built by construct."""
    full = gtid(commit_group_ticket=9)
    shapes = [
        gtid(immediate_commit_timestamp=None, original_commit_timestamp=None,
             transaction_length=None, immediate_server_version=None,
             original_server_version=None),                           # 5.7.? 42 bytes
        gtid(transaction_length=None, immediate_server_version=None,
             original_server_version=None),                           # timestamps only
        gtid(immediate_server_version=None, original_server_version=None),
        gtid(), gtid(original_commit_timestamp=5), gtid(original_server_version=50700),
        gtid(transaction_length=70_000), gtid(transaction_length=1 << 25), full,
    ]
    return [encode_gtid_body(b) for b in shapes]


def test_plain_clock_body_never_accepts_what_construct_refuses() -> None:
    """Soundness of the shortcut: accepted => construct parses it as plain typecode 2."""
    accepted = 0
    for body in _variants():
        for variant in _bodies_around(body):
            if _plain_clock_body(variant, 0, len(variant)):
                accepted += 1
                assert _construct_clean(variant), variant.hex()
    assert accepted >= len(_variants())        # every whole MySQL shape takes the shortcut


@pytest.mark.corpus_files("path", CORPUS_GLOB, select=_readable)
def test_header_struct_matches_construct(path: Path) -> None:
    cf = load(path)
    assert cf is not None
    for ev in cf.events:
        raw = ev.raw[:HEADER_LEN]
        c = S.common_header.parse(raw)
        h = parse_header(raw)
        assert h == (c.timestamp, c.type_code, c.server_id, c.event_size, c.log_pos, c.flags)
        assert h.build() == raw == S.common_header.build(c)


@pytest.mark.corpus_files("path", CORPUS_GLOB, select=_with_gtids)
def test_patch_fast_path_equals_reference(path: Path) -> None:
    """Every GTID event of the corpus, with its plain typecode-2 body found as construct finds it."""
    cf = load(path)
    assert cf is not None and cf.gtids
    rng = random.Random(path.name)
    shortcut = 0
    for ev in cf.gtids:
        crc = ev.crc is not None
        body = ev.raw[HEADER_LEN:len(ev.raw) - (4 if crc else 0)]
        if ev.type_code != 42:
            assert _plain_clock_body(body, 0, len(body)) == _construct_clean(body)
            shortcut += _plain_clock_body(body, 0, len(body))
        lc, sn = ev.body.last_committed, ev.body.sequence_number
        bad_crc = ev.raw[:-1] + bytes([ev.raw[-1] ^ 1])
        for raw in (ev.raw, bad_crc) if crc else (ev.raw,):
            for clock in ((lc, sn), (lc + 7, sn + 1000), (0, 0), (5, 5), (-1, 2),
                          (rng.randrange(1 << 20), (1 << 40) + rng.randrange(1 << 20))):
                for encoding in ("mysql", "delta16"):
                    kw = dict(encoding=encoding, crc=crc, relay_log=cf.relay_log, pos=ev.pos)
                    assert _outcome(patch_clock, raw, *clock, **kw) == \
                        _outcome(patch_clock_reference, raw, *clock, **kw)
    # the in-place shortcut really ran on every untagged typecode-2 GTID of the file
    # (5.6's GTIDs have no clock; the tagged 9.x ones are rebuilt, not patched)
    assert shortcut == sum(1 for e in cf.gtids if e.type_code != 42 and e.body.lt_type == 2)


def test_patch_in_place_touches_clock_and_crc_only() -> None:
    raw = frame_event(1, 33, 1, 0, encode_gtid_body(gtid()), crc=True, log_pos=100)
    new, delta = patch_clock(raw, 11, 12, crc=True)
    assert delta == 0 and len(new) == len(raw) and recompute_crc(new) == new
    assert [i for i in range(len(raw)) if raw[i] != new[i] and i < len(raw) - 4] == \
        [i for i in range(HEADER_LEN + 26, HEADER_LEN + 42) if raw[i] != new[i]]


def _clock_sets(path: Path) -> list[dict[int, tuple[int, int]]]:
    cf = load(path)
    assert cf is not None
    clocks = cf.clocks()
    serial = {o: (n, n + 1) for n, o in enumerate(sorted(clocks))}
    return [clocks, {o: (lc + 7, sn + 1000) for o, (lc, sn) in clocks.items()}, serial]


def _both_ways(src: Path, tmp: Path, clocks: dict[int, tuple[int, int]], **kw) -> None:  # type: ignore[no-untyped-def]
    fast = _outcome(rewrite_log, src, tmp / "fast", clocks, **kw)
    slow = _outcome(rewrite_log_reference, src, tmp / "slow", clocks, **kw)
    if fast[0] == "ok":
        assert slow[0] == "ok", slow
        assert (tmp / "fast").read_bytes() == (tmp / "slow").read_bytes()
        assert fast[1].events == slow[1].events and fast[1].warnings == slow[1].warnings
        assert fast[1].gtid_events_rewritten == slow[1].gtid_events_rewritten
        assert fast[1].log_pos_updated == slow[1].log_pos_updated
    else:
        assert fast == slow


@pytest.mark.corpus_files("path", CORPUS_GLOB, select=_readable)
def test_rewrite_fast_equals_reference_on_corpus(path: Path, tmp_path: Path) -> None:
    for clocks in _clock_sets(path):
        for encoding in ("mysql", "delta16"):
            _both_ways(path, tmp_path, clocks, encoding=encoding, chunk_size=4096)


def test_rewrite_fast_equals_reference_on_generated_logs(tmp_path: Path) -> None:
    logs = write_sample(tmp_path / "logs", transactions=400)
    for log in logs:
        for clocks in _clock_sets(Path(log)):
            for encoding in ("mysql", "delta16"):
                _both_ways(Path(log), tmp_path, clocks, encoding=encoding, chunk_size=1000)


def test_unmatched_offsets_are_refused_both_ways(tmp_path: Path) -> None:
    log = Path(write_sample(tmp_path / "logs", transactions=20)[0])
    clocks = _clock_sets(log)[1]
    first = min(clocks)
    clocks[first + 1] = (1, 2)              # inside an event
    clocks[log.stat().st_size + 10] = (1, 2)  # after the end
    _both_ways(log, tmp_path, clocks)
    with pytest.raises(ReplToolError, match=f"{first + 1}, {log.stat().st_size + 10}"):
        rewrite_log(log, tmp_path / "x", clocks)


@pytest.mark.corpus_files("path", CORPUS_GLOB, select=lambda p: not _readable(p))
def test_unreadable_corpus_files_fail_alike_both_ways(path: Path, tmp_path: Path) -> None:
    fast = _outcome(rewrite_log, path, tmp_path / "fast", {})
    slow = _outcome(rewrite_log_reference, path, tmp_path / "slow", {})
    assert fast[0] == "error" and fast == slow
    assert not (tmp_path / "fast").exists() and not (tmp_path / "slow").exists()
