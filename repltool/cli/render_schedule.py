"""``repltool schedule`` output for people: rich tables, and the matplotlib plot.

rich and matplotlib are imported inside the functions that need them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import IOFailure, UsageError
from ..escape import printable
from ..schedule import format_bitmap
from ..schedule.model import SimResult, seconds
from ..schedule.source import ScheduleReport

_WAITS = {"lwm": "LWM", "barrier": "barrier", "no_free_worker": "no worker",
          "gaq_full": "GAQ full", "commit_order": "commit order"}
_BAR = 30
_MAX_GAPS = 30


def ranges(indexes: Sequence[int]) -> str:
    """Compress sorted relay indexes into ranges.

    >>> ranges([1, 2, 3, 7, 9, 10])
    '1-3, 7, 9-10'
    """
    parts: list[str] = []
    last: int | None = None
    for i in indexes:
        if parts and last is not None and i == last + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{i}"
        else:
            parts.append(str(i))
        last = i
    return ", ".join(parts)


def recommendation(report: ScheduleReport) -> str:
    """The sentence that names the worker count to configure."""
    sw = report.sweep
    k = sw.recommended
    counts = [r.workers for r in sw.results]
    if k == counts[-1] and len(counts) > 1:
        return (f"speed-up still grows up to {k} workers (the largest count tried): "
                f"replica_parallel_workers = {k}, or try more")
    return (f"more than {k} worker{'s' if k != 1 else ''} gains < {sw.threshold:.0%}: "
            f"replica_parallel_workers = {k}")


def schedule_renderables(report: ScheduleReport) -> list[Any]:
    """rich renderables for a :class:`~repltool.schedule.source.ScheduleReport`."""
    from rich.text import Text
    out: list[Any] = [_summary(report), _curve(report), _waits(report),
                      Text(recommendation(report), style="bold")]
    for warning in report.stats.warnings[:20]:
        out.append(Text(f"warning: {printable(str(warning))}", style="yellow"))
    if len(report.stats.warnings) > 20:
        out.append(Text(f"... and {len(report.stats.warnings) - 20} more warnings",
                        style="yellow"))
    if report.recovery is not None and report.detail is not None:
        out.extend(_recovery(report))
    return out


def _files_rows(t: Any, files: Any) -> None:
    """The ``directory`` (common to the files, when there is one) and ``files`` rows."""
    from .render import files_rows
    for row in files_rows(files, "\n"):
        t.add_row(*row)


def _summary(report: ScheduleReport) -> Any:
    from rich.table import Table
    sw, st, cfg = report.sweep, report.stats, report.config
    t = Table(title="Schedule simulation (LOGICAL_CLOCK applier)", show_header=False)
    t.add_column("what")
    t.add_column("value")
    _files_rows(t, report.files)
    trx = f"{st.transactions:,}"
    if st.truncated_skipped:
        trx += f" ({st.truncated_skipped} truncated skipped)"
    t.add_row("transactions", trx)
    t.add_row("source binlogs", f"{st.source_files}" + (" (relay log)" if st.relay_log else ""))
    t.add_row("cost model", f"{report.cost_model}: {report.cost_description}")
    t.add_row("applier", f"policy {cfg.policy.value}, preserve_commit_order "
              f"{'ON' if cfg.preserve_commit_order else 'OFF'}, coordinator overhead "
              f"{seconds(cfg.coordinator_overhead)}, checkpoint group {cfg.checkpoint_group}")
    total = sw.results[0].total_cost if sw.results else 0.0
    t.add_row("total cost", seconds(total))
    t.add_row("critical path", seconds(sw.critical_path))
    t.add_row("ideal speed-up", f"{sw.ideal_speedup:.2f}x (total cost / critical path)")
    if sw.results:
        t.add_row("barriers (new groups)", f"{sw.results[0].barriers:,}")
    return t


def _curve(report: ScheduleReport) -> Any:
    from rich.table import Table
    sw = report.sweep
    t = Table(title=f"Speed-up curve (cost model: {report.cost_model})")
    for col in ("workers", "makespan", "speed-up", "", "utilisation"):
        t.add_column(col, justify="left" if col == "" else "right")
    top = max([sw.ideal_speedup] + [r.speedup or 0.0 for r in sw.results]) or 1.0
    for r in sw.results:
        speedup = r.speedup or 0.0
        bar = "█" * max(1, round(_BAR * speedup / top))
        util = sum(r.utilisation) / len(r.utilisation) if r.utilisation else 0.0
        t.add_row(str(r.workers), seconds(r.makespan), f"{speedup:.2f}x", bar, f"{util:.0%}",
                  style="bold green" if r.workers == sw.recommended else None)
    return t


def _waits(report: ScheduleReport) -> Any:
    from rich.table import Table
    sw = report.sweep
    t = Table(title="Waiting time by cause (coordinator; commit order: workers)")
    t.add_column("workers", justify="right")
    for label in _WAITS.values():
        t.add_column(label, justify="right")
    for r in sw.results:
        t.add_row(str(r.workers), *(seconds(getattr(r.waits, w)) for w in _WAITS),
                  style="bold green" if r.workers == sw.recommended else None)
    return t


def _recovery(report: ScheduleReport) -> list[Any]:
    from rich.table import Table
    from rich.text import Text
    rec, run = report.recovery, report.detail
    if rec is None or run is None or run.trace is None:
        return []
    trace = run.trace
    head = Table(title=f"Crash at {seconds(rec.crash_time)} with {_workers(run.workers)} "
                 "(WL#5599 recovery)", show_header=False)
    head.add_column("what")
    head.add_column("value")
    last = rec.checkpoints[-1] if rec.checkpoints else None
    where = f"relay index {rec.checkpoint_index}"
    if rec.checkpoint_pos is not None:
        where += f", after {rec.checkpoint_pos}"
    if last is not None:
        where += f" (at {seconds(last.time)}, {last.reason})"
    else:
        where += " (no checkpoint yet: start of the log)"
    head.add_row("coordinator checkpoint", where)
    head.add_row("checkpoints before the crash", str(len(rec.checkpoints)))
    width = max([rec.recovery_group_cnt] + [
        w.checkpoint_seqno + 1 for w in rec.workers if w.checkpoint_seqno is not None
        and w.last_group is not None and w.last_group >= rec.checkpoint_index])
    head.add_row("recovery bitmap", format_bitmap(rec.recovery_bitmap, rec.recovery_group_cnt)
                 or "(empty)")
    head.add_row("groups after the checkpoint", str(rec.recovery_group_cnt))
    head.add_row("skipped (already applied)", ranges(rec.skipped) or "-")
    head.add_row("gaps (re-executed)", ranges(rec.gaps) or "-")
    workers = Table(title="Workers (mysql.slave_worker_info)")
    for col in ("worker", "checkpoint_seqno", "last group", "group_executed bitmap"):
        workers.add_column(col, justify="left" if "bitmap" in col else "right")
    for w in rec.workers:
        workers.add_row(str(w.worker), _opt(w.checkpoint_seqno), _opt(w.last_group),
                        format_bitmap(w.group_executed, width))
    out: list[Any] = [head, workers]
    if rec.gaps:
        groups = Table(title="Gaps: groups a restart re-executes")
        for col in ("index", "gtid", "position"):
            groups.add_column(col, justify="right" if col == "index" else "left")
        for i in rec.gaps[:_MAX_GAPS]:
            span = trace[i]
            groups.add_row(str(i), printable(span.gtid or "-"), printable(str(span.pos or "-")))
        if len(rec.gaps) > _MAX_GAPS:
            groups.add_row("...", f"{len(rec.gaps) - _MAX_GAPS} more", "")
        out.append(groups)
    summary = Text(f"restart at relay index {rec.checkpoint_index}: "
                   f"{len(rec.gaps)} gap(s) to re-execute, {len(rec.skipped)} group(s) "
                   "skipped, then normal parallel apply")
    out.append(summary)
    return out


def _workers(count: int) -> str:
    return f"{count} worker" if count == 1 else f"{count} workers"


def _opt(value: int | None) -> str:
    return "-" if value is None else str(value)


# ---- the plot ----

def write_plot(report: ScheduleReport, path: str, window: tuple[int, int],
               inputs: Sequence[str] = (), *, force: bool = False) -> None:
    """Save the speed-up curve and a per-worker timeline to ``path`` (.png or .svg).

    Atomically (:func:`repltool.outputs.atomic_path`): never onto one of
    ``inputs``, nor onto an existing file unless ``force``.

    :param window: ``(start, count)``: the relay indexes the timeline shows.
    :raises UsageError: when matplotlib is missing or the window is empty.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'repltool[plot]'") from None
    run = report.detail
    if run is None or run.trace is None:
        raise UsageError("--plot: no trace was recorded")
    start, count = window
    spans = run.trace[start:start + count]
    if run.trace and not spans:
        raise UsageError(f"--timeline-window {start}:{count}: the log has only "
                         f"{len(run.trace)} transactions")
    fig = Figure(figsize=(11, 8.5), layout="constrained")
    curve, timeline = fig.subplots(2, 1, height_ratios=[2, 3])
    _plot_curve(curve, report)
    _plot_timeline(timeline, run, start, spans)
    fig.suptitle(f"repltool schedule: {', '.join(_short(f) for f in report.files)[:110]}")
    from ..outputs import atomic_path
    with atomic_path(path, inputs, force=force, option="--plot") as tmp:
        try:
            fig.savefig(tmp, dpi=110, format=path.rsplit(".", 1)[-1].lower())
        except OSError as exc:
            raise IOFailure(f"--plot {path}: {exc.strerror or exc}") from None


def _short(file: str) -> str:
    return file.replace("\\", "/").rsplit("/", 1)[-1]


def _plot_curve(ax: Any, report: ScheduleReport) -> None:
    sw = report.sweep
    xs = [r.workers for r in sw.results]
    ys = [r.speedup or 0.0 for r in sw.results]
    ax.plot(xs, ys, marker="o", label=f"simulated ({report.config.policy.value})")
    ax.plot(xs, [min(x, sw.ideal_speedup) for x in xs], linestyle="--", color="grey",
            label=f"bound: min(workers, total/critical path = {sw.ideal_speedup:.2f})")
    ax.axvline(sw.recommended, color="green", linestyle=":",
               label=f"recommended: {_workers(sw.recommended)}")
    ax.set_xlabel("replica_parallel_workers")
    ax.set_ylabel("speed-up over 1 worker")
    ax.set_title(f"Speed-up curve, cost model {report.cost_model}, "
                 f"{report.stats.transactions:,} transactions")
    log = len(xs) > 1 and xs[-1] / xs[0] >= 8
    if log:
        ax.set_xscale("log", base=2)
    ticks = tick_values(xs, sw.recommended, log)
    ax.set_xticks(ticks, [str(x) for x in ticks])
    ax.minorticks_off()
    ax.set_ylim(0, 1.15 * max([sw.ideal_speedup, 1.0, *ys]))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")


def tick_values(xs: list[int], recommended: int, log: bool, most: int = 12) -> list[int]:
    """The worker counts labelled on the curve's x axis: all of them when they are few,
    else (so that labels do not overlap) the powers of two on a log axis, or every
    k-th on a linear one - with the first, the last and the recommended count."""
    if len(xs) <= most:
        return list(xs)
    if log:
        keep = {x for x in xs if x & (x - 1) == 0}
    else:
        step = -(-len(xs) // most)
        keep = set(xs[::step])
    keep |= {xs[0], xs[-1], recommended}
    chosen = sorted(x for x in keep if x in xs or x == recommended)
    # a label next to the recommended one (log axis: within 12%) would overlap it
    return [x for x in chosen if x == recommended or
            not (log and recommended and abs(x - recommended) / recommended < 0.12)]


def _plot_timeline(ax: Any, run: SimResult, start: int, spans: Any) -> None:
    end = start + len(spans)
    ax.set_title(f"Worker timeline, {_workers(run.workers)}, transactions "
                 f"#{start}..#{max(start, end - 1)} (bar: execution; hatched: waiting "
                 "for commit order)")
    colours = ["tab:blue", "tab:orange", "tab:purple", "tab:cyan", "tab:olive", "tab:brown"]
    for i, span in enumerate(spans):
        index = start + i
        colour = "tab:red" if span.barrier else colours[index % len(colours)]
        width = span.end - span.start
        ax.broken_barh([(span.start, width)], (span.worker - 0.4, 0.8), facecolors=colour,
                       edgecolors="black", linewidth=0.4)
        if span.commit > span.end:
            ax.broken_barh([(span.end, span.commit - span.end)], (span.worker - 0.4, 0.8),
                           facecolors="none", edgecolors="grey", hatch="///", linewidth=0.4)
        if len(spans) <= 60:
            ax.text(span.start + width / 2, span.worker, str(span.sequence_number),
                    ha="center", va="center", fontsize=6, clip_on=True)
    ax.set_yticks(range(run.workers), [f"worker {w}" for w in range(run.workers)])
    ax.set_ylim(run.workers - 0.5, -0.5)
    ax.set_xlabel("simulated time (s); labels: sequence_number; red: barrier")
    ax.grid(True, axis="x", alpha=0.3)


def compare_renderables(reports: list[Any]) -> list[Any]:
    """One table: for each clock source, the makespan and speed-up at every worker count."""
    t = _sweeps_table("Logged clocks vs re-computed clocks (repltool certify)", "clocks",
                      [f"{r.workers} w" for r in reports[0].sweep.results],
                      [(rep.clocks, rep.sweep) for rep in reports], "ideal")
    notes = [w for rep in reports for w in rep.stats.warnings]
    return [t, *(f"warning: {printable(str(w))}" for w in dict.fromkeys(notes))]


# ---- MariaDB's applier ----

_MARIA_WAITS = {"gco": "prior group commit start", "prior_commit": "prior commit (wait)",
                "lock": "row lock", "retry": "retry", "commit_order": "commit order",
                "no_thread": "no pool thread", "queue_full": "max_queued"}


def maria_renderables(reports: Sequence[Any]) -> list[Any]:
    """rich renderables for :class:`~repltool.schedule.mariadb.MariaReport` values."""
    from rich.text import Text
    from ..schedule.mariadb import maria_recommendation
    if not reports:
        return []
    out: list[Any] = [_maria_summary(reports[0])]
    if len(reports) == 1:
        out += [_maria_curve(reports[0]), _maria_waits(reports[0])]
    else:
        out.append(_maria_modes(reports))
    for rep in reports:
        out.append(Text(maria_recommendation(rep), style="bold"))
    measured = [c for rep in reports for c in rep.comparisons]
    if measured:
        out.append(_maria_measured(measured))
    for warning in list(dict.fromkeys(w for rep in reports for w in rep.warnings))[:20]:
        out.append(Text(f"warning: {printable(str(warning))}", style="yellow"))
    return out


def _maria_summary(rep: Any) -> Any:
    from rich.table import Table
    t = Table(title="Schedule simulation (MariaDB parallel replication)", show_header=False)
    t.add_column("what")
    t.add_column("value")
    _files_rows(t, rep.files)
    t.add_row("event groups", f"{rep.transactions:,} in {rep.domains} domain(s), "
              f"{rep.commit_groups:,} primary group commits")
    flags = rep.flag_counts
    t.add_row("flags", f"FL_WAITED {flags['waited']:,}, FL_DDL {flags['ddl']:,}, "
              f"not FL_TRANSACTIONAL {flags['non_transactional']:,}, "
              f"not FL_ALLOW_PARALLEL {flags['no_allow_parallel']:,}")
    t.add_row("conflicts", f"{rep.conflicting:,} groups write a key an earlier group wrote")
    t.add_row("cost model", f"{rep.cost_model}: {rep.cost_description}")
    cfg = rep.config
    t.add_row("replica", f"slave_domain_parallel_threads {cfg.domain_threads}, "
              f"slave_parallel_max_queued {cfg.max_queued}")
    sw = rep.sweep
    t.add_row("serial (slave_parallel_threads = 0)", seconds(sw.serial_makespan))
    return t


def _maria_curve(rep: Any) -> Any:
    from rich.table import Table
    sw = rep.sweep
    t = Table(title=f"Speed-up over the serial SQL thread, slave_parallel_mode = "
                    f"{rep.config.mode.value} (cost model: {rep.cost_model})")
    for col in ("slave_parallel_threads", "makespan", "speed-up", "", "GCOs", "retries",
                "utilisation"):
        t.add_column(col, justify="left" if col == "" else "right")
    top = max([sw.ideal_speedup] + [r.speedup or 0.0 for r in sw.results]) or 1.0
    for r in sw.results:
        speedup = r.speedup or 0.0
        util = sum(r.utilisation) / len(r.utilisation) if r.utilisation else 0.0
        t.add_row(str(r.threads), seconds(r.makespan), f"{speedup:.2f}x",
                  "█" * max(1, round(_BAR * speedup / top)), f"{r.gcos:,}", f"{r.retries:,}",
                  f"{util:.0%}", style="bold green" if r.threads == sw.recommended else None)
    return t


def _maria_waits(rep: Any) -> Any:
    from rich.table import Table
    t = Table(title="Waiting time by cause (driver thread: no pool thread, max_queued; "
                    "the rest summed over groups)")
    t.add_column("threads", justify="right")
    for label in _MARIA_WAITS.values():
        t.add_column(label, justify="right")
    for r in rep.sweep.results:
        t.add_row(str(r.threads), *(seconds(getattr(r.waits, w)) for w in _MARIA_WAITS))
    return t


def _maria_modes(reports: Sequence[Any]) -> Any:
    return _sweeps_table("slave_parallel_mode side by side: makespan (speed-up over serial)",
                         "slave_parallel_mode",
                         [f"{r.threads} threads" for r in reports[0].sweep.results],
                         [(rep.config.mode.value, rep.sweep) for rep in reports], "best")


def _sweeps_table(title: str, first: str, counts: Sequence[str],
                  rows: Sequence[tuple[str, Any]], bound: str) -> Any:
    """A row per sweep (``(name, sweep)``): the makespan and speed-up at every worker or
    thread count (``counts``: the column heads), the sweep's bound and its recommendation."""
    from rich.table import Table
    t = Table(title=title)
    t.add_column(first)
    for head in counts:
        t.add_column(head, justify="right")
    t.add_column(bound, justify="right")
    t.add_column("recommended", justify="right")
    for name, sw in rows:
        t.add_row(name, *(f"{seconds(r.makespan)} ({r.speedup:.2f}x)" for r in sw.results),
                  f"{sw.ideal_speedup:.2f}x", str(sw.recommended))
    return t


def _maria_measured(comparisons: Sequence[Any]) -> Any:
    from rich.table import Table
    t = Table(title="Predicted vs measured speed-up (your replica)")
    for col in ("slave_parallel_mode", "threads", "measured", "measured speed-up",
                "predicted speed-up", "error"):
        t.add_column(col, justify="left" if col == "slave_parallel_mode" else "right")
    for c in comparisons:
        t.add_row(c.mode.value, str(c.threads), seconds(c.measured_seconds),
                  f"{c.measured_speedup:.2f}x", f"{c.predicted_speedup:.2f}x",
                  f"{c.error:+.0%}", style="red" if abs(c.error) > 0.15 else None)
    return t
