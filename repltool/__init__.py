"""repltool: MySQL binary-log and relay-log analysis.

The library is layered as a pipeline of iterators::

    file -> events (repltool.binlog) -> transactions -> dependencies
    (repltool.certify) -> simulation (repltool.schedule)

Only :mod:`repltool.cli` imports click and rich.
"""

__version__ = "0.1.0"
