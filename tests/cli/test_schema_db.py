"""--schema-db on every command that takes --schema: the database of unqualified tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LOG = "mariadb/rotation/mysql-bin.000001"


def _unqualified(corpus: Path, tmp_path: Path) -> Path:
    """The set's schema.sql without its header comment (which names the database wl):
    its tables then have no database (they match a table of that name in any database)
    unless --schema-db names one."""
    text = (corpus / "mariadb/rotation/schema.sql").read_text()
    assert text.startswith("-- ") and "database wl" in text.splitlines()[0]
    out = tmp_path / "tables.sql"
    out.write_text("\n".join(text.splitlines()[1:]) + "\n")
    return out


def _certify(out: str) -> list[tuple[object, ...]]:
    return [(r["gtid"], r["computed"], r["depends_on"]["reason"])
            for r in map(json.loads, out.splitlines())]


def _explain(out: str) -> object:
    d = json.loads(out)
    return d["critical_path"], d["reasons"], d["edges"]


def _schedule(out: str) -> object:
    d = json.loads(out)
    return d["critical_path"], [r["makespan"] for r in d["runs"]]


@pytest.mark.parametrize("base, view", [
    (["certify", "--format", "jsonl", "--mode", "writeset"], _certify),
    (["explain", "--format", "json", "--mode", "writeset"], _explain),
    (["schedule", "--format", "json", "--workers", "1,4", "--retag", "writeset"], _schedule),
    (["dump", "--writesets"], lambda out: out),
])
def test_schema_db_names_the_database(corpus: Path, tmp_path: Path, cli, base: list[str],
                                      view) -> None:  # type: ignore[no-untyped-def]
    tables = _unqualified(corpus, tmp_path)
    log = corpus / LOG
    hinted, _ = cli(*base, "--schema", corpus / "mariadb/rotation/schema.sql", log)
    named, _ = cli(*base, "--schema", tables, "--schema-db", "wl", log)
    elsewhere, _ = cli(*base, "--schema", tables, "--schema-db", "elsewhere", log)
    assert view(named) == view(hinted)
    assert view(elsewhere) != view(hinted)      # the tables are elsewhere's, not wl's
