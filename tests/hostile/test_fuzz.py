"""Property-based fuzzing (hypothesis) of the reader and of the CLI, in the sandbox.

Complements tests/binlog/test_errors.py (which feeds short random tails and
random byte changes to the reader in-process): here every example runs in the
RLIMIT_AS-limited worker with a time bound, and is checked against the whole
contract (:func:`._checks.full_contract`: strict reads with and without CRC
verification, keep-going tiling, transactions, clock scan, input unchanged),
and the inputs are *structured*: framed events of every known type with
random bodies and valid CRCs, so the body decoders are reached instead of
the CRC check.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog.constants import EventType

from ._build import FDE_SOURCE, FDE_SOURCE_MARIADB, FDE_SOURCE_NO_CRC, fde_of, log
from .conftest import FULL

EXAMPLES = 5000 if FULL else 400
CLI_EXAMPLES = 1000 if FULL else 100
SETTINGS = dict(deadline=None, derandomize=not FULL,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])
TYPES = sorted({int(t) for t in EventType} | {0, 99, 200})
SOURCES = [(FDE_SOURCE, True), (FDE_SOURCE_NO_CRC, False), (FDE_SOURCE_MARIADB, True)]
SMALL_FILES = [
    "mysql/rmc/test-data__binlogs__transaction_compression.000001",
    "mysql/rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001",
    "mysql/mysql80/mysql-test__std_data__binlog_transaction.000001",
    "mysql/rmc/test-data__binlogs__mariadb-bin.000001",
    "mysql/rmc/test-data__binlogs__json-opaque.binlog",
    "mysql/mysql56/mysql-test__suite__binlog__std_data__binlog_old_version_4_1.000001",
]

#: a body: random bytes, or bytes that start with a small/huge little-endian length
bodies = st.one_of(
    st.binary(max_size=120),
    st.tuples(st.sampled_from([b"\xff" * 4, b"\xff" * 8, b"\xfe" + b"\xff" * 8, b"\xfc\xff\xff",
                               (1 << 40).to_bytes(8, "little"), b"\x00" * 8]),
              st.binary(max_size=60)).map(lambda t: t[1][:st_offset(t[1])] + t[0] + t[1]),
)


def st_offset(b: bytes) -> int:
    return zlib.crc32(b) % (len(b) + 1)


events = st.lists(st.tuples(st.sampled_from(TYPES), bodies), min_size=1, max_size=8)


def _write(tmp_path: Path, data: bytes) -> str:
    p = tmp_path / "fuzz"
    p.write_bytes(data)
    return str(p)


def _ok(result: dict) -> None:
    assert not result["failures"], "\n".join(result["failures"])


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(tail=st.binary(max_size=3000))
def test_bytes_after_magic(tmp_path: Path, sandbox, tail: bytes) -> None:
    """``\\xfebin`` + anything."""
    _ok(sandbox.run("read", path=_write(tmp_path, b"\xfebin" + tail)))


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(source=st.sampled_from(SOURCES), evs=events, cut=st.integers(0, 10_000),
       flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3))
def test_framed_events_of_every_type(corpus: Path, tmp_path: Path, sandbox, source, evs, cut,
                                     flips) -> None:
    """A real FDE, then events of any type with random bodies and valid CRCs, maybe cut
    short, maybe with a few bytes changed after framing (CRC then wrong)."""
    name, crc = source
    data = bytearray(log(fde_of(corpus, name), evs, crc=crc))
    fde_end = 4 + len(fde_of(corpus, name))
    for at, value in flips:
        i = fde_end + at % max(1, len(data) - fde_end)
        if i < len(data):
            data[i] = value
    data = data[:max(fde_end, len(data) - cut % 40)] if cut % 3 == 0 else data
    _ok(sandbox.run("read", path=_write(tmp_path, bytes(data))))


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.data())
def test_mutated_real_events(corpus: Path, tmp_path: Path, sandbox, data: st.DataObject) -> None:
    """One real event of a corpus file rewritten at random (CRC recomputed): the events
    before it must come out unchanged, the damage must be reported there or later."""
    src = corpus / data.draw(st.sampled_from(SMALL_FILES))
    raw = src.read_bytes()
    starts = []
    p = 4
    while p + 19 <= len(raw):
        size = int.from_bytes(raw[p + 9:p + 13], "little")
        if size < 19 or p + size > len(raw):
            break
        starts.append((p, size))
        p += size
    at, size = data.draw(st.sampled_from(starts[1:] or starts))
    ev = bytearray(raw[at:at + size])
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(4, size - 1))
        ev[i] = data.draw(st.integers(0, 255))
    crc_on = size > 23 and zlib.crc32(raw[at:at + size - 4]) == \
        int.from_bytes(raw[at + size - 4:at + size], "little")
    if crc_on and data.draw(st.booleans()):
        ev[-4:] = zlib.crc32(bytes(ev[:-4])).to_bytes(4, "little")
    path = _write(tmp_path, raw[:at] + bytes(ev) + raw[at + size:])
    clean = tmp_path / "clean"
    clean.write_bytes(raw)
    _ok(sandbox.run("read", path=path, clean_path=str(clean), damage_at=at))


CLI_RUNS = [
    ["dump"], ["dump", "--format", "jsonl", "-vv"], ["dump", "-v", "--keep-going"],
    ["dump", "--no-verify-binlog-checksum"], ["stats", "--format", "json"],
    ["stats", "--keep-going"], ["stats", "--clock-only", "--format", "json"],
    ["check", "--format", "json"], ["schedule", "--lenient", "--workers", "1,4", "--format",
                                    "json"],
]


@settings(max_examples=CLI_EXAMPLES, **SETTINGS)
@given(data=st.data())
def test_cli_on_fuzzed_files(corpus: Path, tmp_path: Path, sandbox, data: st.DataObject) -> None:
    """dump/stats/check/schedule, in-process, on a damaged corpus file: a documented exit
    status, one ``repltool: error: FILE:OFFSET EVENT_TYPE: reason`` line on errors, no
    traceback, the input unchanged, and ``check --junit`` leaves a report or nothing."""
    src = corpus / data.draw(st.sampled_from(SMALL_FILES))
    raw = bytearray(src.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(4, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    raw = raw[:data.draw(st.integers(4, len(raw)))]
    path = _write(tmp_path, bytes(raw))
    junit = str(tmp_path / "report.xml")
    if os.path.exists(junit):
        os.unlink(junit)
    for argv in CLI_RUNS + [["check", "--junit", junit]]:
        result = sandbox.run("cli", argv=[*argv, path], inputs=[path], outputs=[junit])
        _ok(result)
    if os.path.exists(junit):
        import xml.etree.ElementTree as ET
        ET.parse(junit)             # complete, parseable XML or no file at all
