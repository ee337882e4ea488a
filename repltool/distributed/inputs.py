"""Input names: local files, directories, globs and Hadoop URIs, in natural order."""

from __future__ import annotations

import glob
import os
import re
from typing import Any, Iterable, Sequence

from .. import errors
from ..errors import UsageError

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")    # hdfs://nn/x, and Hadoop's file:/x
_GLOB = re.compile(r"[*?\[]")
_SKIP_SUFFIXES = (".index", ".info", ".tmp", ".pid", ".err", ".cnf")


#: Binlog and relay-log names: ``BASENAME.NNNNNN`` (six digits or more), as the
#: server numbers them (``binlog.000001``, ``host-relay-bin.000012``).
_LOG_NAME = re.compile(r"^[^.].*\.\d{6,}$")


def is_log_name(name: str) -> bool:
    """Whether the base name of ``name`` is a binlog or relay-log name.

    >>> [is_log_name(n) for n in ("d/binlog.000001", "relay-bin.1000000", "MANIFEST.json",
    ...                           "binlog.index", ".binlog.000001")]
    [True, True, False, False, False]
    """
    return bool(_LOG_NAME.match(name.rstrip("/").rsplit("/", 1)[-1]))


def index_entries(index: str, text: str) -> list[str]:
    r"""The files an index file (``binlog.index``, ``relay-bin.index``) lists, in its order.

    Relative entries (MySQL writes ``./binlog.000001``) are taken from the
    index file's directory.

    >>> index_entries("/var/lib/mysql/binlog.index", "./binlog.000001\n/x/binlog.000002\n\n")
    ['/var/lib/mysql/binlog.000001', '/x/binlog.000002']
    """
    base = index.rsplit("/", 1)[0] if "/" in index else "."
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("/") or is_uri(line):
            out.append(line if not is_uri(index) or is_uri(line) else
                       index.split(":", 1)[0] + ":" + line)
        else:
            out.append(f"{base}/{line[2:] if line.startswith('./') else line}")
    return out


def is_uri(name: str) -> bool:
    """Whether ``name`` is a Hadoop-style URI (``hdfs://``, ``s3a://``, ``file://``)."""
    return bool(_URI.match(name))


def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that puts ``binlog.999999`` before ``binlog.1000000``.

    >>> sorted(["b.1000000", "b.999999", "b.000010"], key=natural_key)
    ['b.000010', 'b.999999', 'b.1000000']
    """
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"(\d+)", name))


def _dir_files(names: Iterable[str]) -> list[str]:
    return sorted((n for n in names
                   if not os.path.basename(n).startswith(".") and not n.endswith(_SKIP_SUFFIXES)),
                  key=natural_key)


def _is_log(path: str) -> bool:
    from ..errors import ReplToolError
    from ..outputs import open_regular
    try:
        with os.fdopen(open_regular(path), "rb") as fh:    # a FIFO is not waited on
            return fh.read(4) in (b"\xfebin", b"\xfdbin")
    except (OSError, ReplToolError):
        return False


def expand_local(specs: Iterable[str]) -> list[str]:
    """Local inputs in order: a file as given, a directory's log files, a glob's matches.

    An index file (``*.index``) contributes the files it lists, in its order.
    A directory contributes, in natural name order, its regular files that
    begin with the binlog magic (``\\xfebin``, or ``\\xfdbin`` for an encrypted
    one, which then fails as such): ``*.index``, ``*.info`` and other
    companions are left out.  A glob contributes its matching files in natural
    order, whatever they hold.  A path that does not exist is kept, so
    that reading it gives the reader's own error.

    :raises InputError: when a glob matches nothing.
    """
    out: list[str] = []
    for spec in specs:
        if spec.endswith(".index") and os.path.isfile(spec):
            with open(spec, encoding="utf-8", errors="surrogateescape") as fh:
                out.extend(index_entries(spec, fh.read()))
        elif os.path.isdir(spec):
            out.extend(_dir_files(os.path.join(spec, n) for n in os.listdir(spec)
                                  if _is_log(os.path.join(spec, n))))
        elif _GLOB.search(spec) and not os.path.exists(spec):
            found = [p for p in glob.glob(spec) if os.path.isfile(p)]
            if not found:
                raise errors.InputError(f"{spec}: no file matches")
            out.extend(sorted(found, key=natural_key))
        else:
            out.append(spec)
    return out


def expand_inputs(specs: Sequence[str], spark: Any = None) -> list[tuple[str, int]]:
    """Every input file with its size, in input order (URIs are listed through Hadoop).

    :raises UsageError: on a file given twice (its figures would count twice).
    """
    out: list[tuple[str, int]] = []
    for spec in specs:
        if is_uri(spec):
            if spark is None:
                raise UsageError(f"{spec}: URIs are read only with --spark")
            out.extend(_list_uri(spark, spec))
        else:
            for name in expand_local([spec]):
                out.append((name, os.path.getsize(name) if os.path.isfile(name) else 0))
    seen: set[str] = set()
    for name, _ in out:
        if name in seen:
            raise UsageError(f"{name}: given twice (--spark reads every file once)")
        seen.add(name)
    return out


def _list_uri(spark: Any, uri: str) -> list[tuple[str, int]]:
    sc = spark.sparkContext
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(sc._jsc.hadoopConfiguration())
    statuses = fs.globStatus(path)
    if statuses is None or len(statuses) == 0:
        raise errors.InputError(f"{uri}: no such file")
    found: list[tuple[str, int]] = []
    for st in statuses:
        if st.isDirectory():
            kids = {c.getPath().toString(): int(c.getLen()) for c in fs.listStatus(st.getPath())
                    if c.isFile() and is_log_name(c.getPath().getName())}
            found.extend((n, kids[n]) for n in _dir_files(kids))
        elif st.getPath().getName().endswith(".index") and len(statuses) == 1:
            stream = fs.open(st.getPath())
            try:
                data = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
            finally:
                stream.close()
            for entry in index_entries(st.getPath().toString(), data.decode("utf-8", "replace")):
                found.extend(_list_uri(spark, entry))
        else:
            found.append((st.getPath().toString(), int(st.getLen())))
    if len(statuses) > 1:
        found.sort(key=lambda f: natural_key(f[0]))
    return found
