"""``--spark`` reads a large binlog as parts cut at transaction boundaries (issue 15).

With a small forced part size (``--spark-split-size`` / ``spark.repltool.splitSize``)
``stats`` and ``schedule`` on generated logs and on the MySQL corpus give exactly
the single-process output; the run says which files were joined from parts (the
split path ran).  A split point that is not an event boundary makes the file be
read again whole, with the same output.  ``certify --mode writeset|commit-order``
executors read their files with the fused reader of the single-process ``certify``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.binlog import split as split_module
from repltool.binlog.split import Span, split_spans
from repltool.distributed import SPLIT_CONF, run_distributed
from repltool.distributed.units import Task
from test_spark import mysql_corpus_files, spark_stats_json, stats_json
from logsets import write_rotated_binlogs

pytestmark = pytest.mark.spark

SMALL = 20_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """3 MySQL 8.0 binlogs of ~400 KB (commit windows of 1-4 transactions, a DDL,
    a compressed transaction in the first)."""
    return write_rotated_binlogs(tmp_path_factory.mktemp("big"), files=3, per_file=2_000)


@pytest.fixture
def small_parts(spark):
    spark.conf.set(SPLIT_CONF, str(SMALL))
    yield SMALL
    spark.conf.unset(SPLIT_CONF)


def test_stats_from_parts_equal_single_process(spark, small_parts, big: list[Path]) -> None:
    names = [str(p) for p in big]
    run = run_distributed(spark, names, Task("stats"))
    assert run.joined == {i: len(split_spans(n, SMALL)) for i, n in enumerate(names)}
    assert all(n >= 10 for n in run.joined.values()) and run.reread == []
    assert spark_stats_json(spark, big) == stats_json(big)


def test_stats_from_parts_equal_on_corpus(spark) -> None:
    files = mysql_corpus_files()
    names = [str(p) for p in files]
    spark.conf.set(SPLIT_CONF, "2000")
    try:
        run = run_distributed(spark, names, Task("stats"))
        assert len(run.joined) >= 5
        assert spark_stats_json(spark, files) == stats_json(files)
    finally:
        spark.conf.unset(SPLIT_CONF)


def test_no_split_below_twice_the_size(spark, big: list[Path]) -> None:
    spark.conf.set(SPLIT_CONF, "1G")
    try:
        run = run_distributed(spark, [str(p) for p in big], Task("stats"))
    finally:
        spark.conf.unset(SPLIT_CONF)
    assert run.joined == {} and len(run.results) == len(big)


def test_a_wrong_split_point_reads_the_file_whole(spark, small_parts, big: list[Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    good = split_spans(str(big[1]), SMALL)
    wrong = good[1].start + 7                     # inside a GTID event

    def forged(path: str, size: int) -> list[Span]:
        if path == str(big[1]):
            return [Span(4, wrong), Span(wrong, None, good[1].clock)]
        return split_spans(path, size)
    monkeypatch.setattr(split_module, "split_spans", forged)
    names = [str(p) for p in big]
    run = run_distributed(spark, names, Task("stats"))
    assert run.reread == [1] and set(run.joined) == {0, 2}
    assert spark_stats_json(spark, big) == stats_json(big)


@pytest.mark.parametrize("cost", ["constant", "linear"])
def test_schedule_from_parts_equal_single_process(spark, cli, big: list[Path],
                                                  cost: str) -> None:
    args = ["schedule", "--format", "json", "--workers", "1,4", "--cost", cost, *big]
    single, _ = cli(*args)
    try:
        out, _ = cli(*args[:1], "--spark", "--spark-split-size", str(SMALL), *args[1:])
    finally:
        spark.conf.unset(SPLIT_CONF)
    assert out == single
    assert '"transactions"' in out


def test_schedule_parts_run(spark, small_parts, big: list[Path]) -> None:
    from repltool.schedule.cost import ConstantCost
    names = [str(p) for p in big]
    run = run_distributed(spark, names, Task("sims", extra=ConstantCost()))
    assert len(run.joined) == 3 and run.reread == []
    sims = [r.payload[0] for r in run.results]
    assert [sum(s.new_source_file) for s in sims] == [1, 1, 1]


def test_split_size_option_is_checked(cli, big: list[Path]) -> None:
    _, err = cli("stats", "--spark", "--spark-split-size", "lots", big[0], expect=2)
    assert "split size 'lots'" in err
    _, err = cli("stats", "--spark-split-size", "64M", big[0], expect=2)
    assert "need --spark" in err


# ---- certify: executors read as the single-process certify does ----

@pytest.mark.parametrize("mode", ["writeset", "commit-order"])
def test_certify_executors_use_the_fused_reader(rotated: list[Path], mode: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``certify_unit`` (run in-process here) reads with the fused reader, never the
    general one, and certifies what the general reader's pairs certify."""
    from repltool.certify import CertifyOptions, Mode
    from repltool.distributed import pairs as pairs_module
    from repltool.distributed.columns import unpack
    from repltool.distributed.pairs import CertifySpec, PairsSpec, certify_unit
    from repltool.distributed.units import Unit
    options = CertifyOptions()
    spec = CertifySpec(PairsSpec(None, options.history_size), Mode(mode), options)
    task = Task("certify", extra=spec, run=certify_unit)
    unit = Unit(0, (str(rotated[0]),))

    def results(r) -> list:
        assert r.failure is None
        return unpack(r.payload[0][1])
    general = pairs_module._general_pairs_unit

    def refused(*args: object) -> None:
        raise AssertionError("the general reader ran")
    monkeypatch.setattr(pairs_module, "_general_pairs_unit", refused)
    fused = certify_unit(task, unit)
    monkeypatch.setattr(pairs_module, "_general_pairs_unit", general)
    monkeypatch.setattr(pairs_module, "_fused_pairs_unit", lambda *args: None)
    assert results(fused) == results(certify_unit(task, unit))
    assert fused.count == len(results(fused)) > 5
