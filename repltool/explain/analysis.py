"""Why the replica cannot go faster: causes, top serialisers, one transaction's story.

Each shown edge is attributed to a :class:`~repltool.explain.model.Cause`:

* an edge that carries shared keys: each distinct row (``row``) and its table
  (``table``): the row conflict is what forces the order;
* otherwise the rule of the dependent transaction's ``last_committed``:
  ``no-key`` -> the tables without a usable key (``no-key-table``), ``ddl`` ->
  the DDL itself, ``fk-parent`` -> the referenced tables, ``session`` -> the
  session, ``history-reset`` -> whatever reset the history (the DDL, the
  FK-parent write, an oversized write set), a barrier -> the barrier rule,
  anything else (commit-order, file-start, gc-window, view-change...) -> that
  ``rule``;
* a prefix edge (the critical predecessor lies before the parent) -> the
  cause of the parent edge: the clock set ``last_committed`` that high.

The critical path's edges are attributed the same way, each weighted with
the cost of the transaction it delays; ``critical_share`` is that cost over
the critical path.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..certify.model import KeyRef
from .model import Cause, Edge, EdgeKind, Graph, Node, Serialiser

#: Serialiser kinds, in the order they are reported.
KINDS = ("row", "table", "no-key-table", "ddl", "fk-parent", "session", "barrier", "rule")


def key_name(key: KeyRef | None, key_hash: int | None = None) -> str:
    """``db.table INDEX(v1, v2)``, or the hash when the key is not described."""
    if key is not None:
        return str(key)
    return f"hash {key_hash:#018x}" if key_hash is not None else "?"


def node_label(node: Node) -> str:
    """``gtid`` (or ``#index``), with the DDL statement's start when known."""
    name = node.gtid or f"#{node.index}"
    if node.statement:
        return f"{name} {node.statement}"
    return name


def _reason_cause(graph: Graph, node: Node, reason: str, detail: str,
                  src: int | None) -> Cause:
    if reason == "no-key":
        return Cause("no-key-table", ", ".join(node.missing_key_tables) or "(unknown table)")
    if reason == "ddl":
        return Cause("ddl", node_label(node))
    if reason == "fk-parent":
        return Cause("fk-parent", ", ".join(node.fk_parent_tables) or node_label(node))
    if reason == "session":
        s = node.session
        return Cause("session", f"server_id {s[0]} thread {s[1]}" if s else "(unknown)")
    if reason == "history-reset" and src is not None:
        origin = graph.nodes[src]
        if origin.reason in ("ddl", "fk-parent"):
            return _reason_cause(graph, origin, origin.reason, origin.detail, None)
        if origin.reason == "history-full":
            return Cause("rule", "history-full")
    return Cause("rule", reason)


def edge_causes(graph: Graph, edge: Edge) -> tuple[Cause, ...]:
    """Everything ``edge`` is attributed to for counting: its rule, and each shared
    row and table (see the module docstring)."""
    rule = () if _keyed(edge) else _rule_causes(graph, edge)
    return (*rule, *_key_causes(edge))


def critical_causes(graph: Graph, edge: Edge) -> tuple[Cause, ...]:
    """What a critical-path ``edge`` is charged to: its shared rows and their tables
    when a key conflict set the order (reason ``key``, or a key edge), else its rule."""
    return _key_causes(edge) if _keyed(edge) else _rule_causes(graph, edge)


def _keyed(edge: Edge) -> bool:
    return bool(edge.key_hashes) and (edge.kind is EdgeKind.KEY or edge.reason == "key")


def _key_causes(edge: Edge) -> tuple[Cause, ...]:
    rows: dict[str, None] = {}
    tables: dict[str, None] = {}
    for i, h in enumerate(edge.key_hashes):
        key = edge.keys[i] if i < len(edge.keys) else None
        rows[key_name(key, h)] = None
        tables[key.qualified_table if key is not None else "(unknown table)"] = None
    return (*(Cause("row", r) for r in rows), *(Cause("table", t) for t in tables))


def _rule_causes(graph: Graph, edge: Edge) -> tuple[Cause, ...]:
    node = graph.nodes[edge.dst]
    if edge.kind is EdgeKind.PREFIX:
        primary = primary_edge(graph, edge.dst)
        if primary is not None and primary is not edge:
            return critical_causes(graph, primary)
    if edge.kind is EdgeKind.BARRIER:
        return (Cause("barrier", edge.detail.split(":")[0]),)
    src = edge.src if edge.kind is EdgeKind.PARENT else None
    return (_reason_cause(graph, node, edge.reason, edge.detail, src),)


def primary_edge(graph: Graph, index: int) -> Edge | None:
    """The parent or barrier edge of node ``index`` (None: it waits for nothing)."""
    for e in graph.incoming(index):
        if e.kind in (EdgeKind.PARENT, EdgeKind.BARRIER):
            return e
    return None


def serialisers(graph: Graph) -> dict[str, list[Serialiser]]:
    """Every cause with its edges and critical-path share, per kind, biggest first."""
    edges: dict[Cause, int] = defaultdict(int)
    crit_edges: dict[Cause, int] = defaultdict(int)
    crit_cost: dict[Cause, float] = defaultdict(float)
    for e in graph.edges:
        if e.kind is EdgeKind.PREFIX:
            continue            # counted with the parent edge it stands behind
        for c in edge_causes(graph, e):
            edges[c] += 1
    path = graph.critical_nodes
    for src, dst in zip(path, path[1:]):
        edge = _edge(graph, src, dst)
        for c in (critical_causes(graph, edge) if edge is not None else ()):
            crit_edges[c] += 1
            crit_cost[c] += graph.nodes[dst].cost
            edges.setdefault(c, 0)
    span = graph.critical_path
    out: dict[str, list[Serialiser]] = {k: [] for k in KINDS}
    for c, n in edges.items():
        cost = crit_cost.get(c, 0.0)
        out.setdefault(c.kind, []).append(Serialiser(
            cause=c, edges=n, critical_edges=crit_edges.get(c, 0), critical_cost=cost,
            critical_share=cost / span if span > 0 else 0.0))
    for items in out.values():
        items.sort(key=lambda s: (-s.critical_cost, -s.edges, s.cause.name))
    return out


def top_serialisers(graph: Graph, top: int = 10) -> list[Serialiser]:
    """The ``top`` biggest causes of each kind, kinds in :data:`KINDS` order."""
    return [s for kind_items in serialisers(graph).values() for s in kind_items[:top]]


def _edge(graph: Graph, src: int, dst: int) -> Edge | None:
    for e in graph.incoming(dst):
        if e.src == src:
            return e
    return None


# ---- one transaction ----

@dataclass(frozen=True, slots=True)
class TrxExplanation:
    """What one transaction waits for, and where it sits on the longest path.

    :ivar depth: the longest cost-weighted path ending at it (its earliest
        finish with infinite workers); ``start = depth - cost``.
    :ivar ancestors: how many transactions it waits for, directly or not:
        every transaction up to its parent (a logical clock cannot express
        less), or every earlier one for a barrier.
    :ivar overlap: transactions before it in the log it may run in parallel with.
    :ivar chain: the longest path ending at it, first to last.
    """

    node: Node
    depth: float
    start: float
    on_critical_path: bool
    waits_for: tuple[Edge, ...]
    blocks: tuple[Edge, ...]
    ancestors: int
    overlap: int
    chain: tuple[int, ...]


def explain_transaction(graph: Graph, index: int) -> TrxExplanation:
    """The :class:`TrxExplanation` of node ``index``."""
    node = graph.nodes[index]
    primary = primary_edge(graph, index)
    if primary is None:
        ancestors = 0
    elif primary.kind is EdgeKind.BARRIER:
        ancestors = index
    else:
        ancestors = primary.src + 1
    depth = graph.finish[index]
    return TrxExplanation(
        node=node, depth=depth, start=depth - node.cost,
        on_critical_path=index in set(graph.critical_nodes),
        waits_for=graph.incoming(index), blocks=graph.outgoing(index),
        ancestors=ancestors, overlap=index - ancestors, chain=tuple(graph.chain(index)))


def find_node(graph: Graph, *, gtid: str | None = None, pos: str | None = None) -> int:
    """The index of the transaction with ``gtid``, or at/containing ``pos``.

    ``pos`` is ``OFFSET`` or ``FILE:OFFSET`` (FILE as given or its base name);
    an offset inside a transaction selects it.

    :raises UsageError: when nothing or more than one transaction matches.
    """
    from ..errors import UsageError
    if gtid is not None:
        found = [n.index for n in graph.nodes if n.gtid == gtid]
        if not found:
            raise UsageError(f"--gtid {gtid}: no applied transaction has this GTID")
        return found[0]
    if pos is None:
        raise UsageError("give a GTID or a position")
    file, sep, text = pos.rpartition(":")
    if not text.isdigit():
        raise UsageError(f"--pos {pos!r}: expected OFFSET or FILE:OFFSET")
    offset = int(text)
    hits: list[Node] = []
    for n in graph.nodes:
        if n.pos is None or (sep and file not in (n.pos.file, _base(n.pos.file))):
            continue
        end = n.end_offset if n.end_offset is not None else n.pos.offset + 1
        if n.pos.offset <= offset < max(end, n.pos.offset + 1):
            hits.append(n)
    exact = [n for n in hits if n.pos is not None and n.pos.offset == offset]
    hits = exact or hits
    if not hits:
        raise UsageError(f"--pos {pos}: no applied transaction starts at or contains it")
    if len({n.pos.file for n in hits if n.pos is not None}) > 1:
        raise UsageError(f"--pos {pos}: offset {offset} is in several files; "
                         "use FILE:OFFSET")
    return hits[0].index


def _base(path: str) -> str:
    import os
    return os.path.basename(path)


# ---- JSON ----

def _key_dict(key: KeyRef | None, key_hash: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"hash": key_hash}
    if key is not None:
        out.update(db=key.db, table=key.table, index=key.index, values=list(key.values))
    return out


def node_ref(node: Node) -> dict[str, Any]:
    """``index``, ``gtid``, ``pos`` of a node."""
    return {"index": node.index, "gtid": node.gtid,
            "pos": str(node.pos) if node.pos is not None else None}


def edge_dict(graph: Graph, e: Edge, *, max_keys: int = 20) -> dict[str, Any]:
    """One edge as JSON; ``keys`` lists at most ``max_keys`` (``keys_total`` has the count)."""
    keys = [_key_dict(e.keys[i] if i < len(e.keys) else None, h)
            for i, h in enumerate(e.key_hashes[:max_keys])]
    return {"from": node_ref(graph.nodes[e.src]), "to": node_ref(graph.nodes[e.dst]),
            "kind": e.kind.value, "reason": e.reason, "detail": e.detail,
            "keys": keys, "keys_total": len(e.key_hashes), "critical": e.critical,
            "causes": [{"kind": c.kind, "name": c.name} for c in edge_causes(graph, e)],
            "charged_to": [{"kind": c.kind, "name": c.name}
                           for c in critical_causes(graph, e)]}


def serialiser_dict(s: Serialiser) -> dict[str, Any]:
    return {"kind": s.cause.kind, "name": s.cause.name, "edges": s.edges,
            "critical_edges": s.critical_edges, "critical_cost": s.critical_cost,
            "critical_share": s.critical_share}


def graph_dict(graph: Graph, *, top: int = 10, path_limit: int = 200) -> dict[str, Any]:
    """The JSON of a whole log (``repltool explain --format json``).

    ``critical_path`` and every cost are in the cost model's seconds, as in
    ``repltool schedule --format json``; ``critical_path_nodes`` lists at most
    ``path_limit`` transactions of the path (its last ones).
    """
    path = graph.critical_nodes
    shown = path[-path_limit:] if path_limit else path
    reasons: dict[str, int] = defaultdict(int)
    kinds: dict[str, int] = defaultdict(int)
    for e in graph.edges:
        kinds[e.kind.value] += 1
        if e.kind in (EdgeKind.PARENT, EdgeKind.BARRIER):
            reasons[e.reason] += 1
    return {
        "files": list(graph.files), "mode": graph.mode, "cost_model": graph.cost_model,
        "cost_description": graph.cost_description,
        "transactions": len(graph.nodes), "not_applied": graph.not_applied,
        "truncated_skipped": graph.truncated_skipped,
        "total_cost": graph.total_cost, "critical_path": graph.critical_path,
        "critical_path_transactions": len(path), "parallelism": graph.parallelism,
        "edges": dict(sorted(kinds.items())), "reasons": dict(sorted(reasons.items())),
        "critical_path_nodes": [_path_entry(graph, i, prev) for prev, i in
                                zip((None, *shown[:-1]), shown)],
        "top_serialisers": [serialiser_dict(s) for s in top_serialisers(graph, top)],
        "warnings": list(graph.warnings),
    }


def _path_entry(graph: Graph, index: int, prev: int | None) -> dict[str, Any]:
    node = graph.nodes[index]
    entry = {**node_ref(node), "clock": [node.last_committed, node.sequence_number],
             "cost": node.cost, "finish": graph.finish[index], "edge": None}
    pred = graph.critical_pred[index]
    if pred is not None:
        edge = _edge(graph, pred, index)
        if edge is not None:
            entry["edge"] = edge_dict(graph, edge, max_keys=5)
    return entry


def transaction_dict(graph: Graph, x: TrxExplanation, *, chain_limit: int = 100) -> dict[str, Any]:
    """The JSON of one transaction (``--gtid`` / ``--pos``)."""
    node = x.node
    chain = x.chain[-chain_limit:]
    return {
        "files": list(graph.files), "mode": graph.mode, "cost_model": graph.cost_model,
        "transaction": {
            **node_ref(node), "clock": [node.last_committed, node.sequence_number],
            "segment": node.segment, "kind": node.kind, "reason": node.reason,
            "cost": node.cost, "start": x.start, "depth": x.depth,
            "on_critical_path": x.on_critical_path, "ancestors": x.ancestors,
            "overlap": x.overlap,
        },
        "waits_for": [edge_dict(graph, e) for e in x.waits_for],
        "blocks": [edge_dict(graph, e, max_keys=5) for e in x.blocks[:50]],
        "blocks_total": len(x.blocks),
        "chain_length": len(x.chain),
        "chain": [{**node_ref(graph.nodes[i]), "cost": graph.nodes[i].cost,
                   "finish": graph.finish[i]} for i in chain],
        "critical_path": graph.critical_path,
    }

