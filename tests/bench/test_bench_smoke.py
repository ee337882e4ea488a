"""``bench/run.py`` runs end to end on tiny inputs (the figures themselves are not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_runs_on_tiny_inputs(tmp_path: Path) -> None:
    record = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--maria", "none",
         "--main-size", "256K", "--sizes", "128K,512K", "--schedule-transactions", "5000",
         "--out", str(tmp_path / "out"), "--record", str(record)],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = record.read_text()
    assert text.startswith("\n## bench/run.py - ") and "(smoke)" in text
    for needle in ("`repltool stats --format json`", "`repltool dump --writesets",
                   "`repltool certify", "Schedule: `", "Against the targets:",
                   "| schedule, 16 workers |", "peak RSS of `repltool stats", "Load: before"):
        assert needle in text, needle
    assert "exit " not in text, text          # every command succeeded
