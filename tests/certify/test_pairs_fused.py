"""Executors read the pairs of ``certify --spark`` with the fused reader (issue 15), without Spark.

For the modes certified on the driver (group-replication, writeset-session) an
executor makes :class:`~repltool.distributed.wspack.PackedPairs` of its unit
(:func:`repltool.distributed.pairs.pairs_unit`).  When the statements are not
needed (``certify``; ``explain`` shows DDL statements) it now reads them as the
single-process ``certify`` does, with the fused reader (it used the general
reader: 3.5x the single process's CPU, bench/results/spark15.md).  Here, per
unit made in-process and sent through pickle, the fused units must certify to
the same JSON lines (one object per transaction) and the same Group Replication
report from arrays as the general reader's units: on every MySQL corpus file
(relay logs fall back to the general reader) and on a rotated synth set with its
schema.  The fused path must have run on the binlogs.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from repltool.certify.report import ReportBuilder, result_row
from repltool.certify.stitched import PairsRun
from repltool.distributed import grpacked, pairs
from repltool.distributed.pairs import PairsSpec, pairs_unit
from repltool.distributed.units import Task, Unit
from repltool.distributed.wspack import unpack_pairs


def _is_binlog(p: Path) -> bool:
    return p.suffix not in (".json", ".md", ".sql", ".index", ".txt") and p.is_file()


def _units(names: list[str], schema: list[str], statements: bool) -> list[Any]:
    run = PairsRun(names, "group-replication", schema_paths=schema)
    spec = PairsSpec(run.schema, run.options.history_size, statements=statements)
    return [pickle.loads(pickle.dumps(pairs_unit(Task("pairs", extra=spec), Unit(i, (n,)))))
            for i, n in enumerate(names)]


def _rows(names: list[str], schema: list[str], units: list[Any], mode: str) -> list[dict]:
    got = [pair for u in units for pair in unpack_pairs(u.payload)]
    run = PairsRun(names, mode, schema_paths=schema)
    run.attach(iter(got), got[0][0] if got else None)
    rows: list[dict] = []
    ReportBuilder(run, [lambda c: rows.append(result_row(c))]).build()
    return rows


def _packed_report(names: list[str], schema: list[str], units: list[Any]) -> Any:
    run = PairsRun(names, "group-replication", schema_paths=schema)
    run.attach(iter(()), units[0].first)
    certifier = grpacked.PackedGroupCertifier(run.options, run.schema, lambda: None)
    run.attach_packed_parts(lambda: certifier.parts(u.payload for u in units))
    return ReportBuilder(run).build()


def _same(names: list[str], schema: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """Compare both readers' units; returns how many units the fused reader made."""
    general = _units(names, schema, True)
    made = []
    real = pairs._fused_pairs_unit

    def counting(*args: Any) -> Any:
        r = real(*args)
        made.append(r is not None and r.failure is None
                    and not any(t.relay_log for t, _ in r.payload))
        return r
    with monkeypatch.context() as m:
        m.setattr(pairs, "_fused_pairs_unit", counting)
        fused = _units(names, schema, False)
    assert [u.failure for u in fused] == [u.failure for u in general]
    if any(u.failure for u in general):
        return 0
    for mode in ("group-replication", "writeset-session"):
        assert _rows(names, schema, fused, mode) == _rows(names, schema, general, mode)
    for f, g, fast in zip(fused, general, made):
        if fast:        # each binlog's own FDE: what decides its transactions' clock segment
            firsts: dict[str, Any] = {}
            for h in g.headers:
                if h.type_code == 15:
                    firsts.setdefault(h.pos.file, h)
            assert f.headers == list(firsts.values())
    assert _packed_report(names, schema, fused) == _packed_report(names, schema, general)
    return sum(made)


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
def test_fused_pairs_equal_general_pairs_on_every_mysql_corpus_file(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same([str(path)], [], monkeypatch)


def test_fused_pairs_equal_general_pairs_on_synth_units(tmp_path: Path, capsys,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from repltool.cli import run
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "1500000", "--seed", "23",
                "--max-binlog-size", "400000", "--no-ground-truth"]) == 0
    capsys.readouterr()
    files = [str(f) for f in sorted(out.glob("binlog.0*"))]
    assert len(files) > 1
    assert _same(files, [str(out / "schema.sql")], monkeypatch) == len(files)
