"""``CertifyRun`` reads through the fused writeset reader; results equal the general reader's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from repltool.certify.report import CertifyRun, result_row


class _GeneralRun(CertifyRun):
    """Overrides ``_pairs``: CertifyRun then reads through the general path."""

    def _pairs(self) -> Iterator[tuple[Any, Any]]:
        yield from super()._pairs()


@pytest.mark.parametrize("name,mode", [("hot", "writeset"), ("relay", None),
                                       ("tagged", "writeset-session"), ("zstd", "writeset")])
def test_fused_and_general_reader_certify_alike(synth_logs: dict, name: str,
                                                mode: str | None) -> None:
    files, schema = synth_logs[name]
    fast = CertifyRun(files, mode, schema_paths=[schema])
    general = _GeneralRun(files, mode, schema_paths=[schema])
    assert (fast._fused is not None) and general._fused is None
    assert fast.mode == general.mode and fast.relay_log == general.relay_log
    got = [result_row(c) for c in fast]
    want = [result_row(c) for c in general]
    assert got == want and len(got) > 250
    assert fast.truncated_skipped == general.truncated_skipped
    assert sum(r["changed"] for r in got) > 0


def test_log_without_transactions(tmp_path: Path, synth_logs: dict) -> None:
    files, _ = synth_logs["uniform"]
    head = tmp_path / "binlog.000001"
    head.write_bytes(files[0].read_bytes()[:4])         # the magic number alone
    fast, general = CertifyRun([head]), _GeneralRun([head])
    assert fast._fused is not None and fast._first is None
    assert (fast.mode, fast.relay_log) == (general.mode, general.relay_log)
    assert list(fast) == list(general) == []
