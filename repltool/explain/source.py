"""Nodes from logs or from certification results, costed like ``repltool schedule``.

Two clock sources:

* ``recorded``: the logged ``last_committed`` / ``sequence_number``, read
  exactly as ``repltool schedule`` reads them
  (:func:`repltool.schedule.source.transactions_to_sim`: same source-file
  starts, same skipped truncated groups, same ``--lenient``), so the critical
  path is the one ``schedule`` reports;
* a certify mode (``commit-order``, ``writeset``, ``writeset-session``,
  ``group-replication``): the clocks :func:`repltool.certify.certify`
  computes, with the reason and key behind each ``last_committed``; write
  sets come from :mod:`repltool.writeset`.  Transactions certification
  gives no number (GR local or rolled back) are not applied: not nodes.

Costs come from a :mod:`repltool.schedule.cost` model applied to the same
:class:`~repltool.schedule.model.SimTransaction` fields ``schedule`` uses
(size, rows events, events, commit timestamp).
"""

from __future__ import annotations

import dataclasses
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..certify.model import CertifyOptions, CertResult, Mode
from ..certify.report import CertifyRun
from ..certify.stitched import PairsRun
from ..certify.source import log_gtid
from ..errors import SimulationError, UsageError
from ..paths import Paths, path_list
from ..schedule.cost import CostModel, LinearCost
from ..schedule.model import SimTransaction
from .graph import build_graph
from .model import Graph, Node

if TYPE_CHECKING:
    from ..binlog.transactions import Transaction
    from ..binlog.damage import DamageLog
    from ..binlog.window import Window

RECORDED = "recorded"
#: ``--mode`` values: the logged clocks, or one of certify's algorithms.
MODES = (RECORDED, *(m.value for m in Mode))
_STATEMENT_CHARS = 60


def _description(model: CostModel) -> str:
    from ..schedule.source import cost_description
    return cost_description(model)


def _costed(metas: list[dict[str, Any]], sims: Iterable[SimTransaction],
            model: CostModel) -> list[Node]:
    """Apply ``model`` to ``sims`` and make one node per (meta, costed sim)."""
    nodes = []
    for index, (meta, sim) in enumerate(zip(metas, model.apply(sims))):
        nodes.append(Node(index=index, gtid=sim.gtid, pos=sim.pos,
                          last_committed=sim.last_committed,
                          sequence_number=sim.sequence_number, cost=sim.cost,
                          new_source_file=sim.new_source_file, **meta))
    return nodes


# ---- certification results (library input, tests) ----

def nodes_from_results(results: Iterable[CertResult], mode: Mode | str,
                       cost_model: CostModel | None = None) -> tuple[list[Node], int]:
    """Nodes from :class:`~repltool.certify.model.CertResult` values (no log needed).

    Every transaction costs what ``cost_model`` (default
    :class:`~repltool.schedule.cost.LinearCost`) gives a transaction of no
    bytes, rows or events, unless the model reads GTIDs (``csv``).

    :returns: the nodes and the number of results without a number (not applied).
    """
    mode = Mode(mode)
    metas: list[dict[str, Any]] = []
    sims: list[SimTransaction] = []
    skipped = 0
    previous: str | None = None
    for r in results:
        if r.computed is None:
            skipped += 1
            continue
        t = r.trx
        new = previous is None or (mode is not Mode.GROUP_REPLICATION
                                   and (t.new_file or t.file != previous))
        previous = t.file
        lc, sn = r.computed
        sims.append(SimTransaction(last_committed=lc, sequence_number=sn, pos=t.pos,
                                   gtid=log_gtid(t.gtid), new_source_file=new,
                                   commit_ts=int(t.commit_time * 1e6)
                                   if t.commit_time is not None else None))
        metas.append(_result_meta(r))
    model = cost_model or cast(CostModel, LinearCost())
    return _costed(metas, sims, model), skipped


def _result_meta(r: CertResult, trx: Transaction | None = None,
                 ws: Any = None) -> dict[str, Any]:
    t = r.trx
    kind = "ddl" if t.ddl else "empty" if t.empty else "view-change" if t.view_change else "dml"
    meta: dict[str, Any] = dict(
        segment=t.file, kind=kind, reason=r.reason.value, key=r.key, key_hash=r.key_hash,
        detail=r.detail, writeset=t.writeset, keys=t.keys, session=t.session,
        missing_key_tables=("(table without usable key)",) if t.missing_keys else (),
        fk_parent_tables=("(table referenced by a foreign key)",) if t.fk_parent else ())
    if trx is not None:
        meta.update(kind=trx.kind, tables=trx.tables, end_offset=trx.end_offset,
                    statement=_statement(trx) if (trx.kind == "ddl" or t.ddl
                                                  or r.reason.value == "ddl") else None)
        if ws is not None:
            if ws.missing_key_tables:
                meta["missing_key_tables"] = tuple(ws.missing_key_tables)
            if ws.fk_parent_tables:
                meta["fk_parent_tables"] = tuple(ws.fk_parent_tables)
        elif t.missing_keys and trx.tables:
            meta["missing_key_tables"] = tuple(trx.tables)
    return meta


def _statement(trx: Transaction) -> str | None:
    """The first statement of a DDL group, shortened (needs the events)."""
    from ..binlog.events import QueryBody
    for ev in trx.events:
        body = getattr(ev, "body", None)
        if isinstance(body, QueryBody):
            text = " ".join(body.text.split())
            if text.upper() not in ("BEGIN", "COMMIT"):
                return text if len(text) <= _STATEMENT_CHARS else text[:_STATEMENT_CHARS - 1] + "…"
    return None


# ---- logs ----

def explain_log(paths: Paths, mode: str = RECORDED, *,
                cost_model: CostModel | None = None, options: CertifyOptions | None = None,
                schema_paths: Sequence[str | os.PathLike[str]] = (), lenient: bool = False,
                verify_checksum: bool = True, window: Window | None = None,
                schema_db: str | None = None, damage: DamageLog | None = None) -> Graph:
    """Read logs and build their dependency :class:`Graph`.

    :param mode: ``recorded`` (the logged clocks) or a certify mode.
    :param cost_model: default :class:`~repltool.schedule.cost.LinearCost`
        (``repltool schedule``'s default).
    :param options: certification knobs (baseline, history size, GR garbage
        collection...); certify modes only.
    :param schema_paths: ``CREATE TABLE`` files for write-set extraction.
    :param schema_db: the database of their unqualified tables (``--schema-db``).
    :param damage: read with ``keep_going``: damaged regions are skipped and recorded
        in it; the transactions they cut are truncated (not nodes).
    :param lenient: inconsistent clocks (and, in recorded mode, transactions
        without a clock) become barriers with warnings.
    :param window: only the transactions in this window
        (:meth:`repltool.binlog.window.Window.select`), as if the logs held only them.
    :raises UsageError: on an unknown mode.
    :raises ReplToolError: from reading, certifying or the clock rules.
    """
    files = tuple(path_list(paths))
    if mode == RECORDED:
        return explain_prepared(files, mode,
                                _recorded_source(files, verify_checksum, window, damage),
                                cost_model=cost_model, lenient=lenient)
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    run = _WritesetKeepingRun(files, Mode(mode), options, verify_checksum=verify_checksum,
                              schema_paths=schema_paths, window=window, schema_db=schema_db,
                              damage=damage)
    return explain_prepared(files, mode, run, cost_model=cost_model, lenient=lenient)


def explain_prepared(files: Sequence[str], mode: str, source: Any, *,
                     cost_model: CostModel | None = None, lenient: bool = False) -> Graph:
    """:func:`explain_log` over inputs read elsewhere (``repltool explain --spark``).

    :param source: ``recorded``: ``(transactions, rotations)``, the transactions
        of one ordered read of ``files`` and a
        :class:`~repltool.schedule.source.SourceRotations` that saw (or sees,
        as they are read) its FDE/Rotate headers; a certify mode: a
        :class:`~repltool.certify.report.CertifyRun` that keeps write sets
        (:class:`ExplainPairsRun` for pairs read elsewhere), not yet iterated.
    """
    model = cost_model or cast(CostModel, LinearCost())
    files = tuple(files)
    meta = dict(mode=mode, cost_model=model.name, cost_description=_description(model),
                files=files)
    if mode == RECORDED:
        transactions, rotations = source
        try:
            nodes, stats = _recorded_nodes(transactions, rotations, model, lenient)
        except SimulationError as exc:
            if "no logical clock" not in exc.reason:
                raise
            raise SimulationError(
                # the reason, without the remedy it names (schedule's options)
                exc.reason.split("; ")[0] + "; compute clocks from write sets "
                "with --mode writeset (MariaDB: also --baseline serial)", pos=exc.pos) from exc
        graph = build_graph(nodes, lenient=lenient, truncated_skipped=stats.truncated_skipped,
                            **meta)
        if stats.warnings:
            graph = dataclasses.replace(graph, warnings=(*stats.warnings, *graph.warnings))
        return graph
    nodes, skipped, run = _certified_nodes(source, Mode(mode), model)
    graph = build_graph(nodes, lenient=lenient, not_applied=skipped,
                        truncated_skipped=run.truncated_skipped, **meta)
    if run.warnings:
        graph = dataclasses.replace(graph, warnings=(*run.warnings, *graph.warnings))
    return graph


def _recorded_source(files: Sequence[str], verify_checksum: bool,
                     window: Window | None = None,
                     damage: DamageLog | None = None) -> tuple[Any, Any]:
    from ..binlog import ReadOptions, read_events
    from ..binlog.transactions import GROUPING_TYPES, group_transactions
    from ..schedule.source import SourceRotations

    rotations = SourceRotations()
    options = ReadOptions(verify_checksum=verify_checksum, types=GROUPING_TYPES,
                          keep_going=damage is not None)
    events = rotations.watch(read_events(list(files), options))
    trxs = group_transactions(damage.count(events) if damage is not None else events,
                              keep_events=window is not None and window.needs_events)
    if damage is not None:
        from ..binlog.damage import cut_tails
        trxs = cut_tails(trxs)
    return (window.select(trxs, files) if window is not None else trxs), rotations


def _recorded_nodes(transactions: Iterable[Transaction], rotations: Any, model: CostModel,
                    lenient: bool) -> tuple[list[Node], Any]:
    from ..schedule.source import SourceStats, transactions_to_sim

    kept: deque[Transaction] = deque()

    def keep(transactions: Iterable[Transaction]) -> Iterator[Transaction]:
        for t in transactions:
            if not t.truncated:
                kept.append(t)
            yield t

    stats = SourceStats()
    sims = transactions_to_sim(keep(transactions), relay=rotations,
                               lenient=lenient, stats=stats)
    metas: list[dict[str, Any]] = []
    pending: list[SimTransaction] = []
    for sim in sims:
        trx = kept.popleft()
        pending.append(sim)
        session = (trx.server_id, trx.thread_id) if trx.thread_id is not None else None
        metas.append(dict(segment=trx.segment or trx.start.file, kind=trx.kind,
                          reason="commit-order", tables=trx.tables, session=session,
                          end_offset=trx.end_offset))
    return _costed(metas, pending, model), stats


def _certified_nodes(run: Any, mode: Mode, model: CostModel) -> tuple[list[Node], int, Any]:
    metas: list[dict[str, Any]] = []
    sims: list[SimTransaction] = []
    skipped = 0
    previous: str | None = None
    for trx, r in run:
        ws = run.writesets.pop(trx.start, None)
        if r.computed is None:
            skipped += 1
            continue
        segment = r.trx.file
        new = previous is None or (mode is not Mode.GROUP_REPLICATION
                                   and (r.trx.new_file or segment != previous))
        previous = segment
        lc, sn = r.computed
        sims.append(SimTransaction(
            last_committed=lc, sequence_number=sn, pos=trx.start, gtid=trx.gtid,
            new_source_file=new, size=trx.size,
            rows=sum(count for _, count in trx.rows_events), events=trx.num_events,
            commit_ts=trx.immediate_commit_timestamp))
        metas.append(_result_meta(r, trx, ws))
    return _costed(metas, sims, model), skipped, run


class _KeepWritesets:
    """For a :class:`~repltool.certify.report.CertifyRun`: keep each write set (its
    tables without key and FK parents) by transaction position until it is read."""

    writesets: dict[Any, Any]

    def _pairs(self) -> Iterator[tuple[Transaction, Any]]:
        kept = self.writesets = getattr(self, "writesets", {})
        for trx, ws in super()._pairs():  # type: ignore[misc]
            if ws is not None:
                kept[trx.start] = ws
            yield trx, ws


class _WritesetKeepingRun(_KeepWritesets, CertifyRun):
    """A run that reads the logs and keeps the write sets."""


class ExplainPairsRun(_KeepWritesets, PairsRun):
    """A :class:`~repltool.certify.stitched.PairsRun` for :func:`explain_prepared`."""
