"""rich renderables for ``repltool certify`` (a :class:`~repltool.certify.report.CertifyReport`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..certify.summary import Parallelism
from ..stats import distance_bucket


def _buckets(p: Parallelism) -> dict[str, int]:
    """``sequence_number - last_committed`` in the buckets of ``repltool stats``."""
    out: Counter[str] = Counter()
    for d, n in p.distance.items():
        out[distance_bucket(d)] += n
    return dict(sorted(out.items(), key=lambda kv: int(kv[0].split("-")[0])))


def certify_renderables(report: Any) -> list[Any]:
    """Tables for people: the run, parallelism before -> after, reasons, re-tagged files."""
    from rich.table import Table
    from rich.text import Text
    s = report.summary
    out: list[Any] = []
    head = Table(title="certify", show_header=False)
    head.add_column("what")
    head.add_column("value")
    from .render import files_rows
    for row in files_rows(report.files):
        head.add_row(*row)
    head.add_row("log", "relay log" if report.relay_log else "binlog")
    head.add_row("mode", report.mode.value)
    cell, notes = _session_text(report)
    head.add_row("session order", cell)
    for k, v in report.options.items():
        if v not in (None, [], 0) or k == "history_size":
            head.add_row(k.replace("_", " "), ", ".join(v) if isinstance(v, list) else str(v))
    head.add_row("write sets", "extracted from rows" if report.writesets
                 else "not available: rows count as missing keys")
    head.add_row("transactions", f"{s.before.transactions:,}"
                 + (f" ({report.truncated_skipped} truncated skipped)"
                    if report.truncated_skipped else ""))
    head.add_row("changed", f"{s.changed:,}")
    if s.unassigned:
        head.add_row("no number", f"{s.unassigned:,} (GR local / rolled back)")
    out.append(head)
    out.extend(Text(f"note: {n}", style="yellow") for n in notes)
    out.append(_parallelism_table(report))
    dist = Table(title="sequence_number - last_committed")
    dist.add_column("distance")
    dist.add_column("before", justify="right")
    dist.add_column("after", justify="right")
    before = _buckets(s.before) if not report.without_clock else {}
    after = _buckets(s.after)
    for k in sorted({*before, *after}, key=lambda x: int(x.split("-")[0])):
        dist.add_row(k, f"{before.get(k, 0):,}" if before else "-", f"{after.get(k, 0):,}")
    out.append(dist)
    if report.fallback_transactions:
        out.append(_fallback_table(report))
    reasons = Table(title="last_committed by reason")
    reasons.add_column("reason")
    reasons.add_column("transactions", justify="right")
    reasons.add_column("share", justify="right")
    total = sum(s.reasons.values()) or 1
    for k, n in sorted(s.reasons.items(), key=lambda kv: -kv[1]):
        reasons.add_row(k, f"{n:,}", f"{n / total:.1%}")
    out.append(reasons)
    if report.retag:
        rt = Table(title="re-tagged files")
        for col in ("file", "GTID events changed", "log_pos updated", "bytes delta", "notes"):
            rt.add_column(col, justify="left" if col in ("file", "notes") else "right")
        for r in report.retag:
            notes = "relay log" if r.relay_log else ""
            if r.delta16_fallbacks:
                notes += f" {r.delta16_fallbacks} delta16 fallback(s)"
            rt.add_row(r.dst, f"{r.gtid_events_rewritten:,}", f"{r.log_pos_updated:,}",
                       f"{r.bytes_delta:+,}", notes.strip())
        out.append(rt)              # their warnings go to stderr (cli/certify.py)
    return out


def _session_text(report: Any) -> tuple[str, list[str]]:
    """The "session order" cell (``yes``/``no``) and notes on what the rule could not see."""
    if not report.session_order:
        return "no", []
    n = report.summary.before.transactions
    cell, notes = "yes", []
    if report.no_session:
        cell = f"yes, but {report.no_session:,} of {n:,} transactions have no session id"
        notes.append(f"{report.no_session:,} of {n:,} transactions have no session id in the "
                     "log (no Query event with a thread id: MariaDB's row-based DML), so the "
                     "session rule could not order them")
    if report.replicated and report.mode.value == "writeset-session":
        notes.append(f"{report.replicated:,} transactions were written by a replica's applier "
                     "(original_commit_timestamp differs from immediate_commit_timestamp): "
                     "MySQL's WRITESET_SESSION ordered those by the applier worker's session, "
                     "which the log does not record; repltool orders them by their "
                     "originating session (server_id, thread_id)")
    return cell, notes


def _fallback_table(report: Any) -> Any:
    from rich.table import Table
    from ..certify.model import Fallback
    after = ("applied after all before them" if report.mode.value == "group-replication"
             else "commit-order parent kept")
    t = Table(title=f"missing keys: {report.fallback_transactions:,} transaction(s) without "
                    f"a usable write set ({after})")
    t.add_column("reason")
    t.add_column("transactions", justify="right")
    t.add_column("what")
    for reason, n in report.fallbacks.items():
        t.add_row(reason, f"{n:,}", Fallback.describe(reason))
    return t


def _parallelism_table(report: Any) -> Any:
    from rich.table import Table
    s = report.summary
    t = Table(title="parallelism: logged -> computed")
    t.add_column("measure")
    t.add_column("logged", justify="right")
    t.add_column("computed", justify="right")
    if report.commit_id is not None:
        t.add_column("MariaDB commit_id", justify="right")
    b, a = s.before, s.after
    no_clock = report.without_clock > 0
    c = report.commit_id

    def row(name: str, before: str, after: str, mariadb: str = "-") -> None:
        cells = [name, "-" if no_clock else before, after]
        if c is not None:
            cells.append(mariadb)
        t.add_row(*cells)

    row("transactions", f"{b.transactions:,}", f"{a.transactions:,}", f"{c.transactions:,}"
        if c else "-")
    row("barriers (last_committed = 0)", f"{b.barriers:,} ({b.barrier_share:.1%})",
        f"{a.barriers:,} ({a.barrier_share:.1%})")
    row("windows (runs of one last_committed)", f"{b.windows:,}", f"{a.windows:,}",
        f"{c.groups:,} groups + {c.singletons:,} single" if c else "-")
    row("mean / max window", f"{b.mean_window:.2f} / {report.max_window_before}",
        f"{a.mean_window:.2f} / {report.max_window_after}",
        f"{c.mean_group:.2f} / {c.max_group}" if c else "-")
    row("mean distance", f"{b.mean_distance:.2f}", f"{a.mean_distance:.2f}")
    row("critical path (span)", f"{b.span:,}", f"{a.span:,}",
        f"{c.groups + c.singletons:,}" if c else "-")
    row("work / span", f"{b.parallelism:.2f}", f"{a.parallelism:.2f}",
        f"{c.parallelism:.2f}" if c else "-")
    if no_clock:
        t.caption = (f"{report.without_clock:,} transaction(s) have no logged clock "
                     "(MariaDB, MySQL 5.6, GTID-less)")
    return t
