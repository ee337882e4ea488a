"""The write-set readers hand over to the general reader at a transaction, not at the start.

One event of a synth log (in the middle of a file) becomes an ignorable event of an
unknown type: the general reader skips it, the compiled core stops there.  With the
compiled engine ``read_writesets`` / ``read_writeset_lines`` (``repltool dump
--writesets``) then continue with the general reader from the start of the
transaction the core could not finish - the spy on ``fused.resume_general`` sees
where - and never from the start of the logs (``fused.read_events`` is not called).
The whole output must equal the general path's (every column decoded, every
transaction grouped by the general grouper).  With the pure-Python engine the fused
scanner starts over on the general reader (it does not say where it stopped); the
output is the same.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from repltool.writeset.extract import GeneralWritesetExtractor
from repltool.binlog import ReadOptions, engine, read_events, read_transactions
from repltool.binlog.constants import EventType
from repltool.writeset import READ_OPTIONS, WritesetExtractor, load_schema, writeset_record
from repltool.writeset import fused

from fixtures.forge import make_ignorable

_ROWS = frozenset({int(EventType.WRITE_ROWS_EVENT), int(EventType.UPDATE_ROWS_EVENT),
                   int(EventType.DELETE_ROWS_EVENT)})


def _general_lines(files: list[str], schema: Any) -> list[str]:
    """The general path: every column decoded, the general grouper."""
    ex = GeneralWritesetExtractor(schema)
    return [json.dumps(writeset_record(trx, ws), ensure_ascii=False)
            for trx, ws in ex.pairs(read_events(files, READ_OPTIONS))]


def _expected_resume(files: list[str], index: int, offset: int) -> tuple[int, int]:
    """Where the general reader must resume: the start of the transaction holding the
    event at (file ``index``, ``offset``) - the general grouper's - or the event."""
    target = files[index]
    for trx in read_transactions(files, READ_OPTIONS):
        if trx.start.file == target and trx.end.file == target \
                and trx.start.offset <= offset < trx.end_offset:
            return index, trx.start.offset
    return index, offset


def _read(monkeypatch: pytest.MonkeyPatch, files: list[str], schema: Any,
          lines: bool) -> tuple[list[str], list[tuple[int, int]], int]:
    """The lines of the fused reader, where the general reader resumed, how often it
    started from the beginning."""
    resumed: list[tuple[int, int]] = []
    starts = [0]
    resume, general = fused.resume_general, fused.read_events

    def spy_resume(rest: Any, options: Any) -> Any:
        resumed.append((rest.index, rest.offset))
        return resume(rest, options)

    def spy_general(*a: Any, **kw: Any) -> Any:
        starts[0] += 1
        return general(*a, **kw)

    monkeypatch.setattr(fused, "resume_general", spy_resume)
    monkeypatch.setattr(fused, "read_events", spy_general)
    try:
        if lines:
            out = list(fused.read_writeset_lines(files, schema))
        else:
            out = [json.dumps(writeset_record(trx, ws), ensure_ascii=False)
                   for trx, ws in fused.read_writesets(files, schema)]
    finally:
        monkeypatch.undo()
    return out, resumed, starts[0]


def _check(monkeypatch: pytest.MonkeyPatch, files: list[str], schema: Any, index: int,
           offset: int) -> None:
    want = _general_lines(files, schema)
    expected = _expected_resume(files, index, offset)
    for lines in (False, True):
        got, resumed, starts = _read(monkeypatch, files, schema, lines)
        assert got == want
        if engine.compiled_core() is not None:
            assert resumed == [expected] and starts == 0, (resumed, expected, starts)
        else:
            assert resumed == [] and starts == 1


@pytest.mark.parametrize("kind", ["rows", "table-map", "gtid"])
def test_hand_over_mid_file(monkeypatch: pytest.MonkeyPatch, synth_logs: dict,
                            tmp_path: Path, kind: str) -> None:
    """A Rows event, a Table_map or a GTID event in the middle of the first file of the
    ``uniform`` synth set: the general reader resumes at the start of its transaction
    (the GTID: at the event itself, which opens the transaction), and the output
    equals the general path's."""
    src, schema_path = synth_logs["uniform"]
    files = []
    for f in src:
        shutil.copyfile(f, tmp_path / f.name)
        files.append(str(tmp_path / f.name))
    want_type = {"rows": _ROWS, "table-map": {int(EventType.TABLE_MAP_EVENT)},
                 "gtid": {int(EventType.GTID_LOG_EVENT)}}[kind]
    events = [ev for ev in read_events(files[0], ReadOptions(types=frozenset()))
              if ev.type_code in want_type]
    assert len(events) > 100
    ev = events[len(events) // 2]
    make_ignorable(Path(files[0]), ev.pos.offset, ev.event_size)
    schema = load_schema(schema_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(monkeypatch, files, schema, 0, ev.pos.offset)
    if engine.compiled_core() is not None:
        # the core really read the transactions before it: a hand-over late in the file
        assert _expected_resume(files, 0, ev.pos.offset)[1] > 10_000


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), fmt=st.sampled_from(["5.7", "8.0", "9.x"]),
       relay=st.booleans(), file_no=st.integers(0, 20), which=st.integers(0, 10_000))
def test_hand_over_anywhere(monkeypatch: pytest.MonkeyPatch,
                            tmp_path_factory: pytest.TempPathFactory, seed: int, fmt: str,
                            relay: bool, file_no: int, which: int) -> None:
    """Any one event (not the first FDE) of any file of a generated set, relay logs
    included: the output equals the general path's; with the compiled engine the
    general reader resumes at or before the changed event, in its file or an
    earlier one (a transaction may begin in the file before), never from the start
    of the logs."""
    from repltool.synth import SynthOptions, generate
    out = tmp_path_factory.mktemp("ws-handover")
    r = generate(SynthOptions(out=out, transactions=120, ground_truth=False, seed=seed,
                              server_format=fmt, relay_log=relay, max_binlog_size=8_000,
                              max_relay_log_size=6_000 if relay else None))
    files = [str(f) for f in r.files]
    index = file_no % len(files)
    events = list(read_events(files[index], ReadOptions(types=frozenset())))
    ev = events[1 + which % (len(events) - 1)]
    make_ignorable(Path(files[index]), ev.pos.offset, ev.event_size)
    schema = load_schema(r.schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _general_lines(files, schema)
        for lines in (False, True):
            got, resumed, starts = _read(monkeypatch, files, schema, lines)
            assert got == want
            if engine.compiled_core() is not None:
                assert starts == 0 and len(resumed) == 1, (resumed, starts)
                assert resumed[0] <= (index, ev.pos.offset), (resumed, index, ev.pos.offset)
            else:
                assert resumed == [] and starts == 1
