"""``check --keep-going``: a damaged region inside a file is reported (a finding of its
structure rule and a stderr line), the check goes on in the same file, and the exit
status is the first damage's (``repltool.binlog.damage.DamageLog``, as schedule's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from repltool.binlog import ReadOptions, read_events
from repltool.check import check_files
from repltool.cli import run
from repltool.errors import ChecksumMismatch, LogFormatError


def _damaged_copy(corpus: Path, tmp_path: Path) -> tuple[Path, int]:
    """small/mysql-bin.000001 with one event's header size made impossible, a third
    of the way in; returns the copy and that event's offset."""
    src = corpus / "mariadb/small/mysql-bin.000001"
    events = list(read_events(src, ReadOptions(types=frozenset())))
    ev = events[len(events) // 3]
    data = bytearray(src.read_bytes())
    data[ev.pos.offset + 9:ev.pos.offset + 13] = (5).to_bytes(4, "little")   # size 5 < header
    dst = tmp_path / "mysql-bin.000001"
    dst.write_bytes(bytes(data))
    return dst, ev.pos.offset


def test_check_keep_going_goes_on_inside_the_file(corpus: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad, at = _damaged_copy(corpus, tmp_path)
    good = corpus / "mariadb/small/mysql-bin.000001"
    status = run(["check", "--format", "json", str(bad)])
    stopped = json.loads(capsys.readouterr().out)
    status_kg = run(["check", "--keep-going", "--format", "json", str(bad)])
    out = capsys.readouterr()
    went_on = json.loads(out.out)
    whole = check_files([good])
    # without --keep-going the file stops at the damage; with it the rest is checked
    events = lambda rep: rep["files"][0]["events"]  # noqa: E731
    assert events(stopped) < events(went_on) <= whole.files[0].events
    assert events(went_on) > whole.files[0].events * 0.9
    damaged = [f for f in went_on["findings"] if "damaged region" in f["message"]]
    assert damaged and damaged[0]["offset"] == at and damaged[0]["rule"].startswith("S")
    assert "repltool: damaged region:" in out.err and "skipped (--keep-going)" in out.err
    # the first damage's exit status (a damaged event: LogFormatError's family)
    assert status_kg != 0
    assert status_kg in {LogFormatError.exit_code, ChecksumMismatch.exit_code}
    assert status != 0


def test_check_keep_going_on_undamaged_logs_changes_nothing(corpus: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    files = [str(p) for p in sorted((corpus / "mariadb/rotation").glob("mysql-bin.0*"))[:3]]
    assert run(["check", "--format", "json", *files]) == run(
        ["check", "--keep-going", "--format", "json", *files]) == 0
    a, b = capsys.readouterr().out.split("\n}\n", 1)
    assert json.loads(a + "\n}") == json.loads(b)
