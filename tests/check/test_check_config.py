"""Configuration: selection, severities, sizes, file discovery and precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.check import CheckConfig, Severity, load_config, override, parse_size
from repltool.check.config import find_config, parse_severities
from repltool.errors import UsageError


def test_parse_size() -> None:
    assert parse_size("10M") == 10 << 20
    assert parse_size("1G") == 1 << 30
    assert parse_size("64k") == 64 << 10
    assert parse_size("1.5MiB") == 3 << 19
    assert parse_size("4096") == 4096
    with pytest.raises(UsageError):
        parse_size("ten megs")


def test_select_ignore_prefixes() -> None:
    cfg = CheckConfig(select=("S", "C00"), ignore=("S003", "C008"))
    chosen = cfg.selected()
    assert "S001" in chosen and "C001" in chosen
    assert "S003" not in chosen and "C008" not in chosen and "G001" not in chosen
    with pytest.raises(UsageError, match="unknown rule"):
        CheckConfig(select=("X9",))


def test_severity_override() -> None:
    sev = parse_severities(["C008=warning, S005=info", "G=error"])
    assert sev["C008"] is Severity.WARNING and sev["S005"] is Severity.INFO
    assert sev["G002"] is Severity.ERROR
    assert CheckConfig(severity=sev).severity_of("S005") is Severity.INFO
    with pytest.raises(UsageError):
        parse_severities(["C008=fatal"])
    with pytest.raises(UsageError):
        parse_severities(["C008"])


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_discovery_order_and_upward_search(tmp_path: Path) -> None:
    top = tmp_path / "proj"
    deep = top / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) is None
    _write(top / "setup.cfg", "[repltool.check]\nignore = C008, G003\nmax-trx-size = 1M\n")
    assert find_config(deep) == top / "setup.cfg"
    cfg = load_config(start=deep)
    assert cfg.ignore == ("C008", "G003") and cfg.max_trx_size == 1 << 20
    # a pyproject.toml without the table is passed over; with it, it beats setup.cfg
    _write(top / "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_config(deep) == top / "setup.cfg"
    _write(top / "pyproject.toml", "[tool.repltool.check]\nselect = ['S']\n"
           "severity = { S005 = 'warning' }\nmax-barrier-share = 0.5\n")
    assert find_config(deep) == top / "pyproject.toml"
    cfg = load_config(start=deep)
    assert cfg.select == ("S",) and cfg.severity_of("S005") is Severity.WARNING
    # .repltool.toml beats pyproject.toml; a closer directory beats a farther one
    _write(top / ".repltool.toml", "[check]\nmin-parallelism = 3\n")
    assert load_config(start=deep).min_parallelism == 3
    _write(deep / "setup.cfg", "[repltool.check]\ngr-applier = yes\n")
    assert load_config(start=deep).gr_applier == "yes"


def test_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    bad = _write(tmp_path / ".repltool.toml", "[check]\nselct = ['S']\n")
    with pytest.raises(UsageError, match="unknown key"):
        load_config(bad)
    with pytest.raises(UsageError, match="invalid TOML"):
        load_config(_write(tmp_path / "x.toml", "[check\n"))
    with pytest.raises(UsageError, match="no \\[repltool.check\\] table"):
        load_config(_write(tmp_path / "setup.cfg", "[metadata]\nname = x\n"))
    with pytest.raises(UsageError, match="not found"):
        load_config(tmp_path / "missing.toml")


def test_command_line_overrides_the_file() -> None:
    base = CheckConfig(select=("S",), ignore=("S003",), severity={"S005": Severity.INFO},
                       max_trx_size=10, source="pyproject.toml")
    cfg = override(base, select=("C",), ignore=("C008",), severity={"C001": Severity.WARNING},
                   max_trx_size=20, min_parallelism=None)
    assert cfg.select == ("C",) and cfg.ignore == ("S003", "C008")
    assert cfg.severity_of("S005") is Severity.INFO and cfg.severity_of("C001") is Severity.WARNING
    assert cfg.max_trx_size == 20 and cfg.min_parallelism is None
    assert override(base).select == ("S",)
    with pytest.raises(UsageError, match="unknown rule"):
        override(base, ignore=("Q1",))
