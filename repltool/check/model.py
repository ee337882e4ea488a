"""The results of ``repltool check`` as plain frozen data (rendered by :mod:`.report`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .rules import RULES, Severity

TOTAL = "TOTAL"
"""The pseudo file of findings about all given files together (T001, T002)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule violation (or, for info rules, one observation).

    :ivar file: the path as given on the command line, or :data:`TOTAL`.
    :ivar offset: decimal offset of the event concerned (like ``# at N``), if any.
    :ivar event_type: MySQL name of that event's type, if known.
    """

    rule: str
    severity: Severity
    file: str
    offset: int | None
    message: str
    event_type: str | None = None

    @property
    def name(self) -> str:
        return RULES[self.rule].name

    @property
    def location(self) -> str:
        """``FILE:OFFSET`` (or ``FILE`` when no offset applies)."""
        return self.file if self.offset is None else f"{self.file}:{self.offset}"

    @property
    def text(self) -> str:
        """``EVENT_TYPE: message`` (format errors read like the reader's own messages)."""
        return f"{self.event_type}: {self.message}" if self.event_type else self.message

    def __str__(self) -> str:
        return f"{self.location} {self.rule} {self.severity.value}: {self.text}"


@dataclass(frozen=True, slots=True)
class FileResult:
    """What was read of one file.

    :ivar stopped: the rule of the format error that stopped reading (None: read to the end).
    :ivar unreadable: the file could not be read at all (S001, S002, S007, S008 or
        nothing before the error): its other per-file rules are reported skipped.
    """

    file: str
    size: int
    events: int = 0
    transactions: int = 0
    server_version: str | None = None
    relay_log: bool = False
    in_use: bool = False
    stopped: str | None = None
    stopped_at: int | None = None
    unreadable: bool = False


@dataclass(frozen=True, slots=True)
class Totals:
    """Logical-clock figures over all given files (what T001 / T002 compare).

    ``parallelism`` is ``work / span``: transactions with a clock divided by
    the longest chain of transactions that must run one after another under
    the recorded clocks (None when no transaction has a clock).
    """

    clocked: int = 0
    barriers: int = 0
    span: int = 0

    @property
    def barrier_share(self) -> float | None:
        return self.barriers / self.clocked if self.clocked else None

    @property
    def parallelism(self) -> float | None:
        return self.clocked / self.span if self.span else None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything one check produced.

    :ivar rules: codes of the rules that ran, in documentation order.
    :ivar skipped: selected rules that could not run, with the reason.
    :ivar configuration: the configuration file the settings came from, if any.
    """

    files: tuple[FileResult, ...]
    findings: tuple[Finding, ...]
    rules: tuple[str, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)
    totals: Totals = Totals()
    configuration: str | None = None

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def exit_status(self) -> int:
        """0: no error-level finding (warnings allowed); 1: at least one."""
        return 1 if self.count(Severity.ERROR) else 0

    def by_rule(self) -> dict[str, int]:
        """Number of findings per rule code (only rules with findings)."""
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.rule] = out.get(f.rule, 0) + 1
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class CheckPart:
    """One part of a check (some consecutive files read as one ordered sequence) and the
    state the rules across parts need (``check --spark`` merges parts in input order).

    :ivar report: the part's own check; its findings about all files (T001, T002,
        W003), G001, R002 and S005 are made again when the parts are merged.
    :ivar committed: the GTIDs committed in the part, first occurrences, as runs:
        (source, first number, file index in the part, zlib-compressed int64
        deltas of the transactions' offsets).
    :ivar duplicates: the part's G001s: (source, number, file index, offset).
    :ivar truncated: the part's transactions without an end event (no events).
    :ivar unresolved: transactions with no known write set; ``unknown_tables``
        the tables that caused it, first seen first.
    :ivar w001: the first (last_committed, sequence_number) W001 saw and the last
        sequence_number (None: W001 saw nothing).
    :ivar open_end: the last file ends inside a transaction (the next file may continue it).
    """

    report: CheckReport
    committed: tuple[tuple[object, int, int, bytes], ...] = ()
    duplicates: tuple[tuple[object, int, int, int], ...] = ()
    truncated: tuple[object, ...] = ()
    unresolved: int = 0
    unknown_tables: tuple[str, ...] = ()
    w001: tuple[tuple[int, int] | None, int | None] = (None, None)
    open_end: bool = False
    #: a span of one large binlog (:func:`repltool.check.engine.check_span`): what the
    #: rules across its transactions need from the spans around it
    edge: SpanEdge | None = None


@dataclass(frozen=True)
class SpanEdge:
    """What one span of a split binlog leaves to the join of its file's spans
    (:func:`repltool.check.engine.join_spans`): the per-file figures to add up, the
    rules' state at its ends, and W001's writers around its edges.

    :ivar start: the span's first offset (4: the file's start).
    :ivar stopped: a format error ended the span (the file is checked whole).
    :ivar clocks: the (last_committed, sequence_number) pairs the clock span (C008,
        T001) took, as int64 pairs (the longest chain crosses spans).
    :ivar first_clock: the first clocked transaction's (sequence_number, name, offset)
        when it had no clock before it in the span (a later span: C001/C002 are
        decided by the join).
    :ivar last_sn: the last sequence_number the C-rules saw.
    :ivar previous: the file's Previous_gtids ends (the first span).
    :ivar first_gno: per GTID source, the first (number, GTID, offset) of the span;
        ``max_gno``: the span's largest number per source.
    :ivar first_kind: the first GTID's kind ("gtid" or "anonymous") and offset.
    :ivar head: W001: the span's transactions from its start up to the last one whose
        last_committed reaches before the span (a writer of an earlier span may
        conflict): (GTID, position, last_committed, sequence_number, key hashes).
    :ivar tail: W001: the last writer of each key with a sequence_number above
        ``floor`` at the span's end: (key hash, writer number) and the writers
        (GTID, position, last_committed, sequence_number).
    :ivar overflow: the head was longer than kept (the file is checked whole).
    """

    start: int
    stopped: bool
    clocked: int
    barriers: int
    saturated: int
    nokey: tuple[tuple[str, int, int], ...]
    clocks: bytes
    first_clock: tuple[int, str, int] | None
    last_sn: int | None
    previous: dict[object, int] | None
    first_gno: tuple[tuple[object, int, str, int], ...]
    max_gno: dict[object, int]
    first_kind: tuple[str, int] | None
    head: tuple[tuple[str | None, object, int, int, tuple[int, ...]], ...] = ()
    tail: tuple[tuple[int, int], ...] = ()
    writers: tuple[tuple[str | None, object, int, int], ...] = ()
    floor: int | None = None
    w001_last: int | None = None
    overflow: bool = False
