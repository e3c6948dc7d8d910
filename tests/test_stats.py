"""app.stats: deterministic bootstrap CIs, the binomial sampler, the sign test."""

import random
import statistics

import pytest

from app.results import stats


def _sample(seed, method, args, count):
    rng = random.Random(seed)
    return [getattr(rng, method)(*args) for _ in range(count)]


def test_bootstrap_ci_is_deterministic_for_the_same_values():
    values = _sample(1, "randint", (0, 100), 200)
    assert stats.bootstrap_mean_ci(values) == stats.bootstrap_mean_ci(list(values))


def test_bootstrap_ci_does_not_depend_on_value_order():
    values = _sample(2, "uniform", (0, 100), 150)
    shuffled = list(values)
    random.Random(3).shuffle(shuffled)
    assert stats.bootstrap_mean_ci(values) == stats.bootstrap_mean_ci(shuffled)


def test_bootstrap_ci_brackets_the_mean_and_matches_the_normal_approximation():
    values = _sample(4, "randint", (0, 100), 400)
    low, high = stats.bootstrap_mean_ci(values)
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
    assert low < mean < high
    assert low == pytest.approx(mean - half, abs=0.6)
    assert high == pytest.approx(mean + half, abs=0.6)


def test_histogram_path_agrees_with_direct_resampling():
    # 3000 values over 11 distinct scores takes the histogram path.
    values = _sample(5, "choice", (range(0, 101, 10),), 3000)
    low, high = stats.bootstrap_mean_ci(values)
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
    assert low == pytest.approx(mean - half, abs=0.25)
    assert high == pytest.approx(mean + half, abs=0.25)


@pytest.mark.parametrize(
    "values, expected", [([], None), ([42], (42.0, 42.0)), ([7, 7, 7], (7.0, 7.0))]
)
def test_bootstrap_ci_degenerate_inputs(values, expected):
    assert stats.bootstrap_mean_ci(values) == expected


@pytest.mark.parametrize("n, p", [(40, 0.1), (1000, 0.3), (5000, 0.8)])
def test_binomial_has_the_right_mean_and_variance(n, p):
    rng = random.Random(6)
    draws = [stats.binomial(rng, n, p) for _ in range(4000)]
    assert statistics.fmean(draws) == pytest.approx(n * p, rel=0.03)
    assert statistics.variance(draws) == pytest.approx(n * p * (1 - p), rel=0.12)
    assert all(0 <= d <= n for d in draws)


def test_paired_bootstrap_flags_a_consistent_drop_as_significant():
    pairs = [(80, 70 + (i % 3)) for i in range(30)]
    result = stats.paired_bootstrap(pairs)
    assert result["n"] == 30
    assert result["meanDiff"] == pytest.approx(-9.0, abs=0.1)
    assert result["ciHigh"] < 0
    assert result["significant"] is True


def test_paired_bootstrap_noise_is_not_significant():
    pairs = [(50, 55 if i % 2 else 45) for i in range(40)]
    assert stats.paired_bootstrap(pairs)["significant"] is False


def test_sign_test_exact_p_values():
    assert stats.sign_test([1] * 10) == pytest.approx(2 / 1024)
    assert stats.sign_test([1, -1]) == 1.0
    assert stats.sign_test([0, 0]) is None


def test_percentile_interpolates():
    assert stats.percentile([0, 10], 0.25) == 2.5
    assert stats.percentile([], 0.5) is None
