"""Synthetic MySQL binlogs and relay logs, written with repltool's own encoder.

Two layers:

* :mod:`repltool.synth.builder` - :class:`BinlogBuilder`, :class:`SampleTable`,
  :func:`write_sample` and the body helpers: small hand-built logs (``repltool
  sample`` and many tests use them; their behaviour is stable);
* :func:`generate` (:mod:`repltool.synth.generate`) - ``repltool synth``: logs of
  any size from a modelled workload (several tables and key kinds, sessions,
  binlog group commit), in 8.0, 5.7 or 9.x format, as binlogs or relay logs,
  with the schema and a ground truth of the keys every GTID wrote.
"""

from __future__ import annotations

from .builder import (
    MYSQL80_POST_HEADER_LEN, MYSQL80_STATUS_VARS, BinlogBuilder, SampleTable, fde_body,
    payload_body, previous_gtids_body, query_body, write_sample,
)
from .clock import ClockConfig
from .generate import SynthOptions, SynthResult, generate, keys_of
from .workload import KeyDistribution, WorkloadConfig

__all__ = [
    "BinlogBuilder", "SampleTable", "write_sample", "query_body", "payload_body", "fde_body",
    "previous_gtids_body", "MYSQL80_POST_HEADER_LEN", "MYSQL80_STATUS_VARS",
    "ClockConfig", "KeyDistribution", "SynthOptions", "SynthResult", "WorkloadConfig",
    "generate", "keys_of",
]
