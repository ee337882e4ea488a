"""``repltool stats``: per-file and total figures, logical-clock parallelism."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from ..escape import printable
from ..stats import LogStats, compute_clock_stats, compute_stats, stats_to_dict
from .options import (
    damage_exit, inputs_argument, keep_going_option, refuse_window,
    report_failures, run_spark, spark_options, verify_checksum_option, window_options,
)

if TYPE_CHECKING:
    from ..binlog.window import Window
    from ..distributed import SparkOptions


@click.command()
@inputs_argument
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="rich tables for people, JSON for machines.")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many of the biggest / longest transactions to list.")
@click.option("--clock-only", is_flag=True,
              help="Only events, transactions, logical clocks and the biggest "
                   "transactions (no kinds, tables or longest transactions).")
@window_options
@verify_checksum_option
@keep_going_option
@spark_options
@click.pass_context
def stats(ctx: click.Context, files: tuple[str, ...], fmt: str, top: int, clock_only: bool,
          window: Window, verify_checksum: bool, keep_going: bool, spark: SparkOptions | None,
          output_parquet: str | None) -> None:
    """Summarise logs: versions, events by type, transactions, logical clocks.

    The logical-clock section shows how parallel a replica can apply the log:
    the distribution of sequence_number - last_committed, the runs of
    transactions sharing one commit parent ("windows"), and the share of
    barrier transactions (last_committed = 0) that serialise the applier.

    With --spark, each file is analysed by its own Spark task and the figures
    are merged on the driver (the same output); with --keep-going, files that
    cannot be read at all are listed and left out.

    With a window (--start-position, --include-gtids, --database, ...), every
    figure is of the transactions in it (events by type: their events);
    positions, datetimes and GTIDs are read by the compiled engine, --database
    and --table by the general reader (the same figures).
    """
    if clock_only and keep_going:
        raise click.UsageError("--keep-going needs the event-by-event reader, not --clock-only")
    failures = ()
    if clock_only:
        refuse_window(window, "--clock-only")
    if spark is not None:
        refuse_window(window, "--spark")
    if spark is not None:
        if clock_only:
            raise click.UsageError("--clock-only is not available with --spark")
        from ..distributed import spark_stats

        def job(session, names):  # type: ignore[no-untyped-def]
            return spark_stats(session, names, verify_checksum=verify_checksum, top=top,
                               keep_going=keep_going, output_parquet=output_parquet)

        result, failures = run_spark(spark, files, job)
    elif clock_only:
        result = compute_clock_stats(files, verify_checksum=verify_checksum, top=top)
    else:
        from .progress import byte_progress
        with byte_progress(files, "stats") as progress:
            result = compute_stats(files, verify_checksum=verify_checksum, top=top,
                                   keep_going=keep_going, progress=progress, window=window)
    if fmt == "json":
        from .render import current_timezone
        json.dump(stats_to_dict(result, current_timezone()), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        _report_damage(result, failures)
        return
    from .render import make_console, stats_tables
    color = (ctx.obj or {}).get("color")
    console = make_console(color)
    for table in stats_tables(result):
        console.print(table)
    _report_damage(result, failures)


def _report_damage(result: LogStats, failures=()) -> None:  # type: ignore[no-untyped-def]
    total = result.total
    for d in total.damage:
        click.echo(f"repltool: damaged region: {printable(d.reason)} ({d.skipped} bytes skipped)",
                   err=True)
    report_failures(failures)           # --spark --keep-going: unreadable files left out
    damage_exit(total.damage[0].error if total.damage else None, total.damaged_regions)
