"""Writesets of a binlog written just now by a real MariaDB server (tests/fixtures/mariadb.py)."""

from __future__ import annotations

import json

from repltool.binlog import read_transactions
from repltool.writeset import READ_OPTIONS, iter_writesets, load_schema

from ._compare import compare


def test_live_workload_matches_ground_truth(mariadb_workload) -> None:
    run = mariadb_workload
    schema = load_schema(run.schema_path)
    result = compare(run.binlogs, run.ground_truth, schema)
    print(f"live MariaDB {run.version}: {result.summary()}; workload {run.stats}")
    assert len(run.binlogs) >= 2
    assert result.compared == result.transactions == len(run.transactions) >= 150
    assert result.mismatches == [], "\n".join(result.mismatches[:10])


def test_live_workload_exercises_every_rule(mariadb_workload) -> None:
    run = mariadb_workload
    schema = load_schema(run.schema_path)
    seen = {"update_two_pks": 0, "null_unique": 0, "promoted": 0, "fk": 0, "no_fk_checks": 0,
            "keyless": 0, "fk_parent": 0, "ddl": 0, "group_commit": 0}
    commit_ids: dict[int, int] = {}
    for trx, ws in iter_writesets(read_transactions(run.binlogs, READ_OPTIONS,
                                                    keep_events=True), schema):
        labels = [k.label for k in ws.keys]
        pks = [l for l in labels if l.startswith("ws.t_pk.PRIMARY")]
        seen["update_two_pks"] += len(set(pks)) >= 2 and any(
            c for c in trx.rows_events if c[0] == "ws.t_pk")
        seen["promoted"] += any(".t_uonly.uk_u=" in l for l in labels)
        seen["fk"] += any(k.parent for k in ws.keys)
        seen["no_fk_checks"] += ws.no_fk_checks
        seen["keyless"] += bool(ws.missing_key_tables)
        seen["fk_parent"] += bool(ws.fk_parent_tables)
        seen["ddl"] += ws.ddl
        if trx.commit_id is not None:
            commit_ids[trx.commit_id] = commit_ids.get(trx.commit_id, 0) + 1
    seen["null_unique"] = sum(1 for t in run.transactions
                              if any(k.startswith("ws.t_uk.PRIMARY") for k in t["keys"])
                              and not any(k.startswith("ws.t_uk.uk_code") for k in t["keys"]))
    seen["group_commit"] = sum(n for n in commit_ids.values() if n > 1)
    print(json.dumps(seen))
    assert all(seen.values()), seen
