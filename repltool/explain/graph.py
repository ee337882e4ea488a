"""The dependency DAG the replica's applier enforces, and its critical path.

:func:`build_graph` reads the nodes' ``(last_committed, sequence_number)``
exactly as :func:`repltool.schedule.critical_path` does (same barrier rules,
from :func:`~repltool.schedule.logical_clock.classify`, same runs, same
floating-point operations), so ``graph.critical_path`` *equals*
``critical_path(...)`` of the same clocks and costs: it is the makespan with
infinite workers, no coordinator overhead and no commit order.

The DAG itself - *j* waits for every *i* of its run with
``sequence_number(i) <= last_committed(j)``, a barrier for everything
before it - has up to n²/2 edges.  The edges kept (see
:class:`~repltool.explain.model.EdgeKind`):

* one *parent* edge per transaction, to the last transaction of its run with
  ``sequence_number <= last_committed`` (normally the one with
  ``sequence_number == last_committed``); it stands for that transaction and
  everything before it, because a logical clock cannot say less;
* one *barrier* edge per barrier, to its predecessor ("waits for all");
* every *key* edge: the last earlier writer of each key, when the clock
  orders the two (these are implied by the parent edge but name the row);
* a *prefix* edge to the critical predecessor when it is none of the above,
  so that the critical path can always be drawn with shown edges.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ..certify.model import KeyRef, key_ref
from ..errors import UsageError
from ..schedule.logical_clock import check_cost, classify
from ..schedule.model import SimTransaction
from .model import Edge, EdgeKind, Graph, Node


def to_sim(node: Node) -> SimTransaction:
    """The simulator's view of a node (clock, cost, segment start)."""
    return SimTransaction(last_committed=node.last_committed,
                          sequence_number=node.sequence_number, cost=node.cost,
                          pos=node.pos, gtid=node.gtid, new_source_file=node.new_source_file)


def barrier_rule(node: Node, first: bool, last_seq: int, lenient_problem: bool) -> tuple[str, str]:
    """``(reason, detail)`` of a barrier, in the order ``schedule_next_event`` checks."""
    lc, sn = node.last_committed, node.sequence_number
    if lenient_problem:
        return "barrier", "inconsistent clock: scheduled as a barrier (--lenient)"
    if first:
        return "file-start", "file start: first transaction of a source binlog"
    if sn == 0:
        if node.reason == "view-change":
            return "view-change", "view change: GR View_change (0, 0), applied alone"
        return "barrier", "(0, 0) clock: applied alone"
    if lc == 0:
        return "barrier", "last_committed = 0: waits for every earlier transaction"
    if last_seq == 0:
        return "barrier", "after (0, 0): follows a transaction applied alone"
    return "barrier", f"sequence_number gap: {last_seq} -> {sn}"


class _KeyHistory:
    """Last writer of each key hash in the current segment."""

    def __init__(self) -> None:
        self.last: dict[int, int] = {}

    def shared(self, node: Node) -> dict[int, list[tuple[int, KeyRef | None]]]:
        """Earlier writer -> [(hash, key)] for each distinct hash of ``node``."""
        out: dict[int, list[tuple[int, KeyRef | None]]] = {}
        seen: set[int] = set()
        for i, h in enumerate(node.writeset):
            if h in seen:
                continue
            seen.add(h)
            src = self.last.get(h)
            if src is not None:
                key = key_ref(node.keys[i]) if i < len(node.keys) else None
                out.setdefault(src, []).append((h, key))
        return out

    def record(self, node: Node) -> None:
        for h in node.writeset:
            self.last[h] = node.index


def build_graph(nodes: Sequence[Node], *, lenient: bool = False, **meta: object) -> Graph:
    """Build the :class:`Graph` of ``nodes`` (applied transactions in relay order).

    :param lenient: as ``repltool schedule --lenient``: inconsistent clocks
        become barriers with a warning instead of an error.
    :param meta: further :class:`Graph` fields (``mode``, ``cost_model``...).
    :raises SimulationError: on inconsistent clocks (unless ``lenient``) or
        an invalid cost, exactly where ``critical_path`` raises.
    """
    finish: list[float] = []
    pred_of: list[int | None] = []
    edges: list[Edge] = []
    warnings: list[str] = []
    run_seq: list[int] = []
    run_best: list[int] = []        # per run prefix: index of the node finishing last
    run_start = 0
    best: int | None = None         # over every node so far
    last_seq = 0
    keys = _KeyHistory()
    for index, node in enumerate(nodes):
        if node.index != index:
            raise UsageError(f"node {node.name} is at position {index}: indexes must be 0..n-1")
        sim = to_sim(node)
        check_cost(sim, index)
        before = len(warnings)
        previous_seq = last_seq
        barrier, last_seq = classify(sim, index, last_seq, lenient, warnings)
        sn, lc = node.sequence_number, node.last_committed
        first = index == 0 or node.new_source_file
        if first:
            keys = _KeyHistory()
        if node.new_source_file or not run_seq or sn <= run_seq[-1]:
            run_seq, run_best, run_start = [], [], index
        own: list[Edge] = []
        if barrier:
            pred = best
            done = finish[pred] if pred is not None else 0.0
            if index > 0:
                reason, detail = barrier_rule(node, first, previous_seq, len(warnings) > before)
                own.append(Edge(index - 1, index, EdgeKind.BARRIER, reason,
                                detail=f"{detail}; waits for all {index} earlier"))
            k = 0
        else:
            k = bisect_right(run_seq, lc)
            pred = run_best[k - 1] if k else None
            done = finish[pred] if pred is not None else 0.0
            if k:
                parent = run_start + k - 1
                own.append(_parent_edge(node, nodes[parent], parent))
        f = done + node.cost
        _add_key_edges(own, node, keys.shared(node), barrier, k, run_start, run_seq)
        if pred is not None and all(e.src != pred for e in own):
            primary = own[0]
            own.append(Edge(pred, index, EdgeKind.PREFIX, primary.reason,
                            detail=f"waits longest for #{pred}, which is before "
                                   f"#{primary.src} ({primary.kind.value} edge)"))
        edges.extend(own)
        keys.record(node)
        finish.append(f)
        pred_of.append(pred)
        run_seq.append(sn)
        run_best.append(index if not run_best or f >= finish[run_best[-1]] else run_best[-1])
        if best is None or f >= finish[best]:
            best = index
    critical: list[int] = []
    at = best
    while at is not None:
        critical.append(at)
        at = pred_of[at]
    critical.reverse()
    on_path = set(zip(critical, critical[1:]))
    edges = [_mark(e) if (e.src, e.dst) in on_path else e for e in edges]
    total = sum(n.cost for n in nodes)
    return Graph(nodes=tuple(nodes), edges=tuple(edges), finish=tuple(finish),
                 critical_pred=tuple(pred_of), critical_nodes=tuple(critical),
                 critical_path=finish[best] if best is not None else 0.0,
                 total_cost=total, warnings=tuple(warnings), **meta)  # type: ignore[arg-type]


def _mark(edge: Edge) -> Edge:
    from dataclasses import replace
    return replace(edge, critical=True)


def _parent_edge(node: Node, parent: Node, index: int) -> Edge:
    lc = node.last_committed
    if node.reason == "commit-order" and not node.detail:
        detail = f"last_committed = {lc} (logged; the log does not say why)"
    else:
        detail = node.detail or node.reason
    if parent.sequence_number != lc:
        detail += f"; #{index} has the last sequence_number <= {lc}"
    keys: tuple[KeyRef, ...] = ()
    hashes: tuple[int, ...] = ()
    if node.reason == "key" and node.key_hash is not None:
        hashes = (node.key_hash,)
        keys = (node.key,) if node.key is not None else ()
    return Edge(index, node.index, EdgeKind.PARENT, node.reason, keys=keys,
                key_hashes=hashes, detail=detail)


def _add_key_edges(own: list[Edge], node: Node,
                   shared: dict[int, list[tuple[int, KeyRef | None]]], barrier: bool,
                   k: int, run_start: int, run_seq: list[int]) -> None:
    """Merge shared keys into ``own``: into the edge with the same source, or new key edges.

    A key is shown only where the clock orders the two transactions
    (otherwise the applier may run them in parallel: nothing to explain).
    """
    for src in sorted(shared):
        ordered = barrier or (src >= run_start and src - run_start < k) or (
            src < run_start and k > 0)
        if not ordered:
            continue
        pairs = shared[src]
        for i, e in enumerate(own):
            if e.src == src:
                known = set(e.key_hashes)
                extra = [(h, key) for h, key in pairs if h not in known]
                own[i] = Edge(e.src, e.dst, e.kind, e.reason,
                              keys=e.keys + tuple(key for _, key in extra if key is not None),
                              key_hashes=e.key_hashes + tuple(h for h, _ in extra),
                              detail=e.detail)
                break
        else:
            own.append(Edge(src, node.index, EdgeKind.KEY, "key",
                            keys=tuple(key for _, key in pairs if key is not None),
                            key_hashes=tuple(h for h, _ in pairs),
                            detail=f"#{src} last wrote {len(pairs)} key(s) this transaction "
                                   "writes (implied by the clock)"))
