"""One path or many: what every library function that reads logs accepts."""

from __future__ import annotations

import os
from typing import Iterable, Union

#: A log path, or an iterable of them read as one ordered sequence.
Paths = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]


def path_list(paths: Paths) -> list[str]:
    """``paths`` as a list of strings: a single ``str`` or path-like is one path (not
    an iterable of characters)."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    if isinstance(paths, (bytes, bytearray)):
        raise TypeError("paths must be str or os.PathLike, not bytes")
    return [os.fspath(p) for p in paths]


INDEX_SUFFIX = ".index"


def is_index_file(path: str) -> bool:
    """A server's log index (``mysql-bin.index``, ``relay-bin.index``): a text file
    named ``*.index`` (not a log: no binlog magic)."""
    if not path.endswith(INDEX_SUFFIX) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(4) not in (b"\xfebin", b"\xfdbin")
    except OSError:
        return False


def read_index(path: str) -> list[str]:
    """The logs a server's index file lists, in its order.

    The server writes one name per line, relative to its data directory (where the
    index file lives: ``./mysql-bin.000001``) or absolute (``--log-bin=/logs/x``).
    A relative name is resolved against the index file's directory; an absolute
    name that does not exist but whose file is beside the index (a copied data
    directory) is taken from there.  Blank lines are skipped.
    """
    base = os.path.dirname(path) or "."
    out: list[str] = []
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            name = line.rstrip("\r\n")
            if not name.strip():
                continue
            if os.path.isabs(name):
                beside = os.path.join(base, os.path.basename(name))
                out.append(name if os.path.exists(name) or not os.path.exists(beside)
                           else beside)
            else:
                out.append(os.path.normpath(os.path.join(base, name)))
    return out
