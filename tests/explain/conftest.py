"""JSON output of the in-process CLI (``cli``, tests/conftest.py) for the explain tests."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def cli_json(cli):  # the shared ``cli`` fixture of tests/conftest.py
    def invoke(*args: object) -> dict:
        out, _ = cli(*args, "--format", "json")
        return json.loads(out)

    return invoke
