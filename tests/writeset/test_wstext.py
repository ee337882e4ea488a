"""The JSON texts of key entries built in one buffer by the compiled core (``_wstext.pxi``).

* String keys: the core's texts (``str_entry_texts``) equal the Python miss's (the
  general path's ``key_entries`` through ``encode_key``) on hostile ASCII values -
  quotes, backslashes, every control byte, DEL, empty strings, values up to the
  255 bytes a one-byte length allows - under both rules the core knows (the 0900
  weight tables, the ``_unicode`` 2-byte weights); a value with any byte above
  0x7F is left to Python (None).  The counter ``text_builds()`` proves the
  one-buffer builder made the texts.
* Integer keys: the decimal digits of every value and hash (every power of ten of
  a 64-bit value and its neighbours) and names beyond Latin-1 (the text then
  joined by the general rule) equal ``encode_key``'s.
* Whole outputs: ``repltool dump --writesets --format jsonl`` with the compiled
  engine is byte-identical to the pure-Python engine's on the MariaDB corpus sets
  (their schemas), every MySQL corpus binlog and the synthetic logs, and the core
  built the entries of the sets with integer and string keys itself.

These tests need the compiled engine: they fail, not skip, without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from repltool.binlog import engine
from repltool.cli import run
from repltool.writeset.jsonl import key_head
from repltool.writeset.model import KEY_SEP, key_prefix


from .test_core_dispatch import _general_text, _string_keys
from .test_corpus import SETS


@pytest.fixture(scope="module")
def string_specs(synth_logs: dict, corpus: Path) -> list:  # type: ignore[type-arg]
    """(miss, spec) of the string keys the dispatch builds itself: the synth sets'
    ``customers.email`` (utf8mb4_0900_ai_ci: the weight rule) and the MariaDB
    ``small`` set's keys (utf8mb4_general_ci: the ``_unicode`` rule)."""
    with pytest.MonkeyPatch.context() as mp:     # whichever engine the suite runs with
        mp.setenv(engine.ENV, "compiled")
        files, schema = synth_logs["uniform"]
        found = [(miss, spec) for _, miss, spec in _string_keys(files, schema)]
        pattern, _, sch = SETS["small"]
        root = corpus / "mariadb"
        found += [(miss, spec) for _, miss, spec in
                  _string_keys(sorted(root.glob(pattern)), root / sch / "schema.sql")]
    rules = {spec[5][0][0] for _, spec in found}
    assert rules == {"w", "u"}, rules
    return found


_hostile = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=127), max_size=255),
    st.text(alphabet=st.sampled_from('"\\\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f /aZ'),
            max_size=80),
    st.sampled_from(["", " ", "a" * 255, "\x7f" * 255, '"' * 255, "\\" * 255,
                     "\x00" * 255, "a ", "A", "z" * 254 + " "]))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_hostile, which=st.integers(0, 1000))
@example(value="", which=0)
def test_string_texts_equal_the_python_miss(core, string_specs, value: str,  # type: ignore[no-untyped-def]
                                            which: int) -> None:
    miss, spec = string_specs[which % len(string_specs)]
    data = value.encode("ascii")
    raw = len(data).to_bytes(spec[3], "little") + data
    before = core.text_builds()[1]
    got = core.str_entry_texts(raw, spec)
    assert got == miss(raw)
    assert core.text_builds()[1] == before + len(got)      # the one-buffer builder made them


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(min_size=1, max_size=80).filter(lambda s: not s.isascii()),
       which=st.integers(0, 1000))
def test_non_ascii_values_are_left_to_python(core, string_specs, value: str,  # type: ignore[no-untyped-def]
                                             which: int) -> None:
    miss, spec = string_specs[which % len(string_specs)]
    data = value.encode("utf-8")[:255]
    raw = len(data).to_bytes(spec[3], "little") + data
    before = core.text_builds()
    assert core.str_entry_texts(raw, spec) is None
    assert core.text_builds() == before
    with pytest.raises(ValueError):         # a length that does not fill the bytes
        core.str_entry_texts(raw + b"x", spec)
    with pytest.raises(IndexError):         # not even the length
        core.str_entry_texts(raw[:spec[3] - 1], spec)


_powers = sorted({v for k in range(20) for v in (10 ** k - 1, 10 ** k, 10 ** k + 1)
                  if 0 <= v < 1 << 64} | {(1 << 64) - 1, 1 << 63, (1 << 63) - 1})


@pytest.mark.parametrize("names", [("shop", "orders", "PRIMARY"),
                                   ("d\u00e9", "t\u00e4b", "uk"),             # Latin-1
                                   ("\u6570\u636e", "\u8868", "\u7d22\u5f15"),  # 2-byte kind
                                   ("db\U0001f600", "t", "k")],               # 4-byte kind
                         ids=["ascii", "latin1", "cjk", "astral"])
@pytest.mark.parametrize("parent", [False, True])
def test_integer_texts_every_digit_count(core, names: tuple[str, str, str],  # type: ignore[no-untyped-def]
                                         parent: bool) -> None:
    """Every power of ten of a 64-bit value and its neighbours, unsigned and signed,
    one and two parts: the digits (values and hashes) and names of every string kind."""
    db, table, index = names
    head, end = key_head(db, table, index, parent)
    before = core.text_builds()[0]
    n = 0
    for v in _powers:
        for signed in (False, True):
            raw = v.to_bytes(8, "little")
            layouts = [(8, signed, 0x80 if signed else 0)]
            spec = (key_prefix(index, db, table), head, end,
                    ((8, signed, layouts[0][2], KEY_SEP + b"8"),))
            assert core.int_entry_text([raw], spec) == \
                _general_text([raw], layouts, db, table, index, parent)
            spec2 = (key_prefix(index, db, table), head, end,
                     ((8, signed, layouts[0][2], KEY_SEP + b"8"), (2, False, 0, KEY_SEP + b"2")))
            assert core.int_entry_text([raw, b"\x07\x00"], spec2) == \
                _general_text([raw, b"\x07\x00"], layouts + [(2, False, 0)], db, table,
                              index, parent)
            n += 2
    assert core.text_builds()[0] == before + n


def _dump(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, which: str,
          files: list[Path], schema: Path | None) -> str:
    monkeypatch.setenv(engine.ENV, which)
    args = ["dump", "--writesets", "--format", "jsonl"]
    if schema is not None:
        args += ["--schema", str(schema)]
    code = run(args + [str(f) for f in files])
    out, err = capsys.readouterr()
    return f"exit {code}\n{out}\n{err}"      # damaged files: the same outcome both ways


def _engines_agree(capsys, monkeypatch, files, schema) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Both engines' whole outputs equal; the entries the core's builder made."""
    monkeypatch.setenv(engine.ENV, "compiled")      # whichever engine the suite runs with
    core = engine.compiled_core()
    assert core is not None
    before = core.text_builds()
    want = _dump(capsys, monkeypatch, "python", files, schema)
    assert core.text_builds() == before         # the pure-Python engine built them all
    got = _dump(capsys, monkeypatch, "compiled", files, schema)
    assert got == want
    after = core.text_builds()
    return after[0] - before[0], after[1] - before[1]


@pytest.mark.filterwarnings("ignore::repltool.writeset.SchemaWarning")
@pytest.mark.parametrize("name", [n for n in SETS if n != "compressed"])
def test_mariadb_sets_engines_agree(capsys, monkeypatch, corpus: Path,  # type: ignore[no-untyped-def]
                                    name: str) -> None:
    pattern, _, schema = SETS[name]
    root = corpus / "mariadb"
    files = sorted(root.glob(pattern))
    assert files
    ints, strs = _engines_agree(capsys, monkeypatch, files, root / schema / "schema.sql")
    assert ints > 100, (ints, strs)
    if name in ("small", "rotation"):       # sets with VARCHAR unique keys under _unicode
        assert strs > 100, (ints, strs)


def _mysql_binlogs(corpus: Path) -> list[Path]:
    out = []
    for path in sorted((corpus / "mysql").rglob("*")):
        if path.is_file():
            with open(path, "rb") as f:
                if f.read(4) == b"\xfebin":
                    out.append(path)
    return out


def test_mysql_corpus_engines_agree(capsys, monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    files = _mysql_binlogs(corpus)
    assert len(files) > 10
    ints = 0
    for path in files:
        ints += _engines_agree(capsys, monkeypatch, [path], None)[0]
    assert ints > 0


@pytest.mark.parametrize("name", ["uniform", "hot", "relay", "mysql57", "tagged"])
def test_synth_engines_agree(capsys, monkeypatch, synth_logs: dict,  # type: ignore[no-untyped-def]
                             name: str) -> None:
    files, schema = synth_logs[name]
    ints, strs = _engines_agree(capsys, monkeypatch, files, schema)
    assert ints > 1000 and strs > 100, (ints, strs)


def test_long_and_short_lines_keep_their_order(capsys, monkeypatch,  # type: ignore[no-untyped-def]
                                               synth_logs: dict) -> None:
    """Lines of at least ``OWN_WRITE`` characters are written by themselves, the others
    in batches: the output is still every line of the general path, in order."""
    import json

    from repltool.binlog import read_transactions
    from repltool.cli.jsonlines import OWN_WRITE
    from repltool.writeset import READ_OPTIONS, load_schema, writeset_record
    from repltool.writeset.extract import GeneralWritesetExtractor

    files, schema = synth_logs["hot"]
    out = _dump(capsys, monkeypatch, "compiled", files, schema).split("\n")
    ex = GeneralWritesetExtractor(load_schema(schema))
    want = [json.dumps(writeset_record(t, ex.writeset(t)), ensure_ascii=False)
            for t in read_transactions([str(f) for f in files], READ_OPTIONS, keep_events=True)]
    assert out[0] == "exit 0" and out[1:-2] == want
    long = [i for i, line in enumerate(want) if len(line) >= OWN_WRITE]
    assert long and len(long) < len(want) - 10
    assert any(0 < i < len(want) - 1 and len(want[i + 1]) < OWN_WRITE for i in long)


def test_integer_text_refuses_wrong_types(core) -> None:  # type: ignore[no-untyped-def]
    """The builder reads the spec's fields without reference counting: a field of the
    wrong type is refused, not read as bytes."""
    head, end = key_head("d", "t", "PRIMARY", False)
    good = (b"p", head, end, ((1, False, 0, b"x"),))
    assert core.int_entry_text([b"\x01"], good).startswith(head + "1]")
    for bad in [("p", head, end, ((1, False, 0, b"x"),)),
                (b"p", head.encode(), end, ((1, False, 0, b"x"),)),
                (b"p", head, None, ((1, False, 0, b"x"),)),
                (b"p", head, end, ((1, False, 0, "x"),))]:
        with pytest.raises(TypeError):
            core.int_entry_text([b"\x01"], bad)
