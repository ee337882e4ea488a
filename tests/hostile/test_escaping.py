"""File bytes never become SQL, terminal control, extra report lines or broken XML (issue #19).

Logs written with repltool's own encoder (:class:`repltool.synth.BinlogBuilder`)
carry hostile text in every place a log holds text - database, table and
column names, row values, query text, the FDE server version, the Rotate file
name, GTID tags - and in the names of the files themselves.  Every command
runs over them in every output format, as a subprocess (the bytes that
really reach a terminal), and:

* stdout and stderr are UTF-8 without a control character a terminal acts on
  (C0 except line feed and tab, DEL, C1, bidi controls, U+2028/U+2029);
* dump's ``use`` and ``SET @@SESSION.GTID_NEXT`` lines are single statements
  whose identifier / string round-trips through MySQL's quoting rules, and a
  statement with control characters in its names or text is commented out;
* ``check`` findings stay one line per finding in text and GitHub formats; the
  JUnit report is well-formed and valid against ``tests/check/junit.xsd``;
* ``explain --format dot`` is accepted by Graphviz's ``dot``;
* errors are one line ``repltool: error: FILE:OFFSET EVENT: ...``;
* an invalid GTID tag (MySQL: ``[A-Za-z_][A-Za-z0-9_]*``, at most 32) is a
  malformed event, as it is for MySQL's decoder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from repltool.binlog import EventType, read_events
from repltool.binlog import structs as S
from repltool.errors import MalformedEvent
from repltool.escape import BIDI_CONTROLS
from repltool.synth import BinlogBuilder, SampleTable, query_body

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
T0 = 1_700_000_000_000_000

#: Each is used as a database name, a table name, a column name, a row value and
#: inside a query text.
HOSTILE: list[bytes] = [
    b"'; drop database shop; --",
    b"a`; DROP DATABASE prod; -- ",
    b"new\nline",
    b"\x1b[31mred\x1b[0m",
    b"nul\x00byte",
    "\u202eevil\u202c".encode(),
    b"[bold]markup[/bold]",
    b"%0A::error::injected",
    b"]]><x>&amp;",
    b"latin1 \xe9\xff\xfe",
    b"c1 \xc2\x9b31m",
]
SERVER_VERSION = b"8.0.40-\x1b[2J\x07'`\n[b]%0A]]>\xe2\x80\xae\xff"
ROTATE_NAME = b"evil\x1b]0;pwned\x07\n`'; drop database shop; --\xe2\x80\xae\xff.000002"
BAD_TAGS: list[bytes] = [b"x'; drop database shop; --", b"ta\ng", b"\x1b[31m", b"t\x00g",
                         "t\u202e".encode(), b"t\xff", b"[bold]", b"a" * 33, b"9lives"]

_RISKY = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff"
                    + "".join(chr(c) for c in sorted(BIDI_CONTROLS)) + "]")


def _name(raw: bytes) -> str:
    """A name as repltool decodes it (UTF-8, undecodable bytes as U+FFFD)."""
    return raw.decode("utf-8", "replace")


def _hostile_log(path: Path) -> Path:
    """FDE with a hostile server version, one row transaction and one DDL per hostile
    text, a Rotate to a hostile name."""
    with open(path, "wb") as out:
        b = BinlogBuilder(out, server_version=SERVER_VERSION)
        b.start(T0 // 1_000_000, (SID, 0))
        gno = 0
        for i, h in enumerate(HOSTILE):
            table = SampleTable(100 + i, h, h, columns=(b"id", h))
            for bodies in (
                [(EventType.QUERY_EVENT, query_body(1, h, "BEGIN")),
                 (EventType.TABLE_MAP_EVENT, table.table_map_body()),
                 (EventType.WRITE_ROWS_EVENT, table.write_rows_body([(i, h)])),
                 (EventType.XID_EVENT, S.xid_body.build({"xid": i + 1}))],
                [(EventType.USER_VAR_EVENT,
                  S.user_var_body.build({"name": h, "is_null": 1, "value": None})),
                 (EventType.QUERY_EVENT,
                  query_body(1, h, b"CREATE TABLE t (c INT) COMMENT '" + h + b"'"))],
            ):
                gno += 1
                b.transaction(T0 + gno, SID, gno, gno - 1, gno, bodies)
        b.rotate(T0 // 1_000_000, ROTATE_NAME)
    return path


def _tagged_log(path: Path, tag: str) -> Path:
    with open(path, "wb") as out:
        b = BinlogBuilder(out)
        b.start(T0 // 1_000_000, (SID, 0))
        b.transaction(T0, SID, 1, 0, 1, [(EventType.QUERY_EVENT,
                                           query_body(1, "test", "CREATE TABLE t (i INT)"))],
                      tag=tag)
        b.stop(T0 // 1_000_000)
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    hostile = _hostile_log(d / "hostile.000001")
    # The same log under a file name with a line feed, ESC, a bidi override and a non-UTF-8 byte.
    evil = Path(os.fsdecode(os.path.join(os.fsencode(str(d)),
                                         b"ev\nil\x1b[31m\xe2\x80\xae\xff.000001")))
    shutil.copyfile(hostile, evil)
    truncated = Path(str(evil)[:-1] + "9")
    truncated.write_bytes(hostile.read_bytes()[:-7])
    bad_tag = _tagged_log(d / "badtag.000001", "x'; drop database shop; --")
    return {"hostile": hostile, "evil": evil, "truncated": truncated, "bad_tag": bad_tag}


def run(*args: object, expect: int | tuple[int, ...] = 0) -> tuple[str, str]:
    """``repltool ARGS`` in a subprocess; stdout and stderr must be UTF-8 and terminal-safe."""
    env = {**os.environ, "COLUMNS": "200"}
    argv = [sys.executable, "-m", "repltool", "--no-color",
            *(os.fsencode(a) if isinstance(a, Path) else str(a) for a in args)]
    done = subprocess.run(argv, capture_output=True, env=env, timeout=600)
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    expected = expect if isinstance(expect, tuple) else (expect,)
    assert done.returncode in expected, (args, done.returncode, err[-2000:])
    assert "Traceback" not in err, err[-3000:]
    for name, text in (("stdout", out), ("stderr", err)):
        bad = _RISKY.findall(text)
        assert not bad, f"{args}: raw control characters on {name}: {sorted(set(bad))!r}"
    return out, err


def _error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("repltool: error: ")]
    assert len(lines) == 1, err
    return lines[0]


# ---- the reader ----

@pytest.mark.parametrize("tag", BAD_TAGS, ids=lambda t: repr(t)[2:14])
def test_an_invalid_gtid_tag_is_a_malformed_event(tmp_path: Path, tag: bytes) -> None:
    """MySQL's Tag::decode_tag rejects these: so does the reader, on one line."""
    path = _tagged_log(tmp_path / "t.000001", tag.decode("ascii", "surrogateescape"))
    with pytest.raises(MalformedEvent) as info:
        list(read_events(path))
    message = str(info.value)
    assert "GTID tag" in message and "GTID_TAGGED_LOG_EVENT" in message
    assert not _RISKY.search(message) and "\n" not in message


def test_valid_tags_as_mysql_reads_them(tmp_path: Path) -> None:
    """Letters, digits (not first), ``_``; up to 32; white space around it ignored (C
    isspace: a line feed too); lower-cased."""
    for tag, expected in (("Tag_1", "tag_1"), ("_" + "a" * 31, "_" + "a" * 31),
                          (" spaced ", "spaced"), ("tag\n", "tag")):
        path = _tagged_log(tmp_path / "t.000001", tag)
        gtids = [e.body.gtid_text for e in read_events(path)
                 if e.type_code == EventType.GTID_TAGGED_LOG_EVENT]
        assert gtids == [f"{SID}:{expected}:1"]
        out, _ = run("dump", path)
        assert f"SET @@SESSION.GTID_NEXT= '{SID}:{expected}:1'/*!*/;" in out


# ---- dump ----

_USE = re.compile(r"use `((?:[^`]|``)*)`/\*!\*/;")
_GTID_NEXT = re.compile(r"SET @@SESSION\.GTID_NEXT= '([0-9a-f-]{36}(?::[a-z_][a-z0-9_]*)?:\d+)'"
                        r"/\*!\*/;")


def _unquote_identifier(quoted: str) -> str:
    """MySQL's reading of a backtick-quoted identifier: ```` `` ```` is one backtick."""
    return quoted.replace("``", "`")


def test_dump_text_quotes_names_and_comments_out_what_it_cannot_print(logs) -> None:
    out, _ = run("dump", "-vv", "--text-mode", "terminal", logs["hostile"])
    lines = out.splitlines()
    uses = [line for line in lines if line.startswith("use ")]
    printed = {_unquote_identifier(m.group(1)) for line in uses
               for m in [_USE.fullmatch(line)] if m}
    assert len(printed) == len({line for line in uses}), uses   # every use line parses
    plain = {_name(h) for h in HOSTILE if not _RISKY.search(_name(h)) and b"\n" not in h}
    assert printed == plain        # the names without control characters, round-tripped
    assert "'; drop database shop; --" in printed and "a`; DROP DATABASE prod; -- " in printed
    assert "use `a``; DROP DATABASE prod; -- `/*!*/;" in lines
    # the others: commented out, with a note, shown with visible escapes
    assert any("# use `\\x1b[31mred\\x1b[0m`/*!*/;" == line for line in lines)
    assert any("# use `new\\x0aline`/*!*/;" == line for line in lines)
    assert any("# use `\\u202eevil\\u202c`/*!*/;" == line for line in lines)
    assert sum(line.startswith("# repltool: the statement below is commented out")
               for line in lines) == 3 * (len(HOSTILE) - len(plain))
    # user variables: the same rule
    uvars = {_unquote_identifier(m.group(1)) for line in lines
             for m in [re.fullmatch(r"SET @`((?:[^`]|``)*)`:=NULL/\*!\*/;", line)] if m}
    assert uvars == plain
    assert "# SET @`\\x1b[31mred\\x1b[0m`:=NULL/*!*/;" in lines
    # every GTID_NEXT is one statement with a valid GTID in a string literal
    nexts = [line for line in lines if line.startswith("SET @@SESSION.GTID_NEXT")]
    assert nexts[-1] == "SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by repltool */ /*!*/;"
    nexts.pop()
    assert len(nexts) == 2 * len(HOSTILE) and all(_GTID_NEXT.fullmatch(n) for n in nexts)
    # an executable line is never a line of a name: only # comments carry names
    base64_line = re.compile(r"[A-Za-z0-9+/]{1,76}={0,2}")
    for line in lines:
        if line.startswith(("#", "/*!", "SET TIMESTAMP=", "SET @@SESSION.GTID_NEXT", "SET @`",
                            "use ", "COMMIT", "BEGIN", "CREATE TABLE", "SET @@session.",
                            "ROLLBACK")):
            continue
        if base64_line.fullmatch(line):     # inside BINLOG '...'
            continue
        assert line in ("", "DELIMITER /*!*/;", "DELIMITER ;", "BINLOG '", "'/*!*/;"), line
    # Rotate, FDE server version, Table_map and ### lines: escaped, in comments
    assert "Rotate to evil\\x1b]0;pwned\\x07\\x0a`'; drop database shop; --\\u202e\ufffd.000002" \
        in out
    assert "server v 8.0.40-\\x1b[2J\\x07'`\\x0a[b]%0A]]>\\u202e\ufffd created" in out
    assert "Table_map: `a``; DROP DATABASE prod; -- `.`a``; DROP DATABASE prod; -- `" in out
    assert "### INSERT INTO `\\x1b[31mred\\x1b[0m`.`\\x1b[31mred\\x1b[0m`" in out
    assert "###   \\x1b[31mred\\x1b[0m='\\x1b[31mred\\x1b[0m'" in out
    assert "###   c1 \\x9b31m='c1 \\xc2\\x9b31m'" in out


def test_dump_replay_text_writes_the_logged_statements_exactly(logs) -> None:
    """Not on a terminal (a pipe into mysql), the statements are the log's own bytes
    (binary data in statements must reach the server unchanged); names repltool puts
    into statements it composes (``use``, user variables) are quoted identifiers."""
    argv = [sys.executable, "-m", "repltool", "dump", os.fsencode(logs["hostile"])]
    out = subprocess.run(argv, capture_output=True, timeout=600, check=True).stdout
    queries = [e.body.query for e in read_events(logs["hostile"])
               if e.type_code == EventType.QUERY_EVENT]
    assert queries
    for q in queries:
        assert b"\n" + q + b"\n/*!*/;\n" in out
    for h in HOSTILE:
        name = _name(h)
        if "\x00" in name:
            continue
        quoted = ("`" + name.replace("`", "``") + "`").encode("utf-8", "surrogateescape")
        assert b"\nuse " + quoted + b"/*!*/;\n" in out
        assert b"\nSET @" + quoted + b":=NULL/*!*/;\n" in out
    assert b"# repltool: the statement below is commented out" not in out


def test_dump_jsonl_keeps_the_names_as_data(logs) -> None:
    for args in (("--format", "jsonl"), ("--format", "jsonl", "-v"), ("--writesets",)):
        out, _ = run("dump", *args, logs["evil"])
        records = [json.loads(line) for line in out.splitlines()]
        assert records
        if args[0] == "--writesets":
            assert {r["file"] for r in records} == {str(logs["evil"])}
            continue
        # the file name (a lone surrogate for its non-UTF-8 byte) comes back as given
        assert {r["file"] for r in records} == {str(logs["evil"])}
        dbs = {r["db"] for r in records if r.get("type") == "TABLE_MAP_EVENT"}
        assert dbs == {_name(h) for h in HOSTILE}
        assert {r["next_file"] for r in records if r.get("type") == "ROTATE_EVENT"} == \
            {_name(ROTATE_NAME)}


# ---- the other commands, every format ----

def test_stats_every_format(logs) -> None:
    out, _ = run("stats", logs["hostile"], logs["evil"])
    assert "\\x1b[2J" in out and "ev\\x0ail\\x1b[31m\\u202e\\xff.000001" in out
    assert "[bold]markup[/bold]" in out            # text, not rich markup
    data = json.loads(run("stats", "--format", "json", logs["evil"])[0])
    assert data["files"][0]["server_version"] == _name(SERVER_VERSION).split("\x00")[0]
    assert data["files"][0]["file"] == str(logs["evil"])        # as given, JSON-escaped


def test_check_every_format(logs, tmp_path: Path) -> None:
    import xmlschema
    files = [logs["evil"], logs["hostile"], logs["bad_tag"], logs["truncated"]]
    junit = tmp_path / "junit.xml"
    text, _ = run("check", "--junit", junit, *files, expect=1)
    lines = text.splitlines()
    finding = re.compile(r"\S.* [A-Z]\d{3} (error|warning|info): .*")
    assert all(finding.fullmatch(line) or " skipped: " in line or line.startswith("Checked ")
               for line in lines), lines
    assert any(re.fullmatch(r"\S*/ev\\x0ail\\x1b\[31m\\u202e\\xff\.000009:\d+ S004 error: "
                            r"ROTATE_EVENT: log ends mid-event: .*", line) for line in lines)
    assert any("GTID tag 'x'; drop database shop; --' is not a valid tag" in line
               for line in lines)
    report = json.loads(run("check", "--format", "json", *files, expect=1)[0])
    assert len(report["findings"]) == sum(1 for line in lines if finding.fullmatch(line))
    # JSON keeps the name as it is (json.dumps escapes it)
    assert str(logs["truncated"]) in {f["file"] for f in report["findings"]}
    github, _ = run("check", "--format", "github", *files, expect=1)
    for line in github.splitlines():
        assert line.startswith("::") or line.startswith("Checked "), line
        if line.startswith("::"):
            props = line.split(" ", 1)[1].split("::", 1)[0]
            assert all(p.split("=", 1)[0] in ("file", "title") for p in props.split(","))
    xmlschema.XMLSchema(str(Path(__file__).parents[1] / "check" / "junit.xsd")).validate(
        str(junit))
    xml = junit.read_text(encoding="utf-8")
    assert not _RISKY.search(xml) and "ev\\x0ail\\x1b[31m\\u202e\\xff.000009" in xml


def test_certify_explain_schedule_every_format(logs, tmp_path: Path) -> None:
    f = logs["hostile"]
    run("certify", f)
    rows = [json.loads(line) for line in run("certify", "--format", "jsonl", logs["evil"])[0]
            .splitlines()]
    assert len(rows) == 2 * len(HOSTILE)
    run("explain", f)
    ws = ("--mode", "writeset")        # statements and keys in the labels
    assert "[bold]markup[/bold]" in run("explain", *ws, f)[0]     # text, not rich markup
    json.loads(run("explain", *ws, "--format", "json", f)[0])
    assert "COMMENT '\\x1b[3" in run("explain", *ws, "--format", "mermaid", f)[0]
    dot, _ = run("explain", *ws, "--format", "dot", f)
    assert "COMMENT '\\\\x1b[3" in dot           # DOT string: the backslash doubled
    if shutil.which("dot") is None:
        pytest.fail("Graphviz's dot is installed on the test machines")
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run("explain", "--render", tmp_path / "g.svg", f)
    run("schedule", logs["evil"])
    assert json.loads(run("schedule", "--format", "json", logs["evil"])[0])["files"] == \
        [str(logs["evil"])]


# ---- errors ----

@pytest.mark.parametrize("command", [["dump", "--text-mode", "terminal"],
                                     ["dump", "--format", "jsonl"], ["stats"],
                                     ["certify"], ["explain"], ["schedule"]])
def test_errors_are_one_safe_line(logs, command: list[str]) -> None:
    _, err = run(*command, logs["truncated"], expect=(3, 4))
    line = _error_line(err)
    assert "ev\\x0ail\\x1b[31m\\u202e\\xff.000009:" in line
    _, err = run(*command, logs["bad_tag"], expect=3)
    line = _error_line(err)
    assert "GTID_TAGGED_LOG_EVENT: GTID tag 'x'; drop database shop; --' is not a valid" in line


# ---- the escapers themselves ----

def _read_mysql_string(literal: str) -> str:
    """MySQL's lexer on a single-quoted literal (default SQL mode): ``\\0 \\b \\t \\n \\r \\Z``,
    ``\\x`` -> ``x`` for any other x, ``''`` -> ``'``; the literal must end at its last quote."""
    assert literal[0] == "'"
    out, i = [], 1
    special = {"0": "\0", "b": "\b", "t": "\t", "n": "\n", "r": "\r", "Z": "\x1a"}
    while True:
        c = literal[i]
        if c == "\\":
            out.append(special.get(literal[i + 1], literal[i + 1]))
            i += 2
        elif c == "'":
            if literal[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            assert i == len(literal) - 1, "the literal ends before its last character"
            return "".join(out)
        else:
            out.append(c)
            i += 1


_SAMPLES = [_name(h) for h in HOSTILE] + ["", "`", "``", "'", "\\", "\\'", "a\x1a\x08\r\n\t",
                                           "\udcff\ud800", "\u2028\u2029\x85\x9b"]


def test_sql_quoting_round_trips() -> None:
    from repltool.escape import printable, sql_identifier, sql_string
    for text in _SAMPLES:
        quoted = sql_identifier(text)
        assert quoted[0] == quoted[-1] == "`" and "`" not in quoted[1:-1].replace("``", "")
        assert _unquote_identifier(quoted[1:-1]) == text
        literal = sql_string(text)
        assert _read_mysql_string(literal) == text
        assert "\n" not in literal and "\r" not in literal and "\0" not in literal
        assert printable(text) == text or _RISKY.search(text) or "\n" in text or "\t" in text


def test_line_and_markup_escapers() -> None:
    import xml.etree.ElementTree as ET

    from repltool.escape import (
        gh_data, gh_property, json_safe, printable, printable_lines, xml_text,
    )
    for text in _SAMPLES:
        one = printable(text)
        assert not _RISKY.search(one) and "\n" not in one and "\t" not in one
        one.encode("utf-8")                                  # no lone surrogate left
        assert not _RISKY.search(printable_lines(text))
        data, prop = gh_data(text), gh_property(text)
        assert "\n" not in data and "\r" not in data and not _RISKY.search(data)
        assert ":" not in prop and "," not in prop
        element = ET.Element("a", b=xml_text(text))
        element.text = xml_text(text)
        assert ET.fromstring(ET.tostring(element, "unicode")).get("b") is not None
        encoded = json_safe(json.dumps({"k": text}, ensure_ascii=False))
        assert json.loads(encoded) == {"k": text} and not _RISKY.search(encoded)
    assert printable("a\udcffb") == "a\\xffb"                # surrogateescape: the byte
    assert gh_data("100%\n") == "100%25\\x0a"
