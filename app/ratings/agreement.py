"""Agreement numbers: the judge against people (weighted kappa, Spearman's rho, judge score to
Likert) and people against each other (Krippendorff's alpha, ordinal, over ratings; Fleiss'
kappa over votes), each with n and a bootstrap interval over the items or pairs.

Small samples (a person's ratings): exact integer arithmetic where it matters.
"""

import math
from collections import Counter

import numpy as np

LIKERT = (1, 2, 3, 4, 5)
# (lowest judge score, Likert): 0-19 -> 1, 20-39 -> 2, 40-59 -> 3, 60-79 -> 4, 80-100 -> 5.
# A fractional score falls in the bin of its floor (19.5 -> 1), so equal-width bins of 20.
LIKERT_BINS = ((0, 1), (20, 2), (40, 3), (60, 4), (80, 5))


def score_to_likert(score):
    """The judge's 0-100 score as a Likert 1-5 per LIKERT_BINS; None stays None (no score)."""
    if score is None:
        return None
    if not 0 <= score <= 100:
        raise ValueError(f"a judge score must be in 0..100, got {score!r}")
    return max(likert for lowest, likert in LIKERT_BINS if score >= lowest)


def weighted_kappa(a, b, categories=LIKERT, weights="quadratic"):
    """Cohen's weighted kappa between two raters' labels of the same items, or None if undefined.

    kappa = 1 - sum(w * observed) / sum(w * expected by chance from each rater's own mix), with
    disagreement weights on the categories' positions: "quadratic" (i - j)^2, the usual choice for
    an ordinal scale like Likert (it approximates the intraclass correlation; Fleiss and Cohen
    1973), or "linear" |i - j|.
    None when there are no items, or when both raters put every item in the same one category:
    chance then explains everything and kappa is 0/0. A single constant rater against a varying
    one gives exactly 0 (their labels are independent of the other's).
    """
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    position = {category: k for k, category in enumerate(categories)}
    unknown = sorted({v for v in (*a, *b) if v not in position}, key=repr)
    if unknown:
        raise ValueError(f"labels {unknown!r} are not among the categories {tuple(categories)!r}")
    power = {"quadratic": 2, "linear": 1}.get(weights)
    if power is None:
        raise ValueError('weights must be "quadratic" or "linear"')
    n = len(a)
    observed = Counter((position[x], position[y]) for x, y in zip(a, b, strict=True))
    rows = Counter(position[x] for x in a)
    cols = Counter(position[y] for y in b)
    # Integer weights (the usual 1/(k-1)^2 scaling cancels) keep both sums exact, so O = E gives
    # exactly 0: n * sum(w O) and sum(w r c) are both over n^2.
    disagreement = n * sum(abs(i - j) ** power * count for (i, j), count in observed.items())
    chance = sum(abs(i - j) ** power * rows[i] * cols[j] for i in rows for j in cols)
    if chance == 0:
        return None
    return 1.0 - disagreement / chance


def spearman(x, y):
    """Spearman's rho (Pearson on ranks, ties get their average rank); None if n < 2 or constant."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    if len(x) < 2:
        return None
    rx, ry = _average_ranks(x), _average_ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((u - mx) * (v - my) for u, v in zip(rx, ry, strict=True))
    sxx = sum((u - mx) ** 2 for u in rx)
    syy = sum((v - my) ** 2 for v in ry)
    if sxx == 0 or syy == 0:
        return None
    # Clamp: rounding can land a perfect correlation a hair outside [-1, 1].
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _average_ranks(values):
    """1-based ranks; a run of equal values shares the mean of the ranks it spans."""
    order = sorted(range(len(values)), key=lambda k: values[k])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in order[start : end + 1]:
            ranks[k] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


# ---- agreement between people -------------------------------------------------------------------

BOOTSTRAP_ROUNDS = 1000
BOOTSTRAP_SEED = 20240430  # fixed: the same labels give the same interval on every page load


def _alphas(coincidences):
    """Ordinal alpha of each coincidence matrix in a stack (rounds, k, k); NaN where there is
    no expected disagreement (every value in one category) or fewer than two values.

    Krippendorff's ordinal metric between categories c <= k (in order) from the marginal counts
    n_g: delta^2(c, k) = (sum of n_g for g from c to k - (n_c + n_k) / 2)^2, and
    alpha = 1 - (n - 1) * sum(o * delta^2) / sum(n_c * n_k * delta^2).
    """
    o = np.asarray(coincidences, dtype=float)
    marginals = o.sum(axis=2)
    n = marginals.sum(axis=1)
    k = o.shape[1]
    cumulative = np.concatenate([np.zeros((len(o), 1)), np.cumsum(marginals, axis=1)], axis=1)
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    between = cumulative[:, hi + 1] - cumulative[:, lo]
    delta = (between - (marginals[:, :, None] + marginals[:, None, :]) / 2.0) ** 2
    expected = (marginals[:, :, None] * marginals[:, None, :] * delta).sum(axis=(1, 2))
    observed = (o * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1) * observed / expected
    return np.where((expected > 0) & (n > 1), alpha, np.nan)


def _alpha_from(coincidences):
    """Ordinal alpha of one coincidence matrix, or None when it is undefined."""
    value = float(_alphas(np.asarray(coincidences, dtype=float)[None])[0])
    return None if np.isnan(value) else value


def _unit_coincidences(units):
    """(categories in order, one coincidence matrix per pairable unit)."""
    units = [[v for v in unit if v is not None] for unit in units]
    units = [u for u in units if len(u) >= 2]
    categories = sorted({v for u in units for v in u})
    index = {c: i for i, c in enumerate(categories)}
    matrices = np.zeros((len(units), len(categories), len(categories)))
    for u, values in enumerate(units):
        counts = Counter(index[v] for v in values)
        m = len(values)
        for c, nc in counts.items():
            for k, nk in counts.items():
                pairs = nc * (nc - 1) if c == k else nc * nk
                matrices[u, c, k] = pairs / (m - 1)
    return categories, matrices


def _resample_weights(units, rounds, seed):
    """How many times each unit is drawn in each bootstrap round: (rounds, units), `units`
    draws with replacement per round, all rounds counted in one bincount."""
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, units, size=(rounds, units))
    drawn += np.arange(rounds)[:, None] * units
    return np.bincount(drawn.ravel(), minlength=rounds * units).reshape(rounds, units).astype(float)


def _interval(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    if not values:
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def _bootstrap_alpha(per_unit, rounds, seed):
    """A 95 % percentile interval of alpha over the units resampled with replacement: each
    round's coincidences are one matrix product, all rounds' alphas one array expression."""
    units = len(per_unit)
    if units < 2 or rounds <= 0:
        return None, None
    sums = _resample_weights(units, rounds, seed) @ per_unit.reshape(units, -1)
    return _interval(_alphas(sums.reshape(rounds, *per_unit.shape[1:])))


def krippendorff_alpha(units, rounds=BOOTSTRAP_ROUNDS, seed=BOOTSTRAP_SEED):
    """Krippendorff's alpha (ordinal) of people's labels: `units` is one list of values per item
    (one per person; None or absent when they did not label it). {"alpha", "ciLow", "ciHigh",
    "n" (items labelled by at least two people), "values" (their labels)}."""
    _categories, matrices = _unit_coincidences(units)
    total = matrices.sum(axis=0) if len(matrices) else np.zeros((0, 0))
    low, high = _bootstrap_alpha(matrices, rounds, seed) if len(matrices) else (None, None)
    pairable = [u for u in ([v for v in unit if v is not None] for unit in units) if len(u) >= 2]
    return {
        "alpha": _alpha_from(total) if len(matrices) else None,
        "ciLow": low,
        "ciHigh": high,
        "n": len(pairable),
        "values": sum(len(u) for u in pairable),
    }


def _fleiss_parts(counts):
    """Per pair: its agreement (the share of its raters' pairs that agree) and its counts."""
    counts = np.asarray(counts, dtype=float)
    per_unit = counts.sum(axis=1)
    agreement = (counts * (counts - 1)).sum(axis=1) / (per_unit * (per_unit - 1))
    return np.column_stack([np.ones(len(counts)), agreement, per_unit, counts])


def _fleiss_from_sums(sums):
    """Fleiss' kappa from (weighted) sums of _fleiss_parts rows; None when chance agreement is
    total (everyone always picks one category)."""
    units, agreement, ratings, per_category = sums[0], sums[1], sums[2], sums[3:]
    if units == 0 or ratings == 0:
        return None
    chance = float(((per_category / ratings) ** 2).sum())
    if chance >= 1.0 - 1e-12:
        return None
    return (float(agreement / units) - chance) / (1.0 - chance)


def fleiss_kappa(units, categories, rounds=BOOTSTRAP_ROUNDS, seed=BOOTSTRAP_SEED):
    """Fleiss' kappa of people's votes: `units` is one list of verdicts per pair (one per
    person; the number of people may vary by pair). {"kappa", "ciLow", "ciHigh", "n" (pairs
    with at least two people's votes)}."""
    categories = list(categories)
    index = {c: i for i, c in enumerate(categories)}
    rows = [Counter(index[v] for v in unit) for unit in units if len(unit) >= 2]
    if not rows:
        return {"kappa": None, "ciLow": None, "ciHigh": None, "n": 0}
    counts = np.zeros((len(rows), len(categories)))
    for u, row in enumerate(rows):
        for c, n in row.items():
            counts[u, c] = n
    parts = _fleiss_parts(counts)
    low, high = None, None
    if len(rows) >= 2 and rounds > 0:
        sums = _resample_weights(len(rows), rounds, seed) @ parts
        low, high = _interval([_fleiss_from_sums(row) for row in sums])
    return {
        "kappa": _fleiss_from_sums(parts.sum(axis=0)),
        "ciLow": low,
        "ciHigh": high,
        "n": len(rows),
    }
