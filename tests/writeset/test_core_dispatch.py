"""The compiled core's write-set dispatch (``_wsdispatch.pxi``) against the Python rules.

* The JSON text the core builds for a key of integer columns (``int_entry_text``,
  what ``RowsShape`` appends for such keys in ``repltool dump --writesets``) equals
  ``encode_key`` of the entry the general path builds
  (:func:`repltool.writeset.plan.join_key` over each part's sort key, hashed with
  XXH64): every width 1-8, signed and unsigned values and sort keys, the extremes,
  1 to 4 parts, unique keys and foreign keys (``"parent": true``).

Whole outputs of the dispatch are held to the general path's in ``test_fused.py``
(which also asserts, by the dispatch's counters, that MySQL Rows v2 and MariaDB Rows
v1 events are keyed in the core) and ``test_hand_over.py``.  These tests need the
compiled engine: they fail, not skip, without it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from repltool.binlog import engine
from repltool.writeset.jsonl import encode_key, key_head
from repltool.writeset.model import KEY_SEP, WriteKey, key_prefix
from repltool.writeset.plan import join_key

import xxhash



def _general_text(raws: list[bytes], layouts: list[tuple[int, bool, int]], db: str,
                  table: str, index: str, parent: bool) -> str:
    """``encode_key`` of the general path's entry: per part the value as the column
    decoder reads it (little-endian, the column's signedness) and the sort key
    (big-endian, the top bit flipped for a signed sort key)."""
    values, sks = [], []
    for raw, (width, signed, top) in zip(raws, layouts):
        values.append(int.from_bytes(raw, "little", signed=signed))
        sk = bytearray(raw[::-1])
        sk[0] ^= top
        sks.append(bytes(sk))
    data = join_key(key_prefix(index, db, table), sks)
    return encode_key(WriteKey(db, table, index, tuple(values), data,
                               xxhash.xxh64_intdigest(data), parent))


_part = st.integers(1, 8).flatmap(lambda w: st.tuples(
    st.just(w), st.booleans(), st.sampled_from([0, 0x80]),
    st.one_of(st.binary(min_size=w, max_size=w),
              st.sampled_from([b"\x00" * w, b"\xff" * w, b"\x00" * (w - 1) + b"\x80",
                               b"\xff" * (w - 1) + b"\x7f"]))))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_part, min_size=1, max_size=4), parent=st.booleans(),
       names=st.sampled_from([("shop", "orders", "PRIMARY"), ("d\u00e9", "t\u00e4b", "uk"),
                              ("x" * 64, "y" * 64, "z" * 64)]))
def test_integer_key_text(core, parts: list[tuple[int, bool, int, bytes]],  # type: ignore[no-untyped-def]
                          parent: bool, names: tuple[str, str, str]) -> None:
    db, table, index = names
    raws = [raw for *_, raw in parts]
    layouts = [(w, signed, top) for w, signed, top, _ in parts]
    head, end = key_head(db, table, index, parent)
    spec = (key_prefix(index, db, table), head, end,
            tuple((w, signed, top, KEY_SEP + str(w).encode()) for w, signed, top in layouts))
    assert core.int_entry_text(raws, spec) == \
        _general_text(raws, layouts, db, table, index, parent)


def test_integer_key_text_refuses_a_short_value(core) -> None:  # type: ignore[no-untyped-def]
    head, end = key_head("d", "t", "PRIMARY", False)
    spec = (key_prefix("PRIMARY", "d", "t"), head, end, ((4, True, 0x80, KEY_SEP + b"4"),))
    with pytest.raises(ValueError):
        core.int_entry_text([b"\x01\x02\x03"], spec)
    assert core.int_entry_text([b"\x01\x00\x00\x00"], spec).startswith(head + "1]")


_ascii_text = st.text(alphabet=st.characters(max_codepoint=127), max_size=60)


def _string_keys(files: list, schema_path: object) -> list:
    """(miss, spec) of every one-part string key the dispatch builds itself, in text
    mode, after a read of ``files``."""
    from repltool.writeset.fused import _FastRun
    from repltool.writeset.jsonl import RecordWriter
    from repltool.writeset import load_schema
    import warnings

    engine_core = engine.compiled_core()
    assert engine_core is not None
    run = _FastRun([str(f) for f in files], load_schema(schema_path), True, {}, True,
                   RecordWriter())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in run:
            pass
    found = []
    for tk in run._text_keys.values():
        width = len(tk.td.columns)
        bitmap = bytes([0xFF] * ((width + 7) // 8))
        _, _, specs = tk.core_keys(engine_core, bitmap, None, width)
        found += [(tk.td.table, miss, st_) for is_fk, _, _, miss, _, st_ in specs
                  if st_ is not None]
    return found


@pytest.fixture(scope="module")
def email_key(synth_logs: dict):  # type: ignore[no-untyped-def]
    """The spec the dispatch holds for the synth sets' UNIQUE ``customers.email``
    (VARCHAR(64) under utf8mb4_0900_ai_ci) in text mode, with its Python miss."""
    files, schema = synth_logs["uniform"]
    found = [(miss, st_) for table, miss, st_ in _string_keys(files, schema)
             if table == "customers"]
    assert len(found) == 1 and found[0][1][5][0][0] == "w"     # the 0900 weight rule
    return found[0]


@pytest.fixture(scope="module")
def general_ci_keys(corpus):  # type: ignore[no-untyped-def]
    """The specs of the MariaDB ``small`` set's string keys (utf8mb4_general_ci: the
    ``_unicode`` rule)."""
    from .test_corpus import SETS
    pattern, _, schema = SETS["small"]
    root = corpus / "mariadb"
    found = [(miss, st_) for _, miss, st_ in _string_keys(sorted(root.glob(pattern)),
                                                         root / schema / "schema.sql")
             if st_[5][0][0] == "u"]
    assert found
    return found


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_ascii_text)
def test_string_key_texts(core, email_key, value: str) -> None:  # type: ignore[no-untyped-def]
    """ASCII values (quotes, backslashes, controls included): the core's texts equal the
    Python miss's (the general path's ``key_entries`` through ``encode_key``)."""
    miss, spec = email_key
    data = value.encode("ascii")
    raw = len(data).to_bytes(spec[3], "little") + data
    assert core.str_entry_texts(raw, spec) == miss(raw)


def test_string_key_texts_leave_non_ascii_to_python(core, email_key) -> None:  # type: ignore[no-untyped-def]
    miss, spec = email_key
    data = "jürgen@example.org".encode()
    raw = len(data).to_bytes(spec[3], "little") + data
    assert core.str_entry_texts(raw, spec) is None
    assert len(miss(raw)) == 2              # the Python miss: both entries (8.0's old format)
    with pytest.raises(ValueError):         # a length that does not fill the bytes
        core.str_entry_texts(raw + b"x", spec)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_ascii_text, which=st.integers(0, 100))
def test_general_ci_string_key_texts(core, general_ci_keys, value: str,  # type: ignore[no-untyped-def]
                                     which: int) -> None:
    """The ``_unicode`` rule (upper-cased 2-byte weights, PAD SPACE padding, the
    buffer's cut) on ASCII values, long ones included: the core's texts equal the
    Python miss's."""
    miss, spec = general_ci_keys[which % len(general_ci_keys)]
    data = value.encode("ascii")
    raw = len(data).to_bytes(spec[3], "little") + data
    assert core.str_entry_texts(raw, spec) == miss(raw)
