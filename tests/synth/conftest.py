"""Synthetic log sets, generated once per session and shared by the synth tests."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from repltool.synth import (
    ClockConfig, KeyDistribution, SynthOptions, SynthResult, WorkloadConfig, generate,
)


@dataclass
class SynthSet:
    opts: SynthOptions
    result: SynthResult
    records: list[dict[str, Any]]

    @property
    def files(self) -> list[Path]:
        return self.result.files


VARIANTS: dict[str, dict[str, Any]] = {
    "mysql80": dict(transactions=1500, max_binlog_size=150_000),
    "mysql57": dict(transactions=800, server_format="5.7", max_binlog_size=120_000),
    "relay": dict(transactions=1200, relay_log=True, max_binlog_size=200_000,
                  max_relay_log_size=90_000),
    "zstd": dict(transactions=400, compression="zstd"),
    "tagged": dict(transactions=400, tagged_gtids=True, max_binlog_size=60_000),
    "delta16": dict(transactions=400, timestamp_encoding="delta16", full_metadata=True,
                    in_use=True),
    "anonymous": dict(transactions=300, gtids=False),
    "hot": dict(transactions=800, clock=ClockConfig(clients=16),
                workload=WorkloadConfig(ddl_rate=0.01, empty_rate=0.01,
                                        keys=KeyDistribution("hot", hot_keys=4,
                                                             hot_share=0.7))),
}


@pytest.fixture(scope="session")
def synth_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SynthSet]:
    out: dict[str, SynthSet] = {}
    base = tmp_path_factory.mktemp("synth")
    for name, kw in VARIANTS.items():
        opts = replace(SynthOptions(out=base / name, seed=7), **kw)
        records: list[dict[str, Any]] = []
        result = generate(opts, collect=records)
        out[name] = SynthSet(opts, result, records)
    return out
