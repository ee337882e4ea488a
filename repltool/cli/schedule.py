"""``repltool schedule``: how fast a multi-threaded replica applies the logs."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any
from pathlib import Path

import click

from ..errors import UsageError
from ..schedule import Policy, SimConfig, parse_workers
from ..schedule.source import CrashSpec, parse_cost, report_to_dict, schedule_report
from .options import (damage_log, inputs_argument, keep_going_option, read_inputs,
                      refuse_window, report_damage, run_spark, schema_db_option, spark_options,
                      verify_checksum_option, window_options)

if TYPE_CHECKING:
    from ..distributed import SparkOptions

_PLOT_SUFFIXES = (".png", ".svg")
#: replica_checkpoint_group's maximum in MySQL (sys_vars.cc: 32..524280, block size 8).
MAX_CHECKPOINT_GROUP = 524280
RETAG_MODES = ("writeset", "writeset-session", "group-replication", "commit-order")


def _compare_modes(text: str) -> list[str | None]:
    """None (the logged clocks) followed by the modes named in ``text``."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if names == ["all"]:
        names = list(RETAG_MODES)
    bad = [m for m in names if m not in RETAG_MODES]
    if bad or not names:
        raise UsageError(f"--compare {text!r}: expected MODE,... from {', '.join(RETAG_MODES)}"
                         " or 'all'")
    return [None, *dict.fromkeys(names)]


def _window(text: str) -> tuple[int, int]:
    start, sep, count = text.partition(":")
    if not (sep and start.strip().isdigit() and count.strip().isdigit()) or int(count) < 1:
        raise UsageError(f"--timeline-window {text!r}: expected START:COUNT "
                         "(relay indexes, COUNT >= 1)")
    return int(start), int(count)


@click.command()
@inputs_argument
@click.option("--workers", "workers_text", default="1,2,4,8,16", show_default=True,
              metavar="LIST", help="Worker counts to simulate: N, a list 1,2,4,8 or a range 1-32.")
@click.option("--policy", type=click.Choice([p.value for p in Policy]),
              default=Policy.AT_MOST_ONE.value, show_default=True,
              help="at-most-one is MySQL's worker choice; first-available waits for an idle worker.")
@click.option("--preserve-commit-order/--no-preserve-commit-order", default=True,
              show_default=True, help="replica_preserve_commit_order.")
@click.option("--coordinator-overhead", type=click.FloatRange(min=0.0), default=0.0,
              show_default=True, metavar="SECONDS",
              help="Coordinator time spent on each transaction.")
@click.option("--checkpoint-group", type=click.IntRange(1, MAX_CHECKPOINT_GROUP), default=512,
              show_default=True, metavar="N",
              help="GAQ size (replica_checkpoint_group; MySQL allows up to 524280).")
@click.option("--checkpoint-period", type=click.FloatRange(min=0.0), default=0.3,
              show_default=True, metavar="SECONDS",
              help="replica_checkpoint_period, for --crash-at (0: no timed checkpoints).")
@click.option("--cost", "cost_spec", default="linear", show_default=True,
              metavar="constant[:SECONDS]|linear[:T,R,B,E]|commit-ts|csv:FILE",
              help="How long a worker needs per transaction (linear:T,R,B,E: your own "
                   "seconds per transaction, row, byte, event).")
@click.option("--lenient", is_flag=True,
              help="Schedule inconsistent or missing clocks as barriers, with warnings.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="rich tables for people, JSON for machines.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE.png|FILE.svg",
              help="Draw the speed-up curve and a worker timeline (needs matplotlib; "
                   "written atomically; refuses an input or an existing file, see --force).")
@click.option("--force", is_flag=True, help="Let --plot replace an existing file (never an "
                                            "input).")
@click.option("--timeline-window", "window_text", default="0:40", show_default=True,
              metavar="START:COUNT", help="Transactions the --plot timeline shows.")
@click.option("--crash-at", "crash_text", metavar="SECONDS|GTID|#INDEX",
              help="Crash the recommended configuration there and show the MTS recovery.")
@click.option("--retag", type=click.Choice(RETAG_MODES), metavar="MODE",
              help="Simulate with the clocks repltool certify computes in MODE "
                   f"({', '.join(RETAG_MODES)}) instead of the logged ones.")
@click.option("--compare", "compare_text", metavar="MODE,...|all",
              help="Run the logged clocks and each MODE side by side ('all': every mode).")
@click.option("--schema", "schema_paths", multiple=True, type=click.Path(dir_okay=False),
              metavar="FILE", help="CREATE TABLE statements for the write sets of --retag / "
                                   "--compare (UNIQUE and FOREIGN keys); repeatable.")
@schema_db_option
@click.option("--parallel-mode", "mode_text", metavar="MODE,...|all",
              help="MariaDB logs: slave_parallel_mode(s) to simulate: none, minimal, "
                   "conservative (the default), optimistic, aggressive; 'all': every mode.")
@click.option("--domain-threads", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="N", help="MariaDB logs: slave_domain_parallel_threads (0: all threads).")
@click.option("--max-queued", type=click.IntRange(min=0), default=131072, show_default=True,
              metavar="BYTES", help="MariaDB logs: slave_parallel_max_queued.")
@click.option("--measured", "measured_path", type=click.Path(dir_okay=False),
              metavar="FILE", help="MariaDB logs: CSV of mode,threads,seconds your replica "
                                   "measured (threads 0 = serial): predicted vs measured.")
@window_options
@verify_checksum_option
@keep_going_option
@spark_options
@click.pass_context
def schedule(ctx: click.Context, files: tuple[str, ...], workers_text: str, policy: str,
             preserve_commit_order: bool, coordinator_overhead: float, checkpoint_group: int,
             checkpoint_period: float, cost_spec: str, lenient: bool, fmt: str,
             plot_path: str | None, force: bool, window_text: str, crash_text: str | None,
             retag: str | None, compare_text: str | None, schema_paths: tuple[str, ...],
             schema_db: str | None,
             mode_text: str | None, domain_threads: int, max_queued: int,
             measured_path: str | None, window: Any, verify_checksum: bool, keep_going: bool,
             spark: SparkOptions | None, output_parquet: str | None) -> None:
    """Simulate the LOGICAL_CLOCK multi-threaded applier over logs.

    Reads binlogs or relay logs in order, takes each transaction's
    last_committed/sequence_number as logged, gives it a cost, and simulates
    one coordinator and N workers for every worker count: makespan, speed-up
    over one worker, utilisation and waiting time by cause, against the
    critical path of the dependencies.  The recommendation is the smallest
    count beyond which more workers gain less than 5%.  --crash-at replays
    the WL#5599 checkpoints of the recommended configuration up to a crash
    and shows what a restart re-executes.

    With --spark, the files are parsed by Spark tasks (one per file; relay
    files whose transactions continue across a boundary are read together)
    and stitched in order; the simulation runs here.

    MariaDB logs are simulated with MariaDB's own applier instead
    (slave_parallel_mode, --parallel-mode; --workers are slave_parallel_threads
    counts, speed-ups are against the serial SQL thread); --retag/--compare
    still simulate MySQL clocks re-computed from their write sets.

    With a window (--start-position, --include-gtids, --database, ...), only
    the transactions in it are simulated, as if the logs held only them: the
    first one starts a source file (a barrier); with --retag/--compare the
    write-set history starts empty there.  --crash-at, GTIDs and #INDEX then
    refer to the window's transactions.
    """
    workers = parse_workers(workers_text)
    timeline = _window(window_text)
    if plot_path is not None and Path(plot_path).suffix.lower() not in _PLOT_SUFFIXES:
        raise UsageError(f"--plot {plot_path}: the file name must end in .png or .svg")
    from ..outputs import check_output
    inputs = read_inputs(files, schema_paths, cost_spec)
    if plot_path is not None:
        check_output(plot_path, inputs, force=force, option="--plot")
    if retag is None and compare_text is None:
        from ..schedule.mariadb import is_mariadb_log
        if is_mariadb_log(files):
            if spark is not None or crash_text or plot_path:
                raise UsageError("--spark, --crash-at and --plot are for MySQL's LOGICAL_CLOCK "
                                 "applier: not with MariaDB logs (or add --retag MODE)")
            damage = damage_log(keep_going)
            _schedule_mariadb(ctx, files, workers, cost_spec, fmt, schema_paths, schema_db,
                              mode_text, domain_threads, max_queued, measured_path,
                              verify_checksum, window, damage)
            report_damage(damage)
            return
    if mode_text is not None or measured_path is not None:
        raise UsageError("--parallel-mode and --measured simulate MariaDB's applier: only for "
                         "MariaDB logs without --retag/--compare (MySQL logs use "
                         "LOGICAL_CLOCK)")
    config = SimConfig(policy=Policy(policy), preserve_commit_order=preserve_commit_order,
                       coordinator_overhead=coordinator_overhead,
                       checkpoint_group=checkpoint_group, lenient=lenient)
    cost = parse_cost(cost_spec)
    crash = CrashSpec.parse(crash_text) if crash_text is not None else None
    damage = damage_log(keep_going, spark)
    if (retag or compare_text) and spark is not None:
        raise UsageError("--retag/--compare certify the logs in order here: not with --spark")
    if compare_text is not None:
        if retag or crash or plot_path:
            raise UsageError("--compare does not combine with --retag, --crash-at or --plot")
        from ..schedule.source import clockless
        modes = _compare_modes(compare_text)
        if clockless(files):
            modes = modes[1:]       # MariaDB / 5.6: nothing logged to compare against
        reports = [schedule_report(files, workers, config, cost, verify_checksum=verify_checksum,
                                   retag=m, schema_paths=schema_paths, window=window,
                                   schema_db=schema_db,
                                   # each run reads the logs again: the first one reports
                                   damage=damage if i == 0 else damage_log(keep_going))
                   for i, m in enumerate(modes)]
        if fmt == "json":
            json.dump({"compare": [report_to_dict(r) for r in reports]}, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            from .render import make_console
            from .render_schedule import compare_renderables
            color = (ctx.obj or {}).get("color")
            make_console(color).print(*compare_renderables(reports))
        report_damage(damage)
        return
    if spark is not None:
        refuse_window(window, "--spark")
        from ..distributed import spark_schedule_report

        def job(session, names):  # type: ignore[no-untyped-def]
            return spark_schedule_report(
                session, names, workers, config, cost, verify_checksum=verify_checksum,
                trace=plot_path is not None, crash=crash,
                checkpoint_period=checkpoint_period or None, output_parquet=output_parquet)

        report = run_spark(spark, files, job)
    else:
        report = schedule_report(
            files, workers, config, cost, verify_checksum=verify_checksum,
            trace=plot_path is not None, crash=crash,
            checkpoint_period=checkpoint_period or None, retag=retag,
            schema_paths=schema_paths, window=window, schema_db=schema_db, damage=damage)
    if plot_path is not None:
        from .render_schedule import write_plot
        write_plot(report, plot_path, timeline, inputs, force=force)
    if fmt == "json":
        json.dump(report_to_dict(report), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from .render import make_console
        from .render_schedule import schedule_renderables
        color = (ctx.obj or {}).get("color")
        console = make_console(color)
        for item in schedule_renderables(report):
            console.print(item)
    report_damage(damage)


def _schedule_mariadb(ctx: click.Context, files: tuple[str, ...], workers: list[int],
                      cost_spec: str, fmt: str, schema_paths: tuple[str, ...],
                      schema_db: str | None,
                      mode_text: str | None, domain_threads: int, max_queued: int,
                      measured_path: str | None, verify_checksum: bool,
                      window: Any = None, damage: Any = None) -> None:
    """``schedule`` on MariaDB logs: MariaDB's applier in each requested mode."""
    from ..schedule.mariadb import (DEFAULT_MODE, MariaConfig, maria_report_to_dict,
                                    maria_reports, read_measurements)
    modes = _parallel_modes(mode_text) if mode_text is not None else [DEFAULT_MODE]
    measurements = read_measurements(measured_path) if measured_path is not None else []
    if measurements and mode_text is None:
        modes = list(dict.fromkeys(m.mode for m in measurements if m.threads > 0)) or modes
    config = MariaConfig(domain_threads=domain_threads, max_queued=max_queued)
    reports = maria_reports(files, workers, modes, parse_cost(cost_spec), config=config,
                            verify_checksum=verify_checksum, schema_paths=schema_paths,
                            schema_db=schema_db, window=window, damage=damage,
                            measurements=measurements)
    if fmt == "json":
        doc = (maria_report_to_dict(reports[0]) if len(reports) == 1
               else {"compare": [maria_report_to_dict(r) for r in reports]})
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    from .render import make_console
    from .render_schedule import maria_renderables
    console = make_console((ctx.obj or {}).get("color"))
    for item in maria_renderables(reports):
        console.print(item)


def _parallel_modes(text: str) -> list:  # type: ignore[type-arg]
    """The slave_parallel_mode values named in ``text`` (or every one for 'all')."""
    from ..schedule.mariadb import ParallelMode
    names = [m.strip().lower() for m in text.split(",") if m.strip()]
    if names == ["all"]:
        return list(ParallelMode)
    valid = [m.value for m in ParallelMode]
    bad = [m for m in names if m not in valid]
    if bad or not names:
        raise UsageError(f"--parallel-mode {text!r}: expected MODE,... from "
                         f"{', '.join(valid)} or 'all'")
    return [ParallelMode(m) for m in dict.fromkeys(names)]
