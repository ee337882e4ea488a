"""``repltool check``: CI assertions on captured binlogs and relay logs.

Example::

    from repltool.check import CheckConfig, check_files
    report = check_files(["binlog.000001", "binlog.000002"],
                         CheckConfig(ignore=("C008",), max_trx_size=64 << 20))
    for finding in report.findings:
        print(finding)          # FILE:OFFSET RULE severity: message
    raise SystemExit(report.exit_status)

Rules are listed in :mod:`.rules`; rendering (text, JSON, GitHub workflow
commands, JUnit XML) is in :mod:`.report`.
"""

from __future__ import annotations

from .config import CheckConfig, load_config, override, parse_severities, parse_size
from .engine import check_files
from .model import TOTAL, CheckReport, FileResult, Finding, Totals
from .rules import RULES, Rule, Severity
from .writesets import (
    SKIP_REASON, MappingProvider, TrxWriteset, WritesetProvider, builtin_provider, key_hash,
    load_writesets,
)

__all__ = [
    "CheckConfig", "CheckReport", "FileResult", "Finding", "MappingProvider", "RULES", "Rule",
    "SKIP_REASON", "Severity", "TOTAL", "Totals", "TrxWriteset", "WritesetProvider",
    "builtin_provider", "check_files", "key_hash", "load_config", "load_writesets", "override",
    "parse_severities", "parse_size",
]
