"""``repltool explain``: why a replica cannot apply a log faster."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..certify import Baseline, CertifyOptions, Mode
from ..errors import UsageError
from ..escape import json_safe, printable
from .options import (damage_log, inputs_argument, keep_going_option, read_inputs,
                      refuse_window, report_damage, run_spark, schema_db_option, spark_options,
                      verify_checksum_option, window_options)

_GR_ONLY = ("gc_every", "gc_interval", "session_order")


@click.command()
@inputs_argument
@click.option("--mode", type=click.Choice(["recorded", *(m.value for m in Mode)]),
              default="recorded", show_default=True,
              help="Where the clocks come from: the logged last_committed/sequence_number "
                   "(recorded), or repltool certify's algorithm (the reasons and keys behind "
                   "each dependency; needs row images for write sets).")
@click.option("--baseline", type=click.Choice([b.value for b in Baseline]), default=None,
              help="Writeset modes: the commit-order parent write sets narrow (recorded: the "
                   "logged one, default; serial: the predecessor - use it for MariaDB logs).")
@click.option("--history-size", type=click.IntRange(1, 1_000_000), default=25000,
              show_default=True, metavar="N", help="binlog_transaction_dependency_history_size.")
@click.option("--schema", "schema_paths", multiple=True, type=click.Path(dir_okay=False),
              metavar="FILE", help="CREATE TABLE statements (unique keys, foreign keys) for "
                                   "write-set extraction; repeatable.")
@schema_db_option
@click.option("--gc-every", type=click.IntRange(min=1), metavar="N",
              help="group-replication: garbage-collect after every N certified transactions.")
@click.option("--gc-interval", type=click.FloatRange(min=0.0, min_open=True),
              metavar="SECONDS", help="group-replication: garbage-collect every SECONDS of "
                                      "commit time.")
@click.option("--session-order", is_flag=True,
              help="group-replication: also order each session's transactions.")
@click.option("--cost", "cost_spec", default="linear", show_default=True,
              metavar="constant[:SECONDS]|linear|commit-ts|csv:FILE",
              help="Cost model, as for repltool schedule (critical path in its seconds).")
@click.option("--lenient", is_flag=True,
              help="Inconsistent or missing clocks become barriers, with warnings.")
@click.option("--gtid", metavar="GTID", help="Explain this transaction: what it waits for "
                                             "and why, its depth on the longest path.")
@click.option("--pos", metavar="[FILE:]OFFSET",
              help="Explain the transaction that starts at (or contains) this offset.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot", "mermaid"]),
              default="text", show_default=True,
              help="rich tables/tree, JSON, or a Graphviz/Mermaid picture of a window.")
@click.option("--around", metavar="GTID|#INDEX|[FILE:]OFFSET",
              help="dot/mermaid/--render: draw the transactions within --depth edges of this "
                   "one (default: the --gtid/--pos transaction, else the --limit "
                   "transactions where the critical path is heaviest).")
@click.option("--depth", type=click.IntRange(min=0), default=2, show_default=True, metavar="K",
              help="Edges from the --around transaction (both directions).")
@click.option("--limit", type=click.IntRange(min=1), default=40, show_default=True,
              metavar="N", help="At most N transactions in a picture.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, metavar="N",
              help="Serialisers listed per kind.")
@click.option("--render", "render_path", type=click.Path(dir_okay=False),
              metavar="FILE.svg|FILE.png",
              help="Also draw the window with Graphviz's dot (atomically; refuses an input "
                   "or an existing file, see --force).")
@click.option("--force", is_flag=True, help="Let --render replace an existing file (never "
                                            "an input).")
@window_options
@verify_checksum_option
@keep_going_option
@spark_options
@click.pass_context
def explain(ctx: click.Context, files: tuple[str, ...], mode: str, baseline: str | None,
            history_size: int, schema_paths: tuple[str, ...], schema_db: str | None,
            gc_every: int | None,
            gc_interval: float | None, session_order: bool, cost_spec: str, lenient: bool,
            gtid: str | None, pos: str | None, fmt: str, around: str | None, depth: int,
            limit: int, top: int, render_path: str | None, force: bool, window: Any,
            verify_checksum: bool, keep_going: bool, spark: Any,
            output_parquet: str | None) -> None:
    """Show why a replica cannot go faster: the dependency DAG of the logs.

    Builds the DAG the LOGICAL_CLOCK applier enforces - from the logged clocks
    (--mode recorded) or from the clocks repltool certify computes, with the
    reason behind each dependency: the key of the row two transactions
    share, or the rule (table without usable key, DDL, foreign-key parent,
    history reset, GC window, session order, view change, file start,
    commit order).  For the whole log: the critical path (same cost model and
    same value as repltool schedule's), the average parallelism and the top
    serialisers with their share of the critical path.  With --gtid/--pos:
    one transaction, edge by edge, and its depth on the longest path.

    With --spark, the files are read (and, in a certify mode, their write sets
    extracted) by one Spark task per file; the DAG is built on the driver (the
    same output).

    With a window (--start-position, --include-gtids, --database, ...), the
    DAG is that of the transactions in it, as if the logs held only them: the
    first one starts a source file, and in a certify mode the write-set
    history starts empty there.
    """
    from ..explain import explain_log, find_node
    from ..schedule.source import parse_cost

    if gtid is not None and pos is not None:
        raise UsageError("give --gtid or --pos, not both")
    _check_mode_options(mode, baseline, schema_paths, history_size,
                        {"gc_every": gc_every, "gc_interval": gc_interval,
                         "session_order": session_order})
    if render_path is not None:
        from ..explain import dot_available
        if not render_path.lower().endswith((".svg", ".png")):
            raise UsageError(f"--render {render_path}: the file name must end in .svg or .png")
        if dot_available() is None:
            raise UsageError(f"--render {render_path}: Graphviz's dot is not installed "
                             "(Debian: apt-get install graphviz)")
        from ..outputs import check_output
        check_output(render_path, read_inputs(files, schema_paths, cost_spec), force=force,
                     option="--render")
    cost = parse_cost(cost_spec)
    damage = damage_log(keep_going, spark)
    options = None
    if mode != "recorded":
        options = CertifyOptions(history_size=history_size,
                                 baseline=Baseline(baseline or "recorded"),
                                 gc_every=gc_every, gc_interval=gc_interval,
                                 session_order=session_order)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, *_a, **_k: click.echo(  # type: ignore[assignment]
            f"repltool: warning: {printable(str(message))}", err=True)
        if spark is None:
            graph = explain_log(files, mode, cost_model=cost, options=options,
                                schema_paths=schema_paths, lenient=lenient,
                                verify_checksum=verify_checksum, window=window,
                                schema_db=schema_db, damage=damage)
        else:
            refuse_window(window, "--spark")
            graph = run_spark(spark, files, lambda session, names: _spark_graph(
                session, names, mode, cost, options, schema_paths, lenient, verify_checksum,
                output_parquet, schema_db))
    focus = None
    if gtid is not None or pos is not None:
        focus = find_node(graph, gtid=gtid, pos=pos)
    picture = None
    picture_focus = focus
    if fmt in ("dot", "mermaid") or render_path is not None:
        picture = _window(graph, around, focus, depth, limit)
        if around is not None and graph.nodes:
            picture_focus = _resolve(graph, around)
    if render_path is not None:
        from ..explain import render, to_dot
        render(to_dot(graph, picture or [], focus=picture_focus), render_path,
               read_inputs(files, schema_paths, cost_spec), force=force)
    if picture and graph.mode == "recorded":
        shown = set(picture)
        if all(e.reason == "commit-order" for e in graph.edges
               if e.src in shown and e.dst in shown):
            click.echo("repltool: hint: every edge in the picture is commit order (the "
                       "logged clocks do not say which rows the transactions share); "
                       "--mode writeset --schema FILE shows the rows involved", err=True)
    _output(ctx, graph, fmt, focus, picture, top, picture_focus)
    for w in graph.warnings[:20]:
        click.echo(f"repltool: warning: {printable(str(w))}", err=True)
    if len(graph.warnings) > 20:
        click.echo(f"repltool: warning: ... and {len(graph.warnings) - 20} more warnings "
                   "(--format json lists them all)", err=True)
    report_damage(damage)


def _spark_graph(session: Any, names: list[str], mode: str, cost: Any, options: Any,
                 schema_paths: tuple[str, ...], lenient: bool, verify_checksum: bool,
                 output_parquet: str | None, schema_db: str | None = None) -> Any:
    from ..distributed import logged_transactions, spark_pairs, write_parquet
    from ..distributed.driver import stitched
    from ..explain import ExplainPairsRun, explain_prepared
    if mode == "recorded":
        run, rotations = logged_transactions(session, names, verify_checksum=verify_checksum,
                                             rows=output_parquet is not None)
        graph = explain_prepared(names, mode, (stitched(run), rotations), cost_model=cost,
                                 lenient=lenient)
        if output_parquet is not None:
            write_parquet(session, run, output_parquet)
        return graph
    pairs = ExplainPairsRun(names, Mode(mode), options, schema_paths=schema_paths,
                            schema_db=schema_db)
    spark_pairs(session, names, pairs, verify_checksum=verify_checksum,
                output_parquet=output_parquet)
    return explain_prepared(names, mode, pairs, cost_model=cost, lenient=lenient)


def _output(ctx: click.Context, graph, fmt: str, focus: int | None,  # type: ignore[no-untyped-def]
            window: list[int] | None, top: int, picture_focus: int | None) -> None:
    from ..explain import (explain_transaction, graph_dict, to_dot, to_mermaid,
                           transaction_dict)
    if fmt == "dot":
        sys.stdout.write(to_dot(graph, window or [], focus=picture_focus))
        return
    if fmt == "mermaid":
        sys.stdout.write(to_mermaid(graph, window or [], focus=picture_focus))
        return
    if fmt == "json":
        data = (transaction_dict(graph, explain_transaction(graph, focus))
                if focus is not None else graph_dict(graph, top=top))
        sys.stdout.write(json_safe(json.dumps(data, indent=2, ensure_ascii=False)))
        sys.stdout.write("\n")
        return
    from .render import make_console
    from .render_explain import graph_renderables, transaction_renderables
    color = (ctx.obj or {}).get("color")
    console = make_console(color)
    items = (transaction_renderables(graph, explain_transaction(graph, focus))
             if focus is not None else graph_renderables(graph, top))
    for item in items:
        console.print(item)


def _window(graph, around: str | None, focus: int | None, depth: int,  # type: ignore[no-untyped-def]
            limit: int) -> list[int]:
    from ..explain import window_around, window_heaviest
    if not graph.nodes:
        return []
    if around is not None:
        return window_around(graph, _resolve(graph, around), depth, limit)
    if focus is not None:
        return window_around(graph, focus, depth, limit)
    window = window_heaviest(graph, limit)
    if len(window) < len(graph.nodes):
        click.echo(f"repltool: note: the picture shows #{window[0]}-#{window[-1]} of "
                   f"{len(graph.nodes)} transactions, where the critical path is heaviest "
                   "(--around GTID|#INDEX picks another place)", err=True)
    return window


def _resolve(graph, text: str) -> int:  # type: ignore[no-untyped-def]
    """``#INDEX``, a GTID, or a position."""
    from ..explain import find_node
    if text.startswith("#") and text[1:].isdigit():
        index = int(text[1:])
        if index >= len(graph.nodes):
            raise UsageError(f"--around {text}: there are {len(graph.nodes)} transactions")
        return index
    if any(n.gtid == text for n in graph.nodes):
        return find_node(graph, gtid=text)
    try:
        return find_node(graph, pos=text)
    except UsageError:
        raise UsageError(f"--around {text}: no transaction has this GTID or position") from None


def _check_mode_options(mode: str, baseline: str | None, schema: tuple[str, ...],
                        history_size: int, gr: dict[str, object]) -> None:
    if mode == "recorded":
        used = [flag for flag, given in (("--baseline", baseline is not None),
                                         ("--schema", bool(schema)),
                                         ("--history-size", history_size != 25000),
                                         *((f"--{k.replace('_', '-')}", bool(v))
                                           for k, v in gr.items()))
                if given]
        if used:
            raise UsageError(f"{', '.join(used)} need a certify --mode (writeset, "
                             "writeset-session, commit-order, group-replication); "
                             "--mode recorded reads the logged clocks")
        return
    if mode != Mode.GROUP_REPLICATION.value:
        used = [f"--{k.replace('_', '-')}" for k in _GR_ONLY if gr[k]]
        if used:
            raise UsageError(f"{', '.join(used)} only apply to --mode group-replication")
    elif baseline is not None:
        raise UsageError("--baseline applies to the writeset modes, not group-replication")
