"""repltool: MySQL binary-log and relay-log analysis.

The library is layered as a pipeline of iterators::

    file -> events (repltool.binlog) -> transactions -> dependencies
    (repltool.certify) -> simulation (repltool.schedule)

The entry points are importable from the package itself; every function that
reads logs takes one path or an iterable of paths (read as one ordered
sequence)::

    import repltool

    for trx in repltool.read_transactions("binlog.000001"):
        print(trx.gtid, trx.last_committed, trx.sequence_number)
    stats = repltool.compute_stats(["binlog.000001", "binlog.000002"])
    report = repltool.check_files("binlog.000001")
    graph = repltool.explain_log("binlog.000001", mode="writeset")

Names are imported on first use, so ``import repltool`` stays cheap.  The
subpackages keep their own names: ``repltool.certify.certify`` (dependency
tracking over transactions) lives in :mod:`repltool.certify`, whose name the
package attribute ``repltool.certify`` is.
Only :mod:`repltool.cli` imports click and rich.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: name -> module (relative to this package) it comes from.
_EXPORTS: dict[str, str] = {
    # reading
    "read_events": ".binlog", "read_transactions": ".binlog", "group_transactions": ".binlog",
    "ReadOptions": ".binlog", "Event": ".binlog", "EventType": ".binlog",
    "Transaction": ".binlog", "FileInfo": ".binlog",
    "Gtid": ".binlog.gtid", "MariaGtid": ".binlog.gtid", "GtidSet": ".binlog.gtid",
    "Paths": ".paths", "path_list": ".paths",
    # figures
    "compute_stats": ".stats", "compute_clock_stats": ".stats", "LogStats": ".stats",
    "stats_to_dict": ".stats",
    # dependencies
    "CertifyOptions": ".certify", "Mode": ".certify",
    "CertifyRun": ".certify.report",
    "read_writesets": ".writeset", "load_schema": ".writeset",
    # simulation
    "simulate": ".schedule", "sweep": ".schedule", "SimConfig": ".schedule",
    "schedule_report": ".schedule.source", "read_sim_transactions": ".schedule.source",
    # explanation and checks
    "explain_log": ".explain", "check_files": ".check", "CheckConfig": ".check",
    # errors
    "ReplToolError": ".errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from .binlog import (
        Event, EventType, FileInfo, ReadOptions, Transaction, group_transactions, read_events,
        read_transactions,
    )
    from .binlog.gtid import Gtid, GtidSet, MariaGtid
    from .certify import CertifyOptions, Mode
    from .certify.report import CertifyRun
    from .check import CheckConfig, check_files
    from .errors import ReplToolError
    from .explain import explain_log
    from .paths import Paths, path_list
    from .schedule import SimConfig, simulate, sweep
    from .schedule.source import read_sim_transactions, schedule_report
    from .stats import LogStats, compute_clock_stats, compute_stats, stats_to_dict
    from .writeset import load_schema, read_writesets
