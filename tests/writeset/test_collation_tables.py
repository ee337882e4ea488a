"""Collation weight strings: MySQL's tables, MySQL's strnxfrm lengths and padding.

Table-driven: for every collation repltool implements, every pair of characters
whose MySQL weight is equal gets the same sort key and every other pair a
different one; the tables themselves are held to MySQL's source where it was
transcribed here (``sort_order_latin1``, plane 00 of ``my_unicase_default``)
and, for all of them, to a live MariaDB server (``tests/fixtures/mariadb.py``):
``WEIGHT_STRING`` of every character, and which characters a UNIQUE key
refuses as duplicates.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Iterator

import pytest
import xxhash

from repltool.writeset import _collation_data as data
from repltool.writeset.collation import (
    BINARY, UNKNOWN, collation_by_id, collation_by_name, field_sort_key, sort_key_function,
)

EIGHT_BIT = sorted(data.EIGHT_BIT)
UNICASE = [33, 45, 223]

# strings/ctype-latin1.cc sort_order_latin1 (MySQL 8.0), transcribed
MYSQL_SORT_ORDER_LATIN1 = bytes(
    list(range(0, 97)) + list(range(65, 91)) + list(range(123, 192))
    + [65, 65, 65, 65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73, 68, 78, 79, 79, 79, 79,
       93, 215, 216, 85, 85, 85, 89, 89, 222, 223, 65, 65, 65, 65, 92, 91, 92, 67, 69, 69, 69,
       69, 73, 73, 73, 73, 68, 78, 79, 79, 79, 79, 93, 247, 216, 85, 85, 85, 89, 89, 222, 255])

# strings/ctype-utf8.cc plane00[] (MySQL 8.0): the sort field of U+00C0..U+00FF
MYSQL_PLANE00_C0 = (
    [0x41] * 6 + [0xC6, 0x43] + [0x45] * 4 + [0x49] * 4 + [0xD0, 0x4E] + [0x4F] * 5
    + [0xD7, 0xD8] + [0x55] * 4 + [0x59, 0xDE, 0x53]
    + [0x41] * 6 + [0xC6, 0x43] + [0x45] * 4 + [0x49] * 4 + [0xD0, 0x4E] + [0x4F] * 5
    + [0xF7, 0xD8] + [0x55] * 4 + [0x59, 0xDE, 0x59])


def key(cid: int, value: bytes, n: int = 4, fixed: bool = False) -> bytes:
    """The sort key of ``value`` in a VARCHAR(n) / CHAR(n) column of collation ``cid``."""
    c = collation_by_id(cid)
    return field_sort_key(c, value, fixed=fixed, max_length=n * c.mbmaxlen)


def utf8(cid: int, cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


# ---- the tables against MySQL's source ----

def test_latin1_swedish_ci_is_mysqls_compiled_table() -> None:
    assert len(MYSQL_SORT_ORDER_LATIN1) == 256
    assert collation_by_id(8).table == MYSQL_SORT_ORDER_LATIN1


def test_general_ci_plane00_is_mysqls() -> None:
    table = collation_by_id(45).table
    want = {cp: cp for cp in range(0xC0)}
    want.update({cp: cp - 32 for cp in range(0x61, 0x7B)})
    want[0xB5] = 0x39C
    want.update({0xC0 + i: w for i, w in enumerate(MYSQL_PLANE00_C0)})
    assert [ord(table[cp]) for cp in range(256)] == [want[cp] for cp in range(256)]
    mysql500 = collation_by_id(223).table
    assert ord(mysql500[0xDF]) == 0xDF and ord(table[0xDF]) == 0x53
    assert [cp for cp in range(0x10000) if mysql500[cp] != table[cp]] == [0xDF]


# ---- every pair: equal weight <=> equal key ----

@pytest.mark.parametrize("cid", EIGHT_BIT)
def test_eight_bit_pairs(cid: int) -> None:
    c = collation_by_id(cid)
    assert c.exact and c.mbmaxlen == 1 and c.pad_space
    weight = c.table if c.kind == "8bit" else bytes(range(256))
    classes: dict[bytes, set[int]] = {}
    for b in range(256):
        classes.setdefault(key(cid, bytes([b])), set()).add(b)
    by_weight: dict[int, set[int]] = {}
    for b in range(256):
        by_weight.setdefault(weight[b], set()).add(b)
    assert sorted(map(sorted, classes.values())) == sorted(map(sorted, by_weight.values()))
    # and in longer strings, position by position.  (The padding is the byte 0x20,
    # not the space's weight: latin7_estonian_cs weighs ' ' 0x2C, so there 'a' and
    # 'a ' get different keys - MySQL's own my_strnxfrm_simple + my_strxfrm_pad.)
    assert (key(cid, b"a") == key(cid, b"a ")) == (weight[0x20] == 0x20)
    for a, b in [(0x41, 0x61), (0x59, 0xDC), (0x5B, 0xC5)]:
        assert (key(cid, bytes([a, 0x78])) == key(cid, bytes([b, 0x78]))) == (weight[a] == weight[b])


@pytest.mark.parametrize("cid", UNICASE)
def test_unicase_pairs_over_the_bmp(cid: int) -> None:
    c = collation_by_id(cid)
    by_key: dict[bytes, set[int]] = {}
    for cp in range(0x10000):
        by_key.setdefault(key(cid, utf8(cid, cp), 1), set()).add(cp)
    by_weight: dict[int, set[int]] = {}
    for cp in range(0x10000):
        by_weight.setdefault(ord(c.table[cp]), set()).add(cp)
    assert sorted(map(min, by_key.values())) == sorted(map(min, by_weight.values()))
    assert len(by_key) == len(by_weight)


def test_supplementary_characters() -> None:
    # utf8mb4_general_ci: every character above U+FFFF weighs U+FFFD (maxchar 0xFFFF)
    assert key(45, "😀".encode()) == key(45, "😁".encode()) == key(45, "\ufffd".encode())
    # utf8mb4_bin: 3-byte code points, all distinct
    assert key(46, "😀".encode()) != key(46, "😁".encode())
    # utf8mb3 cannot hold them: the weights stop there and pad (my_strnxfrm_unicode)
    assert key(33, b"a\xf0\x9f\x98\x80b") == key(33, b"a")


def test_issue_examples() -> None:
    assert key(8, b"Y") == key(8, "Ü".encode("latin-1"))
    assert key(8, b"[") == key(8, "Å".encode("latin-1"))
    assert key(8, b"CAF\xc9") == key(8, b"caf\xe9")                 # 'CAFÉ' = 'café'
    assert key(45, "ᾀ".encode()) == key(45, "α".encode())           # U+1F80 = U+03B1
    assert key(45, "straße".encode(), 8) == key(45, b"STRASE", 8)
    assert key(223, "straße".encode(), 8) != key(223, b"STRASE", 8)


# ---- exact bytes: strnxfrmlen(pack_length), nweights = char_length, padding ----

@pytest.mark.parametrize("cid,fixed,n,value,want", [
    (8, False, 3, b"ab", b"AB  "),                    # pack 4 = 3 + 1 length byte
    (8, True, 3, b"ab", b"AB "),
    (47, False, 3, b"ab", b"ab  "),                   # latin1_bin: my_strxfrm_pad
    (63, False, 4, b"a", b"a"),                       # VARBINARY: NO PAD, unpadded
    (63, True, 4, b"a", b"a\0\0\0"),                  # BINARY(4): 0x00 to the end
    (63, True, 1, b"1", b"1"),                        # format-spec §8: BINARY(1) '1'
    (45, False, 3, b"a", bytes.fromhex("0041002000200020")),       # ((12+1+3)/4)*2 = 8
    (45, True, 2, b"a", bytes.fromhex("00410020")),                # ((8+3)/4)*2 = 4
    (33, False, 2, b"ab", bytes.fromhex("004100420020")),          # ((6+1+2)/3)*2 = 6
    (83, False, 2, b"Ab", bytes.fromhex("004100620020")),          # utf8mb3_bin
    (46, False, 2, b"a", bytes.fromhex("000061000020000020")),     # ((8+1+3)/4)*3 = 9
    (46, True, 2, "é".encode(), bytes.fromhex("0000e9000020")),    # ((8+3)/4)*3 = 6
])
def test_exact_bytes(cid: int, fixed: bool, n: int, value: bytes, want: bytes) -> None:
    assert key(cid, value, n, fixed) == want


@pytest.mark.parametrize("cid,n,value,old,new", [
    (8, 3, b"ab", b"AB  ", b"AB "),
    (45, 3, b"a", "0041002000200020", "004100200020"),     # ((12+3)/4)*2 = 6
    (255, 2, b"a", "1c47", "1c47"),                        # NO PAD: only the cut differs
])
def test_key_length_buffer(cid: int, n: int, value: bytes, old: object, new: object) -> None:
    """The pack-length buffer ("old format") and the key-part-length one (8.0.43's first
    entry of a whole VARCHAR part) differ by VARCHAR's length byte."""
    c = collation_by_id(cid)
    ml = n * c.mbmaxlen
    got_old = field_sort_key(c, value, fixed=False, max_length=ml)
    got_new = field_sort_key(c, value, fixed=False, max_length=ml, key_length=ml)
    want_old = old if isinstance(old, bytes) else bytes.fromhex(str(old))
    want_new = new if isinstance(new, bytes) else bytes.fromhex(str(new))
    assert (got_old, got_new) == (want_old, want_new)
    f = sort_key_function(c, fixed=False, max_length=ml, key_length=ml)
    assert f(value) == got_new


def test_long_varchar_has_two_length_bytes() -> None:
    c = collation_by_id(45)
    k = field_sort_key(c, b"x", fixed=False, max_length=400)       # VARCHAR(100)
    assert len(k) == ((400 + 2 + 3) // 4) * 2 == 200 + 2


def test_odd_buffer_keeps_the_high_byte() -> None:
    c = collation_by_id(45)
    assert c.strnxfrm("ab".encode(), 3, 2, True) == bytes.fromhex("004100")
    assert c.strnxfrm(b"a", 3, 2, True) == bytes.fromhex("004100")
    assert c.strnxfrm(b"a", 5, 1, False) == bytes.fromhex("0041")


@pytest.mark.parametrize("cid", [8, 47, 63, 45, 33, 46, 83, 223, 5, 51, 255, 278])
def test_sort_key_function_is_field_sort_key(cid: int) -> None:
    c = collation_by_id(cid)
    rng = random.Random(cid)
    for fixed in (False, True):
        for n in (1, 3, 60, 90):
            f = sort_key_function(c, fixed=fixed, max_length=n * c.mbmaxlen)
            for _ in range(200):
                if c.mbmaxlen == 1:
                    v = bytes(rng.randrange(256) for _ in range(rng.randrange(n + 1)))
                else:
                    v = "".join(chr(rng.choice([rng.randrange(0x80), rng.randrange(0x80, 0x3000),
                                                rng.randrange(0x10000, 0x10FFFF)]))
                                for _ in range(rng.randrange(n + 1))).encode()
                assert f(v) == field_sort_key(c, v, fixed=fixed, max_length=n * c.mbmaxlen)


def test_ascii_short_path_matches_the_tables() -> None:
    for cid in UNICASE:
        c = collation_by_id(cid)
        for cp in range(128):
            assert key(cid, bytes([cp]), 1) == ord(c.table[cp]).to_bytes(2, "big") + b"\0 "
    assert key(83, b"a", 1) == b"\0a\0 "


def test_not_exact() -> None:
    for name in ("utf8mb4_0900_bin", "utf8mb4_de_pb_0900_ai_ci", "utf8mb4_ja_0900_as_cs",
                 "utf8mb4_german2_ci", "utf8mb4_swedish_ci",
                 "latin1_german2_ci", "latin2_czech_cs", "utf8mb4_german2_ci", "sjis_japanese_ci",
                 "utf8mb4_general_nopad_ci", "utf16_general_ci"):
        c = collation_by_name(name)
        assert c.name == name and not c.exact and c.reason
        with pytest.raises(ValueError):
            c.strnxfrm(b"a", 4, 4, True)
    assert not UNKNOWN.exact and "--default-collation" in UNKNOWN.reason
    assert not collation_by_id(2047).exact and not collation_by_name("nonsense_ci").exact
    assert BINARY.exact and collation_by_name("utf8_general_ci") == collation_by_id(33)


# ---- utf8mb4_0900_ai_ci / _as_ci / _as_cs ----

UCA900 = {255: 1, 305: 2, 278: 3}


@pytest.mark.parametrize("name,value,want", [
    # mysql-test rpl_transaction_write_set_extraction (format-spec §6b): VARCHAR, NO PAD
    ("utf8mb4_0900_ai_ci", b"aaaa", "1c471c471c471c47"),
    # MySQL manual (WEIGHT_STRING of 'a' under utf8mb4_0900_as_cs): three levels, 0000 between
    ("utf8mb4_0900_as_cs", b"a", "1c470000002000000002"),
    ("utf8mb4_0900_as_ci", b"a", "1c4700000020"),
    ("utf8mb4_0900_as_cs", b"A", "1c470000002000000008"),
    ("utf8mb4_0900_ai_ci", b"a ", "1c470209"),                  # NO PAD: the space weighs
    ("utf8mb4_0900_ai_ci", "\u4e00".encode(), "fb40ce00"),      # implicit: core Han
    ("utf8mb4_0900_ai_ci", "\U00020000".encode(), "fb848000"),  # implicit: extension B
    ("utf8mb4_0900_ai_ci", "\u0378".encode(), "fbc08378"),      # implicit: unassigned
])
def test_uca900_exact_bytes(name: str, value: bytes, want: str) -> None:
    c = collation_by_name(name)
    assert c.exact and not c.pad_space
    assert field_sort_key(c, value, fixed=False, max_length=40).hex() == want


def test_uca900_ascii_short_path_is_the_general_one() -> None:
    """ASCII values take per-byte tables; a non-ASCII character anywhere takes the
    general route: both give the same weights for every ASCII character."""
    for cid in UCA900:
        c = collation_by_id(cid)
        for b in range(128):
            v = bytes([b, 0x61])
            short = field_sort_key(c, v, fixed=False, max_length=40)
            general = field_sort_key(c, v + "é".encode(), fixed=False, max_length=40)
            tail = field_sort_key(c, "aé".encode(), fixed=False, max_length=40)
            # the general route's weights of v, found by removing those of 'é'
            assert general != short
            if c.table.levels == 1:
                assert general == short + tail[2:]


def test_uca900_char_is_stripped_and_zero_filled() -> None:
    c = collation_by_id(255)
    k = field_sort_key(c, b"ab  ", fixed=True, max_length=8)                   # CHAR(2)
    assert len(k) == ((8 + 3) // 4) * 8 * 2 and k == bytes.fromhex("1c471c60") + bytes(28)
    c3 = collation_by_id(278)
    assert c3.strnxfrmlen(8) == (((8 + 3) // 4) * 8 * 3 + 2) * 2


def test_uca900_issue_examples() -> None:
    for cid in UCA900:
        assert key(cid, b"1", 10) == key(cid, "\u0661".encode(), 10)   # '1' = ARABIC-INDIC ONE
        assert key(cid, "a\u034fb".encode(), 10) == key(cid, b"ab", 10)  # U+034F ignorable
    assert key(255, b"A") == key(255, "\u00e1".encode())           # ai_ci
    assert key(305, b"A") == key(305, b"a") != key(305, "\u00e1".encode())
    assert key(278, b"A") != key(278, b"a")
    # Hangul syllables weigh as their jamo (page D7 with tertiary 3 as uca900_data.h has it)
    import unicodedata
    for syllable in ("\uac00", "\ud6ff", "\ud700", "\ud7a3"):
        jamo = unicodedata.normalize("NFD", syllable)
        assert len(jamo) in (2, 3)
        assert key(255, syllable.encode(), 3) == key(255, jamo.encode(), 3)
        assert (key(278, syllable.encode(), 3) == key(278, jamo.encode(), 3)) == \
            (syllable < "\ud700")


@pytest.mark.parametrize("cid", sorted(UCA900))
def test_uca900_pairs_over_the_bmp(cid: int) -> None:
    """Equal weights on every compared level (DUCET 9.0.0 as MySQL holds it) <=> equal keys."""
    from repltool.writeset.collation import _elements
    levels = UCA900[cid]
    by_key: dict[bytes, set[int]] = {}
    by_weight: dict[tuple, set[int]] = {}
    for cp in range(0x10000):
        by_key.setdefault(key(cid, utf8(cid, cp), 1), set()).add(cp)
        ces = _elements(cp)
        w = tuple(tuple(ce[lv] for ce in ces if ce[lv]) if ces[0][lv] else ()
                  for lv in range(levels))
        by_weight.setdefault(w, set()).add(cp)
    assert sorted(map(min, by_key.values())) == sorted(map(min, by_weight.values()))


# ---- utf8mb3/utf8mb4_unicode_520_ci ----

def test_uca520_exact_bytes() -> None:
    c = collation_by_name("utf8mb4_unicode_520_ci")
    assert c.exact and c.pad_space and c.strnxfrmlen(9) == 72       # strxfrm_multiply 8
    a, space = c.strnxfrm(b"a", 2, 1, False), c.strnxfrm(b" ", 2, 1, False)
    assert len(a) == len(space) == 2
    # VARCHAR(2): pack length 9 -> 72 bytes: 'a', the space weight for the second
    # character, then PAD_TO_MAXLEN's space weights to the end
    assert field_sort_key(c, b"a", fixed=False, max_length=8) == a + space * 35
    assert field_sort_key(c, b"a  ", fixed=False, max_length=12) == \
        field_sort_key(c, b"a", fixed=False, max_length=12)
    # the buffer cuts an expansion (U+FDFA: eight primaries) in the middle
    assert len(c.strnxfrm("\ufdfa".encode(), 5, 1, False)) == 5


@pytest.mark.parametrize("cid", [214, 246, 192, 224])
def test_uca_pairs(cid: int) -> None:
    """Equal UCA 5.2.0 / 4.0.0 primary weight strings <=> equal keys, every BMP code point
    (PAD SPACE: trailing space weights do not count, so an ignorable = a space)."""
    weights = collation_by_id(cid).table.weights
    by_key: dict[bytes, set[int]] = {}
    by_weight: dict[bytes, set[int]] = {}
    space = weights(0x20)
    for cp in range(0x10000):
        by_key.setdefault(key(cid, utf8(cid, cp), 1), set()).add(cp)
        w = weights(cp)
        while w.endswith(space):
            w = w[:-2]
        by_weight.setdefault(w, set()).add(cp)
    assert sorted(map(min, by_key.values())) == sorted(map(min, by_weight.values()))


# ---- a live server: WEIGHT_STRING and UNIQUE-key duplicates ----

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.fixtures.mariadb import Server, _binary, _short_base
    mariadbd, install_db = _binary("mariadbd"), _binary("mariadb-install-db")
    assert mariadbd and install_db, "mariadbd / mariadb-install-db not installed"
    s = Server(_short_base(Path(tmp_path_factory.mktemp("coll"))))
    s.install(install_db)
    s.start(mariadbd)
    conn = s.connect()
    try:
        yield conn.cursor()
    finally:
        conn.close()
        s.stop()


_CHARSET = {v[0]: v[0].split("_")[0] for v in data.EIGHT_BIT.values()}


@pytest.mark.parametrize("cid", EIGHT_BIT)
def test_eight_bit_weight_string_of_the_server(server: Any, cid: int) -> None:
    c = collation_by_id(cid)
    server.execute(f"SELECT HEX(WEIGHT_STRING(CONVERT(UNHEX(%s) USING {_CHARSET[c.name]}) "
                   f"COLLATE {c.name}))", (bytes(range(256)).hex(),))
    got = bytes.fromhex(server.fetchone()[0])
    assert got == (c.table if c.kind == "8bit" else bytes(range(256)))


def test_general_ci_weight_string_of_the_server(server: Any) -> None:
    for cid, cs in ((45, "utf8mb4"), (223, "utf8mb3")):
        c = collation_by_id(cid)
        cps = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
        server.execute(f"SELECT HEX(WEIGHT_STRING(CONVERT(UNHEX(%s) USING {cs}) "
                       f"COLLATE {c.name}))", ("".join(map(chr, cps)).encode().hex(),))
        w = bytes.fromhex(server.fetchone()[0])
        assert w == "".join(c.table[cp] for cp in cps).encode("utf-16-be")


def test_uca400_weight_string_of_the_server(server: Any) -> None:
    """MariaDB's utf8mb4_unicode_ci (UCA 4.0.0, MySQL's table) weighs every BMP code point
    as repltool does, and every supplementary one 0xFFFD."""
    w = collation_by_id(224).table.weights
    cps = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF] + [0x1F600, 0x20000]
    for i in range(0, len(cps), 8192):
        chunk = cps[i:i + 8192]
        server.execute("SELECT HEX(WEIGHT_STRING(CONVERT(UNHEX(%s) USING utf8mb4) COLLATE "
                       "utf8mb4_unicode_ci))", ("".join(map(chr, chunk)).encode().hex(),))
        assert bytes.fromhex(server.fetchone()[0]) == b"".join(map(w, chunk))
    assert w(0x1F600) == b"\xff\xfd"


def test_uca520_weight_string_of_the_server(server: Any) -> None:
    """MariaDB's utf8mb4_unicode_520_ci (UCA 5.2.0, as MySQL's) weighs every code point
    U+0000..U+10FFFF as repltool does."""
    from repltool.writeset.collation import _uca520_weights
    for start in range(0, 0x110000, 0x4000):
        cps = [cp for cp in range(start, start + 0x4000) if not 0xD800 <= cp <= 0xDFFF]
        server.execute("SELECT HEX(WEIGHT_STRING(CONVERT(UNHEX(%s) USING utf8mb4) COLLATE "
                       "utf8mb4_unicode_520_ci))", ("".join(map(chr, cps)).encode().hex(),))
        assert bytes.fromhex(server.fetchone()[0]) == b"".join(map(_uca520_weights, cps))


def _survivors(server: Any, table: str, values: list[bytes], cs: str) -> list[bytes]:
    """Insert ``values`` in order under a UNIQUE key, ignoring duplicates: the ones kept."""
    for i in range(0, len(values), 500):
        chunk = values[i:i + 500]
        server.execute(f"INSERT IGNORE INTO {table} (i, v) VALUES "
                       + ", ".join(f"(%s, CONVERT(UNHEX(%s) USING {cs}))" for _ in chunk),
                       [x for j, v in enumerate(chunk) for x in (i + j, v.hex())])
    server.execute(f"SELECT i FROM {table} ORDER BY i")
    return [values[r[0]] for r in server.fetchall()]


@pytest.mark.parametrize("name,cs,values", [
    ("latin1_swedish_ci", "latin1", [bytes([b]) for b in range(256)]),
    ("latin1_general_cs", "latin1", [bytes([b]) for b in range(256)]),
    ("cp1251_general_ci", "cp1251", [bytes([b]) for b in range(256)]),
    ("latin1_bin", "latin1", [bytes([b]) for b in range(256)] + [b"a ", b"a  "]),
    ("utf8mb4_general_ci", "utf8mb4",
     [chr(cp).encode() for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
     + ["😀".encode(), "😁".encode(), "ᾀ".encode(), "α".encode(), b"ab ", b"ab"]),
    ("utf8mb3_general_mysql500_ci", "utf8mb3", [chr(cp).encode() for cp in range(0x2000)]),
    ("utf8mb4_bin", "utf8mb4", [b"a", b"A", b"a ", "é".encode(), "😀".encode(), "😁".encode()]),
    ("utf8mb4_unicode_ci", "utf8mb4",
     [chr(cp).encode() for cp in range(0x3000) if not 0xD800 <= cp <= 0xDFFF]
     + ["😀".encode(), "😁".encode(), b"ss", "ß".encode(), b"a\xcd\x8fb", b"ab"]),
    ("utf8mb4_unicode_520_ci", "utf8mb4",
     [chr(cp).encode() for cp in range(0x3000) if not 0xD800 <= cp <= 0xDFFF]
     + ["😀".encode(), "😁".encode(), "\U00020000".encode(), b"ss", "ß".encode()]),
])
def test_unique_key_duplicates_of_the_server(server: Any, name: str, cs: str,
                                             values: list[bytes]) -> None:
    """Two values collide under the server's UNIQUE key <=> equal sort keys (and hashes)."""
    table = f"ws_{name}"
    server.execute("CREATE DATABASE IF NOT EXISTS coll")
    server.execute("USE coll")
    server.execute(f"CREATE TABLE {table} (i INT NOT NULL PRIMARY KEY, v VARCHAR(4) "
                   f"CHARACTER SET {cs} COLLATE {name} NOT NULL, UNIQUE KEY (v))")
    kept = _survivors(server, table, values, cs)
    c = collation_by_name(name)
    seen: set[int] = set()
    predicted = []
    for v in values:
        h = xxhash.xxh64_intdigest(field_sort_key(c, v, fixed=False, max_length=4 * c.mbmaxlen))
        if h not in seen:
            seen.add(h)
            predicted.append(v)
    assert kept == predicted


def test_log_without_charsets_end_to_end(server: Any, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A MariaDB log written with binlog_row_metadata=NO_LOG (MariaDB's default: no
    charsets) and a schema without collations: the string key has an unknown collation
    (missing keys) until --default-collation names it; then 'CAFÉ' and 'café' - which
    the server's UNIQUE key holds equal - share a hash, 'cafe' too, 'caff' not."""
    from repltool.cli import run
    server.execute("SET GLOBAL binlog_row_metadata = 'NO_LOG'")
    server.execute("CREATE DATABASE IF NOT EXISTS e2e")
    server.execute("CREATE TABLE e2e.t (k VARCHAR(10) CHARACTER SET latin1 COLLATE "
                   "latin1_swedish_ci NOT NULL PRIMARY KEY, v INT) ENGINE=InnoDB")
    server.execute("FLUSH BINARY LOGS")
    for k in (b"CAF\xc9", b"caf\xe9", b"cafe", b"caff"):
        server.execute("INSERT INTO e2e.t VALUES (CONVERT(UNHEX(%s) USING latin1), 1)", (k.hex(),))
        if k != b"caff":        # the server holds 'café' equal to the three others
            with pytest.raises(Exception, match="Duplicate"):
                server.execute("INSERT INTO e2e.t VALUES (CONVERT(UNHEX('636166e9') USING "
                               "latin1), 2)")
        server.execute("DELETE FROM e2e.t")
    server.execute("SHOW BINARY LOGS")
    names = [r[0] for r in server.fetchall()]
    server.execute("SELECT @@log_bin_basename")
    base = Path(server.fetchone()[0]).parent
    server.execute("FLUSH BINARY LOGS")
    log = base / names[-1]
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE e2e.t (k VARCHAR(10) NOT NULL PRIMARY KEY, v INT);")

    def hashes(*extra: str) -> tuple[list[int], list[str], str]:
        code = run(["dump", "--writesets", "--schema", str(schema), *extra, str(log)])
        out, err = capsys.readouterr()
        assert code == 0, err
        recs = [json.loads(x) for x in out.splitlines()]
        return ([k["hash"] for r in recs for k in r["keys"]],
                [t for r in recs for t in r["flags"]["missing_key_tables"]], err)

    got, missing, err = hashes()
    assert got == [] and set(missing) == {"e2e.t"} and "--default-collation" in err
    got, missing, _ = hashes("--default-collation", "latin1_swedish_ci")
    # INSERT and DELETE of each value, each with the entry sized by the key-part length
    # (10) and the VARCHAR's "old format" entry sized by the pack length (11)
    assert missing == [] and len(got) == 16
    new, old = got[0::2], got[1::2]
    assert new[0] == new[1] == new[2] == new[3] == new[4] == new[5] != new[6] == new[7]
    assert old[0] == old[1] == old[2] == old[3] == old[4] == old[5] != old[6] == old[7]
    assert new[0] == xxhash.xxh64_intdigest(b"PRIMARY\xc2\xbde2e\xc2\xbd3t\xc2\xbd1CAFE"
                                            + b" " * 6 + b"\xc2\xbd10")
    assert old[0] == xxhash.xxh64_intdigest(b"PRIMARY\xc2\xbde2e\xc2\xbd3t\xc2\xbd1CAFE"
                                            + b" " * 7 + b"\xc2\xbd11")
