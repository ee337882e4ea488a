"""Pictures of a window of the DAG: Graphviz DOT, Mermaid, and rendering with ``dot``.

A whole log is far too big to draw, so a picture shows a *window*: the
transactions within ``depth`` edges of one transaction (:func:`window_around`),
or a stretch of the log (:func:`window_range`), at most ``limit`` of them.
Edges point from the earlier transaction to the one that waits for it and are
labelled with the reason (and the key, for key conflicts).  Critical-path
transactions and edges are drawn in red; a transaction with dependencies
outside the window says how many in its label.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import deque
from collections.abc import Iterable, Sequence

from ..errors import InputError, UsageError
from ..escape import printable
from ..schedule.model import seconds
from .analysis import key_name
from .model import Edge, EdgeKind, Graph

_SUFFIXES = {".svg": "svg", ".png": "png"}
_LABEL_CHARS = 48
LEGEND = ("arrow: the later transaction waits for the earlier one  ·  solid: last_committed "
          "parent (and all before it)  ·  bold: barrier  ·  dashed blue: shared row  ·  "
          "dotted: clock prefix  ·  red: critical path")


def window_around(graph: Graph, index: int, depth: int = 2, limit: int = 60) -> list[int]:
    """Transactions within ``depth`` shown edges of ``index`` (both directions), nearest
    first, at most ``limit``; returned in log order."""
    if depth < 0 or limit < 1:
        raise UsageError("--depth must be >= 0 and --limit >= 1")
    dist = {index: 0}
    queue = deque([index])
    while queue:
        at = queue.popleft()
        if dist[at] >= depth:
            continue
        nxt = [e.src for e in graph.incoming(at)] + [e.dst for e in graph.outgoing(at)]
        for n in sorted(set(nxt), key=lambda n: abs(n - index)):
            if n not in dist:
                dist[n] = dist[at] + 1
                queue.append(n)
    chosen = sorted(dist, key=lambda n: (dist[n], abs(n - index), n))[:limit]
    return sorted(chosen)


def window_range(graph: Graph, start: int = 0, limit: int = 60) -> list[int]:
    """``limit`` transactions from index ``start``."""
    if limit < 1 or start < 0:
        raise UsageError("--limit must be >= 1")
    return list(range(start, min(len(graph.nodes), start + limit)))


def window_heaviest(graph: Graph, limit: int = 40) -> list[int]:
    """The ``limit`` consecutive transactions that hold the most critical-path cost
    (the earliest such run on a tie): where a picture explains the most.

    A log's first transactions are often set-up DDL, serial and cheap; the window
    that carries the heaviest part of the critical path is what limits the replica.
    """
    if limit < 1:
        raise UsageError("--limit must be >= 1")
    n = len(graph.nodes)
    if n <= limit:
        return list(range(n))
    weight = [0.0] * n
    for i in graph.critical_nodes:
        weight[i] = graph.nodes[i].cost
    run = sum(weight[:limit])
    best, start = run, 0
    for i in range(limit, n):
        run += weight[i] - weight[i - limit]
        if run > best + 1e-15:
            best, start = run, i - limit + 1
    return list(range(start, start + limit))


def _short_gtid(gtid: str | None) -> str:
    if gtid is None:
        return "ANONYMOUS"
    sid, sep, gno = gtid.rpartition(":")
    if sep and len(sid) > 13:
        return f"{sid[:8]}…:{gno}"
    return gtid


def _shorten(text: str, limit: int = _LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def node_text(graph: Graph, index: int, outside: int = 0) -> list[str]:
    """The lines of a node's label."""
    n = graph.nodes[index]
    lines = [f"#{n.index} {_short_gtid(n.gtid)}",
             f"({n.last_committed}, {n.sequence_number}) {n.kind}",
             f"cost {seconds(n.cost)} · depth {seconds(graph.finish[index])}"]
    if n.statement:
        lines.append(_shorten(n.statement, 36))
    if outside:
        lines.append(f"+{outside} dependencies outside the window")
    return lines


def edge_text(edge: Edge) -> str:
    """An edge's label: the reason, and the first shared key."""
    if edge.key_hashes:
        first = key_name(edge.keys[0] if edge.keys else None, edge.key_hashes[0])
        more = f" +{len(edge.key_hashes) - 1}" if len(edge.key_hashes) > 1 else ""
        label = f"{edge.reason}: {_shorten(first, 40)}{more}" if edge.reason != "key" \
            else f"key {_shorten(first, 40)}{more}"
        return label
    if edge.kind is EdgeKind.BARRIER:
        return f"{edge.reason}: {edge.detail.split(':')[0]}" if edge.reason == "barrier" \
            else edge.reason
    if edge.kind is EdgeKind.PREFIX:
        return f"clock prefix (lc: {edge.reason})"
    return edge.reason


def _selected(graph: Graph, nodes: Sequence[int]) -> tuple[set[int], list[Edge], dict[int, int]]:
    chosen = set(nodes)
    edges = [e for i in nodes for e in graph.incoming(i) if e.src in chosen]
    outside = {i: sum(1 for e in graph.incoming(i) if e.src not in chosen) for i in nodes}
    return chosen, edges, outside


def _dot_quote(text: str) -> str:
    """A DOT double-quoted string; each line of ``text`` :func:`printable` (GTIDs, statements
    and keys come from the log), the lines joined by DOT's ``\\n``."""
    return '"' + "\\n".join(printable(line).replace("\\", "\\\\").replace('"', '\\"')
                            for line in text.split("\n")) + '"'


def to_dot(graph: Graph, nodes: Sequence[int], *, focus: int | None = None,
           title: str | None = None) -> str:
    """Graphviz DOT of the window ``nodes`` (indexes)."""
    chosen, edges, outside = _selected(graph, nodes)
    critical = set(graph.critical_nodes)
    head = title or (f"{graph.mode}: {len(graph.nodes)} transactions, critical path "
                     f"{len(graph.critical_nodes)} trx / {seconds(graph.critical_path)}, "
                     f"parallelism {graph.parallelism:.2f}\n{LEGEND}")
    out = ["digraph explain {",
           f"  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, labelloc=t, "
           f"label={_dot_quote(head)}];",
           "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f4f6f8\", "
           "fontname=\"Helvetica\", fontsize=10];",
           "  edge [fontname=\"Helvetica\", fontsize=9];"]
    for i in sorted(chosen):
        attrs = [f"label={_dot_quote(chr(10).join(node_text(graph, i, outside[i])))}"]
        if i in critical:
            attrs.append('color="#c0392b", penwidth=2, fillcolor="#fdecea"')
        if i == focus:
            attrs.append('fillcolor="#fff3c4"')
        out.append(f"  n{i} [{', '.join(attrs)}];")
    for e in edges:
        attrs = [f"label={_dot_quote(edge_text(e))}"]
        style = {EdgeKind.PARENT: "solid", EdgeKind.BARRIER: "bold",
                 EdgeKind.KEY: "dashed", EdgeKind.PREFIX: "dotted"}[e.kind]
        attrs.append(f"style={style}")
        if e.critical:
            attrs.append('color="#c0392b", fontcolor="#c0392b", penwidth=2')
        elif e.kind is EdgeKind.KEY:
            attrs.append('color="#2c6fbb", fontcolor="#2c6fbb"')
        elif e.kind is EdgeKind.PREFIX:
            attrs.append('color="#888888", fontcolor="#888888"')
        out.append(f"  n{e.src} -> n{e.dst} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid labels are double-quoted strings: quotes and angle brackets as entities,
    # controls (a line feed would end the statement) as visible escapes.
    return (printable(text).replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;")
            .replace(">", "#gt;").replace("|", "#124;"))


def to_mermaid(graph: Graph, nodes: Sequence[int], *, focus: int | None = None) -> str:
    """A Mermaid ``flowchart`` of the window ``nodes``."""
    chosen, edges, outside = _selected(graph, nodes)
    critical = set(graph.critical_nodes)
    out = ["flowchart LR"]
    for i in sorted(chosen):
        label = "<br/>".join(_mermaid_text(t) for t in node_text(graph, i, outside[i]))
        out.append(f'  n{i}["{label}"]')
    arrows = {EdgeKind.PARENT: "-->", EdgeKind.BARRIER: "==>", EdgeKind.KEY: "-.->",
              EdgeKind.PREFIX: "-.->"}
    crit_links: list[int] = []
    for number, e in enumerate(edges):
        out.append(f'  n{e.src} {arrows[e.kind]}|"{_mermaid_text(edge_text(e))}"| n{e.dst}')
        if e.critical:
            crit_links.append(number)
    out.append("  classDef critical fill:#fdecea,stroke:#c0392b,stroke-width:2px")
    out.append("  classDef focus fill:#fff3c4")
    on_path = sorted(chosen & critical)
    if on_path:
        out.append(f"  class {','.join(f'n{i}' for i in on_path)} critical")
    if focus is not None and focus in chosen:
        out.append(f"  class n{focus} focus")
    if crit_links:
        out.append(f"  linkStyle {','.join(map(str, crit_links))} stroke:#c0392b,stroke-width:2px")
    return "\n".join(out) + "\n"


def dot_available() -> str | None:
    """The path of Graphviz's ``dot``, or None."""
    return shutil.which("dot")


def render(dot_source: str, path: str | os.PathLike[str],
           inputs: Iterable[str | os.PathLike[str]] = (), *, force: bool = False) -> None:
    """Render DOT to ``path`` (``.svg`` or ``.png``) with Graphviz's ``dot``, atomically.

    ``dot`` writes a temporary file that replaces ``path`` when it succeeded
    (:func:`repltool.outputs.atomic_path`): ``path`` may not be one of
    ``inputs`` (or a link to one), nor exist unless ``force``.

    :raises UsageError: for another suffix, when ``dot`` is not installed, or
        for a refused ``path``.
    :raises InputError: when ``dot`` fails.  :raises IOFailure: when the file
        cannot be written.
    """
    target = os.fspath(path)
    fmt = _SUFFIXES.get(os.path.splitext(target)[1].lower())
    if fmt is None:
        raise UsageError(f"--render {target}: the file name must end in .svg or .png")
    dot = dot_available()
    if dot is None:
        raise UsageError(f"--render {target}: Graphviz's dot is not installed (Debian: "
                         "apt-get install graphviz); --format dot prints the graph instead")
    from ..outputs import atomic_path
    with atomic_path(target, inputs, force=force, option="--render") as tmp:
        try:
            done = subprocess.run([dot, f"-T{fmt}", "-o", tmp], input=dot_source.encode(),
                                  capture_output=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InputError(f"--render {target}: running dot failed: {exc}") from exc
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise InputError(f"--render {target}: dot exited {done.returncode}: "
                             f"{message[0] if message else 'no message'}")

