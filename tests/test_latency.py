"""Latency figures from plain numbers: percentiles as load testers compute them, and the ITL
summary of a stream's gaps."""

import pytest

from app.latency import gaps
from app.latency import percentile
from app.latency import summary


def test_a_percentile_interpolates_between_the_two_nearest_values():
    assert percentile([10, 20, 30, 40], 0.5) == 25
    assert percentile([10, 20, 30, 40], 0.9) == pytest.approx(37)


def test_a_percentile_of_one_value_is_that_value_and_of_none_is_none():
    assert percentile([7], 0.99) == 7
    assert percentile([], 0.5) is None


def test_a_summary_holds_mean_p50_p90_p99_and_max():
    values = list(range(1, 101))
    assert summary(values) == {
        "mean": 50.5,
        "p50": 50.5,
        "p90": pytest.approx(90.1),
        "p99": pytest.approx(99.01),
        "max": 100.0,
    }


def test_a_summary_of_no_gaps_is_not_measurable():
    assert summary([]) is None


def test_the_summary_does_not_depend_on_the_order_of_the_values():
    assert summary([3, 1, 2]) == summary([1, 2, 3])


def test_gaps_are_the_milliseconds_between_consecutive_instants():
    assert gaps([1.0, 1.02, 1.05]) == pytest.approx([20.0, 30.0])
    assert gaps([1.0]) == []
