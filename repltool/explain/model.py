"""Values of :mod:`repltool.explain`: the transactions (:class:`Node`), why one waits for
another (:class:`Edge`), the whole DAG (:class:`Graph`) and its top serialisers.

Everything is frozen.  Times are in the cost model's unit (seconds), the same
unit ``repltool schedule`` reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..certify.model import KeyRef
from ..positions import Position


class EdgeKind(str, Enum):
    """How a transaction waits for an earlier one (what the replica's applier enforces).

    The applier reads only ``(last_committed, sequence_number)``: transaction
    *j* may start once every transaction of its clock run with
    ``sequence_number <= last_committed(j)`` is done, and a barrier once every
    earlier transaction is done (format spec 6d).  That DAG is dense; the
    edges shown are a reduction of it that keeps it honest:
    """

    PARENT = "parent"
    """*src* is the last transaction with ``sequence_number <= last_committed(dst)``:
    the edge stands for *src* and everything before it in the run."""
    BARRIER = "barrier"
    """*dst* waits for every earlier transaction; *src* is its predecessor."""
    KEY = "key"
    """*src* was the last earlier writer of a key *dst* writes, and the clock
    orders them (implied by the parent edge, shown because it names a row)."""
    PREFIX = "prefix"
    """*src* is the critical predecessor of *dst* (the one it waits for
    longest), reached through the parent/barrier rule but not its endpoint."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One applied transaction, with what the clock source says about it.

    :ivar index: 0-based position in the applied stream (transactions a
        replica never applies - GR local or rolled back - are not nodes).
    :ivar gtid: in the log's spelling (``uuid:gno``, MariaDB ``d-s-n``).
    :ivar last_committed, sequence_number: the clock the DAG is built from
        (logged, or computed by certify).
    :ivar new_source_file: a new clock segment begins here (barrier).
    :ivar reason: why ``last_committed`` has its value: a
        :class:`~repltool.certify.model.Reason` value, or ``commit-order``
        for a logged clock (the log does not say why).
    :ivar key, key_hash: the write-set key that set ``last_committed``.
    :ivar writeset, keys: every key hash written, and its description.
    :ivar missing_key_tables, fk_parent_tables: tables without a usable key,
        tables referenced by a foreign key (from the write set).
    :ivar statement: the start of a DDL statement, when known.
    """

    index: int
    gtid: str | None
    pos: Position | None
    last_committed: int
    sequence_number: int
    cost: float
    segment: str = ""
    new_source_file: bool = False
    kind: str = "dml"
    reason: str = "commit-order"
    key: KeyRef | None = None
    key_hash: int | None = None
    detail: str = ""
    writeset: tuple[int, ...] = ()
    keys: tuple[object, ...] = ()      # CertTransaction.keys: described by certify.key_ref
    tables: tuple[str, ...] = ()
    missing_key_tables: tuple[str, ...] = ()
    fk_parent_tables: tuple[str, ...] = ()
    session: tuple[int, int] | None = None
    end_offset: int | None = None
    statement: str | None = None

    @property
    def name(self) -> str:
        """``#index gtid`` for messages."""
        return f"#{self.index}" + (f" {self.gtid}" if self.gtid else "")


@dataclass(frozen=True, slots=True)
class Edge:
    """*dst* cannot start before *src* is done, and why.

    :ivar reason: the rule (:class:`~repltool.certify.model.Reason` values,
        ``barrier``, ``commit-order``...).
    :ivar keys: shared keys (reason ``key``, and every :attr:`EdgeKind.KEY` edge).
    :ivar critical: the edge is on the critical path.
    """

    src: int
    dst: int
    kind: EdgeKind
    reason: str
    keys: tuple[KeyRef, ...] = ()
    key_hashes: tuple[int, ...] = ()
    detail: str = ""
    critical: bool = False


@dataclass(frozen=True, slots=True)
class Cause:
    """What a dependency is attributed to: ``kind`` and a name.

    Kinds: ``row`` (a key), ``table`` (the table of the key), ``no-key-table``,
    ``ddl``, ``fk-parent``, ``session``, ``barrier`` and ``rule`` (the other
    certification rules: commit-order, file-start, gc-window, view-change,
    history-reset, empty...).
    """

    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Serialiser:
    """A cause and how much it serialises.

    :ivar edges: dependencies it causes (each transaction's parent or barrier
        edge counts once for its cause; key edges count for their row and table).
    :ivar critical_edges: critical-path edges attributed to it.
    :ivar critical_cost: the cost of the transactions at the heads of those
        edges: how much of the critical path waits because of this cause.
    :ivar critical_share: ``critical_cost / critical_path``.
    """

    cause: Cause
    edges: int
    critical_edges: int
    critical_cost: float
    critical_share: float


@dataclass(frozen=True, slots=True)
class Graph:
    """The dependency DAG of a log, its critical path and per-transaction depth.

    :ivar finish: per node, the longest cost-weighted path ending at it
        (its earliest finish with infinite workers).
    :ivar critical_pred: per node, the predecessor it waits for longest.
    :ivar critical_nodes: the critical path, first to last.
    :ivar critical_path: its length; equals
        :func:`repltool.schedule.critical_path` of the same clocks and costs.
    """

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    finish: tuple[float, ...]
    critical_pred: tuple[int | None, ...]
    critical_nodes: tuple[int, ...]
    critical_path: float
    total_cost: float
    mode: str = "recorded"
    cost_model: str = ""
    cost_description: str = ""
    warnings: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    not_applied: int = 0
    truncated_skipped: int = 0
    _incoming: dict[int, tuple[Edge, ...]] = field(default_factory=dict, repr=False,
                                                   compare=False)
    _outgoing: dict[int, tuple[Edge, ...]] = field(default_factory=dict, repr=False,
                                                   compare=False)

    def __post_init__(self) -> None:
        inc: dict[int, list[Edge]] = {}
        out: dict[int, list[Edge]] = {}
        for e in self.edges:
            inc.setdefault(e.dst, []).append(e)
            out.setdefault(e.src, []).append(e)
        self._incoming.update({k: tuple(v) for k, v in inc.items()})
        self._outgoing.update({k: tuple(v) for k, v in out.items()})

    @property
    def parallelism(self) -> float:
        """Average parallelism: work / span (``total_cost / critical_path``)."""
        return self.total_cost / self.critical_path if self.critical_path > 0 else 1.0

    def incoming(self, index: int) -> tuple[Edge, ...]:
        """The edges shown into node ``index`` (what it waits for)."""
        return self._incoming.get(index, ())

    def outgoing(self, index: int) -> tuple[Edge, ...]:
        """The edges shown out of node ``index`` (who waits for it directly)."""
        return self._outgoing.get(index, ())

    def chain(self, index: int) -> list[int]:
        """The longest path ending at ``index``, first to last."""
        path = [index]
        pred = self.critical_pred[index]
        while pred is not None:
            path.append(pred)
            pred = self.critical_pred[pred]
        path.reverse()
        return path
