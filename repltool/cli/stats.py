"""``repltool stats``: per-file and total figures, logical-clock parallelism."""

from __future__ import annotations

import json
import sys

import click

from ..stats import compute_clock_stats, compute_stats, stats_to_dict
from .options import files_argument, verify_checksum_option


@click.command()
@files_argument
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="rich tables for people, JSON for machines.")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many of the biggest / longest transactions to list.")
@click.option("--clock-only", is_flag=True,
              help="Only transactions and logical clocks: MySQL 8.0.2+ logs are read by "
                   "jumping over transaction bodies with transaction_length (events inside "
                   "transactions are then neither counted nor CRC-checked).")
@verify_checksum_option
@click.pass_context
def stats(ctx: click.Context, files: tuple[str, ...], fmt: str, top: int, clock_only: bool,
          verify_checksum: bool) -> None:
    """Summarise logs: versions, events by type, transactions, logical clocks.

    The logical-clock section shows how parallel a replica can apply the log:
    the distribution of sequence_number - last_committed, the runs of
    transactions sharing one commit parent ("windows"), and the share of
    barrier transactions (last_committed = 0) that serialise the applier.
    """
    compute = compute_clock_stats if clock_only else compute_stats
    result = compute(files, verify_checksum=verify_checksum, top=top)
    if fmt == "json":
        json.dump(stats_to_dict(result), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    from rich.console import Console
    from .render import stats_tables
    color = (ctx.obj or {}).get("color")
    console = Console(no_color=color is False, force_terminal=color or None)
    for table in stats_tables(result):
        console.print(table)
