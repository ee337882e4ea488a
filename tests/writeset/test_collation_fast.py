"""``canonical_text``'s ASCII short path and cache equal its definition.

:func:`repltool.writeset.collation.canonical_text_general` is the definition
(NFD/NFKD, casefold, tailorings, folds, ignorables, 'ss', padding);
:func:`~repltool.writeset.collation.canonical_text` must return the same text
for every string under every collation flavour, ASCII or not, cached or not.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.writeset.collation import (
    CONSERVATIVE, canonical_text, canonical_text_general, collation_by_id, collation_by_name,
)
from repltool.writeset._collation_ids import COLLATION_NAMES

COLLATIONS = sorted({collation_by_id(i) for i in [*COLLATION_NAMES, 63, 255, 278, 305, 309,
                                                   280, 400, None]}
                    | {collation_by_name(n) for n in ("utf8mb4_german2_ci", "utf8mb4_danish_ci",
                                                      "latin1_swedish_ci", "utf8mb4_bin",
                                                      "utf8mb4_0900_as_cs", "x_w2", "")}
                    | {CONSERVATIVE}, key=repr)

_ascii = st.lists(st.sampled_from(list("aAsSzZ ß\t\n\x00\x01\x1f\x7f~é") + ["ss", "SS", "sss"]),
                 max_size=10).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(_ascii, st.text(max_size=12),
                      st.text(alphabet=st.characters(max_codepoint=127), max_size=16)),
       fixed=st.booleans())
def test_same_as_the_definition(text: str, fixed: bool) -> None:
    for coll in COLLATIONS:
        want = canonical_text_general(text, coll, fixed_char=fixed)
        assert canonical_text(text, coll, fixed_char=fixed) == want, (text, coll)
        assert canonical_text(text, coll, fixed_char=fixed) == want       # cached


def test_collation_flavours_are_covered() -> None:
    flags = {(c.binary, c.case_insensitive, c.accent_insensitive, c.pad_space, c.name is None,
              c.tailoring) for c in COLLATIONS}
    assert len(COLLATIONS) > 100 and len(flags) >= 8
