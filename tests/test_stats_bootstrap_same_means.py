"""stats.bootstrap_means gives exactly the means of the plain computations it speeds up: on
values with many distinct values (direct resampling, worked out by numpy) the same draws from
the same seeded generator, each resample summed left to right; on values with few distinct values
(the histogram path, binomial's BTRS written out) the same binomial draws."""

import random
from collections import Counter

import numpy as np
import pytest

from app.results import stats


def _python_means(values, resamples=stats.RESAMPLES, seed=stats.SEED):
    # The computation before numpy: rng.choices per resample, summed left to right.
    values = sorted(values)
    n = len(values)
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        total = 0.0
        for value in rng.choices(values, k=n):
            total += value
        means.append(total / n)
    means.sort()
    return means


def _histogram_python_means(values, resamples=stats.RESAMPLES, seed=stats.SEED):
    # The histogram path before binomial was written out: one stats.binomial call per value.
    counts = sorted(Counter(values).items())
    n = len(values)
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        left = weight_left = n
        total = 0.0
        for value, count in counts:
            if left == 0:
                break
            drawn = left if count == weight_left else stats.binomial(rng, left, count / weight_left)
            total += value * drawn
            left -= drawn
            weight_left -= count
        means.append(total / n)
    means.sort()
    return means


def _random_values(rng, kind, n):
    if kind == "uniform":
        return [rng.uniform(-10_000, 10_000) for _ in range(n)]
    if kind == "integers":
        return [rng.randint(-1_000, 1_000) for _ in range(n)]
    # Values of very different sizes, where the order of the additions shows in the rounding.
    return [rng.gauss(0, 1) * 10 ** rng.randint(-3, 6) for _ in range(n)]


@pytest.mark.parametrize("kind", ["uniform", "integers", "mixed sizes"])
@pytest.mark.parametrize("n", [16, 97, 1_500])
def test_direct_resampling_gives_the_same_means_as_python_resampling(kind, n):
    rng = random.Random(f"{kind}-{n}")
    values = _random_values(rng, kind, n)
    assert stats.bootstrap_means(values, resamples=300) == _python_means(values, resamples=300)


def test_resamples_spanning_several_blocks_give_the_same_means(monkeypatch):
    # Blocks of 64 draws: 40 values per resample puts a block boundary inside the resamples.
    monkeypatch.setattr(stats, "_BLOCK", 64)
    values = _random_values(random.Random(7), "uniform", 40)
    assert stats.bootstrap_means(values, resamples=50) == _python_means(values, resamples=50)


def test_the_paired_ci_of_many_distinct_differences_is_unchanged():
    rng = random.Random(8)
    pairs = [(rng.uniform(100, 9_000), rng.uniform(100, 9_000)) for _ in range(2_000)]
    means = _python_means([b - a for a, b in pairs])
    tail = (1.0 - stats.CONFIDENCE) / 2
    paired = stats.paired_bootstrap(pairs)
    assert (paired["ciLow"], paired["ciHigh"]) == (
        stats.percentile(means, tail),
        stats.percentile(means, 1.0 - tail),
    )


@pytest.mark.parametrize("distinct", [3, 21, 201])
@pytest.mark.parametrize("n", [4_000, 25_000])
def test_histogram_resampling_gives_the_same_means_as_binomial_calls(distinct, n):
    rng = random.Random(f"histogram-{distinct}-{n}")
    scores = [rng.randint(0, distinct - 1) * 100 / (distinct - 1) for _ in range(n)]
    diffs = [rng.choice(scores) - score for score in scores]
    values = diffs if len(Counter(diffs)) * stats._HISTOGRAM_RATIO < n else scores
    assert len(Counter(values)) * stats._HISTOGRAM_RATIO < n  # the histogram path
    assert stats.bootstrap_means(values, resamples=100) == _histogram_python_means(
        values, resamples=100
    )


@pytest.mark.parametrize("kind", ["uniform", "integers", "mixed sizes", "few"])
@pytest.mark.parametrize("n", [1, 16, 1_500, 6_000])
def test_differences_in_a_numpy_array_give_the_same_figures_as_in_a_list(kind, n):
    # Both bootstrap paths ("few": 21 distinct differences, the histogram from 315 values on),
    # and the mean difference summed in the same order: mixed sizes round otherwise.
    rng = random.Random(f"array-{kind}-{n}")
    if kind == "few":
        diffs = [rng.randint(-10, 10) * 5.0 for _ in range(n)]
    else:
        diffs = [float(d) for d in _random_values(rng, kind, n)]
    assert stats.paired_differences(np.array(diffs)) == stats.paired_differences(diffs)


def test_negative_zeros_in_a_numpy_array_sum_as_in_a_list():
    diffs = [-0.0, -0.0, 1e-300, -1e-300, -0.0]
    figures = stats.paired_differences(np.array(diffs))
    assert figures == stats.paired_differences(diffs)
    assert str(figures["meanDiff"]) == str(sum(diffs) / len(diffs)) == "0.0"
