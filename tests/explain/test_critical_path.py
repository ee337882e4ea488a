"""explain's critical path IS schedule's infinite-worker makespan, on the same input.

``repltool schedule`` reports ``critical_path`` (the ideal bound: infinite
workers, no coordinator overhead, no commit order).  explain builds its own
DAG with edges and reasons; its longest path must be exactly that number, for
the logged clocks (``--mode recorded``, same reader, same cost model) and for
certified clocks (compared with ``schedule`` on the re-tagged log certify
writes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.certify import CertifyOptions
from repltool.explain import EdgeKind, Node, build_graph, explain_log, to_sim
from repltool.schedule import ConstantCost, LinearCost, SimTransaction, critical_path
from repltool.binlog import read_transactions

from . import logs
from certify_cli.seedlogs import write_logs, ws as log_ws, DDL as LOG_DDL

CORPUS_FILES = [  # the MySQL corpus files with the most transactions
    "mysql/mysql80/mysql-test__std_data__upgrade__data_wl13352_8015.zip__data_upgrade__binlog.000002",
    "mysql/shyiko/src__test__resources__mysql-bin.checksum-none",
    "mysql/mysql80/mysql-test__std_data__upgrade__discarded_partition_data_8020.zip__data_upgrade__binlog.000002",
    "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000002",
]


def schedule_json(cli, *args: object) -> dict:
    out, _ = cli("schedule", "--format", "json", "--workers", "1,4", *args)
    return json.loads(out)


@pytest.mark.parametrize("cost", ["linear", "constant:0.002", "commit-ts"])
def test_recorded_equals_schedule_json(cli, cli_json, tmp_path: Path, cost: str) -> None:
    """Windows, a last_committed = 0 barrier, a gap, a (0, 0) and a rotation."""
    paths = logs.write(tmp_path)
    explained = cli_json("explain", "--cost", cost, *paths)
    scheduled = schedule_json(cli, "--cost", cost, *paths)
    assert explained["critical_path"] == scheduled["critical_path"]
    assert explained["transactions"] == scheduled["transactions"] == 17
    assert explained["total_cost"] == pytest.approx(scheduled["total_cost"])


def test_recorded_barrier_reasons(tmp_path: Path) -> None:
    """Every barrier rule of the applier is named on its edge."""
    g = explain_log(logs.write(tmp_path), cost_model=ConstantCost(1.0))
    barriers = {e.dst: e.detail.split(":")[0] for e in g.edges if e.kind is EdgeKind.BARRIER}
    assert barriers == {6: "last_committed = 0", 8: "sequence_number gap",
                        9: "(0, 0) clock", 10: "after (0, 0)", 13: "file start"}
    assert {e.reason for e in g.edges if e.kind is EdgeKind.PARENT} == {"commit-order"}
    assert g.critical_path == len(g.critical_nodes) == 12


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_recorded_equals_schedule(cli, cli_json, corpus: Path, name: str) -> None:
    explained = cli_json("explain", corpus / name)
    assert explained["critical_path"] == schedule_json(cli, corpus / name)["critical_path"]
    assert explained["critical_path_transactions"] >= 1


@pytest.mark.parametrize("mode", ["writeset", "writeset-session", "commit-order"])
def test_certified_equals_schedule_on_the_retagged_log(cli, cli_json, tmp_path: Path,
                                                        mode: str) -> None:
    """certify --output writes the computed clocks; schedule on that copy gives the
    critical path explain computes from the original."""
    paths = logs.write(tmp_path / "in")
    cli("certify", "--mode", mode, "--pk-only", "--output", tmp_path / "out", *paths)
    retagged = [tmp_path / "out" / p.name for p in paths]
    explained = cli_json("explain", "--mode", mode, *paths)
    assert explained["critical_path"] == schedule_json(cli, *retagged)["critical_path"]


def test_group_replication_equals_schedule_on_the_retagged_log(cli, cli_json,
                                                               tmp_path: Path) -> None:
    paths = write_logs(tmp_path / "in", [[log_ws(1), log_ws(2), log_ws(1, 3), LOG_DDL,
                                          log_ws(5), log_ws(5, 6), log_ws(7)]])
    cli("certify", "--mode", "group-replication", "--pk-only", "--output", tmp_path / "out",
        *paths)
    explained = cli_json("explain", "--mode", "group-replication", "--cost", "constant", *paths)
    scheduled = schedule_json(cli, "--cost", "constant", tmp_path / "out" / paths[0].name)
    assert explained["critical_path"] == scheduled["critical_path"]


clocks = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 14), st.booleans(),
                            st.floats(0, 1, allow_nan=False)), min_size=0, max_size=40)


@settings(max_examples=300, deadline=None)
@given(clocks)
def test_any_clock_sequence_gives_schedules_critical_path(rows) -> None:
    """Random (even inconsistent, lenient) clocks: same value as schedule, and a DAG
    whose shown edges go forward and whose critical path uses shown edges."""
    nodes = [Node(index=i, gtid=f"u:{i + 1}", pos=None, last_committed=lc, sequence_number=sn,
                  new_source_file=new, cost=cost) for i, (lc, sn, new, cost) in enumerate(rows)]
    g = build_graph(nodes, lenient=True)
    assert g.critical_path == critical_path([to_sim(n) for n in nodes], lenient=True)
    assert all(e.src < e.dst for e in g.edges)
    path = g.critical_nodes
    for src, dst in zip(path, path[1:]):
        assert any(e.src == src and e.critical for e in g.incoming(dst))
    if nodes:
        assert g.finish[path[-1]] == g.critical_path == max(g.finish)


def test_mariadb_writeset_equals_schedule_critical_path(cli, corpus: Path) -> None:
    """MariaDB logs carry no clock: certify's computed clocks (writeset, serial
    baseline), costed by schedule's linear model from the reader's transactions,
    give explain's critical path."""
    small = corpus / "mariadb" / "small"
    args = ("--mode", "writeset", "--baseline", "serial", "--schema", small / "schema.sql",
            small / "mysql-bin.000001")
    out, _ = cli("certify", "--format", "jsonl", *args)
    computed = [json.loads(line)["computed"] for line in out.splitlines()]
    read = [t for t in read_transactions([small / "mysql-bin.000001"]) if not t.truncated]
    costed = list(LinearCost().apply(
        SimTransaction(0, 0, size=t.size, rows=sum(n for _, n in t.rows_events),
                       events=t.num_events) for t in read))
    assert len(costed) == len(computed)
    sims = [SimTransaction(last_committed=lc, sequence_number=sn, cost=s.cost,
                           new_source_file=i == 0) for i, ((lc, sn), s) in
            enumerate(zip(computed, costed))]
    out, _ = cli("explain", "--format", "json", *args)
    explained = json.loads(out)
    assert explained["critical_path"] == critical_path(sims)
    assert explained["transactions"] == len(sims)
    assert explained["parallelism"] == pytest.approx(sum(s.cost for s in sims)
                                                     / critical_path(sims))


def test_library_graph_matches_options(tmp_path: Path) -> None:
    """Options reach certification: a history of 1 key resets after every transaction."""
    paths = logs.write(tmp_path)
    small = explain_log(paths, "writeset", options=CertifyOptions(history_size=1))
    default = explain_log(paths, "writeset")
    assert small.critical_path >= default.critical_path
    assert "history-full" in {e.reason for e in small.edges}
