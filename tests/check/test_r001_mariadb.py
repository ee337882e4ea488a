"""R001 on MariaDB relay logs: a real MariaDB 10.11 replica rotated its relay log at
max_relay_log_size inside transactions (9 of 29 files); that is MariaDB's normal way,
so the finding is info and does not cite MySQL's WL#8440 hazard."""

from __future__ import annotations

from pathlib import Path

from repltool.check import CheckConfig, check_files
from repltool.check.rules import Severity


def _relay(corpus: Path) -> list[Path]:
    d = corpus / "mariadb" / "relay" / "replica-relay"
    return sorted(p for p in d.iterdir() if p.name.startswith("relay-bin.0"))


def test_mariadb_relay_split_is_info_without_wl8440(corpus: Path) -> None:
    report = check_files(_relay(corpus))
    r001 = [f for f in report.findings if f.rule == "R001"]
    assert len(r001) == 9
    assert all(f.severity is Severity.INFO for f in r001)
    assert all("WL#8440" not in f.message and "MariaDB" in f.message for f in r001)


def test_a_configured_severity_still_wins(corpus: Path) -> None:
    cfg = CheckConfig(severity={"R001": Severity.ERROR})
    report = check_files(_relay(corpus), cfg)
    assert {f.severity for f in report.findings if f.rule == "R001"} == {Severity.ERROR}
    assert report.exit_status == 1
