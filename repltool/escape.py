"""Quoting and escaping of text taken from log files, for every kind of output.

Everything a log file (or a file name) supplies - database, table and column
names, GTID tags, Rotate file names, server versions, query text, user
variable names - is data: it must never become SQL, terminal control
sequences, extra lines of a line-oriented report or XML markup.  Pure
functions, no third-party imports; the renderers call them.

* :func:`sql_identifier`, :func:`sql_string`: SQL for ``dump`` (MySQL's rules,
  see below);
* :func:`printable` (one line) and :func:`printable_lines` (keeps line feeds
  and tabs): human text, control characters shown as visible escapes;
* :func:`has_controls`: whether :func:`printable_lines` would change a text;
* :func:`gh_data`, :func:`gh_property`: GitHub workflow-command escaping;
* :func:`xml_text`: text that is legal in an XML 1.0 document;
* :func:`json_safe`: JSON text written with ``ensure_ascii=False`` made
  terminal-safe (C1 controls, bidi controls, lone surrogates as ``\\uXXXX``).
"""

from __future__ import annotations

import re

__all__ = ["sql_identifier", "sql_string", "printable", "printable_lines", "has_controls",
           "gh_data", "gh_property", "xml_text", "json_safe", "BIDI_CONTROLS"]

#: Unicode bidirectional formatting characters (embeddings, overrides,
#: isolates, marks): they reorder what a terminal or a browser shows.
BIDI_CONTROLS = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                           *range(0x2066, 0x206A)])


def sql_identifier(name: str) -> str:
    """A quoted identifier as MySQL writes one: in backticks, a backtick doubled.

    The rule of ``my_strmov_quoted_identifier`` (``sql/log_event.cc``), used by
    mysqlbinlog for ``use `db``` and ``### INSERT INTO `db`.`t```.  Inside
    backticks every other character (NUL excepted, which no identifier holds)
    stands for itself::

        >>> sql_identifier("a`; DROP DATABASE prod; -- ")
        '`a``; DROP DATABASE prod; -- `'
    """
    return "`" + name.replace("`", "``") + "`"


_SQL_STRING = {0: "\\0", 8: "\\b", 9: "\\t", 10: "\\n", 13: "\\r", 26: "\\Z",
               ord("\\"): "\\\\", ord("'"): "\\'"}


def sql_string(text: str) -> str:
    """A single-quoted SQL string literal, escaped as MySQL escapes one.

    NUL, backspace, tab, line feed, carriage return, Ctrl-Z, backslash and the
    quote are written as ``\\0 \\b \\t \\n \\r \\Z \\\\ \\'`` (mysqlbinlog's
    ``pretty_print_str``; MySQL's ``escape_string_for_mysql`` adds ``\\Z``);
    the literal is one line and means the same text under the default
    SQL mode (not NO_BACKSLASH_ESCAPES)::

        >>> sql_string("x'; drop database shop; --")
        "'x\\\\'; drop database shop; --'"
    """
    return "'" + text.translate(_SQL_STRING) + "'"


def _visible(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}"


def _table(keep: str) -> dict[int, str]:
    table = {cp: _visible(cp) for cp in (*range(0x20), *range(0x7F, 0xA0), *BIDI_CONTROLS,
                                         0x2028, 0x2029)}
    for c in keep:
        del table[ord(c)]
    return table


_ONE_LINE = _table("")
_LINES = _table("\n\t")
_SURROGATE = re.compile("[\ud800-\udfff]")
_RISKY = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                    "\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def _surrogates(text: str) -> str:
    # os.fsdecode / surrogateescape turn an undecodable byte 0xNN into U+DCNN.
    return _SURROGATE.sub(lambda m: (f"\\x{ord(m.group()) - 0xDC00:02x}"
                                     if 0xDC80 <= ord(m.group()) <= 0xDCFF
                                     else f"\\u{ord(m.group()):04x}"), text)


def printable(text: str) -> str:
    """``text`` on one line with every control character visible.

    C0 controls (line feed, tab and ESC included), DEL, C1 controls, the bidi
    formatting characters and the Unicode line/paragraph separators become
    ``\\xNN`` / ``\\uNNNN``; a lone surrogate from ``surrogateescape`` (an
    undecodable byte of a file name) becomes ``\\xNN`` of that byte.  Safe to
    print on a terminal and to put in any one-line format::

        >>> printable("a\\x1b[31mb\\nc\\u202e")
        'a\\\\x1b[31mb\\\\x0ac\\\\u202e'
    """
    if text.isprintable():          # no control, separator or surrogate: the common case
        return text
    out = text.translate(_ONE_LINE)
    return _surrogates(out) if _SURROGATE.search(out) else out


def printable_lines(text: str) -> str:
    """Like :func:`printable`, but line feeds and tabs are kept (multi-line human text)."""
    if text.isprintable():
        return text
    out = text.translate(_LINES)
    return _surrogates(out) if _SURROGATE.search(out) else out


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a character :func:`printable_lines` would escape."""
    return _RISKY.search(text) is not None


def gh_data(text: str) -> str:
    """The message of a GitHub workflow command (``::error ...::MESSAGE``).

    The runner decodes ``%25``, ``%0D`` and ``%0A``; the text is made
    :func:`printable` first (GitHub's log viewer interprets ANSI sequences).
    """
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: str) -> str:
    """A property value of a workflow command (``file=...,title=...``): also ``:`` and ``,``."""
    return gh_data(text).replace(":", "%3A").replace(",", "%2C")


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
                          "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids (and the discouraged controls,
    and bidi controls) as a visible ``\\xNN`` / ``\\uNNNN``; tab, line feed and
    carriage return stay.  The XML serializer still escapes ``& < > "``."""
    def sub(m: re.Match[str]) -> str:
        cp = ord(m.group())
        if 0xDC80 <= cp <= 0xDCFF:
            return f"\\x{cp - 0xDC00:02x}"
        return _visible(cp)
    return _XML_ILLEGAL.sub(sub, text)


_JSON_RISKY = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                         "\u2028\u2029\ud800-\udfff]")


def json_safe(encoded: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` with the characters a
    terminal would act on written as ``\\uXXXX`` escapes (the same JSON value).

    ``json.dumps`` already escapes C0 controls; this adds DEL, C1 controls, bidi
    controls, U+2028/U+2029 and lone surrogates (which could not be written
    as UTF-8 at all).
    """
    # (every risky character but DEL is above U+007F: ASCII text - known in O(1) -
    # without a DEL has none)
    if (encoded.isascii() and "\x7f" not in encoded) or encoded.isprintable() \
            or _JSON_RISKY.search(encoded) is None:
        return encoded
    return _JSON_RISKY.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
