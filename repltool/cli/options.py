"""Options shared by several commands."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import click

from ..escape import printable

verify_checksum_option = click.option(
    "--verify-binlog-checksum/--no-verify-binlog-checksum", "verify_checksum", default=True,
    show_default=True,
    help="Verify every event's CRC32 (on by default, unlike mysqlbinlog); "
         "--no-verify-binlog-checksum reads logs with damaged checksums.")

files_argument = click.argument("files", nargs=-1, required=True,
                                type=click.Path(allow_dash=True))

keep_going_option = click.option(
    "--keep-going", is_flag=True,
    help="On a damaged event, report the damaged byte range, resynchronise at the next "
         "event whose CRC32 verifies, and go on (the exit status is still that of the "
         "first error).")


def _check_collation(ctx: click.Context, param: click.Parameter, value: str | None
                     ) -> str | None:
    if value is None:
        return None
    from ..errors import UsageError
    from ..writeset import collation_by_name
    c = collation_by_name(value)
    if c.name is None or c.reason.endswith("is unknown"):
        raise UsageError(f"--default-collation {value}: unknown collation name")
    return c.name


default_collation_option = click.option(
    "--default-collation", metavar="NAME", callback=_check_collation,
    help="The collation of string key columns whose collation neither the log "
         "(binlog_row_metadata=MINIMAL, MySQL 5.7, MariaDB's default) nor --schema names, "
         "e.g. utf8mb4_general_ci. Without it such columns make their tables count as "
         "having no usable key (missing keys).")


class SizeType(click.ParamType):
    """A size in bytes, the same syntax everywhere: ``1048576``, ``64k``, ``10M``, ``1.5MiB``,
    ``1G`` (powers of 1024, like MySQL's size variables)."""

    name = "size"

    def __init__(self, positive: bool = False) -> None:
        self.positive = positive

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, int):
            return value
        from ..check.config import parse_size
        from ..errors import UsageError
        try:
            size = parse_size(value)
        except UsageError as exc:
            self.fail(exc.reason, param, ctx)
        if self.positive and size <= 0:
            self.fail(f"must be more than 0: {value!r}", param, ctx)
        return size


#: ``--max-trx-size 64M``, ``synth --size 1.5G``: see :class:`SizeType`.
SIZE = SizeType()
POSITIVE_SIZE = SizeType(positive=True)


def damage_exit(first_error: str | None, count: int) -> None:
    """After a --keep-going run: exit with the status of the first damage found, if any."""
    if first_error is None:
        return
    from .. import errors
    cls = getattr(errors, first_error, errors.LogFormatError)
    click.echo(f"repltool: {count} damaged region(s) skipped (--keep-going)", err=True)
    raise click.exceptions.Exit(cls.exit_code)


def read_inputs(files: tuple[str, ...], schema_paths: tuple[str, ...] = (),
                cost_spec: str = "") -> list[str]:
    """Every file a command reads (logs, --schema, --cost csv:): what no output may replace."""
    cost = [cost_spec[4:]] if cost_spec.startswith("csv:") else []
    return [*files, *schema_paths, *cost]


#: ``FILE...`` of the commands that take ``--spark`` (the inputs of every command
#: that reads logs are resolved by :func:`resolve_inputs`; with ``--spark``, by Spark's
#: own expansion, which also takes quoted globs and URIs).
inputs_argument = click.argument("files", nargs=-1, required=True,
                                 type=click.Path(allow_dash=True))


@contextmanager
def resolve_inputs(specs: Sequence[str]) -> Iterator[list[str]]:
    """The log files ``specs`` name, in order: a file as given; a server's index file
    (``mysql-bin.index``, ``relay-bin.index``) as the logs it lists
    (:func:`~repltool.paths.read_index`); a directory as the logs its index file lists
    when it holds exactly one, else its files that start with the binlog magic, in
    natural name order; ``-`` as standard input (once), copied to a temporary file
    named ``stdin`` that is removed afterwards.
    """
    import os
    import shutil
    import sys
    import tempfile

    from ..distributed.inputs import expand_local
    from ..paths import INDEX_SUFFIX, is_index_file, read_index

    out: list[str] = []
    spool: str | None = None
    try:
        for spec in specs:
            if spec == "-":
                if spool is not None:
                    raise click.UsageError("- (standard input) can be given once")
                spool = tempfile.mkdtemp(prefix="repltool-")
                name = os.path.join(spool, "stdin")
                with open(name, "wb") as fh:
                    shutil.copyfileobj(sys.stdin.buffer, fh, 1 << 20)
                out.append(name)
            elif is_index_file(spec):
                out.extend(read_index(spec))
            elif os.path.isdir(spec):
                indexes = [n for n in os.listdir(spec) if n.endswith(INDEX_SUFFIX)
                           and is_index_file(os.path.join(spec, n))]
                if len(indexes) == 1:
                    out.extend(read_index(os.path.join(spec, indexes[0])))
                else:
                    found = expand_local([spec])
                    if not found:
                        raise click.UsageError(f"{printable(spec)}: no binlog or relay log "
                                               "in this directory")
                    out.extend(found)
            else:
                out.append(spec)
        yield out
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)


def spark_options(command):  # type: ignore[no-untyped-def]
    """``--spark``, ``--spark-master``, ``--spark-conf`` and ``--output-parquet``.

    The command receives them as one ``spark`` argument: a
    :class:`~repltool.distributed.SparkOptions`, or None without ``--spark``.
    """
    import functools

    @click.option("--spark", "use_spark", is_flag=True,
                  help="Parse and analyse the files with PySpark, one task per file (needs "
                       "`pip install 'repltool[spark]'` and Java 17).  FILE may then also be a "
                       "directory, a quoted glob or an hdfs://, s3a:// or file:// URI.")
    @click.option("--spark-master", metavar="URL",
                  help="Spark master (default: spark.master of --spark-conf, else spark-submit's, "
                       "else $MASTER, else spark-defaults.conf's, else local[*]).")
    @click.option("--spark-conf", multiple=True, metavar="KEY=VALUE",
                  help="A Spark setting (repeatable); spark-defaults.conf is read too.")
    @click.option("--spark-quiet", is_flag=True,
                  help="With --spark: Spark logs errors only (spark.log.level=ERROR unless "
                       "--spark-conf sets it) and shows no progress bar.")
    @click.option("--output-parquet", type=click.Path(file_okay=False), metavar="DIR",
                  help="With --spark: also write the transactions DataFrame to DIR as Parquet "
                       "(atomically: a temporary directory renamed).")
    @functools.wraps(command)
    def wrapper(*args, use_spark: bool, spark_master: str | None,  # type: ignore[no-untyped-def]
                spark_conf: tuple[str, ...], spark_quiet: bool, output_parquet: str | None,
                **kwargs):
        spark = None
        if use_spark:
            from ..distributed import SparkOptions, parse_conf
            spark = SparkOptions(master=spark_master, conf=parse_conf(spark_conf),
                                 quiet=spark_quiet)
        elif spark_master or spark_conf or output_parquet or spark_quiet:
            raise click.UsageError("--spark-master, --spark-conf, --spark-quiet and "
                                   "--output-parquet need --spark")
        return command(*args, spark=spark, output_parquet=output_parquet, **kwargs)

    return wrapper


def run_spark(spark_options, files, job):  # type: ignore[no-untyped-def]
    """Start Spark, expand ``files``, print the break-even hint, and run ``job(session, names)``.

    Ctrl-C stops the session (and the CLI exits 130).
    """
    from ..distributed import (break_even_hint, expand_inputs, is_uri, require_pyspark,
                               spark_session)
    require_pyspark()

    def hint(inputs: list[tuple[str, int]]) -> None:
        text = break_even_hint(sum(size for _, size in inputs))
        if text:
            click.echo(f"repltool: hint: {text}", err=True)

    inputs = None
    if not any(is_uri(f) for f in files):
        inputs = expand_inputs(files)       # local: before the ~10 s start-up
        hint(inputs)
    with spark_session(spark_options) as session:
        if inputs is None:
            inputs = expand_inputs(files, session)
            hint(inputs)
        return job(session, [name for name, _ in inputs])


def report_failures(failures) -> None:  # type: ignore[no-untyped-def]
    """--keep-going with --spark: list the files left out, exit with the first one's status."""
    if not failures:
        return
    for f in failures:
        click.echo(f"repltool: skipped {printable(f.file)}: {printable(f.message)}", err=True)
    click.echo(f"repltool: {len(failures)} file(s) skipped (--keep-going)", err=True)
    raise click.exceptions.Exit(failures[0].exit_code)
