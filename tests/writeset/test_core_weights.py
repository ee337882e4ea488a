"""The compiled core's UCA 9.0.0 weights of ASCII values (``_core.join_ascii_weights``
behind :func:`repltool.writeset.collation.sort_key_function`) against the Python
weight strings (:func:`~repltool.writeset.collation.field_sort_key`), for the 0900
collations with 1, 2 and 3 levels, CHAR and VARCHAR, both buffer sizes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.binlog import engine
from repltool.writeset.collation import collation_by_name, field_sort_key, sort_key_function

_NAMES = ("utf8mb4_0900_ai_ci", "utf8mb4_0900_as_ci", "utf8mb4_0900_as_cs")


@pytest.fixture(autouse=True)
def _compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(engine.ENV, "compiled")
    assert engine.compiled_core() is not None


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(_NAMES), fixed=st.booleans(), max_length=st.sampled_from([8, 40, 400]),
       key_length=st.booleans(),
       text=st.one_of(st.text(st.characters(max_codepoint=127), max_size=30),
                      st.text(max_size=12)))
def test_ascii_weights_are_the_python_ones(name: str, fixed: bool, max_length: int,
                                           key_length: bool, text: str) -> None:
    coll = collation_by_name(name)
    kl = max_length if key_length and not fixed else None
    key = sort_key_function(coll, fixed=fixed, max_length=max_length, key_length=kl)
    assert "join" in key.__code__.co_freevars            # the compiled weights ran
    data = text.encode("utf-8")
    assert key(data) == field_sort_key(coll, data, fixed=fixed, max_length=max_length,
                                       key_length=kl)


def test_join_rejects_non_ascii() -> None:
    core = engine.compiled_core()
    levels = collation_by_name("utf8mb4_0900_ai_ci").table.ascii()   # type: ignore[union-attr]
    assert core.join_ascii_weights(b"aB", levels) == levels[0][97] + levels[0][66]
    with pytest.raises(ValueError):
        core.join_ascii_weights(b"\xc3\xa9", levels)
