#!/usr/bin/env python3
"""Generate ``repltool/writeset/_collation_data.py``: the collation weight tables.

Sources (nothing is typed in by hand):

* the 8-bit collations: the ``<map>`` sort orders of the charset XML files
  that MySQL ships in ``share/charsets`` (``--charsets``; Debian's
  ``mariadb-server-core`` installs the same files as
  ``/usr/share/mysql/charsets``).  MySQL compiles them into
  ``strings/ctype-extra.cc`` (``conf_to_src``); ``latin1_swedish_ci``'s
  compiled ``sort_order_latin1`` (``strings/ctype-latin1.cc``) is the same
  table (``tests/writeset/test_collation_tables.py`` holds it to MySQL's).
  A collation with a ``<map>`` uses ``my_strnxfrm_simple``; one flagged
  ``binary`` ``my_strnxfrm_8bit_bin_pad_space``; the others (``latin1_german2_ci``,
  ``latin2_czech_cs``, ``cp1250_czech_cs`` ...) have their own code in MySQL
  and are left out (their key columns become "missing keys").
* ``utf8mb3/utf8mb4_general_ci`` and ``utf8mb3_general_mysql500_ci``: the
  ``sort`` field of MySQL's unicase planes (``my_unicase_default`` /
  ``my_unicase_mysql500``, ``strings/ctype-utf8.cc``) for every BMP code point,
  read from a server as ``WEIGHT_STRING(CHAR(cp) COLLATE ...)`` (MariaDB keeps
  MySQL's tables for these collations; the test above holds plane 00 to
  MySQL's source).  ``--socket`` names a running server's Unix socket; without
  it a throw-away ``mariadbd`` is started (``tests/fixtures/mariadb.py``).

* ``utf8mb4_0900_ai_ci`` / ``_as_ci`` / ``_as_cs``: DUCET 9.0.0, Unicode's
  ``allkeys-9.0.0.txt`` (``--allkeys900``; e.g. from the ``pyuca`` wheel on
  PyPI, which ships it), turned into MySQL's ``uca900_data.h`` as MySQL's
  generator does: every single-code-point entry with its collation elements cut
  to eight (U+FDFA has 18); contractions are not used (``my_uca_v900`` has
  none).  Code points DUCET does not list get their weights at run time
  (``uca_scanner_900::next_implicit``; Hangul syllables in page D7, which
  ``uca900_data.h`` holds decomposed with tertiary weight 3, too).
  ``--verify-uca900 FILE`` compares the result with a serialisation of
  MySQL's ``uca900_data.h`` pages (PolarDB-X's ``uca900.yml``: 149 pages of
  ``[number of CEs x 256, then per CE and level 256 weights]``) and fails on
  any difference.

* ``utf8mb3/utf8mb4_unicode_520_ci``: UCA 5.2.0, Unicode's ``allkeys-5.2.0.txt``
  (``--allkeys520``, in the same wheel) as MySQL's ``uca520`` pages hold it:
  per single code point the non-zero primary weights, at most eight; code
  points it does not list get ``uca_scanner_any::next_implicit``'s two weights
  at run time (the pages hold the same).  ``--verify-uca520 DIR`` compares
  with PolarDB-X's ``uca520.yml`` / ``uca520_length.yml``.

* ``utf8mb3/utf8mb4_unicode_ci``: UCA 4.0.0 as MySQL's ``uca_weight`` pages hold it
  (primary weights only), read from the server as ``WEIGHT_STRING`` of every
  BMP code point under ``utf8mb4_unicode_ci`` (MariaDB keeps MySQL's table;
  Unicode's allkeys-4.0.0 is not at hand); only code points whose weights are
  not ``next_implicit``'s are kept.  ``--verify-uca400 FILE`` compares with
  PolarDB-X's ``uca.yml`` (MySQL's 59 pages).

Usage::

    python scripts/gen_collations.py [--charsets /usr/share/mysql/charsets] [--socket S]
        --allkeys900 allkeys-9.0.0.txt [--verify-uca900 uca900.yml]
        --allkeys520 allkeys-5.2.0.txt [--verify-uca520 DIR] [--verify-uca400 uca.yml]

The output lists, per collation id, the name, the implementation and (8-bit)
the 256-byte sort order, and the BMP code points whose general_ci weight is
not the code point itself.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "repltool" / "writeset" / "_collation_data.py"
OUT900 = ROOT / "repltool" / "writeset" / "_uca900_data.py"
OUT520 = ROOT / "repltool" / "writeset" / "_uca520_data.py"
OUT400 = ROOT / "repltool" / "writeset" / "_uca400_data.py"

#: MySQL 8.0's compiled Unicode collations this generator covers: id -> name.
UNICASE = {33: "utf8mb3_general_ci", 45: "utf8mb4_general_ci",
           223: "utf8mb3_general_mysql500_ci"}


def read_xml_collations(charsets: Path) -> dict[int, tuple[str, str, bytes | None]]:
    """id -> (name, kind, sort order) for the 8-bit collations of ``charsets``.

    ``kind``: ``"8bit"`` (``<map>``: my_strnxfrm_simple) or ``"8bit_bin"``
    (``flag="binary"``).  Ids come from ``Index.xml``; MariaDB-only ids
    (>= 256: its NO PAD variants) are not MySQL collations and are skipped.
    """
    index = (charsets / "Index.xml").read_text(encoding="utf-8")
    ids: dict[str, int] = {}
    for m in re.finditer(r'<collation\s+name="([A-Za-z0-9_]+)"\s+id="(\d+)"', index):
        ids[m.group(1)] = int(m.group(2))
    out: dict[int, tuple[str, str, bytes | None]] = {}
    for xml in sorted(charsets.glob("*.xml")):
        if xml.name == "Index.xml":
            continue
        text = xml.read_text(encoding="latin-1")
        for m in re.finditer(r'<collation\s+name="([A-Za-z0-9_]+)"([^>]*?)(/?)>', text):
            name, attrs, empty = m.group(1), m.group(2), m.group(3)
            cid = ids.get(name)
            if cid is None or cid >= 256:
                continue
            if 'flag="binary"' in attrs:
                out[cid] = (name, "8bit_bin", None)
                continue
            if empty:
                continue            # compiled special collation (german2, czech ...)
            body = text[m.end():text.index("</collation>", m.end())]
            mm = re.search(r"<map>(.*?)</map>", body, re.S)
            if mm is None:
                continue            # <rules>: a UCA tailoring, not an 8-bit table
            table = bytes(int(x, 16) for x in mm.group(1).split())
            if len(table) != 256:
                raise SystemExit(f"{xml}: {name}: sort order has {len(table)} entries")
            out[cid] = (name, "8bit", table)
    return out


def read_unicase(cursor, collation: str, charset: str) -> dict[int, int]:
    """BMP code point -> weight where they differ, from WEIGHT_STRING (2 bytes a char)."""
    diffs: dict[int, int] = {}
    step = 4096
    for start in range(0, 0x10000, step):
        cps = [cp for cp in range(start, start + step) if not 0xD800 <= cp <= 0xDFFF]
        text = "".join(map(chr, cps)).encode("utf-8")
        cursor.execute(f"SELECT HEX(WEIGHT_STRING(CONVERT(UNHEX(%s) USING {charset}) "
                       f"COLLATE {collation}))", (text.hex(),))
        w = bytes.fromhex(cursor.fetchone()[0])
        if len(w) != 2 * len(cps):
            raise SystemExit(f"{collation}: {len(w)} weight bytes for {len(cps)} characters")
        for i, cp in enumerate(cps):
            v = (w[2 * i] << 8) | w[2 * i + 1]
            if v != cp:
                diffs[cp] = v
    return diffs


def read_allkeys(path: Path, cut: int | None = 8) -> dict[int, list[tuple[int, int, int]]]:
    """Single code point -> its collation elements (primary, secondary, tertiary), cut
    to ``cut`` as MySQL stores them; contractions (several code points) are skipped."""
    out: dict[int, list[tuple[int, int, int]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("@"):
            continue
        cps, ces = line.split(";")
        cp = cps.split()
        if len(cp) != 1:
            continue
        elems = [tuple(int(w, 16) for w in m.split("."))
                 for m in re.findall(r"\[[.*]([0-9A-F.]+)\]", ces)]
        out[int(cp[0], 16)] = [e[:3] for e in elems][:cut]     # type: ignore[misc]
    return out


def verify_uca900(path: Path, ducet: dict[int, list[tuple[int, int, int]]]) -> int:
    """Compare every code point of MySQL's uca900 pages with DUCET + the run-time rule for
    the code points DUCET does not list (:func:`repltool.writeset.collation.uca900_implicit`:
    the table holds the same, Hangul syllables in page D7 with tertiary weight 3)."""
    sys.path.insert(0, str(ROOT))
    from repltool.writeset.collation import uca900_implicit
    text = path.read_text(encoding="utf-8")
    arrays = [list(map(int, re.findall(r"\d+", c)))
              for c in re.split(r"^- ", text, flags=re.M)[1:]]
    pages = [p for r in ("000-033 04D 0A0-0AB 0D7 0F9-10C 10E 110-118 11A 11C 120-125 "
                         "130-134 144-146 168-16B 16F 1B0 1BC 1D0-1DA 1E0 1E8 1E9 1EE "
                         "1F0-1F9 2F8-2FA E00 E01").split()
             for p in (range(int(r[:3], 16), int(r[4:], 16) + 1) if "-" in r
                       else [int(r, 16)])]
    if len(pages) != len(arrays):
        raise SystemExit(f"{path}: {len(arrays)} pages, expected {len(pages)}")
    n = 0
    for page, arr in zip(pages, arrays):
        for sub in range(256):
            cp = page << 8 | sub
            ces = [(arr[256 + i * 768 + sub], arr[512 + i * 768 + sub],
                    arr[768 + i * 768 + sub]) for i in range(arr[sub])]
            want = ducet.get(cp) or list(uca900_implicit(cp, lambda j: ducet[j][0]))
            if ces != want:
                raise SystemExit(f"U+{cp:04X}: MySQL {ces}, derived {want}")
            n += 1
    return n


def write_uca900(ducet: dict[int, list[tuple[int, int, int]]], source: Path, out: Path) -> None:
    """Big-endian arrays, zlib-compressed, base64 in a module constant: the number of
    code points n (u32), the n code points (u32), their numbers of collation elements
    (n x u8), then every element's primary, secondary, tertiary weights (u16 each)."""
    import base64
    import struct
    import zlib
    cps = sorted(ducet)
    blob = bytearray(struct.pack(">I", len(cps)))
    blob += struct.pack(f">{len(cps)}I", *cps)
    blob += bytes(len(ducet[cp]) for cp in cps)
    weights = [w for cp in cps for ce in ducet[cp] for w in ce]
    blob += struct.pack(f">{len(weights)}H", *weights)
    packed = base64.b64encode(zlib.compress(bytes(blob), 9)).decode("ascii")
    lines = ['"""DUCET 9.0.0 as MySQL\'s uca900_data.h holds it (generated by '
             'scripts/gen_collations.py: do not edit).', "",
             f"Source: {source.name} (Unicode's allkeys, UCA 9.0.0); {len(ducet)} code points.",
             '"""', "", "#: zlib + base64 of big-endian n (u32), n code points (u32), n element",
             "#: counts (u8), then (primary, secondary, tertiary) u16 weights of every element",
             "DUCET = ("]
    for i in range(0, len(packed), 96):
        lines.append(f"    {packed[i:i + 96]!r}")
    lines.append(")")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def verify_uca520(directory: Path, ducet: dict[int, list[tuple[int, int, int]]]) -> int:
    """Compare MySQL's uca520 pages (PolarDB-X's uca520.yml, 0-terminated primary weights,
    uca520_length.yml: weights a code point per page, 0 = no page) with allkeys-5.2.0."""
    sys.path.insert(0, str(ROOT))
    from repltool.writeset.collation import uca_implicit
    lengths = list(map(int, re.findall(r"\d+", (directory / "uca520_length.yml").read_text())))
    arrays = [list(map(int, re.findall(r"\d+", m)))
              for m in re.findall(r"\[([^\[\]]*)\]", (directory / "uca520.yml").read_text())]
    pages = [i for i, n in enumerate(lengths) if n]
    if len(pages) != len(arrays):
        raise SystemExit(f"{directory}: {len(arrays)} pages, expected {len(pages)}")
    n = 0
    for page, arr in zip(pages, arrays):
        width = lengths[page]
        for sub in range(256):
            cp = page << 8 | sub
            w = arr[sub * width:(sub + 1) * width]
            got = w[:w.index(0)] if 0 in w else w
            want = primaries(ducet[cp]) if cp in ducet else list(uca_implicit(cp))
            if got != want:
                raise SystemExit(f"U+{cp:04X}: MySQL {got}, derived {want}")
            n += 1
    return n


def primaries(ces: list[tuple[int, int, int]]) -> list[int]:
    """The weights MySQL's pre-9.0 UCA tables keep: non-zero primaries, at most eight."""
    return [p for p, _, _ in ces if p][:8]


def read_uca400(cursor) -> dict[int, list[int]]:  # type: ignore[no-untyped-def]
    """BMP code point -> its utf8mb4_unicode_ci weights, where they are not implicit."""
    sys.path.insert(0, str(ROOT))
    from repltool.writeset.collation import uca_implicit
    cps = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    out: dict[int, list[int]] = {}
    for i in range(0, len(cps), 1000):
        chunk = cps[i:i + 1000]
        cursor.execute("SELECT " + ", ".join(
            "HEX(WEIGHT_STRING(CONVERT(UNHEX(%s) USING utf8mb4) COLLATE utf8mb4_unicode_ci))"
            for _ in chunk), [chr(cp).encode().hex() for cp in chunk])
        for cp, h in zip(chunk, cursor.fetchone()):
            w = bytes.fromhex(h or "")
            weights = [int.from_bytes(w[k:k + 2], "big") for k in range(0, len(w), 2)]
            if weights != list(uca_implicit(cp)):
                out[cp] = weights
    return out


def verify_uca400(path: Path, table: dict[int, list[int]]) -> int:
    """Compare MySQL's UCA 4.0.0 pages (PolarDB-X's uca.yml) with ``table``."""
    from repltool.writeset.collation import uca_implicit
    arrays = [list(map(int, re.findall(r"\d+", c)))
              for c in re.split(r"^- ", path.read_text(), flags=re.M)[1:]]
    pages = [p for r in "000-007 009-019 01D-02B 02E-033 04D 0A0-0A4 0F9-0FF".split()
             for p in (range(int(r[:3], 16), int(r[4:], 16) + 1) if "-" in r else [int(r, 16)])]
    if len(pages) != len(arrays):
        raise SystemExit(f"{path}: {len(arrays)} pages, expected {len(pages)}")
    by_page = dict(zip(pages, arrays))
    n = 0
    for cp in range(0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        arr = by_page.get(cp >> 8)
        if arr is None:
            want = list(uca_implicit(cp))
        else:
            width = len(arr) // 256
            w = arr[(cp & 0xFF) * width:(cp & 0xFF) * width + width]
            want = w[:w.index(0)] if 0 in w else w
        if table.get(cp, list(uca_implicit(cp))) != want:
            raise SystemExit(f"U+{cp:04X}: MySQL {want}, server {table.get(cp)}")
        n += 1
    return n


def write_uca520(ducet: dict[int, list[tuple[int, int, int]]], source: Path, out: Path,
                 name: str = "UCA520", title: str = "UCA 5.2.0 primary weights as MySQL's "
                 "uca520 pages hold them", weights_of: dict[int, list[int]] | None = None
                 ) -> None:
    """As :func:`write_uca900`, with one u16 primary weight an element."""
    import base64
    import struct
    import zlib
    cps = sorted(weights_of if weights_of is not None else ducet)
    weights = [weights_of[cp] for cp in cps] if weights_of is not None else \
        [primaries(ducet[cp]) for cp in cps]
    blob = bytearray(struct.pack(">I", len(cps)))
    blob += struct.pack(f">{len(cps)}I", *cps)
    blob += bytes(len(w) for w in weights)
    flat = [x for w in weights for x in w]
    blob += struct.pack(f">{len(flat)}H", *flat)
    packed = base64.b64encode(zlib.compress(bytes(blob), 9)).decode("ascii")
    lines = [f'"""{title} (generated by scripts/gen_collations.py: do not edit).', "",
             f"Source: {source}; {len(cps)} code points.",
             '"""', "", "#: zlib + base64 of big-endian n (u32), n code points (u32), n weight",
             "#: counts (u8), then the u16 primary weights", f"{name} = ("]
    for i in range(0, len(packed), 96):
        lines.append(f"    {packed[i:i + 96]!r}")
    lines.append(")")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _connect(socket: str | None, tmp: Path):
    import pymysql
    server = None
    if socket is None:
        sys.path.insert(0, str(ROOT))
        from tests.fixtures.mariadb import Server, _binary
        server = Server(tmp)
        server.install(_binary("mariadb-install-db"))
        server.start(_binary("mariadbd"))
        socket = str(server.socket)
    conn = pymysql.connect(unix_socket=socket, user="root", password="", charset="utf8mb4",
                           autocommit=True)
    return conn, server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--charsets", type=Path, default=Path("/usr/share/mysql/charsets"))
    ap.add_argument("--socket", help="Unix socket of a running MariaDB/MySQL server")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--allkeys900", type=Path, required=True,
                    help="Unicode's allkeys-9.0.0.txt (DUCET 9.0.0)")
    ap.add_argument("--verify-uca900", type=Path,
                    help="MySQL's uca900_data.h pages as YAML (PolarDB-X uca900.yml)")
    ap.add_argument("--out900", type=Path, default=OUT900)
    ap.add_argument("--allkeys520", type=Path, required=True,
                    help="Unicode's allkeys-5.2.0.txt (UCA 5.2.0)")
    ap.add_argument("--verify-uca520", type=Path, metavar="DIR",
                    help="directory with MySQL's uca520 pages as YAML (PolarDB-X uca520.yml "
                         "and uca520_length.yml)")
    ap.add_argument("--out520", type=Path, default=OUT520)
    ap.add_argument("--verify-uca400", type=Path,
                    help="MySQL's UCA 4.0.0 pages as YAML (PolarDB-X uca.yml)")
    ap.add_argument("--out400", type=Path, default=OUT400)
    args = ap.parse_args(argv)

    ducet = read_allkeys(args.allkeys900)
    if args.verify_uca900 is not None:
        n = verify_uca900(args.verify_uca900, ducet)
        print(f"{args.verify_uca900}: all {n} code points of MySQL's uca900 pages equal "
              "DUCET 9.0.0 + MySQL's rules")
    write_uca900(ducet, args.allkeys900, args.out900)
    ducet520 = read_allkeys(args.allkeys520, cut=None)
    if args.verify_uca520 is not None:
        n = verify_uca520(args.verify_uca520, ducet520)
        print(f"{args.verify_uca520}: all {n} code points of MySQL's uca520 pages equal "
              "UCA 5.2.0 + MySQL's rules")
    write_uca520(ducet520, Path(f"{args.allkeys520.name} (Unicode's allkeys, UCA 5.2.0)"),
                 args.out520)

    eight = read_xml_collations(args.charsets)
    with tempfile.TemporaryDirectory(prefix="rt-gen-") as tmp:
        conn, server = _connect(args.socket, Path(tmp))
        try:
            cur = conn.cursor()
            cur.execute("SELECT VERSION()")
            version = cur.fetchone()[0]
            general = read_unicase(cur, "utf8mb4_general_ci", "utf8mb4")
            uca400 = read_uca400(cur)
            mysql500 = read_unicase(cur, "utf8mb3_general_mysql500_ci", "utf8mb3")
            conn.close()
        finally:
            if server is not None:
                server.stop()

    if args.verify_uca400 is not None:
        n = verify_uca400(args.verify_uca400, uca400)
        print(f"{args.verify_uca400}: all {n} BMP code points of MySQL's UCA 4.0.0 pages equal "
              "the server's utf8mb4_unicode_ci weights")
    write_uca520({}, Path(f"WEIGHT_STRING(... COLLATE utf8mb4_unicode_ci) of a {version} server"),
                 args.out400, name="UCA400", title="UCA 4.0.0 weights as MySQL's uca_weight "
                 "pages hold them, where not implicit", weights_of=uca400)

    lines = ['"""Collation weight tables (generated by scripts/gen_collations.py: do not edit).',
             "",
             f"8-bit sort orders: {args.charsets} (MySQL share/charsets XML).",
             f"Unicase sort weights: WEIGHT_STRING of a {version} server.",
             '"""', "", "# id: (name, kind, sort order as hex or '')", "EIGHT_BIT = {"]
    for cid in sorted(eight):
        name, kind, table = eight[cid]
        lines.append(f"    {cid}: ({name!r}, {kind!r},")
        hexed = table.hex() if table else ""
        for i in range(0, len(hexed), 64):
            lines.append(f"        {hexed[i:i + 64]!r}")
        if not hexed:
            lines.append("        ''")
        lines[-1] += "),"
    lines.append("}")
    lines.append("")
    lines.append("#: utf8mb3/utf8mb4_general_ci: 'cccc:wwww' for every BMP code point whose "
                 "weight is not itself")
    lines.append("GENERAL_CI = (")
    items = [f"{cp:04x}:{w:04x}" for cp, w in sorted(general.items())]
    for i in range(0, len(items), 7):
        lines.append(f"    {' '.join(items[i:i + 7]) + ' '!r}")
    lines.append(")")
    extra = {cp: w for cp, w in mysql500.items() if general.get(cp) != w}
    extra.update({cp: cp for cp in general if cp not in mysql500})
    lines.append("#: utf8mb3_general_mysql500_ci: where its weight differs from GENERAL_CI's")
    lines.append(f"MYSQL500 = {' '.join(f'{cp:04x}:{w:04x}' for cp, w in sorted(extra.items()))!r}")
    lines.append("")
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print(f"{args.out}: {len(eight)} 8-bit collations, {len(general)} general_ci weights, "
          f"{len(extra)} mysql500 differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
