"""The in-process CLI for the explain tests."""

from __future__ import annotations

import json

import pytest

from repltool.cli import run


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run repltool in-process; assert the exit status; return (stdout, stderr)."""

    def invoke(*args: object, expect: int = 0) -> tuple[str, str]:
        code = run([str(a) for a in args])
        out, err = capsys.readouterr()
        assert code == expect, f"exit {code} != {expect}\nstderr: {err}\nstdout: {out[-3000:]}"
        return out, err

    return invoke


@pytest.fixture
def cli_json(cli):
    def invoke(*args: object) -> dict:
        out, _ = cli(*args, "--format", "json")
        return json.loads(out)

    return invoke
