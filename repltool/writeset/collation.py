"""Collations -> a conservative canonical form of string key values.

MySQL hashes the *weight string* of a string key part (``Field::make_sort_key``
-> ``strnxfrm`` of the column's collation), so under ``utf8mb4_general_ci``
'abc', 'ABC' and 'ábc' produce one hash (format-spec §6b, gotcha 13).  The
weight tables (UCA 4.0.0 / 5.2.0 / 9.0.0 / 14.0.0 plus per-language
tailorings) are not reproduced here.  Instead every string is mapped to a
canonical text such that

    equal under the column's collation in MySQL  =>  equal canonical bytes here

so two transactions that touch the same unique-key value always share a
hash (a missed dependency would be unsafe; an extra one only costs
parallelism).  The canonical form, by collation family:

* ``binary`` (id 63): the bytes themselves (fixed ``BINARY(n)``: trailing
  0x00 padding removed).
* every other collation: Unicode canonical decomposition (NFD; NFKD when
  case- or accent-insensitive), so canonically equivalent spellings meet;
  trailing spaces removed for PAD SPACE collations and always for ``CHAR``.
* case-insensitive (``_ci``, and anything unknown): ``str.casefold``.
* accent-insensitive (``_ai``, every ``_ci`` that is not ``_as_ci``, and
  anything unknown): combining marks dropped, letters that the UCA treats as
  a base letter with a secondary difference folded (ø->o, đ->d, ł->l, æ->ae,
  ...), default-ignorable format / control characters dropped.
* ``_general_`` and the UCA 4.0.0 collations (``_unicode_ci``, ``_german2_ci``
  ... - not ``_520_``, ``_0900_``, ``uca1400``): every supplementary character
  weighs like U+FFFD, so all of them meet; ``_general_``: 'ß' is 's'.
* tailorings that make *more* strings equal: german2 (ä = ae ...),
  danish / norwegian (aa = å).
* unknown collation ids and names: all of the above at once, and 'ss' -> 's'
  (so 'ß', 'ss' and 's' meet whichever family the collation belongs to).

The resulting key bytes are therefore *not* MySQL's weight strings and the
XXH64 values of non-binary string keys differ from the server's; equality,
which is all dependency tracking uses, is preserved in the safe direction.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ._collation_ids import COLLATION_NAMES

__all__ = ["Collation", "collation_by_id", "collation_by_name", "canonical_text",
           "BINARY", "CONSERVATIVE"]


@dataclass(frozen=True, slots=True)
class Collation:
    """What the canonical form needs to know about a collation.

    ``name`` is ``None`` for an unknown collation (then every flag is the
    conservative one).
    """

    name: str | None
    binary: bool = False            # the ``binary`` pseudo-collation: bytes compare
    case_insensitive: bool = True
    accent_insensitive: bool = True
    pad_space: bool = True
    general: bool = True            # general_ci / unicode_ci: supplementary chars all equal
    sharp_s_single: bool = True     # general_ci: 'ß' = 's'
    tailoring: str = ""             # "german2" | "danish" | ""

    @property
    def exact(self) -> bool:
        """True when the key bytes are the server's own (binary collation)."""
        return self.binary


BINARY = Collation("binary", binary=True, case_insensitive=False, accent_insensitive=False,
                   pad_space=False, general=False, sharp_s_single=False)
CONSERVATIVE = Collation(None)

# MySQL 8.0 utf8mb4 _0900 collations (not in MariaDB's list).
_MYSQL_0900: dict[int, str] = {255: "utf8mb4_0900_ai_ci", 278: "utf8mb4_0900_as_cs",
                               305: "utf8mb4_0900_as_ci", 309: "utf8mb4_0900_bin"}
_DANISH = ("danish", "_da_", "norwegian", "_nb_", "_nn_")


@lru_cache(maxsize=None)
def collation_by_name(name: str | None) -> Collation:
    """The :class:`Collation` for a collation name (``utf8mb4_general_ci`` ...).

    A charset name alone or an unrecognised name gives :data:`CONSERVATIVE`.

    Example::

        >>> c = collation_by_name("utf8mb4_0900_as_cs")
        >>> c.case_insensitive, c.accent_insensitive, c.pad_space
        (False, False, False)
    """
    if not name:
        return CONSERVATIVE
    n = name.lower()
    if n == "binary":
        return BINARY
    nopad = "nopad" in n or "_0900_" in n or n.endswith("_0900_bin")
    if n.endswith("_bin"):
        return Collation(n, case_insensitive=False, accent_insensitive=False,
                         pad_space=not nopad, general=False, sharp_s_single=False)
    if n.endswith("_ci"):
        ci = True
        ai = not n.endswith("_as_ci")
    elif n.endswith("_cs") or n.endswith("_ks"):
        ci = False
        ai = "_ai_" in n
    else:                           # _w2 and other odd suffixes: be conservative
        return Collation(n, pad_space=True)
    general = not any(v in n for v in ("_520_", "_0900_", "uca1400"))
    tailoring = "german2" if "german2" in n else ("danish" if any(d in n for d in _DANISH) else "")
    return Collation(n, case_insensitive=ci, accent_insensitive=ai, pad_space=not nopad,
                     general=general, sharp_s_single="_general_" in n, tailoring=tailoring)


@lru_cache(maxsize=None)
def collation_by_id(collation_id: int | None) -> Collation:
    """The :class:`Collation` for a Table_map collation id (unknown -> conservative)."""
    if collation_id is None:
        return CONSERVATIVE
    if collation_id == 63:
        return BINARY
    name = COLLATION_NAMES.get(collation_id) or _MYSQL_0900.get(collation_id)
    if name is None and 256 <= collation_id <= 323:
        name = "utf8mb4_xx_0900_as_cs" if 278 <= collation_id <= 304 else None
    return collation_by_name(name) if name else CONSERVATIVE


# Letters the UCA weighs as a base letter plus a secondary (accent-level)
# difference although Unicode gives them no decomposition, and ligatures it
# expands: folded so that accent-insensitive comparison stays covered.
_AI_FOLD = str.maketrans({
    "ø": "o", "đ": "d", "ð": "d", "ł": "l", "ħ": "h", "ŧ": "t", "ƀ": "b", "ɨ": "i", "ƶ": "z",
    "ǥ": "g", "ı": "i", "ȷ": "j", "ɍ": "r", "ʉ": "u", "ɏ": "y", "ŀ": "l", "ĸ": "k",
    "æ": "ae", "œ": "oe", "ĳ": "ij", "ŉ": "n", "ſ": "s",
})
_KEEP_CONTROLS = frozenset("\t\n\v\f\r")


def _drop_ignorables(text: str) -> str:
    return "".join(ch for ch in text
                   if unicodedata.category(ch) not in ("Cf", "Cc") or ch in _KEEP_CONTROLS)


def canonical_text(text: str, coll: Collation, *, fixed_char: bool = False) -> str:
    """The canonical form of ``text`` under ``coll`` (see the module docstring).

    ``fixed_char``: the column is ``CHAR(n)`` (trailing spaces are padding).

    Pure-ASCII text (most keys) takes a short path: ASCII is its own NFD and
    NFKD, has no combining marks and nothing :data:`_AI_FOLD` or the
    tailorings touch, and ``casefold`` of ASCII is ``lower``; so only case,
    control characters, 'ss' (unknown collations) and trailing spaces remain.
    Other text is canonicalised by :func:`_canonical_unicode`, whose results
    are cached (bounded).  ``tests/writeset/test_collation_fast.py`` holds both
    paths to the general one on generated text.

    Example::

        >>> g = collation_by_name("utf8mb4_general_ci")
        >>> canonical_text("Ábc  ", g) == canonical_text("abc", g)
        True
    """
    if not text.isascii():
        return _canonical_unicode(text, coll, fixed_char)
    if coll.case_insensitive:
        text = text.lower()
    if coll.accent_insensitive and not text.isprintable():
        text = _drop_ignorables(text)       # ASCII controls are category Cc
    if coll.name is None:
        text = text.replace("ss", "s")
    if coll.pad_space or fixed_char:
        text = text.rstrip(" ")
    return text


@lru_cache(maxsize=8192)
def _canonical_unicode(text: str, coll: Collation, fixed_char: bool) -> str:
    return canonical_text_general(text, coll, fixed_char=fixed_char)


def canonical_text_general(text: str, coll: Collation, *, fixed_char: bool = False) -> str:
    """:func:`canonical_text` without its short path and cache (the definition)."""
    if coll.general and any(ord(ch) > 0xFFFF for ch in text):
        text = "".join("\ufffd" if ord(ch) > 0xFFFF else ch for ch in text)
    insensitive = coll.case_insensitive or coll.accent_insensitive
    if coll.sharp_s_single and coll.case_insensitive:
        text = text.replace("ß", "s").replace("ẞ", "s")
    text = unicodedata.normalize("NFKD" if insensitive else "NFD", text)
    if coll.case_insensitive:
        text = text.casefold()
    if coll.tailoring == "german2":
        text = text.replace("a\u0308", "ae").replace("o\u0308", "oe").replace("u\u0308", "ue")
    elif coll.tailoring == "danish":
        text = text.replace("a\u030a", "aa")
    if coll.accent_insensitive:
        text = text.translate(_AI_FOLD) if coll.case_insensitive else text
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
        text = _drop_ignorables(text)
    if coll.name is None:
        text = text.replace("ss", "s")
    if coll.pad_space or fixed_char:
        text = text.rstrip(" ")
    return text
