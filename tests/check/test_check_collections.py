"""``repltool check`` (and its ``--spark`` executors) run the cyclic collector less often.

The write-set reader's key caches make the default thresholds walk them again
and again (``check`` on a 32 MB synth log: 3.2 -> 2.7 CPU s in-process,
bench/results/spark15.md), as in ``certify`` (tests/certify/test_certify_collections.py).
Here: the thresholds really are raised while the rules run, in the single process
and in an executor's unit (run in-process), restored afterwards, and the output is
byte for byte that of a run with the default thresholds.
"""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from unittest import mock

import repltool.check.engine as engine
import repltool.collector as collector
from repltool.check import CheckConfig
from repltool.cli import run
from repltool.distributed.checkjob import ROWS, CheckSpec, check_part_unit
from repltool.distributed.units import Task, Unit


def _synth(tmp_path: Path) -> list[str]:
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "400000", "--seed", "7",
                "--no-ground-truth"]) == 0
    return [str(f) for f in sorted(out.glob("binlog.0*"))]


def test_check_runs_its_rules_with_few_collections(tmp_path: Path, capsys) -> None:
    files = _synth(tmp_path)
    capsys.readouterr()
    seen: list[tuple[int, int, int]] = []
    real_files, real_part = engine.check_files, engine.check_part

    def watched_files(*args, **kw):
        seen.append(gc.get_threshold())
        return real_files(*args, **kw)

    def watched_part(*args, **kw):
        seen.append(gc.get_threshold())
        return real_part(*args, **kw)
    before = gc.get_threshold()
    with mock.patch("repltool.check.check_files", watched_files):
        assert run(["check", "--format", "json", *files]) == 0
        fewer = capsys.readouterr().out
        with mock.patch.object(collector, "few_collections", contextlib.nullcontext):
            assert run(["check", "--format", "json", *files]) == 0
            default = capsys.readouterr().out
    assert seen[0][0] >= 100_000 and seen[0][1:] == (50, 100)
    assert seen[1] == before and gc.get_threshold() == before
    assert fewer == default and '"findings"' in fewer
    # an executor's unit (check --spark on binlogs)
    seen.clear()
    with mock.patch.object(engine, "check_part", watched_part):
        r = check_part_unit(Task("checkpart", extra=CheckSpec(CheckConfig(), ROWS, None),
                                 run=check_part_unit), Unit(0, (files[0],)))
    assert r.failure is None and r.count > 100
    assert seen[0][0] >= 100_000 and gc.get_threshold() == before
