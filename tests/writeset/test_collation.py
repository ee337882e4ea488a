"""Conservative canonicalisation: equal under the collation => equal canonical text."""

from __future__ import annotations

import pytest

from repltool.writeset import canonical_text, collation_by_id, collation_by_name

EQUAL = [
    # collation, a, b  (equal in MySQL/MariaDB)
    ("utf8mb4_general_ci", "abc", "ABC"),
    ("utf8mb4_general_ci", "résumé", "RESUME"),
    ("utf8mb4_general_ci", "abc", "abc   "),           # PAD SPACE
    ("utf8mb4_general_ci", "straße", "STRASE"),         # general_ci: ß = s
    ("utf8mb4_general_ci", "😀", "😁"),                  # supplementary chars all equal
    ("utf8mb4_unicode_ci", "straße", "strasse"),        # UCA: ß = ss
    ("utf8mb4_unicode_ci", "Øre", "ore"),
    ("utf8mb4_unicode_ci", "e\u0301", "é"),             # canonical equivalence
    ("utf8mb4_unicode_ci", "ab\u00ad", "ab"),           # soft hyphen is ignorable
    ("utf8mb4_0900_ai_ci", "Ñandú", "nandu"),
    ("utf8mb4_0900_ai_ci", "ﬁne", "fine"),              # compatibility ligature
    ("utf8mb4_0900_as_ci", "ABC", "abc"),
    ("utf8mb4_german2_ci", "Müller", "mueller"),
    ("utf8mb4_danish_ci", "Århus", "aarhus"),
    ("latin1_swedish_ci", "abc", "ABC "),
    ("utf8mb4_bin", "abc", "abc  "),                    # utf8mb4_bin is PAD SPACE
    (None, "Straße ", "STRASSE"),                       # unknown collation: everything
]


@pytest.mark.parametrize("name,a,b", EQUAL)
def test_equal_values_share_canonical_text(name, a, b) -> None:
    c = collation_by_name(name)
    assert canonical_text(a, c) == canonical_text(b, c)


@pytest.mark.parametrize("name,a,b", [
    ("utf8mb4_bin", "abc", "ABC"),
    ("utf8mb4_0900_as_cs", "abc", "ABC"),
    ("utf8mb4_0900_as_ci", "é", "e"),
    ("utf8mb4_0900_ai_ci", "abc", "abc "),              # NO PAD
])
def test_distinct_values_stay_distinct_where_known(name, a, b) -> None:
    c = collation_by_name(name)
    assert canonical_text(a, c) != canonical_text(b, c)


def test_char_columns_ignore_trailing_spaces_even_no_pad() -> None:
    c = collation_by_name("utf8mb4_0900_ai_ci")
    assert canonical_text("ab  ", c, fixed_char=True) == canonical_text("AB", c)


def test_ids() -> None:
    assert collation_by_id(63).binary
    assert collation_by_id(45).name == "utf8mb4_general_ci"
    assert collation_by_id(255).name == "utf8mb4_0900_ai_ci" and not collation_by_id(255).pad_space
    assert collation_by_id(46).name == "utf8mb4_bin" and not collation_by_id(46).case_insensitive
    unknown = collation_by_id(2300)
    assert unknown.name is None and unknown.case_insensitive and unknown.accent_insensitive
