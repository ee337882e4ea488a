"""README and --help cannot drift: the README's option table and examples are what
repltool.cli.docs generates from the commands, every example in --help and in the
README's shell blocks runs (exit 0) on corpus logs, and the rule table names W001-W003."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repltool.cli.docs import READERS, render_readme
from repltool.cli.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
COMMANDS = ("dump", "stats", "check", "schedule", "certify", "explain", "sample", "synth")


def _help(command: str) -> str:
    run = subprocess.run([sys.executable, "-m", "repltool", command, "--help"],
                         capture_output=True, text=True, check=True)
    return run.stdout


def test_readme_generated_sections_are_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert render_readme(text) == text, "run: python -m repltool.cli.docs README.md"


def test_option_table_lists_every_option_of_every_reader() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("<!-- options:begin -->"):text.index("<!-- options:end -->")]
    for command in READERS:
        for opt in re.findall(r"^\s+(--[a-z][a-z0-9-]*)", _help(command), re.M):
            if opt != "--help":
                assert f"`{opt}" in table or f"/ {opt}`" in table, (command, opt)


def test_rule_table_documents_w001_to_w003() -> None:
    text = README.read_text(encoding="utf-8")
    assert "not available yet" not in text
    row = next(line for line in text.splitlines() if line.startswith("| `W001`"))
    for code in ("W001", "W002", "W003", "--schema", "--writesets"):
        assert code in row


def test_every_command_help_ends_with_examples() -> None:
    for command in COMMANDS:
        text = _help(command)
        joined = re.sub(r" \\\n\s+", " ", text)      # a long example goes on after " \"
        examples = re.findall(r"^\s+\$ (repltool .*)$", joined, re.M)
        assert 2 <= len(examples) <= 3 or (command == "sample" and len(examples) == 1), command
        assert examples == [line for _, line in EXAMPLES[command]]
        assert joined.rstrip().splitlines()[-1].strip().startswith("$ repltool")


@pytest.mark.parametrize("command", ("",) + COMMANDS)
def test_help_fits_80_columns_on_a_pipe(command: str) -> None:
    """``--help`` written to a pipe (click lays it out for 80 columns) has no longer line:
    the blocks click keeps as they are (exit statuses, examples) are laid out to fit."""
    run = subprocess.run([sys.executable, "-m", "repltool", *filter(None, [command]), "--help"],
                         capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    long = [line for line in run.stdout.splitlines() if len(line) > 80]
    assert not long, long
    assert "Exit status" in run.stdout or command


def test_a_long_example_is_continued_within_80_columns() -> None:
    from repltool.cli.examples import shell_lines
    line = ("repltool schedule --timezone UTC --start-datetime '2022-01-01 00:00:00' "
            "--workers 1,2,4,8,16,32 binlog.000001 binlog.000002")
    lines = shell_lines(line)
    assert len(lines) > 1 and all(len(x) <= 78 for x in lines)
    assert all(x.endswith(" \\") for x in lines[:-1])
    assert " ".join(x.strip().rstrip("\\").strip() for x in lines) == "$ " + line
    assert any("'2022-01-01 00:00:00'" in x for x in lines)       # a quoted word stays whole


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """The logs the examples name: a MySQL 8.0 binlog, a MariaDB rotated set (a fresh
    directory per test: outputs are never replaced without --force)."""
    d = tmp_path_factory.mktemp("examples")
    (d / "binlog.000001").symlink_to(
        corpus / "mysql/mysql80/mysql-test__std_data__replicated-bin.000001")
    rotation = corpus / "mariadb/rotation"
    for i in (1, 2, 3):
        (d / f"mysql-bin.00000{i}").symlink_to(rotation / f"mysql-bin.00000{i}")
    (d / "schema.sql").symlink_to(rotation / "schema.sql")
    (d / "mysql-bin.index").write_text("".join(f"./mysql-bin.00000{i}\n" for i in (1, 2, 3)))
    bindir = d / ".bin"
    bindir.mkdir()
    script = bindir / "repltool"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m repltool "$@"\n')
    script.chmod(0o755)
    return d


def _run_shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{cwd / '.bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                       os.environ.get("PYTHONPATH")])))
    return subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=cwd, env=env,
                          capture_output=True, text=True)


HELP_EXAMPLES = [(c, line) for c, items in EXAMPLES.items() for _, line in items]


@pytest.mark.parametrize("command, line", HELP_EXAMPLES,
                         ids=[f"{c}-{i}" for i, (c, _) in enumerate(HELP_EXAMPLES)])
def test_help_example_runs(command: str, line: str, workdir: Path) -> None:
    run = _run_shell(line, workdir)
    assert run.returncode == 0, f"{line}\n{run.stderr[-2000:]}"
    assert "Traceback" not in run.stderr
    target = re.search(r"> (\S+)$", line)
    if target:
        assert (workdir / target.group(1)).stat().st_size > 0
    elif "-o " not in line:
        assert run.stdout.strip()


def _readme_shell_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("repltool "):
                    out.append(part)
    return out


def test_readme_shell_examples_run(workdir: Path) -> None:
    lines = _readme_shell_commands()
    assert "repltool sample -o sample-logs" in lines
    assert len(lines) >= len(HELP_EXAMPLES) + 2
    for line in lines:      # in order: the Quick start's sample comes before its stats
        run = _run_shell(line, workdir)
        assert run.returncode == 0, f"{line}\n{run.stderr[-2000:]}"


def test_repltool_alone_prints_help_on_stderr_and_exits_2() -> None:
    """click's convention (8.2+), whatever click is installed; --help: stdout, 0."""
    run = subprocess.run([sys.executable, "-m", "repltool"], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("Usage: repltool [OPTIONS] COMMAND [ARGS]...\n")
    assert "\\x0a" not in run.stderr and "Commands:" in run.stderr
    run = subprocess.run([sys.executable, "-m", "repltool", "--help"], capture_output=True,
                         text=True)
    assert run.returncode == 0 and run.stdout.startswith("Usage: repltool")
