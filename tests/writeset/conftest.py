"""Fixtures of the writeset tests: the live MariaDB workload (tests/fixtures/mariadb.py)."""

from fixtures.mariadb import mariadb_workload  # noqa: F401  (session fixture)
