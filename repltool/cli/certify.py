"""``repltool certify``: recompute logical clocks from write sets, report, re-tag."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from ..certify import Baseline, CertifyOptions, GtidSet, Mode
from ..errors import CertifyError, UsageError
from ..escape import printable
from .jsonlines import LineBatch
from .options import (
    damage_log, default_collation_option, few_collections, inputs_argument, keep_going_option,
    refuse_window, report_damage, run_spark, schema_db_option, spark_options,
    verify_checksum_option, window_options,
)

if TYPE_CHECKING:
    from ..binlog.window import Window

_GR_ONLY = ("gc_every", "gc_interval", "gc_stable_set", "members", "member_lag",
            "session_order")
_CHECK_SHOWN = 10
#: Group Replication's limit on a group's size (9 members, WL#6833).
MAX_GROUP_MEMBERS = 9


@click.command()
@inputs_argument
@click.option("--mode", type=click.Choice([m.value for m in Mode]), default=None,
              help="Which MySQL algorithm computes the clocks.  Default: group-replication "
                   "for relay logs (the GR applier channel), writeset for binlogs.")
@click.option("--history-size", type=click.IntRange(1, 1_000_000), default=25000,
              show_default=True, metavar="N",
              help="binlog_transaction_dependency_history_size (writeset modes; also the "
                   "write-set size limit) and the size of the GTID name memory.")
@click.option("--baseline", type=click.Choice([b.value for b in Baseline]), default=None,
              help="Writeset modes: the commit-order parent that write sets narrow: the "
                   "logged last_committed (recorded, default; logs without clocks use the "
                   "predecessor) or the predecessor (serial).")
@click.option("--gc-every", type=click.IntRange(min=1), metavar="N",
              help="group-replication: garbage-collect the certification info after every "
                   "N certified transactions (opens a new window).")
@click.option("--gc-interval", type=click.FloatRange(min=0.0, min_open=True), metavar="SECONDS",
              help="group-replication: garbage-collect when the commit time advanced SECONDS "
                   "(MySQL broadcasts gtid_executed every 60 s).")
@click.option("--gc-stable-set", multiple=True, metavar="GTIDSET",
              help="group-replication: garbage-collect with this stable set once all its "
                   "GTIDs were certified (repeatable).")
@click.option("--members", type=click.IntRange(0, MAX_GROUP_MEMBERS), default=0, metavar="N",
              help="group-replication: simulate an N-member multi-primary group "
                   "(sessions assigned round-robin) for conflict detection; a group has "
                   "at most 9 members.")
@click.option("--member-lag", type=click.IntRange(0, 1_000_000), default=0, metavar="N",
              help="With --members: transactions a member has not applied yet; writes of "
                   "the same row within the lag conflict (the later one is rolled back).")
@click.option("--session-order", is_flag=True, default=False,
              help="group-replication: also order each session's transactions (WL#8440 "
                   "FR2; MySQL leaves that to replica_preserve_commit_order).")
@click.option("--schema", "schema_paths", multiple=True, type=click.Path(dir_okay=False),
              metavar="FILE", help="CREATE TABLE statements (unique keys, foreign keys, "
                                   "collations) for write-set extraction; repeatable.")
@schema_db_option
@default_collation_option
@click.option("--pk-only", is_flag=True,
              help="Re-tag without --schema, vouching that no table has a UNIQUE or FOREIGN "
                   "key beyond what the Table_maps describe (otherwise --output needs "
                   "--schema: keys the log does not show would be missed, which is unsafe).")
@click.option("--format", "fmt", type=click.Choice(["text", "jsonl"]), default="text",
              show_default=True, help="rich tables, or one JSON object per transaction.")
@click.option("--output", "output_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Write re-tagged copies of the logs to DIR (same file names; only the "
                   "GTID events' logical timestamps and CRCs change; all-or-nothing, "
                   "also on SIGTERM; an existing file is refused without --force).")
@click.option("--force", is_flag=True,
              help="With --output: replace same-named files already in DIR (never an input).")
@click.option("--timestamp-encoding", type=click.Choice(["mysql", "delta16"]), default="mysql",
              show_default=True, help="With --output: MySQL's two int64, or repltool's "
                                      "16-bit delta (typecode 3).")
@click.option("--check", is_flag=True,
              help="Exit 1 when a logged clock differs from the computed one (e.g. to "
                   "verify a server's, or a re-tagged log's, clocks).")
@window_options
@verify_checksum_option
@keep_going_option
@spark_options
@click.pass_context
def certify(ctx: click.Context, files: tuple[str, ...], mode: str | None, history_size: int,
            baseline: str | None, gc_every: int | None, gc_interval: float | None,
            gc_stable_set: tuple[str, ...], members: int, member_lag: int, session_order: bool,
            schema_paths: tuple[str, ...], schema_db: str | None,
            default_collation: str | None, pk_only: bool,
            fmt: str, output_dir: str | None, force: bool, timestamp_encoding: str, check: bool,
            window: Window, verify_checksum: bool, keep_going: bool, spark: Any,
            output_parquet: str | None) -> None:
    """Recompute last_committed/sequence_number from the write sets of the rows.

    Reads the logs in order, extracts every transaction's write set (primary
    and unique keys, foreign-key parents) and runs MySQL's dependency
    tracker for --mode: commit-order, writeset or writeset-session
    (sql/rpl_trx_tracking.cc; numbering restarts in every binlog file, or
    source binlog of a relay log), or the Group Replication certifier
    (WL#6833/WL#8440; numbering starts at 2 and continues across files; a
    View_change garbage-collects and opens a new window).  Empty
    transactions (GTID, BEGIN, COMMIT) stay parallel; CREATE TABLE ...
    SELECT is a DDL.  Reports the parallelism of the logged and of the
    computed clocks, why each transaction depends on its parent, the
    transactions without a usable write set by reason, and transactions the
    session rule cannot see.  With --output, writes re-tagged copies of the
    logs; with --baseline recorded, a logged parent that lets a transaction
    overlap an earlier writer of its key is raised to that writer (a
    warning counts them).

    With --spark, files are read and write sets extracted by one Spark task
    per file; writeset and commit-order certify binlogs there too (and with
    --output the executors write the re-tagged copies into a staging
    directory the driver commits all or none: DIR must be visible to every
    executor), other modes are certified on the driver in input order (the
    same output).

    With a window (--start-position, --include-gtids, --database, ...), only
    the transactions in it are certified, as if the logs held only them (the
    write-set history starts empty at the first one); --output refuses a
    window, since a re-tagged copy must hold every transaction.
    """
    from ..certify.report import CertifyRun, LineSink, ReportBuilder
    from ..certify.retag import ClockMap, check_output_dir, retag_logs, retag_staged

    given = {"gc_every": gc_every, "gc_interval": gc_interval, "gc_stable_set": gc_stable_set,
             "members": members, "member_lag": member_lag, "session_order": session_order}
    if member_lag and not members:
        raise UsageError("--member-lag needs --members")
    if timestamp_encoding != "mysql" and output_dir is None:
        raise UsageError("--timestamp-encoding needs --output")
    if force and output_dir is None:
        raise UsageError("--force needs --output")
    stable_sets = tuple(_gtid_set(s) for s in gc_stable_set)
    if spark is not None and default_collation is not None:
        raise UsageError("--default-collation is not available with --spark yet")
    damage = damage_log(keep_going, spark)
    if output_dir is not None and damage is not None:
        raise UsageError("--keep-going is not available with --output: a re-tagged copy of "
                         "a damaged log would lose the transactions of its damaged regions")
    if output_dir is not None:
        refuse_window(window, "--output (a re-tagged copy holds every transaction: "
                      "certify the whole logs)")
    if spark is not None:
        refuse_window(window, "--spark")
    if output_dir is not None:
        if not schema_paths and not pk_only and (mode or "") != "commit-order":
            raise UsageError(
                "--output without --schema: UNIQUE and FOREIGN keys are not in the binlog, so "
                "the re-tagged clocks could let conflicting transactions run in parallel; "
                "give --schema FILE (SHOW CREATE TABLE output), or --pk-only if every table's "
                "only unique key is its primary key")
        check_output_dir(files, output_dir, force=force)
    options = CertifyOptions(
        history_size=history_size, baseline=Baseline(baseline or "recorded"),
        session_order=session_order, gc_every=gc_every, gc_interval=gc_interval,
        members=members, member_lag=member_lag)

    # the report alone, no line per transaction: --spark executors send only its columns
    report_only = fmt != "jsonl" and not check

    def build(run: Any, outputs: Any = None, written: Any = None
              ) -> tuple[Any, _Differences]:
        _check_mode_options(run.mode, given, baseline)
        sinks: list[Any] = []
        clocks = ClockMap() if output_dir is not None else None
        if clocks is not None and not (written is not None and report_only):
            sinks.append(clocks)        # (else the executors re-tagged from their clocks)
        lines = None
        if fmt == "jsonl":
            lines = LineBatch(sys.stdout.write)
            sinks.append(LineSink(lines.add))
        differences = _Differences()
        if check:
            sinks.append(differences)
        try:
            report = ReportBuilder(run, sinks).build()
        finally:                # the lines of what was certified before an error too
            if lines is not None:
                lines.flush()
        if clocks is not None:
            from dataclasses import replace
            retag = (retag_logs(files, clocks, output_dir,  # type: ignore[arg-type]
                                encoding=timestamp_encoding, force=force) if outputs is None
                     else retag_staged(outputs, run.paths, clocks, encoding=timestamp_encoding,
                                       written=written))
            report = replace(report, retag=retag)
        return report, differences

    if spark is None:
        with few_collections():     # the write-set reader's key caches (see there)
            report, differences = build(CertifyRun(files, mode, options,
                                                   verify_checksum=verify_checksum,
                                                   schema_paths=schema_paths,
                                                   schema_db=schema_db,
                                                   stable_sets=stable_sets,
                                                   default_collation=default_collation,
                                                   window=window, damage=damage))
    else:
        from ..certify.stitched import PairsRun
        from ..distributed import spark_pairs

        def job(session: Any, names: list[str]) -> tuple[Any, _Differences]:
            run = PairsRun(names, mode, options, schema_paths=schema_paths, schema_db=schema_db,
                           stable_sets=stable_sets)
            if output_dir is None:
                spark_pairs(session, names, run, verify_checksum=verify_checksum,
                            output_parquet=output_parquet, report_only=report_only)
                return build(run)
            # executors that certify their files write the re-tagged copies into the
            # staging directory; the driver commits them all or none
            with check_output_dir(names, output_dir, force=force) as outputs:
                written = spark_pairs(session, names, run, verify_checksum=verify_checksum,
                                      output_parquet=output_parquet,
                                      output=(str(outputs.staging), timestamp_encoding),
                                      report_only=report_only)
                return build(run, outputs, written)
        report, differences = run_spark(spark, files, job)
    if fmt == "text":
        from .render import make_console
        from .render_certify import certify_renderables
        color = (ctx.obj or {}).get("color")
        console = make_console(color)
        for item in certify_renderables(report):
            console.print(item)
    for w in [*report.warnings, *(w for r in report.retag or () for w in r.warnings)]:
        click.echo(f"repltool: warning: {printable(str(w))}", err=True)
    report_damage(damage)
    if check and differences.count:
        for line in differences.shown:
            click.echo(f"repltool: {printable(line)}", err=True)
        raise CertifyError(f"--check: {differences.count} transaction(s) do not carry the "
                           f"clock {report.mode.value} computes")


def _gtid_set(text: str) -> GtidSet:
    try:
        stable = GtidSet.parse(text)
    except CertifyError as exc:
        raise UsageError(f"--gc-stable-set {text!r}: {exc.reason}") from None
    if not stable:
        raise UsageError(f"--gc-stable-set {text!r}: no GTID in it (uuid:1-5,uuid2:7)")
    return stable


def _check_mode_options(mode: Mode, given: dict[str, Any], baseline: str | None) -> None:
    if mode is not Mode.GROUP_REPLICATION:
        used = [f"--{k.replace('_', '-')}" for k in _GR_ONLY if given[k]]
        if used:
            raise UsageError(f"{', '.join(used)} only apply to --mode group-replication "
                             f"(mode is {mode.value}"
                             + (": writeset-session always orders sessions)"
                                if mode is Mode.WRITESET_SESSION else ")"))
    elif baseline is not None:
        raise UsageError("--baseline applies to the writeset modes, not group-replication")


class _Differences:
    """--check: count transactions whose logged clock is not the computed one."""

    def __init__(self) -> None:
        self.count = 0
        self.shown: list[str] = []

    def __call__(self, c: Any) -> None:
        from ..certify.report import recorded_clock
        trx, r = c
        recorded = recorded_clock(trx)
        if r.computed == recorded:
            return
        self.count += 1
        if len(self.shown) < _CHECK_SHOWN:
            logged = "no clock" if recorded is None else f"{recorded[0]},{recorded[1]}"
            computed = ("no number" if r.computed is None
                        else f"{r.computed[0]},{r.computed[1]}")
            self.shown.append(f"{trx.start} {trx.gtid or 'ANONYMOUS'}: logged ({logged}), "
                              f"computed ({computed}) [{r.reason.value}]")
