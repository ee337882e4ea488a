"""Exit statuses of the ``repltool`` command (documented in the README and ``--help``)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FINDINGS = 1            # check: findings at error level; other commands: an analysis error
    #                         (dump --flashback: NotInvertible)
    USAGE = 2               # bad options, or an input that cannot be opened
    FORMAT_ERROR = 3        # not a binlog, no FDE, malformed event
    TRUNCATED = 4           # a log ends in the middle of an event
    CHECKSUM = 5            # CRC32 mismatch
    UNSUPPORTED = 6         # a valid log repltool does not read (binlog v1, unknown checksum alg)
    ENCRYPTED = 7           # encrypted binlog (MySQL \xfdbin or MariaDB START_ENCRYPTION)
    IO_ERROR = 8            # an output or stdout cannot be written (disk full, read-only dir),
    #                         or an opened input fails to read
    SPARK = 9               # --spark: Spark failed (cannot start, master unreachable, job failed)
    INTERRUPTED = 130       # Ctrl-C (SIGINT)
    TERMINATED = 143        # SIGTERM (128 + 15), e.g. a cancelled CI job


EXIT_HELP = """\b
Exit status:
  0    success
  1    analysis error (certify/schedule; dump --flashback: a window it cannot
       undo) or, for `check`, findings at error level
  2    usage error, or an input file that cannot be opened; `repltool` alone
       prints this help on stderr and exits 2 (click's convention)
  3    not a binlog / no Format_description_event / malformed event
  4    truncated log (ends mid-event: a live log, or a crash)
  5    CRC32 checksum mismatch
  6    unsupported log (binlog format v1, unknown checksum algorithm)
  7    encrypted log (repltool cannot decrypt)
  8    I/O error: an output or standard output cannot be written (disk full,
       read-only directory), or reading an opened input failed
  9    --spark: Spark failed (no Java, master unreachable, executors without
       repltool's dependencies, a failed job)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM); partial outputs are removed"""
