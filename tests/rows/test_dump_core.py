"""The compiled text printer of ``dump -v --base64-output=decode-rows``
(``repltool/binlog/_textcore.pxi``, driven by :func:`repltool.cli.render_replay.print_logs`).

* per column layout and signedness, the compiled value writers accept exactly the bytes
  the Python text makers accept, write the same text and end at the same offset;
* every corpus file (MySQL 4.0-9.x, MariaDB), with ``-v``, ``-vv`` and numbered columns:
  :func:`print_logs` writes the bytes the general printer writes over
  :func:`read_events`, or fails with the same error after the same text, and the
  compiled printer ran (it printed events of the corpus);
* synth logs (8.0, 5.7, a relay log, 9.x tagged GTIDs): the same through the CLI, both
  engines, and the compiled printer printed nearly every event.

These run with the compiled core whatever ``REPLTOOL_ENGINE`` says (they test it).
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.binlog import ReadOptions, engine, read_events
from repltool.cli.render_replay import ReplayPrinter, print_events, print_logs
from repltool.cli.render import annotate_text
from repltool.cli.render_rows import (
    RowsRenderer, core_text_program, quote_bytes, value_text_maker,
)

from .test_rowwalk import COLUMNS
from .test_text_program import _table

with pytest.MonkeyPatch.context() as _mp:     # this file tests the core: whatever the engine
    _mp.setenv(engine.ENV, "compiled")           # (fails when the core is not built)
    core = engine.compiled_core()
assert core is not None


@pytest.fixture(autouse=True)
def _compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(engine.ENV, "compiled")


def _samples(n: int) -> list[bytes]:
    return [bytes([n % 5]) + bytes([fill]) * n for fill in (0x00, 0x01, 0x7F, 0x80, 0xFF)] + [
        b"\x80" + bytes(n), b"\x80" + bytes(range(1, n + 1)),
        bytes([n]) + b"a\x00\x1b\xc3\xa9\xff\x7f \xe2\x80\xae" * 4,
        bytes([n, 0]) + "Søren ’x’ \u202e".encode() * 3,
        bytes([n]) + b"plain ascii text, printable: ~!@#$%^&*()" * 2,
        struct.pack("<d", float("nan")) + b"\x00" * n, struct.pack("<d", -1.5e300),
        struct.pack("<d", 1 / 3), struct.pack("<d", -0.0), struct.pack("<d", 5e-324)]


@pytest.mark.parametrize("verbosity", [1, 2])
@pytest.mark.parametrize("unsigned", [None, False, True], ids=["no-signedness", "signed",
                                                               "unsigned"])
@pytest.mark.parametrize("col", COLUMNS, ids=[f"{t}-{m.hex()}" for t, m in COLUMNS])
def test_compiled_writers_write_like_the_python_makers(col: tuple[int, bytes],
                                                        unsigned: bool | None,
                                                        verbosity: int) -> None:
    td = _table(col, unsigned)
    column, dec = td.columns[0], td.decoders[0]
    make = value_text_maker(column, dec)
    program = core_text_program(td, b"\x01", 1, verbosity, False, core.RowText)
    null_text, _ = program.image_text(b"\x01", 0)
    assert null_text.startswith(b"###   ") and b"NULL" in null_text
    accepted = 0
    for n in range(0, 40):
        for data in _samples(n):
            try:
                text, q = make(data, 0)
                want: Any = (text, q)
            except (IndexError, ValueError, OverflowError, struct.error):   # BadValue too
                want = "error"
            try:
                raw, end = program.image_text(b"\x00" + data, 0)
                got: Any = (raw, end - 1)
            except (IndexError, ValueError, OverflowError, struct.error):
                got = "error"
            if want != "error" and got != "error":
                line = raw.decode("utf-8", "surrogateescape")
                pre = line[:line.index("=") + 1]
                post = line[len(pre) + len(want[0]):]
                assert line[len(pre):len(pre) + len(want[0])] == want[0], (col, data, line)
                assert post == ("\n" if verbosity == 1 else
                                post[:post.index(" is_null=0 */")] + " is_null=0 */\n")
                got = (want[0], end - 1)
            assert got == want, (col, data)
            accepted += got != "error"
    assert accepted > 0 or getattr(dec, "unsupported", False)


def _printed(paths: list[Path], verbosity: int, numbered: bool, compiled: bool,
             base64_output: str = "decode-rows") -> tuple[bytes, Any, int]:
    out = io.BytesIO()
    printer = ReplayPrinter(out, base64_output=base64_output,
                            rows=RowsRenderer(verbosity, numbered=numbered))
    error = None
    try:
        if compiled:
            print_logs(printer, [str(p) for p in paths], ReadOptions())
        else:
            print_events(printer, read_events([str(p) for p in paths], ReadOptions()))
    except Exception as exc:        # noqa: BLE001 - the same error both ways
        error = (type(exc).__name__, str(exc))
    return out.getvalue(), error, printer.core_events


def _corpus_files(corpus: Path) -> list[Path]:
    patterns = ("mysql/*/*", "mariadb/*/*", "mariadb/*/*/*")
    return sorted(p for pattern in patterns for p in corpus.glob(pattern)
                  if p.is_file() and not p.name.endswith((".index", ".json", ".txt", ".md")))


@pytest.mark.parametrize("verbosity,numbered,base64_output", [
    (1, False, "decode-rows"), (2, False, "decode-rows"), (1, True, "decode-rows"),
    (1, False, "auto")])
def test_every_corpus_file_prints_as_the_general_printer(corpus: Path, verbosity: int,
                                                         numbered: bool,
                                                         base64_output: str) -> None:
    files = _corpus_files(corpus)
    assert len(files) > 100
    taken = 0
    errors = 0
    for path in files:
        want = _printed([path], verbosity, numbered, False, base64_output)
        got = _printed([path], verbosity, numbered, True, base64_output)
        assert got[:2] == want[:2], path
        taken += got[2]
        errors += want[1] is not None
    assert taken > 20_000, taken          # the compiled printer printed the common events
    assert errors > 0                     # and damaged files went through it too


def test_mariadb_sets_read_as_one_sequence(corpus: Path) -> None:
    sets = 0
    for directory in sorted({p.parent for p in _corpus_files(corpus) if "mariadb" in p.parts}):
        files = sorted(p for p in directory.iterdir() if p.is_file() and p.name[-1].isdigit())
        if len(files) < 2:
            continue
        sets += 1
        want = _printed(files, 1, False, compiled=False)
        got = _printed(files, 1, False, compiled=True)
        assert got[:2] == want[:2], directory
        assert got[2] > 0, directory
    assert sets >= 4


@pytest.mark.parametrize("args,share", [
    ([], 0.7), (["--server-generation", "5.7"], 0.7), (["--relay-log"], 0.7),
    (["--tagged-gtids"], 0.5),
    # Transaction_payload events and what they hold: the general printer (the GTIDs only
    # here; the sessions their Query events set are the ones the printer goes on with)
    (["--compression", "zstd"], 0.05)], ids=["8.0", "5.7", "relay", "9.x", "zstd"])
def test_synth_logs_through_the_cli(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch,
                                    args: list[str], share: float) -> None:
    cli("synth", "-o", tmp_path, "-n", "300", "--seed", "5", *args)
    logs = sorted(p for p in tmp_path.iterdir()
                  if p.name[-1].isdigit() and p.suffix != ".json")
    assert logs
    outputs = {}
    for eng in ("compiled", "python"):
        monkeypatch.setenv(engine.ENV, eng)
        for flags in (["-v", "--base64-output=decode-rows"], ["-vv", "--base64-output=decode-rows"],
                      ["-v"], ["-vv"], ["-v", "-s"], []):
            outputs[eng, " ".join(flags)] = cli("dump", *flags, *logs)
    for key in [k for e, k in outputs if e == "compiled"]:
        assert outputs["compiled", key] == outputs["python", key], key
    monkeypatch.setenv(engine.ENV, "compiled")
    text, _, taken = _printed(logs, 1, False, compiled=True)
    events = sum(1 for _ in read_events([str(p) for p in logs]))
    assert text.count(b"\n# at ") == events
    assert taken > events * share, (taken, events)    # FDE, Rotate...: the general printer


_TRICKY = [b"", b"plain", b"a\x00b\x1b[31m\x7f", "é ’ \u202e \u2028 \u0085 \u00a0 \ufeff".encode(),
           b"\xe2\x82A", b"\xe2\x82", b"\xf0\x80\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
           b"\xc0\xaf", b"\xc2\x80\xc2\x9f\xc2\xa0", b"\xf0\x9f\x98\x80x", b"\xf5\xff\xfe",
           b"\xe0\x9f\x80", b"\xe0\xa0", b"\xf0\x90\x80", b"a\r\nb\rc\n\nd\r", b"\n", b"\r\n",
           b"x\n", b"\x80\x80\xbf", "\u061c\u200e\u200f\u2066\u2069\u206a".encode()]


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.binary(max_size=40), st.text(max_size=30).map(str.encode),
                 st.lists(st.sampled_from(_TRICKY), max_size=6).map(b"".join)))
def test_compiled_quoting_is_pythons(data: bytes) -> None:
    """Row strings (quote_bytes) and Annotate_rows comments (printable lines): the
    compiled escaping writes what the Python escaping writes, for any bytes."""
    assert core.quoted_text(data).decode("utf-8", "surrogateescape") == quote_bytes(data)
    assert core.comment_lines(data).decode("utf-8") == annotate_text(data)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400))
def test_compiled_base64_is_encodebytes(data: bytes) -> None:
    import base64
    assert core.base64_text(data) == base64.encodebytes(data)


@pytest.mark.parametrize("data", _TRICKY)
def test_compiled_quoting_on_tricky_bytes(data: bytes) -> None:
    assert core.quoted_text(data).decode("utf-8", "surrogateescape") == quote_bytes(data)
    assert core.comment_lines(data).decode("utf-8") == annotate_text(data)
