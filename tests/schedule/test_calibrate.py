"""Fitting the linear cost model to measured serial apply times."""

from __future__ import annotations

import pytest

from repltool.errors import UsageError
from repltool.schedule import LinearCost
from repltool.schedule.calibrate import Sample, cost_spec, fit_linear_cost
from repltool.schedule.mariadb import MariaTransaction
from repltool.schedule.source import parse_cost


def test_two_shapes_determine_per_transaction_and_per_row() -> None:
    # 1 ms per transaction + 20 ms per row, on logs of 1 and 3 rows per transaction
    one = [MariaTransaction(rows=1, size=100, events=3)] * 50
    three = [MariaTransaction(rows=3, size=300, events=5)] * 40
    samples = [Sample.of(one, 50 * 0.021), Sample.of(three, 40 * 0.061)]
    model = fit_linear_cost(samples)
    assert model.per_transaction == pytest.approx(0.001) and model.per_row == pytest.approx(0.02)
    assert model.per_byte == 0 and model.per_event == 0
    assert sum(t.cost for t in model.apply(three)) == pytest.approx(40 * 0.061)


def test_coefficients_stay_non_negative() -> None:
    # measurements that a negative per-transaction cost would fit best
    samples = [Sample(10, 10, 0, 0, 0.1), Sample(10, 30, 0, 0, 0.5)]
    model = fit_linear_cost(samples)
    assert model.per_transaction >= 0 and model.per_row > 0


def test_the_fit_prints_as_a_cost_argument() -> None:
    model = LinearCost(0.0004, 0.0216, 0.0, 0.0)
    assert cost_spec(model) == "linear:0.0004,0.0216,0,0"
    assert parse_cost(cost_spec(model)) == model
    assert parse_cost("linear:0.5") == LinearCost(0.5, 0.0, 0.0, 0.0)
    for bad in ("linear:x", "linear:-1", "linear:1,2,3,4,5"):
        with pytest.raises(UsageError, match="linear:T,R,B,E"):
            parse_cost(bad)


def test_nothing_to_fit_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        fit_linear_cost([])
    with pytest.raises(UsageError):
        fit_linear_cost([Sample(1, 1, 1, 1, 1.0)], fit=("per_page",))
