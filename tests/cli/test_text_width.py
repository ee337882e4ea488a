"""Text output keeps every identifier whole: at 80 columns on a (pseudo-)terminal and
when stdout is a pipe (rich would lay a pipe out for 80 columns and cut cells to ``…``).

Each command is run on the corpus with ``--format json`` first; the GTIDs, file:pos,
file and table names and mode names the JSON carries for the parts the text shows
must then appear, whole, in the text written to a pipe and to an 80-column pty.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fixtures.terminal import repltool

ROTATION = [f"mariadb/rotation/mysql-bin.00000{i}" for i in (1, 2, 3)]
MYSQL_GTID = "mysql/mysql80/mysql-test__std_data__replicated-bin.000001"
MYSQL_CHECK = "mysql/mysql80/mysql-test__std_data__rpl_atomic_ddl_rollback_full.000001"


def _json(*args: object) -> object:
    run = repltool(*args)
    assert run.status == 0, run.stderr
    return json.loads(run.stdout)


def _strings(doc: object) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for v in doc.values() for s in _strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


def _short(paths: list[str]) -> tuple[str, dict[str, str]]:
    """The text's paths: their common directory, and each one relative to it."""
    common = os.path.commonpath([os.path.dirname(p) for p in paths])
    return common, {p: os.path.relpath(p, common) for p in paths}


def _files_ids(paths: list[str]) -> list[str]:
    common, short = _short(paths)
    return [common, *short.values()]


def _stats_ids(doc: dict) -> list[str]:
    total = doc["total"]
    common, short = _short([f["file"] for f in doc["files"]])
    ids = [f"files in {common}/", *short.values(), *total["tables"]]
    longest = total["longest"] if any(x["duration"] for x in total["longest"]) else []
    for item in total["biggest"] + longest:
        ids += [item["gtid"], f"{short[item['file']]}:{item['pos']}"]
    return ids


def _schedule_ids(doc: dict) -> list[str]:
    return [c["clocks"] for c in doc["compare"]]


def _explain_ids(doc: dict) -> list[str]:
    shown = doc["critical_path_nodes"][-15:]        # the text's table: the last 15
    return _files_ids(doc["files"]) + [n["gtid"] for n in shown] + [doc["mode"]] + [
        s["name"].split(" ")[0] for s in doc["top_serialisers"]]


def _check_ids(doc: dict) -> list[str]:
    ids = [f["file"] for f in doc["files"]]
    for f in doc["findings"]:
        ids.append(f["file"] if f["offset"] is None else f"{f['file']}:{f['offset']}")
    return ids


CASES = {
    "stats": (["stats"], ROTATION + [MYSQL_GTID], _stats_ids),
    "schedule": (["schedule", "--compare", "all"], ROTATION, _schedule_ids),
    "schedule-logged": (["schedule"], [MYSQL_GTID, MYSQL_CHECK],
                        lambda d: _files_ids(d["files"])),
    "schedule-retag": (["schedule", "--retag", "writeset"], ROTATION,
                       lambda d: _files_ids(d["files"])),
    # MariaDB's applier, modes side by side: its variable names and values whole
    "schedule-mariadb": (["schedule", "--parallel-mode", "optimistic,conservative,aggressive"],
                         ROTATION, lambda d: _files_ids(d["compare"][0]["files"]) + [
                             r["slave_parallel_mode"] for r in d["compare"]] + [
                             "slave_parallel_mode", "slave_parallel_threads"]),
    "explain": (["explain", "--mode", "writeset"], ROTATION, _explain_ids),
    "explain-logged": (["explain"], [MYSQL_GTID], _explain_ids),
    "check": (["check"], [MYSQL_CHECK, MYSQL_GTID], _check_ids),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_identifiers_are_whole_in_pipes_and_at_80_columns(case: str, corpus: Path) -> None:
    command, names, ids_of = CASES[case]
    files = [corpus / n for n in names]
    json_args = ["--format", "json"]
    doc = _json(*command, *json_args, *files)
    ids = ids_of(doc)
    shortened = [s[-16:] for s in _strings(doc) if s.endswith("…")]   # the library's own
    assert len(ids) >= 2
    piped = repltool(*command, *files)
    tty = repltool("--no-color", *command, *files, stdout_tty=True, cols=80)
    assert piped.status == tty.status == 0, piped.stderr + tty.stderr
    for text in (piped.stdout, tty.stdout):
        cut = [line for line in text.splitlines()
               if "…" in line and not any(s in line for s in shortened)]
        assert not cut, f"cells cut by the layout: {cut[:3]}"
        missing = [i for i in ids if i not in text]
        assert not missing, f"not whole in the text: {missing[:5]}\n{text[:3000]}"
    if case == "check":
        return              # one finding per line (FILE:OFFSET RULE ...), as compilers do
    # The terminal's lines fit 80 columns unless one word alone is longer.
    for line in tty.stdout.splitlines():
        assert len(line) <= 80 or " " not in line.strip() or \
            max(map(len, line.split())) > 80 - 4, line


def test_certify_text_names_its_mode_and_files(corpus: Path) -> None:
    files = [corpus / n for n in ROTATION]
    for mode in ("writeset", "writeset-session", "commit-order"):
        first = json.loads(repltool("certify", "--mode", mode, "--format", "jsonl",
                                    *files).stdout.splitlines()[0])
        for run in (repltool("certify", "--mode", mode, *files),
                    repltool("--no-color", "certify", "--mode", mode, *files,
                             stdout_tty=True)):
            assert run.status == 0, run.stderr
            assert "…" not in run.stdout
            assert mode in run.stdout
            assert str(files[0].parent) in run.stdout      # the directory, once
            assert all(f.name in run.stdout for f in files)
        assert first["gtid"]


def test_stats_piped_is_one_wide_table_not_a_stack(corpus: Path) -> None:
    """In a pipe the Files table keeps its columns (one line per file, full paths)."""
    files = [corpus / n for n in ROTATION]
    out = repltool("stats", *files).stdout
    rows = [line for line in out.splitlines() if "10.11.19-MariaDB" in line]
    assert len(rows) == 3
    assert all("10.11.19-MariaDB-0+deb12u1-log" in r and "│" in r for r in rows)
    assert [f.name in r for f, r in zip(files, rows)] == [True] * 3
    assert f"files in {files[0].parent}/" in out        # their directory, once


@pytest.mark.parametrize("name", [MYSQL_GTID, ROTATION[1]])
def test_dump_text_keeps_identifiers_whole(name: str, corpus: Path) -> None:
    """dump's mysqlbinlog-like text, piped and on an 80-column pty: every GTID, every
    event's ``# at N`` and every Table_map's `db`.`table` of ``--format jsonl`` is
    there whole (dump writes plain lines, which the terminal wraps, never cuts)."""
    log = corpus / name
    run = repltool("dump", "--format", "jsonl", log)
    assert run.status == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    ids = [e["gtid"] for e in events if e.get("gtid")]
    ids += [f"# at {e['pos']}" for e in events if "payload_pos" not in e]
    ids += [f"`{e['db']}`.`{e['table']}`" for e in events if e["type"] == "TABLE_MAP_EVENT"]
    assert len(ids) >= 20 and any(e["type"] == "TABLE_MAP_EVENT" for e in events)
    piped = repltool("dump", log)
    tty = repltool("--no-color", "dump", log, stdout_tty=True, cols=80)
    assert piped.status == tty.status == 0, piped.stderr + tty.stderr
    for text in (piped.stdout, tty.stdout):
        assert "…" not in text
        lines = set(text.splitlines())
        missing = [i for i in ids if (i not in lines if i.startswith("# at ") else i not in text)]
        assert not missing, f"not whole in the text: {missing[:5]}"
