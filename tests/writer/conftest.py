"""Fixtures of the writer tests (helpers live in ``writer_helpers``)."""

from __future__ import annotations

import pytest

from writer_helpers import CorpusFile, corpus_missing, load


@pytest.fixture
def corpus_file(request: pytest.FixtureRequest) -> CorpusFile:
    path = request.param
    if path is None:
        corpus_missing()
    cf = load(path)
    assert cf is not None
    return cf
