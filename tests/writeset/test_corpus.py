"""Writesets of the real MariaDB corpus sets against their ground truth.

For every GTID the extracted keys (as ``db.table.INDEX=[values]`` strings),
FK parent keys and keyless tables must equal what the workload recorded.
The relay set has no schema.sql of its own: it was written by the same
workload (same CREATE TABLEs), so the small set's schema is used for it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from repltool.binlog import read_events, read_transactions
from repltool.errors import ReplToolError
from repltool.writeset import READ_OPTIONS, WritesetError, iter_writesets, load_schema

from ._compare import compare

SETS = {
    # set id: (files under corpus/mariadb, ground truth, schema)
    "small": ("small/mysql-bin.0*", "small", "small"),
    "serial": ("serial/mysql-bin.0*", "serial", "serial"),
    "rotation": ("rotation/mysql-bin.0*", "rotation", "rotation"),
    "compressed": ("compressed/mysql-bin.0*", "compressed", "compressed"),
    "relay-primary": ("relay/primary/mysql-bin.0*", "relay", "small"),
    "relay-replica-binlog": ("relay/replica-binlog/mysql-bin.0*", "relay", "small"),
    "relay-replica-relay": ("relay/replica-relay/relay-bin.0*", "relay", "small"),
}


@pytest.mark.parametrize("name", list(SETS))
def test_corpus_set_matches_ground_truth(corpus: Path, name: str) -> None:
    pattern, gt, schema = SETS[name]
    root = corpus / "mariadb"
    files = sorted(root.glob(pattern))
    assert files, f"no files for {pattern}"
    result = compare(files, root / gt / "ground-truth.json", load_schema(root / schema / "schema.sql"))
    print(f"{name}: {result.summary()}")
    assert result.compared == result.transactions > 0, result.not_in_ground_truth[:5]
    assert result.mismatches == [], "\n".join(result.mismatches[:10])


@pytest.mark.parametrize("name", ["small", "rotation"])
def test_table_map_only_primary_keys(corpus: Path, name: str) -> None:
    """Without a schema: the PRIMARY keys from Table_map metadata alone are exact."""
    pattern, gt, _ = SETS[name]
    root = corpus / "mariadb"
    result = compare(sorted(root.glob(pattern)), root / gt / "ground-truth.json", None,
                     primary_only=True)
    assert result.mismatches == [], "\n".join(result.mismatches[:10])


def _plain_read_error(path: Path) -> type[BaseException] | None:
    try:
        for _ in read_events([str(path)]):
            pass
    except ReplToolError as exc:
        return type(exc)
    return None


_COVERED = ("mariadb/small/", "mariadb/serial/", "mariadb/rotation/", "mariadb/compressed/",
            "mariadb/relay/primary/", "mariadb/relay/replica-")


def _binlog(p: Path) -> bool:
    if any(c in str(p) for c in _COVERED):
        return False            # compared against ground truth above
    with open(p, "rb") as f:
        return f.read(4) in (b"\xfebin", b"\xfdbin")


@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/**/*", select=_binlog)
def test_every_rows_event_gets_a_writeset(path: Path) -> None:
    """No writeset error on any log; reader errors are the reader's (damaged files)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for _ in iter_writesets(read_transactions([str(path)], READ_OPTIONS,
                                                      keep_events=True)):
                pass
        except WritesetError:
            raise
        except ReplToolError as exc:
            assert _plain_read_error(path) is type(exc), f"{exc}"
