"""stats' text says what DBAs look for: transaction kinds, no silent caps, and no
table of zero durations."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

from repltool.cli.render import TABLES_SHOWN, make_console, stats_tables
from repltool.stats import compute_stats

ROTATION = [f"mariadb/rotation/mysql-bin.00000{i}" for i in (1, 2, 3)]


def _text(stats) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    console = make_console(False, file=out, width=200)
    for item in stats_tables(stats):
        console.print(item)
    return out.getvalue()


def test_kinds_and_zero_durations(corpus: Path) -> None:
    stats = compute_stats([corpus / n for n in ROTATION])
    text = _text(stats)
    assert "Transactions by kind" in text
    for kind, n in stats.total.transaction_kinds.items():
        assert any(kind in line and f"{n:,}" in line for line in text.splitlines()), kind
    assert stats.total.longest and not any(x.duration for x in stats.total.longest)
    assert "Longest transactions (seconds)" not in text
    assert "every transaction lasted less than a second" in text


def test_the_table_list_says_when_it_is_cut(corpus: Path) -> None:
    stats = compute_stats([corpus / n for n in ROTATION])
    tables = {f"db.t{i:02d}": 100 - i for i in range(TABLES_SHOWN + 5)}
    rows = {t: dict(inserted=n, updated=0, deleted=0, unwalked_events=0)
            for t, n in tables.items()}
    for counted in (dict(rows=rows), dict(rows={})):     # rows per table / rows events only
        total = dataclasses.replace(stats.total, tables=tables, **counted)
        text = _text(dataclasses.replace(stats, total=total))
        assert f"the {TABLES_SHOWN} busiest of {TABLES_SHOWN + 5}" in text
        assert "db.t19" in text and "db.t20" not in text
    whole = _text(stats)
    assert "busiest of" not in whole
    assert all(name in whole for name in stats.total.tables)


def test_rows_by_table_in_text(corpus: Path) -> None:
    """Rows per table, split by kind, with the Rows events beside them; a Rows event
    whose Table_map is not in the input is said not counted."""
    stats = compute_stats([corpus / "mariadb/relay/replica-relay/relay-bin.000006"])
    text = _text(stats)
    assert "Rows by table" in text
    for name, c in stats.total.rows.items():
        cells = [f"{c[k]:,}" for k in ("inserted", "updated", "deleted")]
        line = next(line for line in text.splitlines() if f" {name} " in line)
        assert [cell.strip() for cell in line.split("│")[2:5]] == cells, line
    assert stats.total.rows["?"]["unwalked_events"] == 1
    assert "1 Rows event(s) not counted" in text
    whole = _text(compute_stats([corpus / n for n in ROTATION]))
    assert "not counted" not in whole


def test_time_ranges_follow_the_timezone(corpus: Path) -> None:
    """--timezone reaches stats' per-file time ranges: the same instants, shown in the
    zone with its abbreviation (UTC stays bare), and the title names the zone."""
    from datetime import datetime, timezone
    from zoneinfo import ZoneInfo

    from repltool.cli.render import set_timezone

    stats = compute_stats([corpus / n for n in ROTATION])
    first = stats.files[0].first_timestamp
    assert first is not None
    utc = datetime.fromtimestamp(first, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    paris = datetime.fromtimestamp(first, ZoneInfo("Europe/Paris"))
    shown = f"{paris:%Y-%m-%d %H:%M:%S} {paris.tzname()}"
    try:
        set_timezone(ZoneInfo("Europe/Paris"))
        text = _text(stats)
    finally:
        set_timezone(timezone.utc)
    assert shown in text and utc not in text and "times in Europe/Paris)" in text
    plain = _text(stats)
    assert utc in plain and shown not in plain and "times in UTC)" in plain
