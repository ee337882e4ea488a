"""The BINLOG statements of `repltool dump` carry the events' exact bytes (issue #17).

For every MySQL-format log of the corpus (and the MariaDB sets), the base64 of
every ``BINLOG '...'`` statement is decoded the way the server decodes it
(whitespace skipped, one chunk per event, each with its own padding, then the
decoded buffer split by each event's ``event_size``) and must give back, in
order, exactly the bytes of the log's Format_description, Table_map and Rows
events (an event from inside a Transaction_payload gets the CRC32 the BINLOG
statement is read with).  Then the decoded events are written as a binlog file
again and ``mariadb-binlog -v`` must read their rows the same way it reads
the original log's.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events
from repltool.binlog.constants import EventType
from repltool.binlog.events import FormatDescriptionBody, RowsBody, TableMapBody

_BINLOG = re.compile(rb"\nBINLOG '\n(.*?)'/\*!\*/;\n", re.S)


def decode_binlog_statements(text: bytes) -> list[bytes]:
    """The events of every BINLOG statement of mysqlbinlog-style text, in order."""
    events: list[bytes] = []
    for m in _BINLOG.finditer(text):
        b64 = re.sub(rb"\s", b"", m.group(1))
        data = b"".join(base64.b64decode(chunk) for chunk in
                        re.findall(rb"[A-Za-z0-9+/]*(?:==|=|$)", b64) if chunk)
        while data:
            size = int.from_bytes(data[9:13], "little")
            assert 19 <= size <= len(data), "event_size does not fit the BINLOG statement"
            events.append(data[:size])
            data = data[size:]
    return events


def expected_events(path: Path) -> list[bytes]:
    out: list[bytes] = []
    crc_on = False
    for ev in read_events(path, ReadOptions()):
        if isinstance(ev.body, FormatDescriptionBody):
            crc_on = ev.body.checksum_alg == 1
            out.append(ev.raw)
        elif isinstance(ev.body, (TableMapBody, RowsBody)):
            raw = ev.raw
            if ev.crc is None and crc_on:
                raw = raw[:9] + (len(raw) + 4).to_bytes(4, "little") + raw[13:]
                raw += zlib.crc32(raw).to_bytes(4, "little")
            out.append(raw)
    return out


def dump(path: Path, *args: str) -> bytes:
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", *args, str(path)],
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout


def _readable(path: Path) -> bool:
    try:
        for _ in read_events(path):
            pass
    except Exception:        # damaged/odd corpus files are covered by other tests
        return False
    return True


@pytest.mark.corpus_files("path", "mysql/*/*")
def test_binlog_base64_is_the_events_bytes(path: Path) -> None:
    if not _readable(path):
        # dump stops at the first error (after printing what came before): the
        # statements printed up to there still carry exact bytes
        r = subprocess.run([sys.executable, "-m", "repltool", "dump", str(path)],
                           capture_output=True, timeout=300)
        got = decode_binlog_statements(r.stdout)
        want = expected_events_prefix(path)
        assert got == want[:len(got)]
        return
    got = decode_binlog_statements(dump(path))
    want = expected_events(path)
    assert got == want
    # the same with -v (### lines after the statement) and on a replayable result file
    assert decode_binlog_statements(dump(path, "-vv")) == want


def expected_events_prefix(path: Path) -> list[bytes]:
    out: list[bytes] = []
    try:
        for ev in read_events(path):
            if isinstance(ev.body, (FormatDescriptionBody, TableMapBody, RowsBody)):
                out.append(ev.raw)
    except Exception:
        pass
    return out


def _rows_lines(text: bytes) -> list[bytes]:
    return [line for line in text.splitlines() if line.startswith(b"###")]


@pytest.mark.corpus_files("path", "mysql/mysql80/*rpl_no_gipk_*")
def test_mariadb_binlog_reads_the_decoded_events_the_same_way(path: Path,
                                                              tmp_path: Path) -> None:
    _mariadb_binlog_same_rows(path, tmp_path)


@pytest.mark.corpus_files("path", "mysql/canal/dbsync*")
def test_mariadb_binlog_reads_the_decoded_events_the_same_way_51(path: Path,
                                                                 tmp_path: Path) -> None:
    _mariadb_binlog_same_rows(path, tmp_path)


def _mariadb_binlog_same_rows(path: Path, tmp_path: Path) -> None:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    assert tool, "mariadb-binlog is installed on the test machines"
    events = decode_binlog_statements(dump(path))
    assert any(e[4] == EventType.TABLE_MAP_EVENT for e in events)
    # a binlog of the decoded events: FDE first, then the rest with log_pos fixed up
    data = bytearray(b"\xfebin")
    for raw in events:
        crc = raw[-4:] if len(raw) > 23 else b""
        ev = bytearray(raw)
        end = len(data) + len(ev)
        ev[13:17] = end.to_bytes(4, "little")
        if raw[4] == EventType.FORMAT_DESCRIPTION_EVENT:
            ev[13:17] = raw[13:17]
            data += ev
            continue
        if crc and zlib.crc32(raw[:-4]).to_bytes(4, "little") == crc:
            ev[-4:] = zlib.crc32(bytes(ev[:-4])).to_bytes(4, "little")
        data += ev
    rebuilt = tmp_path / "rebuilt.000001"
    rebuilt.write_bytes(bytes(data))
    orig = subprocess.run([tool, "-v", str(path)], capture_output=True, timeout=120)
    again = subprocess.run([tool, "-v", str(rebuilt)], capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    want, got = _rows_lines(orig.stdout), _rows_lines(again.stdout)
    assert want and got == want


@pytest.mark.corpus_files("path", "mariadb/compressed/mysql-bin.0*")
def test_binlog_base64_is_the_events_bytes_mariadb_compressed(path: Path) -> None:
    """MariaDB's compressed Query/Rows events (165-171) go into BINLOG as logged."""
    want = expected_events(path)
    assert any(e[4] in range(166, 172) for e in want)
    assert decode_binlog_statements(dump(path)) == want
