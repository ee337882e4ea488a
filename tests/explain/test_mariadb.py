"""explain on a real MariaDB log, checked against the workload's ground truth.

``mariadb/small`` (1,977 GTIDs, 4 threads, hot keys) has no logical clock, so
the clocks are certify's (``writeset``, serial baseline: MariaDB commits do
not say which transactions were concurrent) with the set's ``schema.sql``.
``ground-truth.json`` lists the keys every GTID wrote
(``db.table.INDEX=[values]``, foreign-key parent keys apart).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest


from repltool.certify import Baseline, CertifyOptions, KeyRef
from repltool.writeset import load_schema
from repltool.explain import (EdgeKind, Graph, explain_log, explain_transaction, serialisers,
                              top_serialisers)


def _key(label: str) -> tuple[str, str, str, tuple[str, ...]]:
    where, _, values = label.partition("=")
    db, table, index = where.split(".", 2)
    return db, table, index, tuple(str(v) for v in json.loads(values))


@pytest.fixture(scope="module")
def small(corpus: Path) -> tuple[Graph, dict[str, set]]:
    root = corpus / "mariadb" / "small"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the schema lacks two side tables
        graph = explain_log([root / "mysql-bin.000001"], "writeset",
                            options=CertifyOptions(baseline=Baseline.SERIAL),
                            schema_paths=[root / "schema.sql"])
    truth = json.loads((root / "ground-truth.json").read_text())
    # keys of tables schema.sql lacks are unknown to certify (missing keys: commit-order
    # edges), so the truth kept here is the keys of the tables it describes
    schema = load_schema(root / "schema.sql")
    keys = {t["gtid"]: {k for k in map(_key, t["keys"] + t["fk_keys"])
                        if schema.table(k[0], k[1]) is not None}
            for t in truth["transactions"]}
    return graph, keys


def _as_tuple(k: KeyRef) -> tuple[str, str, str, tuple[str, ...]]:
    return k.db, k.table, k.index, tuple(k.values)


def test_every_key_edge_names_a_key_both_transactions_wrote(small) -> None:
    graph, truth = small
    checked = 0
    for e in graph.edges:
        if not e.key_hashes:
            continue
        assert len(e.keys) == len(e.key_hashes)
        src, dst = graph.nodes[e.src].gtid, graph.nodes[e.dst].gtid
        for key in e.keys:
            k = _as_tuple(key)
            assert k in truth[src], f"{src} -> {dst}: {key} not written by {src}"
            assert k in truth[dst], f"{src} -> {dst}: {key} not written by {dst}"
            checked += 1
    assert checked > 1000
    assert sum(1 for e in graph.edges if e.reason == "key" and e.kind is EdgeKind.PARENT) > 50


def test_no_shared_key_is_left_unexplained(small) -> None:
    """Key edges are never reduced away: whenever a transaction writes a key an
    earlier one wrote, an edge from the last earlier writer names that key."""
    graph, truth = small
    last: dict[tuple, int] = {}
    missing, pairs = [], 0
    for n in graph.nodes:
        named = {(e.src, _as_tuple(k)) for e in graph.incoming(n.index) for k in e.keys}
        for k in truth.get(n.gtid, ()):
            src = last.get(k)
            if src is not None:
                pairs += 1
                if (src, k) not in named:
                    missing.append((graph.nodes[src].gtid, n.gtid, k))
            last[k] = n.index
    assert pairs > 5000
    assert missing == []


def test_top_serialisers_of_the_small_set(small) -> None:
    """The workload's hot keys (ids 1..8 of each table) lead the hot rows; wl.t_nokey
    is the table without a key; writes to wl.parent (referenced by child) serialise
    most of the critical path."""
    graph, _ = small
    kinds = serialisers(graph)
    hot = [s.cause.name for s in kinds["row"][:10]]
    assert all(name.startswith("wl.") and ("(" in name) for name in hot)
    assert any(name.split("(")[1].rstrip(")") in {str(i) for i in range(1, 9)} for name in hot)
    # wl.side_3_1 is not in schema.sql (created during the workload): its keys are unknown
    assert sorted(s.cause.name for s in kinds["no-key-table"]) == [
        "wl.side_3_1", "wl.side_3_1, wl.t_nokey", "wl.t_nokey"]
    assert kinds["fk-parent"][0].cause.name == "wl.parent"
    shares = [s.critical_share for s in top_serialisers(graph, 1000)
              if s.cause.kind not in ("row", "table")]
    crit_edges = len(graph.critical_nodes) - 1
    rule_edges = sum(s.critical_edges for s in top_serialisers(graph, 1000)
                     if s.cause.kind not in ("row", "table"))
    key_edges = sum(1 for a, b in zip(graph.critical_nodes, graph.critical_nodes[1:])
                    if any(e.src == a and e.reason == "key" or e.src == a and e.kind is
                           EdgeKind.KEY for e in graph.incoming(b)))
    # every critical edge is charged once to a rule, or to keys
    assert rule_edges + key_edges == crit_edges
    assert 0 < sum(shares) <= 1.0


def test_one_transaction(small) -> None:
    graph, truth = small
    i = next(n.index for n in graph.nodes if n.gtid == "0-1-25")
    x = explain_transaction(graph, i)
    assert x.depth == graph.finish[i] and x.start == pytest.approx(x.depth - x.node.cost)
    (edge,) = [e for e in x.waits_for if e.kind is EdgeKind.PARENT]
    assert edge.reason == "key"
    assert _as_tuple(edge.keys[0]) in truth["0-1-25"]
    assert x.chain[-1] == i and graph.finish[x.chain[0]] == graph.nodes[x.chain[0]].cost
