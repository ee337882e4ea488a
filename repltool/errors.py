"""The exception tree: one root, every message ``FILE:OFFSET EVENT_TYPE: reason``.

The message is one line: text from the file or from its name is made
:func:`~repltool.escape.printable` (``reason`` keeps the raw text).

The CLI maps each class to an exit status through its ``exit_code``.  Library
code never lets ``ValueError``, ``struct.error``, ``IndexError`` or construct's
errors escape on bad input: they are translated into these classes.
"""

from __future__ import annotations

from typing import ClassVar

from .escape import printable
from .positions import Position


class ReplToolError(Exception):
    """Root of every error repltool raises on purpose."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, pos: Position | None = None,
                 event_type: str | None = None) -> None:
        self.reason = message
        self.pos = pos
        self.event_type = event_type
        super().__init__(self._render())

    def _render(self) -> str:
        # One line, whatever the file (or its name) holds: control characters,
        # line feeds and bidi controls are shown as \xNN / \uNNNN escapes.
        return printable(self._plain())

    def _plain(self) -> str:
        where = []
        if self.pos is not None:
            where.append(str(self.pos))
        if self.event_type:
            where.append(self.event_type)
        if where:
            return f"{' '.join(where)}: {self.reason}"
        return self.reason


class UsageError(ReplToolError):
    """The caller asked for something that makes no sense (bad option values)."""

    exit_code = 2


class InputError(ReplToolError):
    """An input cannot be read at all (missing file, permission, a directory)."""

    exit_code = 2


class IOFailure(ReplToolError):
    """Reading an opened input or writing an output failed (disk full, read-only
    directory, I/O error): the system's reason, naming the file."""

    exit_code = 8


class LogFormatError(ReplToolError):
    """The bytes are not what the binlog format says they must be."""

    exit_code = 3


class NotABinlog(LogFormatError):
    """The file does not start with the binlog magic ``\\xfebin``."""


class NoFormatDescription(LogFormatError):
    """A v4 log whose first event is not a Format_description_event."""


class TruncatedLog(LogFormatError):
    """The log ends in the middle of an event: normal at the tail of a live log."""

    exit_code = 4


class ChecksumMismatch(LogFormatError):
    """An event's CRC32 footer does not match its bytes."""

    exit_code = 5


class MalformedEvent(LogFormatError):
    """An event's body cannot be decoded (sizes, lengths or values impossible)."""


class UnsupportedLog(ReplToolError):
    """A valid log that repltool does not read (pre-v4 format, unknown checksum)."""

    exit_code = 6


class EncryptedLog(UnsupportedLog):
    """An encrypted binlog (MySQL ``\\xfdbin`` or MariaDB START_ENCRYPTION)."""

    exit_code = 7


class CertifyError(ReplToolError):
    """certify could not compute or write logical timestamps."""


class SimulationError(ReplToolError):
    """schedule was given input it cannot simulate (inconsistent timestamps...)."""
