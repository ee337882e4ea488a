"""Exit statuses of the ``repltool`` command (documented in the README and ``--help``)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FINDINGS = 1            # check: findings at error level; other commands: an analysis error
    USAGE = 2               # bad options, or an input that cannot be opened
    FORMAT_ERROR = 3        # not a binlog, no FDE, malformed event
    TRUNCATED = 4           # a log ends in the middle of an event
    CHECKSUM = 5            # CRC32 mismatch
    UNSUPPORTED = 6         # a valid log repltool does not read (binlog v1, unknown checksum alg)
    ENCRYPTED = 7           # encrypted binlog (MySQL \xfdbin or MariaDB START_ENCRYPTION)
    INTERRUPTED = 130       # Ctrl-C


EXIT_HELP = """\b
Exit status:
  0    success
  1    analysis error (certify/schedule) or, for `check`, findings at error level
  2    usage error, or an input file that cannot be opened; `repltool` alone prints
       this help on stderr and exits 2 (click's convention)
  3    not a binlog / no Format_description_event / malformed event
  4    truncated log (ends mid-event: a live log, or a crash)
  5    CRC32 checksum mismatch
  6    unsupported log (binlog format v1, unknown checksum algorithm)
  7    encrypted log (repltool cannot decrypt)
  130  interrupted"""
