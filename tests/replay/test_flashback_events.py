"""Flashback's inverted Rows events, on real logs (issue #17).

* Inverting every Rows event of a real MariaDB log twice gives back its rows
  exactly (the type, the row bytes; images swap back), and once gives the
  swapped kinds with the same number of rows in reverse order.
* The images a MINIMAL/NDB log carries (not every column) are refused, naming
  the event, with exit status 1 and nothing on stdout.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events
from repltool.binlog.coltypes import decode_table_map
from repltool.binlog.constants import HEADER_LEN
from repltool.binlog.decode import DecodeContext, decode_rows
from repltool.binlog.events import FormatDescriptionBody, RowsBody, TableMapBody
from repltool.binlog.flashback import invert_rows_event
from repltool.binlog.reader import structs_for
from repltool.binlog.rows import iter_row_changes
from repltool.positions import Position

_KIND = {"insert": "delete", "delete": "insert", "update": "update"}


def _decode(raw: bytes, fde: FormatDescriptionBody) -> RowsBody:
    tc = raw[4]
    body = raw[HEADER_LEN:-4]
    ctx = DecodeContext(structs_for(fde), Position("inverted", 0), tc)
    return decode_rows(body, ctx)


@pytest.mark.corpus_files("path", "mariadb/small/mysql-bin.0*")
def test_inverting_twice_gives_the_rows_back(path: Path) -> None:
    fde = None
    tables = {}
    n = 0
    for ev in read_events(path, ReadOptions()):
        b = ev.body
        if isinstance(b, FormatDescriptionBody):
            fde = b
        elif isinstance(b, TableMapBody):
            tables[b.table_id] = decode_table_map(b)
        elif isinstance(b, RowsBody):
            assert fde is not None
            table = tables[b.table_id]
            phl = fde.post_header_len[ev.type_code - 1]
            once = invert_rows_event(ev, table, phl, crc=True)
            inv = _decode(once, fde)
            inv_ev = ev._replace(type_code=once[4], body=inv, raw=once)
            twice = invert_rows_event(inv_ev, table, fde.post_header_len[once[4] - 1],
                                      crc=True)
            back = _decode(twice, fde)
            assert back.rows == b.rows and back.columns_before == b.columns_before
            assert back.columns_after == b.columns_after
            orig = list(iter_row_changes(table, b, ev.type_code))
            flipped = list(iter_row_changes(table, inv, once[4]))
            assert [c.kind for c in flipped] == [_KIND[c.kind] for c in reversed(orig)]
            for o, f in zip(reversed(orig), flipped):
                assert (f.before, f.after) == (o.after, o.before)
            n += 1
    assert n > 1000


@pytest.mark.corpus_files("path", "mysql/mysql80/*write-partial-row*")
def test_minimal_images_are_refused(path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", "--flashback", str(path)],
                       capture_output=True, timeout=120)
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    assert "WRITE_ROWS_EVENT_V1: rows of `test`.`ba` do not carry every column" in err
    assert "binlog_row_image=FULL" in err



@pytest.mark.corpus_files("path", "mariadb/small/mysql-bin.0*")
def test_a_window_ending_inside_a_transaction_is_refused(path: Path) -> None:
    from repltool.binlog.events import XidBody
    xids = [e for e in read_events(path) if isinstance(e.body, XidBody)]
    start, cut = xids[20].end_pos, xids[21].pos.offset        # before the 22nd commit
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", "--flashback",
                        f"--start-position={start}", f"--stop-position={cut}", str(path)],
                       capture_output=True, timeout=120)
    assert r.returncode == 1 and r.stdout == b""
    assert "the window ends inside a transaction (0-1-" in r.stderr.decode()
    ok = subprocess.run([sys.executable, "-m", "repltool", "dump", "--flashback",
                         f"--start-position={start}", f"--stop-position={xids[21].end_pos}",
                         str(path)], capture_output=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.count(b"# repltool flashback: undoes") == 1
