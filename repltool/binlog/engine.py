"""Which engine reads logs: the compiled core (:mod:`repltool.binlog._core`) or pure Python.

``REPLTOOL_ENGINE`` chooses: ``compiled`` (fail if the extension is not built),
``python`` (never use it) or ``auto`` (the default: the compiled core when it was
built at install time).  Both engines give the same results; the compiled one is
faster.  When ``auto`` finds no compiled core, the first use prints one notice
line on stderr.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

from ..errors import UsageError
from ..positions import Position

ENV = "REPLTOOL_ENGINE"
CHOICES = ("auto", "compiled", "python")

_state: dict[str, object] = {}


class Unsupported(Exception):
    """The input leaves an engine's fast subset at ``pos``: the general reader
    (:func:`~repltool.binlog.read_events` and
    :func:`~repltool.binlog.transactions.group_transactions`) must read it."""

    def __init__(self, reason: str, pos: Position | None = None) -> None:
        super().__init__(f"{pos.file}:{pos.offset}: {reason}" if pos else reason)
        self.reason = reason
        self.pos = pos


def _load() -> ModuleType | None:
    if "core" not in _state:
        try:
            from . import _core  # type: ignore[attr-defined]
        except ImportError as exc:
            _state["core"] = None
            _state["why"] = str(exc)
        else:
            _state["core"] = _core
    return _state["core"]  # type: ignore[return-value]


def choice() -> str:
    """The ``REPLTOOL_ENGINE`` setting (``auto`` when unset).

    :raises UsageError: for a value other than compiled, python or auto.
    """
    value = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if value not in CHOICES:
        raise UsageError(f"{ENV}={value!r}: expected one of {', '.join(CHOICES)}")
    return value


def compiled_core() -> ModuleType | None:
    """The compiled core if it is to be used, else ``None`` (the pure-Python engine).

    :raises UsageError: ``REPLTOOL_ENGINE=compiled`` without a built core, or a bad value.
    """
    want = choice()
    if want == "python":
        return None
    core = _load()
    if core is None:
        if want == "compiled":
            raise UsageError(f"{ENV}=compiled, but the compiled engine is not installed "
                             f"({_state['why']}); reinstall with a C compiler present")
        if not _state.get("told"):
            _state["told"] = True
            print("repltool: note: the compiled engine is not built; using the pure-Python "
                  f"engine (set {ENV}=python to silence this)", file=sys.stderr)
    return core


def engine_name() -> str:
    """``compiled`` or ``python``: what :func:`compiled_core` decides (no notice, no error)."""
    try:
        want = choice()
    except UsageError:
        return f"invalid {ENV}"
    if want == "python":
        return "python"
    if _load() is None:
        return "python (compiled engine not built)" if want == "auto" else \
            "compiled requested but not built"
    return "compiled"
