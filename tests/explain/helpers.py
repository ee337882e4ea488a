"""Builders for the explain tests: certify abstract transactions, graph them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from repltool.certify import CertifyOptions, CertTransaction, GarbageCollect, KeyRef, certify
from repltool.explain import Graph, build_graph, nodes_from_results
from repltool.schedule import ConstantCost

UUID1 = "11111111-1111-1111-1111-111111111111"
COST = ConstantCost(0.001)


def ws_key(name: str) -> tuple[int, KeyRef]:
    """A fake hash and a description for write-set item ``wsN`` (row ``id = N`` of test.t1)."""
    h = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")
    return h, KeyRef("test", "t1", "PRIMARY", (name.removeprefix("ws"),))


def trx(*items: str, gno: int, **kw: object) -> CertTransaction:
    pairs = [ws_key(i) for i in items]
    return CertTransaction(gtid=f"{UUID1}:{gno}", writeset=tuple(h for h, _ in pairs),
                           keys=tuple(k for _, k in pairs), **kw)  # type: ignore[arg-type]


def graph(items: Sequence[CertTransaction | GarbageCollect], mode: str = "group-replication",
          **options: object) -> Graph:
    results = list(certify(items, mode, CertifyOptions(**options)))  # type: ignore[arg-type]
    nodes, skipped = nodes_from_results(results, mode, COST)
    return build_graph(nodes, mode=mode, not_applied=skipped)


def edges_by_dst(g: Graph) -> dict[int, list[tuple[int, str, str, tuple[str, ...]]]]:
    """dst -> [(src, kind, reason, key values)]."""
    out: dict[int, list[tuple[int, str, str, tuple[str, ...]]]] = {}
    for e in g.edges:
        out.setdefault(e.dst, []).append(
            (e.src, e.kind.value, e.reason, tuple(v for k in e.keys for v in k.values)))
    return out


def key_edges(g: Graph) -> set[tuple[int, int, tuple[str, ...]]]:
    """(src, dst, values of the shared keys) of every edge that names keys."""
    return {(e.src, e.dst, tuple(v for k in e.keys for v in k.values))
            for e in g.edges if e.key_hashes}
