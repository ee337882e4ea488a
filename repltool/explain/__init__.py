"""Why a replica cannot go faster: the dependency DAG of a log, explained.

Library entry points (no click, no rich)::

    graph = explain_log(paths, "writeset", options=CertifyOptions(baseline="serial"))
    graph.critical_path, graph.parallelism        # seconds, work / span
    top_serialisers(graph)                        # hot rows, tables, DDL, sessions...
    explain_transaction(graph, find_node(graph, gtid="0-1-25"))
    to_dot(graph, window_around(graph, index, depth=2))

The DAG is the one the replica's LOGICAL_CLOCK applier enforces for a clock:
the logged one (mode ``recorded``) or the one :mod:`repltool.certify`
computes (``commit-order``, ``writeset``, ``writeset-session``,
``group-replication``), with the reason and the key behind every
``last_committed``.  Its critical path is, by construction and by test,
:func:`repltool.schedule.critical_path` of the same clocks and costs (the
infinite-worker makespan ``repltool schedule`` reports).
"""

from __future__ import annotations

from .analysis import (
    KINDS, TrxExplanation, critical_causes, edge_causes, explain_transaction, find_node, graph_dict,
    primary_edge, serialisers, top_serialisers, transaction_dict,
)
from .draw import (
    dot_available, render, to_dot, to_mermaid, window_around, window_heaviest, window_range,
)
from .graph import build_graph, to_sim
from .model import Cause, Edge, EdgeKind, Graph, Node, Serialiser
from .source import (MODES, RECORDED, ExplainPairsRun, explain_log, explain_prepared,
                     nodes_from_results)

__all__ = [
    "KINDS", "MODES", "RECORDED", "Cause", "Edge", "EdgeKind", "Graph", "Node", "Serialiser",
    "TrxExplanation", "build_graph", "critical_causes", "dot_available", "edge_causes", "explain_log",
    "explain_prepared", "ExplainPairsRun",
    "explain_transaction", "find_node", "graph_dict", "nodes_from_results", "primary_edge",
    "render", "serialisers", "to_dot", "to_mermaid", "to_sim", "top_serialisers",
    "transaction_dict", "window_around", "window_heaviest", "window_range",
]
