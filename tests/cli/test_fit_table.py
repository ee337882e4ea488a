"""fit_table measures tables with rich's public API only, and agrees with rich's own
measurement of the table (the boundary between "fits" and "must be narrowed")."""

from __future__ import annotations

import io

import pytest
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from repltool.cli.render import PIPE_WIDTH, fit_table

ROWS = [("/var/lib/mysql/binlog.000001", "2d6e8214-9918-11ec-ac13-0010e0dc39c0:1-5000",
         "writeset-session", "1,234,567"),
        ("relay-bin.000002", "0-1-42", "commit-order", "12"),
        ("b", "short words wrap at spaces only, and this cell is long enough to be narrowed",
         "group-replication", "0")]


def _table(**kw) -> Table:  # type: ignore[no-untyped-def]
    t = Table(title="Files", **kw)
    for h in ("file", "GTIDs", "mode", "bytes"):
        t.add_column(h, justify="right" if h == "bytes" else "left")
    for r in ROWS:
        t.add_row(*r)
    return t


STYLES = {
    "default": {},
    "no-box": {"box": None},
    "no-edge": {"show_edge": False},
    "no-pad-edge": {"pad_edge": False},
    "collapse": {"collapse_padding": True, "padding": (0, 2)},
    "simple": {"box": box.SIMPLE, "show_header": False},
}


@pytest.mark.parametrize("style", list(STYLES))
def test_fits_exactly_at_rich_natural_width(style: str) -> None:
    console = Console(file=io.StringIO(), width=PIPE_WIDTH)
    table = _table(**STYLES[style])
    natural = Measurement.get(console, console.options, table).maximum
    same = fit_table(console, table, natural)
    assert [c.width for c in same.columns] == [None] * 4        # left alone
    narrowed = fit_table(console, table, natural - 1)
    assert any(c.width is not None for c in narrowed.columns)
    assert all(c.width is None for c in table.columns)           # the original is unchanged


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("width", [60, 80, 100])
def test_narrowed_tables_keep_every_word_whole(style: str, width: int) -> None:
    out = io.StringIO()
    console = Console(file=out, width=width)
    console.print(fit_table(console, _table(**STYLES[style]), width), crop=False)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    words = {w for r in ROWS for cell in r for w in cell.split()}
    flat = [w.rstrip(":") for w in text.split()]     # (stacked: "cell: ...")
    for w in words:
        assert w in flat, (w, text)


def test_short_paths_keep_what_tells_files_apart() -> None:
    from repltool.cli.render import ShortPaths
    s = ShortPaths(["/data/a/mysql-bin.000001", "/data/b/mysql-bin.000001", "/data/a/x.index"])
    assert s.directory == "/data" and s.header == "files in /data/"
    assert s.names(["/data/a/mysql-bin.000001", "/data/b/mysql-bin.000001", "TOTAL"]) == [
        "a/mysql-bin.000001", "b/mysql-bin.000001", "TOTAL"]
    one = ShortPaths(["/var/lib/mysql/binlog.000007"])
    assert one("/var/lib/mysql/binlog.000007") == "binlog.000007"
    assert one.header == "files in /var/lib/mysql/"
    for paths in (["binlog.000001", "binlog.000002"], ["/abs/binlog.1", "rel/binlog.2"]):
        plain = ShortPaths(paths)      # nothing in common, or absolute and relative mixed
        assert plain.header == "" and plain.names(paths) == paths
