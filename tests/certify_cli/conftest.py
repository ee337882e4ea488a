"""Fixtures of the ``repltool certify`` tests: the in-process CLI and the live MariaDB run."""

from __future__ import annotations

import json

import pytest

from fixtures.mariadb import mariadb_workload  # noqa: F401  (session fixture)




@pytest.fixture
def certify_jsonl(cli):
    """``repltool certify --format jsonl ARGS`` as a list of row dicts."""

    def invoke(*args: object, expect: int = 0) -> list[dict]:
        out, _ = cli("certify", "--format", "jsonl", *args, expect=expect)
        return [json.loads(line) for line in out.splitlines()]

    return invoke
