"""explain's picture without --around: the --limit consecutive transactions that hold
the most critical-path cost, not the log's first (often set-up DDL)."""

from __future__ import annotations

from pathlib import Path

from repltool.explain import explain_log, window_heaviest, window_range

ROTATION1 = "mariadb/rotation/mysql-bin.000001"
MYSQL = "mysql/mysql80/mysql-test__std_data__replicated-bin.000001"


def _critical_cost(graph, window) -> float:  # type: ignore[no-untyped-def]
    on = set(graph.critical_nodes)
    return sum(graph.nodes[i].cost for i in window if i in on)


def test_the_heaviest_window_is_the_maximum(corpus: Path) -> None:
    graph = explain_log(corpus / ROTATION1, "writeset")
    limit = 40
    window = window_heaviest(graph, limit)
    assert len(window) == limit and window == list(range(window[0], window[0] + limit))
    best = max(_critical_cost(graph, window_range(graph, s, limit))
               for s in range(len(graph.nodes) - limit + 1))
    assert abs(_critical_cost(graph, window) - best) < 1e-12
    assert _critical_cost(graph, window) > _critical_cost(graph, window_range(graph, 0, limit))
    assert window[0] > 0


def test_a_small_log_is_drawn_whole(corpus: Path) -> None:
    graph = explain_log(corpus / MYSQL)
    assert window_heaviest(graph, 40) == list(range(len(graph.nodes)))


def test_cli_says_where_the_picture_is_and_hints_at_writeset(cli, corpus: Path) -> None:
    out, err = cli("explain", "--format", "dot", "--mode", "writeset", "--limit", "40",
                   corpus / ROTATION1)
    assert "repltool: note: the picture shows #" in err and "of 235 transactions" in err
    assert "digraph" in out
    _, err = cli("explain", "--format", "dot", corpus / MYSQL)
    assert "every edge in the picture is commit order" in err
    assert "--mode writeset --schema FILE" in err
