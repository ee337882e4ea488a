"""``--spark`` reads a large binlog as parts cut at transaction boundaries (issue 15).

With a small forced part size (``--spark-split-size`` / ``spark.repltool.splitSize``)
``stats`` and ``schedule`` on generated logs and on the MySQL corpus give exactly
the single-process output; the run says which files were joined from parts (the
split path ran).  A split point that is not an event boundary makes the file be
read again whole, with the same output.  ``certify --mode writeset|commit-order``
executors read their files with the fused reader of the single-process ``certify``.
"""

from __future__ import annotations

import shutil
import warnings
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


def _forge_wrong_split(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``path``'s second part planned to begin inside a GTID event (the other files as
    :func:`split_spans` cuts them)."""
    good = split_spans(str(path), SMALL)
    wrong = good[1].start + 7                     # inside a GTID event

    def forged(name: str, size: int) -> list[Span]:
        if name == str(path):
            return [Span(4, wrong), Span(wrong, None, good[1].clock)]
        return split_spans(name, size)
    monkeypatch.setattr(split_module, "split_spans", forged)


def test_a_wrong_split_point_reads_the_file_whole(spark, small_parts, big: list[Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _forge_wrong_split(big[1], monkeypatch)
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


# ---- certify: a large binlog's parts extracted in parallel, certified in order per file ----

def _certify_split(cli, spark, args: list[object], size: int | str = SMALL,
                   expect: int = 0) -> tuple[str, str, tuple[int, int, int]]:
    """``certify --spark --spark-split-size SIZE ARGS``: stdout, stderr and what
    :func:`repltool.distributed.pairs.split_counts` counted during the run."""
    from repltool.distributed.pairs import split_counts
    before = split_counts()
    try:
        out, err = cli("certify", "--spark", "--spark-split-size", size, *args, expect=expect)
    finally:
        spark.conf.unset(SPLIT_CONF)
    after = split_counts()
    return out, _no_hint(err), tuple(a - b for a, b in zip(after, before))  # type: ignore[return-value]


def _no_hint(err: str) -> str:
    """stderr without --spark's break-even hint (the single process prints none)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith("repltool: hint: --spark on"))


@pytest.mark.parametrize("mode", ["writeset", "commit-order"])
def test_certify_from_parts_equal_single_process(spark, cli, big: list[Path], mode: str
                                                 ) -> None:
    args = ["--mode", mode, *big]
    single, single_err = cli("certify", *args)
    out, err, (files, parts, reread) = _certify_split(cli, spark, args)
    assert out == single and err == single_err
    assert files == len(big) and reread == 0
    assert parts == sum(len(split_spans(str(p), SMALL)) for p in big) >= 30
    whole, _ = cli("certify", "--spark", *args)          # unsplit --spark: the same
    assert whole == single


def test_certify_from_parts_with_schema_and_small_history(spark, cli, big: list[Path],
                                                          tmp_path: Path) -> None:
    """Write sets past a small history size (limit reached, history cleared across parts)
    and the schema's keys: the same report as one process."""
    schema = tmp_path / "schema.sql"
    schema.write_text("".join(f"CREATE TABLE db.t{i} (id INT PRIMARY KEY, v VARCHAR(32), "
                              f"UNIQUE KEY uv (v));\n" for i in range(4)))
    args = ["--mode", "writeset", "--history-size", "3", "--schema", schema, *big]
    single, single_err = cli("certify", *args)
    out, err, (files, _, reread) = _certify_split(cli, spark, args)
    assert out == single and err == single_err
    assert files == len(big) and reread == 0


@pytest.mark.parametrize("mode", ["writeset", "commit-order"])
def test_certify_from_parts_equal_on_corpus(spark, capsys: pytest.CaptureFixture[str],
                                            mode: str) -> None:
    """Every MySQL corpus file, split at 2,000 bytes: the same output and exit status as
    one process, and the same stderr as the unsplit ``--spark`` run, file by file (a file
    that cannot be certified fails the same way)."""
    from repltool.cli import run
    from repltool.distributed.pairs import split_counts

    def certify(*args: object) -> tuple[str, str, int]:
        # (entering catch_warnings resets the registries of warnings already shown, so
        # the driver's replayed warnings show in every run of this one process)
        with warnings.catch_warnings():
            code = run([str(a) for a in args])
        out, err = capsys.readouterr()
        return out, err, code
    before = split_counts()
    compared = 0
    for f in mysql_corpus_files():
        args = ["--mode", mode, f]
        single = certify("certify", *args)
        whole = certify("certify", "--spark", *args)
        try:
            split = certify("certify", "--spark", "--spark-split-size", "2000", *args)
        finally:
            spark.conf.unset(SPLIT_CONF)
        assert (split[0], split[2]) == (single[0], single[2]), f
        assert split == whole, f    # (stderr: --spark's own, e.g. the break-even hint)
        compared += 1
    files, parts, _ = (a - b for a, b in zip(split_counts(), before))
    assert compared >= 10 and files >= 5 and parts > 2 * files


def test_certify_a_part_that_fails_reads_the_file_whole(spark, cli, big: list[Path],
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    _forge_wrong_split(big[1], monkeypatch)
    single, _ = cli("certify", "--mode", "writeset", *big)
    out, _, (files, _, reread) = _certify_split(cli, spark, ["--mode", "writeset", *big])
    assert out == single
    assert files == 2 and reread == 1


def test_certify_jsonl_reads_files_whole(spark, cli, big: list[Path]) -> None:
    """``--format jsonl`` (a line per transaction, naming keys) keeps one task per file:
    the same lines as one process, no file split."""
    args = ["--mode", "writeset", "--format", "jsonl", *big]
    single, _ = cli("certify", *args)
    out, _, counts = _certify_split(cli, spark, args)
    assert out == single and len(out.splitlines()) >= 6_000
    assert counts == (0, 0, 0)


@pytest.mark.parametrize("logs", ["mariadb", "relay"])
def test_certify_logs_that_cannot_split_read_whole(spark, cli, split_relay: list[Path],
                                                   logs: str) -> None:
    """MariaDB logs (no logical clock to cut at) and relay logs keep one task per file
    (or are certified on the driver): the same report as one process, no file split."""
    from test_spark import mariadb_set
    files = mariadb_set("small") if logs == "mariadb" else split_relay
    size = 1000
    assert max(f.stat().st_size for f in files) > 2 * size      # large enough to split
    args = ["--mode", "writeset", *files]
    single, _ = cli("certify", *args)
    out, _, counts = _certify_split(cli, spark, args, size=size)
    assert out == single and "transactions" in out.lower()
    assert counts == (0, 0, 0)


# ---- check: a large binlog's spans checked in parallel, joined per file ----

def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[str, str, int]:
    """repltool in-process: stdout, stderr (without --spark's hint) and exit status."""
    from repltool.cli import run
    # (entering catch_warnings resets the registries of warnings already shown, so
    # the driver's replayed warnings show in every run of this one process)
    with warnings.catch_warnings():
        code = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return out, _no_hint(err), code


def _check_split(spark, capsys: pytest.CaptureFixture[str], args: list[object],
                 size: int | str = SMALL) -> tuple[tuple[str, str, int], tuple[int, int, int]]:
    """``check --spark --spark-split-size SIZE ARGS``: (stdout, stderr, exit) and what
    :func:`repltool.distributed.checkjob.split_counts` counted during the run."""
    from repltool.distributed.checkjob import split_counts
    before = split_counts()
    try:
        got = _run(capsys, "check", "--spark", "--spark-split-size", size, *args)
    finally:
        spark.conf.unset(SPLIT_CONF)
    counts = tuple(a - b for a, b in zip(split_counts(), before))
    return got, counts  # type: ignore[return-value]


@pytest.fixture(scope="module")
def conflicting(big: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Write sets for ``big`` (``--writesets``) that make the rules across transactions
    fire inside and across spans: a key every transaction writes (W001 wherever a commit
    window holds two transactions, also the first ones of a span), every 50th transaction with a table without
    a usable key (W002), every 97th without a write set (W003)."""
    import json
    from repltool.binlog import read_transactions
    rows = []
    for path in big:
        for n, trx in enumerate(read_transactions(path)):
            if not trx.gtid or n % 97 == 3:
                continue
            row: dict[str, object] = {"gtid": trx.gtid, "keys": [0, 1000 + n % 11]}
            if n % 50 == 7:
                row["missing_key_tables"] = [f"db.log{n % 3}"]
            rows.append(row)
    out = tmp_path_factory.mktemp("ws") / "writesets.json"
    out.write_text(json.dumps({"transactions": rows}))
    return out


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "github"])
def test_check_from_spans_equal_single_process(spark, capsys: pytest.CaptureFixture[str],
                                               big: list[Path], conflicting: Path,
                                               tmp_path: Path, fmt: str) -> None:
    """Several spans per file, findings inside and across spans (W001, W002, W003, the
    per-file C008 and the totals T001/T002 from the joined clock spans): the same stdout,
    stderr and exit status as one process (``junit``: the same ``--junit`` file)."""
    junit = tmp_path / "check.xml"
    shown = ["--junit", junit, "--force"] if fmt == "junit" else ["--format", fmt]
    args = [*shown, "--writesets", conflicting, "--min-parallelism", "50", *big]
    single = _run(capsys, "check", *args)
    single_junit = junit.read_text() if fmt == "junit" else None
    got, (files, parts, reread) = _check_split(spark, capsys, args)
    assert got == single
    if fmt == "junit":
        assert junit.read_text() == single_junit and "W001" in single_junit
    assert files == len(big) and reread == 0
    assert parts == sum(len(split_spans(str(p), SMALL)) for p in big) >= 30
    assert single[2] == 1
    if fmt == "json":
        import json
        rules = {f["rule"] for f in json.loads(single[0])["findings"]}
        assert {"W001", "W002", "W003", "C008", "T001"} <= rules
    assert _run(capsys, "check", "--spark", *args) == single        # unsplit --spark


def test_check_from_spans_with_row_write_sets(spark, capsys: pytest.CaptureFixture[str],
                                              big: list[Path]) -> None:
    """The log's own row events as write sets (the default provider), every rule."""
    args = ["--format", "json", *big]
    single = _run(capsys, "check", *args)
    got, (files, _, reread) = _check_split(spark, capsys, args)
    assert got == single and (files, reread) == (len(big), 0)


def test_check_from_spans_equal_on_corpus(spark, capsys: pytest.CaptureFixture[str]) -> None:
    """Every MySQL corpus file, split at 2,000 bytes: the same stdout, stderr and exit
    status as one process, file by file; at least 5 files really checked in spans."""
    from repltool.distributed.checkjob import split_counts
    before = split_counts()
    compared = 0
    for f in mysql_corpus_files():
        single = _run(capsys, "check", "--format", "json", f)
        got, _ = _check_split(spark, capsys, ["--format", "json", f], size=2000)
        assert got == single, f
        compared += 1
    files, parts, reread = (a - b for a, b in zip(split_counts(), before))
    assert compared >= 10 and files >= 5 and parts > 2 * files


def test_check_a_wrong_split_point_checks_the_file_whole(spark, capsys, big: list[Path],
                                                         conflicting: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    _forge_wrong_split(big[1], monkeypatch)
    args = ["--format", "json", "--writesets", conflicting, *big]
    single = _run(capsys, "check", *args)
    got, (files, _, reread) = _check_split(spark, capsys, args)
    assert got == single
    assert files == 2 and reread == 1


@pytest.mark.parametrize("logs", ["mariadb", "relay"])
def test_check_logs_that_cannot_split_read_whole(spark, capsys, split_relay: list[Path],
                                                 logs: str) -> None:
    """MariaDB logs (no logical clock to cut at) and relay logs keep one task per file:
    the same output as one process, no file split."""
    from test_spark import mariadb_set
    files = mariadb_set("small") if logs == "mariadb" else split_relay
    assert max(f.stat().st_size for f in files) > 2 * 1000      # large enough to split
    args = ["--format", "json", *files]
    single = _run(capsys, "check", *args)
    got, counts = _check_split(spark, capsys, args, size=1000)
    assert got == single
    assert counts == (0, 0, 0)
# ---- certify --output: the per-file task of the split writes the re-tagged copy ----

def _same_copies(one: Path, two: Path, files: list[Path]) -> int:
    """Assert ``one`` and ``two`` hold the same copies of ``files``; how many differ from
    their input (re-tagged)."""
    names = sorted(p.name for p in files)
    assert sorted(p.name for p in one.iterdir()) == names
    assert sorted(p.name for p in two.iterdir()) == names
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    return sum((one / f.name).read_bytes() != f.read_bytes() for f in files)


def _single_output(cli, args: list[object], tmp_path: Path) -> tuple[str, str]:
    """``certify ARGS --output tmp_path/out`` in one process, the copies then moved to
    ``tmp_path/one`` (the report names the output directory: the split run writes to the
    same path)."""
    out, err = cli("certify", *args, "--output", tmp_path / "out")
    (tmp_path / "out").rename(tmp_path / "one")
    return out, err


@pytest.mark.parametrize("mode", ["writeset", "commit-order"])
def test_certify_output_from_parts_byte_identical(spark, cli, big: list[Path], tmp_path: Path,
                                                  mode: str) -> None:
    """Each file certified from its parts writes its copy itself: byte for byte the single
    process's copies, the same stdout and stderr, every file joined from its parts."""
    args = ["--mode", mode, "--pk-only", "--timestamp-encoding", "mysql"]
    single, single_err = _single_output(cli, [*args, *big], tmp_path)
    out, err, (files, parts, reread) = _certify_split(
        cli, spark, [*args, "--output", tmp_path / "out", *big])
    assert out == single and err == single_err
    assert files == len(big) and reread == 0
    assert parts == sum(len(split_spans(str(p), SMALL)) for p in big) >= 30
    changed = _same_copies(tmp_path / "one", tmp_path / "out", big)
    assert changed == len(big) or mode == "commit-order"   # (commit-order keeps the clocks)


def test_certify_output_from_parts_with_schema_and_delta_encoding(spark, cli, big: list[Path],
                                                                  tmp_path: Path) -> None:
    """The schema's unique keys, a small history and the delta16 encoding (events change
    size, later log_pos values move): the same copies from parts."""
    schema = tmp_path / "schema.sql"
    schema.write_text("".join(f"CREATE TABLE db.t{i} (id INT PRIMARY KEY, v VARCHAR(32), "
                              f"UNIQUE KEY uv (v));\n" for i in range(4)))
    args = ["--mode", "writeset", "--history-size", "3", "--schema", schema,
            "--timestamp-encoding", "delta16"]
    single, single_err = _single_output(cli, [*args, *big], tmp_path)
    out, err, (files, _, reread) = _certify_split(
        cli, spark, [*args, "--output", tmp_path / "out", *big])
    assert out == single and err == single_err
    assert files == len(big) and reread == 0
    assert _same_copies(tmp_path / "one", tmp_path / "out", big) == len(big)


def test_certify_output_a_part_that_fails_reads_the_file_whole(spark, cli, big: list[Path],
                                                               tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    _forge_wrong_split(big[1], monkeypatch)
    args = ["--mode", "writeset", "--pk-only"]
    single, _ = _single_output(cli, [*args, *big], tmp_path)
    out, _, (files, _, reread) = _certify_split(
        cli, spark, [*args, "--output", tmp_path / "out", *big])
    assert out == single
    assert files == 2 and reread == 1
    assert _same_copies(tmp_path / "one", tmp_path / "out", big) == len(big)


def test_certify_output_from_parts_on_corpus(spark, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    """Every MySQL corpus file, split at 2,000 bytes, with --output: the same stdout, exit
    status and copies as one process (a file that cannot be re-tagged, e.g. MySQL 5.6's
    without logical clocks, fails the same way and leaves no copy)."""
    from repltool.cli import run
    from repltool.distributed.pairs import split_counts

    out_dir = tmp_path / "out"

    def certify(*args: object) -> tuple[str, int]:
        with warnings.catch_warnings():
            code = run([str(a) for a in ("certify", *args, "--output", out_dir)])
        out, _ = capsys.readouterr()
        return out, code
    before = split_counts()
    compared = failed = 0
    for k, f in enumerate(mysql_corpus_files()):
        one = tmp_path / f"{k}"
        args = ["--mode", "writeset", "--pk-only", f]
        single = certify(*args)
        if out_dir.exists():
            out_dir.rename(one)
        try:
            split = certify("--spark", "--spark-split-size", "2000", *args)
        finally:
            spark.conf.unset(SPLIT_CONF)
        assert split == single, f
        if single[1] == 0:
            _same_copies(one, out_dir, [f])
            shutil.rmtree(out_dir)
        else:
            assert not out_dir.exists() or not any(out_dir.iterdir()), f
            failed += 1
        compared += 1
    files, parts, _ = (a - b for a, b in zip(split_counts(), before))
    assert compared >= 10 and files >= 5 and parts > 2 * files
    assert failed >= 1                  # (MySQL 5.6 logs: no logical clock to re-tag)


def test_certify_output_whole_file_streams(cli, rotated: list[Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A file certified whole for the text report with --output (``certify_unit`` run
    in-process here) streams into the report's columns and writes its copy from them,
    never building the certified objects: the single process's copy."""
    from repltool.certify import CertifyOptions, Mode
    from repltool.distributed import pairs as pairs_module
    from repltool.distributed.pairs import CertifySpec, PairsSpec, certify_unit
    from repltool.distributed.units import Unit
    f = rotated[0]
    cli("certify", "--mode", "writeset", "--pk-only", "--output", tmp_path / "one", f)
    staging = tmp_path / "staging"
    staging.mkdir()
    options = CertifyOptions()
    spec = CertifySpec(PairsSpec(None, options.history_size), Mode.WRITESET, options,
                       (str(staging), "mysql"), report_only=True)

    def refused(*args: object) -> None:
        raise AssertionError("the certified objects were built")
    monkeypatch.setattr(pairs_module, "_certified_unit", refused)
    r = certify_unit(Task("certify", extra=spec, run=certify_unit), Unit(0, (str(f),)))
    assert r.failure is None and r.written is not None and r.written[0] == "written"
    assert r.payload[0] == [] and sum(p.n for p in r.payload[1]) > 5
    copy = (staging / f.name).read_bytes()
    assert copy == (tmp_path / "one" / f.name).read_bytes() != f.read_bytes()
