"""``repltool certify`` runs the cyclic garbage collector less often.

The write-set reader keeps large caches of key entries (``WriteKey`` objects)
and makes no reference cycles per transaction; with the default thresholds the
collector walks those caches again and again (a third of the reader's CPU on a
synth log: bench/results/certkeys.md).  ``certify`` (like ``dump --writesets``)
therefore runs under :func:`repltool.cli.options.few_collections`.  Here: the
thresholds really are raised while the report is built (the path ran), restored
afterwards, and the output is byte for byte that of a run with the default
thresholds.
"""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from unittest import mock

import repltool.cli.certify as cli_certify
from repltool.certify.report import ReportBuilder
from repltool.cli import run


def test_certify_builds_its_report_with_few_collections(tmp_path: Path, capsys) -> None:
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "400000", "--seed", "7",
                "--no-ground-truth"]) == 0
    files = [str(f) for f in sorted(out.glob("binlog.0*"))]
    args = ["certify", "--format", "jsonl", "--schema", str(out / "schema.sql"), *files]
    capsys.readouterr()
    seen: list[tuple[int, int, int]] = []
    build = ReportBuilder.build

    def watched(self: ReportBuilder):
        seen.append(gc.get_threshold())
        return build(self)

    before = gc.get_threshold()
    with mock.patch.object(ReportBuilder, "build", watched):
        assert run(args) == 0
    fewer = capsys.readouterr().out
    assert len(seen) == 1 and seen[0][0] >= 100_000 and seen[0][1:] == (50, 100)
    assert gc.get_threshold() == before

    seen.clear()
    with mock.patch.object(ReportBuilder, "build", watched), \
            mock.patch.object(cli_certify, "few_collections", contextlib.nullcontext):
        assert run(args) == 0
    default = capsys.readouterr().out
    assert seen == [before]
    assert len(fewer.splitlines()) > 300
    assert fewer == default
