"""The rules of ``repltool check``: short codes in the style of ruff, grouped by letter.

* ``S`` structure of the files (format-spec §1-2);
* ``C`` logical clocks (format-spec §3.2, §6a, §6c, §6d);
* ``G`` GTIDs (§3.3-3.4, MariaDB GTID_LIST);
* ``R`` relay logs (§1.2 items 5-6, WL#8440);
* ``W`` writesets (§6b): need per-transaction write sets from a
  :class:`~repltool.check.writesets.WritesetProvider`;
* ``T`` thresholds: active only when their limit is configured.

A rule's *default* severity can be changed per rule (``--severity``); the exit
status follows the effective severity (error -> 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    """How bad a finding is; only ``error`` fails the check (exit status 1)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Scope(str, Enum):
    """What one evaluation of a rule looks at."""

    FILE = "file"          # findings belong to one file
    TOTAL = "total"        # evaluated over all given files together (the replica's stream)


@dataclass(frozen=True, slots=True)
class Rule:
    """One check: code, kebab-case name, default severity and a one-line explanation."""

    code: str
    name: str
    severity: Severity
    summary: str
    scope: Scope = Scope.FILE
    needs: str | None = None        # "writesets" or the threshold option it needs

    def __str__(self) -> str:
        return f"{self.code} {self.name}"


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

_RULES = (
    # ---- structure ----
    Rule("S001", "not-a-binlog", _E,
         "the file does not start with the binlog magic fe 62 69 6e"),
    Rule("S002", "no-format-description", _E,
         "the first event is not a Format_description_event (the file's start is missing)"),
    Rule("S003", "checksum-mismatch", _E,
         "an event's stored CRC32 does not match its bytes (FDE checked with IN_USE cleared)"),
    Rule("S004", "truncated-tail", _E,
         "the file ends in the middle of an event (a crash, or a live log copied while written)"),
    Rule("S005", "in-use-not-last", _E,
         "LOG_EVENT_BINLOG_IN_USE_F is set on a file that is not the last one given: "
         "the server crashed while that file was active"),
    Rule("S006", "unknown-event-type", _E,
         "an event type nobody defines, without LOG_EVENT_IGNORABLE_F: a server's applier stops"),
    Rule("S007", "encrypted", _E,
         "an encrypted log (MySQL \\xfdbin, MariaDB START_ENCRYPTION): its events cannot be read"),
    Rule("S008", "unsupported-log", _E,
         "a log repltool does not read (binlog v1, unknown checksum algorithm or compression)"),
    Rule("S009", "malformed-event", _E,
         "an event whose sizes or fields are impossible; the rest of the file is not read"),
    Rule("S010", "unknown-ignorable-event", _I,
         "an event type repltool does not know, flagged LOG_EVENT_IGNORABLE_F (skipped by servers)"),
    # ---- logical clocks ----
    Rule("C001", "sequence-not-increasing", _E,
         "sequence_number <= the previous one in the same clock segment: the replica's "
         "applier stops (ER_MTA_CANT_PARALLEL)"),
    Rule("C002", "sequence-not-contiguous", _E,
         "binlog sequence numbers must run 1, 2, 3... in every file (2, 3... after a Group "
         "Replication certifier start)"),
    Rule("C003", "relay-sequence-gap", _W,
         "a gap in a relay log's sequence numbers (filtered transactions): the replica "
         "serialises at every gap"),
    Rule("C004", "last-committed-not-below-sequence", _E,
         "last_committed >= sequence_number (not (0,0)): the replica's applier stops"),
    Rule("C005", "negative-clock", _E,
         "a negative last_committed or sequence_number"),
    Rule("C006", "zero-clock", _E,
         "(0,0) outside a Group Replication view change (only view changes and 5.6 sources "
         "may carry it)"),
    Rule("C007", "delta16-saturated", _I,
         "delta16-encoded clocks (typecode 3) whose delta saturated at 65535: decoded "
         "conservatively, some parallelism lost"),
    Rule("C008", "barrier-share", _I,
         "share of transactions with last_committed = 0 (full barriers for the replica) and "
         "the file's parallelism"),
    # ---- GTIDs ----
    Rule("G001", "duplicate-gtid", _E,
         "the same GTID is committed twice in the given files"),
    Rule("G002", "gtid-gap-after-previous", _W,
         "the first GTID of a uuid (MariaDB: domain) does not follow the end of that uuid's "
         "interval in the file's Previous_gtids (GTID_LIST)"),
    Rule("G003", "gtid-gap", _W,
         "a uuid's (MariaDB: domain's) GNOs are not consecutive inside a file"),
    Rule("G004", "anonymous-gtid-mix", _W,
         "a file has both anonymous and real GTIDs (GTID_MODE was changing)"),
    # ---- relay logs ----
    Rule("R001", "trx-spans-files", _W,
         "a transaction starts in one file and ends in the next (WL#8440: FLUSH RELAY LOGS "
         "inside a transaction; a binlog should never do this; info on MariaDB relay logs, "
         "which rotate at max_relay_log_size inside transactions)"),
    Rule("R002", "truncated-group", _W,
         "a transaction without its end event (followed by another GTID, or by the end of "
         "the input): the applier discards it"),
    # ---- writesets ----
    Rule("W001", "unsafe-parallelism", _E,
         "two transactions the recorded clocks let run in parallel write the same key",
         needs="writesets"),
    Rule("W002", "no-usable-key", _W,
         "a table written without a usable key (no primary key / NOT NULL unique key): "
         "writeset tracking cannot see its conflicts",
         needs="writesets"),
    Rule("W003", "unknown-keys", _I,
         "transactions whose tables' keys the log does not describe (no FULL Table_map "
         "metadata) and no --schema gives: W001 cannot check them",
         needs="writesets"),
    # ---- thresholds ----
    Rule("T001", "min-parallelism", _E,
         "parallelism (work/span of the logical clock over all files) below --min-parallelism",
         scope=Scope.TOTAL, needs="min_parallelism"),
    Rule("T002", "max-barrier-share", _E,
         "share of last_committed = 0 transactions over all files above --max-barrier-share",
         scope=Scope.TOTAL, needs="max_barrier_share"),
    Rule("T003", "max-trx-size", _E,
         "a transaction bigger than --max-trx-size bytes",
         needs="max_trx_size"),
)

RULES: dict[str, Rule] = {r.code: r for r in _RULES}
"""Every rule by code, in documentation order."""

THRESHOLD_RULES = frozenset(r.code for r in _RULES if r.code.startswith("T"))
WRITESET_RULES = frozenset(r.code for r in _RULES if r.needs == "writesets")

# Format errors the reader raises, by the rule they become.  A file whose
# reading stops with one of FATAL_RULES has nothing for the other rules to see.
FATAL_RULES = frozenset({"S001", "S002", "S007", "S008"})


def expand(selector: str) -> list[str]:
    """The rule codes a selector names: a code, a prefix (``S``, ``C00``) or ``ALL``.

    Example::

        >>> expand("T"), expand("c00")[:2], expand("ALL")[0]
        (['T001', 'T002', 'T003'], ['C001', 'C002'], 'S001')

    :raises KeyError: when nothing matches.
    """
    sel = selector.strip().upper()
    if sel == "ALL":
        return list(RULES)
    hits = [code for code in RULES if code.startswith(sel)] if sel else []
    if not hits:
        raise KeyError(selector)
    return hits
