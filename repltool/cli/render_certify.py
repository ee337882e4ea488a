"""rich renderables for ``repltool certify`` (a :class:`~repltool.certify.report.CertifyReport`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..certify.summary import Parallelism
from ..escape import printable
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
    s = report.summary
    out: list[Any] = []
    head = Table(title="certify", show_header=False)
    head.add_column("what")
    head.add_column("value")
    head.add_row("files", printable(", ".join(report.files)))
    head.add_row("log", "relay log" if report.relay_log else "binlog")
    head.add_row("mode", report.mode.value)
    head.add_row("session order", "yes" if report.session_order else "no")
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
