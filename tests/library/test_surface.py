"""The library surface: ``import repltool`` exports the entry points (lazily), the
package is typed (py.typed), functions that read logs take one path or many, and
there is one GtidSet class."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path
from uuid import UUID

import pytest

import repltool
from repltool.binlog import ReadOptions, read_events
from repltool.binlog.constants import EventType
from repltool.binlog.gtid import Gtid, GtidSet

ROOT = Path(__file__).resolve().parents[2]
ROTATION1 = "mariadb/rotation/mysql-bin.000001"
TAGGED = "mysql/rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001"
MYSQL = "mysql/mysql80/mysql-test__std_data__replicated-bin.000001"


def test_every_export_resolves_and_import_is_lazy() -> None:
    for name in repltool.__all__:
        assert getattr(repltool, name) is not None, name
    for name in ("read_events", "read_transactions", "compute_stats", "check_files",
                 "explain_log", "simulate", "schedule_report", "GtidSet", "CertifyRun"):
        assert name in repltool.__all__
    code = ("import sys, repltool; assert 'repltool.binlog' not in sys.modules; "
            "repltool.compute_stats; assert 'repltool.stats' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_py_typed_is_shipped() -> None:
    assert (ROOT / "repltool" / "py.typed").is_file()
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert "py.typed" in cfg["options.package_data"]["repltool"]


def test_one_path_is_not_an_iterable_of_characters(corpus: Path) -> None:
    path = corpus / ROTATION1
    for arg in (str(path), path):
        one = repltool.compute_stats(arg)
        assert [f.file for f in one.files] == [str(path)]
        assert one.total.transactions == 235
        assert repltool.compute_clock_stats(arg).total.transactions == 235
        assert sum(1 for _ in repltool.read_transactions(arg)) == 235
        assert [f.file for f in repltool.check_files(arg).files] == [str(path)]
    many = repltool.compute_stats([path, path])
    assert len(many.files) == 2


def test_one_path_for_explain_and_schedule(corpus: Path) -> None:
    from repltool.schedule import LinearCost, SimConfig
    path = str(corpus / MYSQL)
    graph = repltool.explain_log(path)
    assert list(graph.files) == [path]
    assert len(graph.nodes) == 5
    report = repltool.schedule_report(path, [1, 2], SimConfig(), LinearCost())
    assert report.files == (path,)
    assert report.stats.transactions == 5
    assert [r.workers for r in report.sweep.results] == [1, 2]
    run = repltool.CertifyRun(path, "writeset")
    assert run.paths == [path]


def test_one_gtid_set_class(corpus: Path) -> None:
    from repltool.certify import GtidSet as CertifyGtidSet
    from repltool.certify.gtidset import GtidSet as ModuleGtidSet
    assert CertifyGtidSet is GtidSet is ModuleGtidSet is repltool.GtidSet
    [ev] = [e for e in read_events(corpus / TAGGED, ReadOptions())
            if e.type_code == EventType.PREVIOUS_GTIDS_LOG_EVENT]
    s = ev.body.gtid_set
    assert type(s) is GtidSet
    text = "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13,55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:1-2"
    assert str(s) == text
    assert GtidSet.parse(text) == s and hash(GtidSet.parse(text)) == hash(s)
    sid = UUID("55778904-0299-11f1-b1b8-4ef0c4956feb")
    assert Gtid(sid, 13) in s and Gtid(sid, 14) not in s
    assert Gtid(sid, 2, "mytag") in s and Gtid(sid, 3, "mytag") not in s
    assert f"{sid}:mytag:2" in s
    assert [(u, t, [(i.start, i.end) for i in iv]) for u, t, iv in s.sids] == [
        (sid, None, [(1, 13)]), (sid, "mytag", [(1, 2)])]
    assert s.is_subset(s.add(f"{sid}:14")) and s.is_strict_subset(s.add(f"{sid}:14"))


def test_paths_reject_bytes() -> None:
    with pytest.raises(TypeError):
        repltool.path_list(b"binlog.000001")
