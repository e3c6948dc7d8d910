"""The statistics behind a regression alert: paired tests and bootstrap CIs.

A run is compared with the previous comparable run (or the baseline) on the tasks both
answered. An alert says "more than 5 % worse"; scores here are 0-100, so the threshold is in
score points. A drop alone is not enough: it must also be clear of the noise (see
paired_drop).
"""

import math
from collections import Counter

import numpy as np

from ..results.clustered import bootstrap_ratio_means
from ..results.clustered import percentile_ci
from ..results.stats import RESAMPLES
from ..results.stats import SEED
from ..results.stats import sign_test

THRESHOLD_POINTS = 5.0
ALPHA = 0.05
# Below about 10 pairs the alert would rest on almost nothing: the two-sided exact Wilcoxon and
# sign tests cannot reach p < 0.05 at all with 5 non-zero pairs (the smallest p is 2/32), and a
# percentile bootstrap CI of a handful of values is too narrow (it under-covers).
MIN_PAIRS = 10
# Exact null distribution up to this many non-zero differences: the DP below is O(n^3) on
# doubled ranks (n * n(n+1) cells), trivial at 25, and the normal approximation is good past it.
EXACT_MAX_N = 25
# Differences are rounded before zero and tie checks so float noise (0.1 + 0.2 - 0.3) neither
# keeps a zero difference nor splits a tie.
_DECIMALS = 9


def wilcoxon_signed_rank(diffs):
    """Two-sided p of the Wilcoxon signed-rank test on paired differences; None if all are 0.

    Zero differences are dropped before ranking (Wilcoxon's own method; Pratt's variant ranks
    them and drops them after). Tied |d| get average ranks. Up to EXACT_MAX_N non-zero
    differences the p is exact: every one of the 2**n sign assignments is equally likely under
    the null, and a DP counts them per rank sum. With ties the average ranks are halves, so the
    DP runs on doubled ranks (whole numbers). Past that: the normal approximation with the tie
    correction of the variance and a 0.5 continuity correction.
    """
    d = [round(float(x), _DECIMALS) for x in diffs]
    d = [x for x in d if x != 0]
    if not d:
        return None
    doubled = _doubled_ranks([abs(x) for x in d])
    w2 = sum(r for r, x in zip(doubled, d, strict=True) if x > 0)
    if len(d) <= EXACT_MAX_N:
        return _exact_p(doubled, w2)
    return _normal_p(doubled, w2)


def paired_drop(
    pairs,
    threshold=THRESHOLD_POINTS,
    alpha=ALPHA,
    resamples=RESAMPLES,
    seed=SEED,
    min_n=MIN_PAIRS,
):
    """Whether scores fell from `previous` to `current` over (previous, current) pairs on the
    same tasks: {n, meanDiff, ciLow, ciHigh, wilcoxonP, signP, drop, alert}.

    meanDiff is mean(current - previous) with its paired bootstrap 95 % CI (seeded, so the
    same pairs give the same answer); drop is -meanDiff. alert needs all of: the CI entirely
    below 0, Wilcoxon or sign test p < alpha, drop >= threshold (score points) and n >= min_n.
    The two tests are an OR because the sign test survives heavy ties and outliers where the
    Wilcoxon test is weaker, and the CI and the threshold already guard the direction and
    size. Pairs where either score is None (a failed item) are left out.
    """
    diffs = [c - p for p, c in pairs if p is not None and c is not None]
    n = len(diffs)
    if n == 0:
        return {
            "n": 0,
            "meanDiff": None,
            "ciLow": None,
            "ciHigh": None,
            "wilcoxonP": None,
            "signP": None,
            "drop": None,
            "alert": False,
        }
    values = np.asarray(diffs, dtype=float)
    mean = float(values.mean())
    low, high = percentile_ci(bootstrap_ratio_means(values, np.ones(n), resamples, seed))
    wilcoxon_p = wilcoxon_signed_rank(diffs)
    sign_p = sign_test([round(x, _DECIMALS) for x in diffs])
    significant = any(p is not None and p < alpha for p in (wilcoxon_p, sign_p))
    alert = high < 0 and significant and -mean >= threshold and n >= min_n
    return {
        "n": n,
        "meanDiff": mean,
        "ciLow": low,
        "ciHigh": high,
        "wilcoxonP": wilcoxon_p,
        "signP": sign_p,
        "drop": -mean,
        "alert": bool(alert),
    }


def _doubled_ranks(values):
    """2 x the average rank (1-based) of each value, in input order: whole numbers."""
    order = sorted(range(len(values)), key=values.__getitem__)
    doubled = [0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        # Positions start+1 .. end+1 share the average rank (start + end + 2) / 2.
        for i in range(start, end + 1):
            doubled[order[i]] = start + end + 2
        start = end + 1
    return doubled


def _exact_p(doubled, w2):
    """Exact two-sided p for the doubled positive-rank sum `w2` given the doubled ranks."""
    total = sum(doubled)
    # counts[s]: how many sign assignments give a doubled positive-rank sum of s. At most 2**25
    # per cell, exact in int64.
    counts = np.zeros(total + 1, dtype=np.int64)
    counts[0] = 1
    for r in doubled:
        counts[r:] = counts[r:] + counts[: total + 1 - r]
    lower = int(counts[: w2 + 1].sum())
    upper = int(counts[w2:].sum())
    return min(1.0, 2 * min(lower, upper) / 2 ** len(doubled))


def _normal_p(doubled, w2):
    """Two-sided p from the normal approximation, tie- and continuity-corrected."""
    n = len(doubled)
    w = w2 / 2
    mean = n * (n + 1) / 4
    ties = sum(t**3 - t for t in Counter(doubled).values())
    var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    z = max(0.0, abs(w - mean) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))
