"""``repltool sample``: small MySQL 8.0 binlogs to try the other commands on."""

from __future__ import annotations

import click

from ..synth import write_sample


@click.command()
@click.option("-o", "--output", "directory", required=True,
              type=click.Path(file_okay=False),
              help="Directory to write the logs into (all-or-nothing; refused when "
                   "binlog.000001, binlog.000002 or binlog.index exist, unless --force).")
@click.option("--force", is_flag=True, help="Replace those files if they exist.")
@click.option("--transactions", type=click.IntRange(min=2), default=200, show_default=True,
              help="Transactions in all (split over two files).")
@click.option("--seed", type=int, default=7, show_default=True)
def sample(directory: str, force: bool, transactions: int, seed: int) -> None:
    """Write binlog.000001 and binlog.000002 (MySQL 8.0 format, CRC32, GTIDs).

    Built with repltool's own encoder: commit-order logical clocks from a
    group-commit model, a rotation, a DDL and one compressed transaction.
    """
    for path in write_sample(directory, transactions=transactions, seed=seed, force=force):
        click.echo(str(path))
