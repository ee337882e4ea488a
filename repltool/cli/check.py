"""``repltool check``: CI assertions on captured logs (rules, thresholds, JUnit/GitHub output)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..errors import UsageError
from ..escape import printable
from .options import (
    SIZE, damage_log, keep_going_option, refuse_window, report_damage, run_spark,
    schema_db_option, spark_options, window_options,
)

_EPILOG = """\b
Parallelism (T001, C008) = work / span: the number of transactions that carry
a logical clock divided by the longest chain of transactions that must run one
after another under the recorded clocks, read as the replica's LOGICAL_CLOCK
scheduler reads them: a transaction waits for every earlier transaction of its
clock segment whose sequence_number <= its last_committed; a barrier
(last_committed = 0, sequence_number = 0, the first transaction of a file or
source segment, a sequence gap, the transaction after a (0,0)) waits for
everything before it, and everything after it waits for it. Unlimited workers,
equal transaction costs: 1.0 is fully serial. T001/T002 are evaluated over all
FILES together and reported as TOTAL.

\b
Configuration: [tool.repltool.check] in pyproject.toml, [check] in
.repltool.toml or [repltool.check] in setup.cfg, searched from the current
directory upwards up to the repository root (the first directory with .git)
(keys: select, ignore, severity, min-parallelism, max-barrier-share,
max-trx-size, gr-applier). The file used is named on stderr ("repltool: using
configuration FILE"), in --format json and in the JUnit report. A file other
users could have written (world-writable, or in a world-writable directory
such as /tmp and not yours) is ignored with a warning. Command-line options
win: --select replaces the file's select, --ignore and --severity add to the
file's.

\b
Exit status of check:
  0    no finding at error level (warnings and info allowed)
  1    at least one finding at error level
  2    usage error, bad configuration, or an input file that cannot be opened
  8    I/O error: the JUnit report or standard output cannot be written
  130  interrupted
  143  terminated (SIGTERM)
Damaged files (not a binlog, CRC mismatch, truncated...) are findings, not
exit statuses."""


def _severity_items(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]):
    from ..check import parse_severities
    try:
        return parse_severities(value)
    except UsageError as exc:
        raise click.BadParameter(exc.reason) from None


def _share(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip()
    try:
        share = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a fraction (0.25) or a percentage (25%)") \
            from None
    if not 0 <= share <= 1:
        raise click.BadParameter(f"{value!r} is not between 0 and 1 (0% and 100%)")
    return share


def _codes(value: tuple[str, ...]) -> tuple[str, ...]:
    from ..check.config import split_list
    return tuple(c for v in value for c in split_list(v))


@click.command(epilog=_EPILOG)
@click.argument("files", nargs=-1, type=click.Path())
@click.option("--list-rules", is_flag=True, help="List the rules (code, severity, name, "
              "meaning) and exit.")
@click.option("--select", "select", multiple=True, metavar="RULE,...",
              help="Run only these rules: codes or prefixes (S, C00, ALL). Replaces the "
                   "configuration's select.")
@click.option("--ignore", "ignore", multiple=True, metavar="RULE,...",
              help="Do not run these rules (codes or prefixes); added to the configuration's.")
@click.option("--severity", "severity", multiple=True, metavar="RULE=LEVEL",
              callback=_severity_items,
              help="Change a rule's severity: error, warning or info (repeatable, or "
                   "comma-separated). Only error-level findings fail the check.")
@click.option("--min-parallelism", type=click.FloatRange(min=0, min_open=True), metavar="X",
              help="T001: fail when work/span of all FILES (see below) is below X.")
@click.option("--max-barrier-share", callback=_share, metavar="Y",
              help="T002: fail when more than Y (0.25 or 25%) of all transactions have "
                   "last_committed = 0.")
@click.option("--max-trx-size", type=SIZE, metavar="SIZE",
              help="T003: fail on any transaction bigger than SIZE (bytes, or 64k, 10M, "
                   "1.5MiB, 1G: powers of 1024).")
@click.option("--gr-applier", type=click.Choice(["auto", "yes", "no"]), default=None,
              help="Read relay logs as Group Replication applier logs (sequence numbers "
                   "from 2, never reset). auto [default]: when a relay log's first "
                   "transaction is (1, 2).")
@click.option("--writesets", type=click.Path(dir_okay=False), metavar="FILE.json",
              help="Write sets per transaction for W001/W002 (JSON, see the README) "
                   "instead of extracting them from the logs' row events.")
@click.option("--schema", "schemas", multiple=True, type=click.Path(dir_okay=False),
              metavar="FILE", help="CREATE TABLE statements: UNIQUE and FOREIGN keys for the "
              "write sets W001/W002 extract from row events (repeatable).")
@schema_db_option
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]),
              default="text", show_default=True,
              help="text: FILE:OFFSET RULE severity: message; json; github: workflow "
                   "commands (::error file=...,title=RULE::message).")
@click.option("--junit", type=click.Path(dir_okay=False), metavar="FILE",
              help="Also write a JUnit XML report (one testsuite per file, one testcase "
                   "per file and rule), atomically; refuses an input or an existing file "
                   "(see --force).")
@click.option("--force", is_flag=True,
              help="Let --junit replace an existing file (never one of the inputs).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Read the configuration from FILE instead of searching for it.")
@click.option("--no-config", is_flag=True, help="Ignore every configuration file.")
@click.option("--verify-binlog-checksum/--no-verify-binlog-checksum", "verify_checksum",
              default=True, show_default=True,
              help="Check every event's CRC32 (rule S003); --no-verify-binlog-checksum is "
                   "--ignore S003, as on the other commands.")
@window_options
@keep_going_option
@spark_options
def check(files: tuple[str, ...], list_rules: bool, select: tuple[str, ...],
          ignore: tuple[str, ...], severity: dict, min_parallelism: float | None,
          max_barrier_share: float | None, max_trx_size: int | None, gr_applier: str | None,
          writesets: str | None, schemas: tuple[str, ...], schema_db: str | None, fmt: str,
          junit: str | None, force: bool, config_file: str | None, no_config: bool,
          verify_checksum: bool, window: Any, keep_going: bool, spark: Any,
          output_parquet: str | None) -> None:
    """Check logs for damage, bad logical clocks, GTID and relay-log problems.

    Every FILE is checked, in the order given (the last one may be the active
    log); a damaged file is reported and the check goes on with the next one.
    With --keep-going the check goes on inside a damaged file too: each damaged
    region is skipped (up to the next event whose CRC32 verifies), becomes a
    finding of its structure rule, and is listed on stderr; the exit status is
    then that of the first damage.
    Prints one line per finding, FILE:OFFSET RULE severity: message.

    With --spark, one Spark task per file reads it (CRC32s, events) and
    extracts the write sets W001/W002 need; the rules run on the driver over
    the files in the order given (the same findings).  --output-parquet is
    not available with check.

    With a window (--start-position, --include-gtids, --database, ...), the
    whole logs are still read and checked (rules need what came before:
    GTIDs seen, clocks), and only the findings located in the window's
    transactions are reported; findings about whole files or all FILES
    (C007, C008, T001, T002, W003: no offset) are left out.
    """
    from ..check import check_files, load_config, load_writesets, override
    from ..check import report as rep
    if list_rules:
        click.echo(_rules_listing(fmt), nl=False)
        return
    if not files:
        raise click.UsageError("no FILE given (or use --list-rules)")
    if config_file and no_config:
        raise click.UsageError("--config and --no-config exclude each other")
    inputs = [*files, *([writesets] if writesets else []), *schemas,
              *([config_file] if config_file else [])]
    if junit:
        from ..outputs import check_output
        check_output(junit, inputs, force=force, option="--junit")
    base = load_config(config_file, search=not no_config)
    if base.source is not None:
        click.echo(f"repltool: using configuration {printable(str(base.source))}", err=True)
    ignored = _codes(ignore) + (() if verify_checksum else ("S003",))
    cfg = override(base, select=_codes(select) or None, ignore=ignored,
                   severity=severity, min_parallelism=min_parallelism,
                   max_barrier_share=max_barrier_share, max_trx_size=max_trx_size,
                   gr_applier=gr_applier)
    if writesets and schemas:
        raise click.UsageError("--writesets and --schema exclude each other")
    if output_parquet is not None:
        raise click.UsageError("--output-parquet is not available with check")
    mapping = load_writesets(writesets) if writesets else None
    schema = None
    if not writesets and schemas:
        from ..writeset import load_schema
        schema = load_schema(list(schemas), default_db=schema_db)
    damage = damage_log(keep_going, spark)
    if spark is not None:
        refuse_window(window, "--spark")
        from ..distributed import spark_check
        from ..distributed.checkjob import ROWS
        result = run_spark(spark, files, lambda session, names: spark_check(
            session, names, cfg, provider=mapping if mapping is not None else ROWS, schema=schema))
    else:
        from ..check.writesets import builtin_provider
        from ..collector import few_collections
        with few_collections():     # the write-set reader's key caches (see there)
            result = check_files(list(files), cfg, writesets=mapping if mapping is not None
                                 else builtin_provider(schema), window=window, damage=damage)
    render = {"text": rep.render_text, "json": rep.render_json, "github": rep.render_github}
    sys.stdout.write(render[fmt](result))
    sys.stdout.flush()
    if junit:
        from ..outputs import write_file
        write_file(junit, rep.render_junit(result), inputs, force=force, option="--junit")
    report_damage(damage)       # --keep-going: the first damage's exit status
    raise click.exceptions.Exit(result.exit_status)


def _rules_listing(fmt: str) -> str:
    from ..check import RULES
    if fmt == "json":
        return json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.value,
                            "scope": r.scope.value, "needs": r.needs, "summary": r.summary}
                           for r in RULES.values()], indent=2) + "\n"
    lines = []
    for r in RULES.values():
        needs = ""
        if r.needs == "writesets":
            needs = " [write sets from row events; --schema adds UNIQUE/FOREIGN keys]"
        elif r.needs:
            needs = f" [enabled by --{r.needs.replace('_', '-')}]"
        lines.append(f"{r.code}  {r.severity.value:<7}  {r.name:<34} {r.summary}{needs}")
    return "\n".join(lines) + "\n"
