"""Outputs are all-or-nothing and inputs are never modified, whatever the input bytes.

``check --junit FILE`` and :func:`repltool.binlog.rewrite.rewrite_log` (and
``certify --output`` once that command exists) write through a temporary file
that is renamed at the end: on any failure there is no output file and no
temporary file left, and a file already at the destination is untouched.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from repltool.binlog import read_events

from ._sweeps import mutations

GTID_FILES = [
    "mysql/rmc/test-data__binlogs__transaction_compression.000001",          # 8.0.32, CRC
    "mysql/rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001",  # 9.6.0 tagged
]


def _gtid_clocks(path: Path) -> dict[str, list[int]]:
    """New (last_committed, sequence_number) for every GTID event of a clean file."""
    return {str(e.pos.offset): [0, i + 1] for i, e in enumerate(read_events(path))
            if e.type_code in (33, 34, 42) and e.pos.payload_offset is None}


@pytest.mark.parametrize("name", GTID_FILES, ids=lambda n: n.rsplit("/", 1)[1])
def test_rewrite_log_on_damaged_files(corpus: Path, tmp_path: Path, sandbox, name: str) -> None:
    """Every event of the file damaged in turn (the mutation sweep's variants): rewrite_log
    either writes a whole file or raises a ReplToolError and writes nothing."""
    src = corpus / name
    data = src.read_bytes()
    clocks = _gtid_clocks(src)
    events = [e for e in read_events(src) if e.pos.payload_offset is None]
    runs = failed = 0
    for i, e in enumerate(events):
        ev = data[e.pos.offset:e.end_pos]
        for label, m in mutations(ev, crc_on=True, index=i, mode="default"):
            damaged = tmp_path / "in.bin"
            damaged.write_bytes(data[:e.pos.offset] + m + data[e.end_pos:])
            dst = tmp_path / "out" / "rewritten.bin"
            dst.parent.mkdir(exist_ok=True)
            if dst.exists():
                dst.unlink()
            result = sandbox.run("rewrite", src=str(damaged), dst=str(dst), clocks=clocks)
            assert not result["failures"], f"#{i} {label}: " + "\n".join(result["failures"])
            runs += 1
            failed += result["error"] is not None
    assert runs > 100 and failed > 0


def test_rewrite_log_keeps_an_existing_destination(corpus: Path, tmp_path: Path) -> None:
    """A failed rewrite leaves whatever was at the destination as it was."""
    from repltool.binlog.rewrite import rewrite_log
    from repltool.errors import ReplToolError
    src = tmp_path / "damaged"
    data = bytearray((corpus / GTID_FILES[0]).read_bytes())
    clocks = {int(k): tuple(v) for k, v in _gtid_clocks(corpus / GTID_FILES[0]).items()}
    first = min(clocks)
    data[first + 30] ^= 0xFF                       # GTID body: the CRC no longer matches
    src.write_bytes(bytes(data))
    dst = tmp_path / "dst"
    dst.write_bytes(b"precious")
    with pytest.raises(ReplToolError):
        rewrite_log(src, dst, clocks)
    assert dst.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp_path)) == ["damaged", "dst"]


def test_rewrite_log_failing_midway_writes_nothing(corpus: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError while writing (disk full) removes the temporary file."""
    from repltool.binlog import rewrite
    src = corpus / GTID_FILES[0]
    dst = tmp_path / "out"

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(rewrite.os, "fsync", full)
    with pytest.raises(OSError):
        rewrite.rewrite_log(src, dst, {})
    assert os.listdir(tmp_path) == []


def test_check_junit_not_written_on_failure(corpus: Path, tmp_path: Path, sandbox) -> None:
    """check exits 2 for an input that cannot be opened: no JUnit file, no temporary file."""
    junit = tmp_path / "report.xml"
    good = str(corpus / GTID_FILES[0])
    result = sandbox.run("cli", argv=["check", "--junit", str(junit), good,
                                      str(tmp_path / "missing")],
                         inputs=[good], outputs=[str(junit)])
    assert not result["failures"], result["failures"]
    assert result["status"] == 2 and not junit.exists()
    assert os.listdir(tmp_path) == []


def test_check_junit_write_failure(corpus: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The disk fills while the report is written: exit 8 (I/O error), one error line,
    nothing left."""
    from repltool import outputs
    from repltool.cli import run
    junit = tmp_path / "report.xml"

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(outputs.os, "fsync", full)
    status = run(["check", "--junit", str(junit), str(corpus / GTID_FILES[0])])
    assert status == 8
    err = capsys.readouterr().err
    assert f"--junit {junit}: No space left on device" in err and len(err.splitlines()) == 1
    assert os.listdir(tmp_path) == []


def test_check_junit_on_damaged_input(corpus: Path, tmp_path: Path, sandbox) -> None:
    """Damage is a finding: the report is written whole (parseable), inputs unchanged."""
    import xml.etree.ElementTree as ET
    data = bytearray((corpus / GTID_FILES[0]).read_bytes())
    data[200] ^= 0xFF
    src = tmp_path / "in" / "damaged"
    src.parent.mkdir()
    src.write_bytes(bytes(data))
    os.chmod(src, 0o444)                       # read-only inputs are fine
    junit = tmp_path / "report.xml"
    result = sandbox.run("cli", argv=["check", "--junit", str(junit), str(src)],
                         inputs=[str(src)], outputs=[str(junit)])
    assert not result["failures"], result["failures"]
    assert result["status"] == 1
    ET.parse(junit)


def test_certify_output_all_or_nothing(corpus: Path, tmp_path: Path, sandbox) -> None:
    """certify --output DIR on damaged inputs: DIR then holds the whole re-tagged copy, or
    nothing (not even the staging directory) - never a partial file."""
    import shutil
    data = (corpus / GTID_FILES[0]).read_bytes()
    statuses = set()
    for at in range(150, len(data), max(1, len(data) // 40)):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        src = tmp_path / "in" / "in.bin"
        src.parent.mkdir(exist_ok=True)
        src.write_bytes(bytes(damaged))
        out = tmp_path / "out"
        shutil.rmtree(out, ignore_errors=True)
        result = sandbox.run("cli", argv=["certify", "--pk-only", "--output", str(out), str(src)],
                             inputs=[str(src)])
        assert not result["failures"], result["failures"]
        statuses.add(result["status"])
        left = sorted(os.listdir(out)) if out.exists() else []
        if result["status"] == 0:
            assert left == ["in.bin"], (at, left)
        else:
            assert left == [], (at, result["status"], left, result["stderr"])
    assert statuses - {0}, "no damaged variant failed: the test proves nothing"
