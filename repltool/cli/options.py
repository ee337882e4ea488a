"""Options shared by several commands."""

from __future__ import annotations

import click

verify_checksum_option = click.option(
    "--verify-binlog-checksum/--no-verify-binlog-checksum", "verify_checksum", default=True,
    show_default=True,
    help="Verify every event's CRC32 (on by default, unlike mysqlbinlog); "
         "--no-verify-binlog-checksum reads logs with damaged checksums.")

files_argument = click.argument("files", nargs=-1, required=True,
                                type=click.Path(dir_okay=False, allow_dash=False))
