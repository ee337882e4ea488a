"""Compare extracted writesets with a ground-truth file (corpus layout)."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from repltool.binlog import read_transactions
from repltool.writeset import (
    READ_OPTIONS, MissingKey, Schema, WritesetWarning, iter_writesets,
)


@dataclass
class Comparison:
    transactions: int = 0
    compared: int = 0
    keys: int = 0
    fk_keys: int = 0
    no_pk: int = 0
    unknown_tables: int = 0       # entries of tables the schema lacks (missing keys)
    mismatches: list[str] = field(default_factory=list)
    not_in_ground_truth: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.compared}/{self.transactions} GTIDs compared, {self.keys} keys, "
                f"{self.fk_keys} FK parent keys, {self.no_pk} keyless-table entries, "
                f"{len(self.mismatches)} mismatches")


def compare(files: Iterable[Path], ground_truth: dict[str, Any] | Path, schema: Schema | None,
            *, primary_only: bool = False) -> Comparison:
    """Every GTID's keys / FK keys / keyless tables against the ground truth.

    ``primary_only``: no schema - compare only the PRIMARY keys (all the
    Table_map can describe).
    """
    gt = json.loads(Path(ground_truth).read_text()) if isinstance(ground_truth, Path) else ground_truth
    by = {t["gtid"]: t for t in gt["transactions"]}
    out = Comparison()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WritesetWarning)
        trxs = read_transactions([str(f) for f in files], READ_OPTIONS, keep_events=True)
        for trx, ws in iter_writesets(trxs, schema):
            out.transactions += 1
            g = by.get(trx.gtid)
            if g is None:
                out.not_in_ground_truth.append(str(trx.gtid))
                continue
            out.compared += 1
            keys = sorted({k.label for k in ws.keys if not k.parent})
            # a table the schema lacks (created during the workload) counts as missing
            # keys: its UNIQUE/FOREIGN keys are unknown, so no key of it is compared
            unknown = {t for t, r in zip(ws.missing_key_tables, ws.missing_key_reasons)
                       if r == MissingKey.UNKNOWN_TABLE}
            assert schema is None or all(
                schema.table(*t.split(".", 1)) is None for t in unknown), unknown
            out.unknown_tables += len(unknown)
            want = sorted(k for k in g["keys"] if _table_of(k) not in unknown)
            problems = []
            if primary_only:
                want = [k for k in want if ".PRIMARY=" in k]
            else:
                # the ground truth records the parent keys of non-NULL FK values;
                # 8.0.43 also adds the prefix-only entry of an all-NULL FK
                fks = sorted({k.label for k in ws.keys
                              if k.parent and any(v is not None for v in k.values)})
                if fks != sorted(g["fk_keys"]):
                    problems.append(f"fk_keys {fks} != {sorted(g['fk_keys'])}")
                missing = sorted(set(ws.missing_key_tables) - unknown)
                if missing != sorted(set(g["no_pk_tables"]) - unknown):
                    problems.append(f"no_pk {missing} != {g['no_pk_tables']}")
            if keys != want:
                problems.append(f"keys +{sorted(set(keys) - set(want))} -{sorted(set(want) - set(keys))}")
            if ws.ddl != (g.get("kind") == "ddl"):
                problems.append(f"ddl flag {ws.ddl} for kind {g.get('kind')}")
            if problems:
                out.mismatches.append(f"{trx.gtid} at {trx.start}: " + "; ".join(problems))
            out.keys += len(want)
            out.fk_keys += len(g["fk_keys"])
            out.no_pk += len(g["no_pk_tables"])
    return out


def _table_of(label: str) -> str:
    """``db.table`` of a ground-truth key label ``db.table.INDEX=[values]``."""
    return label.split("=", 1)[0].rsplit(".", 1)[0]
