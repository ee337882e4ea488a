"""Fast writeset paths against the general one, transaction by transaction.

The general path is ``read_transactions(..., READ_OPTIONS, keep_events=True)``
plus a :class:`~repltool.writeset.WritesetExtractor` that decodes every column
(``GeneralWritesetExtractor``).  :func:`check_paths` holds three things to it:

* the key-only extractor on the same transactions (equal writesets), and the
  lines of its text twin (``TextWritesetExtractor.lines``: the keys built as
  JSON text) on the same events; how many Rows events each keyed by the walk
  cached for their header (``shaped``: tests assert that route ran);
* :func:`repltool.writeset.read_writesets` (equal transactions - without their
  events where the fused reader produced them - and equal writesets);
* :func:`repltool.writeset.fused.iter_fast_writesets` alone: the same pairs up to
  where it gives up (``Unsupported``);
* :func:`repltool.writeset.fused.read_writeset_lines` (``repltool dump
  --writesets``, keys built as JSON text): ``json.dumps(writeset_record(...))``
  of every general pair, and the same error.

Which path really produced the pairs is not left to the results (equal either
way): a spy on the fused reader's scan (``fused._FastRun.__iter__``) and on its
general path (``fused.read_events``, or ``fused.resume_general`` where the compiled
core hands over) records, for ``read_writesets`` and
``read_writeset_lines``, how many pairs the fused scan yielded, why it gave up
(the ``Unsupported`` message, or None) and whether the general path was
started; :func:`check_paths` asserts they agree with ``iter_fast_writesets``.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from repltool.writeset.extract import GeneralWritesetExtractor, TextWritesetExtractor
from repltool.binlog import read_events, read_transactions
from repltool.binlog.engine import Unsupported
from repltool.errors import ReplToolError
from repltool.writeset import (
    READ_OPTIONS, Schema, WritesetExtractor, read_writesets, writeset_record,
)
from repltool.binlog import engine
from repltool.writeset import fused
from repltool.writeset.fused import iter_fast_writesets, read_writeset_lines


#: why ``iter_fast_writesets`` (the compiled core's grouper) refuses with the pure-Python engine
NOT_ACTIVE = "the compiled engine is not active"


@dataclass
class Checked:
    transactions: int = 0
    keys: int = 0
    with_rows: int = 0              # writesets of transactions that changed rows
    fast_pairs: int = 0             # pairs the fused reader produced before giving up (or all)
    fast_complete: bool = False     # the fused reader took the whole input
    fallbacks: int = 0              # Rows events the key-only extractor left to the general one
    shaped: int = 0                 # Rows events the key-only extractor keyed by a cached shape
    text_shaped: int = 0            # the same, TextWritesetExtractor
    error: str | None = None        # the general path's error, if it raised
    fast_reason: str | None = None  # why the fused reader gave up (Unsupported), or None
    core_events: int = 0            # events the compiled core walked for iter_fast_writesets


@dataclass
class FusedRun:
    """What the spy saw of one ``read_writesets``/``read_writeset_lines`` call."""
    fast_pairs: int = 0             # pairs the fused scan yielded
    reason: str | None = None       # its Unsupported message, if it gave up
    general: int = 0                # times the general path (read_events) was started
    #: compiled engine: (file index, offset) the general reader resumed at, or None
    resumed_at: tuple[int, int] | None = None


class FusedSpy:
    """Records every fused scan and general-path start while active (:meth:`watch`)."""

    def __init__(self) -> None:
        self.runs: list[FusedRun] = []

    def watch(self) -> Any:
        mp = pytest.MonkeyPatch()
        spy, scan, general = self, fused._FastRun.__iter__, fused.read_events

        def counted_scan(run: Any) -> Iterator[Any]:
            rec = FusedRun()
            spy.runs.append(rec)
            try:
                for pair in scan(run):
                    rec.fast_pairs += 1
                    yield pair
            except Unsupported as exc:
                rec.reason = str(exc)
                raise

        def counted_general(*a: Any, **kw: Any) -> Any:
            if not spy.runs:            # the pure-Python engine: no fused scan, the general path
                spy.runs.append(FusedRun())
            spy.runs[-1].general += 1
            return general(*a, **kw)

        resume = fused.resume_general

        def counted_resume(*a: Any, **kw: Any) -> Any:
            spy.runs[-1].general += 1
            spy.runs[-1].resumed_at = (a[0].index, a[0].offset)
            return resume(*a, **kw)

        mp.setattr(fused._FastRun, "__iter__", counted_scan)
        mp.setattr(fused, "read_events", counted_general)
        mp.setattr(fused, "resume_general", counted_resume)
        return mp

    def one(self, pairs: Any) -> tuple[FusedRun, tuple[list[Any], str | None]]:
        """Consume ``pairs`` (a fused reader's iterator) under the spy: its run, its outcome."""
        self.runs.clear()
        mp = self.watch()
        try:
            out = _outcome(pairs)
        finally:
            mp.undo()
        assert len(self.runs) == 1, self.runs
        return self.runs[0], out


def _outcome(pairs: Any) -> tuple[list[tuple[Any, Any]], str | None]:
    out: list[tuple[Any, Any]] = []
    try:
        for pair in pairs:
            out.append(pair)
    except ReplToolError as exc:
        return out, f"{type(exc).__name__}: {exc}"
    return out, None


def _same_trx(fast: Any, general: Any) -> bool:
    return fast == general or fast == dataclasses.replace(general, events=())


def check_paths(files: Sequence[Path], schema: Schema | None, *,
                verify_checksum: bool = True) -> Checked:
    paths = [str(f) for f in files]
    opts = dataclasses.replace(READ_OPTIONS, verify_checksum=verify_checksum)
    out = Checked()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trxs, error = _outcome(read_transactions(paths, opts, keep_events=True))
        general_ex = GeneralWritesetExtractor(schema)
        general, ws_error = _outcome((t, general_ex.writeset(t)) for t in trxs)
        error = error if len(general) == len(trxs) else ws_error
        out.error = error
        out.transactions = len(general)
        out.keys = sum(len(ws.keys) for _, ws in general)
        out.with_rows = sum(not ws.empty for _, ws in general)

        key_only_ex = WritesetExtractor(schema)
        key_only, ko_error = _outcome((t, key_only_ex.writeset(t)) for t in trxs)
        assert [ws for _, ws in key_only] == [ws for _, ws in general]
        assert (ko_error is None) == (len(general) == len(trxs))
        out.fallbacks = key_only_ex.fallbacks
        out.shaped = key_only_ex.shaped

        lines_expected = [json.dumps(writeset_record(gt, gw), ensure_ascii=False)
                          for gt, gw in general]
        text_ex = TextWritesetExtractor(schema)
        text_lines, text_error = _outcome(text_ex.lines(read_events(paths, opts)))
        assert text_error == error
        assert text_lines == lines_expected
        out.text_shaped = text_ex.shaped

        spy = FusedSpy()
        pairs_run, (fused_pairs, fused_error) = spy.one(
            read_writesets(paths, schema, verify_checksum=verify_checksum))
        assert fused_error == error
        assert len(fused_pairs) == len(general)
        for (ft, fw), (gt, gw) in zip(fused_pairs, general):
            assert _same_trx(ft, gt), (ft.start, gt.start)
            assert fw == gw, ft.start

        lines_run, (lines, lines_error) = spy.one(
            read_writeset_lines(paths, schema, verify_checksum=verify_checksum))
        assert lines_error == error
        assert lines == lines_expected

        fast: list[Any] = []
        core = engine.compiled_core()
        walked = core.events_walked() if core is not None else 0
        try:
            for pair in iter_fast_writesets(paths, schema, verify_checksum=verify_checksum):
                fast.append(pair)
            out.fast_complete = True
        except Unsupported as exc:
            out.fast_reason = str(exc)
        out.fast_pairs = len(fast)
        out.core_events = core.events_walked() - walked if core is not None else 0
        if core is None:
            # the pure-Python engine: no fused scan; the readers took the general path
            # (reader, grouper, extractor) from the start, once
            assert out.fast_reason == NOT_ACTIVE and not fast
            for run in (pairs_run, lines_run):
                assert (run.fast_pairs, run.reason, run.general) == (0, None, 1), (run, paths)
            return out
        # the readers took the fused scan as far as iter_fast_writesets goes, and the
        # general path only where it gave up (once, for the rest)
        for run in (pairs_run, lines_run):
            assert (run.fast_pairs, run.reason, run.general) == \
                (len(fast), out.fast_reason, int(out.fast_reason is not None)), (run, paths)
        assert len(fast) <= len(general)
        for (ft, fw), (gt, gw) in zip(fast, general):
            assert ft == dataclasses.replace(gt, events=()) and fw == gw, ft.start
    return out
