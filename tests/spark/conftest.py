"""One local[2] SparkSession for the whole test session, and the generated log sets.

The CLI's ``--spark`` reuses an active session (as under spark-submit), so the
in-process CLI runs below share this one and do not pay Spark's start-up again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from logsets import write_rotated_binlogs, write_split_relay_logs  # noqa: E402

pyspark = pytest.importorskip("pyspark",
                              reason="pyspark is not installed: pip install -e '.[test]'")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: runs PySpark in local mode (tests/spark)")


@pytest.fixture(scope="session")
def spark():
    from repltool.distributed import SparkOptions, spark_session
    conf = (("spark.ui.enabled", "false"), ("spark.sql.shuffle.partitions", "2"),
            ("spark.ui.showConsoleProgress", "false"))
    with spark_session(SparkOptions(master="local[2]", conf=conf)) as session:
        yield session


@pytest.fixture(scope="session")
def rotated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """60 small MySQL 8.0 binlogs of one rotated set."""
    return write_rotated_binlogs(tmp_path_factory.mktemp("rotated"), files=60)


@pytest.fixture(scope="session")
def split_relay(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Relay logs whose transactions continue into the next relay file."""
    return write_split_relay_logs(tmp_path_factory.mktemp("relay"), files=6)
