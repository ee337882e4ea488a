"""Every command that reads logs shows a progress bar (bytes, MB/s, ETA) on a terminal's
stderr, and nothing at all when stderr is a pipe.

``REPLTOOL_PROGRESS_MIN_BYTES=0`` lowers the size from which a bar is drawn (32 MB by
default) so that a 1 MB corpus file is a "long run"; the bar is transient (erased
when done), so the test reads it from the raw terminal stream.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixtures.terminal import repltool

SMALL = "mariadb/rotation/mysql-bin.000001"       # 1.1 MB, MariaDB 10.11
ALWAYS = {"REPLTOOL_PROGRESS_MIN_BYTES": "0"}

COMMANDS = {
    "stats": ["stats"],
    "stats --clock-only": ["stats", "--clock-only"],
    "check": ["check"],
    "certify": ["certify", "--mode", "writeset"],
    "explain": ["explain", "--mode", "writeset"],
    "schedule": ["schedule", "--retag", "writeset"],
    "dump": ["dump", "-v"],
}

BAR = re.compile(r"[0-9.]+/1\.1 MB")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_progress_on_a_terminal_and_none_in_a_pipe(name: str, corpus: Path) -> None:
    args = [*COMMANDS[name], corpus / SMALL]
    tty = repltool(*args, stderr_tty=True, env=ALWAYS)
    assert tty.status == 0, tty.stderr[-2000:]
    label = COMMANDS[name][0]
    assert BAR.search(tty.stderr), tty.stderr[-2000:]
    assert label in tty.stderr
    piped = repltool(*args, env=ALWAYS)
    assert piped.status == 0, piped.stderr
    assert not BAR.search(piped.stderr) and "\x1b" not in piped.stderr
    assert piped.stdout == tty.stdout       # the bar goes to stderr only


def test_no_bar_below_the_threshold(corpus: Path) -> None:
    """Small inputs (below 32 MB by default) finish too soon for a bar."""
    run = repltool("check", corpus / SMALL, stderr_tty=True)
    assert run.status == 0
    assert not BAR.search(run.stderr)


def test_the_bar_is_gone_before_output_on_the_same_terminal(corpus: Path) -> None:
    """stdout and stderr on terminals: the bar is erased before the first line of
    output, which starts on a line of its own (not after a half-drawn bar)."""
    run = repltool("check", corpus / SMALL, stderr_tty=True, stdout_tty=True, env=ALWAYS)
    assert run.status == 0
    assert run.stdout.startswith("Checked 1 file")
    assert BAR.search(run.stderr)
