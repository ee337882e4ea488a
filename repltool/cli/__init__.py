"""The ``repltool`` command: a thin click layer over the library.

Errors are rendered in exactly one place (:func:`run`): a
:class:`~repltool.errors.ReplToolError` becomes one line on stderr and its
documented exit status; ``--traceback`` re-raises instead.
"""

from __future__ import annotations

import errno
import sys
from typing import NoReturn, Sequence

import click

from .. import __version__
from ..binlog.engine import engine_name
from ..errors import ReplToolError
from ..escape import printable
from .exitcodes import EXIT_HELP, ExitStatus


# Subcommands are imported only when used, so that `repltool stats` does not pay
# for the simulator's or the checker's imports (and `--help` stays quick).
COMMANDS: dict[str, str] = {
    "dump": "dump",
    "stats": "stats",
    "schedule": "schedule",
    "check": "check",
    "certify": "certify",
    "explain": "explain",
    "sample": "sample",
    "synth": "synth",
}


#: Commands that read logs: their FILEs may be directories, index files or - (stdin),
#: and they show a progress bar on a terminal while they read (stats counts its own
#: bytes; --spark expands its inputs and reads in other processes).
WATCHED = ("dump", "check", "certify", "explain", "schedule", "stats")


def _watch_progress(command: click.Command, name: str) -> None:
    """Run ``command`` on its resolved FILEs (:func:`~repltool.cli.options.resolve_inputs`)
    under :func:`~repltool.cli.progress.watch_inputs`."""
    import functools
    callback = command.callback
    assert callback is not None

    @functools.wraps(callback)
    def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("use_spark") or not kwargs.get("files"):
            return callback(*args, **kwargs)     # Spark expands its inputs itself
        from .options import resolve_inputs
        from .progress import watch_inputs
        with resolve_inputs(kwargs["files"]) as files:
            kwargs["files"] = tuple(files)
            if name == "stats" and not kwargs.get("clock_only"):
                return callback(*args, **kwargs)     # stats counts its own bytes
            with watch_inputs(files, name):
                return callback(*args, **kwargs)

    command.callback = watched


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            from importlib import import_module
            module = import_module(f"{__name__}.{COMMANDS[cmd_name]}")
            command = getattr(module, cmd_name.replace("-", "_"))
            from .examples import epilog
            examples = epilog(cmd_name)
            if examples:
                command.epilog = (f"{command.epilog.rstrip()}\n\n{examples}" if command.epilog
                                  else examples)
            if cmd_name in WATCHED:
                _watch_progress(command, cmd_name)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_paragraph()
        for line in EXIT_HELP.splitlines():
            formatter.write_text(line)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"],
                                           "max_content_width": 100})
@click.version_option(__version__, prog_name="repltool",
                      message=f"%(prog)s, version %(version)s (engine: {engine_name()})")
@click.option("--traceback", is_flag=True, help="Show the Python traceback of an error.")
@click.option("--color/--no-color", default=None,
              help="Force or disable colours (default: only on a terminal).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool, color: bool | None) -> None:
    """repltool: MySQL/MariaDB binary-log and relay-log analysis.

    Reads binlogs and relay logs (MySQL 4.0 to 9.x, MariaDB) to show their
    events, transactions and logical clocks (last_committed/sequence_number),
    and how parallel a replica can apply them.
    """
    ctx.ensure_object(dict)
    ctx.obj["traceback"] = traceback
    ctx.obj["color"] = color




def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status (no ``sys.exit``).

    SIGTERM raises :class:`~repltool.outputs.Terminated` while it runs, so
    that partial outputs are removed; it is reported in one line, exit 143.
    """
    from ..outputs import sigterm_raises
    args = list(sys.argv[1:] if argv is None else argv)
    show_traceback = "--traceback" in args
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
        click.echo(f"repltool: warning: {printable(str(message))}",
                   err=True)

    warnings.showwarning = show
    if not args:
        # click's convention (8.2+, whatever click is installed): the help on stderr, 2.
        with click.Context(cli, info_name="repltool") as ctx:
            click.echo(ctx.get_help(), err=True)
        return ExitStatus.USAGE
    with sigterm_raises():
        return _run(args, show_traceback)


def _run(args: list[str], show_traceback: bool) -> int:
    from ..outputs import Terminated, stdout_works
    try:
        # not cli.main(): click's main turns a broken pipe into exit 1 before we see it
        with cli.make_context("repltool", args) as ctx:
            status = cli.invoke(ctx)
        sys.stdout.flush()
        if isinstance(status, int):       # click returns an Exit's code without raising
            return status
    except click.exceptions.Exit as exc:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        except OSError as err:
            return _io_error(err, show_traceback, stdout_failed=True)
        return int(exc.exit_code)
    except click.Abort:
        click.echo("repltool: interrupted", err=True)
        return ExitStatus.INTERRUPTED
    except click.ClickException as exc:
        exc.message = printable(exc.message)    # file names in click's messages: one line
        exc.show()
        return int(exc.exit_code)
    except KeyboardInterrupt:
        if show_traceback:
            raise
        click.echo("repltool: interrupted", err=True)
        return ExitStatus.INTERRUPTED
    except Terminated:
        if show_traceback:
            raise
        _flush_quietly()
        click.echo("repltool: terminated (SIGTERM)", err=True)
        return ExitStatus.TERMINATED
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.OK
    except ReplToolError as exc:
        if show_traceback:
            raise
        _flush_quietly()
        click.echo(f"repltool: error: {printable(str(exc))}", err=True)
        return exc.exit_code
    except OSError as exc:
        # outputs name their file (repltool.outputs); a write error without a
        # file name is standard output's
        return _io_error(exc, show_traceback, stdout_failed=exc.filename is None and (
            exc.errno in _WRITE_ERRNOS or not stdout_works()))
    except UnicodeEncodeError as exc:
        if show_traceback:
            raise
        _silence_stdout()
        click.echo(f"repltool: error: cannot write text in the output's encoding "
                   f"({exc.encoding}): {exc.reason}; set PYTHONIOENCODING=utf-8", err=True)
        return ExitStatus.IO_ERROR
    except RecursionError:
        if show_traceback:
            raise
        click.echo("repltool: error: input nested too deeply", err=True)
        return ExitStatus.USAGE
    return ExitStatus.OK


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


def _io_error(exc: OSError, show_traceback: bool, *, stdout_failed: bool) -> int:
    """An OSError no library layer translated: one line, exit 8."""
    from ..outputs import describe_oserror
    if show_traceback:
        raise exc
    if stdout_failed:
        _silence_stdout()
        what = f"standard output: {exc.strerror or exc}"
    else:
        _flush_quietly()
        what = f"I/O error: {describe_oserror(exc)}"
    click.echo(f"repltool: error: {what}", err=True)
    return ExitStatus.IO_ERROR


def _flush_quietly() -> None:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        _silence_stdout()


def _silence_stdout() -> None:
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


#: the C allocator's thresholds the console command fixes (see :func:`tune_allocator`):
#: blocks of ``MMAP_THRESHOLD`` bytes and more get a mapping of their own; the heap's
#: free top is returned past ``TRIM_THRESHOLD`` (not at glibc's 128 KiB: a batch's
#: buffers would come and go with a system call each)
MMAP_THRESHOLD = 512 << 10
TRIM_THRESHOLD = 4 << 20


def tune_allocator() -> bool:
    """Fix the C allocator's thresholds (glibc with the compiled engine; True when
    set): glibc's default mmap threshold rises to the size of each mapped block
    freed, so a long run's big short-lived buffers end in the heap, whose free holes
    stay resident and make peak RSS grow with the input (certify: 88 MiB at 110 MB,
    101 MiB at 500 MB; bench/results/rssflat.md).  The console command calls it once
    at start-up; a library caller's process is left alone."""
    from ..binlog.engine import compiled_core, engine_name
    if engine_name() != "compiled":
        return False
    core = compiled_core()
    return core is not None and bool(core.fix_malloc_thresholds(MMAP_THRESHOLD,
                                                                TRIM_THRESHOLD))


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Console-script entry point.

    File names that are not valid UTF-8 reach Python as lone surrogates
    (PEP 383); standard output writes them back as the file system's own
    bytes, as ``ls`` does, instead of failing.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "encoding", "").lower().replace(
                "-", "") == "utf8":
            reconfigure(errors="surrogateescape" if stream is sys.stdout
                        else "backslashreplace")
    if argv is None:
        tune_allocator()
    status = run(argv)
    if argv is None:
        # the console command: what is left (the write-set and schema caches, the
        # modules) is freed by the process's exit; the collector's last full pass
        # over it is skipped
        import gc
        gc.freeze()
    sys.exit(status)
