"""stats with a window on the compiled core equals the general reader.

The core asks the window's cursor about every transaction it completes and adds up
only those it takes (their events by type too); at the window's end it stops
reading, as the general reader does; where it hands over (an event outside its
subset), the general reader goes on with the cursor's state.  Each window kind is
compared with the general reader (``keep_going=True`` reads with it) on corpus
logs, and the core must have walked the events.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.binlog import engine, read_transactions
from repltool.binlog.window import Window
from repltool.stats import compute_stats, stats_to_dict

SETS = {
    "maria-rotation": ["mariadb/rotation/mysql-bin.00000{}".format(i) for i in (3, 4, 5)],
    "maria-relay": ["mariadb/relay/replica-relay/relay-bin.0000{:02d}".format(i)
                    for i in (11, 12, 13, 14)],
    "maria-compressed": ["mariadb/compressed/mysql-bin.000001"],     # hands over
    "mysql80": ["mysql/apecloud/tests__parse_file_tests__mysql-bin.000080"],
}


def _windows(paths: list[str]) -> dict[str, Window]:
    trxs = list(read_transactions(paths))
    a, b = trxs[len(trxs) // 4], trxs[3 * len(trxs) // 4]
    firsts = [t for t in trxs if t.start.file == paths[0]]
    lasts = [t for t in trxs if t.end.file == paths[-1]]
    if len(paths) > 1:
        a, b = firsts[len(firsts) // 2], lasts[len(lasts) // 2]
    stamps = sorted({t.timestamp for t in trxs})
    inner = [t.gtid for t in trxs[len(trxs) // 3:len(trxs) // 2] if t.gtid]
    out = {
        "position": Window(start_position=a.start.offset, stop_position=b.end_offset),
        "position-inside": Window(start_position=firsts[1].start.offset + 1,
                                  stop_position=lasts[-2].end_offset - 1),
        # a log whose transactions share a second or two: from the last second on
        "datetime": Window(start_datetime=stamps[len(stamps) // 4],
                           stop_datetime=stamps[3 * len(stamps) // 4])
        if len(stamps) > 2 else Window(start_datetime=stamps[-1]),
        "include-gtids": Window.from_text(include_gtids=",".join(inner)),
        "exclude-gtids": Window.from_text(exclude_gtids=",".join(inner)),
    }
    if a.maria_flags is not None and a.gtid and b.gtid:
        out["maria-positions"] = Window.from_text(start_position=a.gtid,
                                                  stop_position=b.gtid)
    return out


CASES = [(s, k) for s in SETS for k in ("position", "position-inside", "datetime",
                                         "include-gtids", "exclude-gtids", "maria-positions")
         if k != "maria-positions" or s.startswith("maria")]


@pytest.mark.parametrize("name,kind", CASES)
def test_window_on_the_core_equals_the_general_reader(monkeypatch, corpus: Path,  # type: ignore[no-untyped-def]
                                                      name: str, kind: str) -> None:
    from repltool.binlog import _core
    monkeypatch.setenv(engine.ENV, "compiled")
    paths = [str(corpus / p) for p in SETS[name]]
    window = _windows(paths)[kind]
    before = _core.events_walked()
    fast = stats_to_dict(compute_stats(paths, window=window))
    assert _core.events_walked() > before                   # the core read the logs
    general = stats_to_dict(compute_stats(paths, window=window, keep_going=True))
    assert fast == general
    assert list(fast["total"]["event_types"]) == list(general["total"]["event_types"])
    whole = stats_to_dict(compute_stats(paths))["total"]["transactions"]
    assert 0 < fast["total"]["transactions"] < whole           # the window selects


def test_the_core_stops_at_the_windows_end(monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """A stop datetime in the first of three files: the core reads no further, and the
    files after it are not opened (as with the general reader)."""
    from repltool.binlog import _core
    monkeypatch.setenv(engine.ENV, "compiled")
    paths = [str(corpus / p) for p in SETS["maria-rotation"]]
    first = list(read_transactions(paths[0]))
    window = Window(stop_datetime=first[len(first) // 2].timestamp)
    before = _core.events_walked()
    fast = compute_stats(paths, window=window)
    walked = _core.events_walked() - before
    assert 0 < walked < sum(f.events for f in compute_stats(paths[:1]).files)
    assert [f.size for f in fast.files][1:] == [0, 0]
    assert stats_to_dict(fast) == stats_to_dict(compute_stats(paths, window=window,
                                                              keep_going=True))


def test_pure_python_engine_gives_the_same(monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    from repltool.binlog import _core
    paths = [str(corpus / p) for p in SETS["maria-rotation"]]
    window = _windows(paths)["datetime"]
    monkeypatch.setenv(engine.ENV, "compiled")
    fast = stats_to_dict(compute_stats(paths, window=window))
    monkeypatch.setenv(engine.ENV, "python")
    before = _core.events_walked()
    assert stats_to_dict(compute_stats(paths, window=window)) == fast
    assert _core.events_walked() == before


def test_the_compressed_set_hands_over_with_the_cursor(monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """The compressed MariaDB log leaves the core's subset (Query_compressed, type 165):
    its cases above compare a read the general reader finished with the cursor's state."""
    from repltool.binlog.corescan import scan_totals
    monkeypatch.setenv(engine.ENV, "compiled")
    paths = [str(corpus / p) for p in SETS["maria-compressed"]]
    cursor = _windows(paths)["position"].cursor(paths)
    result = scan_totals(paths, top=5, window=cursor, count_rows=True)
    assert result is not None and result.rest is not None
    assert result.rest.reason == "event type 165" and not cursor.stopped


@pytest.mark.parametrize("take", [True, False])
def test_tagged_gtid_windows_on_the_core(monkeypatch, corpus: Path, take: bool) -> None:  # type: ignore[no-untyped-def]
    """A MySQL 9 tagged GTID (decoded by the driver, not the core): the verdict sees its
    text (uuid:tag:gno) as the general reader does."""
    from repltool.binlog import _core
    monkeypatch.setenv(engine.ENV, "compiled")
    paths = [str(next((corpus / "mysql").glob(
        "*/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001")))]
    gtid = next(t.gtid for t in read_transactions(paths) if t.gtid and t.gtid.count(":") == 2)
    window = Window.from_text(include_gtids=gtid) if take else \
        Window.from_text(exclude_gtids=gtid)
    before = _core.events_walked()
    fast = stats_to_dict(compute_stats(paths, window=window))
    assert _core.events_walked() > before
    assert fast == stats_to_dict(compute_stats(paths, window=window, keep_going=True))
    assert (fast["total"]["first_gtid"] == gtid) == take
