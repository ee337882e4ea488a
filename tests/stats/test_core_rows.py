"""``stats`` row counts walked by the compiled core itself, held to the pure-Python
engine and to the rows the logs were built with.

The core asks :class:`repltool.binlog.rowcount.RowCounter` once per table id and Rows
layout (type code, width, bitmaps) for image programs and walks every further Rows
event of that layout itself (``_core.rows_walked()`` counts them).  A transaction
touches a table with several layouts (insert, update, delete), and a table id may be
re-used for another definition: the counts must follow the newest Table_map.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog import engine
from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.binlog.rowcount import RowCounter
from repltool.errors import ReplToolError
from repltool.stats import compute_stats, stats_to_dict
from repltool.synth import SynthOptions, generate
from repltool.synth.builder import MYSQL80_POST_HEADER_LEN, BinlogBuilder, query_body

_STRUCTS = S.BinlogStructs(MYSQL80_POST_HEADER_LEN)
_OPS = {"insert": "inserted", "update": "updated", "delete": "deleted"}


def _stats(monkeypatch, which: str, paths: list[Path]) -> object:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, which)
    try:
        return stats_to_dict(compute_stats(paths))
    except ReplToolError as exc:
        return type(exc).__name__, str(exc)


class _Hooks:
    """Counts the Rows events handed to Python (``RowCounter.core_rows``)."""

    def __init__(self, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        self.calls = 0
        real = RowCounter.core_rows

        def counted(counter, tc, data):  # type: ignore[no-untyped-def]
            self.calls += 1
            return real(counter, tc, data)

        monkeypatch.setattr(RowCounter, "core_rows", counted)


def _rows_events(result: dict) -> int:  # type: ignore[type-arg]
    return sum(n for t, n in result["total"]["event_types"].items()
               if t.split("_")[0] in ("WRITE", "UPDATE", "DELETE", "PARTIAL"))


@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_every_corpus_file_gives_the_pure_python_stats(monkeypatch, path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole ``stats --format json`` of each engine (or the same error)."""
    assert _stats(monkeypatch, "compiled", [path]) == _stats(monkeypatch, "python", [path])


@pytest.mark.parametrize("pattern", ["mariadb/rotation/mysql-bin.0*",
                                     "mariadb/small/mysql-bin.000001",
                                     "mariadb/serial/mysql-bin.0*"])
def test_the_core_counts_mariadb_rows_itself(monkeypatch, corpus: Path, pattern: str) -> None:  # type: ignore[no-untyped-def]
    """Real MariaDB logs: Python sees at most one Rows event per table id and layout;
    every other Rows event is walked by the core, with the pure-Python engine's counts."""
    from repltool.binlog import _core
    paths = sorted(corpus.glob(pattern))
    assert paths
    hooks = _Hooks(monkeypatch)
    before = _core.rows_walked()
    got = _stats(monkeypatch, "compiled", paths)
    assert isinstance(got, dict)
    walked = _core.rows_walked() - before
    events = _rows_events(got)
    assert walked + hooks.calls == events > 0
    assert walked > 10 * hooks.calls, (walked, hooks.calls)
    assert got == _stats(monkeypatch, "python", paths)


def test_synth_tables_and_kinds_are_walked_by_the_core(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A synth MySQL 8.0 log of several tables, inserts, updates and deletes (mixed in
    one transaction): the rows per table and kind are those synth wrote (its ground
    truth), in both engines; the core walked nearly all Rows events itself."""
    from repltool.binlog import _core
    r = generate(SynthOptions(out=tmp_path / "s", transactions=600, seed=11,
                              ground_truth_rows=True, max_binlog_size=200_000))
    assert r.ground_truth is not None
    want: dict[str, Counter[str]] = {}
    for trx in json.loads(r.ground_truth.read_text())["transactions"]:
        for row in trx.get("rows", ()):
            want.setdefault(row["table"], Counter())[_OPS[row["op"]]] += 1
    assert len(want) >= 3 and all(sum(c.values()) for c in want.values())
    assert all(any(c[k] for c in want.values()) for k in _OPS.values())
    files = list(r.files)
    assert len(files) > 1
    hooks = _Hooks(monkeypatch)
    before = _core.rows_walked()
    got = _stats(monkeypatch, "compiled", files)
    assert isinstance(got, dict)
    walked = _core.rows_walked() - before
    assert got["total"]["rows"] == {
        t: dict(inserted=c["inserted"], updated=c["updated"], deleted=c["deleted"],
                unwalked_events=0) for t, c in want.items()}
    assert walked + hooks.calls == _rows_events(got)
    assert walked > 10 * hooks.calls, (walked, hooks.calls)
    assert got == _stats(monkeypatch, "python", files)


# ---- a table id re-used for another definition ----

def _table_map(table_id: int, name: str, types: bytes, meta: bytes) -> bytes:
    return _STRUCTS.table_map_body.build({
        "table_id": table_id, "flags": 1, "skip": b"", "db": b"d", "table": name.encode(),
        "column_count": len(types), "column_types": types, "metadata": meta,
        "null_bitmap": bytes((len(types) + 7) // 8), "optional_metadata": []})


def _rows(table_id: int, images: bytes, update: bool, extra: bytes = b"") -> bytes:
    return _STRUCTS.rows_v2_body.build({
        "table_id": table_id, "flags": 1, "extra_info": extra, "width": 2,
        "columns_before": b"\x03", "columns_after": b"\x03" if update else None,
        "rows": images}, is_update=update)


#: t_old (INT, VARCHAR(100)) and then, under the same table id, t_new (BIGINT, INT)
OLD = (b"\x03\x0f", (100).to_bytes(2, "little"))
NEW = (b"\x08\x03", b"")


def _old_row(key: int) -> bytes:
    return b"\x00" + struct.pack("<i", key) + b"\x03abc"


def _new_row(key: int) -> bytes:
    # byte 4 of the BIGINT is 20: read with t_old's program (INT, VARCHAR) this row and
    # the next are one row (1 + 4 + 1 + 20 = 26 = 2 x 13 bytes): a stale program miscounts
    return b"\x00" + struct.pack("<q", key | 20 << 32) + struct.pack("<i", key)


def _write_reused_id_log(path: Path, tid: int) -> dict[str, dict[str, int]]:
    """Transactions on ``d.t_old`` (id ``tid``), then the same id mapped to ``d.t_new``
    (another column list, the same Rows header bytes), then on another id again
    ``d.t_old``; returns the rows written per table and kind."""
    want = {t: dict(inserted=0, updated=0, deleted=0, unwalked_events=0)
            for t in ("d.t_old", "d.t_new")}
    tm = EventType.TABLE_MAP_EVENT
    plan = [("t_old", tid, OLD, _old_row)] * 6 + [("t_new", tid, NEW, _new_row)] * 6 + \
        [("t_old", tid + 1, OLD, _old_row)] * 3
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(1_760_000_000, (None, 0))
        for seq, (name, table_id, (types, meta), row) in enumerate(plan, 1):
            n = 2 + seq % 3
            bodies = [(EventType.QUERY_EVENT, query_body(10, "d", "BEGIN")),
                      (tm, _table_map(table_id, name, types, meta))]
            for tc, kind, per_row in ((EventType.WRITE_ROWS_EVENT, "inserted", 1),
                                      (EventType.UPDATE_ROWS_EVENT, "updated", 2),
                                      (EventType.DELETE_ROWS_EVENT, "deleted", 1),
                                      (EventType.WRITE_ROWS_EVENT, "inserted", 1)):
                images = b"".join(row(seq * 100 + i) for i in range(n * per_row))
                bodies.append((tc, _rows(table_id, images, per_row == 2)))
                want[f"d.{name}"][kind] += n
            bodies.append((EventType.XID_EVENT, S.xid_body.build({"xid": seq})))
            b.transaction(1_760_000_000_000_000 + seq, None, 0, seq - 1, seq, bodies)
        b.stop(1_760_000_100)
    return want


def test_a_re_used_table_id_follows_its_new_table_map(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from repltool.binlog import _core
    path = tmp_path / "binlog.000001"
    want = _write_reused_id_log(path, 77)
    hooks = _Hooks(monkeypatch)
    before = _core.rows_walked()
    got = _stats(monkeypatch, "compiled", [path])
    assert isinstance(got, dict)
    assert got["total"]["rows"] == want
    walked = _core.rows_walked() - before
    # three layouts (insert, update, delete) for each of the three definitions
    assert hooks.calls == 9
    assert walked + hooks.calls == _rows_events(got) == 15 * 4
    assert got == _stats(monkeypatch, "python", [path])


def test_partition_ids_in_the_extra_row_info_keep_the_core_walking(monkeypatch,  # type: ignore[no-untyped-def]
                                                                   tmp_path: Path) -> None:
    """A partitioned table: MySQL 8.0 puts the partition id (and for an UPDATE the
    source partition's) into each Rows v2 event's extra row info (rows_event.h,
    ``enum_extra_row_info_typecode::PART``, 2-byte values).  It changes from event
    to event but not how the images are walked: Python sees one event per kind."""
    from repltool.binlog import _core
    path = tmp_path / "binlog.000001"
    tm = EventType.TABLE_MAP_EVENT
    want = dict(inserted=0, updated=0, deleted=0, unwalked_events=0)
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(1_760_000_000, (None, 0))
        for seq in range(1, 41):
            part = struct.pack("<H", seq % 24)
            n = 1 + seq % 4
            bodies = [(EventType.QUERY_EVENT, query_body(10, "d", "BEGIN")),
                      (tm, _table_map(90, "t_part", *OLD))]
            for tc, kind, extra in (
                    (EventType.WRITE_ROWS_EVENT, "inserted", b"\x01" + part),
                    (EventType.UPDATE_ROWS_EVENT, "updated", b"\x01" + part + part[::-1]),
                    (EventType.DELETE_ROWS_EVENT, "deleted", b"\x01" + part)):
                per_row = 2 if kind == "updated" else 1
                images = b"".join(_old_row(seq * 10 + i) for i in range(n * per_row))
                bodies.append((tc, _rows(90, images, per_row == 2, extra)))
                want[kind] += n
            bodies.append((EventType.XID_EVENT, S.xid_body.build({"xid": seq})))
            b.transaction(1_760_000_000_000_000 + seq, None, 0, seq - 1, seq, bodies)
        b.stop(1_760_000_100)
    hooks = _Hooks(monkeypatch)
    before = _core.rows_walked()
    got = _stats(monkeypatch, "compiled", [path])
    assert isinstance(got, dict)
    assert got["total"]["rows"] == {"d.t_part": want}
    assert hooks.calls == 3
    assert _core.rows_walked() - before + hooks.calls == _rows_events(got) == 40 * 3
    assert got == _stats(monkeypatch, "python", [path])


def test_the_core_is_handed_only_the_plain_header_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``core_rows`` gives the core programs with the extra row info's length only when
    the bytes after it are exactly the minimal width encoding and the bitmaps (what the
    core compares); a width written in a longer packed form is counted in Python only."""
    monkeypatch.setenv(engine.ENV, "compiled")
    c = RowCounter()
    c.set_structs(_STRUCTS)
    c.table_map_bytes(_table_map(5, "t", *OLD))
    rows = _old_row(1) + _old_row(2)
    plain = _rows(5, rows, False, b"\x01\x07\x00")
    k, n, progs = c.core_rows(EventType.WRITE_ROWS_EVENT, plain)
    assert (k, n) == (0, 2) and progs is not None
    assert progs[0] == 2 + 3 + 2 and progs[3] == 5         # extra block, width, bitmap
    assert plain[8 + progs[3]:8 + progs[0]] == b"\x02\x03"
    long_width = plain[:13] + b"\xfc\x02\x00" + plain[14:]  # width 2 as a 3-byte packed int
    assert c.core_rows(EventType.WRITE_ROWS_EVENT, long_width) == (0, 2, None)
    v1 = plain[:8] + plain[13:]                            # no extra block (a v1 layout)
    k, n, progs = c.core_rows(EventType.WRITE_ROWS_EVENT_V1, v1)
    assert (k, n) == (0, 2) and progs is not None and progs[0] == 2 and progs[3] == 0
