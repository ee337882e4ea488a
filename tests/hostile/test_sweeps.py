"""Truncation and mutation sweeps over EVERY corpus file (README "Robustness contract").

Each test asks the :class:`~.conftest.SweepPool` for its file's result; the
sweeps themselves run in RLIMIT_AS-limited workers (:mod:`._sweeps`,
:mod:`._checks`).  Default budget: every event boundary and three offsets
inside every event of the small files, every event mutated; the multi-MB
MariaDB files are sampled (first/last events and a few in between, mutations
on spliced windows).  ``REPLTOOL_SWEEP=full`` extends both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CORPUS_GLOBS, corpus_logs, is_log


def _assert_clean(kind: str, path: Path, result: dict) -> None:
    failures = result["failures"]
    assert not failures, (f"{kind} of {path}: {result['n_failures']} contract violation(s), "
                          "first ones:\n" + "\n".join(failures))


@pytest.mark.corpus_files("path", *CORPUS_GLOBS, select=is_log)
def test_truncation_sweep(path: Path, sweep_pool) -> None:
    """Cut at event boundaries (clean end, same events) and inside events (TruncatedLog there)."""
    sweep_pool.submit_all("truncation", corpus_logs())
    result = sweep_pool.result("truncation", path)
    _assert_clean("truncation sweep", path, result)
    assert result["cuts"] >= 1


@pytest.mark.corpus_files("path", *CORPUS_GLOBS, select=is_log)
def test_mutation_sweep(path: Path, sweep_pool) -> None:
    """Byte flips, type swaps and huge length/count fields in every (sampled) event."""
    sweep_pool.submit_all("mutation", corpus_logs())
    result = sweep_pool.result("mutation", path)
    _assert_clean("mutation sweep", path, result)
