"""``repltool explain`` output for people: tables for a log, a tree for one transaction.

rich is imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from ..escape import printable
from ..explain import Graph, Serialiser, TrxExplanation, serialisers
from ..explain.analysis import key_name, primary_edge
from ..explain.model import Edge, EdgeKind
from ..schedule.model import seconds

_TITLES = {
    "row": "hot rows (shared keys)",
    "table": "hot tables (shared keys, by table)",
    "no-key-table": "tables without a usable key (commit-order parent kept)",
    "ddl": "DDL and other statements without write set (run alone, reset the history)",
    "fk-parent": "foreign-key parents (writes to referenced tables serialise)",
    "session": "session chains (writeset-session / --session-order)",
    "barrier": "barriers (the applier waits for everything before)",
    "rule": "other rules",
}
_PATH_SHOWN = 15
_KEYS_SHOWN = 5


def _gtid(graph: Graph, index: int) -> str:
    n = graph.nodes[index]
    return f"#{index} {printable(n.gtid or 'ANONYMOUS')}"


def edge_line(graph: Graph, e: Edge, *, towards: bool = True, details: bool = True,
              gtids: bool = True) -> str:
    """``#12 0-1-25  key wl.t PRIMARY(3)  [parent, critical]``."""
    other = e.src if towards else e.dst
    what = e.reason
    if e.key_hashes:
        keys = [key_name(e.keys[i] if i < len(e.keys) else None, h)
                for i, h in enumerate(e.key_hashes[:_KEYS_SHOWN])]
        more = f" and {len(e.key_hashes) - _KEYS_SHOWN} more" if len(e.key_hashes) > _KEYS_SHOWN \
            else ""
        what = f"{e.reason}: " + "; ".join(keys) + more
    tags = e.kind.value + (", critical" if e.critical else "")
    text = f"{_gtid(graph, other) if gtids else f'#{other}'}  {what}  [{tags}]"
    if details and e.detail and not e.key_hashes:
        text += f" - {e.detail}"
    return printable(text)


def graph_renderables(graph: Graph, top: int = 10) -> list[Any]:
    """Summary, critical-path causes per kind, and the end of the critical path."""
    from rich.table import Table
    from rich.text import Text
    out: list[Any] = []
    head = Table(title="explain", show_header=False)
    head.add_column("what")
    head.add_column("value")
    from .render import files_rows
    for what, value in files_rows(graph.files):
        head.add_row(what, Text(value))
    head.add_row("clocks", "as logged (--mode recorded)" if graph.mode == "recorded"
                 else f"computed by certify --mode {graph.mode}")
    head.add_row("cost model", f"{graph.cost_model}: {graph.cost_description}")
    head.add_row("transactions", f"{len(graph.nodes):,}"
                 + (f" ({graph.not_applied} not applied: GR local / rolled back)"
                    if graph.not_applied else "")
                 + (f" ({graph.truncated_skipped} truncated skipped)"
                    if graph.truncated_skipped else ""))
    head.add_row("total cost (1 worker)", seconds(graph.total_cost))
    head.add_row("critical path", f"{seconds(graph.critical_path)} over "
                 f"{len(graph.critical_nodes):,} transactions (infinite workers)")
    head.add_row("average parallelism", f"{graph.parallelism:.2f} (work / span)")
    out.append(head)
    groups = serialisers(graph)
    for kind, items in groups.items():
        items = [s for s in items if s.edges or s.critical_edges]
        if not items:
            continue
        out.append(_serialiser_table(_TITLES.get(kind, kind), items[:top], len(items)))
    out.append(_path_table(graph))
    if graph.critical_nodes:
        out.append(Text("Waiting is attributed to the edge that delays each critical-path "
                        "transaction; shares are of the critical path's cost.", style="dim"))
    return out


def _serialiser_table(title: str, items: list[Serialiser], total: int) -> Any:
    from rich.table import Table
    from rich.text import Text
    t = Table(title=title + (f" - top {len(items)} of {total}" if total > len(items) else ""))
    t.add_column("cause", overflow="fold")
    t.add_column("edges", justify="right")
    t.add_column("on critical path", justify="right")
    t.add_column("share of critical path", justify="right")
    for s in items:
        t.add_row(Text(s.cause.name), f"{s.edges:,}", f"{s.critical_edges:,}",
                  f"{s.critical_share:.1%} ({seconds(s.critical_cost)})")
    return t


def _path_table(graph: Graph) -> Any:
    from rich.table import Table
    from rich.text import Text
    path = graph.critical_nodes
    shown = path[-_PATH_SHOWN:]
    t = Table(title=f"critical path - last {len(shown)} of {len(path)} transactions"
              if len(path) > len(shown) else "critical path")
    t.add_column("#", justify="right")
    t.add_column("gtid", overflow="fold")
    t.add_column("clock", no_wrap=True)
    t.add_column("cost", justify="right")
    t.add_column("finish", justify="right")
    t.add_column("waits for", overflow="fold")
    for i in shown:
        n = graph.nodes[i]
        pred = graph.critical_pred[i]
        why = ""
        if pred is not None:
            edge = next((e for e in graph.incoming(i) if e.src == pred), None)
            why = (edge_line(graph, edge, details=False, gtids=False) if edge is not None
                   else f"#{pred}")
        t.add_row(str(i), printable(n.gtid or "ANONYMOUS"),
                  f"({n.last_committed}, {n.sequence_number})",
                  seconds(n.cost), seconds(graph.finish[i]), Text(why))
    return t


def transaction_renderables(graph: Graph, x: TrxExplanation) -> list[Any]:
    """A tree: the transaction, what it waits for (edge by edge), its longest path, who
    waits for it."""
    from rich.text import Text
    from rich.tree import Tree as _Tree

    class Tree(_Tree):
        """Plain text labels: GTIDs, keys and ``[tags]`` are not rich markup."""

        def add(self, label: Any, **kw: Any) -> Any:  # type: ignore[override]
            node = super().add(Text(label) if isinstance(label, str) else label, **kw)
            node.__class__ = Tree
            return node
    n = x.node
    where = f" at {n.pos}" if n.pos is not None else ""
    root = Tree(Text(f"{_gtid(graph, n.index)}{where}  clock ({n.last_committed}, "
                     f"{n.sequence_number})  {n.kind}", style="bold"))
    info = root.add("position on the longest path")
    info.add(f"cost {seconds(n.cost)}; depth {seconds(x.depth)} (earliest start "
             f"{seconds(x.start)} with infinite workers)")
    info.add(f"critical path {seconds(graph.critical_path)}: "
             + ("this transaction is ON it" if x.on_critical_path else "not on it"))
    if n.statement:
        info.add(f"statement: {printable(n.statement)}")
    waits = root.add(f"waits for ({x.ancestors} transaction(s) directly or not; may overlap "
                     f"the {x.overlap} before it in the log)")
    primary = primary_edge(graph, n.index)
    if not x.waits_for:
        waits.add("nothing: it can start at once")
    if primary is not None:
        rule = ("the applier waits for every earlier transaction (barrier)"
                if primary.kind is EdgeKind.BARRIER else
                f"last_committed {n.last_committed}: everything up to "
                f"{_gtid(graph, primary.src)} in this segment")
        waits.add(Text(rule, style="dim"))
    for e in x.waits_for:
        waits.add(edge_line(graph, e))
    chain = root.add(f"longest path ending here ({len(x.chain)} transactions)")
    shown = x.chain[-10:]
    if len(x.chain) > len(shown):
        chain.add(f"... {len(x.chain) - len(shown)} before")
    for i in shown:
        chain.add(f"{_gtid(graph, i)}  cost {seconds(graph.nodes[i].cost)}  finish "
                  f"{seconds(graph.finish[i])}")
    blocks = root.add(f"waited for directly by {len(x.blocks)} transaction(s)")
    for e in x.blocks[:10]:
        blocks.add(edge_line(graph, e, towards=False))
    if len(x.blocks) > 10:
        blocks.add(f"... and {len(x.blocks) - 10} more")
    return [root]


__all__ = ["edge_line", "graph_renderables", "transaction_renderables"]
