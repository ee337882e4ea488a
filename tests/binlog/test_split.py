"""A binlog cut into parts at transaction boundaries (``repltool.binlog.split``, issue 15).

The parts' events, read one part at a time, are the file's events; ``stats`` of the
parts joined (:func:`repltool.stats.join_parts`) equal ``stats`` of the whole file, on
every MySQL corpus file that splits and on generated logs, with the active engine
(``REPLTOOL_ENGINE``: the compiled core reads a part itself, asserted below).  A split
point that is not an event boundary is caught by the read, never joined.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest

from repltool.binlog import read_events
from repltool.binlog.corescan import scan_totals
from repltool.binlog.engine import compiled_core
from repltool.binlog.split import Span, SplitMismatch, span_events, split_spans
from repltool.errors import ReplToolError
from repltool.stats import accumulate_stats, compute_stats, finish_stats, join_parts, \
    stats_to_dict
from tests.conftest import require_corpus
from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.synth import BinlogBuilder, SampleTable, query_body
from tests.spark.logsets import write_rotated_binlogs

SIZES = (300, 2_000, 20_000)


def _readable_mysql_files() -> list[Path]:
    out = []
    for f in sorted(require_corpus().glob("mysql/*/*")):
        try:
            compute_stats([f])
        except ReplToolError:
            continue
        out.append(f)
    return out


@pytest.fixture(scope="module")
def corpus_files() -> list[Path]:
    return _readable_mysql_files()


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ~600 KB MySQL 8.0 binlog: commit windows of 1-4 transactions, a DDL, a
    compressed transaction."""
    return write_rotated_binlogs(tmp_path_factory.mktemp("split"), files=1,
                                 per_file=3_000)[0]


@pytest.fixture(scope="module")
def compressed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MySQL 8.0 binlog with a compressed transaction every 40: the compiled core
    hands such a transaction to the general reader, inside later parts too."""
    path = tmp_path_factory.mktemp("split-z") / "binlog.000001"
    rng = random.Random(9)
    sid = uuid.UUID(int=rng.getrandbits(128), version=4)
    table = SampleTable(100, "db", "t0")
    ts_us, seq, last = 1_760_000_000_000_000, 0, 0
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(ts_us // 1_000_000, (sid, 0))
        while seq < 2_000:
            for _ in range(rng.randint(1, 4)):
                seq += 1
                ts_us += rng.randint(10, 3_000_000)
                rows = [(rng.randint(1, 10_000), f"v{rng.randint(0, 999)}")
                        for _ in range(rng.randint(1, 3))]
                bodies = [(EventType.QUERY_EVENT, query_body(12, "db", "BEGIN")),
                          (EventType.TABLE_MAP_EVENT, table.table_map_body()),
                          (EventType.WRITE_ROWS_EVENT, table.write_rows_body(rows)),
                          (EventType.XID_EVENT, S.xid_body.build({"xid": seq}))]
                b.transaction(ts_us, sid, seq, last, seq, bodies, compress=seq % 40 == 0)
            last = seq
        b.close(ts_us // 1_000_000, None)
    return path


def _events(path: Path | str, spans: list[Span]) -> list[tuple]:
    out = []
    for span in spans:
        out += [(e.pos, e.type_code, e.raw) for e in span_events(str(path), span)]
    return out


def _joined_stats(path: Path, size: int) -> tuple[dict | None, int]:
    spans = split_spans(str(path), size)
    parts = [accumulate_stats([str(path)], span=s)[0] for s in spans]
    joined = join_parts(parts, spans)
    return (None if joined is None else stats_to_dict(finish_stats([joined]))), len(spans)


def test_parts_hold_the_files_events(corpus_files: list[Path]) -> None:
    split = 0
    for f in corpus_files:
        whole = [(e.pos, e.type_code, e.raw) for e in read_events([str(f)])]
        for size in SIZES:
            spans = split_spans(str(f), size)
            assert spans[0].start == 4 and spans[-1].end is None
            assert all(a.end == b.start for a, b in zip(spans, spans[1:]))
            if len(spans) > 1:
                split += 1
                assert _events(f, spans) == whole, (f.name, size)
    assert split >= 25            # the corpus has MySQL 5.7/8.0 files with clocks


def test_joined_stats_equal_the_whole_file(corpus_files: list[Path]) -> None:
    joined = 0
    for f in corpus_files:
        whole = stats_to_dict(compute_stats([f]))
        for size in SIZES:
            got, n = _joined_stats(f, size)
            if n == 1:
                continue
            assert got == whole, (f.name, size)
            joined += 1
    assert joined >= 25


@pytest.mark.parametrize("size", [4_000, 30_000, 100_000])
def test_synth_log_joins_exactly(synth: Path, size: int) -> None:
    got, n = _joined_stats(synth, size)
    assert n >= 5
    assert got == stats_to_dict(compute_stats([synth]))


def test_boundaries_start_a_new_commit_window(synth: Path) -> None:
    spans = split_spans(str(synth), 4_000)
    parts = [accumulate_stats([str(synth)], span=s)[0] for s in spans]
    for prev, span in zip(parts, spans[1:]):
        assert span.clock is not None and prev.acc.clock.cur_lc != span.clock


def test_compiled_core_reads_a_part_itself(synth: Path) -> None:
    spans = split_spans(str(synth), 30_000)
    for k, span in enumerate(spans):
        core = scan_totals([str(synth)], top=5, span=span)
        if compiled_core() is None:         # REPLTOOL_ENGINE=python: the general reader
            assert core is None
        elif k == 0:                        # the compressed transaction: handed over
            assert core is not None and core.rest is not None
            assert core.rest.reason == "event type 40"
        else:
            assert core is not None and core.rest is None


def test_parts_with_compressed_transactions_join_exactly(compressed: Path) -> None:
    got, n = _joined_stats(compressed, 20_000)
    assert n >= 10
    assert got == stats_to_dict(compute_stats([compressed]))
    if compiled_core() is not None:     # later parts handed over to the general reader
        spans = split_spans(str(compressed), 20_000)
        handed = [scan_totals([str(compressed)], top=5, span=s) for s in spans[1:]]
        assert sum(c is not None and c.rest is not None for c in handed) >= 5


def test_a_wrong_split_point_is_caught(synth: Path) -> None:
    spans = split_spans(str(synth), 30_000)
    bad = spans[1].start + 7                    # inside the GTID event
    with pytest.raises(SplitMismatch):
        list(span_events(str(synth), Span(4, bad)))
    with pytest.raises(SplitMismatch):
        accumulate_stats([str(synth)], span=Span(4, bad))


def test_a_window_crossing_a_boundary_is_not_joined(synth: Path) -> None:
    spans = split_spans(str(synth), 30_000)
    parts = [accumulate_stats([str(synth)], span=s)[0] for s in spans]
    lc = parts[0].acc.clock.cur_lc
    forged = [spans[0], Span(spans[1].start, spans[1].end, lc), *spans[2:]]
    assert join_parts(parts, forged) is None


def test_small_relay_and_mariadb_files_are_not_split(corpus_files: list[Path]) -> None:
    root = require_corpus()
    maria = sorted(p for p in root.glob("mariadb/**/*") if p.is_file()
                   and p.name[-6:].isdigit())
    assert maria
    for f in maria:
        assert split_spans(str(f), 200) == [Span(4, None)]
    relay = [f for f in corpus_files if "relay" in f.name]
    assert relay
    for f in relay:
        assert split_spans(str(f), 200) == [Span(4, None)]
