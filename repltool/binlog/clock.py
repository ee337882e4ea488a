"""The rules of a binlog's logical clock (``last_committed``, ``sequence_number``)
that more than one tool applies: stated once here.

Which transactions share a clock (the segments a relay log's source Rotates begin)
is :class:`repltool.binlog.transactions.Segments`; these rules take one segment's
clocks in order.

Copies kept where a call per transaction costs measurable CPU, each held to these
functions by a test (``tests/binlog/test_clock_rules.py`` unless said): check's
``_Span.add``, ``schedule.logical_clock.classify`` and the simulators' shortcut
for a plain transaction (``schedule/fastpath.py``, ``schedule/sweep.py``, held to
``classify``); in C, ``_core.pyx``'s stats accumulator and ``_certcore.pxi``'s depth
summary (``tests/certify/test_certcore.py``, against the Python accumulator that
calls these).
"""

from __future__ import annotations


def is_barrier(last_committed: int, sequence_number: int, previous: int | None) -> bool:
    """Whether a transaction waits for every one before it and every later one waits
    for it (the MTS coordinator's barrier, format spec gotcha 22): ``last_committed``
    0, ``sequence_number`` 0, the previous ``sequence_number`` 0, a gap after it
    (``sequence_number > previous + 1``: transactions filtered out), or no increase
    (``sequence_number <= previous``: the clock restarted).

    :param previous: the ``sequence_number`` of the transaction before it in its
        segment; ``None`` when the caller saw none (only a zero clock makes the
        first one a barrier: what lies before it is the caller's to say).
    """
    return (last_committed == 0 or sequence_number == 0
            or (previous is not None and (previous == 0 or sequence_number > previous + 1
                                          or sequence_number <= previous)))


def restarts(sequence_number: int, previous: int | None) -> bool:
    """Whether ``sequence_number`` begins a new run of the clock after ``previous``
    (the ``sequence_number`` before it; ``None``: none): it does not increase, and
    neither is 0 (a 0 is a barrier, not a restart)."""
    return previous is None or (sequence_number != 0 and previous != 0
                                and sequence_number <= previous)


def inconsistent(last_committed: int, sequence_number: int) -> bool:
    """Whether a clock is impossible as MySQL writes it: ``sequence_number`` not
    above ``last_committed``, except the (0, 0) of a Group Replication view change
    (check's C004, ``stats``' bad clocks, the schedule's refusal)."""
    return sequence_number <= last_committed and (last_committed, sequence_number) != (0, 0)
