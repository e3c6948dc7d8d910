"""The sign test's p-value: the exact two-sided binomial tail, at any number of tasks."""

import math

import numpy as np
import pytest

from app.results.stats import sign_test
from app.results.stats import sign_test_counts


@pytest.mark.parametrize(("plus", "minus"), [(0, 1), (3, 9), (40, 41), (700, 650), (5, 0)])
def test_the_sign_test_sums_the_exact_binomial_tail(plus, minus):
    n, k = plus + minus, min(plus, minus)
    exact = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    assert sign_test([1.0] * plus + [-1.0] * minus + [0.0]) == min(1.0, 2 * exact)


def _exact_tail_p(plus, minus):
    # The exact integer sum, term from term (math.comb per term is slower still).
    n, k = plus + minus, min(plus, minus)
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return min(1.0, 2 * (total / 2**n))


# Past 2 000 on the smaller side the tail is summed in decimals: near a balance (p near 1 and
# moderate), in the far tail (tiny p, subnormal, 0.0), one each way, and exactly balanced.
@pytest.mark.parametrize(
    ("plus", "minus"),
    [
        (2001, 2001),
        (2500, 2600),
        (2600, 2500),
        (4800, 5300),
        (9000, 10000),
        (2100, 5000),
        (6000, 7700),
        (6000, 7800),
        (2010, 5140),
        (2010, 5220),
        (2010, 5230),
        (3000, 12000),
    ],
)
def test_a_big_sign_test_gives_the_float_of_the_exact_tail(plus, minus):
    assert sign_test_counts(plus, minus) == _exact_tail_p(plus, minus)


def test_a_numpy_array_of_differences_gives_the_same_p_as_a_list():
    diffs = [1.5] * 2300 + [-0.5] * 2500 + [0.0] * 10
    assert sign_test(np.array(diffs)) == sign_test(diffs) == _exact_tail_p(2300, 2500)
