"""The one Python walk of an untagged GTID body's tail (:mod:`repltool.binlog.gtidtail`)
against construct's ``S.gtid_body``, and the compiled core's copies against it.

* ``gtid_tail`` gives construct's values field by field and ends where construct's
  ``rest`` begins, on every body it does not hand back (and hands back few whole ones);
* its callers are the walk: ``fast_gtid``'s fields, ``writer._plain_clock_body`` and
  ``writer._gtid_parts`` follow from it;
* the core's copies: ``_retagcore.pxi`` ``_plain_clock_body`` (through ``retag_walk``)
  patches in place exactly the bodies ``writer._plain_clock_body`` accepts; the scanner's
  ``_mysql_gtid`` and the text printer's ``gtid`` take exactly the bodies ``gtid_tail``
  reads (one GTID body spliced into a synth log), with the general reader's results.
"""

from __future__ import annotations

from array import array
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import structs as S
from repltool.binlog.constants import (
    COMMIT_TIMESTAMP_FLAG, LOGICAL_TIMESTAMP_TYPECODE, SERVER_VERSION_FLAG, EventType,
)
from repltool.binlog.decode import DecodeContext, parse_at
from repltool.binlog.fastdecode import fast_gtid
from repltool.binlog.gtidtail import gtid_tail
from repltool.binlog.writer import _gtid_parts, _plain_clock_body, frame_event, set_log_pos
from repltool.errors import ReplToolError
from repltool.positions import Position

CTX = DecodeContext(S.BinlogStructs(b""), Position("test", 0), int(EventType.GTID_LOG_EVENT))
HEAD = bytes([1]) + bytes(range(16)) + (7).to_bytes(8, "little") + bytes(
    [LOGICAL_TIMESTAMP_TYPECODE]) + (3).to_bytes(8, "little") + (9).to_bytes(8, "little")


@st.composite
def _flagged(draw: st.DrawFn, width: int, flag: int) -> bytes:
    """An immediate part of ``width`` bytes; with its ``flag`` set, the original one
    follows (sometimes equal to it)."""
    value = draw(st.integers(0, flag - 1))
    if not draw(st.booleans()):
        return value.to_bytes(width, "little")
    original = draw(st.sampled_from([value, draw(st.integers(0, (1 << 8 * width) - 1))]))
    return (value | flag).to_bytes(width, "little") + original.to_bytes(width, "little")


@st.composite
def tails(draw: st.DrawFn) -> bytes:
    """What MySQL writes after the clock, cut at any era, with damage and trailing bytes."""
    ts = draw(_flagged(7, COMMIT_TIMESTAMP_FLAG))
    tl = draw(st.one_of(
        st.integers(0, 250).map(lambda v: bytes([v])),
        st.integers(251, (1 << 16) - 1).map(lambda v: b"\xfc" + v.to_bytes(2, "little")),
        st.integers(0, (1 << 24) - 1).map(lambda v: b"\xfd" + v.to_bytes(3, "little")),
        st.integers(0, (1 << 64) - 1).map(lambda v: b"\xfe" + v.to_bytes(8, "little")),
        st.sampled_from([b"\xfb", b"\xff", b"\xfc\x01", b"\xfe\x01\x02"])))
    sv = draw(_flagged(4, SERVER_VERSION_FLAG))
    ticket = draw(st.sampled_from([b"", bytes(8), (9).to_bytes(8, "little")]))
    whole = [b"", ts, ts + tl, ts + tl + sv, ts + tl + sv + ticket][draw(st.integers(0, 4))]
    if draw(st.integers(0, 3)) == 0:                       # cut anywhere
        whole = whole[:draw(st.integers(0, len(whole)))]
    return whole + draw(st.sampled_from([b"", b"", b"", b"\x01", b"\x01\x02\x03",
                                         bytes(range(1, 10))]))


def _construct(body: bytes):  # type: ignore[no-untyped-def]
    try:
        return parse_at(S.gtid_body, body, CTX)
    except ReplToolError:
        return None


def test_tail_is_constructs_parse() -> None:
    @_examples(800)
    @given(tail=tails())
    def run(tally: Counter[str], tail: bytes) -> None:
        body = HEAD + tail
        t = gtid_tail(body, len(HEAD), len(body))
        c = _construct(body)
        if t is None:
            tally["construct"] += 1
            return
        tally["walk"] += 1
        assert c is not None, body.hex()
        ict, oct_, tl, isv, osv, ticket, ts_end, tl_end, sv_end, stop = t
        want_ict = c.immediate_commit_timestamp
        want_isv = c.immediate_server_version
        assert ict == (None if want_ict is None else want_ict & ~COMMIT_TIMESTAMP_FLAG)
        assert oct_ == (c.original_commit_timestamp if c.original_commit_timestamp is not None
                        else ict)
        assert isv == (None if want_isv is None else want_isv & ~SERVER_VERSION_FLAG)
        assert osv == (c.original_server_version if c.original_server_version is not None
                       else isv)
        assert (tl, ticket) == (c.transaction_length, c.commit_group_ticket)
        assert body[stop:] == c.rest
        # the offsets: each part's end, an original part stored exactly when flagged
        assert ts_end - len(HEAD) == (0 if ict is None else 14 if c.original_commit_timestamp
                                      is not None else 7)
        assert ts_end <= tl_end <= sv_end <= stop
        assert sv_end - tl_end == (0 if isv is None else 8 if c.original_server_version
                                   is not None else 4)
        assert stop - sv_end == (0 if ticket is None else 8)
        # the callers: fast_gtid's values, the writer's exact-end verdicts
        got = fast_gtid(body, CTX)
        assert (got.immediate_commit_timestamp, got.original_commit_timestamp,
                got.transaction_length, got.immediate_server_version,
                got.original_server_version, got.commit_group_ticket) == t[:6]
        assert _plain_clock_body(body, 0, len(body)) == (stop == len(body))
        parts = _gtid_parts(body, 0, len(body))
        if parts is not None:
            assert stop == len(body) and parts[1:] == (len(HEAD), ts_end, tl, tl_end)

    tally: Counter[str] = Counter()
    run(tally)
    assert tally["walk"] > tally["construct"] > 0, tally


def test_tail_hands_back_what_it_cannot_read() -> None:
    """Cut parts and a NULL / invalid transaction_length first byte: construct decides."""
    full = HEAD + (1 | COMMIT_TIMESTAMP_FLAG).to_bytes(7, "little") + (2).to_bytes(7, "little") \
        + b"\xfc\x10\x01" + (80034 | SERVER_VERSION_FLAG).to_bytes(4, "little") \
        + (50700).to_bytes(4, "little") + (9).to_bytes(8, "little")
    n = len(HEAD)
    assert gtid_tail(full, n, len(full))[:6] == (1, 2, 0x110, 80034, 50700, 9)  # type: ignore[index]
    cut = {n + k for k in (1, 6, 7 + 1, 7 + 6, 14 + 1, 14 + 2, 17 + 1, 17 + 3, 17 + 5, 17 + 7)}
    for end in cut:
        assert gtid_tail(full, n, end) is None, end
    for first in (0xFB, 0xFF):
        assert gtid_tail(full[:n + 14] + bytes([first]) + full[n + 15:], n, len(full)) is None
    # whole eras end where they end; a partial ticket is left to construct's rest
    for end in (n, n + 14, n + 17, n + 25, n + 25 + 3, len(full)):
        t = gtid_tail(full, n, end)
        assert t is not None and t[9] == (n + 25 if end == n + 28 else end)


def _core_patches(core, body: bytes, crc: bool) -> bool:  # type: ignore[no-untyped-def]
    """Whether ``retag_walk`` patched the event's clock itself (else it handed it back)."""
    ev = bytearray(frame_event(1, 33, 1, 0, body, crc=crc, log_pos=0))
    status, q, ci, events, *_ = core.retag_walk(
        ev, len(ev), 0, len(ev), array("q", [0]), array("q", [100]), array("q", [200]), 0,
        crc, True, False, 0)
    if status == core.RETAG_PYTHON:
        assert (q, ci, events) == (0, 0, 0)
        return False
    assert (status, q, ci, events) == (core.RETAG_DONE, len(ev), 1, 1)
    return True


def test_core_retag_walk_patches_what_the_writer_patches_in_place(core) -> None:  # type: ignore[no-untyped-def]
    @_examples(400)
    @given(tail=tails(), crc=st.booleans())
    def run(tally: Counter[bool], tail: bytes, crc: bool) -> None:
        body = HEAD + tail
        want = _plain_clock_body(body, 0, len(body))
        assert _core_patches(core, body, crc) == want, body.hex()
        tally[want] += 1

    tally: Counter[bool] = Counter()
    run(tally)
    assert min(tally[True], tally[False]) > 100, tally


def _examples(n: int) -> settings:
    """``n`` hypothesis examples, the same ones every run."""
    return settings(max_examples=n, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _splice(path: Path, src: bytes, tail: bytes) -> bytes:
    """Writes ``src`` with the GTID body ``HEAD + tail`` to ``path``; returns the body."""
    body = HEAD + tail
    path.write_bytes(_spliced(src, body))
    return body


def _spliced(src: bytes, body: bytes) -> bytes:
    """``src`` (a CRC32 binlog) with its first GTID event's body replaced by ``body`` and
    its first transaction after it (log_pos values follow the new size)."""
    out = bytearray()
    p, seen = 4, 0
    while p < len(src):
        size = int.from_bytes(src[p + 9:p + 13], "little")
        raw = src[p:p + size]
        if raw[4] == EventType.GTID_LOG_EVENT:
            seen += 1
            if seen == 2:
                break
            raw = frame_event(int.from_bytes(raw[:4], "little"), raw[4],
                              int.from_bytes(raw[5:9], "little"), 0, body, crc=True, log_pos=0)
        out += set_log_pos(raw, 4 + len(out) + len(raw), crc=True) if seen else raw
        p += size
    return b"\xfebin" + bytes(out)


def test_core_scanner_reads_what_gtid_tail_reads(core, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    """The scanner's ``_mysql_gtid`` decodes a GTID body itself exactly where
    ``gtid_tail`` reads it (but a transaction_length past int64, which it leaves to the
    driver), and the summaries are the general reader's either way (where construct
    refuses the body, the core stops at it: ``Unsupported``)."""
    from unittest import mock

    from repltool.binlog import corescan
    from repltool.synth import SynthOptions, generate

    from .test_core import _compiled, _general
    work = tmp_path_factory.mktemp("gtidtail")
    src = generate(SynthOptions(out=work / "src", transactions=3, ground_truth=False)).files[0]
    data = src.read_bytes()
    path = work / "binlog.000001"
    decoded: list[int] = []
    fast = corescan.FAST_DECODERS[EventType.GTID_LOG_EVENT]

    def counted(body, ctx):  # type: ignore[no-untyped-def]
        decoded.append(1)
        return fast(body, ctx)

    @_examples(150)
    @given(tail=tails())
    def run(tally: Counter[bool], tail: bytes) -> None:
        body = _splice(path, data, tail)
        t = gtid_tail(body, len(HEAD), len(body))
        want = t is not None and (t[2] is None or t[2] < 1 << 63)
        decoded.clear()
        with mock.patch.dict(corescan.FAST_DECODERS, {EventType.GTID_LOG_EVENT: counted}):
            got = _compiled(core, [path])
        if got is None:                 # a body construct refuses: the core stops there
            assert not want and _general([path])[0] == "error", body.hex()
            tally["refused"] += 1
            return
        assert got == _general([path]), body.hex()
        assert (not decoded) == want, body.hex()
        tally[want] += 1

    tally: Counter[object] = Counter()
    run(tally)
    assert min(tally[True], tally[False]) > 20 and tally["refused"] > 0, tally


def test_core_text_printer_prints_what_gtid_tail_reads(core, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    """``dump -v``'s compiled printer (``_textcore.pxi`` ``gtid``) prints a GTID event
    itself exactly where ``gtid_tail`` reads its body, and prints the general printer's
    bytes (or stops with its error) either way."""
    import io

    from repltool.binlog import ReadOptions, read_events
    from repltool.cli.render_replay import ReplayPrinter, print_events, print_logs
    from repltool.cli.render_rows import RowsRenderer
    from repltool.synth import SynthOptions, generate

    work = tmp_path_factory.mktemp("gtidtext")
    src = generate(SynthOptions(out=work / "src", transactions=3, ground_truth=False)).files[0]
    data = src.read_bytes()
    path = work / "binlog.000001"

    def printed(compiled: bool) -> tuple[bytes, object, int]:
        out = io.BytesIO()
        printer = ReplayPrinter(out, base64_output="decode-rows", rows=RowsRenderer(1))
        error = None
        try:
            if compiled:
                print_logs(printer, [str(path)], ReadOptions())
            else:
                print_events(printer, read_events([str(path)], ReadOptions()))
        except ReplToolError as exc:
            error = (type(exc).__name__, str(exc))
        return out.getvalue(), error, printer.core_events

    path.write_bytes(_spliced(data, HEAD))          # 5.7's 42 bytes: the core prints it
    every = printed(True)[2]
    assert every > 1

    @_examples(150)
    @given(tail=tails())
    def run(tally: Counter[object], tail: bytes) -> None:
        body = _splice(path, data, tail)
        got, want = printed(True), printed(False)
        assert got[:2] == want[:2], body.hex()
        if got[1] is not None:                       # construct refuses the body
            tally["refused"] += 1
            return
        reads = gtid_tail(body, len(HEAD), len(body)) is not None
        assert got[2] == (every if reads else every - 1), body.hex()
        tally[reads] += 1

    tally: Counter[object] = Counter()
    run(tally)
    assert min(tally[True], tally[False]) > 20 and tally["refused"] > 0, tally
