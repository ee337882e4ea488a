"""The examples that end every command's ``--help`` (and the README's "Examples").

Each is a real command line; ``tests/cli/test_examples.py`` runs every one of them
in a directory holding corpus logs under the names used here:

* ``binlog.000001``: a MySQL 8.0 binlog (GTIDs, logical clocks);
* ``mysql-bin.000001`` ... ``mysql-bin.000003`` and ``mysql-bin.index``: MariaDB 10.11
  binlogs written under a concurrent workload, ``schema.sql`` their tables.
"""

from __future__ import annotations

import re

#: command -> [(what it shows, command line)]
EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "dump": [
        ("events of two transactions, rows decoded",
         "repltool dump -v --include-gtids 2d6e8214-9918-11ec-ac13-0010e0dc39c0:2-3 "
         "binlog.000001"),
        ("one JSON object per event, up to offset 1000",
         "repltool dump --format jsonl --stop-position 1000 mysql-bin.000001"),
    ],
    "stats": [
        ("versions, transactions, clocks and tables of a rotated set",
         "repltool stats mysql-bin.000001 mysql-bin.000002 mysql-bin.000003"),
        ("the ten biggest transactions, as JSON",
         "repltool stats --format json --top 10 binlog.000001 > stats.json"),
        ("a window: one table's transactions from an offset of the first file on",
         "repltool stats --table wl.parent --start-position 486019 mysql-bin.000001 "
         "mysql-bin.000002"),
    ],
    "check": [
        ("structure, clocks, GTIDs and write sets of a set of logs",
         "repltool check --schema schema.sql mysql-bin.000001 mysql-bin.000002"),
        ("a CI gate: GitHub annotations, a JUnit report, a size limit",
         "repltool check --format github --junit check.xml --max-trx-size 64M binlog.000001"),
        ("findings of some GTIDs only (the whole log is still checked)",
         "repltool check --include-gtids 2d6e8214-9918-11ec-ac13-0010e0dc39c0:3-5 "
         "binlog.000001"),
    ],
    "schedule": [
        ("how fast a replica applies the logged clocks with 1-8 workers",
         "repltool schedule --workers 1,2,4,8 binlog.000001"),
        ("every way of computing the clocks side by side (MariaDB logs too)",
         "repltool schedule --compare all --schema schema.sql mysql-bin.000001"),
        ("the transactions since a time in UTC (else local time, as mysqlbinlog)",
         "repltool schedule --timezone UTC --start-datetime '2022-01-01 00:00:00' "
         "binlog.000001"),
    ],
    "certify": [
        ("clocks re-computed from the write sets",
         "repltool certify --mode writeset --schema schema.sql mysql-bin.000001"),
        ("one JSON object per transaction",
         "repltool certify --mode writeset-session --format jsonl binlog.000001 > clocks.jsonl"),
        ("the transactions after a MariaDB GTID (the history starts empty there)",
         "repltool certify --mode writeset --schema schema.sql --start-position 0-1-500 "
         "mysql-bin.000002 mysql-bin.000003"),
    ],
    "explain": [
        ("what limits parallelism: the critical path and its causes",
         "repltool explain binlog.000001"),
        ("why one transaction waits, with write-set clocks",
         "repltool explain --mode writeset --schema schema.sql --gtid 0-1-137 mysql-bin.000001"),
        ("a Graphviz picture of its neighbourhood",
         "repltool explain --mode writeset --format dot --around 0-1-137 --depth 1 "
         "mysql-bin.000001 > around.dot"),
    ],
    "sample": [
        ("two small MySQL 8.0 binlogs to try the other commands on",
         "repltool sample -o try-logs"),
    ],
    "synth": [
        ("a 2,000-transaction MySQL 8.0 workload log with its ground truth",
         "repltool synth -o synth-logs -n 2000 --clients 8"),
        ("the same as a replica's relay log, rotated every 1M",
         "repltool synth -o synth-relay -n 2000 --relay-log --max-binlog-size 1M"),
    ],
}


#: the longest line of an epilog: click indents it by 2 and keeps ``\\b`` blocks as they
#: are, so this keeps ``--help`` within 80 columns (a pipe, a default terminal)
EPILOG_WIDTH = 78


def shell_lines(line: str, width: int = EPILOG_WIDTH, indent: str = "  ") -> list[str]:
    """``$ line`` broken into lines of at most ``width`` characters where it is
    longer, each but the last ended by `` \\`` (the shell joins them again); words
    stay whole, a quoted word too."""
    words = re.findall(r"(?:'[^']*'|\S)+", line)
    lines, current = [], f"{indent}$ {words[0]}"
    for word in words[1:]:
        if len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = f"{indent}    {word}"
        else:
            current += f" {word}"
    return [*lines, current]


def epilog(command: str) -> str | None:
    """The ``Examples:`` block of ``command``'s ``--help`` (click keeps ``\\b`` blocks
    as they are); a long command line is continued with `` \\``."""
    items = EXAMPLES.get(command)
    if not items:
        return None
    lines = ["Examples:"]
    for what, line in items:
        lines += ["", "\b", f"  # {what}", *shell_lines(line)]
    return "\n".join(lines)

