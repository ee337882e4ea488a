"""mysqlbinlog habits of `repltool dump` (issue #17), on real logs of the corpus.

stdin (``-``), ``--result-file`` (atomic, never an input, ``--force``),
``--hexdump``, ``--short-form``, ``--print-table-metadata``, event names as the
MySQL tools print them, ``--numbered-columns``, ``--base64-output``,
``--skip-gtids``.  The live-server habits (``--rewrite-db``, MariaDB GTID
positions, domain and server filters) are in ``test_replay_oracle.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from repltool.binlog import read_events
from repltool.binlog.events import TableMapBody

SMALL = "mariadb/small/mysql-bin.000001"
MYSQL_V2 = "mysql/mysql80/mysql-test__std_data__rpl_gipk_equivalent_key.000001"
MYSQL_V1 = "mysql/canal/dbsync__src__test__resources__binlog__mysql-bin.000001"


def dump(*args: object, stdin: bytes | None = None, expect: int = 0) -> tuple[bytes, str]:
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", *map(str, args)],
                       input=stdin, capture_output=True, timeout=300)
    assert r.returncode == expect, r.stderr.decode(errors="replace")
    return r.stdout, r.stderr.decode(errors="replace")


def test_stdin_reads_the_same_events(corpus: Path) -> None:
    path = corpus / SMALL
    from_file, _ = dump("--stop-position=200000", path)
    from_stdin, _ = dump("--stop-position=200000", "-", stdin=path.read_bytes())
    assert from_stdin == from_file and b"BINLOG '" in from_file


def test_result_file_is_atomic_refuses_inputs_and_existing_files(corpus: Path,
                                                                 tmp_path: Path) -> None:
    path = corpus / SMALL
    out = tmp_path / "pitr.sql"
    stdout, _ = dump("--stop-position=100000", "--result-file", out, path)
    assert stdout == b"" and out.read_bytes() == dump("--stop-position=100000", path)[0]
    _, err = dump("--result-file", out, path, expect=2)
    assert "file exists; --force replaces it" in err
    dump("--stop-position=50000", "-r", out, "--force", path)
    assert out.read_bytes() == dump("--stop-position=50000", path)[0]
    copy = tmp_path / "copy.000001"
    copy.write_bytes(path.read_bytes())
    _, err = dump("-r", copy, "--force", copy, expect=2)
    assert "an output never replaces an input" in err and copy.read_bytes() == path.read_bytes()
    # a failure leaves neither the file nor a temporary file
    bad = tmp_path / "bad.000001"
    bad.write_bytes(path.read_bytes()[:5000])
    dump("-r", tmp_path / "x.sql", bad, expect=4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.000001", "copy.000001",
                                                           "pitr.sql"]


def test_hexdump_lines_are_the_events_bytes(corpus: Path) -> None:
    path = corpus / MYSQL_V2
    text, _ = dump("--hexdump", path)
    events = list(read_events(path))
    blocks = text.split(b"# Position  Timestamp   Type   Source ID        Size      "
                        b"Source Pos    Flags\n")[1:]
    assert len(blocks) == len(events)
    for ev, block in zip(events, blocks):
        data = b""
        offsets = []
        for line in block.splitlines():
            m = re.match(rb"# +([0-9a-f]+) ((?:[0-9a-f]{2} {1,3})*[0-9a-f]{2})", line)
            if not m:
                break
            offsets.append(int(m.group(1), 16))
            data += bytes.fromhex(m.group(2).decode())
        assert data == ev.raw and offsets[0] == ev.pos.offset


def test_short_form_prints_only_statements(corpus: Path) -> None:
    text, _ = dump("--short-form", corpus / SMALL)
    assert b"# at " not in text and b"BINLOG '" not in text and b"server id" not in text
    assert b"SET @@session.gtid_seq_no=" in text and b"COMMIT/*!*/;" in text


def test_print_table_metadata(corpus: Path) -> None:
    path = corpus / SMALL
    text, _ = dump("--print-table-metadata", "--stop-position=400000", path)
    n_maps = sum(isinstance(e.body, TableMapBody) for e in read_events(path)
                 if e.pos.offset < 400000)
    cols = [line for line in text.splitlines() if line.startswith(b"# Columns(")]
    assert n_maps and len(cols) == n_maps
    assert b"# Columns(id INT, ver INT, c_int INT, c_bigu LONGINT" in text
    assert text.count(b"# Primary Key(id)") > 0


def test_event_names_as_mysql_tools_print_them(corpus: Path) -> None:
    maria, _ = dump("--stop-position=100000", corpus / SMALL)
    assert b"\tWrite_rows: table id" in maria and b"_v1:" not in maria   # mariadb-binlog
    v2, _ = dump(corpus / MYSQL_V2)
    assert b"\tWrite_rows: table id" in v2
    v1, _ = dump(corpus / MYSQL_V1)
    assert re.search(rb"\t(Write|Update|Delete)_rows_v1: table id", v1)
    assert b"# Number of rows: " in v1


def test_numbered_columns(corpus: Path) -> None:
    path = corpus / SMALL
    named, _ = dump("-v", "--stop-position=100000", path)
    numbered, _ = dump("-v", "--numbered-columns", "--stop-position=100000", path)
    assert b"###   id=" in named and b"###   @1=" not in named
    assert b"###   @1=" in numbered and b"###   id=" not in numbered
    strip = re.compile(rb"^###   [^=]+=", re.M)
    assert strip.sub(b"", named) == strip.sub(b"", numbered)


def test_base64_output_modes_and_skip_gtids(corpus: Path) -> None:
    path = corpus / SMALL
    decoded, _ = dump("--base64-output=decode-rows", "-v", "--stop-position=100000", path)
    assert b"BINLOG '" not in decoded and b"### INSERT INTO `wl`.`t_pk`" in decoded
    _, err = dump("--base64-output=never", path, expect=2)
    assert "TABLE_MAP_EVENT: --base64-output=never: the logs hold row events" in err
    no_gtids, _ = dump("--skip-gtids", "--stop-position=100000", path)
    assert b"gtid_seq_no" not in no_gtids and b"START TRANSACTION" in no_gtids


@pytest.mark.parametrize("option", ["--start-position=1-2", "--stop-position=0-1-5,0-1-6",
                                    "--do-domain-ids=a"])
def test_bad_positions_are_usage_errors(corpus: Path, option: str) -> None:
    _, err = dump(option, corpus / SMALL, expect=2)
    assert err.startswith("repltool: error: --") and len(err.strip().splitlines()) == 1
