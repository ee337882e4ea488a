"""schedule --plot --workers 1-32: the curve's x labels do not overlap (a subset:
powers of two on the log axis, the first, the last and the recommended count)."""

from __future__ import annotations

from pathlib import Path

from repltool.cli.render_schedule import tick_values

MYSQL = "mysql/mysql80/mysql-test__std_data__replicated-bin.000001"


def test_tick_values() -> None:
    xs = list(range(1, 33))
    assert tick_values(xs, 4, True) == [1, 2, 4, 8, 16, 32]
    assert tick_values(xs, 17, True) == [1, 2, 4, 8, 17, 32]       # 16 would touch 17
    linear = tick_values(list(range(1, 41)), 7, False)
    assert len(linear) <= 13 and {1, 7, 40} <= set(linear)
    assert tick_values([1, 2, 4, 8, 16], 4, True) == [1, 2, 4, 8, 16]


def test_plot_with_32_workers(cli, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "curve.svg"
    cli("schedule", "--workers", "1-32", "--plot", out, corpus / MYSQL)
    text = out.read_text()
    assert text.startswith("<?xml") and "</svg>" in text
