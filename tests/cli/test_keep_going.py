"""--keep-going: damaged ranges are reported, the reader resynchronises, nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.binlog.events import DAMAGED_TYPE
from repltool.cli import run
from repltool.cli.exitcodes import ExitStatus

SMALL = "mariadb/small/mysql-bin.000001"


def _damage(src: Path, dst: Path, offsets: list[int]) -> None:
    data = bytearray(src.read_bytes())
    for off in offsets:
        data[off] ^= 0xFF
    dst.write_bytes(bytes(data))


def test_every_byte_is_accounted_for(corpus: Path, tmp_path: Path) -> None:
    """Events plus damaged ranges tile the file from offset 4 to its end."""
    bad = tmp_path / "bad.bin"
    _damage(corpus / SMALL, bad, [50_000, 1_000_000, 1_000_009, 3_000_000])
    events = list(read_events(bad, ReadOptions(keep_going=True)))
    damaged = [e for e in events if e.type_code == DAMAGED_TYPE]
    assert len(damaged) >= 3
    p = 4
    for ev in events:
        if ev.pos.payload_offset is not None:
            continue
        assert ev.pos.offset == p, f"gap or overlap at {p}"
        p += ev.event_size
    assert p == bad.stat().st_size
    good = {e.pos.offset for e in read_events(corpus / SMALL)}
    kept = {e.pos.offset for e in events if e.type_code != DAMAGED_TYPE}
    assert kept <= good and len(good - kept) == len(damaged)


def test_damaged_header_resynchronises_on_a_verified_crc(corpus: Path, tmp_path: Path) -> None:
    """A destroyed event_size is skipped by searching for the next CRC-valid event."""
    src = corpus / SMALL
    target = [e for e in read_events(src)][500]
    bad = tmp_path / "bad.bin"
    data = bytearray(src.read_bytes())
    data[target.pos.offset + 9:target.pos.offset + 13] = (0xFFFFFFF0).to_bytes(4, "little")
    bad.write_bytes(bytes(data))
    events = list(read_events(bad, ReadOptions(keep_going=True)))
    damaged = [e for e in events if e.type_code == DAMAGED_TYPE]
    assert [d.pos.offset for d in damaged] == [target.pos.offset]
    assert damaged[0].event_size == target.event_size
    assert damaged[0].body.error == "TruncatedLog"


def test_damage_inside_a_transaction_truncates_that_group(corpus: Path, tmp_path: Path) -> None:
    src = corpus / SMALL
    trx = list(read_transactions(src))
    victim = trx[100]
    bad = tmp_path / "bad.bin"
    _damage(src, bad, [victim.end.offset + 20])
    got = list(read_transactions(bad, ReadOptions(keep_going=True, types=None)))
    assert len(got) == len(trx)
    assert [t.truncated for t in got].count(True) == 1
    assert got[100].truncated and got[100].gtid == victim.gtid


def test_cli_dump_and_stats(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.bin"
    _damage(corpus / SMALL, bad, [3_000_000])
    assert run(["dump", str(bad)]) == ExitStatus.CHECKSUM          # strict: stops
    capsys.readouterr()
    assert run(["dump", "--keep-going", str(bad)]) == ExitStatus.CHECKSUM
    out, err = capsys.readouterr()
    assert "# DAMAGED REGION: bytes" in out and "# at " in out.split("DAMAGED")[1]
    assert "1 damaged region(s) skipped" in err
    assert run(["stats", "--keep-going", "--format", "json", str(bad)]) == ExitStatus.CHECKSUM
    data = json.loads(capsys.readouterr().out)["total"]
    assert data["damaged_regions"] == 1 and data["damaged_bytes"] > 0
    assert data["damage"][0]["error"] == "ChecksumMismatch"


def test_clean_file_keep_going_is_identical(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["dump", "--format", "jsonl", str(corpus / SMALL)]) == 0
    plain = capsys.readouterr().out
    assert run(["dump", "--keep-going", "--format", "jsonl", str(corpus / SMALL)]) == 0
    assert capsys.readouterr().out == plain
