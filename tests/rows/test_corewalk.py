"""The compiled core's row walk (``_core.walk_rows`` over :func:`repltool.binlog.rowwalk.
image_program`) against the general decoder, as ``test_rowwalk`` holds the Python walkers:

* generated images over every column type (valid layouts, random bytes, cuts, NULL
  bits, absent columns): the core accepts exactly the images :func:`iter_row_changes`
  accepts and returns the same stored bytes of every column;
* one column, many byte strings: the core ends where the column's decoder ends;
* every Rows event of the corpus (MySQL files, MariaDB sets).

These run with the compiled core whatever ``REPLTOOL_ENGINE`` says (they test it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from repltool.binlog import engine, read_events
from repltool.binlog.coltypes import TableDef
from repltool.binlog.events import RowsBody
from repltool.binlog.rowwalk import image_program

from .test_corpus_rows import MARIADB_SETS, NO_CHECKSUM, _readable_events
from .test_rowwalk import COLUMNS, _general, _table, _walk_events, images, step_cases

with pytest.MonkeyPatch.context() as _mp:     # this file tests the core: whatever the engine
    _mp.setenv(engine.ENV, "compiled")           # (fails when the core is not built)
    core = engine.compiled_core()
assert core is not None


def _core_walked(td: TableDef, body: RowsBody, tc: int) -> tuple[Any, ...]:
    wanted = tuple(range(body.width))
    first = image_program(core, td, body.columns_before, body.width, wanted)
    second = image_program(core, td, body.columns_after, body.width, wanted) \
        if tc == 31 else None
    if first is None or (tc == 31 and second is None):
        return ("unsupported",)
    try:
        out = core.walk_rows(body.rows, 0, first, second) if body.rows else []
    except (IndexError, ValueError, OverflowError):
        return ("error",)
    return ("ok", out)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=images())
def test_core_walk_agrees_with_the_decoder(case: tuple[Any, RowsBody, int]) -> None:
    cols, body, tc = case
    td = _table(cols)
    assert _core_walked(td, body, tc) == _general(td, body, tc), (cols, body)


@pytest.mark.parametrize("col", COLUMNS, ids=[f"{t}-{m.hex()}" for t, m in COLUMNS])
def test_every_layout_steps_like_its_decoder(col: tuple[int, bytes]) -> None:
    """One column, many byte strings: the core ends where the decoder ends."""
    td = _table([col])
    dec = td.decoders[0]
    prog = image_program(core, td, b"\x01", 1, (0,))
    assert prog is not None
    accepted = 0
    for data, want in step_cases(dec):
            # one row: the NULL bitmap, the value, then a second row that must start
            # exactly where the decoder ended (a one-byte bitmap marking it NULL)
            try:
                got: Any = None
                if want != "error":
                    rows = core.walk_rows(b"\x00" + data[:want] + b"\x01", 0, prog)
                    assert rows == [(data[:want],), (None,)], (col, data)
                    got = want
                else:
                    core.walk_rows(b"\x00" + data, 0, prog)
                    got = "accepted"
            except (IndexError, ValueError, OverflowError):
                got = "error"
            if want == "error" and got == "accepted":
                # the core took the bytes as a whole row: the decoder must end there too
                # or fail; it failed, so the core must not accept exactly these bytes
                raise AssertionError((col, data))
            assert got == want, (col, data)
            accepted += got != "error"
    unsupported = getattr(dec, "unsupported", False)
    assert (accepted == 0) == unsupported, accepted


def test_core_walk_on_every_mysql_corpus_file(corpus: Path) -> None:
    files = sorted(p for p in (corpus / "mysql").glob("*/*") if p.is_file())
    assert len(files) >= 100
    assert sum(_walk_events(_readable_events(p), _core_walked) for p in files) > 10_000


@pytest.mark.parametrize("name", list(MARIADB_SETS))
def test_core_walk_on_every_mariadb_set(corpus: Path, name: str) -> None:
    base, pattern = MARIADB_SETS[name]
    files = sorted((corpus / base).glob(pattern))
    assert files
    assert _walk_events(list(read_events(files, NO_CHECKSUM)), _core_walked) > 1000
