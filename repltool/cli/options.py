"""Options shared by several commands."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import click

from ..escape import printable
from ..collector import few_collections  # noqa: F401  (the commands' name for it)

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


schema_db_option = click.option(
    "--schema-db", metavar="DB",
    help="The database of unqualified tables in --schema files (those no USE statement "
         "or header comment places).")


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

    from ..paths import INDEX_SUFFIX, is_index_file, read_index

    out: list[str] = []
    spool: str | None = None
    try:
        for spec in specs:
            if spec == "-":
                if spool is not None:
                    raise click.UsageError("- (standard input) can be given once")
                import sys
                import tempfile
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
                    # imported here: the distributed package is not loaded for plain files
                    from ..distributed.inputs import expand_local
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
                  help="Parse and analyse the files with PySpark, one task per file, or per "
                       "part of a large binlog (see --spark-split-size; needs "
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
    @click.option("--spark-split-size", metavar="SIZE",
                  help="With --spark: stats, schedule, check and certify --mode writeset|"
                       "commit-order (text report) read every local MySQL binlog larger "
                       "than twice SIZE as parts of about SIZE, cut at transaction "
                       "boundaries (0: one task per file; also Spark setting "
                       "spark.repltool.splitSize).  Without it, parts of 128M and only "
                       "where the executor cores would not finish together otherwise "
                       "(none for many files of even size).  Other commands read each "
                       "file in one task (see README).")
    @click.option("--output-parquet", type=click.Path(file_okay=False), metavar="DIR",
                  help="With --spark: also write the transactions DataFrame to DIR as Parquet "
                       "(atomically: a temporary directory renamed).")
    @functools.wraps(command)
    def wrapper(*args, use_spark: bool, spark_master: str | None,  # type: ignore[no-untyped-def]
                spark_conf: tuple[str, ...], spark_quiet: bool, spark_split_size: str | None,
                output_parquet: str | None, **kwargs):
        spark = None
        if use_spark:
            from ..distributed import SPLIT_CONF, SparkOptions, parse_conf, parse_size
            conf = parse_conf(spark_conf)
            if spark_split_size is not None:
                conf += ((SPLIT_CONF, str(parse_size(spark_split_size))),)
            spark = SparkOptions(master=spark_master, conf=conf, quiet=spark_quiet)
        elif spark_master or spark_conf or output_parquet or spark_quiet or spark_split_size:
            raise click.UsageError("--spark-master, --spark-conf, --spark-quiet, "
                                   "--spark-split-size and --output-parquet need --spark")
        return command(*args, spark=spark, output_parquet=output_parquet, **kwargs)

    return wrapper


def run_spark(spark_options, files, job):  # type: ignore[no-untyped-def]
    """Start Spark, expand ``files``, print the break-even hint, and run ``job(session, names)``.

    Ctrl-C stops the session (and the CLI exits 130).
    """
    from ..distributed import (break_even_hint, expand_inputs, is_uri, require_pyspark,
                               spark_session)
    require_pyspark()

    command = click.get_current_context(silent=True)
    name = command.info_name if command is not None else None
    if name == "certify" and command.params.get("mode") == "group-replication":
        name = "certify --mode group-replication"      # certified on the driver, in order

    def hint(inputs: list[tuple[str, int]]) -> None:
        text = break_even_hint(sum(size for _, size in inputs), name)
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


def window_options(command):  # type: ignore[no-untyped-def]
    """``--start-position``, ``--stop-position``, ``--start-datetime``, ``--stop-datetime``,
    ``--timezone``, ``--include-gtids``, ``--exclude-gtids``, ``--database``/``-d`` and
    ``--table``.

    The command receives them as one ``window`` argument, a
    :class:`~repltool.binlog.window.Window` (inactive when none is given).
    """
    import functools

    @click.option("--start-position", metavar="N|GTIDS",
                  help="Start at offset N of the first file (dump: at that event, as "
                       "mysqlbinlog; other commands: at the first transaction that starts "
                       "there or later); or, for MariaDB logs, after these GTIDs "
                       "(D-S-N[,...], one per domain).")
    @click.option("--stop-position", metavar="N|GTIDS",
                  help="Stop at offset N of the last file (dump: at the first event at or "
                       "after N; other commands: before the first transaction that ends "
                       "after N); or, for MariaDB logs, after these GTIDs (D-S-N[,...]).")
    @click.option("--start-datetime", metavar="DATETIME",
                  help="Leave out events (other commands: transactions) older than "
                       "'YYYY-MM-DD hh:mm:ss', read in the time zone of the timezone "
                       "option.")
    @click.option("--stop-datetime", metavar="DATETIME",
                  help="Stop at the first event (other commands: transaction) at or after "
                       "this time, read in the time zone of the timezone option.")
    @click.option("--timezone", "zone_name", default="local", show_default=True, metavar="ZONE",
                  help="The time zone of --start-datetime/--stop-datetime and of the "
                       "datetimes printed (text names the zone; JSON adds ISO 8601 times "
                       "with their UTC offset): local, as mysqlbinlog (the TZ environment "
                       "variable, else /etc/localtime), UTC, or an IANA name such as "
                       "Europe/Paris.")
    @click.option("--include-gtids", metavar="GTIDS",
                  help="Only transactions in this GTID set (uuid:1-5,uuid:tag:3 or MariaDB "
                       "0-1-5).")
    @click.option("--exclude-gtids", metavar="GTIDS",
                  help="Leave out transactions in this GTID set.")
    @click.option("--database", "-d", "window_databases", multiple=True, metavar="DB",
                  help="Only events of this database (dump: after --rewrite-db; other "
                       "commands: transactions with a statement or rows event of it); "
                       "repeatable.")
    @click.option("--table", "window_tables", multiple=True, metavar="[DB.]TABLE",
                  help="Only row events of this table (other commands: transactions with "
                       "rows events of it), `table` or `db.table`; repeatable.")
    @functools.wraps(command)
    def wrapper(*args, start_position: str | None, stop_position: str | None,  # type: ignore[no-untyped-def]
                start_datetime: str | None, stop_datetime: str | None,
                include_gtids: str | None, exclude_gtids: str | None, zone_name: str,
                window_databases: tuple[str, ...], window_tables: tuple[str, ...], **kwargs):
        from ..binlog.window import Window, resolve_timezone
        from .render import set_timezone
        zone = resolve_timezone(zone_name)
        set_timezone(zone)
        window = Window.from_text(tz=zone,
            start_position=start_position, stop_position=stop_position,
            start_datetime=start_datetime, stop_datetime=stop_datetime,
            include_gtids=include_gtids, exclude_gtids=exclude_gtids,
            databases=window_databases, tables=window_tables)
        return command(*args, window=window, **kwargs)

    return wrapper


def refuse_window(window, what: str) -> None:  # type: ignore[no-untyped-def]
    """One line when a window cannot apply (``what``: the option it does not combine with)."""
    if window is not None and window.active:
        from ..errors import UsageError
        raise UsageError(f"the window options (--start-position, --include-gtids, "
                               f"--database, ...) are not available with {what}")


def report_damage(damage) -> None:  # type: ignore[no-untyped-def]
    """After a --keep-going run (a :class:`~repltool.binlog.damage.DamageLog`, or None
    without it): one line per damaged region kept, then the exit status of the first."""
    if damage is None:
        return
    for d in damage.regions:
        click.echo(f"repltool: damaged region: {printable(d.reason)} ({d.skipped} bytes "
                   "skipped)", err=True)
    damage_exit(damage.first, damage.n)


def damage_log(keep_going: bool, spark: object = None):  # type: ignore[no-untyped-def]
    """A :class:`~repltool.binlog.damage.DamageLog` for --keep-going (None without it);
    refused with --spark, whose tasks read whole files."""
    if not keep_going:
        return None
    if spark is not None:
        from ..errors import UsageError
        raise UsageError("--keep-going is not available with --spark on this command")
    from ..binlog.damage import DamageLog
    return DamageLog()
