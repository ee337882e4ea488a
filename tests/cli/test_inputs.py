"""Inputs of every command that reads logs: a directory, a server's index file
(resolved as the server writes it) or - (standard input), without --spark."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repltool.paths import read_index

ROTATION = "mariadb/rotation"
RELAY = "mariadb/relay/replica-relay"


def _names(d: Path, prefix: str) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.name.startswith(prefix) and ".0" in p.name)


def _stats(cli, *args: object) -> dict:
    out, _ = cli("stats", "--format", "json", *args)
    return json.loads(out)


def test_a_directory_is_its_logs_in_index_order(cli, corpus: Path) -> None:
    d = corpus / ROTATION
    listed = _stats(cli, *_names(d, "mysql-bin."))
    whole = _stats(cli, d)
    assert [f["file"] for f in whole["files"]] == [f["file"] for f in listed["files"]]
    assert whole["total"] == listed["total"]


def test_an_index_file_is_resolved_as_the_server_writes_it(cli, corpus: Path) -> None:
    """relay-bin.index names its files by the replica's absolute paths (/tmp/...):
    they are taken from beside the index; mysql-bin.index uses ./names."""
    index = corpus / RELAY / "relay-bin.index"
    assert index.read_text().startswith("/tmp/")
    files = read_index(str(index))
    assert files == [str(p) for p in _names(corpus / RELAY, "relay-bin.")]
    out, _ = cli("check", "--no-config", "--format", "json", index)
    assert json.loads(out)["summary"]["files"] == 29
    rot = read_index(str(corpus / ROTATION / "mysql-bin.index"))
    assert rot == [str(p) for p in _names(corpus / ROTATION, "mysql-bin.")]


@pytest.mark.parametrize("command", [["stats", "--format", "json"],
                                     ["check", "--no-config", "--format", "json"],
                                     ["dump", "--format", "jsonl"]])
def test_standard_input(command: list[str], corpus: Path) -> None:
    log = corpus / ROTATION / "mysql-bin.000001"
    run = subprocess.run([sys.executable, "-m", "repltool", *command, "-"],
                         input=log.read_bytes(), capture_output=True)
    assert run.returncode == 0, run.stderr
    direct = subprocess.run([sys.executable, "-m", "repltool", *command, str(log)],
                            capture_output=True)
    assert run.stdout.count(b"\n") == direct.stdout.count(b"\n") > 0
    assert b"/stdin" in run.stdout           # the copy of standard input names the events
    if command[0] == "stats":
        a, b = json.loads(run.stdout), json.loads(direct.stdout)
        assert a["total"]["transactions"] == b["total"]["transactions"] == 235
        assert a["total"]["event_types"] == b["total"]["event_types"]


def test_stdin_once_and_empty_directories(cli, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "repltool", "stats", "-", "-"],
                         input=b"", capture_output=True, text=False)
    assert run.returncode == 2 and b"once" in run.stderr
    _, err = cli("stats", tmp_path, expect=2)
    assert "no binlog or relay log" in err
