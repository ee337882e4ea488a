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

keep_going_option = click.option(
    "--keep-going", is_flag=True,
    help="On a damaged event, report the damaged byte range, resynchronise at the next "
         "event whose CRC32 verifies, and go on (the exit status is still that of the "
         "first error).")


def damage_exit(first_error: str | None, count: int) -> None:
    """After a --keep-going run: exit with the status of the first damage found, if any."""
    if first_error is None:
        return
    from .. import errors
    cls = getattr(errors, first_error, errors.LogFormatError)
    click.echo(f"repltool: {count} damaged region(s) skipped (--keep-going)", err=True)
    raise click.exceptions.Exit(cls.exit_code)
