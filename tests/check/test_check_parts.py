"""``check`` in parts (what ``check --spark`` runs on executors) merged in input order equals
one ``check_files`` over the same files (issue 15).

The parts are linked as :func:`repltool.distributed.driver.run_distributed` links them: a
part whose last file ends inside a transaction, or whose first clock W001 sees is no barrier
after the parts before, is checked again with the part before it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repltool.certify import CertResult, CertTransaction, Reason, SafetyChecker
from repltool.check import CheckConfig, check_files
from repltool.check.engine import check_part, merge_parts, w001_continues
from repltool.check.writesets import builtin_provider
from tests.conftest import require_corpus


def parts_of(files: list[str], cfg: CheckConfig) -> tuple[list, int]:
    units = [[i] for i in range(len(files))]
    while True:
        parts = [(u[0], check_part([files[i] for i in u], cfg, writesets=builtin_provider()))
                 for u in units]
        merged: list[tuple[list[int], object]] = []
        previous = None
        for unit, (_, part) in zip(units, parts):
            link = merged and (merged[-1][1].open_end or w001_continues(previous, part.w001[0]))
            previous = part.w001[1] if part.w001[1] is not None else previous
            if link:
                merged[-1] = (merged[-1][0] + unit, part)
            else:
                merged.append((list(unit), part))
        if len(merged) == len(units):
            return parts, len(units)
        units = [m[0] for m in merged]


def same_report(files: list[str], cfg: CheckConfig = CheckConfig()) -> tuple[object, int]:
    want = check_files(files, cfg, writesets=builtin_provider())
    parts, n = parts_of(files, cfg)
    got = merge_parts(files, cfg, parts)
    assert got == want
    return want, n


def test_every_mysql_corpus_file_in_parts() -> None:
    """Damage, clocks, truncated groups (R001 links two files), in-use flags, W003."""
    files = sorted(str(p) for p in require_corpus().glob("mysql/*/*") if p.is_file())
    report, units = same_report(files)
    rules = report.by_rule()
    assert units < len(files) and units > len(files) - 10      # some files were linked
    for code in ("C008", "R001", "R002", "S003", "S005", "W003", "G003"):
        assert rules.get(code), code
    # thresholds make the totals rules fire: they are computed over all parts
    report, _ = same_report(files, CheckConfig(min_parallelism=50.0, max_barrier_share=0.01))
    assert {"T001", "T002"} <= set(report.by_rule())


def test_duplicate_gtids_across_parts(tmp_path: Path) -> None:
    """G001 across files: copies of rotated MariaDB binlogs and of a MySQL 8.0 file."""
    root = require_corpus()
    rot = sorted(str(p) for p in (root / "mariadb" / "rotation").glob("mysql-bin.0*"))
    c1 = shutil.copy(rot[2], tmp_path / "copy.000001")
    c2 = shutil.copy(rot[5], tmp_path / "copy.000002")
    report, _ = same_report(rot[:8] + [str(c1), str(c2)] + rot[8:])
    g001 = [f for f in report.findings if f.rule == "G001"]
    assert len(g001) > 100 and {f.file for f in g001} == {str(c1), str(c2)}
    m80 = sorted(str(p) for p in (root / "mysql" / "mysql80").glob("*") if p.is_file())
    dup = shutil.copy(m80[-1], tmp_path / "dup80.000001")
    report, _ = same_report(m80 + [str(dup)])
    assert report.by_rule().get("G001")


@pytest.mark.parametrize("previous", [None, 0, 3, 5, 6, 7])
@pytest.mark.parametrize("lc,sn", [(0, 1), (5, 6), (6, 7), (5, 7), (2, 5), (1, 0)])
def test_w001_continues_is_the_safety_checkers_barrier(previous, lc: int, sn: int) -> None:
    """A conflict crosses into the part exactly when w001_continues says so."""
    def result(lc: int, sn: int) -> CertResult:
        return CertResult(trx=CertTransaction(gtid=None, pos=None, file="f", recorded=(lc, sn),
                                              writeset=(42,)),
                          computed=(lc, sn), reason=Reason.KEY)
    checker = SafetyChecker()
    if previous is not None:
        checker.add(result(max(previous - 1, 0), previous))
    crossed = bool(checker.add(result(lc, sn)))
    assert crossed == (w001_continues(previous, (lc, sn)) and lc < (previous or 0))
    if w001_continues(previous, (lc, sn)) is False:
        assert not crossed
