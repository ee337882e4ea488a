"""Suite-wide fixtures: where the shared binlog corpus lives, and parametrizing over it.

The corpus of real server-written logs is not part of this repository: it sits
beside the checkout in ``../shared/corpus`` (override with ``REPLTOOL_CORPUS``).
When it is absent every corpus test is *skipped*, loudly (the reason is in the
report header and on every skipped test), unless ``REPLTOOL_REQUIRE_CORPUS=1``
(CI sets it): then every corpus test *fails*.

Two ways for a test to use it:

* the ``corpus`` fixture (a :class:`pathlib.Path`; skips/fails when missing);
* the ``corpus_files`` marker, which parametrizes one argument over the files a
  glob matches at collection time, ids relative to the corpus root::

      @pytest.mark.corpus_files("path", "mysql/*/*")
      def test_x(path: Path) -> None: ...

  A glob that matches nothing (corpus missing, or a pattern gone stale) yields a
  single placeholder case, which an autouse fixture skips/fails with the reason
  above (corpus missing) or fails with "matched no files" (corpus present):
  parametrizing over an empty list never passes silently.

Under ``REPLTOOL_REQUIRE_CORPUS=1`` (CI) *no* test may skip, whatever the reason:
:func:`pytest_runtest_makereport` and :func:`pytest_make_collect_report` turn every
skip - ``pytest.skip``, ``importorskip`` (also at module or conftest level),
``skipif`` - into a failure that carries the skip's reason.  A strict ``xfail`` is
not a skip and stays as it is.  There is no allow-list: everything the suite needs
(the corpus, ``mariadb-binlog``, ``mariadbd``, Graphviz, Java + PySpark, atheris) is
installed by ``scripts/test`` or the ``test`` extra, so a skip in CI is a defect.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

import pytest
from hypothesis import settings

#: no property test fails for time: a loaded CI machine (two test passes, other jobs)
#: made hypothesis' 200 ms deadline fail a test that was right; speed lives in bench/
settings.register_profile("repltool", deadline=None)
settings.load_profile("repltool")

CORPUS_ENV = "REPLTOOL_CORPUS"
REQUIRE_ENV = "REPLTOOL_REQUIRE_CORPUS"
MISSING_REASON = "../shared/corpus not found: corpus tests skipped"


def _default_corpus() -> Path:
    # tests/conftest.py -> project root -> its parent -> shared/corpus
    return Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def corpus_root() -> Path | None:
    """The corpus directory, or None when it does not exist."""
    override = os.environ.get(CORPUS_ENV)
    root = Path(override).expanduser().resolve() if override else _default_corpus()
    return root if root.is_dir() else None


def corpus_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


CORPUS: Path | None = corpus_root()


def _missing_message() -> str:
    where = os.environ.get(CORPUS_ENV) or str(_default_corpus())
    return f"{MISSING_REASON} (looked in {where}; set {CORPUS_ENV} to point elsewhere)"


def require_corpus() -> Path:
    """The corpus root; skip (or fail under REPLTOOL_REQUIRE_CORPUS=1) when missing."""
    if CORPUS is None:
        if corpus_required():
            pytest.fail(f"{REQUIRE_ENV}=1 but {_missing_message()}", pytrace=False)
        pytest.skip(_missing_message())
    return CORPUS


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Root of the shared corpus (``../shared/corpus``)."""
    return require_corpus()


def _skip_reason(longrepr: object) -> str:
    """The reason of a skip report (its longrepr is ``(path, lineno, reason)``)."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        path, lineno, reason = longrepr
        return f"{reason} ({path}:{lineno})"
    return str(longrepr)


def _fail_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    report.outcome = "failed"
    report.longrepr = (f"{REQUIRE_ENV}=1: a skip is a failure in CI - "
                       f"{_skip_reason(report.longrepr)}")


class _SkipsFail:
    """Under CI every skip report becomes a failure carrying the skip's reason.

    A plugin object registered in :func:`pytest_configure`, not hooks of this
    conftest: pytest leaves a directory's conftest hooks out of the hook calls
    that load that directory's own conftests, so a module-level ``importorskip``
    in a sub-directory's ``conftest.py`` (tests/spark) would escape them.
    """

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]):
        report = yield
        if report.skipped and not hasattr(report, "wasxfail"):
            _fail_skip(report)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        report = yield
        if report.skipped:
            _fail_skip(report)
        return report


def _glob(patterns: Iterable[str], select: Callable[[Path], bool] | None) -> list[Path]:
    if CORPUS is None:
        return []
    found: dict[Path, None] = {}
    for pattern in patterns:
        for p in sorted(CORPUS.glob(pattern)):
            if p.is_file() and (select is None or select(p)):
                found[p] = None
    return list(found)


def pytest_configure(config: pytest.Config) -> None:
    if corpus_required():
        config.pluginmanager.register(_SkipsFail(), "repltool-skips-fail")
    config.addinivalue_line(
        "markers",
        "corpus_files(argname, *globs, select=None): parametrize argname over corpus files "
        "matching the globs (relative to the corpus root)")


def pytest_report_header(config: pytest.Config) -> str:
    if CORPUS is None:
        verdict = "FAIL" if corpus_required() else "SKIP"
        return f"corpus: MISSING -> corpus tests {verdict}: {_missing_message()}"
    return f"corpus: {CORPUS}"


class _Placeholder(str):
    """The value of the single case collected when a corpus glob matched nothing."""


_MISSING = _Placeholder("corpus-missing")
_NO_FILES = _Placeholder("no-files")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for mark in metafunc.definition.iter_markers("corpus_files"):
        argname, *patterns = mark.args
        files = _glob(patterns, mark.kwargs.get("select"))
        if files:
            metafunc.parametrize(argname, files, ids=[str(p.relative_to(CORPUS)) for p in files])
        else:
            placeholder = _MISSING if CORPUS is None else _NO_FILES
            metafunc.parametrize(argname, [placeholder], ids=[str(placeholder)])


@pytest.fixture(autouse=True)
def _corpus_placeholder(request: pytest.FixtureRequest) -> None:
    """Skip (or fail) the placeholder case of an empty corpus parametrization before it runs."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is None:
        return
    for value in callspec.params.values():
        if value is _MISSING:
            require_corpus()
        elif value is _NO_FILES:
            mark = request.node.get_closest_marker("corpus_files")
            pytest.fail(f"corpus glob(s) {mark.args[1:] if mark else '?'} matched no files in "
                        f"{CORPUS}", pytrace=False)


@pytest.fixture
def core(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The compiled core module, ``REPLTOOL_ENGINE=compiled`` for the test (fails when
    the core is not built)."""
    from repltool.binlog import engine
    monkeypatch.setenv(engine.ENV, "compiled")
    mod = engine.compiled_core()
    assert mod is not None, "the compiled core is not built"
    return mod


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run repltool in-process (``repltool.cli.run``); assert the exit status.

    Returns ``(stdout, stderr)``.  Every argument is passed through ``str()``.
    """
    from repltool.cli import run

    def invoke(*args: object, expect: int = 0) -> tuple[str, str]:
        code = run([str(a) for a in args])
        out, err = capsys.readouterr()
        assert code == expect, f"exit {code} != {expect}\nstderr: {err}\nstdout: {out[-3000:]}"
        return out, err

    return invoke
