"""``repltool synth -o DIR``: synthetic MySQL binlogs / relay logs with a ground truth."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import UsageError
from .options import POSITIVE_SIZE


def _options_ok(transactions: int | None, size: int | None) -> None:
    if transactions is None and size is None:
        raise click.UsageError("give --transactions N or --size SIZE")


def _range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise click.UsageError(f"not a range: {text!r} (e.g. 1-4)") from None
    if a < 1 or b < a:
        raise click.UsageError(f"bad range {text!r}")
    return a, b


@click.command()
@click.option("-o", "--output", "out", type=click.Path(file_okay=False), metavar="DIR",
              help="Directory to write the logs, schema.sql and ground-truth.json into "
                   "(all-or-nothing; refused when it holds files of these names or logs of "
                   "an earlier run, unless --force).  Required.")
@click.option("--out", "old_out", type=click.Path(file_okay=False), default=None, hidden=True,
              help="Old name of -o/--output (an output directory is -o/--output everywhere).")
@click.option("--force", is_flag=True,
              help="Replace the files of an earlier run in DIR (and remove its logs this run "
                   "does not replace, so the index stays true).")
@click.option("--server-generation", "server_format", type=click.Choice(["8.0", "5.7", "9.x"]),
              default=None, help="Server generation whose event layouts to write "
                   "[default: 8.0; 9.x is implied by --tagged-gtids].")
@click.option("--format", "old_format", type=click.Choice(["8.0", "5.7", "9.x"]), default=None,
              hidden=True, help="Old name of --server-generation (--format is an output "
                                "format everywhere else).")
@click.option("--server-version", default=None, help="Version string in the FDE "
              "(default 8.0.40 / 5.7.40-log / 9.6.0).")
@click.option("--relay-log", is_flag=True, help="Write a replica's relay log of the stream.")
@click.option("--transactions", "-n", type=click.IntRange(min=1), default=None,
              help="Stop after N transactions.")
@click.option("--size", type=POSITIVE_SIZE, default=None,
              help="Stop once this much is written (500M, 1.5G).")
@click.option("--max-binlog-size", type=POSITIVE_SIZE, default="1G", show_default=True,
              help="Rotate the (source) binlog after a commit group beyond this size.")
@click.option("--max-relay-log-size", type=POSITIVE_SIZE, default=None,
              help="Relay-file size (default: --max-binlog-size).")
@click.option("--clients", type=click.IntRange(1, 100_000), default=8, show_default=True,
              help="Concurrent sessions (at most 100000, MySQL's max_connections limit).")
@click.option("--think-us", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Mean think time of a session between transactions (µs).")
@click.option("--sync-us", type=click.IntRange(min=0), default=400, show_default=True,
              help="Binlog fsync time per commit group (µs).")
@click.option("--sync-delay-us", type=click.IntRange(min=0), default=0, show_default=True,
              help="binlog_group_commit_sync_delay (µs).")
@click.option("--statements", default="1-4", show_default=True,
              help="Statements per transaction (A-B).")
@click.option("--rows", default="1-3", show_default=True, help="Rows per statement (A-B).")
@click.option("--mix", default="40:45:15", show_default=True,
              help="insert:update:delete weights.")
@click.option("--keys", "key_dist", type=click.Choice(["uniform", "zipf", "hot"]),
              default="uniform", show_default=True, help="How sessions pick existing rows.")
@click.option("--zipf-s", type=float, default=1.1, show_default=True)
@click.option("--hot-keys", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--hot-share", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--rows-per-table", type=click.IntRange(1, 100_000_000), default=10_000,
              show_default=True, help="Rows each keyed table holds before the log starts "
                                      "(at most 100000000: 3 bytes of memory per row).")
@click.option("--ddl-rate", type=click.FloatRange(0, 1), default=0.0005, show_default=True)
@click.option("--empty-rate", type=click.FloatRange(0, 1), default=0.001, show_default=True)
@click.option("--bulk-share", type=click.FloatRange(0, 1), default=0.005, show_default=True,
              help="Share of statements writing 50-200 rows.")
@click.option("--compression", type=click.Choice(["none", "zstd"]), default="none",
              show_default=True, help="binlog_transaction_compression (Transaction_payload).")
@click.option("--tagged-gtids", is_flag=True, help="Some sessions use a GTID tag (type 42).")
@click.option("--tag", default="synth", show_default=True)
@click.option("--timestamp-encoding", type=click.Choice(["mysql", "delta16"]),
              default="mysql", show_default=True)
@click.option("--anonymous", is_flag=True, help="gtid_mode=OFF: anonymous GTID events.")
@click.option("--full-metadata", is_flag=True, help="binlog_row_metadata=FULL.")
@click.option("--in-use", is_flag=True, help="Leave the last file active (in-use flag, no Stop).")
@click.option("--no-ground-truth", is_flag=True, help="Do not write ground-truth.json.")
@click.option("--ground-truth-rows", is_flag=True, help="Also put every row image in it.")
@click.option("--db", default="shop", show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
def synth(out: str | None, old_out: str | None, force: bool, server_format: str | None, old_format: str | None,
          server_version: str | None, relay_log: bool,
          transactions: int | None, size: int | None, max_binlog_size: int,
          max_relay_log_size: int | None, clients: int, think_us: int, sync_us: int,
          sync_delay_us: int, statements: str, rows: str, mix: str, key_dist: str,
          zipf_s: float, hot_keys: int, hot_share: float, rows_per_table: int,
          ddl_rate: float, empty_rate: float, bulk_share: float, compression: str,
          tagged_gtids: bool, tag: str, timestamp_encoding: str, anonymous: bool,
          full_metadata: bool, in_use: bool, no_ground_truth: bool,
          ground_truth_rows: bool, db: str, seed: int) -> None:
    """Write synthetic MySQL binlogs (or relay logs) shaped like a real server's.

    Sessions run a shop-like workload over four tables (PRIMARY KEY, UNIQUE,
    FOREIGN KEY, no key); binlog group commit gives each transaction its
    commit-order last_committed / sequence_number.  Besides the logs, DIR gets
    schema.sql and ground-truth.json (the keys every GTID wrote).
    """
    from ..synth import ClockConfig, KeyDistribution, SynthOptions, WorkloadConfig, generate
    if old_out is not None:
        if out is not None and out != old_out:
            raise click.UsageError("--out is the old name of -o/--output: give one")
        click.echo("repltool: warning: synth --out is now -o/--output", err=True)
        out = old_out
    if out is None:
        raise click.UsageError("Missing option '-o' / '--output'.")
    if old_format is not None:
        if server_format is not None and server_format != old_format:
            raise click.UsageError("--format is the old name of --server-generation: give one")
        click.echo("repltool: warning: synth --format is now --server-generation", err=True)
        server_format = old_format
    server_format = server_format or "8.0"
    try:
        _options_ok(transactions, size)
        weights = tuple(float(x) for x in mix.split(":"))
    except ValueError:
        raise click.UsageError(f"--mix is I:U:D weights, got {mix!r}") from None
    if len(weights) != 3 or min(weights) < 0 or sum(weights) <= 0:
        raise click.UsageError(f"--mix is I:U:D weights, got {mix!r}")
    opts = SynthOptions(
        out=Path(out), server_format=server_format, server_version=server_version,
        relay_log=relay_log, transactions=transactions,
        size=size, max_binlog_size=max_binlog_size, max_relay_log_size=max_relay_log_size,
        workload=WorkloadConfig(
            rows_per_table=rows_per_table, statements=_range(statements), rows=_range(rows),
            mix=weights, bulk_share=bulk_share, ddl_rate=ddl_rate,  # type: ignore[arg-type]
            empty_rate=empty_rate,
            keys=KeyDistribution(key_dist, zipf_s, hot_keys, hot_share)),
        clock=ClockConfig(clients=clients, think_us=think_us, sync_us=sync_us,
                          sync_delay_us=sync_delay_us),
        compression=None if compression == "none" else compression,
        tagged_gtids=tagged_gtids, tag=tag, timestamp_encoding=timestamp_encoding,
        gtids=not anonymous, full_metadata=full_metadata, db=db, in_use=in_use,
        ground_truth=not no_ground_truth, ground_truth_rows=ground_truth_rows, seed=seed,
        force=force)
    progress = _progress() if sys.stderr.isatty() else None
    try:
        result = generate(opts, progress=progress.update if progress else None)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        if progress is not None:
            progress.close()
    for f in result.files:
        click.echo(str(f))
    click.echo(f"repltool synth: {result.transactions} transactions in {result.groups} commit "
               f"groups, {len(result.files)} files, {result.bytes / 1e6:.1f} MB in "
               f"{result.seconds:.1f} s ({result.mb_per_s:.1f} MB/s); executed "
               f"{result.executed or '(anonymous)'}", err=True)


class _progress:
    """A rich progress line on stderr (only used when stderr is a terminal)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, TextColumn, TimeElapsedColumn
        self.p = Progress(TextColumn("synth: {task.fields[mb]:.0f} MB, {task.fields[n]} trx"),
                          TimeElapsedColumn(), console=Console(stderr=True), transient=True)
        self.task = self.p.add_task("synth", total=None, mb=0.0, n=0)
        self.p.start()

    def update(self, nbytes: int, n: int) -> None:
        self.p.update(self.task, mb=nbytes / 1e6, n=n)

    def close(self) -> None:
        self.p.stop()
