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
