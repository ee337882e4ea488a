"""The pure-Python row count by layout (``RowCounter``'s per-layout row counters)
held to the general route: decode the Rows body, then walk each image.

Without the compiled core, :meth:`repltool.binlog.rowcount.RowCounter.rows` counts a
WRITE/UPDATE/DELETE_ROWS v1 or v2 body given as bytes with one generated function per table
and layout (:func:`repltool.binlog.rowwalk.row_counter`), found by the bytes before the
rows.  Given a decoded :class:`~repltool.binlog.events.RowsBody` it takes the general
route.  Every Rows event of the corpus is counted both ways and must give the same
``(kind, rows)``; ``RowCounter.counted`` says how many the layout counters counted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, engine, read_events
from repltool.binlog.decode import DecodeContext
from repltool.binlog.events import FormatDescriptionBody, RowsBody, TableMapBody
from repltool.binlog.fastdecode import decoder_for
from repltool.binlog.reader import structs_for
from repltool.binlog.rowcount import RowCounter
from repltool.binlog.rows import ROW_KINDS
from repltool.errors import ReplToolError
from repltool.stats import compute_stats, stats_to_dict
from repltool.synth import SynthOptions, generate

_PLAIN = {23, 24, 25, 30, 31, 32}       # WRITE/UPDATE/DELETE_ROWS v1 and v2
MARIADB_SETS = ["mariadb/small/mysql-bin.000001", "mariadb/rotation/mysql-bin.0*",
                "mariadb/relay/replica-relay/relay-bin.0000*", "mariadb/compressed/*bin.0*",
                "mariadb/serial/mysql-bin.0*"]


def _both_ways(paths: list[Path]) -> tuple[int, int, RowCounter]:
    """Feed every Table_map and Rows event of ``paths`` to two counters (bytes / decoded
    bodies); assert each Rows event's count agrees.  Returns (v1/v2 Rows events the general
    route walked, Rows events compared, the bytes-fed counter)."""
    fast, general = RowCounter(), RowCounter()
    walked = compared = 0
    ctx = None
    try:
        for ev in read_events([str(p) for p in paths], ReadOptions(keep_raw=True)):
            body = ev.body
            if isinstance(body, FormatDescriptionBody):
                fast.format_description(body)
                general.format_description(body)
                ctx = DecodeContext(structs_for(body), ev.pos, 19)
                continue
            if not ev.raw or ctx is None:
                continue
            data = ev.raw[19:len(ev.raw) - (4 if ev.crc is not None else 0)]
            if isinstance(body, TableMapBody):
                fast.table_map_data(data, lambda d: decoder_for(19)(d, ctx))
                general.table_map(body)
            elif ev.type_code in ROW_KINDS:
                got = fast.rows(ev.type_code, data)
                want = general.rows(ev.type_code, body if isinstance(body, RowsBody) else data)
                assert got == want, (ev.pos, ev.type_code)
                compared += 1
                if ev.type_code in _PLAIN and want[0] != 3:
                    walked += 1
    except ReplToolError:
        pass                # a damaged file: what was read before is compared
    return walked, compared, fast


@pytest.mark.corpus_files("path", "mysql/*/*")
def test_every_mysql_corpus_file_counts_alike(monkeypatch, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every Rows v1/v2 event the general route walks is counted by a layout counter, with
    the same result; every other Rows event gives the general route's answer too."""
    monkeypatch.setenv(engine.ENV, "python")
    walked, _, fast = _both_ways([path])
    assert fast.counted == walked


@pytest.mark.parametrize("pattern", MARIADB_SETS)
def test_the_mariadb_sets_count_alike(monkeypatch, corpus: Path, pattern: str) -> None:  # type: ignore[no-untyped-def]
    """MariaDB logs (v1 Rows events; compressed ones take the general route)."""
    monkeypatch.setenv(engine.ENV, "python")
    walked, compared, fast = _both_ways(sorted(corpus.glob(pattern)))
    assert walked > 0 and fast.counted == walked


def test_the_mysql_corpus_runs_the_layout_counters(monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """The corpus holds Rows v2 events of every kind that the layout counters count."""
    monkeypatch.setenv(engine.ENV, "python")
    walked, _, fast = _both_ways(sorted(corpus.glob("mysql/mysql80/*row*")))
    assert walked > 0 and fast.counted == walked


def test_pure_python_stats_counts_by_layout(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``stats`` under the pure-Python engine (the fused scan) counts every Rows event of
    a synth 8.0 log with the layout counters, and gives the compiled engine's JSON."""
    r = generate(SynthOptions(out=tmp_path / "s", transactions=300, ground_truth=False,
                              seed=11, server_format="8.0"))
    paths = [Path(f) for f in r.files]
    made: list[RowCounter] = []
    init = RowCounter.__init__

    def record(self, *a, **k):  # type: ignore[no-untyped-def]
        init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(RowCounter, "__init__", record)
    monkeypatch.setenv(engine.ENV, "python")
    python = stats_to_dict(compute_stats(paths))
    events = sum(n for t, n in python["total"]["event_types"].items()
                 if t.split("_")[0] in ("WRITE", "UPDATE", "DELETE"))
    assert events > 0 and sum(c.counted for c in made) == events
    kinds = python["total"]["rows"]
    assert all(sum(c[k] for c in kinds.values()) for k in ("inserted", "updated", "deleted"))
    monkeypatch.setenv(engine.ENV, "compiled")
    assert stats_to_dict(compute_stats(paths)) == python
