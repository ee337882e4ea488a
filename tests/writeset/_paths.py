"""Fast writeset paths against the general one, transaction by transaction.

The general path is ``read_transactions(..., READ_OPTIONS, keep_events=True)``
plus a :class:`~repltool.writeset.WritesetExtractor` that decodes every column
(``key_only=False``).  :func:`check_paths` holds three things to it:

* the key-only extractor on the same transactions (equal writesets);
* :func:`repltool.writeset.read_writesets` (equal transactions - without their
  events where the fused reader produced them - and equal writesets);
* :func:`repltool.writeset.fused.iter_fast_writesets` alone: the same pairs up to
  where it gives up (``FastPathUnsupported``);
* :func:`repltool.writeset.fused.read_writeset_lines` (``repltool dump
  --writesets``, keys built as JSON text): ``json.dumps(writeset_record(...))``
  of every general pair, and the same error.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from repltool.binlog import read_transactions
from repltool.binlog.fastpath import FastPathUnsupported
from repltool.errors import ReplToolError
from repltool.writeset import (
    READ_OPTIONS, Schema, WritesetExtractor, read_writesets, writeset_record,
)
from repltool.writeset.fused import iter_fast_writesets, read_writeset_lines


@dataclass
class Checked:
    transactions: int = 0
    keys: int = 0
    with_rows: int = 0              # writesets of transactions that changed rows
    fast_pairs: int = 0             # pairs the fused reader produced before giving up (or all)
    fast_complete: bool = False     # the fused reader took the whole input
    fallbacks: int = 0              # Rows events the key-only extractor left to the general one
    error: str | None = None        # the general path's error, if it raised


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
        general_ex = WritesetExtractor(schema, key_only=False)
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

        fused, fused_error = _outcome(read_writesets(paths, schema,
                                                     verify_checksum=verify_checksum))
        assert fused_error == error
        assert len(fused) == len(general)
        for (ft, fw), (gt, gw) in zip(fused, general):
            assert _same_trx(ft, gt), (ft.start, gt.start)
            assert fw == gw, ft.start

        lines, lines_error = _outcome(read_writeset_lines(paths, schema,
                                                          verify_checksum=verify_checksum))
        assert lines_error == error
        assert lines == [json.dumps(writeset_record(gt, gw), ensure_ascii=False)
                         for gt, gw in general]

        fast: list[Any] = []
        try:
            for pair in iter_fast_writesets(paths, schema, verify_checksum=verify_checksum):
                fast.append(pair)
            out.fast_complete = True
        except FastPathUnsupported:
            pass
        out.fast_pairs = len(fast)
        assert len(fast) <= len(general)
        for (ft, fw), (gt, gw) in zip(fast, general):
            assert ft == dataclasses.replace(gt, events=()) and fw == gw, ft.start
    return out
