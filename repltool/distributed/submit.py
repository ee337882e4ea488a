"""``spark-submit`` entry point: ``spark-submit [OPTIONS] SUBMIT_PY COMMAND [ARGS]``.

``SUBMIT_PY`` is this file (``python -m repltool.distributed.submit --path``
prints it).  ``COMMAND`` is a repltool command that takes ``--spark``
(``stats``, ``schedule``, ``certify``, ``explain``, ``check``); ``--spark`` is
added when missing, and the session is ``spark-submit``'s (its ``--master``,
``--conf``, ``--py-files``, ``--archives``).

spark-submit runs a Python application with its standard error merged into
standard output (one pipe to the JVM): this entry point writes its standard
error to the JVM's own standard error instead, so that ``--format json``
output stays clean.  Runs as a script: absolute imports only.
"""

from __future__ import annotations

import os
import sys

SPARK_COMMANDS = ("stats", "schedule", "certify", "explain", "check")


def separate_stderr() -> bool:
    """Point fd 2 at the parent process's standard error when fd 2 is the same pipe as fd 1.

    :returns: whether it did (Linux ``/proc`` only; elsewhere nothing changes).
    """
    try:
        out, err = os.fstat(1), os.fstat(2)
        if (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino):
            return False
        fd = os.open(f"/proc/{os.getppid()}/fd/2", os.O_WRONLY | os.O_APPEND)
    except OSError:
        return False
    try:
        parent = os.fstat(fd)
        if (parent.st_dev, parent.st_ino) == (out.st_dev, out.st_ino):
            return False
        sys.stderr.flush()
        os.dup2(fd, 2)
        return True
    finally:
        os.close(fd)


def with_spark(argv: list[str]) -> list[str]:
    """``argv`` with ``--spark`` after the command name when it is missing.

    >>> with_spark(["stats", "--format", "json", "f"])
    ['stats', '--spark', '--format', 'json', 'f']
    >>> with_spark(["--traceback", "check", "--spark", "f"])
    ['--traceback', 'check', '--spark', 'f']
    """
    for i, arg in enumerate(argv):
        if arg in SPARK_COMMANDS:
            if "--spark" not in argv[i + 1:]:
                return [*argv[:i + 1], "--spark", *argv[i + 1:]]
            return list(argv)
        if not arg.startswith("-"):
            break
    return list(argv)


def _own_package_first() -> None:
    """Run as a script: drop this directory from ``sys.path`` and import this repltool."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--path"]:
        print(os.path.abspath(__file__))
        return
    separate_stderr()
    from repltool.cli import main as cli_main
    cli_main(with_spark(args))


if __name__ == "__main__":
    _own_package_first()
    main()
