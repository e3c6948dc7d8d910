"""Bootstrap CIs of a mean when answers come in clusters (repeats of one task), with numpy.

With repeats (settings.repeats = K), the K answers to a task are correlated: the task is easy or
hard for the model. Resampling single answers as if independent gives too narrow a CI; the
cluster bootstrap draws whole tasks instead (tests/test_repeats.py shows the difference).
"""

import math

import numpy as np

from .stats import CONFIDENCE
from .stats import RESAMPLES
from .stats import SEED

# Bootstrap index matrices are drawn in chunks of at most this many cells (8 bytes each; the
# sums and sizes gathered through them are as big again). 2 000 000 cells held ~48 MB at once
# for any run past 1 000 tasks, the end of a CLI run's memory peak (its digest); 50 000 keep
# that to ~1.2 MB, as fast or faster (the chunk stays in the CPU's cache): a 12k-call CLI run
# peaked 4 MiB lower than with 250 000. The draws are the same whatever the chunk (row by row).
_MAX_CELLS = 50_000
# histogram_mean_ci draws counts per distinct value while there are fewer than one distinct
# value per this many scores (stats.py switches there too).
_HISTOGRAM_RATIO = 15


def cluster_bootstrap_mean_ci(clusters, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE):
    """Mean of all answers with a CI that resamples whole tasks: {n, clusters, mean, ciLow,
    ciHigh}; None without answers.

    `clusters` holds the K repeat scores of each task. Repeats of one task are correlated (the
    task is easy or hard for the model), so they are not K independent observations;
    drawing tasks with replacement and taking the mean over every answer in the drawn tasks
    keeps that correlation inside each draw. Empty clusters are ignored.
    """
    clusters = [list(c) for c in clusters if len(c)]
    return cluster_sums_mean_ci(
        [float(sum(c)) for c in clusters], [len(c) for c in clusters], resamples, seed, confidence
    )


def cluster_sums_mean_ci(sums, sizes, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE):
    """cluster_bootstrap_mean_ci from each task's sum of scores and number of answers (sizes
    of at least 1): what a reader that does not keep every score has. None without tasks."""
    sums = np.asarray(sums, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    if not sums.size:
        return None
    means = bootstrap_ratio_means(sums, sizes, resamples, seed)
    low, high = percentile_ci(means, confidence)
    return {
        "n": int(sizes.sum()),
        "clusters": int(sums.size),
        "mean": float(sums.sum() / sizes.sum()),
        "ciLow": low,
        "ciHigh": high,
    }


def merged_histogram(values, counts):
    """(distinct values ascending, how many times each) as numpy arrays, from `values` given
    in any order, repeated or not, each `counts` times (a count of 0 is no value)."""
    values = np.asarray(values, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    keep = counts > 0
    distinct, where = np.unique(values[keep], return_inverse=True)
    # Counts as float weights: exact (whole numbers far below 2**53).
    merged = np.bincount(where.reshape(-1), weights=counts[keep], minlength=distinct.size)
    return distinct, merged.astype(np.int64)


def histogram_mean_ci(values, counts, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE):
    """Percentile bootstrap CI (low, high) of the mean of scores given as their histogram:
    `values` (in any order, repeated or not), each `counts` times (merged_histogram); None
    without scores.

    The results page's one CI method for a run without repeats, whether its scores were read
    item by item or kept as a histogram: the same histogram gives the same floats. A resample's
    counts per distinct value are one multinomial draw (what drawing n scores with replacement
    gives), so the cost grows with the distinct values, not the scores: a judge's few points
    on 100 000 answers cost ~1000 x 101 draws in numpy, not 100 million in Python. Past one
    distinct value per 15 scores (continuous scores), scores are drawn one by one instead
    (bootstrap_ratio_means with clusters of one), which is then the cheaper of the two."""
    values, counts = merged_histogram(values, counts)
    if not values.size:
        return None
    if values.size == 1:
        return (float(values[0]), float(values[0]))
    n = int(counts.sum())
    if values.size * _HISTOGRAM_RATIO < n:
        rng = np.random.default_rng(seed)
        drawn = rng.multinomial(n, counts / n, size=resamples)
        means = (drawn * values).sum(axis=1) / n
    else:
        scores = np.repeat(values, counts)
        means = bootstrap_ratio_means(scores, np.ones(n), resamples, seed)
    return percentile_ci(means, confidence)


def bootstrap_ratio_means(sums, sizes, resamples, seed):
    """`resamples` bootstrap ratio means sum(sums[idx]) / sum(sizes[idx]), drawing len(sums)
    indices with replacement each time (sizes of 1 give the ordinary mean)."""
    # Sorted first so the answer depends on the multiset of clusters, not their order.
    order = np.lexsort((sizes, sums))
    sums = sums[order]
    sizes = sizes[order]
    k = sums.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    # Every task with as many answers (no repeats, or K each: the usual case), a draw's size is
    # k times that, exactly (whole numbers far below 2**53): one gather and sum less per draw,
    # the same floats.
    whole = sizes.min() == sizes.max() and float(sizes[0]).is_integer()
    same = sizes[0] * k if whole else None
    chunk = max(1, _MAX_CELLS // k)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, k, size=(stop - start, k))
        drawn = sizes[idx].sum(axis=1) if same is None else same
        means[start:stop] = sums[idx].sum(axis=1) / drawn
    return means


def percentile_ci(means, confidence=CONFIDENCE):
    """Percentile CI (low, high) of bootstrap means, linearly interpolated as app.stats does.

    The same floats as numpy.percentile's default ("linear") method, worked out in Python on
    the sorted means: its first call imports numpy.ma (~40 ms, every `llmbench run`'s digest),
    and sorting 1000 floats takes far less."""
    tail = (1.0 - confidence) / 2 * 100
    ordered = sorted(np.asarray(means, dtype=float).tolist())
    return _linear(ordered, tail / 100), _linear(ordered, (100 - tail) / 100)


def _linear(ordered, q):
    """numpy's linear quantile q (0..1) of sorted floats, its operations in its order."""
    at = (len(ordered) - 1) * q
    if at >= len(ordered) - 1:
        return ordered[-1]
    below = math.floor(at)
    a, b = ordered[below], ordered[below + 1]
    t = at - below
    diff = b - a
    # numpy's _lerp: from the nearer end, so the result stays within [a, b].
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t
