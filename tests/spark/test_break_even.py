"""The break-even hint is per command (issue 15), without starting Spark.

``--spark`` on ``local[2]`` pays off at very different sizes per command: the
single process's CPU per byte and what the executors and the driver spend differ
(bench/results/spark15.md, 1 GB end to end).  ``BREAK_EVEN`` holds one figure per
command; the CLI names its command.  Here each command is run with ``--spark`` on
a small file, the session start replaced by a Spark failure (the hint is printed
before the session starts, from the local inputs' sizes): stderr names the
command and its own figure, and the figures are not all the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import repltool.distributed as distributed
from repltool.distributed import BREAK_EVEN, BREAK_EVEN_BYTES, SparkFailed, break_even_hint
from tests.conftest import require_corpus


def _file() -> Path:
    return require_corpus() / "mysql" / "mysql80" / "mysql-test__std_data__binlog_savepoint.000001"


def test_each_command_has_its_own_figure() -> None:
    assert {"stats", "schedule", "certify", "certify --mode group-replication",
            "check"} <= set(BREAK_EVEN)
    assert len(set(BREAK_EVEN.values())) > 1
    for command, threshold in BREAK_EVEN.items():
        below = break_even_hint(threshold - 1, command)
        assert below is not None and f"({command})" in below
        assert f"{threshold / 1e6:.0f} MB" in below
        assert break_even_hint(threshold, command) is None
    # a command without its own figure, or none named: the general one
    assert f"{BREAK_EVEN_BYTES / 1e6:.0f} MB" in break_even_hint(1000, "explain")
    assert break_even_hint(BREAK_EVEN_BYTES, None) is None


@pytest.mark.parametrize("command", ["stats", "schedule", "certify", "check", "explain",
                                     "certify --mode group-replication"])
def test_the_cli_prints_its_command_s_figure(cli, command: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[bool] = []

    def no_session(*args: object, **kw: object):
        started.append(True)
        raise SparkFailed("Spark failed: not started in this test")
    monkeypatch.setattr(distributed, "spark_session", no_session)
    _, err = cli(*command.split(), "--spark", _file(), expect=9)
    assert started == [True]
    hint = [line for line in err.splitlines() if line.startswith("repltool: hint: --spark on")]
    assert len(hint) == 1 and f"({command})" in hint[0]
    figure = BREAK_EVEN.get(command, BREAK_EVEN_BYTES)
    assert f"below about {figure / 1e6:.0f} MB" in hint[0]
