"""The write-set caches kept per table id stay bounded by the tables, not the log.

MySQL gives a reopened table (after ALTER, FLUSH TABLES or an eviction from the table
cache) a new table id, so a long log maps each table under many ids.  The row-shape
caches (the core's ``KeyDispatch.shapes`` and the general extractor's
``WritesetExtractor._shapes``, the pure-Python engine's) are pruned of the shapes of
TableDefs their table no longer has (``repltool.writeset.fused.SHAPES_PRUNE_MIN`` /
``SHAPES_MAX``, ``repltool.writeset.extract.SHAPES_PRUNE_MIN`` / ``SHAPES``), and the key
extractors and plans are kept per table (its latest TableDef).  They are caches: with
the bounds forced small, so that shapes are dropped and built again many times,
``dump --writesets`` and ``certify --format jsonl`` print exactly what they print
with the caches never pruned, on both engines (bench/results/rssws.md has the memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from repltool.binlog import engine
from repltool.synth import SynthOptions, WorkloadConfig, generate
from repltool.writeset import extract, fused


@pytest.fixture(scope="module")
def reopened(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    """A synth 8.0 log whose tables get a new table id often (DDL reopens them)."""
    out = tmp_path_factory.mktemp("reopened")
    result = generate(SynthOptions(out=out, seed=5, ground_truth=False, transactions=1500,
                                   workload=WorkloadConfig(ddl_rate=0.03)))
    return list(result.files), result.schema


def _table_ids(files: list[Path]) -> tuple[set[int], set[tuple[str, str]]]:
    from repltool.binlog import ReadOptions, read_events
    from repltool.binlog.events import TableMapBody
    ids, tables = set(), set()
    for ev in read_events([str(f) for f in files], ReadOptions()):
        if isinstance(ev.body, TableMapBody):
            ids.add(ev.body.table_id)
            tables.add((ev.body.db, ev.body.table))
    return ids, tables


def _run(cli: Any, monkeypatch: pytest.MonkeyPatch, prune_min: int, shapes_max: int,
         args: list[str]) -> tuple[str, list[Any], list[Any], int]:
    """The command's stdout, the _FastRun instances and the general extractors that
    pruned, and how many shapes the prunes dropped."""
    monkeypatch.setattr(fused, "SHAPES_PRUNE_MIN", prune_min)
    monkeypatch.setattr(fused, "SHAPES_MAX", shapes_max)
    monkeypatch.setattr(extract, "SHAPES_PRUNE_MIN", prune_min)
    monkeypatch.setattr(extract, "SHAPES", shapes_max)
    runs: list[Any] = []
    extractors: list[Any] = []
    dropped = [0]
    live = fused._FastRun.live
    live_shapes = extract.WritesetExtractor._live_shapes

    def counted(self: Any, td: Any) -> bool:
        if self not in runs:
            runs.append(self)
        keep = live(self, td)
        dropped[0] += not keep
        return keep

    def pruned(self: Any, shapes: dict[Any, Any]) -> dict[Any, Any]:
        if self not in extractors:
            extractors.append(self)
        kept = live_shapes(self, shapes)
        dropped[0] += len(shapes) - len(kept)
        return kept

    monkeypatch.setattr(fused._FastRun, "live", counted)
    monkeypatch.setattr(extract.WritesetExtractor, "_live_shapes", pruned)
    out, _ = cli(*args)
    monkeypatch.setattr(fused._FastRun, "live", live)
    monkeypatch.setattr(extract.WritesetExtractor, "_live_shapes", live_shapes)
    return out, runs, extractors, dropped[0]


@pytest.mark.parametrize("engine_name", ["compiled", "python"])
@pytest.mark.parametrize("command", ["dump", "certify"])
def test_pruned_caches_print_the_same(cli, reopened, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                      engine_name: str, command: str) -> None:
    files, schema = reopened
    ids, tables = _table_ids(files)
    assert len(ids) >= 10 * len(tables), "the log must reopen its tables many times"
    monkeypatch.setenv(engine.ENV, engine_name)
    if engine_name == "compiled":
        assert engine.compiled_core() is not None, "the compiled core is not built"
    args = (["dump", "--writesets", "--format", "jsonl"] if command == "dump"
            else ["certify", "--format", "jsonl"]) + ["--schema", str(schema), *map(str, files)]
    never, runs, extractors, _ = _run(cli, monkeypatch, 10 ** 9, 10 ** 9, args)
    assert runs == [] and extractors == []              # the caches were never pruned
    assert never.count("\n") >= 1500
    for prune_min, shapes_max in ((2, 4096), (2, 6)):   # prunes that keep some / none
        out, runs, extractors, dropped = _run(cli, monkeypatch, prune_min, shapes_max, args)
        assert out == never
        # shapes were dropped and built again: by the core's dispatch (compiled engine)
        # or the general extractor (pure-Python engine: no _FastRun)
        assert (runs if engine_name == "compiled" else extractors) and dropped > 0
        for ex in extractors:
            assert len(ex._fast_keys) <= len(tables)
            assert len(ex._plans) <= len(tables)
            assert len(getattr(ex, "_texts", ())) <= len(tables)
            assert ex.shaped > 0                        # the cached-header route keyed rows
            assert len(ex._shapes) <= max(2 * len(tables) * 4, prune_min) * 2
        for run in runs:
            # one key extractor (and plan) per table, not per table id
            assert len(run.extractor._fast_keys) <= len(tables)
            assert len(run.extractor._plans) <= len(tables)
            assert len(run._text_keys) <= len(tables)
            assert run.fast_events + run.dispatch.fast_events > 0   # the core keyed rows
            assert run.dispatch.shape_count <= max(2 * len(tables) * 4, prune_min) * 2

