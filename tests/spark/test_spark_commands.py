"""``certify``, ``explain`` and ``check`` with ``--spark`` equal the single-process output (issue 6).

Every comparison is of the complete output, byte for byte: certify's JSON lines
(and its warnings), explain's JSON, check's JSON findings.  The sets: the
corpus's MariaDB sets (one file, a rotated set, a replica's relay logs), every
MySQL corpus file as one check input (damaged files included), the generated
set of 60 rotated binlogs and the relay logs whose transactions continue into
the next relay file (tests/spark/logsets.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.binlog import read_transactions
from repltool.cli import run
from repltool.writeset import READ_OPTIONS, iter_writesets
from tests.conftest import require_corpus
from test_spark import CORPUS_SETS, df_rows

pytestmark = pytest.mark.spark

MODES = ["commit-order", "writeset", "writeset-session", "group-replication"]


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("repltool: warning:")]


def same_output(cli, *args: object) -> tuple[str, str]:
    """Run the command without and with --spark; assert stdout and warnings are identical."""
    single, serr = cli(*args)
    out, err = cli(*args[:1], "--spark", *args[1:])
    assert out == single
    assert warnings_of(err) == warnings_of(serr)
    return out, err


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


# ---- certify ----

@pytest.mark.parametrize("name", ["mariadb-small", "mariadb-rotation", "mariadb-relay"])
def test_certify_jsonl_equal_on_corpus_sets(spark, cli, name: str) -> None:
    """Default mode (group-replication for the relay logs), MariaDB's serial baseline."""
    paths = CORPUS_SETS[name]()
    serial = ["--baseline", "serial"] if name != "mariadb-relay" else []
    out, _ = same_output(cli, "certify", "--format", "jsonl", *serial, *paths)
    assert len(lines(out)) > 100


def test_certify_with_schema_equal_on_corpus(spark, cli) -> None:
    """UNIQUE and FOREIGN keys from a schema (shipped to the executors) give the same keys."""
    root = require_corpus()
    small = root / "mariadb" / "small"
    out, _ = same_output(cli, "certify", "--format", "jsonl", "--mode", "writeset-session",
                         "--baseline", "serial", "--schema", small / "schema.sql",
                         small / "mysql-bin.000001")
    assert any(r["depends_on"]["reason"] == "key" for r in lines(out))


@pytest.mark.parametrize("mode", MODES)
def test_certify_jsonl_equal_on_generated_set(spark, cli, rotated: list[Path],
                                              mode: str) -> None:
    assert len(rotated) >= 50
    out, _ = same_output(cli, "certify", "--format", "jsonl", "--mode", mode, *rotated)
    rows = lines(out)
    assert len(rows) == sum(not t.truncated for t in read_transactions(rotated))
    assert len({r["segment"] for r in rows}) == len(rotated)


def test_certify_group_replication_options_equal(spark, cli, rotated: list[Path]) -> None:
    """GR certification info, GC by count and stable set, sessions: all across files."""
    first = next(read_transactions([rotated[0]])).gtid
    stable = f"{first.rsplit(':', 1)[0]}:1-200"
    same_output(cli, "certify", "--format", "jsonl", "--mode", "group-replication",
                "--gc-every", "37", "--gc-stable-set", stable, "--session-order",
                "--members", "3", "--member-lag", "2", *rotated)



def test_certify_group_replication_report_from_arrays(spark, cli, rotated: list[Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The text report in group-replication mode: the driver certifies the
    executors' packed arrays (repltool.distributed.grpacked), no object per transaction;
    the report equals the single process's, with --gc-every and --session-order too."""
    from repltool.distributed import grpacked
    certified: list[int] = []
    real = grpacked.PackedGroupCertifier.part

    def spy(self, packed):
        got = real(self, packed)
        certified.append(got.n)
        return got
    monkeypatch.setattr(grpacked.PackedGroupCertifier, "part", spy)
    total = sum(not t.truncated for t in read_transactions(rotated))
    for extra in ((), ("--gc-every", "37", "--session-order")):
        certified.clear()
        before = grpacked.unit_counts()
        same_output(cli, "certify", "--mode", "group-replication",
                    *extra, *rotated)
        assert sum(certified) == total > 500
        # every unit came without key descriptions, read with the key-hash reader
        assert units_since(before) == (len(rotated),) * 3


def units_since(before: tuple[int, int, int]) -> tuple[int, int, int]:
    """grpacked.unit_counts() since ``before``: (units, without descriptions, hash-read)."""
    from repltool.distributed import grpacked
    return tuple(a - b for a, b in zip(grpacked.unit_counts(), before))  # type: ignore


def test_certify_group_replication_report_hash_units_on_corpus(spark, cli) -> None:
    """The text report on the MySQL 8.0 corpus files (DDL among them) as one set:
    equal to the single process's.  Binlogs travel as hash arrays read by
    the key-hash reader; the JSON lines (which name keys) still get the descriptions."""
    from repltool.distributed import grpacked
    files = [f for f in CORPUS_SETS["mysql"]() if f.parent.name == "mysql80"]
    assert len(files) > 20
    trxs = list(read_transactions(files))
    assert any(t.kind == "ddl" for t in trxs)
    before = grpacked.unit_counts()
    out, _ = same_output(cli, "certify", "--mode", "group-replication", *files)
    assert "parallelism" in out.lower()
    units, bare, hashed = units_since(before)
    # (small files share a unit; a unit whose rows name a table mapped in an earlier
    # file is read again with it by the general reader)
    assert units == bare > 0 and hashed > 0
    before = grpacked.unit_counts()
    # (stdout only: in this one process Python's warning registry does not repeat,
    # in the single run, a warning the text runs above gave; the executors give it)
    args = ("--format", "jsonl", "--mode", "group-replication", *files)
    single, _ = cli("certify", *args)
    out, _ = cli("certify", "--spark", *args)
    assert out == single and units_since(before)[1:] == (0, 0)


def test_certify_group_replication_report_split_relay(spark, cli,
                                                      split_relay: list[Path]) -> None:
    """Relay logs keep the general reader (segments, transactions across files); for
    the text report their units still go without key descriptions."""
    from repltool.distributed import grpacked
    before = grpacked.unit_counts()
    same_output(cli, "certify", "--mode", "group-replication", *split_relay)
    units, bare, hashed = units_since(before)
    assert units == bare > 0 and hashed == 0


def test_certify_split_relay_logs_equal(spark, cli, split_relay: list[Path]) -> None:
    """Relay transactions continuing into the next file: GR by default, and writeset."""
    assert any(t.spans_files for t in read_transactions(split_relay))
    out, _ = same_output(cli, "certify", "--format", "jsonl", *split_relay)
    assert len(lines(out)) > 30
    same_output(cli, "certify", "--format", "jsonl", "--mode", "writeset", *split_relay)


def test_certify_text_report_and_check_equal(spark, cli, rotated: list[Path]) -> None:
    single, serr = cli("certify", "--check", "--mode", "writeset", *rotated, expect=1)
    out, err = cli("certify", "--spark", "--check", "--mode", "writeset", *rotated, expect=1)
    assert out == single
    assert [x for x in err.splitlines() if x.startswith("repltool: ") and "hint" not in x] == \
        [x for x in serr.splitlines() if x.startswith("repltool: ")]
    # the report alone: the executors send only its columns (report_only)
    for mode in ("writeset", "commit-order"):
        single, _ = cli("certify", "--mode", mode, *rotated)
        out, _ = cli("certify", "--spark", "--mode", mode, *rotated)
        assert out == single and "parallelism" in out.lower()


@pytest.mark.parametrize("mode", ["writeset", "commit-order", "group-replication"])
def test_certify_output_is_byte_identical_with_spark(spark, cli, rotated: list[Path],
                                                    tmp_path: Path, mode: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """writeset/commit-order: the executors write the copies into the driver's staging
    directory and the driver commits them; group-replication: the driver writes them.  The
    files, stdout and warnings equal the single-process run's."""
    from repltool.distributed import pairs
    wrote: list[int] = []
    real = pairs._written

    def spy(results, names):
        got = real(results, names)
        wrote.append(sum(type(w).__name__ == "RewriteReport" for w in got))
        return got
    monkeypatch.setattr(pairs, "_written", spy)
    files = rotated[:12]
    args = ["--mode", mode, "--pk-only", "--format", "jsonl", "--timestamp-encoding", "mysql"]
    single, serr = cli("certify", *args, "--output", tmp_path / "one", *files)
    out, err = cli("certify", "--spark", *args, "--output", tmp_path / "two", *files)
    assert out == single and warnings_of(err) == warnings_of(serr)
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert names == sorted(p.name for p in files)
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == names
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    changed = sum((tmp_path / "one" / f.name).read_bytes() != f.read_bytes() for f in files)
    assert changed > 0 or mode == "commit-order"     # commit-order keeps the logged clocks
    assert wrote == ([len(files)] if mode != "group-replication" else [])
    # an existing copy is refused before anything is read, as without --spark
    _, err = cli("certify", "--spark", *args, "--output", tmp_path / "two", *files, expect=2)
    assert [line for line in err.splitlines() if "error" in line] == [err.strip()]


def test_certify_output_staging_unseen_by_executors_is_refused(spark, cli, rotated: list[Path],
                                                               tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Executors that cannot see the output directory: one line, exit 2, nothing left."""
    from repltool import distributed
    real = distributed.spark_pairs

    def elsewhere(*args, output=None, **kw):
        return real(*args, output=("/nonexistent/staging", output[1]), **kw)
    monkeypatch.setattr(distributed, "spark_pairs", elsewhere)
    _, err = cli("certify", "--spark", "--mode", "writeset", "--pk-only", "--output",
                 tmp_path / "out", *rotated[:3],
                 expect=2)
    errors = [line for line in err.splitlines() if not line.startswith("repltool: hint:")]
    assert len(errors) == 1 and "cannot see the output directory" in errors[0]
    assert not (tmp_path / "out").exists()


def test_certify_failing_file_same_error(spark, cli, rotated: list[Path]) -> None:
    root = require_corpus()
    files = [rotated[0], root / "mysql/mysql80/mysql-test__std_data__binlog_truncated_event.000001"]
    single, serr = cli("certify", "--format", "jsonl", *files, expect=4)
    out, err = cli("certify", "--spark", "--format", "jsonl", *files, expect=4)
    assert out == single
    assert serr.strip().splitlines()[-1] == err.strip().splitlines()[-1]


def test_certify_parquet_has_the_writesets(spark, cli, rotated: list[Path],
                                           tmp_path: Path) -> None:
    target = tmp_path / "trx"
    cli("certify", "--spark", "--output-parquet", target, "--format", "jsonl", *rotated)
    rows = df_rows(spark.read.parquet(str(target)))
    trxs = read_transactions([str(p) for p in rotated], READ_OPTIONS, keep_events=True)
    want = [[h - (1 << 64) if h >= 1 << 63 else h for h in ws.hashes]
            for _, ws in iter_writesets(trxs)]
    assert [r[-1] for r in rows] == want
    assert sum(1 for r in rows if r[-1]) > len(rows) // 2


# ---- explain ----

@pytest.mark.parametrize("mode", ["recorded", "writeset", "group-replication"])
def test_explain_json_equal_on_generated_sets(spark, cli, rotated: list[Path],
                                              split_relay: list[Path], mode: str) -> None:
    for paths in (rotated, split_relay):
        out, _ = same_output(cli, "explain", "--format", "json", "--mode", mode, *paths)
        assert json.loads(out)["transactions"] > 30


def test_explain_equal_on_corpus(spark, cli) -> None:
    root = require_corpus()
    small = root / "mariadb" / "small"
    out, _ = same_output(cli, "explain", "--format", "json", "--mode", "writeset", "--baseline",
                         "serial", "--schema", small / "schema.sql", small / "mysql-bin.000001")
    assert json.loads(out)["transactions"] > 1000
    same_output(cli, "explain", "--format", "json", "--mode", "writeset", "--baseline",
                "serial", *CORPUS_SETS["mariadb-rotation"]())
    gtid = lines(cli("certify", "--format", "jsonl", small / "mysql-bin.000001")[0])[700]["gtid"]
    same_output(cli, "explain", "--mode", "writeset", "--baseline", "serial", "--gtid", gtid,
                "--format", "json", small / "mysql-bin.000001")


# ---- check ----

def check_json(cli, *args: object, expect: int) -> dict:
    single, _ = cli("check", "--format", "json", "--no-config", *args, expect=expect)
    out, _ = cli("check", "--spark", "--format", "json", "--no-config", *args, expect=expect)
    assert out == single
    return json.loads(out)


def test_check_equal_on_every_mysql_corpus_file(spark, cli) -> None:
    """All MySQL corpus files as one input: damage, relay logs, GR logs, clocks, W-rules."""
    root = require_corpus()
    files = sorted(p for p in root.glob("mysql/*/*") if p.is_file())
    report = check_json(cli, *files, expect=1)
    assert len(report["findings"]) > 50


@pytest.mark.parametrize("name", sorted(CORPUS_SETS))
def test_check_equal_on_corpus_sets(spark, capsys, name: str) -> None:
    paths = [str(p) for p in CORPUS_SETS[name]()]
    code = run(["check", "--format", "json", "--no-config", *paths])
    single = capsys.readouterr().out
    assert run(["check", "--spark", "--format", "json", "--no-config", *paths]) == code
    out = capsys.readouterr().out
    assert out == single
    assert json.loads(out)["files"]


def test_check_equal_on_generated_sets(spark, cli, rotated: list[Path],
                                       split_relay: list[Path]) -> None:
    report = check_json(cli, "--min-parallelism", "50", *rotated, expect=1)
    assert any(f["rule"] == "T001" for f in report["findings"])
    report = check_json(cli, *split_relay, expect=0)
    assert any(f["rule"] == "R001" for f in report["findings"])


# ---- certify on the executors (issue 15) ----

@pytest.mark.parametrize("mode", ["writeset", "commit-order", None])
def test_writeset_and_commit_order_are_certified_on_executors(spark, rotated: list[Path],
                                                              split_relay: list[Path],
                                                              mode: str) -> None:
    """Binlogs: each file certified where it is read (the trackers restart at rotation);
    the results equal one ordered certification.  Relay logs fall back to the driver.
    No mode (``None``): binlogs default to writeset, certified on the executors too;
    relay logs default to group-replication, on the driver."""
    from repltool.certify.report import CertifyRun, result_row
    from repltool.certify.stitched import PairsRun
    from repltool.distributed import spark_pairs
    names = [str(p) for p in rotated]
    run = PairsRun(names, mode)
    spark_pairs(spark, names, run)
    assert run.certified_elsewhere
    got = [result_row(c) for c in run]
    want = [result_row(c) for c in CertifyRun(names, mode)]
    assert got == want and len(got) > 100
    assert len({r["segment"] for r in got}) == len(names)
    relay = [str(p) for p in split_relay]
    run = PairsRun(relay, mode)
    spark_pairs(spark, relay, run)
    assert not run.certified_elsewhere
    assert [result_row(c) for c in run] == [result_row(c) for c in CertifyRun(relay, mode)]


# ---- check: rules on the executors, cross-file rules merged on the driver (issue 15) ----

def test_check_runs_the_rules_on_executors(spark, cli, rotated: list[Path], tmp_path: Path,
                                          split_relay: list[Path],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Binlogs: the driver merges per-part findings (no event digests), with G001 across
    files (copies of two files) and T001 over all; relay logs take the digest replay."""
    import shutil
    from repltool.check import engine
    merged: list[int] = []
    real = engine.merge_parts

    def counting(paths, *args, **kw):
        merged.append(len(paths))
        return real(paths, *args, **kw)
    monkeypatch.setattr(engine, "merge_parts", counting)
    copies = [shutil.copy(rotated[3], tmp_path / "copy.000001"),
              shutil.copy(rotated[40], tmp_path / "copy.000002")]
    files = rotated[:20] + copies + rotated[20:]
    report = check_json(cli, "--min-parallelism", "50", *files, expect=1)
    rules = {f["rule"] for f in report["findings"]}
    assert {"G001", "T001"} <= rules
    assert merged == [len(files)]
    small = require_corpus() / "mariadb" / "small" / "mysql-bin.000001"
    check_json(cli, "--schema", small.parent / "schema.sql", small, expect=0)
    assert merged == [len(files), 1]
    check_json(cli, *split_relay, expect=0)
    assert merged == [len(files), 1]


# ---- certify's report from columns (issue 15) ----

@pytest.mark.parametrize("mode", ["writeset", "commit-order"])
def test_certify_report_is_built_from_columns(spark, rotated: list[Path], mode: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """With no sink, the driver builds the report from the executors' ReportColumns: no
    certified object is rebuilt, and the report equals the single-process one (MariaDB
    commit ids, missing keys by reason, windows, parallelism before and after)."""
    from repltool.certify.report import CertifyRun, ReportBuilder
    from repltool.certify.stitched import PairsRun
    from repltool.distributed import pairs, spark_pairs
    root = require_corpus() / "mariadb"
    sets = [[str(p) for p in rotated],
            [str(p) for p in sorted((root / "rotation").glob("mysql-bin.0*"))],
            [str(p) for p in sorted((root / "small").glob("mysql-bin.0*"))]]

    def no_objects(payload):
        raise AssertionError("a certified transaction was rebuilt on the driver")
    built: list[int] = []
    real = ReportBuilder._build_from

    def counting(self, parts):
        built.append(1)
        return real(self, parts)
    monkeypatch.setattr(ReportBuilder, "_build_from", counting)
    seen_commit_ids = seen_fallbacks = False
    for i, names in enumerate(sets):
        schema = [str(root / "small" / "schema.sql")] if i == 2 else []
        with monkeypatch.context() as m:
            m.setattr(pairs, "_unpacked_certified", no_objects)
            run = PairsRun(names, mode, schema_paths=schema)
            # the executors send the certified transactions and the columns, or (report_only,
            # the CLI's text report) the columns alone
            spark_pairs(spark, names, run, report_only=i != 1)
            assert run.certified_elsewhere
            got = ReportBuilder(run).build()
        assert len(built) == i + 1
        # the single-process report from one object per transaction (a sink that takes
        # them: without one, the compiled engine builds it from columns too)
        want = ReportBuilder(CertifyRun(names, mode, schema_paths=schema),
                             [lambda c: None]).build()
        assert got == want
        assert got.summary.before.transactions > 100
        seen_commit_ids |= got.commit_id is not None
        seen_fallbacks |= bool(got.fallbacks)
    assert seen_commit_ids and seen_fallbacks


# ---- pairs as columns: write sets as offsets and uint64 hash arrays (issue 15) ----

def test_packed_pairs_equal_the_pairs() -> None:
    """pack_pairs/unpack_pairs on corpus write sets (UNIQUE and FOREIGN keys from a schema,
    missing keys, DDL): equal transactions (BEGIN/COMMIT-only events left out), equal
    flags, the same hashes in order, keys that describe themselves as the originals."""
    from dataclasses import replace
    from repltool.certify.model import key_ref
    from repltool.distributed.pairs import slim
    from repltool.distributed.wspack import PackedKey, pack_pairs, unpack_pairs
    from repltool.writeset import load_schema
    small = require_corpus() / "mariadb" / "small"
    schema = load_schema([str(small / "schema.sql")])
    pairs = [(slim(t), ws) for t, ws in iter_writesets(
        read_transactions([str(small / "mysql-bin.000001")], READ_OPTIONS, keep_events=True),
        schema)]
    got = unpack_pairs(pickle_round_trip(pack_pairs(pairs)))
    assert len(got) == len(pairs) > 1000
    kinds = {"fk": 0, "missing": 0, "ddl": 0, "none": 0}
    for (trx, ws), (t2, w2) in zip(pairs, got):
        kept = tuple(ev for ev in trx.events if ev.type_code == 37
                     or ev.body.query not in (b"BEGIN", b"COMMIT"))
        assert t2 == replace(trx, events=kept)
        if ws is None:
            assert w2 is None
            kinds["none"] += 1
            continue
        assert replace(w2, keys=()) == replace(ws, keys=())
        assert [k.hash for k in w2.keys] == [k.hash for k in ws.keys]
        assert all(isinstance(k, PackedKey) for k in w2.keys)
        assert [key_ref(k) for k in w2.keys] == [key_ref(k) for k in ws.keys]
        assert [k.write_key() for k in w2.keys] == list(ws.keys)
        kinds["fk"] += any(k.parent for k in ws.keys)
        kinds["missing"] += bool(ws.missing_key_tables)
        kinds["ddl"] += ws.ddl
    assert kinds["fk"] and kinds["missing"] and kinds["ddl"], kinds


def pickle_round_trip(obj):  # type: ignore[no-untyped-def]
    import pickle
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("mode", ["group-replication", "writeset-session"])
def test_pairs_travel_packed(spark, rotated: list[Path], mode: str) -> None:
    """The modes certified on the driver get PackedPairs from the executors and certify
    them as one ordered single-process run does (rows and report)."""
    from repltool.certify.report import CertifyRun, ReportBuilder, result_row
    from repltool.certify.stitched import PairsRun
    from repltool.distributed import driver, pairs as pairs_module, spark_pairs
    from repltool.distributed.wspack import PackedPairs
    root = require_corpus() / "mariadb"
    schema = [str(root / "small" / "schema.sql")]
    kinds: list[type] = []
    real = driver.stream_results

    def watching(job):  # type: ignore[no-untyped-def]
        for r in real(job):
            kinds.append(type(r.payload))
            yield r
    for names, schema_paths in (([str(p) for p in rotated], []),
                                ([str(p) for p in sorted((root / "small").glob("mysql-bin.0*"))],
                                 schema)):
        pairs_module.stream_results = watching
        try:
            run = PairsRun(names, mode, schema_paths=schema_paths)
            spark_pairs(spark, names, run)
            got = [result_row(c) for c in run]
            run = PairsRun(names, mode, schema_paths=schema_paths)
            spark_pairs(spark, names, run)
            report = ReportBuilder(run).build()
        finally:
            pairs_module.stream_results = real
        want = [result_row(c) for c in CertifyRun(names, mode, schema_paths=schema_paths)]
        assert got == want and len(got) > 100
        assert report == ReportBuilder(CertifyRun(names, mode, schema_paths=schema_paths)).build()
        assert any(r["depends_on"]["key"] for r in got)
    assert kinds and set(kinds) == {PackedPairs}


@pytest.mark.parametrize("mode", ["writeset", "group-replication"])
def test_certify_output_text_report_with_spark(spark, cli, rotated: list[Path], tmp_path: Path,
                                               mode: str) -> None:
    """The text report with --output: writeset's executors send only the report's columns
    and write the copies (no clock map on the driver); group-replication's driver
    certifies described pairs and writes them.  The same report, warnings and copies."""
    files = rotated[:6]
    args = ["certify", "--mode", mode, "--pk-only", "--output", tmp_path / "out", *files]
    single, serr = cli(*args)
    (tmp_path / "out").rename(tmp_path / "one")
    out, err = cli(args[0], "--spark", *args[1:])
    assert out == single and "parallelism" in out.lower()
    assert warnings_of(err) == warnings_of(serr)
    for f in files:
        assert (tmp_path / "one" / f.name).read_bytes() == (tmp_path / "out" / f.name).read_bytes()
    assert any((tmp_path / "out" / f.name).read_bytes() != f.read_bytes() for f in files)
