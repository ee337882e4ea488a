"""Fixtures of the writeset tests: the live MariaDB workload (tests/fixtures/mariadb.py)."""

from fixtures.mariadb import mariadb_workload  # noqa: F401  (session fixture)

from dataclasses import replace as _replace
from pathlib import Path as _Path

import pytest as _pytest

from repltool.synth import ClockConfig, KeyDistribution, SynthOptions, WorkloadConfig, generate

#: synthetic shapes the fast writeset paths must agree on (``--keys``, relay logs,
#: compression, tagged GTIDs, 5.7, FULL metadata, anonymous GTIDs, DDL)
SYNTH_VARIANTS: dict[str, dict[str, object]] = {
    "uniform": dict(transactions=1200, max_binlog_size=300_000),
    "zipf": dict(transactions=800, workload=WorkloadConfig(keys=KeyDistribution("zipf"))),
    "hot": dict(transactions=800, clock=ClockConfig(clients=16), workload=WorkloadConfig(
        ddl_rate=0.01, empty_rate=0.01, bulk_share=0.02,
        keys=KeyDistribution("hot", hot_keys=4, hot_share=0.7))),
    "relay": dict(transactions=900, relay_log=True, max_binlog_size=200_000,
                  max_relay_log_size=70_000),
    "zstd": dict(transactions=300, compression="zstd"),
    "tagged": dict(transactions=500, tagged_gtids=True, max_binlog_size=80_000),
    "mysql57": dict(transactions=600, server_format="5.7"),
    "full-metadata": dict(transactions=600, full_metadata=True),
    "anonymous": dict(transactions=300, gtids=False),
}


@_pytest.fixture(scope="session")
def synth_logs(tmp_path_factory: _pytest.TempPathFactory) -> dict[str, tuple[list[_Path], _Path]]:
    """name -> (log files, schema.sql) of each :data:`SYNTH_VARIANTS` entry."""
    base = tmp_path_factory.mktemp("ws-synth")
    out = {}
    for name, kw in SYNTH_VARIANTS.items():
        opts = _replace(SynthOptions(out=base / name, seed=11, ground_truth=False), **kw)
        result = generate(opts)
        out[name] = (list(result.files), result.schema)
    return out
