"""Fixtures for ``repltool schedule``: the in-process CLI, sample binlogs and relay logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.synth import write_sample

from schedule_cli_data import RELAY_1, RELAY_2, write_relay_file




@pytest.fixture(scope="session")
def sample_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """``binlog.000001`` and ``binlog.000002`` of ``repltool sample`` (200 trx, 2 files)."""
    return write_sample(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="session")
def relay_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two relay files: RELAY_1 (with a source rotation inside) then RELAY_2."""
    d = tmp_path_factory.mktemp("relay")
    one, two = d / "relay-bin.000001", d / "relay-bin.000002"
    gno = write_relay_file(one, RELAY_1, first=True, next_relay="relay-bin.000002", gno=0)
    write_relay_file(two, RELAY_2, first=False, next_relay=None, gno=gno)
    return [one, two]
