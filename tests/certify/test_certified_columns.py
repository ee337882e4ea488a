"""``certify --spark``'s executors send only the report's columns (issue 15), without Spark.

For the text report (no sink reads the certified transactions) the CLI asks the
executors for the report only (``spark_pairs(..., report_only=True)``):
:func:`repltool.distributed.pairs.certify_unit` then streams the fused reader's
pairs into :class:`~repltool.certify.report.ReportColumns`
(:func:`repltool.certify.report.certified_columns`), with no ``Certified``,
``CertResult`` or packed transaction per transaction (bench/results/spark15.md:
the executors spent twice the single process's CPU before).  Here the units are
made in-process, as an executor makes them, and sent through pickle; the report
the driver builds from their parts must equal the single-process report built
from one object per transaction: on a rotated synth set (several units) and on
the MariaDB ``small`` set with its schema (commit ids, fallback reasons), parts
cut small so that a unit sends several, with both engines.  Each run asserts the
object path did not run and, with the compiled engine, that the core certified
every transaction and (writeset mode) stepped each on the hash reader's values.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from repltool.certify import Mode, coretrack, report
from repltool.certify.report import CertifyRun, ReportBuilder
from repltool.certify.stitched import PairsRun
from repltool.cli import run as cli_run
from repltool.distributed import pairs
from repltool.distributed.pairs import CertifySpec, PairsSpec, certify_unit
from repltool.distributed.units import Task, Unit
from repltool.writeset import fused
from tests.conftest import require_corpus


@pytest.fixture(scope="module")
def rotated(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = tmp_path_factory.mktemp("synth")
    assert cli_run(["synth", "-o", str(out), "--size", "600000", "--seed", "11", "--max-binlog-size", "200K",
                    "--no-ground-truth"]) == 0
    files = [str(f) for f in sorted(out.glob("binlog.0*"))]
    assert len(files) >= 2
    return files


@pytest.mark.parametrize("engine", ["compiled", "python"])
@pytest.mark.parametrize("mode", ["writeset", "commit-order"])
def test_report_from_executor_columns_equals_single_process(
        rotated: list[str], mode: str, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLTOOL_ENGINE", engine)
    monkeypatch.setattr(report, "LANE_PART", 97)
    small = require_corpus() / "mariadb" / "small"
    sets = [(rotated, []),
            ([str(p) for p in sorted(small.glob("mysql-bin.0*"))], [str(small / "schema.sql")])]

    def refused(*args: object) -> None:
        raise AssertionError("the object path ran on the executor")
    seen_commit_ids = seen_fallbacks = False
    for names, schema in sets:
        run = PairsRun(names, mode, schema_paths=schema)
        spec = CertifySpec(PairsSpec(run.schema, run.options.history_size), Mode(mode),
                           run.options, report_only=True)
        task = Task("certify", extra=spec, run=certify_unit)
        before = coretrack.core_transactions()
        hashed = fused.hash_counts()[0]
        direct = report.lane_direct_transactions()
        with monkeypatch.context() as m:
            m.setattr(pairs, "_certified_unit", refused)
            results = [pickle.loads(pickle.dumps(certify_unit(task, Unit(i, (name,)))))
                       for i, name in enumerate(names)]
        certified_here = coretrack.core_transactions() - before
        hashed_here = fused.hash_counts()[0] - hashed
        direct_here = report.lane_direct_transactions() - direct
        assert all(r.failure is None and r.payload[0] == [] for r in results)
        parts = [p for r in results for p in r.payload[1]]
        assert len(parts) > len(names)                 # LANE_PART cut the units
        run.attach_certified(iter(()), results[0].first,
                             lambda: sum(r.headers[0][3] for r in results))
        run.attach_report_parts(iter(parts))
        got = ReportBuilder(run).build()
        want = ReportBuilder(CertifyRun(names, mode, schema_paths=schema),
                             [lambda c: None]).build()
        assert got == want
        n = got.summary.before.transactions
        assert n > 500
        assert certified_here == (n if engine == "compiled" else 0)
        # the writeset mode's executors read the keys' hashes, as the single process does
        assert hashed_here == (n if engine == "compiled" and mode == "writeset" else 0)
        # and step on the hash reader's values, as CertifyRun's lane does (no
        # CertTransaction per transaction: the whole-file unit cost 20% more CPU)
        assert direct_here == hashed_here
        seen_commit_ids |= got.commit_id is not None
        seen_fallbacks |= bool(got.fallbacks)
    assert seen_commit_ids and seen_fallbacks


def test_certified_transactions_are_not_sent_with_report_only(rotated: list[str]) -> None:
    """The object path still sends them (``--format jsonl``, ``--check``), with the same
    columns; with ``report_only`` a run whose certified transactions are read anyway
    fails loudly rather than yield nothing."""
    run = PairsRun(rotated[:1], "writeset")
    spec = PairsSpec(None, run.options.history_size)
    unit = Unit(0, (rotated[0],))
    objects = certify_unit(Task("certify", extra=CertifySpec(spec, Mode.WRITESET, run.options),
                                run=certify_unit), unit)
    columns = certify_unit(Task("certify", extra=CertifySpec(spec, Mode.WRITESET, run.options,
                                                               report_only=True),
                                run=certify_unit), unit)
    assert objects.payload[0] and columns.payload[0] == []
    assert objects.payload[1] == columns.payload[1]
    assert (objects.headers, objects.count, objects.first) == \
        (columns.headers, columns.count, columns.first)
    assert len(pickle.dumps(columns)) * 5 < len(pickle.dumps(objects))
