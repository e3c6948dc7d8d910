"""Small, dependency-free statistics: percentile bootstrap CIs (fixed seed) and the sign test.

Every function here is deterministic: the same multiset of values gives the same answer, because
values are sorted before resampling and the generator is seeded.
"""

import decimal
import math
import random
from collections import Counter

import numpy as np

from ..latency import percentile

RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 20240601
# Past this many values per distinct value, resampling the histogram (one binomial draw per
# distinct value) is cheaper than drawing n indices; both sample the same bootstrap distribution.
_HISTOGRAM_RATIO = 15


def bootstrap_means(values, *, resamples=RESAMPLES, seed=SEED):
    """The `resamples` bootstrap means of `values` (a list, or a numpy array: the same means),
    sorted ascending."""
    rng = random.Random(seed)
    if isinstance(values, np.ndarray):
        # A compare's hundreds of thousands of paired differences: sorted and counted by numpy
        # (Python floats in a list and a Counter were seconds and tens of MiB per target).
        values = np.sort(values)
        n = len(values)
        distinct, counts = np.unique(values, return_counts=True)
        if len(distinct) * _HISTOGRAM_RATIO < n:
            pairs = list(zip(distinct.tolist(), counts.tolist(), strict=True))
            means = _histogram_means(pairs, n, resamples, rng)
        else:
            means = _choice_means(values, n, resamples, rng)
        means.sort()
        return means
    values = sorted(values)
    n = len(values)
    counts = Counter(values)
    if len(counts) * _HISTOGRAM_RATIO < n:
        means = _histogram_means(sorted(counts.items()), n, resamples, rng)
    else:
        means = _choice_means(values, n, resamples, rng)
    means.sort()
    return means


# Draws per block of resamples in _choice_means (at least one resample): its three buffers are
# 2 MiB each below 262 144 values. 8 MiB each took ~20 MiB more of a server's peak RSS per
# compare, for the same CPU time.
_BLOCK = 1 << 18


def _choice_means(values, n, resamples, rng):
    """The means of `resamples` draws of rng.choices(values, k=n), each summed left to right,
    worked out by numpy from the same Mersenne Twister stream: numpy's MT19937 makes its
    doubles from two 32-bit outputs exactly as random.random() does, so index i of draw j
    is floor(u * n) of the same u, and a cumulative sum adds the drawn values in the same
    order as sum() (CPython 3.11; 3.12's sum() compensates its rounding). A pure-Python loop
    of 25 000 draws x 1000 resamples took seconds per target of a 100 000-item compare."""
    state = rng.getstate()[1]
    bits = np.random.MT19937()
    key = np.array(state[:-1], dtype=np.uint32)
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": state[-1]}}
    generator = np.random.Generator(bits)  # its random() makes its doubles as the legacy one
    array = np.asarray(values, dtype=np.float64)
    means = []
    per_block = max(1, _BLOCK // n)
    # Three buffers for every block, written in place (out=): a fresh 8 MiB array per step
    # and block was a quarter of the time at 240 000 values (page faults, allocation).
    draws = np.empty((per_block, n))
    index = np.empty((per_block, n), dtype=np.intp)
    drawn = np.empty((per_block, n))
    for start in range(0, resamples, per_block):
        count = min(per_block, resamples - start)
        block, at, values_at = draws[:count], index[:count], drawn[:count]
        generator.random(out=block)
        np.multiply(block, n, out=block)
        np.copyto(at, block, casting="unsafe")  # truncation is floor: every draw is >= 0
        np.take(array, at, out=values_at)
        np.cumsum(values_at, axis=1, out=block)
        totals = block[:, -1] + 0.0  # a sum of -0.0s is 0.0, as sum()
        means.extend((totals / n).tolist())
    return means


def _histogram_means(pairs, n, resamples, rng):
    """Bootstrap means drawn as multinomial counts over the distinct values.

    Most draws take binomial's BTRS branch; it is written out here (the same arithmetic in the
    same order, the same calls to rng.random) because the call and its checks, 200 distinct
    scores x 1000 resamples per target, were a second of a 100 000-item compare."""
    random_, sqrt, floor, log, lgamma = rng.random, math.sqrt, math.floor, math.log, math.lgamma
    means = []
    for _ in range(resamples):
        left = n
        weight_left = n
        total = 0.0
        for value, count in pairs:
            if left == 0:
                break
            if count == weight_left:
                drawn = left
            else:
                p = count / weight_left
                if left == 1 or p > 0.5 or left * p < 10.0:
                    drawn = binomial(rng, left, p)
                else:
                    # binomial's BTRS branch, unchanged.
                    spq = sqrt(left * p * (1.0 - p))
                    b = 1.15 + 2.53 * spq
                    a = -0.0873 + 0.0248 * b + 0.01 * p
                    c = left * p + 0.5
                    vr = 0.92 - 4.2 / b
                    setup = None
                    while True:
                        u = random_() - 0.5
                        us = 0.5 - abs(u)
                        k = floor((2.0 * a / us + b) * u + c)
                        if k < 0 or k > left:
                            continue
                        v = random_()
                        if us >= 0.07 and v <= vr:
                            break
                        if setup is None:
                            alpha = (2.83 + 5.1 / b) * spq
                            lpq = log(p / (1.0 - p))
                            m = floor((left + 1) * p)
                            h = lgamma(m + 1) + lgamma(left - m + 1)
                            setup = (alpha, lpq, m, h)
                        alpha, lpq, m, h = setup
                        v *= alpha / (a / (us * us) + b)
                        if log(v) <= h - lgamma(k + 1) - lgamma(left - k + 1) + (k - m) * lpq:
                            break
                    drawn = k
            total += value * drawn
            left -= drawn
            weight_left -= count
        means.append(total / n)
    return means


def bootstrap_mean_ci(values, *, resamples=RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """Percentile bootstrap CI (lo, hi) of the mean of `values`; None when there are none."""
    if isinstance(values, np.ndarray):
        if not len(values):
            return None
        if len(values) == 1 or values.min() == values.max():
            return (float(values[0]), float(values[0]))
        means = bootstrap_means(values, resamples=resamples, seed=seed)
        alpha = (1.0 - confidence) / 2
        return (percentile(means, alpha), percentile(means, 1.0 - alpha))
    values = list(values)
    if not values:
        return None
    if len(values) == 1 or min(values) == max(values):
        return (float(values[0]), float(values[0]))
    means = bootstrap_means(values, resamples=resamples, seed=seed)
    alpha = (1.0 - confidence) / 2
    return (percentile(means, alpha), percentile(means, 1.0 - alpha))


def paired_bootstrap(pairs, *, resamples=RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """Mean difference (b - a) over (a, b) pairs with its bootstrap CI and whether it excludes 0."""
    return paired_differences([b - a for a, b in pairs], resamples, confidence, seed)


def paired_differences(diffs, resamples=RESAMPLES, confidence=CONFIDENCE, seed=SEED):
    """paired_bootstrap of the differences b - a themselves, in the pairs' order: a list, or a
    numpy array (the same figures)."""
    if not len(diffs):
        return {"n": 0, "meanDiff": None, "ciLow": None, "ciHigh": None, "significant": False}
    ci = bootstrap_mean_ci(diffs, resamples=resamples, confidence=confidence, seed=seed)
    low, high = ci
    significant = len(diffs) >= 2 and (low > 0 or high < 0)
    return {
        "n": len(diffs),
        "meanDiff": _sum(diffs) / len(diffs),
        "ciLow": low,
        "ciHigh": high,
        "significant": significant,
    }


def _sum(values):
    """sum(values) as CPython 3.11 adds floats, left to right, for an array too: a cumulative
    sum adds in that order (np.sum adds pairwise, which rounds otherwise). sum() starts from the
    integer 0, so it never ends at -0.0; + 0.0 does the same for the array's last partial sum."""
    if isinstance(values, np.ndarray):
        return float(np.cumsum(values)[-1]) + 0.0
    return sum(values)


def sign_test(diffs):
    """Exact two-sided sign test p-value over non-zero differences (None when all are ties)."""
    if isinstance(diffs, np.ndarray):
        return sign_test_counts(int(np.count_nonzero(diffs > 0)), int(np.count_nonzero(diffs < 0)))
    return sign_test_counts(sum(1 for d in diffs if d > 0), sum(1 for d in diffs if d < 0))


def sign_test_counts(plus, minus):
    """sign_test from its counts of positive and negative differences: min(1, 2 * P(X <= k)) for
    X ~ Binomial(plus + minus, 1/2) and k the smaller count, the tail's exact sum rounded once."""
    n = plus + minus
    if n == 0:
        return None
    k = min(plus, minus)
    if k > _EXACT_TAIL_UP_TO:
        tail = _binomial_tail(n, k)
        if tail is not None:
            return min(1.0, 2 * tail)
    # C(n, i) from C(n, i - 1), exactly (integers): math.comb for each i recomputes every
    # term, minutes for the 24 000 paired tasks of a 100 000-item compare.
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return min(1.0, 2 * (total / 2**n))


# Up to this k the exact integer sum is cheap (its integers have n bits and it takes k steps:
# seconds per sign test at the 240 000 paired tasks of a 1M-item compare).
_EXACT_TAIL_UP_TO = 2000
# Decimal digits _binomial_tail works in; each of its ~k / 8 + 3 sqrt(n) operations rounds once.
_TAIL_DIGITS = 60


def _binomial_tail(n, k):
    """sum(C(n, i) for i <= k) / 2**n rounded to the nearest float, as the exact integer sum
    divided by 2**n gives it, or None where that cannot be told apart here (then the caller sums
    exactly). The sum is worked out to _TAIL_DIGITS digits, the terms below k added until what is
    left is provably too small to matter, and the answer is taken only when the bounds of the
    value round to the same float (float() of a Decimal rounds correctly, subnormals included)."""
    # An upper bound of log(tail) first: far out in the tail the answer is 0.0 (it rounds below
    # the smallest subnormal, 2**-1074), a certainty worth no arithmetic.
    r = k / (n - k + 1)  # C(n, i - 1) / C(n, i) at i = k; smaller below (k <= n / 2)
    log_term = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    if log_term - math.log1p(-r) < -1075 * math.log(2) - 50:  # 50: far beyond lgamma's error
        return 0.0
    context = decimal.Context(prec=_TAIL_DIGITS, Emin=-(10**9), Emax=10**9)
    # C(n, k) / 2**n: n halvings spread over the k factors keep it in range at any n.
    term = context.power(decimal.Decimal(2), -n)
    operations = 1  # each rounds once
    for start in range(0, k, _FACTORS_AT_ONCE):
        # (n - i) / (i + 1) for 16 i at a time: their products are exact integers, so one
        # multiply and one divide round (a decimal operation per factor was 2 s at 240 000).
        above = below = 1
        for i in range(start, min(k, start + _FACTORS_AT_ONCE)):
            above *= n - i
            below *= i + 1
        term = context.divide(context.multiply(term, above), below)
        operations += 2
    total = term
    i = k
    while i > 0:
        # Below i, each term is at most r_i = i / (n - i + 1) times the one before, so what is
        # left is at most term * r_i / (1 - r_i) = term * i / (n - 2 i + 1).
        left = context.divide(context.multiply(term, i), n - 2 * i + 1)
        if left < total * _TAIL_NEGLIGIBLE:
            break
        term = context.divide(context.multiply(term, i), n - i + 1)
        total = context.add(total, term)
        operations += 3
        i -= 1
    else:
        left = decimal.Decimal(0)
    # Every rounding moves the value by at most half a unit in its last digit, relative: the
    # bound below is 8 times what they can add up to.
    error = total * operations * 4 * decimal.Decimal(10) ** (1 - _TAIL_DIGITS)
    low = float(context.subtract(total, error))
    high = float(context.add(context.add(total, left), error))
    return low if low == high else None


_TAIL_NEGLIGIBLE = decimal.Decimal(10) ** -40
_FACTORS_AT_ONCE = 16


def binomial(rng, n, p):
    """One Binomial(n, p) draw from `rng` (CPython 3.12's binomialvariate: BG / BTRS)."""
    if p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if n == 1:
        return int(rng.random() < p)
    if p > 0.5:
        return n - binomial(rng, n, 1.0 - p)
    random_ = rng.random
    if n * p < 10.0:
        # Geometric method (Devroye): O(np).
        x = y = 0
        c = math.log2(1.0 - p)
        if not c:
            return x
        while True:
            y += math.floor(math.log2(random_()) / c) + 1
            if y > n:
                return x
            x += 1
    # BTRS: transformed rejection with squeeze (Hörmann 1993).
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    setup = None
    while True:
        u = random_() - 0.5
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        v = random_()
        if us >= 0.07 and v <= vr:
            return k
        if setup is None:
            alpha = (2.83 + 5.1 / b) * spq
            lpq = math.log(p / (1.0 - p))
            m = math.floor((n + 1) * p)
            h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
            setup = (alpha, lpq, m, h)
        alpha, lpq, m, h = setup
        v *= alpha / (a / (us * us) + b)
        if math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k
