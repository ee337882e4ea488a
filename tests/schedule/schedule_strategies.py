"""Hypothesis strategies and small helpers shared by the schedule tests.

Costs are small integers so that simulated times are exact floats and traces
can be compared with ``==``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from repltool.positions import Position
from repltool.schedule import Policy, SimConfig, SimTransaction


def trx(lc: int, sn: int, cost: float = 1.0, **kw: object) -> SimTransaction:
    """Shorthand for a SimTransaction."""
    return SimTransaction(lc, sn, cost=cost, **kw)  # type: ignore[arg-type]


@st.composite
def relay_logs(draw: st.DrawFn, max_size: int = 30) -> list[SimTransaction]:
    """A consistent relay log: source files, commit groups, gaps, (0,0) and lc=0."""
    size = draw(st.integers(1, max_size))
    out: list[SimTransaction] = []
    seq = 0
    for index in range(size):
        cost = float(draw(st.integers(0, 10)))
        pos = Position("relay-bin.000001", 4 + 100 * index)
        kind = draw(st.sampled_from(["next"] * 12 + ["rotate", "gap", "zero", "lc0"]))
        if index == 0 or kind == "rotate":
            seq = 1
            out.append(SimTransaction(0, 1, cost, pos, f"s:{index + 1}",
                                      new_source_file=index > 0))
            continue
        if kind == "zero":
            out.append(SimTransaction(0, 0, cost, pos, f"s:{index + 1}"))
            continue
        seq += draw(st.integers(2, 3)) if kind == "gap" else 1
        lc = 0 if kind == "lc0" else draw(st.integers(max(1, seq - 6), seq - 1)) \
            if seq > 1 else 0
        out.append(SimTransaction(lc, seq, cost, pos, f"s:{index + 1}"))
    return out


configs = st.builds(
    SimConfig,
    workers=st.integers(1, 6),
    policy=st.sampled_from(list(Policy)),
    preserve_commit_order=st.booleans(),
    coordinator_overhead=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    checkpoint_group=st.sampled_from([1, 2, 3, 8, 512]),
    dequeue_at=st.sampled_from(["start", "end"]),
    trace=st.just(True),
)
