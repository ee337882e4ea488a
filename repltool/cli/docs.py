"""README sections generated from the click commands, so README and ``--help``
cannot drift: the option table and the examples.

``python -m repltool.cli.docs`` rewrites them in README.md (between the
``<!-- options:begin -->`` / ``<!-- examples:begin -->`` markers and their ``end``);
``tests/cli/test_docs.py`` fails when README.md differs from what this writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from . import cli
from .examples import EXAMPLES


#: The commands that read logs (sample and synth write them; their options are
#: in their own README sections).
READERS = ("dump", "stats", "check", "schedule", "certify", "explain")


def _commands(names: tuple[str, ...] = READERS) -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli, info_name="repltool")
    out = []
    for name in names:
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        out.append((name, cmd))
    return out


def _cell(param: click.Option) -> str:
    if param.is_flag and param.secondary_opts:
        return "on/off"
    if param.is_flag:
        return "flag"
    if isinstance(param.type, click.Choice):
        return "\\|".join(str(c) for c in param.type.choices)
    text = (param.metavar or param.type.name.upper()).replace("|", "\\|")
    return text


def options_markdown() -> str:
    """One table: every option (rows) of the commands that read logs (columns); a
    cell shows the option's short form and values (its choices, ``flag``, ``on/off``
    or its argument)."""
    commands = _commands()
    rows: dict[str, dict[str, str]] = {}
    for name, cmd in commands:
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.name == "help":
                continue
            longs = [o for o in p.opts if o.startswith("--")] or p.opts
            shorts = [o for o in p.opts if o not in longs]
            key = " / ".join(longs + p.secondary_opts)
            rows.setdefault(key, {})[name] = " ".join(shorts + [_cell(p)])
    head = "| option | " + " | ".join(f"`{n}`" for n, _ in commands) + " |"
    sep = "|---|" + "---|" * len(commands)
    lines = [head, sep]
    for key in sorted(rows, key=lambda k: k.lstrip("-").lower()):
        cells = [f"`{rows[key][n]}`" if n in rows[key] else "" for n, _ in commands]
        lines.append(f"| `{key}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def examples_markdown() -> str:
    """Every command's ``--help`` examples, as shell blocks."""
    out = []
    for command, items in EXAMPLES.items():
        out.append(f"`repltool {command}`:\n\n```sh")
        for what, line in items:
            out.append(f"# {what}\n{line}")
        out.append("```\n")
    return "\n".join(out)


SECTIONS = {"options": options_markdown, "examples": examples_markdown}


def render_readme(text: str) -> str:
    """``text`` (README.md) with every generated section rewritten."""
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"README.md has no <!-- {name}:begin/end --> markers")
        text = pattern.sub(lambda m: m.group(1) + make() + m.group(2), text)
    return text


def main(argv: list[str] | None = None) -> int:
    path = Path((argv or sys.argv[1:] or ["README.md"])[0])
    text = path.read_text(encoding="utf-8")
    new = render_readme(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"{path}: generated sections rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
