"""Settings of ``repltool check``: rule selection, severities, thresholds; config files.

Like ruff, the configuration is looked up from the current directory upwards,
up to the repository root (the first directory holding ``.git``); the first
directory that has one wins (no merging across directories).  A file another
user could have written (world-writable, or in a world-writable directory
such as ``/tmp`` and not owned by the current user or root) is ignored with a
warning.  The CLI says which file it used.  In a directory the order is:

1. ``.repltool.toml``: a ``[check]`` table (``[tool.repltool.check]`` is accepted too);
2. ``pyproject.toml``: a ``[tool.repltool.check]`` table;
3. ``setup.cfg``: a ``[repltool.check]`` section (configparser; lists are comma-separated).

A file that exists but has no such table is passed over.  ``--config FILE``
names the file explicitly; ``--no-config`` ignores every file.

Keys (``-`` and ``_`` are interchangeable)::

    [tool.repltool.check]
    select = ["S", "C", "G001"]      # codes or prefixes; default ["ALL"]
    ignore = ["C003"]
    severity = { S005 = "warning", C008 = "info" }
    min-parallelism = 1.5
    max-barrier-share = 0.25
    max-trx-size = "64M"
    gr-applier = "auto"              # auto | yes | no

Precedence: the command line beats the file.  ``--select`` replaces the file's
``select``; ``--ignore`` and ``--severity`` add to (and override) the file's.
"""

from __future__ import annotations

import configparser
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ReplToolError, UsageError
from .rules import RULES, THRESHOLD_RULES, Severity, expand

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10 (setup.cfg installs tomli)
    import tomli as _toml  # type: ignore[no-redef, import-not-found]

GR_CHOICES = ("auto", "yes", "no")
_KEYS = ("select", "ignore", "severity", "min_parallelism", "max_barrier_share",
         "max_trx_size", "gr_applier")


@dataclass(frozen=True, slots=True)
class CheckConfig:
    """Which rules run, at which severity, with which limits.

    :ivar select: selectors (codes, prefixes, ``ALL``) of the rules to run.
    :ivar ignore: selectors of rules not to run (applied after ``select``).
    :ivar severity: effective severity per rule code (defaults: the rule's).
    :ivar min_parallelism: T001 limit (transactions / critical path).
    :ivar max_barrier_share: T002 limit, a fraction in [0, 1].
    :ivar max_trx_size: T003 limit in bytes.
    :ivar gr_applier: ``auto`` detects Group Replication applier relay logs
        (a relay log whose first transaction is (1, 2)); ``yes``/``no`` force it.
    :ivar source: the configuration file used, if any (for messages).
    """

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    min_parallelism: float | None = None
    max_barrier_share: float | None = None
    max_trx_size: int | None = None
    gr_applier: str = "auto"
    source: str | None = None

    def __post_init__(self) -> None:
        for sel in (*self.select, *self.ignore):
            _expand(sel, self.source)
        for code in self.severity:
            if code not in RULES:
                raise UsageError(f"{_where(self.source)}unknown rule {code!r} in severity")
        if self.gr_applier not in GR_CHOICES:
            raise UsageError(f"{_where(self.source)}gr-applier must be one of "
                             f"{', '.join(GR_CHOICES)}, not {self.gr_applier!r}")
        if self.min_parallelism is not None and not self.min_parallelism > 0:
            raise UsageError(f"{_where(self.source)}min-parallelism must be > 0")
        if self.max_barrier_share is not None and not 0 <= self.max_barrier_share <= 1:
            raise UsageError(f"{_where(self.source)}max-barrier-share must be in [0, 1]")
        if self.max_trx_size is not None and self.max_trx_size < 0:
            raise UsageError(f"{_where(self.source)}max-trx-size must be >= 0")

    def selected(self) -> list[str]:
        """Codes of the selected, not ignored rules, in documentation order."""
        chosen = {c for sel in self.select for c in _expand(sel, self.source)}
        dropped = {c for sel in self.ignore for c in _expand(sel, self.source)}
        return [c for c in RULES if c in chosen and c not in dropped]

    def severity_of(self, code: str) -> Severity:
        return self.severity.get(code, RULES[code].severity)

    def threshold(self, code: str) -> float | int | None:
        """The configured limit of a T rule (None: the rule is not enabled)."""
        need = RULES[code].needs
        return getattr(self, need) if need else None

    def not_enabled(self) -> set[str]:
        """Selected threshold rules whose limit is not configured."""
        return {c for c in THRESHOLD_RULES if self.threshold(c) is None}


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


def _expand(selector: str, source: str | None) -> list[str]:
    try:
        return expand(selector)
    except KeyError:
        raise UsageError(f"{_where(source)}unknown rule or prefix {selector!r} "
                         "(see `repltool check --list-rules`)") from None


# ---- parsing values ----

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """Bytes from ``123``, ``10M``, ``1G``, ``64k``, ``1.5MiB`` (powers of 1024, like MySQL).

    Example::

        >>> parse_size("10M"), parse_size("1G"), parse_size("512"), parse_size("1.5k")
        (10485760, 1073741824, 512, 1536)

    :raises UsageError: when the text is not a size.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise UsageError(f"not a size: {text!r} (expected e.g. 1048576, 10M, 1G)")
    unit = 1024 ** " kmgt".index(m.group(2).lower() or " ")
    return int(float(m.group(1)) * unit)


def parse_severities(items: Iterable[str]) -> dict[str, Severity]:
    """``{"C008": Severity.WARNING}`` from ``["C008=warning", "S005=info,S004=warning"]``.

    :raises UsageError: on a malformed item, an unknown code or level.
    """
    out: dict[str, Severity] = {}
    for item in items:
        for part in filter(None, (p.strip() for p in re.split(r"[,\n]", item))):
            code, sep, level = part.partition("=")
            if not sep:
                raise UsageError(f"severity {part!r}: expected RULE=error|warning|info")
            out.update(_severity_pair(code.strip(), level.strip()))
    return out


def _severity_pair(code: str, level: Any) -> dict[str, Severity]:
    try:
        sev = Severity(str(level).lower())
    except ValueError:
        raise UsageError(f"severity of {code}: {level!r} is not error, warning or info") \
            from None
    return {c: sev for c in _expand(code, None)}


def split_list(value: Any) -> tuple[str, ...]:
    """A selector list from a TOML list or a comma/newline-separated string."""
    if isinstance(value, str):
        return tuple(filter(None, (p.strip() for p in re.split(r"[,\s]+", value))))
    if isinstance(value, (list, tuple)):
        return tuple(str(v).strip() for v in value if str(v).strip())
    raise UsageError(f"expected a list of rule codes, not {value!r}")


# ---- files ----

CONFIG_NAMES = (".repltool.toml", "pyproject.toml", "setup.cfg")
#: Configuration files are small; a bigger one is refused (one line), not read.
CONFIG_LIMIT = 4 << 20


def find_config(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The configuration file that applies in ``start`` (default: the current directory).

    The search goes from ``start`` upwards and stops after the repository
    root (the first directory holding ``.git``), as ruff's does.  A file
    others could have written is passed over with a warning
    (:func:`unsafe_reason`): a ``.repltool.toml`` in ``/tmp`` must not
    silence a check.
    """
    import warnings
    here = Path(start or os.getcwd()).resolve()
    for d in (here, *here.parents):
        for name in CONFIG_NAMES:
            p = d / name
            if not p.is_file():
                continue
            why = unsafe_reason(p)
            if why is not None:
                warnings.warn(f"ignoring configuration {p}: {why}", stacklevel=2)
                continue
            if read_table(p) is not None:
                return p
        if os.path.lexists(d / ".git"):
            break
    return None


def unsafe_reason(path: Path) -> str | None:
    """Why another user could have written ``path`` (None: only its owner or root could).

    Unsafe: the file is world-writable; its directory is world-writable
    without the sticky bit (anyone can replace the file); or its directory
    is world-writable and sticky (``/tmp``) but the file belongs to another
    user than the current one or root.
    """
    import stat as st_
    try:
        f, d = path.stat(), path.parent.stat()
    except OSError:
        return None
    if f.st_mode & st_.S_IWOTH:
        return "the file is writable by every user"
    if d.st_mode & st_.S_IWOTH:
        if not d.st_mode & st_.S_ISVTX:
            return f"its directory {path.parent} is writable by every user"
        if f.st_uid not in (0, os.geteuid()):
            return (f"its directory {path.parent} is writable by every user and the file "
                    f"belongs to another user (uid {f.st_uid})")
    return None


def read_table(path: Path) -> dict[str, Any] | None:
    """The check table of a config file (keys normalised to snake_case), or None.

    :raises UsageError: when the file cannot be read or parsed (not UTF-8,
        not a regular file, bigger than :data:`CONFIG_LIMIT`).
    """
    from ..outputs import read_text_bounded
    try:
        text = read_text_bounded(path, CONFIG_LIMIT, "configuration")
    except ReplToolError as exc:
        raise UsageError(exc.reason) from None
    if path.suffix == ".toml":
        try:
            doc = _toml.loads(text)
        except _toml.TOMLDecodeError as exc:
            raise UsageError(f"{path}: invalid TOML: {exc}") from None
        except RecursionError:
            raise UsageError(f"{path}: nested too deeply to parse") from None
        table = doc.get("tool", {}).get("repltool", {}).get("check")
        if table is None and path.name != "pyproject.toml":
            table = doc.get("check")
    else:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text, source=str(path))
        except configparser.Error as exc:
            raise UsageError(f"{path}: invalid config: {exc}") from None
        table = dict(parser["repltool.check"]) if parser.has_section("repltool.check") else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise UsageError(f"{path}: the check configuration must be a table")
    return {k.replace("-", "_"): v for k, v in table.items()}


def config_from_table(table: Mapping[str, Any], source: str) -> CheckConfig:
    """A :class:`CheckConfig` from a file's check table.

    :raises UsageError: on unknown keys or bad values (the message names the file).
    """
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise UsageError(f"{source}: unknown key(s) {', '.join(unknown)}; expected "
                         f"{', '.join(k.replace('_', '-') for k in _KEYS)}")
    kw: dict[str, Any] = {"source": source}
    try:
        if "select" in table:
            kw["select"] = split_list(table["select"])
        if "ignore" in table:
            kw["ignore"] = split_list(table["ignore"])
        if "severity" in table:
            sev = table["severity"]
            if isinstance(sev, dict):
                kw["severity"] = {c: s for code, level in sev.items()
                                  for c, s in _severity_pair(code, level).items()}
            else:
                kw["severity"] = parse_severities(split_list(sev) if isinstance(sev, list)
                                                  else [str(sev)])
        for key in ("min_parallelism", "max_barrier_share"):
            if key in table:
                kw[key] = float(table[key])
        if "max_trx_size" in table:
            kw["max_trx_size"] = parse_size(table["max_trx_size"])
        if "gr_applier" in table:
            v = table["gr_applier"]
            kw["gr_applier"] = {True: "yes", False: "no"}.get(v, str(v).lower()) \
                if isinstance(v, bool) else str(v).lower()
    except UsageError as exc:
        raise UsageError(f"{source}: {exc.reason}") from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{source}: bad value: {exc}") from None
    return CheckConfig(**kw)


def load_config(path: str | os.PathLike[str] | None = None, *, search: bool = True,
                start: str | os.PathLike[str] | None = None) -> CheckConfig:
    """The configuration from ``path``, or found from ``start`` upwards, or the defaults.

    :raises UsageError: an explicit ``path`` that is missing or has no check table.
    """
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise UsageError(f"{p}: configuration file not found")
        table = read_table(p)
        if table is None:
            raise UsageError(f"{p}: no {_table_name(p)} table in this file")
        return config_from_table(table, str(p))
    found = find_config(start) if search else None
    if found is None:
        return CheckConfig()
    return config_from_table(read_table(found) or {}, str(found))


def _table_name(p: Path) -> str:
    if p.suffix == ".toml":
        return "[tool.repltool.check]" if p.name == "pyproject.toml" else "[check]"
    return "[repltool.check]"


def override(base: CheckConfig, *, select: tuple[str, ...] | None = None,
             ignore: tuple[str, ...] = (), severity: Mapping[str, Severity] | None = None,
             **limits: Any) -> CheckConfig:
    """``base`` with command-line values on top (see the module docstring for the rules)."""
    for sel in (*(select or ()), *ignore):
        _expand(sel, None)
    changes: dict[str, Any] = {k: v for k, v in limits.items() if v is not None}
    if select:
        changes["select"] = select
    if ignore:
        changes["ignore"] = base.ignore + tuple(ignore)
    if severity:
        changes["severity"] = {**base.severity, **severity}
    return replace(base, **changes)
