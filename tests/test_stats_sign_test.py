"""The sign test's p-value: the exact two-sided binomial tail, at any number of tasks."""

import math

import pytest

from app.results.stats import sign_test


@pytest.mark.parametrize(("plus", "minus"), [(0, 1), (3, 9), (40, 41), (700, 650), (5, 0)])
def test_the_sign_test_sums_the_exact_binomial_tail(plus, minus):
    n, k = plus + minus, min(plus, minus)
    exact = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    assert sign_test([1.0] * plus + [-1.0] * minus + [0.0]) == min(1.0, 2 * exact)
